"""`tf.contrib.training.create_train_op` and the gradient transforms slim's training uses:
a train op that is the total loss, computed after the ``UPDATE_OPS`` (batch-norm moving
averages) and before returning after the gradient update, so ``sess.run(train_op)``
gives the loss of the step.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable(2.0)
...     loss = tf.square(w)
...     train_op = create_train_op(loss, tf.train.GradientDescentOptimizer(0.25))
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         print(float(sess.run(train_op)), float(sess.run(w)))
4.0 1.0
"""

from __future__ import annotations

import logging

from flowgraph.framework.graph import (
    GraphKeys,
    control_dependencies,
    get_collection,
    get_collection_ref,
    name_scope,
)
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import check_ops, clip_ops, control_flow_ops, math_ops
from flowgraph.ops import variables as variables_lib
from flowgraph.summary import summary_ops
from flowgraph.train import training_util
from flowgraph.train.optimizer import Optimizer

log = logging.getLogger("tensorflow")

__all__ = [
    "add_gradients_summaries",
    "clip_gradient_norms",
    "clip_gradient_norms_fn",
    "create_train_op",
    "multiply_gradients",
]

_USE_GLOBAL_STEP = 0  # the default: the graph's global step


def add_gradients_summaries(grads_and_vars) -> list:
    """A histogram of each gradient and a scalar of its norm (``<var>/gradient``,
    ``<var>/gradient_norm``); returns the summaries."""
    summaries = []
    for grad, var in grads_and_vars:
        if grad is None:
            log.info("Var %s has no gradient", var.op.name)
            continue
        values = grad.values if isinstance(grad, IndexedSlices) else grad
        summaries.append(summary_ops.histogram(var.op.name + "/gradient", values))
        summaries.append(summary_ops.scalar(var.op.name + "/gradient_norm",
                                            clip_ops.global_norm([values])))
    return summaries


def clip_gradient_norms(gradients_to_variables, max_norm) -> list:
    """Each gradient clipped to L2 norm `max_norm` (`tf.clip_by_norm`)."""
    clipped = []
    for grad, var in gradients_to_variables:
        if grad is not None:
            if isinstance(grad, IndexedSlices):
                values = clip_ops.clip_by_norm(grad.values, max_norm)
                grad = IndexedSlices(values, grad.indices, grad.dense_shape)
            else:
                grad = clip_ops.clip_by_norm(grad, max_norm)
        clipped.append((grad, var))
    return clipped


def clip_gradient_norms_fn(max_norm):
    """A `transform_grads_fn` clipping each gradient to `max_norm`."""
    def clip(grads_and_vars):
        return clip_gradient_norms(grads_and_vars, max_norm)
    return clip


def multiply_gradients(grads_and_vars, gradient_multipliers: dict) -> list:
    """Each gradient times its variable's (or variable name's) multiplier."""
    if not isinstance(grads_and_vars, list):
        raise ValueError("`grads_and_vars` must be a list.")
    if not gradient_multipliers:
        raise ValueError("`gradient_multipliers` is empty.")
    out = []
    for grad, var in grads_and_vars:
        key = var if var in gradient_multipliers else var.op.name
        if key in gradient_multipliers:
            if grad is None:
                raise ValueError("Requested multiple of `None` gradient.")
            values = grad.values if isinstance(grad, IndexedSlices) else grad
            factor = math_ops.cast(gradient_multipliers[key], values.dtype.base_dtype)
            if isinstance(grad, IndexedSlices):
                grad = IndexedSlices(values * factor, grad.indices, grad.dense_shape)
            else:
                grad = grad * factor
        out.append((grad, var))
    return out


def create_train_op(total_loss, optimizer: Optimizer, global_step=_USE_GLOBAL_STEP,
                    update_ops=None, variables_to_train=None, transform_grads_fn=None,
                    summarize_gradients: bool = False, gate_gradients=Optimizer.GATE_OP,
                    aggregation_method=None, colocate_gradients_with_ops: bool = False,
                    check_numerics: bool = True):
    """A tensor that runs one training step and gives `total_loss`: the `update_ops`
    (default: ``GraphKeys.UPDATE_OPS``) run before the loss, the gradients of the
    trainable variables (or `variables_to_train`) pass through `transform_grads_fn`, and
    the update steps `global_step` (default: the graph's; None: no step). With
    `check_numerics` a NaN or Inf loss fails the step. The op is added to
    ``GraphKeys.TRAIN_OP``."""
    if global_step is _USE_GLOBAL_STEP:
        global_step = training_util.get_or_create_global_step()
    graph_updates = set(get_collection(GraphKeys.UPDATE_OPS))
    update_ops = graph_updates if update_ops is None else set(update_ops)
    if not graph_updates.issubset(update_ops):
        log.warning("update_ops in create_train_op does not contain all the update_ops in "
                    "GraphKeys.UPDATE_OPS")
    if update_ops:
        with control_dependencies(sorted(update_ops, key=lambda op: op.name)):
            barrier = control_flow_ops.no_op(name="update_barrier")
        total_loss = control_flow_ops.with_dependencies([barrier], total_loss)
    if variables_to_train is None:
        variables_to_train = variables_lib.trainable_variables()
    else:
        trainable = set(variables_lib.trainable_variables())
        for v in variables_to_train:
            if v not in trainable:
                raise ValueError(f"{v.op.name} is not a trainable variable")
    if not variables_to_train:
        raise ValueError("No variables to optimize.")
    grads = optimizer.compute_gradients(
        total_loss, variables_to_train, gate_gradients=gate_gradients,
        aggregation_method=aggregation_method,
        colocate_gradients_with_ops=colocate_gradients_with_ops)
    if transform_grads_fn is not None:
        grads = transform_grads_fn(grads)
    if summarize_gradients:
        with name_scope("summarize_grads"):
            add_gradients_summaries(grads)
    grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
    with name_scope("train_op"):
        if check_numerics:
            total_loss = check_ops.check_numerics(total_loss, "LossTensor is inf or nan")
        train_op = control_flow_ops.with_dependencies([grad_updates], total_loss)
    train_ops = get_collection_ref(GraphKeys.TRAIN_OP)
    if train_op not in train_ops:
        train_ops.append(train_op)
    return train_op
