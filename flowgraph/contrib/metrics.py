"""`tf.contrib.metrics` (also ``slim.metrics``): TF1's ``streaming_*`` metrics, which take
`predictions` before `labels` and return ``(value, update_op)`` as `tf.metrics` does, and
the helpers that group many metrics for an evaluation loop.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     values, updates = tf.contrib.metrics.aggregate_metric_map({
...         "accuracy": tf.contrib.metrics.streaming_accuracy(
...             tf.constant([1, 0, 1]), tf.constant([1, 1, 1]))})
...     sess = tf.Session()
...     sess.run(tf.local_variables_initializer())
...     _ = sess.run(updates)
...     print(round(float(sess.run(values["accuracy"])), 4))
0.6667
"""

from __future__ import annotations

from flowgraph import metrics as _m
from flowgraph.contrib.metrics_streaming import *  # noqa: F403 (TF 1.x's other contrib metrics)
from flowgraph.contrib.metrics_streaming import __all__ as _streaming_names
from flowgraph.framework import dtypes
from flowgraph.ops import math_ops, nn_loss_ops

__all__ = [
    "accuracy",
    "aggregate_metric_map",
    "aggregate_metrics",
    "streaming_accuracy",
    "streaming_auc",
    "streaming_false_negatives",
    "streaming_false_positives",
    "streaming_mean",
    "streaming_mean_absolute_error",
    "streaming_mean_cosine_distance",
    "streaming_mean_iou",
    "streaming_mean_relative_error",
    "streaming_mean_squared_error",
    "streaming_mean_tensor",
    "streaming_percentage_less",
    "streaming_precision",
    "streaming_precision_at_thresholds",
    "streaming_recall",
    "streaming_recall_at_k",
    "streaming_recall_at_thresholds",
    "streaming_root_mean_squared_error",
    "streaming_sensitivity_at_specificity",
    "streaming_sparse_average_precision_at_k",
    "streaming_sparse_precision_at_k",
    "streaming_sparse_recall_at_k",
    "streaming_specificity_at_sensitivity",
    "streaming_true_negatives",
    "streaming_true_positives",
    *_streaming_names,
]



def streaming_mean(values, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    """The running (weighted) mean of `values`."""
    return _m.mean(values, weights, metrics_collections, updates_collections, name)


def streaming_mean_tensor(values, weights=None, metrics_collections=None,
                          updates_collections=None, name=None):
    """The running element-wise mean of `values`."""
    return _m.mean_tensor(values, weights, metrics_collections, updates_collections, name)


def _pair_metric(fn):
    """A streaming metric taking ``(predictions, labels, ...)`` over a `tf.metrics`
    function taking ``(labels, predictions, ...)``."""

    def streaming(predictions, labels, weights=None, metrics_collections=None,
                  updates_collections=None, name=None):
        return fn(labels=labels, predictions=predictions, weights=weights,
                  metrics_collections=metrics_collections,
                  updates_collections=updates_collections, name=name)

    streaming.__name__ = f"streaming_{fn.__name__}"
    streaming.__doc__ = (f"`tf.metrics.{fn.__name__}` with `predictions` before "
                         f"`labels`.")
    return streaming


streaming_accuracy = _pair_metric(_m.accuracy)
streaming_precision = _pair_metric(_m.precision)
streaming_recall = _pair_metric(_m.recall)
streaming_true_positives = _pair_metric(_m.true_positives)
streaming_true_negatives = _pair_metric(_m.true_negatives)
streaming_false_positives = _pair_metric(_m.false_positives)
streaming_false_negatives = _pair_metric(_m.false_negatives)
streaming_mean_absolute_error = _pair_metric(_m.mean_absolute_error)
streaming_mean_squared_error = _pair_metric(_m.mean_squared_error)
streaming_root_mean_squared_error = _pair_metric(_m.root_mean_squared_error)


def accuracy(predictions, labels, weights=None, name=None):
    """The accuracy of `predictions` against `labels` for one batch (no state)."""
    eq = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    if weights is None:
        return math_ops.reduce_mean(eq, name=name or "accuracy")
    weights = math_ops.cast(weights, dtypes.float32)
    return math_ops.divide(math_ops.reduce_sum(eq * weights), math_ops.reduce_sum(weights),
                           name=name or "accuracy")


def streaming_auc(predictions, labels, weights=None, num_thresholds=200,
                  metrics_collections=None, updates_collections=None, curve="ROC",
                  name=None, summation_method="trapezoidal"):
    """The area under the ROC (or PR) curve, as `tf.metrics.auc`."""
    return _m.auc(labels, predictions, weights, num_thresholds, metrics_collections,
                  updates_collections, curve, name, summation_method)


def streaming_precision_at_thresholds(predictions, labels, thresholds, weights=None,
                                      metrics_collections=None, updates_collections=None,
                                      name=None):
    """Precision at each of `thresholds`."""
    return _m.precision_at_thresholds(labels, predictions, thresholds, weights,
                                      metrics_collections, updates_collections, name)


def streaming_recall_at_thresholds(predictions, labels, thresholds, weights=None,
                                   metrics_collections=None, updates_collections=None,
                                   name=None):
    """Recall at each of `thresholds`."""
    return _m.recall_at_thresholds(labels, predictions, thresholds, weights,
                                   metrics_collections, updates_collections, name)


def streaming_sensitivity_at_specificity(predictions, labels, specificity, weights=None,
                                         num_thresholds=200, metrics_collections=None,
                                         updates_collections=None, name=None):
    """Sensitivity at the given specificity."""
    return _m.sensitivity_at_specificity(labels, predictions, specificity, weights,
                                         num_thresholds, metrics_collections,
                                         updates_collections, name)


def streaming_specificity_at_sensitivity(predictions, labels, sensitivity, weights=None,
                                         num_thresholds=200, metrics_collections=None,
                                         updates_collections=None, name=None):
    """Specificity at the given sensitivity."""
    return _m.specificity_at_sensitivity(labels, predictions, sensitivity, weights,
                                         num_thresholds, metrics_collections,
                                         updates_collections, name)


def streaming_recall_at_k(predictions, labels, k, weights=None, metrics_collections=None,
                          updates_collections=None, name=None):
    """The share of rows whose label is among the `k` highest `predictions`."""
    hits = nn_loss_ops.in_top_k(predictions, labels, k)
    return streaming_mean(math_ops.cast(hits, dtypes.float32), weights,
                          metrics_collections, updates_collections, name or f"recall_at_{k}")


def streaming_sparse_recall_at_k(predictions, labels, k, class_id=None, weights=None,
                                 metrics_collections=None, updates_collections=None,
                                 name=None):
    """`tf.metrics.recall_at_k` with `predictions` first."""
    return _m.recall_at_k(labels, predictions, k, class_id, weights, metrics_collections,
                          updates_collections, name)


def streaming_sparse_precision_at_k(predictions, labels, k, class_id=None, weights=None,
                                    metrics_collections=None, updates_collections=None,
                                    name=None):
    """`tf.metrics.precision_at_k` with `predictions` first."""
    return _m.precision_at_k(labels, predictions, k, class_id, weights,
                             metrics_collections, updates_collections, name)


def streaming_sparse_average_precision_at_k(predictions, labels, k, weights=None,
                                            metrics_collections=None,
                                            updates_collections=None, name=None):
    """`tf.metrics.average_precision_at_k` with `predictions` first."""
    return _m.average_precision_at_k(labels, predictions, k, weights, metrics_collections,
                                     updates_collections, name)


def streaming_mean_iou(predictions, labels, num_classes, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """`tf.metrics.mean_iou` with `predictions` first."""
    return _m.mean_iou(labels, predictions, num_classes, weights, metrics_collections,
                       updates_collections, name)


def streaming_mean_relative_error(predictions, labels, normalizer, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """`tf.metrics.mean_relative_error` with `predictions` first."""
    return _m.mean_relative_error(labels, predictions, normalizer, weights,
                                  metrics_collections, updates_collections, name)


def streaming_mean_cosine_distance(predictions, labels, dim, weights=None,
                                   metrics_collections=None, updates_collections=None,
                                   name=None):
    """`tf.metrics.mean_cosine_distance` with `predictions` first."""
    return _m.mean_cosine_distance(labels, predictions, dim, weights, metrics_collections,
                                   updates_collections, name)


def streaming_percentage_less(values, threshold, weights=None, metrics_collections=None,
                              updates_collections=None, name=None):
    """The share of `values` below `threshold` (`tf.metrics.percentage_below`)."""
    return _m.percentage_below(values, threshold, weights, metrics_collections,
                               updates_collections, name)


def aggregate_metrics(*value_update_tuples):
    """``([values], [update ops])`` of several ``(value, update_op)`` pairs."""
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples: dict):
    """``({name: value}, {name: update_op})`` of ``{name: (value, update_op)}``."""
    names = list(names_to_tuples)
    values, updates = aggregate_metrics(*[names_to_tuples[n] for n in names])
    return dict(zip(names, values)), dict(zip(names, updates))
