"""`tf.contrib.losses` (also ``slim.losses``): TF1's first loss API, which takes
`predictions` / `logits` first and `labels` second (the reverse of `tf.losses`), with
``weights`` and ``label_smoothing`` as `tf.losses` has them. Each loss is added to the
``GraphKeys.LOSSES`` collection, as in TF1. ``metric_learning`` holds the embedding
losses (`flowgraph.contrib.metric_learning`).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     loss = tf.contrib.losses.mean_squared_error(tf.constant([1.0, 3.0]),
...                                                 tf.constant([1.0, 1.0]))
...     print(float(tf.Session().run(loss)), len(tf.contrib.losses.get_losses()))
2.0 1
"""

from __future__ import annotations

from flowgraph.contrib import metric_learning
from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.losses import losses_impl
from flowgraph.losses import util as losses_util
from flowgraph.ops import (
    array_index_ops,
    array_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_ops,
)

__all__ = [
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "cosine_distance",
    "get_losses",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "metric_learning",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]


def _labels(labels, what: str):
    if labels is None:
        raise ValueError(f"{what}: labels must not be None.")
    return labels


def compute_weighted_loss(losses, weights=1.0, scope=None):
    """The weighted sum of `losses` over the number of non-zero weights, added to the
    ``LOSSES`` collection."""
    return losses_util.compute_weighted_loss(losses, weights, scope=scope)


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    """Mean absolute error (``absolute_difference`` scope)."""
    return losses_impl.absolute_difference(_labels(labels, "absolute_difference"),
                                           predictions, weights, scope=scope)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    """Mean squared error."""
    return losses_impl.mean_squared_error(_labels(labels, "mean_squared_error"),
                                          predictions, weights, scope=scope)


def mean_pairwise_squared_error(predictions, labels=None, weights=1.0, scope=None):
    """For each example, the mean over all pairs of its elements of ``((p_i - p_j) -
    (l_i - l_j)) ** 2``, times its weight, summed over the batch (TF1's contrib
    version: a sum, where `tf.losses` takes a mean)."""
    with name_scope(scope, "mean_pairwise_squared_error",
                    [predictions, labels, weights]):
        predictions = math_ops.cast(convert_to_tensor(predictions), dtypes.float32)
        labels = math_ops.cast(convert_to_tensor(_labels(labels,
                                "mean_pairwise_squared_error")), dtypes.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float32)
        diffs = math_ops.subtract(predictions, labels)
        axes = list(range(1, diffs.shape.ndims))
        ones = array_ops.ones_like(diffs)
        present = math_reduce.reduce_sum(
            ones * math_ops.cast(math_ops.not_equal(
                _per_example(weights, diffs.shape.ndims) * ones, 0.0), dtypes.float32),
            axis=axes)
        term1 = 2.0 * math_ops.div_no_nan(
            math_reduce.reduce_sum(math_ops.square(diffs), axis=axes), present)
        sum_diff = math_reduce.reduce_sum(diffs, axis=axes)
        term2 = 2.0 * math_ops.div_no_nan(math_ops.square(sum_diff),
                                          math_ops.square(present))
        per_example = term1 - term2
        loss = math_reduce.reduce_sum(per_example * _per_example(weights, 1))
        value = array_index_ops.where(math_reduce.reduce_sum(present) > 0, loss,
                                      array_ops.zeros_like(loss), name="value")
        add_loss(value)
        return value


def _per_example(weights, rank: int):
    """`weights` (a scalar or one weight per example, possibly ``[batch, 1, ...]``)
    shaped to broadcast over a tensor of `rank`."""
    w_rank = weights.shape.ndims
    if w_rank is None or w_rank == 0:
        return weights
    flat = array_shape_ops.reshape(weights, [-1])
    return array_shape_ops.reshape(flat, [-1] + [1] * (rank - 1))


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    """Binary log loss of probabilities `predictions`."""
    return losses_impl.log_loss(_labels(labels, "log_loss"), predictions, weights,
                                epsilon=epsilon, scope=scope)


def hinge_loss(logits, labels=None, scope=None):
    """Element-wise hinge loss ``relu(1 - (2 * labels - 1) * logits)`` of `logits`
    against 0/1 `labels`: not reduced and not added to ``LOSSES``, as TF1's contrib
    version."""
    with name_scope(scope, "hinge_loss", [logits, labels]):
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(_labels(labels, "hinge_loss"), dtypes.float32)
        logits.shape.assert_is_compatible_with(labels.shape)
        all_ones = array_ops.ones_like(labels)
        signs = math_ops.subtract(2 * labels, all_ones)
        return nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(signs, logits)))


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    """``1 - cos`` of unit-normalized `predictions` and `labels` along `axis`."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    return losses_impl.cosine_distance(_labels(labels, "cosine_distance"), predictions,
                                       axis=axis, weights=weights, scope=scope)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0,
                          scope=None):
    """Sigmoid cross-entropy of `logits` against 0/1 `multi_class_labels`."""
    return losses_impl.sigmoid_cross_entropy(multi_class_labels, logits, weights,
                                             label_smoothing=label_smoothing, scope=scope)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    """Softmax cross-entropy of `logits` against one-hot `onehot_labels`."""
    return losses_impl.softmax_cross_entropy(onehot_labels, logits, weights,
                                             label_smoothing=label_smoothing, scope=scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    """Softmax cross-entropy of `logits` against integer class `labels`."""
    return losses_impl.sparse_softmax_cross_entropy(labels, logits, weights, scope=scope)


def add_loss(loss, loss_collection=GraphKeys.LOSSES) -> None:
    """Add `loss` to `loss_collection`."""
    losses_util.add_loss(loss, loss_collection)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES) -> list:
    """The losses in `loss_collection` (under `scope`)."""
    return losses_util.get_losses(scope, loss_collection)


def get_regularization_losses(scope=None) -> list:
    """The regularization losses (under `scope`)."""
    return losses_util.get_regularization_losses(scope)


def get_total_loss(add_regularization_losses: bool = True, name="total_loss"):
    """The sum of the losses, with the regularization losses unless told otherwise."""
    return losses_util.get_total_loss(add_regularization_losses, name)
