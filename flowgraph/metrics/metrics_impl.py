"""Streaming metrics (``tf.metrics``): means, accuracy, regression errors, per-class metrics.

A metric is a pair ``(value, update_op)`` over *metric variables*: zero-initialized local
accumulators (``tf.Variable(trainable=False, collections=[LOCAL_VARIABLES,
METRIC_VARIABLES])``) created under a variable scope named after the metric
(``accuracy/total``, ``accuracy/count``; a second metric gets ``accuracy_1/...``).

    update_op   adds one batch to the accumulators (``assign_add``) and returns the
                metric over everything seen so far, this batch included
    value       reads the accumulators only: the metric so far, without updating

Run `update_op` once per batch, then read `value`; ``tf.local_variables_initializer()``
resets every metric. Ratios divide with a zero guard and are 0 before any data (or with
all-zero weights). `weights` are a scalar or a tensor broadcastable to the values (rank 0
or the values' rank, each dimension 1 or equal; a trailing size-1 dimension too many or
too few is squeezed or added, as in TensorFlow).

The confusion-count metrics (precision, recall, AUC, ...) live in `metrics_confusion`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.metrics import metrics_impl
>>> x = tf.placeholder(tf.float32, [None])
>>> value, update = metrics_impl.mean(x)
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     _ = sess.run(update, {x: [1.0, 2.0]})
...     _ = sess.run(update, {x: [6.0]})
...     print(sess.run(value))
3.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, add_to_collections, control_dependencies
from flowgraph.framework.operation import Tensor
from flowgraph.losses.util import check_broadcastable, safe_div
from flowgraph.ops import array_ops, math_ops, math_reduce, state_ops
from flowgraph.ops.variable_scope import variable_scope
from flowgraph.ops.variables import Variable

__all__ = [
    "accuracy",
    "mean",
    "mean_absolute_error",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "metric_variable",
    "percentage_below",
    "root_mean_squared_error",
]

_F32 = _dtypes.float32


# -- helpers shared with metrics_confusion ---------------------------------------------------
def metric_variable(shape, dtype, validate_shape: bool = True, name=None) -> Variable:
    """A zero-initialized, non-trainable local variable in ``LOCAL_VARIABLES`` and
    ``METRIC_VARIABLES``: the accumulator of a streaming metric."""
    return Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def add_to_metric_collections(value, update_op, metrics_collections,
                              updates_collections) -> tuple:
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def remove_squeezable_dimensions(predictions, labels=None, weights=None, fn: str = "metric"):
    """Convert the inputs, drop a trailing size-1 dimension that makes `labels` and
    `predictions` differ in rank by one, and squeeze or expand `weights` by one trailing
    dimension to the rank of `predictions` (static ranks only)."""
    predictions = convert_to_tensor(predictions, name="predictions")
    if labels is not None:
        labels = convert_to_tensor(labels, name="labels")
        lr, pr = labels.shape.ndims, predictions.shape.ndims
        if lr is not None and pr is not None:
            if pr - lr == 1 and predictions.shape[-1].is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif lr - pr == 1 and labels.shape[-1].is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"{fn}: predictions and labels must have compatible shapes, got "
                             f"predictions {predictions.shape} and labels {labels.shape}.")
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights, preferred_dtype=_F32, name="weights")
    wr, pr = weights.shape.ndims, predictions.shape.ndims
    if wr not in (None, 0) and pr is not None:
        if wr - pr == 1 and weights.shape[-1].is_compatible_with(1):
            weights = array_ops.squeeze(weights, [-1])
        elif pr - wr == 1:
            weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def broadcast_weights(weights, values: Tensor) -> Tensor:
    """float32 `weights` broadcast to the shape of `values` (checked statically)."""
    weights = math_ops.cast(convert_to_tensor(weights, preferred_dtype=_F32), _F32)
    check_broadcastable(weights, values)
    if weights.shape.is_fully_defined() and values.shape.is_fully_defined() and \
            weights.shape == values.shape:
        return weights
    return math_ops.multiply(weights, array_ops.ones_like(values, dtype=_F32))


def _flatten(x: Tensor) -> Tensor:
    return x if x.shape.ndims == 1 else array_ops.reshape(x, [-1])


# -- mean family -------------------------------------------------------------------------------
def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """The (weighted) mean of all `values` seen: ``sum(w * v) / sum(w)``.

    Variables ``mean/total`` and ``mean/count``; value ``mean/value``, update
    ``mean/update_op``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean
    >>> value, update = mean([1.0, 3.0], weights=[1.0, 3.0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    2.5
    """
    with variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(convert_to_tensor(values, name="values"), _F32)
        total = metric_variable([], _F32, name="total")
        count = metric_variable([], _F32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), _F32)
        else:
            values, _, weights = remove_squeezable_dimensions(values, None, weights, "mean")
            weights = broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_reduce.reduce_sum(weights)
        update_total = state_ops.assign_add(total, math_reduce.reduce_sum(values))
        with control_dependencies([values]):  # a constant count still waits for the batch
            update_count = state_ops.assign_add(count, num_values)
        value = safe_div(total, math_ops.maximum(count, 0.0), name="value")
        update_op = safe_div(update_total, math_ops.maximum(update_count, 0.0),
                             name="update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The elementwise (weighted) mean of `values` over batches; `values` must have a fully
    defined shape, which the result has.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean_tensor
    >>> value, update = mean_tensor([1.0, 3.0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    [1. 3.]
    """
    with variable_scope(name, "mean", [values, weights]):
        values = math_ops.cast(convert_to_tensor(values, name="values"), _F32)
        if not values.shape.is_fully_defined():
            raise ValueError(f"mean_tensor: values must have a fully defined shape, got "
                             f"{values.shape} ({values.name}).")
        total = metric_variable(values.shape, _F32, name="total_tensor")
        count = metric_variable(values.shape, _F32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            values, _, weights = remove_squeezable_dimensions(values, None, weights,
                                                              "mean_tensor")
            weights = broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = state_ops.assign_add(total, values)
        with control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = safe_div(total, math_ops.maximum(count, 0.0), name="value")
        update_op = safe_div(update_total, math_ops.maximum(update_count, 0.0),
                             name="update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often `predictions` equal `labels` (weighted): the `mean` of the matches.

    `predictions` are cast to the dtype of `labels` when they differ.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import accuracy
    >>> value, update = accuracy([1, 2, 3, 4], [1, 2, 0, 4])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.75
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights,
                                                                "accuracy")
    if labels.dtype.base_dtype != predictions.dtype.base_dtype:
        predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), _F32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """The (weighted) mean of ``(predictions - labels) ** 2`` over all batches.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean_squared_error
    >>> value, update = mean_squared_error([0.0, 0.0], [1.0, 3.0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    5.0
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights,
                                                                "mean_squared_error")
    labels, predictions = _same_float(labels, predictions)
    squared = math_ops.squared_difference(labels, predictions)
    return mean(squared, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The square root of the streaming `mean_squared_error`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import root_mean_squared_error
    >>> value, update = root_mean_squared_error([0.0, 0.0], [3.0, 4.0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(round(float(sess.run(update)), 4))
    3.5355
    """
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    value = math_ops.sqrt(mse)
    update_op = math_ops.sqrt(update_mse)
    return add_to_metric_collections(value, update_op, metrics_collections,
                                     updates_collections)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The (weighted) mean of ``|predictions - labels|`` over all batches.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean_absolute_error
    >>> value, update = mean_absolute_error([0.0, 0.0], [1.0, -3.0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    2.0
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights,
                                                                "mean_absolute_error")
    labels, predictions = _same_float(labels, predictions)
    errors = math_ops.abs(math_ops.subtract(predictions, labels))
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of ``|predictions - labels| / normalizer`` (0 where the
    normalizer is 0).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean_relative_error
    >>> value, update = mean_relative_error([1.0, 2.0], [2.0, 2.0], normalizer=[2.0, 0.0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.25
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights,
                                                                "mean_relative_error")
    labels, predictions = _same_float(labels, predictions)
    normalizer = math_ops.cast(convert_to_tensor(normalizer, name="normalizer"),
                               predictions.dtype.base_dtype)
    if not predictions.shape.is_compatible_with(normalizer.shape):
        raise ValueError(f"mean_relative_error: normalizer of shape {normalizer.shape} does "
                         f"not match predictions of shape {predictions.shape}.")
    zero = math_ops.equal(normalizer, 0.0)
    safe_norm = array_ops.where(zero, array_ops.ones_like(normalizer), normalizer)
    relative = array_ops.where(zero, array_ops.zeros_like(labels),
                               math_ops.abs(labels - predictions) / safe_norm)
    return mean(relative, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """The (weighted) fraction of `values` strictly below `threshold`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import percentage_below
    >>> value, update = percentage_below([1.0, 2.0, 3.0, 4.0], threshold=2.5)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.5
    """
    values = convert_to_tensor(values, name="values")
    below = math_ops.cast(math_ops.less(values, threshold), _F32)
    return mean(below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


def _same_float(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Cast integer inputs to float32 and `labels` to the predictions' dtype."""
    if not predictions.dtype.is_floating:
        predictions = math_ops.cast(predictions, _F32)
    if labels.dtype.base_dtype != predictions.dtype.base_dtype:
        labels = math_ops.cast(labels, predictions.dtype.base_dtype)
    return labels, predictions


# -- per-class metrics ----------------------------------------------------------------------------
def _check_num_classes(num_classes, fn: str) -> int:
    if isinstance(num_classes, Tensor) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"{fn}: num_classes must be a positive Python int (it sets the shape "
                         f"of the metric variables), got {num_classes!r}.")
    return num_classes


def _class_inputs(labels, predictions, weights, fn: str):
    """Flattened int64 labels/predictions and float32 weights (or None)."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights,
                                                                fn)
    if weights is not None:
        weights = _flatten(broadcast_weights(weights, predictions))
    labels = _flatten(math_ops.cast(labels, _dtypes.int64))
    predictions = _flatten(math_ops.cast(predictions, _dtypes.int64))
    return labels, predictions, weights


def _class_counts(classes: Tensor, num_classes: int, weights, dtype=_F32) -> Tensor:
    """``counts[c] = sum of weights where classes == c`` (classes outside the range are
    dropped)."""
    onehot = array_ops.one_hot(classes, num_classes, dtype=dtype)
    if weights is not None:
        onehot = onehot * array_ops.expand_dims(math_ops.cast(weights, dtype), -1)
    return math_reduce.reduce_sum(onehot, axis=0)


def confusion_matrix_batch(labels, predictions, num_classes: int, weights=None,
                           dtype=_dtypes.float64) -> Tensor:
    """``cm[i, j]`` = (weighted) count of examples with label i and prediction j."""
    rows = array_ops.one_hot(labels, num_classes, dtype=dtype)
    if weights is not None:
        rows = rows * array_ops.expand_dims(math_ops.cast(weights, dtype), -1)
    cols = array_ops.one_hot(predictions, num_classes, dtype=dtype)
    return math_ops.matmul(rows, cols, transpose_a=True)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """The mean over the `num_classes` classes of each class's accuracy (the fraction of
    examples of that class predicted correctly); a class never seen counts as 0, as in
    TensorFlow.

    Variables ``mean_accuracy/total`` and ``mean_accuracy/count`` (per class); the update
    op returns the per-class accuracies, the value their mean.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean_per_class_accuracy
    >>> value, update = mean_per_class_accuracy([0, 0, 1, 1], [0, 1, 1, 1], num_classes=2)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update), sess.run(value))
    [0.5 1. ] 0.75
    """
    num_classes = _check_num_classes(num_classes, "mean_per_class_accuracy")
    with variable_scope(name, "mean_accuracy", [predictions, labels, weights]):
        labels, predictions, weights = _class_inputs(labels, predictions, weights,
                                                     "mean_per_class_accuracy")
        total = metric_variable([num_classes], _F32, name="total")
        count = metric_variable([num_classes], _F32, name="count")
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), _F32)
        if weights is not None:
            is_correct = is_correct * weights
        update_total = state_ops.assign_add(total, _class_counts(labels, num_classes,
                                                                 weights))
        update_count = state_ops.assign_add(count, _class_counts(labels, num_classes,
                                                                 is_correct))
        per_class = safe_div(count, math_ops.maximum(total, 0.0))
        value = math_reduce.reduce_mean(per_class, name="mean_accuracy")
        update_op = safe_div(update_count, math_ops.maximum(update_total, 0.0),
                             name="update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


def _mean_iou_value(total_cm):
    """TF's graph for the mean IoU of a confusion matrix: classes whose row and column are
    empty are left out; the result is a ``Select`` (0 when no class is valid), with the
    IoU sum named ``mean_iou`` inside it."""
    from flowgraph.ops.linalg_diag_ops import diag_part

    by_row = math_ops.cast(math_reduce.reduce_sum(total_cm, 0), _F32)
    by_col = math_ops.cast(math_reduce.reduce_sum(total_cm, 1), _F32)
    diag = math_ops.cast(diag_part(total_cm), _F32)
    denominator = by_row + by_col - diag
    valid = math_reduce.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), _F32))
    denominator = array_ops.where(math_ops.greater(denominator, 0), denominator,
                                  array_ops.ones_like(denominator))
    iou = math_ops.divide(diag, denominator)
    return array_ops.where(math_ops.greater(valid, 0),
                           math_reduce.reduce_sum(iou, name="mean_iou") / valid, 0)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Mean intersection-over-union: per class ``tp / (tp + fp + fn)`` from the streamed
    confusion matrix, averaged over the classes that occur in the labels or the
    predictions (0 when none has).

    The variable is the float64 ``mean_iou/total_confusion_matrix`` ``[num_classes,
    num_classes]`` (rows: labels, columns: predictions); the update op returns it.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_impl import mean_iou
    >>> value, update = mean_iou([0, 0, 1, 1], [0, 1, 1, 1], num_classes=3)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     _ = sess.run(update)
    ...     print(round(float(sess.run(value)), 4))
    0.5833
    """
    num_classes = _check_num_classes(num_classes, "mean_iou")
    with variable_scope(name, "mean_iou", [predictions, labels, weights]):
        labels, predictions, weights = _class_inputs(labels, predictions, weights, "mean_iou")
        total_cm = metric_variable([num_classes, num_classes], _dtypes.float64,
                                   name="total_confusion_matrix")
        current = confusion_matrix_batch(labels, predictions, num_classes, weights)
        update_op = state_ops.assign_add(total_cm, current)
        value = _mean_iou_value(total_cm)
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)
