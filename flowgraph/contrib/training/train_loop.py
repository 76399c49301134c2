"""`tf.contrib.training.train`: run a train op in a `MonitoredTrainingSession` until a
hook asks to stop, returning the op's last value.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.training.train_loop import train
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     inc = tf.assign_add(step, 1)
...     int(train(inc, None, hooks=[tf.train.StopAtStepHook(last_step=3)],
...               save_checkpoint_secs=None, save_summaries_steps=None))
3
"""

from __future__ import annotations

from flowgraph.train.monitored_session import MonitoredTrainingSession

__all__ = ["train"]


def train(train_op, logdir, master="", is_chief=True, scaffold=None, hooks=None,
          chief_only_hooks=None, save_checkpoint_secs=600, save_summaries_steps=100,
          config=None, max_wait_secs=7200, run_metadata=None):
    """Run `train_op` until the session should stop (a hook, e.g. `StopAtStepHook`,
    decides); checkpoints and summaries go to `logdir`. Returns the last value."""
    if logdir is None and is_chief:
        if save_summaries_steps:
            raise ValueError("train: logdir cannot be None when save_summaries_steps is "
                             "not None")
        if save_checkpoint_secs:
            raise ValueError("train: logdir cannot be None when save_checkpoint_secs is "
                             "not None")
    with MonitoredTrainingSession(
            master=master, is_chief=is_chief, checkpoint_dir=logdir, scaffold=scaffold,
            hooks=hooks, chief_only_hooks=chief_only_hooks,
            save_checkpoint_secs=save_checkpoint_secs,
            save_summaries_steps=save_summaries_steps, config=config,
            max_wait_secs=max_wait_secs) as session:
        loss = None
        while not session.should_stop():
            loss = session.run(train_op, run_metadata=run_metadata)
    return loss
