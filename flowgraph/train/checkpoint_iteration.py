"""Waiting for checkpoints and the Supervisor's training loop: `checkpoints_iterator`,
`wait_for_new_checkpoint`, `basic_train_loop`, and `CheckpointOptions`.

Example
-------
>>> import tempfile
>>> import flowgraph as tf
>>> d = tempfile.mkdtemp()
>>> list(tf.train.checkpoints_iterator(d, timeout=0))   # nothing written yet
[]
"""

from __future__ import annotations

import logging
import time

from flowgraph.framework import errors
from flowgraph.train.checkpoint_state import latest_checkpoint

__all__ = ["CheckpointOptions", "basic_train_loop", "checkpoints_iterator",
           "wait_for_new_checkpoint"]

logger = logging.getLogger("tensorflow")


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """Poll `checkpoint_dir` until its latest checkpoint is not `last_checkpoint`; the
    new path, or None after `timeout` seconds."""
    stop_at = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if stop_at is not None and time.time() + seconds_to_sleep > stop_at:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yield each new checkpoint of `checkpoint_dir` as it appears (an evaluation loop's
    driver), at most one per `min_interval_secs`.

    Without a new checkpoint for `timeout` seconds the iteration ends, unless
    `timeout_fn` is given: it is called then, and the iteration ends if it returns True
    and goes on waiting otherwise. With ``timeout=None`` it waits forever.

    Example
    -------
    >>> import os, tempfile
    >>> import flowgraph as tf
    >>> d = tempfile.mkdtemp()
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0)
    ...     saver = tf.train.Saver()
    ...     with tf.Session() as sess:
    ...         sess.run(v.initializer)
    ...         _ = saver.save(sess, os.path.join(d, "model.ckpt"), global_step=7)
    >>> [os.path.basename(p) for p in tf.train.checkpoints_iterator(d, timeout=0)]
    ['model.ckpt-7']
    """
    path = None
    while True:
        new = wait_for_new_checkpoint(checkpoint_dir, path, timeout=timeout,
                                      seconds_to_sleep=1 if timeout is None else
                                      min(1.0, max(timeout, 0.01)))
        if new is None:
            if timeout_fn is None:
                logger.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        path = new
        yield path
        wait = start + min_interval_secs - time.time()
        if wait > 0:
            time.sleep(wait)


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Run ``train_step_fn(sess, *args, **kwargs)`` in the supervisor's managed session
    until it should stop; an AbortedError restarts the session and the loop.

    Example
    -------
    >>> import tempfile
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     inc = tf.assign_add(step, 1)
    ...     sv = tf.train.Supervisor(logdir=tempfile.mkdtemp(), save_model_secs=0,
    ...                              save_summaries_secs=0)
    ...     def train_step(sess):
    ...         if sess.run(inc) >= 3:
    ...             sv.request_stop()
    ...     tf.train.basic_train_loop(sv, train_step)
    """
    args = [] if args is None else args
    kwargs = {} if kwargs is None else kwargs
    retry = True
    while retry:
        retry = False
        try:
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            retry = True


class CheckpointOptions:
    """Options for writing and reading checkpoints (TensorFlow's
    ``tf.train.CheckpointOptions``). flowgraph's Saver writes synchronously on the host,
    so the values are recorded for code that passes them along.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.train.CheckpointOptions(experimental_io_device="/job:localhost").experimental_io_device
    '/job:localhost'
    """

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_skip_slot_variables=False,
                 experimental_sharding_callback=None) -> None:
        self.experimental_io_device = experimental_io_device
        self.enable_async = bool(enable_async or experimental_enable_async_checkpoint)
        self.experimental_enable_async_checkpoint = self.enable_async
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_skip_slot_variables = experimental_skip_slot_variables
        self.experimental_sharding_callback = experimental_sharding_callback
