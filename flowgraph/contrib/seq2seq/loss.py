"""`tf.contrib.seq2seq.sequence_loss`: weighted cross-entropy of a sequence of logits."""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.nn_loss_ops import sparse_softmax_cross_entropy_with_logits

__all__ = ["sequence_loss"]


def sequence_loss(logits, targets, weights, average_across_timesteps: bool = True,
                  average_across_batch: bool = True, sum_over_timesteps: bool = False,
                  sum_over_batch: bool = False, softmax_loss_function=None, name=None):
    """Weighted cross-entropy of ``logits [batch, time, classes]`` against ``targets
    [batch, time]`` (class ids), with ``weights [batch, time]`` (0 for padding).

    By default the result is a scalar: the weighted sum divided by the sum of the
    weights. ``average_across_*=False`` keeps that axis; ``sum_over_*`` sums over an
    axis and divides by the number of non-zero weights (``average`` and ``sum`` for one
    axis exclude each other). ``softmax_loss_function(labels=, logits=)`` replaces
    the sparse softmax cross-entropy.

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.contrib.seq2seq.sequence_loss(
    ...         tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32), tf.ones([2, 3]))
    ...     print(round(float(tf.Session().run(loss)), 4))  # log(4)
    1.3863
    """
    logits = convert_to_tensor(logits)
    targets = convert_to_tensor(targets)
    weights = convert_to_tensor(weights)
    if logits.shape.ndims not in (None, 3):
        raise ValueError("sequence_loss: logits must be a [batch_size x sequence_length x "
                         f"logits] tensor, got shape {logits.shape}.")
    if targets.shape.ndims not in (None, 2):
        raise ValueError("sequence_loss: targets must be a [batch_size x sequence_length] "
                         f"tensor, got shape {targets.shape}.")
    if weights.shape.ndims not in (None, 2):
        raise ValueError("sequence_loss: weights must be a [batch_size x sequence_length] "
                         f"tensor, got shape {weights.shape}.")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set "
                         "to True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True "
                         "at same time.")
    if average_across_batch and sum_over_timesteps:
        raise ValueError("average_across_batch and sum_over_timesteps cannot be set to True "
                         "at same time because of ambiguous order.")
    if average_across_timesteps and sum_over_batch:
        raise ValueError("average_across_timesteps and sum_over_batch cannot be set to True "
                         "at same time because of ambiguous order.")
    with name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = array_ops.shape(logits)[2]
        logits_flat = array_ops.reshape(logits, array_ops.stack([-1, num_classes]))
        targets_flat = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=targets_flat,
                                                                logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets_flat, logits=logits_flat)
        crossent = crossent * array_ops.reshape(weights, [-1])

        def count(axis=None):
            nonzero = math_ops.cast(math_ops.not_equal(weights, 0), dtypes.float32)
            return math_ops.cast(math_reduce.reduce_sum(nonzero, axis), crossent.dtype)

        if average_across_timesteps and average_across_batch:
            return math_ops.div_no_nan(math_reduce.reduce_sum(crossent),
                                       math_reduce.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            return math_ops.div_no_nan(math_reduce.reduce_sum(crossent), count())
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return math_ops.div_no_nan(math_reduce.reduce_sum(crossent, axis),
                               math_reduce.reduce_sum(weights, axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            return math_ops.div_no_nan(math_reduce.reduce_sum(crossent, axis), count(axis))
        return crossent
