"""The ``tf.losses`` loss functions (TF1 names, arguments and defaults).

Each function opens a name scope named after the loss (``mean_squared_error``,
``softmax_cross_entropy_loss``, ...), computes the elementwise loss in float32 and hands it
to `compute_weighted_loss` (see `flowgraph.losses.util` for `weights` and `reduction`),
which adds the result to ``GraphKeys.LOSSES``; the scalar result is named ``<scope>/value``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.losses import losses_impl
>>> loss = losses_impl.absolute_difference([1.0, 2.0], [1.5, 4.0])
>>> loss.name, float(tf.Session().run(loss))
('absolute_difference/value:0', 1.25)
"""

from __future__ import annotations

import contextlib

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.losses.util import (
    Reduction,
    add_loss,
    check_broadcastable,
    compute_weighted_loss,
    num_present,
    safe_div,
)
from flowgraph.ops import array_ops, math_ops, math_reduce, nn_loss_ops, nn_ops

__all__ = [
    "absolute_difference",
    "cosine_distance",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]

_DEFAULT = Reduction.SUM_BY_NONZERO_WEIGHTS


def _require(**named) -> None:
    for what, value in named.items():
        if value is None:
            raise ValueError(f"Argument `{what}` must not be None.")


def _as_float(x, name: str) -> Tensor:
    return math_ops.cast(convert_to_tensor(x, name=name), _dtypes.float32)


def _check_same_shape(fn: str, a: Tensor, b: Tensor, a_name: str, b_name: str) -> None:
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible: {fn} needs "
                         f"{a_name} and {b_name} of compatible shapes.")


@contextlib.contextmanager
def _compared(fn: str, scope, labels, predictions, weights, default_name=None,
              what: str = "predictions"):
    """The name scope of loss `fn` (`default_name`, by default `fn`), comparing
    `predictions` (named `what`) with `labels` elementwise; yields ``(scope, labels,
    predictions)``, both float32 and of compatible shapes."""
    _require(**{"labels": labels, what: predictions})
    with name_scope(scope, default_name or fn, [predictions, labels, weights]) as scope:
        predictions = _as_float(predictions, what)
        labels = _as_float(labels, "labels")
        _check_same_shape(fn, predictions, labels, what, "labels")
        yield scope, labels, predictions


def remove_squeezable_dimensions(labels: Tensor, predictions: Tensor,
                                 expected_rank_diff: int = 0) -> tuple[Tensor, Tensor]:
    """Drop a trailing dimension of size 1 from `labels` or `predictions` when their ranks
    differ from `expected_rank_diff` (``rank(predictions) - rank(labels)``) by one."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is None or pr is None:
        return labels, predictions
    diff = pr - lr
    with name_scope(None, "remove_squeezable_dimensions", [labels, predictions]):
        if diff == expected_rank_diff + 1 and predictions.shape[-1].is_compatible_with(1):
            predictions = array_ops.squeeze(predictions, [-1])
        elif diff == expected_rank_diff - 1 and labels.shape[-1].is_compatible_with(1):
            labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def _squeeze_weights(labels: Tensor, weights) -> Tensor:
    """`weights` as a tensor (named ``Const`` when built from a Python value, as in TF),
    without a trailing size-1 dimension when it has one rank more than `labels`."""
    weights = convert_to_tensor(weights)
    lr, wr = labels.shape.ndims, weights.shape.ndims
    if lr is not None and wr is not None and wr - lr == 1:
        weights = array_ops.squeeze(weights, [-1])
    return weights


# -- regression losses ---------------------------------------------------------------------
def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT) -> Tensor:
    """Weighted ``|predictions - labels|``, reduced by `reduction`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import absolute_difference
    >>> float(tf.Session().run(absolute_difference([0.0, 0.0], [1.0, -3.0])))
    2.0
    """
    with _compared("absolute_difference", scope, labels, predictions,
                   weights) as (scope, labels, predictions):
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT) -> Tensor:
    """Weighted ``(predictions - labels) ** 2``, reduced by `reduction`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import mean_squared_error
    >>> float(tf.Session().run(mean_squared_error([0.0, 0.0], [1.0, -3.0])))
    5.0
    """
    with _compared("mean_squared_error", scope, labels, predictions,
                   weights) as (scope, labels, predictions):
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT) -> Tensor:
    """Huber loss of ``e = predictions - labels``: ``0.5 * e ** 2`` for ``|e| <= delta``,
    else ``0.5 * delta ** 2 + delta * (|e| - delta)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import huber_loss
    >>> float(tf.Session().run(huber_loss([0.0, 0.0], [0.5, 3.0])))
    1.3125
    """
    with _compared("huber_loss", scope, labels, predictions,
                   weights) as (scope, labels, predictions):
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, float(delta))
        linear = math_ops.subtract(abs_error, quadratic)
        # TF's op layout: Mul (q*q), Mul_1 (0.5*...), Mul_2 (delta*linear)
        half = convert_to_tensor(0.5, dtype=quadratic.dtype)
        losses = math_ops.add(
            math_ops.multiply(half, math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(float(delta), linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT) -> Tensor:
    """Binary log loss of probabilities `predictions` against `labels` in [0, 1]:
    ``-y * log(p + eps) - (1 - y) * log(1 - p + eps)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import log_loss
    >>> print(round(float(tf.Session().run(log_loss([1.0], [0.5]))), 4))
    0.6931
    """
    with _compared("log_loss", scope, labels, predictions, weights) as (scope, labels, predictions):
        eps = float(epsilon)
        losses = (-math_ops.multiply(labels, math_ops.log(predictions + eps))
                  - math_ops.multiply(1.0 - labels, math_ops.log(1.0 - predictions + eps)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT, dim=None) -> Tensor:
    """``1 - sum(labels * predictions, axis)`` for unit-normalized inputs (the elementwise
    loss keeps `axis` as a dimension of size 1). `dim` is the deprecated alias of `axis`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import cosine_distance
    >>> float(tf.Session().run(cosine_distance([[1.0, 0.0]], [[0.0, 1.0]], axis=1)))
    1.0
    """
    if dim is not None:
        if axis is not None and axis != dim:
            raise ValueError("Cannot specify both 'dim' and 'axis'.")
        axis = dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    with _compared("cosine_distance", scope, labels, predictions, weights,
                   "cosine_distance_loss") as (scope, labels, predictions):
        radial = math_ops.multiply(predictions, labels)
        losses = 1.0 - math_reduce.reduce_sum(radial, axis=[axis], keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES) -> Tensor:
    """Mean over pairs ``(i, j)`` within each example of
    ``((p_i - p_j) - (l_i - l_j)) ** 2``, weighted per example and summed over the batch.

    For ``d = predictions - labels`` with ``n`` present (non-zero weight) elements in an
    example, the mean over pairs is ``2 * sum(d ** 2) / (n - 1) - 2 * sum(d) ** 2 /
    (n * (n - 1))``. `weights` is a scalar or one weight per example of the labels' rank
    (``[batch, 1, ...]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import mean_pairwise_squared_error
    >>> loss = mean_pairwise_squared_error([[0.0, 0.0, 0.0]], [[1.0, 2.0, 3.0]])
    >>> print(round(float(tf.Session().run(loss)), 4))
    2.0
    """
    with _compared("mean_pairwise_squared_error", scope, labels, predictions,
                   weights) as (scope, labels, predictions):
        w = math_ops.cast(weights, _dtypes.float32)
        check_broadcastable(w, labels, "labels")
        diffs = math_ops.subtract(predictions, labels)
        axes = array_ops.range(1, array_ops.rank(diffs))
        sum_sq = math_reduce.reduce_sum(math_ops.square(diffs), axis=axes, keepdims=True)
        n = num_present(diffs, w, per_batch=True)
        term1 = 2.0 * safe_div(sum_sq, math_ops.maximum(n - 1, 0.0))
        sum_diff = math_reduce.reduce_sum(diffs, axis=axes, keepdims=True)
        term2 = 2.0 * safe_div(math_ops.square(sum_diff),
                               math_ops.maximum(math_ops.multiply(n, n - 1), 0.0))
        loss = math_reduce.reduce_sum(math_ops.multiply(term1 - term2, w))
        has_any = math_ops.greater(math_reduce.reduce_sum(n), 0.0)
        mean_loss = array_ops.where(has_any, loss, array_ops.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


# -- classification losses -------------------------------------------------------------------
def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=_DEFAULT) -> Tensor:
    """Hinge loss ``max(0, 1 - (2 * labels - 1) * logits)`` for `labels` in {0, 1}.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import hinge_loss
    >>> float(tf.Session().run(hinge_loss([1.0, 0.0], [0.5, -2.0])))
    0.25
    """
    with _compared("hinge_loss", scope, labels, logits, weights,
                   what="logits") as (scope, labels, logits):
        ones = array_ops.ones_like(labels)
        signs = math_ops.subtract(2.0 * labels, ones)
        losses = nn_ops.relu(math_ops.subtract(ones, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=_DEFAULT) -> Tensor:
    """Sigmoid cross-entropy of `logits` against `multi_class_labels` in [0, 1].

    A non-zero `label_smoothing` moves labels towards 1/2:
    ``labels * (1 - label_smoothing) + 0.5 * label_smoothing``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import sigmoid_cross_entropy
    >>> print(round(float(tf.Session().run(sigmoid_cross_entropy([[1.0]], [[0.0]]))), 4))
    0.6931
    """
    _require(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss",
                    [logits, multi_class_labels, weights]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = math_ops.cast(convert_to_tensor(multi_class_labels, name="labels"),
                               logits.dtype.base_dtype)
        _check_same_shape("sigmoid_cross_entropy", logits, labels, "logits",
                          "multi_class_labels")
        if label_smoothing > 0:
            labels = labels * (1.0 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_loss_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                               name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT) -> Tensor:
    """Softmax cross-entropy of `logits` ``[batch, classes]`` against `onehot_labels`.

    `weights` is per example (``[batch]``) or a scalar. A non-zero `label_smoothing`
    uses ``onehot_labels * (1 - label_smoothing) + label_smoothing / classes``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import softmax_cross_entropy
    >>> loss = softmax_cross_entropy([[0.0, 1.0]], [[0.0, 0.0]])
    >>> print(round(float(tf.Session().run(loss)), 4))
    0.6931
    """
    _require(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss",
                    [logits, onehot_labels, weights]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = math_ops.cast(convert_to_tensor(onehot_labels, name="onehot_labels"),
                               logits.dtype.base_dtype)
        _check_same_shape("softmax_cross_entropy", logits, labels, "logits", "onehot_labels")
        if label_smoothing > 0:
            classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype.base_dtype)
            negatives = label_smoothing / classes  # TF builds the division first
            labels = labels * (1.0 - label_smoothing) + negatives
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_loss_ops.softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=_DEFAULT) -> Tensor:
    """Softmax cross-entropy of `logits` ``[batch, classes]`` against integer class
    `labels` ``[batch]`` (or ``[batch, 1]``); labels outside ``[0, classes)`` fail at run
    time with InvalidArgumentError.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.losses_impl import sparse_softmax_cross_entropy
    >>> loss = sparse_softmax_cross_entropy([1], [[0.0, 0.0]])
    >>> print(round(float(tf.Session().run(loss)), 4))
    0.6931
    """
    _require(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss",
                    [logits, labels, weights]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, preferred_dtype=_dtypes.int32, name="labels")
        labels, logits = remove_squeezable_dimensions(labels, logits, expected_rank_diff=1)
        weights = _squeeze_weights(labels, weights)
        losses = nn_loss_ops.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)
