"""The `tf.metrics` namespace (TF1): streaming metrics returning ``(value, update_op)``.

Re-exports only; see `flowgraph.metrics.metrics_impl` (means, accuracy, regression and
per-class metrics) and `flowgraph.metrics.metrics_confusion` (counts, precision, recall,
AUC).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import metrics
>>> with tf.Graph().as_default():
...     acc, update = metrics.accuracy(labels=[1, 0, 1], predictions=[1, 1, 1])
...     with tf.Session() as sess:
...         sess.run(tf.local_variables_initializer())
...         _ = sess.run(update)
...         print(round(float(sess.run(acc)), 4))
0.6667
"""

from flowgraph.metrics.metrics_confusion import (
    auc,
    false_negatives,
    false_negatives_at_thresholds,
    false_positives,
    false_positives_at_thresholds,
    precision,
    precision_at_thresholds,
    recall,
    recall_at_thresholds,
    true_negatives,
    true_negatives_at_thresholds,
    true_positives,
    true_positives_at_thresholds,
)
from flowgraph.metrics.metrics_impl import (
    accuracy,
    mean,
    mean_absolute_error,
    mean_iou,
    mean_per_class_accuracy,
    mean_relative_error,
    mean_squared_error,
    mean_tensor,
    percentage_below,
    root_mean_squared_error,
)

__all__ = [
    "accuracy",
    "auc",
    "false_negatives",
    "false_negatives_at_thresholds",
    "false_positives",
    "false_positives_at_thresholds",
    "mean",
    "mean_absolute_error",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "percentage_below",
    "precision",
    "precision_at_thresholds",
    "recall",
    "recall_at_thresholds",
    "root_mean_squared_error",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]
from flowgraph.metrics.metrics_at_k import *
from flowgraph.metrics.metrics_at_rate import *
