"""Pieces of toy `model_fn`s shared by the Estimator tests."""

from __future__ import annotations

import flowgraph as tf


def sgd(loss, lr=0.2):
    """A hand-written SGD train op: every trainable variable minus `lr` times its
    gradient, then the global step plus one."""
    step = tf.train.get_global_step()
    params = tf.trainable_variables()
    grads = tf.gradients(loss, params)
    updates = [tf.assign_sub(p, lr * g) for p, g in zip(params, grads)]
    one = tf.constant(1, tf.int64)  # outside the block: see the report on Const folding
    with tf.control_dependencies(updates):
        return tf.assign_add(step, one).op
