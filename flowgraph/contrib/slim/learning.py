"""``slim.learning``: slim's training loop. `create_train_op` is
`tf.contrib.training.create_train_op` with slim's gradient options (clipping by norm,
per-variable multipliers); `train` runs a train op under a `tf.train.Supervisor` until
`number_of_steps` (or forever), logging the loss every `log_every_n_steps` steps,
writing summaries and checkpoints every `save_summaries_secs` / `save_interval_secs`,
and saving a last checkpoint when it finishes.

Example
-------
>>> import tempfile, flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     w = tf.Variable(2.0)
...     train_op = slim.learning.create_train_op(tf.square(w),
...                                              tf.train.GradientDescentOptimizer(0.25))
...     loss = slim.learning.train(train_op, tempfile.mkdtemp(), number_of_steps=3,
...                                log_every_n_steps=10)
>>> round(float(loss), 4)
0.25
"""

from __future__ import annotations

import logging
import time

from flowgraph.contrib.training.training import (
    add_gradients_summaries,
    clip_gradient_norms,
    multiply_gradients,
)
from flowgraph.contrib.training.training import create_train_op as _create_train_op
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.ops import math_ops
from flowgraph.train import training_util
from flowgraph.train.optimizer import Optimizer
from flowgraph.train.saver import Saver
from flowgraph.train.supervisor import Supervisor

log = logging.getLogger("tensorflow")

__all__ = [
    "add_gradients_summaries",
    "clip_gradient_norms",
    "create_train_op",
    "multiply_gradients",
    "train",
    "train_step",
]

_USE_DEFAULT = 0


def create_train_op(total_loss, optimizer: Optimizer, global_step=_USE_DEFAULT,
                    update_ops=None, variables_to_train=None, clip_gradient_norm=0,
                    summarize_gradients: bool = False, gate_gradients=Optimizer.GATE_OP,
                    aggregation_method=None, colocate_gradients_with_ops: bool = False,
                    gradient_multipliers=None, check_numerics: bool = True):
    """`tf.contrib.training.create_train_op`, the gradients multiplied by
    `gradient_multipliers` (``{variable or name: factor}``) and clipped to
    `clip_gradient_norm` (when > 0) first."""
    def transform(grads):
        if gradient_multipliers:
            with name_scope("multiply_grads"):
                grads = multiply_gradients(grads, gradient_multipliers)
        if clip_gradient_norm > 0:
            with name_scope("clip_grads"):
                grads = clip_gradient_norms(grads, clip_gradient_norm)
        return grads

    return _create_train_op(total_loss, optimizer, global_step=global_step,
                            update_ops=update_ops, variables_to_train=variables_to_train,
                            transform_grads_fn=transform,
                            summarize_gradients=summarize_gradients,
                            gate_gradients=gate_gradients,
                            aggregation_method=aggregation_method,
                            colocate_gradients_with_ops=colocate_gradients_with_ops,
                            check_numerics=check_numerics)


def train_step(sess, train_op, global_step, train_step_kwargs):
    """One step: ``(total loss, should stop)``; logs every ``should_log`` step and stops
    when the global step reaches ``number_of_steps``."""
    start = time.time()
    total_loss, step = sess.run([train_op, global_step])
    elapsed = time.time() - start
    should_log = train_step_kwargs.get("should_log")
    if should_log is not None and sess.run(should_log):
        log.info("global step %d: loss = %.4f (%.3f sec/step)", step, total_loss, elapsed)
    should_stop_op = train_step_kwargs.get("should_stop")
    should_stop = bool(sess.run(should_stop_op)) if should_stop_op is not None else False
    return total_loss, should_stop


def train(train_op, logdir, train_step_fn=train_step, train_step_kwargs=_USE_DEFAULT,
          log_every_n_steps=1, graph=None, master="", is_chief: bool = True,
          global_step=None, number_of_steps=None, init_op=_USE_DEFAULT, init_feed_dict=None,
          local_init_op=_USE_DEFAULT, init_fn=None, ready_op=_USE_DEFAULT,
          summary_op=_USE_DEFAULT, save_summaries_secs=600, summary_writer=_USE_DEFAULT,
          startup_delay_steps=0, saver=None, save_interval_secs=600, sync_optimizer=None,
          session_config=None, session_wrapper=None, trace_every_n_steps=None,
          ignore_live_threads: bool = False):
    """Run `train_op` until `number_of_steps` global steps (None: until stopped); returns
    the last loss. `init_fn(session)` runs once after initialization (e.g.
    `assign_from_checkpoint_fn` for fine-tuning)."""
    if train_op is None:
        raise ValueError("train_op cannot be None.")
    if logdir is None:
        if summary_op != _USE_DEFAULT:
            raise ValueError("Cannot provide summary_op because logdir=None")
        if saver is not None:
            raise ValueError("Cannot provide saver because logdir=None")
    if sync_optimizer is not None:
        raise ValueError("slim.learning.train: sync_optimizer is not supported; use "
                         "tf.train.SyncReplicasOptimizer with MonitoredTrainingSession.")
    if trace_every_n_steps is not None:
        log.warning("slim.learning.train: trace_every_n_steps is ignored")
    graph = graph or get_default_graph()
    with graph.as_default():
        saver = saver or Saver()
        if global_step is None:
            global_step = training_util.get_or_create_global_step()
        kwargs = {}
        if train_step_kwargs == _USE_DEFAULT:
            with name_scope("train_step"):
                if number_of_steps:
                    kwargs["should_stop"] = math_ops.greater_equal(global_step,
                                                                   number_of_steps)
                kwargs["should_log"] = math_ops.equal(
                    math_ops.mod(global_step, log_every_n_steps), 0)
        else:
            kwargs = dict(train_step_kwargs)
    sv_kwargs = {"graph": graph, "is_chief": is_chief, "logdir": logdir,
                 "init_feed_dict": init_feed_dict, "init_fn": init_fn,
                 "summary_writer": summary_writer, "global_step": global_step,
                 "saver": saver, "save_summaries_secs": save_summaries_secs,
                 "save_model_secs": save_interval_secs}
    for name, value in (("init_op", init_op), ("local_init_op", local_init_op),
                        ("ready_op", ready_op), ("summary_op", summary_op)):
        if value != _USE_DEFAULT:
            sv_kwargs[name] = value
    if summary_writer == _USE_DEFAULT:
        del sv_kwargs["summary_writer"]
    sv = Supervisor(**sv_kwargs)
    total_loss = None
    should_retry = True
    while should_retry:
        should_retry = False
        with sv.managed_session(master, start_standard_services=False,
                                config=session_config) as sess:
            log.info("Starting Session.")
            if session_wrapper is not None:
                sess = session_wrapper(sess)
            if logdir and is_chief:
                log.info("Starting Supervisor Services.")
                sv.start_standard_services(sess)
            threads = sv.start_queue_runners(sess)
            del threads
            log.info("Starting Queues.")
            for _ in range(startup_delay_steps if not is_chief else 0):
                if sv.should_stop():
                    break
                time.sleep(1)
            while not sv.should_stop():
                total_loss, should_stop = train_step_fn(sess, train_op, global_step, kwargs)
                if should_stop:
                    log.info("Stopping Training.")
                    sv.request_stop()
                    break
            if logdir and sv.is_chief:
                log.info("Finished training! Saving model to disk.")
                sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    return total_loss
