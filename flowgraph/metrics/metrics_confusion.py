"""Streaming metrics built on confusion counts: true/false positives/negatives (at one
decision or at thresholds), precision, recall and AUC.

Labels and predictions of the boolean metrics are cast to bool (non-zero is True). The
``*_at_thresholds`` metrics and `auc` take `predictions` in [0, 1] and count, for each
threshold ``t``, the examples with ``prediction > t`` as predicted positive:

    pred_is_pos[i, j] = predictions[i] > thresholds[j]          # [examples, thresholds]
    tp[j] += sum_i w[i] * (label[i] and pred_is_pos[i, j])      # likewise fn, tn, fp

`auc` uses ``num_thresholds`` thresholds: ``-1e-7``, ``i / (num_thresholds - 1)`` for
``i = 1 .. num_thresholds - 2``, and ``1 + 1e-7``, and integrates the ROC curve (false
positive rate, recall) or the PR curve (recall, precision) over them:

    trapezoidal            sum of (x[j] - x[j+1]) * (y[j] + y[j+1]) / 2  (the default)
    minoring / majoring    the same with min / max of y[j], y[j+1]
    careful_interpolation  for PR: precision interpolated as a function of the number of
                           predicted positives between thresholds (Davis & Goadrich, 2006);
                           for ROC the same as trapezoidal

The sums use the TF epsilon conventions (``1e-6`` added to recall/precision numerators
and denominators), so a perfect ranking gives an AUC of 1 - O(1e-6). As in TensorFlow the
curve is a threshold approximation: with 200 thresholds an AUC differs from the exact
(rank-based) value by about 1e-2 at most, less for well-spread scores.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.metrics import metrics_confusion
>>> value, update = metrics_confusion.precision([1, 0, 1], [1, 1, 1])
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     print(round(float(sess.run(update)), 4))
0.6667
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.losses.util import safe_div
from flowgraph.metrics.metrics_impl import (
    add_to_metric_collections,
    broadcast_weights,
    metric_variable,
    remove_squeezable_dimensions,
)
from flowgraph.ops import array_ops, math_ops, math_reduce, state_ops
from flowgraph.ops.variable_scope import variable_scope

__all__ = [
    "auc",
    "false_negatives",
    "false_negatives_at_thresholds",
    "false_positives",
    "false_positives_at_thresholds",
    "precision",
    "precision_at_thresholds",
    "recall",
    "recall_at_thresholds",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]

_F32 = _dtypes.float32
_AUC_EPSILON = 1.0e-6
_THRESHOLD_EPSILON = 1e-7
_AT_THRESHOLDS_EPSILON = 1e-7
_SUMMATION_METHODS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


# -- counts at a single decision ------------------------------------------------------------
def _bool_inputs(labels, predictions, weights, fn: str):
    predictions = math_ops.cast(convert_to_tensor(predictions, name="predictions"),
                                _dtypes.bool)
    labels = math_ops.cast(convert_to_tensor(labels, name="labels"), _dtypes.bool)
    return remove_squeezable_dimensions(predictions, labels, weights, fn)


def _count_condition(condition: Tensor, weights, metrics_collections, updates_collections):
    """Accumulate the (weighted) number of true elements of `condition` in ``count``."""
    values = math_ops.cast(condition, _F32)
    count = metric_variable([], _F32, name="count")
    if weights is not None:
        values = math_ops.multiply(values, broadcast_weights(weights, values))
    value = array_ops.identity(count.value())
    update_op = state_ops.assign_add(count, math_reduce.reduce_sum(values))
    return add_to_metric_collections(value, update_op, metrics_collections,
                                     updates_collections)


def _make_count_metric(default_name: str, label_value: bool, prediction_value: bool, doc):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            predictions, labels, weights = _bool_inputs(labels, predictions, weights,
                                                        default_name)
            condition = math_ops.logical_and(
                labels if label_value else math_ops.logical_not(labels),
                predictions if prediction_value else math_ops.logical_not(predictions))
            return _count_condition(condition, weights, metrics_collections,
                                    updates_collections)

    metric.__name__ = metric.__qualname__ = default_name
    metric.__doc__ = doc
    return metric


true_positives = _make_count_metric("true_positives", True, True, """The (weighted) number
    of examples with a true label and a true prediction (variable ``true_positives/count``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import true_positives
    >>> value, update = true_positives([1, 0, 1], [1, 1, 0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    1.0
    """)
false_positives = _make_count_metric("false_positives", False, True, """The (weighted)
    number of examples with a false label and a true prediction.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import false_positives
    >>> value, update = false_positives([1, 0, 1], [1, 1, 0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    1.0
    """)
true_negatives = _make_count_metric("true_negatives", False, False, """The (weighted)
    number of examples with a false label and a false prediction.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import true_negatives
    >>> value, update = true_negatives([1, 0, 0], [1, 1, 0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    1.0
    """)
false_negatives = _make_count_metric("false_negatives", True, False, """The (weighted)
    number of examples with a true label and a false prediction.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import false_negatives
    >>> value, update = false_negatives([1, 0, 1], [1, 1, 0])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    1.0
    """)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """``tp / (tp + fp)`` over all batches (0 before any positive prediction).

    Variables ``precision/true_positives/count`` and ``precision/false_positives/count``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import precision
    >>> value, update = precision([1, 0, 1, 1], [1, 1, 0, 1])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(round(float(sess.run(update)), 4))
    0.6667
    """
    with variable_scope(name, "precision", [predictions, labels, weights]):
        predictions, labels, weights = _bool_inputs(labels, predictions, weights, "precision")
        tp, tp_update = true_positives(labels, predictions, weights)
        fp, fp_update = false_positives(labels, predictions, weights)
        value = _ratio_or_zero(tp, tp + fp, "value")
        update_op = _ratio_or_zero(tp_update, tp_update + fp_update, "update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """``tp / (tp + fn)`` over all batches (0 before any positive label).

    Variables ``recall/true_positives/count`` and ``recall/false_negatives/count``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import recall
    >>> value, update = recall([1, 0, 1, 1], [1, 1, 0, 1])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(round(float(sess.run(update)), 4))
    0.6667
    """
    with variable_scope(name, "recall", [predictions, labels, weights]):
        predictions, labels, weights = _bool_inputs(labels, predictions, weights, "recall")
        tp, tp_update = true_positives(labels, predictions, weights)
        fn, fn_update = false_negatives(labels, predictions, weights)
        value = _ratio_or_zero(tp, tp + fn, "value")
        update_op = _ratio_or_zero(tp_update, tp_update + fn_update, "update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


def _ratio_or_zero(numerator, denominator, name: str) -> Tensor:
    positive = math_ops.greater(denominator, 0.0)
    den = array_ops.where(positive, denominator, array_ops.ones_like(denominator))
    return array_ops.where(positive, numerator / den, array_ops.zeros_like(numerator),
                           name=name)


# -- counts at thresholds ------------------------------------------------------------------------
_VARIABLE_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                   "fp": "false_positives"}


def _check_thresholds(thresholds, fn: str) -> list[float]:
    if isinstance(thresholds, Tensor):
        raise TypeError(f"{fn}: thresholds must be a Python list of floats (they set the "
                        f"shape of the metric variables), got the tensor {thresholds.name}.")
    values = [float(t) for t in np.asarray(thresholds, dtype=np.float64).reshape(-1)]
    if not values:
        raise ValueError(f"{fn}: thresholds must not be empty.")
    return values


def confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None,
                                   includes=("tp", "fn", "tn", "fp"), fn: str = "metric"):
    """Create the ``[len(thresholds)]`` count variables named in `includes` (in that
    order) and their updates: ``(values, update_ops)``, two dicts keyed by tp/fn/tn/fp."""
    predictions, labels, weights = remove_squeezable_dimensions(
        math_ops.cast(convert_to_tensor(predictions, name="predictions"), _F32),
        math_ops.cast(convert_to_tensor(labels, name="labels"), _dtypes.bool), weights, fn)
    n = len(thresholds)
    scores = array_ops.reshape(predictions, [-1, 1])
    label_is_pos = array_ops.reshape(labels, [-1, 1])
    cut = constant(np.asarray(thresholds, dtype=np.float32).reshape(1, n), name="thresholds")
    pred_is_pos = math_ops.greater(scores, cut)  # [examples, thresholds]
    w = None
    if weights is not None:
        w = array_ops.reshape(broadcast_weights(weights, predictions), [-1, 1])
    conditions = {
        "tp": lambda: math_ops.logical_and(label_is_pos, pred_is_pos),
        "fn": lambda: math_ops.logical_and(label_is_pos, math_ops.logical_not(pred_is_pos)),
        "tn": lambda: math_ops.logical_and(math_ops.logical_not(label_is_pos),
                                           math_ops.logical_not(pred_is_pos)),
        "fp": lambda: math_ops.logical_and(math_ops.logical_not(label_is_pos), pred_is_pos),
    }
    values, updates = {}, {}
    for key in ("tp", "fn", "tn", "fp"):
        if key not in includes:
            continue
        var = metric_variable([n], _F32, name=_VARIABLE_NAMES[key])
        hits = math_ops.cast(conditions[key](), _F32)
        if w is not None:
            hits = hits * w
        updates[key] = state_ops.assign_add(var, math_reduce.reduce_sum(hits, axis=0))
        values[key] = var.value()
    return values, updates


def _make_count_at_thresholds(default_name: str, key: str, doc: str):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        thresholds = _check_thresholds(thresholds, f"{default_name}_at_thresholds")
        with variable_scope(name, default_name, [predictions, labels, weights]):
            values, updates = confusion_matrix_at_thresholds(
                labels, predictions, thresholds, weights, includes=(key,),
                fn=f"{default_name}_at_thresholds")
            value = array_ops.identity(values[key])
            return add_to_metric_collections(value, updates[key], metrics_collections,
                                             updates_collections)

    metric.__name__ = metric.__qualname__ = f"{default_name}_at_thresholds"
    metric.__doc__ = doc
    return metric


true_positives_at_thresholds = _make_count_at_thresholds("true_positives", "tp", """For
    each threshold, the (weighted) number of positive examples with ``prediction >
    threshold``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import true_positives_at_thresholds
    >>> value, update = true_positives_at_thresholds([1, 0, 1], [0.9, 0.8, 0.2], [0.1, 0.5])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    [2. 1.]
    """)
false_positives_at_thresholds = _make_count_at_thresholds("false_positives", "fp", """For
    each threshold, the (weighted) number of negative examples with ``prediction >
    threshold``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import false_positives_at_thresholds
    >>> value, update = false_positives_at_thresholds([1, 0, 1], [0.9, 0.8, 0.2], [0.85])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    [0.]
    """)
true_negatives_at_thresholds = _make_count_at_thresholds("true_negatives", "tn", """For
    each threshold, the (weighted) number of negative examples with ``prediction <=
    threshold``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import true_negatives_at_thresholds
    >>> value, update = true_negatives_at_thresholds([1, 0, 1], [0.9, 0.8, 0.2], [0.85])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    [1.]
    """)
false_negatives_at_thresholds = _make_count_at_thresholds("false_negatives", "fn", """For
    each threshold, the (weighted) number of positive examples with ``prediction <=
    threshold``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import false_negatives_at_thresholds
    >>> value, update = false_negatives_at_thresholds([1, 0, 1], [0.9, 0.8, 0.2], [0.5])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    [1.]
    """)


def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """For each threshold, ``tp / (tp + fp + 1e-7)`` counting ``prediction > threshold``
    as positive. Variables ``precision_at_thresholds/true_positives`` and ``.../
    false_positives``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import precision_at_thresholds
    >>> value, update = precision_at_thresholds([1, 0, 1], [0.9, 0.8, 0.2], [0.5, 0.85])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update).round(4))
    [0.5 1. ]
    """
    thresholds = _check_thresholds(thresholds, "precision_at_thresholds")
    with variable_scope(name, "precision_at_thresholds", [predictions, labels, weights]):
        values, updates = confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights, includes=("tp", "fp"),
            fn="precision_at_thresholds")
        value = math_ops.divide(values["tp"],
                                _AT_THRESHOLDS_EPSILON + values["tp"] + values["fp"],
                                name="precision_value")
        update_op = math_ops.divide(updates["tp"],
                                    _AT_THRESHOLDS_EPSILON + updates["tp"] + updates["fp"],
                                    name="precision_update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None, name=None):
    """For each threshold, ``tp / (tp + fn + 1e-7)`` counting ``prediction > threshold``
    as positive.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import recall_at_thresholds
    >>> value, update = recall_at_thresholds([1, 0, 1], [0.9, 0.8, 0.2], [0.1, 0.5])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update).round(4))
    [1.  0.5]
    """
    thresholds = _check_thresholds(thresholds, "recall_at_thresholds")
    with variable_scope(name, "recall_at_thresholds", [predictions, labels, weights]):
        values, updates = confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights, includes=("tp", "fn"),
            fn="recall_at_thresholds")
        value = math_ops.divide(values["tp"],
                                _AT_THRESHOLDS_EPSILON + values["tp"] + values["fn"],
                                name="recall_value")
        update_op = math_ops.divide(updates["tp"],
                                    _AT_THRESHOLDS_EPSILON + updates["tp"] + updates["fn"],
                                    name="recall_update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)


# -- AUC ---------------------------------------------------------------------------------------
def _auc_thresholds(num_thresholds: int, thresholds) -> list[float]:
    if thresholds is not None:
        inner = sorted(_check_thresholds(thresholds, "auc"))
    else:
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _THRESHOLD_EPSILON, *inner, 1.0 + _THRESHOLD_EPSILON]


def _pr_auc_interpolated(tp, fp, fn, n: int) -> Tensor:
    """PR-AUC with precision interpolated between thresholds as a function of the number
    of predicted positives ``p = tp + fp`` (Davis & Goadrich): on each segment, precision
    is ``(tp_hi + slope * (p - p_hi)) / p`` with ``slope = dtp / dp``; integrating over
    recall gives ``slope * (dtp + intercept * log(p_lo / p_hi)) / (tp + fn)``."""
    tp_lo, tp_hi = tp[: n - 1], tp[1:]
    p = tp + fp
    p_lo, p_hi = p[: n - 1], p[1:]
    dtp = tp_lo - tp_hi
    slope = safe_div(dtp, math_ops.maximum(p_lo - p_hi, 0.0), name="prec_slope")
    intercept = tp_hi - slope * p_hi
    both = math_ops.logical_and(math_ops.greater(p_lo, 0.0), math_ops.greater(p_hi, 0.0))
    ratio = array_ops.where(both, safe_div(p_lo, math_ops.maximum(p_hi, 0.0),
                                           name="recall_relative_ratio"),
                            array_ops.ones_like(p_hi))
    increments = safe_div(slope * (dtp + intercept * math_ops.log(ratio)),
                          math_ops.maximum(tp_hi + fn[1:], 0.0), name="pr_auc_increment")
    return math_reduce.reduce_sum(increments, name="interpolate_pr_auc")


def _auc_from_counts(c: dict, n: int, curve: str, summation_method: str, name: str) -> Tensor:
    tp, fn, tn, fp = c["tp"], c["fn"], c["tn"], c["fp"]
    if curve == "PR" and summation_method == "careful_interpolation":
        # TF names both the value and the update "interpolate_pr_auc" (then "_1")
        return _pr_auc_interpolated(tp, fp, fn, n)
    rec = (tp + _AUC_EPSILON) / (tp + fn + _AUC_EPSILON)
    if curve == "ROC":
        x, y = fp / (fp + tn + _AUC_EPSILON), rec
    else:
        x, y = rec, (tp + _AUC_EPSILON) / (tp + fp + _AUC_EPSILON)
    dx = x[: n - 1] - x[1:]
    y_lo, y_hi = y[: n - 1], y[1:]
    if summation_method == "minoring":
        height = math_ops.minimum(y_lo, y_hi)
    elif summation_method == "majoring":
        height = math_ops.maximum(y_lo, y_hi)
    else:  # trapezoidal (and careful_interpolation for ROC)
        height = (y_lo + y_hi) / 2.0
    return math_reduce.reduce_sum(dx * height, name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """The area under the ROC curve (``curve='ROC'``) or the precision-recall curve
    (``curve='PR'``), approximated over `num_thresholds` thresholds in [0, 1].

    `predictions` are scores in [0, 1]; `labels` are cast to bool. `summation_method` is
    ``'trapezoidal'`` (default), ``'careful_interpolation'`` (recommended for PR),
    ``'minoring'`` or ``'majoring'``. `thresholds` (a list of floats) replaces the evenly
    spaced ones. Variables ``auc/true_positives``, ``auc/false_negatives``,
    ``auc/true_negatives``, ``auc/false_positives`` (each ``[num_thresholds]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.metrics.metrics_confusion import auc
    >>> value, update = auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(round(float(sess.run(update)), 2))
    0.75
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
    if summation_method not in _SUMMATION_METHODS:
        raise ValueError(f"Invalid summation_method: {summation_method} summation_method "
                         "should be 'trapezoidal', 'careful_interpolation', 'minoring', or "
                         "'majoring'.")
    if thresholds is None and not isinstance(num_thresholds, int | np.integer):
        raise TypeError(f"auc: num_thresholds must be an int, got {num_thresholds!r}")
    cuts = _auc_thresholds(num_thresholds, thresholds)
    # As TensorFlow, the curve is summed over the first `num_thresholds` points: below 2
    # that is an empty sum (or, for 0, one segment of the two end thresholds).
    n = len(cuts) if thresholds is not None else int(num_thresholds)
    with variable_scope(name, "auc", [labels, predictions, weights]):
        values, updates = confusion_matrix_at_thresholds(labels, predictions, cuts, weights,
                                                         fn="auc")
        value = _auc_from_counts(values, n, curve, summation_method, "value")
        update_op = _auc_from_counts(updates, n, curve, summation_method, "update_op")
        return add_to_metric_collections(value, update_op, metrics_collections,
                                         updates_collections)
