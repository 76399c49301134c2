"""`sensitivity_at_specificity`, `specificity_at_sensitivity` (one point of the ROC curve,
read off confusion counts at `num_thresholds` evenly spaced thresholds) and
`mean_cosine_distance`, TensorFlow 1.x's remaining streaming metrics.

Example
-------
>>> import flowgraph as tf
>>> value, update = tf.metrics.sensitivity_at_specificity(
...     [True, False, True, False], [0.9, 0.2, 0.6, 0.7], specificity=0.5)
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     print(round(float(sess.run(update)), 4))
1.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.metrics.metrics_confusion import confusion_matrix_at_thresholds
from flowgraph.metrics.metrics_impl import add_to_metric_collections, mean
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.variable_scope import variable_scope

__all__ = ["mean_cosine_distance", "sensitivity_at_specificity",
           "specificity_at_sensitivity"]

_EPS = 1e-7


def _thresholds(num_thresholds: int, fn: str) -> list[float]:
    if not isinstance(num_thresholds, int) or num_thresholds < 2:
        raise ValueError(f"{fn}: num_thresholds must be an int >= 2, got {num_thresholds!r}")
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [-_EPS, *inner, 1.0 + _EPS]


def _check_rate(rate, what: str, fn: str) -> float:
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"{fn}: `{what}` must be in the range [0, 1], got {rate}")
    return float(rate)


def _sensitivity_at(c, specificity, name):
    specificities = math_ops.divide(c["tn"], c["tn"] + c["fp"] + _EPS)
    index = math_ops.cast(math_reduce.argmin(math_ops.abs(specificities - specificity), 0),
                          _dtypes.int32)
    tp, fn = array_ops.gather(c["tp"], index), array_ops.gather(c["fn"], index)
    return math_ops.divide(tp, tp + fn + _EPS, name=name)


def _specificity_at(c, sensitivity, name):
    sensitivities = math_ops.divide(c["tp"], c["tp"] + c["fn"] + _EPS)
    gap = math_ops.abs(sensitivities - sensitivity)
    # The last threshold whose sensitivity is closest, as TensorFlow picks it.
    at_min = math_ops.cast(math_ops.equal(gap, math_reduce.reduce_min(gap)), _dtypes.int64)
    index = math_ops.cast(math_reduce.argmax(math_reduce.cumsum(at_min), 0), _dtypes.int32)
    tn, fp = array_ops.gather(c["tn"], index), array_ops.gather(c["fp"], index)
    return math_ops.divide(tn, tn + fp + _EPS, name=name)


def _at_rate(labels, predictions, rate, weights, num_thresholds, metrics_collections,
             updates_collections, name, fn, default_name, compute):
    thresholds = _thresholds(num_thresholds, fn)
    with variable_scope(name, default_name, [predictions, labels, weights]):
        values, updates = confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                         weights, fn=fn)
        value = compute(values, rate, "value")
        update = compute(updates, rate, "update_op")
        return add_to_metric_collections(value, update, metrics_collections,
                                         updates_collections)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The sensitivity (recall) at the threshold whose specificity is closest to
    `specificity`, among `num_thresholds` thresholds spread over [0, 1]; `predictions`
    are scores in [0, 1], `labels` booleans.

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.sensitivity_at_specificity(
    ...     [True, True, False], [0.8, 0.3, 0.5], specificity=1.0)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(round(float(sess.run(update)), 4))
    0.5
    """
    rate = _check_rate(specificity, "specificity", "sensitivity_at_specificity")
    return _at_rate(labels, predictions, rate, weights, num_thresholds, metrics_collections,
                    updates_collections, name, "sensitivity_at_specificity",
                    "sensitivity_at_specificity", _sensitivity_at)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is closest to `sensitivity`
    (the highest such threshold on ties), among `num_thresholds` thresholds over [0, 1].

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.specificity_at_sensitivity(
    ...     [True, True, False], [0.8, 0.3, 0.5], sensitivity=0.5)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(round(float(sess.run(update)), 4))
    1.0
    """
    rate = _check_rate(sensitivity, "sensitivity", "specificity_at_sensitivity")
    return _at_rate(labels, predictions, rate, weights, num_thresholds, metrics_collections,
                    updates_collections, name, "specificity_at_sensitivity",
                    "specificity_at_sensitivity", _specificity_at)


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """The mean of ``1 - sum(labels * predictions, axis=dim)``: the cosine distance of
    unit-normalized `labels` and `predictions` along `dim`, averaged over the rest.

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.mean_cosine_distance(
    ...     [[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]], dim=1)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.5
    """
    predictions = convert_to_tensor(predictions, name="predictions")
    labels = math_ops.cast(convert_to_tensor(labels, name="labels"),
                           predictions.dtype.base_dtype)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"mean_cosine_distance: predictions {predictions.shape} and labels "
                         f"{labels.shape} must have compatible shapes")
    products = math_reduce.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim],
                                      keepdims=True)
    # TF keeps the variables at "<name>/total" and "<name>/count" (no inner "mean/")
    value, update = mean(products, weights, name=name or "mean_cosine_distance")
    value = math_ops.subtract(1.0, value)
    update = math_ops.subtract(1.0, update)
    return add_to_metric_collections(value, update, metrics_collections, updates_collections)
