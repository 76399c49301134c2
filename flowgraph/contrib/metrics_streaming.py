"""The rest of TF 1.x's `tf.contrib.metrics`: statistics that `tf.metrics` never had
(`streaming_covariance`, `streaming_pearson_correlation`, `cohen_kappa`, `count`,
`streaming_concat`), metrics read off a curve of thresholds (`f1_score`,
`recall_at_precision`, `precision_at_recall`, `streaming_curve_points`, the
``*_rate`` metrics), the exact `streaming_dynamic_auc`, and the aliases kept for old
programs (``streaming_*_at_thresholds``, ``set_*``, `confusion_matrix`).

Every metric returns ``(value, update_op)`` and keeps its state in local variables, as
`tf.metrics` does; the ``streaming_*`` ones take `predictions` before `labels`.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     r, update = tf.contrib.metrics.streaming_pearson_correlation(
...         tf.constant([1.0, 2.0, 3.0, 4.0]), tf.constant([2.0, 4.1, 5.9, 8.0]))
...     with tf.Session() as sess:
...         sess.run(tf.local_variables_initializer())
...         print(round(float(sess.run(update)), 4))
0.9995
"""

from __future__ import annotations

import collections

import numpy as np

from flowgraph import metrics as _m
from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import GraphKeys, control_dependencies, name_scope
from flowgraph.metrics.metrics_confusion import (
    _AT_THRESHOLDS_EPSILON,
    _AUC_EPSILON,
    _auc_thresholds,
    _check_thresholds,
    _ratio_or_zero,
    confusion_matrix_at_thresholds,
)
from flowgraph.metrics.metrics_impl import (
    add_to_metric_collections,
    broadcast_weights,
    metric_variable,
    remove_squeezable_dimensions,
)
from flowgraph.ops import array_ops, math_ops, math_reduce, state_ops
from flowgraph.ops.array_extra_ops import unique_with_counts
from flowgraph.ops.array_index_ops import boolean_mask
from flowgraph.ops.array_raw import histogram_fixed_width
from flowgraph.ops.control_flow_cond import Assert, cond
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.linalg_diag_v3 import matrix_diag_part
from flowgraph.ops.math_composite import confusion_matrix
from flowgraph.ops.nn_loss_ops import top_k
from flowgraph.ops.segment_ops import unsorted_segment_sum
from flowgraph.ops.set_ops import set_difference, set_intersection, set_size, set_union
from flowgraph.ops.variable_scope import variable_scope
from flowgraph.ops.variables import Variable

__all__ = [
    "auc_using_histogram", "cohen_kappa", "confusion_matrix", "count", "f1_score",
    "precision_at_recall", "precision_recall_at_equal_thresholds",
    "recall_at_precision", "set_difference", "set_intersection", "set_size", "set_union",
    "sparse_recall_at_top_k", "streaming_concat", "streaming_covariance",
    "streaming_curve_points", "streaming_dynamic_auc", "streaming_false_negative_rate",
    "streaming_false_negative_rate_at_thresholds", "streaming_false_negatives_at_thresholds",
    "streaming_false_positive_rate", "streaming_false_positive_rate_at_thresholds",
    "streaming_false_positives_at_thresholds", "streaming_pearson_correlation",
    "streaming_sparse_average_precision_at_top_k", "streaming_sparse_precision_at_top_k",
    "streaming_true_negatives_at_thresholds", "streaming_true_positives_at_thresholds",
]

_F32, _F64 = dtypes.float32, dtypes.float64


def _finish(value, update, metrics_collections, updates_collections):
    return add_to_metric_collections(value, update, metrics_collections, updates_collections)


# -- counts ---------------------------------------------------------------------------------

def count(values, weights=None, metrics_collections=None, updates_collections=None,
          name=None):
    """The running number of `values` (or the sum of their `weights`), a float32.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     n, update = tf.contrib.metrics.count(tf.zeros([2, 3]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update)
    ...         print(sess.run(update))
    12.0
    """
    with variable_scope(name, "count", [values, weights]):
        total = metric_variable([], _F32, name="count")
        values = convert_to_tensor(values, name="values")
        if weights is None:
            batch = math_ops.cast(array_ops.size(values), _F32)
        else:
            values = math_ops.cast(values, _F32)
            values, _, weights = remove_squeezable_dimensions(values, None, weights, "count")
            batch = math_reduce.reduce_sum(broadcast_weights(weights, values))
        with control_dependencies([values]):
            update = state_ops.assign_add(total, batch)
        return _finish(total.value(), update, metrics_collections, updates_collections)


def _at_thresholds_alias(fn):
    def streaming(predictions, labels, thresholds, weights=None, metrics_collections=None,
                  updates_collections=None, name=None):
        return fn(labels, predictions, thresholds, weights, metrics_collections,
                  updates_collections, name)

    streaming.__name__ = streaming.__qualname__ = f"streaming_{fn.__name__}"
    streaming.__doc__ = f"`tf.metrics.{fn.__name__}` with `predictions` before `labels`."
    return streaming


streaming_true_positives_at_thresholds = _at_thresholds_alias(_m.true_positives_at_thresholds)
streaming_false_positives_at_thresholds = _at_thresholds_alias(
    _m.false_positives_at_thresholds)
streaming_true_negatives_at_thresholds = _at_thresholds_alias(_m.true_negatives_at_thresholds)
streaming_false_negatives_at_thresholds = _at_thresholds_alias(
    _m.false_negatives_at_thresholds)


# -- rates ----------------------------------------------------------------------------------

def _rate(predictions, labels, weights, default_name, wrong, right, metrics_collections,
          updates_collections, name):
    """``wrong / (wrong + right)`` of two count metrics, 0 while both are 0."""
    with variable_scope(name, default_name, [predictions, labels, weights]):
        predictions, labels, weights = remove_squeezable_dimensions(
            math_ops.cast(convert_to_tensor(predictions, name="predictions"), dtypes.bool),
            math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.bool), weights,
            default_name)
        bad, bad_update = wrong(labels, predictions, weights)
        good, good_update = right(labels, predictions, weights)
        value = _ratio_or_zero(bad, bad + good, "value")
        update = _ratio_or_zero(bad_update, bad_update + good_update, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def streaming_false_positive_rate(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """The running false-positive rate ``fp / (fp + tn)`` of boolean predictions (0
    before any negative example).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     fpr, update = tf.contrib.metrics.streaming_false_positive_rate(
    ...         tf.constant([1, 1, 0, 0]), tf.constant([1, 0, 0, 0]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 4))
    0.3333
    """
    return _rate(predictions, labels, weights, "false_positive_rate", _m.false_positives,
                 _m.true_negatives, metrics_collections, updates_collections, name)


def streaming_false_negative_rate(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """The running false-negative rate ``fn / (fn + tp)`` of boolean predictions (0
    before any positive example).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     fnr, update = tf.contrib.metrics.streaming_false_negative_rate(
    ...         tf.constant([1, 0, 0, 0]), tf.constant([1, 1, 0, 0]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(float(sess.run(update)))
    0.5
    """
    return _rate(predictions, labels, weights, "false_negative_rate", _m.false_negatives,
                 _m.true_positives, metrics_collections, updates_collections, name)


def _rate_at_thresholds(predictions, labels, thresholds, weights, default_name, bad, good,
                        metrics_collections, updates_collections, name):
    thresholds = _check_thresholds(thresholds, f"streaming_{default_name}_at_thresholds")
    with variable_scope(name, default_name, [predictions, labels, weights]):
        values, updates = confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights, includes=(bad, good),
            fn=f"streaming_{default_name}_at_thresholds")
        eps = _AT_THRESHOLDS_EPSILON

        def rate(c, name):
            return math_ops.divide(c[bad], c[bad] + c[good] + eps, name=name)

        return _finish(rate(values, "value"), rate(updates, "update_op"),
                       metrics_collections, updates_collections)


def streaming_false_positive_rate_at_thresholds(predictions, labels, thresholds, weights=None,
                                                metrics_collections=None,
                                                updates_collections=None, name=None):
    """For each threshold, ``fp / (fp + tn + 1e-7)`` of ``predictions > threshold``.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     fpr, update = tf.contrib.metrics.streaming_false_positive_rate_at_thresholds(
    ...         tf.constant([0.9, 0.6, 0.4, 0.1]), tf.constant([1, 0, 0, 0]), [0.5])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update).round(4))
    [0.3333]
    """
    return _rate_at_thresholds(predictions, labels, thresholds, weights,
                               "false_positive_rate_at_thresholds", "fp", "tn",
                               metrics_collections, updates_collections, name)


def streaming_false_negative_rate_at_thresholds(predictions, labels, thresholds, weights=None,
                                                metrics_collections=None,
                                                updates_collections=None, name=None):
    """For each threshold, ``fn / (fn + tp + 1e-7)`` of ``predictions > threshold``.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     fnr, update = tf.contrib.metrics.streaming_false_negative_rate_at_thresholds(
    ...         tf.constant([0.9, 0.4, 0.4, 0.1]), tf.constant([1, 1, 0, 0]), [0.5])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update).round(4))
    [0.5]
    """
    return _rate_at_thresholds(predictions, labels, thresholds, weights,
                               "false_negative_rate_at_thresholds", "fn", "tp",
                               metrics_collections, updates_collections, name)


# -- statistics -----------------------------------------------------------------------------

def streaming_covariance(predictions, labels, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """The running unbiased (weighted) covariance of `predictions` and `labels`:
    ``sum(w (p - mean_p)(l - mean_l)) / (sum(w) - 1)``, NaN while ``sum(w) <= 1``.
    Batches are merged with the pairwise update of co-moments, so the value does not
    depend on how the data was split.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cov, update = tf.contrib.metrics.streaming_covariance(
    ...         tf.constant([1.0, 2.0, 3.0]), tf.constant([2.0, 4.0, 7.0]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(float(sess.run(update)))
    2.5
    """
    with variable_scope(name, "covariance", [predictions, labels, weights]):
        predictions, labels, weights = remove_squeezable_dimensions(
            predictions, labels, weights, "streaming_covariance")
        predictions = math_ops.cast(predictions, _F32)
        labels = math_ops.cast(labels, _F32)
        n = metric_variable([], _F32, name="count")
        mean_p = metric_variable([], _F32, name="mean_prediction")
        mean_l = metric_variable([], _F32, name="mean_label")
        comoment = metric_variable([], _F32, name="comoment")
        if weights is None:
            batch_n = math_ops.cast(array_ops.size(labels), _F32)
            wp, wl = predictions, labels
        else:
            weights = broadcast_weights(weights, labels)
            batch_n = math_reduce.reduce_sum(weights)
            wp, wl = predictions * weights, labels * weights
        new_n = state_ops.assign_add(n, batch_n)
        old_n = new_n - batch_n
        batch_mean_p = math_ops.div_no_nan(math_reduce.reduce_sum(wp), batch_n)
        batch_mean_l = math_ops.div_no_nan(math_reduce.reduce_sum(wl), batch_n)
        shift_p = math_ops.div_no_nan((batch_mean_p - mean_p) * batch_n, new_n)
        shift_l = math_ops.div_no_nan((batch_mean_l - mean_l) * batch_n, new_n)
        new_mean_p = state_ops.assign_add(mean_p, shift_p)
        new_mean_l = state_ops.assign_add(mean_l, shift_l)
        old_mean_p = new_mean_p - shift_p
        old_mean_l = new_mean_l - shift_l
        residuals = (predictions - batch_mean_p) * (labels - batch_mean_l)
        if weights is not None:
            residuals = weights * residuals
        batch_comoment = math_reduce.reduce_sum(residuals)
        cross = (old_mean_p - batch_mean_p) * (old_mean_l - batch_mean_l) * \
            math_ops.div_no_nan(old_n * batch_n, new_n)
        new_comoment = state_ops.assign_add(comoment, batch_comoment + cross)

        def covariance(moment, total, name):
            nan = constant(float("nan"), _F32) * array_ops.ones_like(total)
            return array_ops.where(math_ops.less_equal(total, 1.0), nan,
                                   math_ops.divide(moment, total - 1.0), name=name)

        value = covariance(comoment.value(), n.value(), "covariance")
        update = covariance(new_comoment, new_n, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def streaming_pearson_correlation(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """The running (weighted) Pearson correlation of `predictions` and `labels`: three
    `streaming_covariance` metrics, ``cov(p, l) / sqrt(var(p) var(l))``.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     r, update = tf.contrib.metrics.streaming_pearson_correlation(
    ...         tf.constant([1.0, 2.0, 3.0]), tf.constant([3.0, 2.0, 1.0]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(float(sess.run(update)))
    -1.0
    """
    with variable_scope(name, "pearson_r", [predictions, labels, weights]):
        predictions, labels, weights = remove_squeezable_dimensions(
            predictions, labels, weights, "streaming_pearson_correlation")
        if weights is not None:
            weights = broadcast_weights(weights, labels)
        cov, cov_update = streaming_covariance(predictions, labels, weights,
                                               name="covariance")
        var_p, var_p_update = streaming_covariance(predictions, predictions, weights,
                                                   name="variance_predictions")
        var_l, var_l_update = streaming_covariance(labels, labels, weights,
                                                   name="variance_labels")
        value = math_ops.truediv(cov, math_ops.multiply(math_ops.sqrt(var_p),
                                                        math_ops.sqrt(var_l)),
                                 name="pearson_r")
        update = math_ops.truediv(cov_update, math_ops.multiply(math_ops.sqrt(var_p_update),
                                                                math_ops.sqrt(var_l_update)),
                                  name="update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def cohen_kappa(labels, predictions_idx, num_classes, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """The running Cohen's kappa of class ids: ``(p_o - p_e) / (N - p_e)`` with ``p_o``
    the (weighted) agreements, ``p_e`` the agreements expected from the label and
    prediction frequencies and ``N`` the total, a float64 (0 when ``N == p_e``). Counts
    are int64 (float32 with float weights).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     kappa, update = tf.contrib.metrics.cohen_kappa(
    ...         tf.constant([0, 1, 1, 2]), tf.constant([0, 1, 2, 2]), num_classes=3)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 4))
    0.6364
    """
    if not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(f"cohen_kappa: num_classes must be a Python int >= 1, got "
                         f"{num_classes!r}")
    with variable_scope(name, "cohen_kappa", [labels, predictions_idx, weights]):
        labels = convert_to_tensor(labels, name="labels")
        if labels.shape.ndims is not None and labels.shape.ndims > 2:
            raise ValueError(f"cohen_kappa: labels must have rank 1 or 2, got {labels.shape}")
        if labels.shape.ndims == 2:
            labels = array_ops.squeeze(labels, axis=[-1])
        predictions_idx, labels, weights = remove_squeezable_dimensions(
            predictions_idx, labels, weights, "cohen_kappa")
        integer = weights is None or weights.dtype.base_dtype.is_integer
        stat = dtypes.int64 if integer else _F32
        agree = metric_variable([num_classes], stat, name="po")
        by_prediction = metric_variable([num_classes], stat, name="pe_row")
        by_label = metric_variable([num_classes], stat, name="pe_col")
        table = confusion_matrix(labels, predictions_idx, num_classes=num_classes,
                                 weights=weights, dtype=stat, name="counts_in_table")
        agree_up = state_ops.assign_add(agree, matrix_diag_part(table))
        row_up = state_ops.assign_add(by_prediction, math_reduce.reduce_sum(table, axis=0))
        col_up = state_ops.assign_add(by_label, math_reduce.reduce_sum(table, axis=1))

        def kappa(po, pe_row, pe_col, name):
            total = math_ops.cast(math_reduce.reduce_sum(pe_row), _F64)
            expected = math_reduce.reduce_sum(math_ops.div_no_nan(
                math_ops.cast(pe_row * pe_col, _F64), total))
            observed = math_ops.cast(math_reduce.reduce_sum(po), _F64)
            return _ratio_or_zero(observed - expected, total - expected, name)

        value = kappa(agree.value(), by_prediction.value(), by_label.value(), "value")
        update = kappa(agree_up, row_up, col_up, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def streaming_concat(values, axis=0, max_size=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Every batch of `values` seen so far, concatenated along `axis` (at most
    `max_size` entries: later ones are dropped). The other dimensions must be known.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.int32, [None])
    ...     seen, update = tf.contrib.metrics.streaming_concat(x)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update, {x: [1, 2]})
    ...         print(sess.run(update, {x: [3]}).tolist())
    [1, 2, 3]
    """
    with variable_scope(name, "streaming_concat", [values]):
        values = convert_to_tensor(values, name="values")
        shape = values.shape
        if shape.ndims is None:
            raise ValueError("streaming_concat: values must have a known rank, got "
                             f"{values.name} of unknown shape")
        axis = axis + shape.ndims if axis < 0 else axis
        if not 0 <= axis < shape.ndims:
            raise ValueError(f"streaming_concat: axis {axis} is out of range for values of "
                             f"rank {shape.ndims}")
        dims = shape.as_list()
        if any(d is None for i, d in enumerate(dims) if i != axis):
            raise ValueError(f"streaming_concat: every dimension of values but axis {axis} "
                             f"must be known, got {shape}")
        if max_size is not None and (not isinstance(max_size, (int, np.integer))
                                     or max_size < 0):
            raise ValueError(f"streaming_concat: max_size must be None or an int >= 0, got "
                             f"{max_size!r}")
        empty = [0 if i == axis else d for i, d in enumerate(dims)]
        seen = metric_variable(empty, values.dtype.base_dtype, validate_shape=False,
                               name="array")
        joined = array_ops.concat([seen.value(), values], axis)
        if max_size is not None:
            begin = [0] * len(dims)
            size = [-1] * len(dims)
            size[axis] = math_ops.minimum(array_ops.shape(joined)[axis], max_size)
            joined = array_ops.slice(joined, begin, array_ops.stack(size))
        update = state_ops.assign(seen, joined, validate_shape=False)
        partial = [None if i == axis else d for i, d in enumerate(dims)]
        value = array_ops.identity(seen.value())
        value.set_shape(partial)
        update.set_shape(partial)
        return _finish(value, update, metrics_collections, updates_collections)


# -- metrics read off a curve of thresholds ----------------------------------------------

def _curve_counts(labels, predictions, weights, num_thresholds, fn,
                  includes=("tp", "fn", "tn", "fp")):
    """The counts at `num_thresholds` thresholds evenly spaced in [0, 1] (and just
    outside it), as `tf.metrics.auc` makes them."""
    if not isinstance(num_thresholds, (int, np.integer)) or num_thresholds < 2:
        raise ValueError(f"{fn}: num_thresholds must be an int >= 2, got {num_thresholds!r}")
    thresholds = _auc_thresholds(int(num_thresholds), None)
    return confusion_matrix_at_thresholds(labels, predictions, thresholds, weights,
                                          includes=includes, fn=fn)


def f1_score(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
             updates_collections=None, name=None):
    """The best F1 score over `num_thresholds` thresholds evenly spaced in [0, 1] (and
    just outside it), computed from streaming counts of probabilities `predictions`.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     f1, update = tf.contrib.metrics.f1_score(
    ...         tf.constant([1, 0, 1, 0]), tf.constant([0.9, 0.2, 0.6, 0.7]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 4))
    0.8
    """
    with variable_scope(name, "f1", [labels, predictions, weights]):
        eps = _AT_THRESHOLDS_EPSILON
        values, updates = _curve_counts(labels, predictions, weights, num_thresholds,
                                        "f1_score", includes=("tp", "fp", "fn"))

        def best_f1(c, name):
            precision = math_ops.divide(c["tp"], eps + c["tp"] + c["fp"])
            recall = math_ops.divide(c["tp"], eps + c["tp"] + c["fn"])
            f1 = 2.0 * precision * recall / (precision + recall + eps)
            return math_reduce.reduce_max(f1, name=name)

        return _finish(best_f1(values, "value"), best_f1(updates, "update"),
                       metrics_collections, updates_collections)


def recall_at_precision(labels, predictions, precision, weights=None, num_thresholds=200,
                        metrics_collections=None, updates_collections=None, name=None,
                        strict_mode=False):
    """The recall at the threshold whose precision is closest to `precision` (with
    `strict_mode`: the closest at or above it, and 0 when no threshold reaches it).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     r, update = tf.contrib.metrics.recall_at_precision(
    ...         tf.constant([1, 0, 1, 1]), tf.constant([0.9, 0.8, 0.6, 0.2]), precision=1.0)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 4))
    0.3333
    """
    if not 0.0 <= precision <= 1.0:
        raise ValueError(f"recall_at_precision: precision must be in [0, 1], got {precision}")
    with variable_scope(name, "recall_at_precision", [predictions, labels, weights]):
        values, updates = _curve_counts(labels, predictions, weights, num_thresholds,
                                        "recall_at_precision")
        eps = _AT_THRESHOLDS_EPSILON

        def recall(c, name):
            precisions = math_ops.divide(c["tp"], c["tp"] + c["fp"] + eps)
            if strict_mode:
                gap = precisions - precision
                big = array_ops.ones_like(gap) * np.float32(np.finfo(np.float32).max)
                at = math_reduce.argmin(array_ops.where(gap >= 0, gap, big), 0,
                                        output_type=dtypes.int32)
                found = math_ops.divide(c["tp"][at], c["tp"][at] + c["fn"][at] + eps)
                return array_ops.where(precisions[at] >= precision, found,
                                       array_ops.zeros_like(found), name=name)
            at = math_reduce.argmin(math_ops.abs(precisions - precision), 0,
                                    output_type=dtypes.int32)
            return math_ops.divide(c["tp"][at], c["tp"][at] + c["fn"][at] + eps, name=name)

        return _finish(recall(values, "value"), recall(updates, "update_op"),
                       metrics_collections, updates_collections)


def precision_at_recall(labels, predictions, target_recall, weights=None, num_thresholds=200,
                        metrics_collections=None, updates_collections=None, name=None):
    """The precision at the threshold whose recall is closest to `target_recall` among
    those whose recall reaches it (the lowest threshold when none does).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     p, update = tf.contrib.metrics.precision_at_recall(
    ...         tf.constant([1, 0, 1, 1]), tf.constant([0.9, 0.8, 0.6, 0.2]), 1.0)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 4))
    0.75
    """
    if not 0.0 <= target_recall <= 1.0:
        raise ValueError(f"precision_at_recall: target_recall must be in [0, 1], got "
                         f"{target_recall}")
    with variable_scope(name, "precision_at_recall", [predictions, labels, weights]):
        values, updates = _curve_counts(labels, predictions, weights, num_thresholds,
                                        "precision_at_recall")
        eps = _AT_THRESHOLDS_EPSILON

        def precision(c, name):
            recalls = math_ops.divide(c["tp"], c["tp"] + c["fn"] + eps)
            gap = recalls - target_recall
            big = array_ops.ones_like(gap) * np.float32(np.finfo(np.float32).max)
            at = math_reduce.argmin(array_ops.where(gap >= 0, gap, big), 0,
                                    output_type=dtypes.int32)
            return math_ops.divide(c["tp"][at], c["tp"][at] + c["fp"][at] + eps, name=name)

        return _finish(precision(values, "value"), precision(updates, "update_op"),
                       metrics_collections, updates_collections)


def streaming_curve_points(labels=None, predictions=None, weights=None, num_thresholds=200,
                           metrics_collections=None, updates_collections=None, curve="ROC",
                           name=None):
    """The ``[num_thresholds, 2]`` points of the ROC curve (false-positive rate, recall)
    or the PR curve (recall, precision) at thresholds evenly spaced in [0, 1], with
    `tf.metrics.auc`'s smoothing (``1e-6`` in each ratio).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     points, update = tf.contrib.metrics.streaming_curve_points(
    ...         tf.constant([1, 0]), tf.constant([0.8, 0.3]), num_thresholds=3)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update).round(3).tolist())
    [[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"streaming_curve_points: curve must be 'ROC' or 'PR', got {curve!r}")
    with variable_scope(name, "curve_points", [labels, predictions, weights]):
        values, updates = _curve_counts(labels, predictions, weights, num_thresholds,
                                        "streaming_curve_points")
        eps = _AUC_EPSILON

        def points(c):
            recall = math_ops.divide(c["tp"] + eps, c["tp"] + c["fn"] + eps)
            if curve == "ROC":
                x, y = math_ops.divide(c["fp"], c["fp"] + c["tn"] + eps), recall
            else:
                x, y = recall, math_ops.divide(c["tp"] + eps, c["tp"] + c["fp"] + eps)
            return array_ops.stack([x, y], axis=1)

        return _finish(points(values), points(updates), metrics_collections,
                       updates_collections)


def _dynamic_auc(labels, predictions, weights, curve):
    """The exact area under the ROC or PR curve of all the examples: examples sorted by
    prediction, one curve point per distinct prediction, trapezoids between points (0
    when every label is the same)."""
    with name_scope("compute_dynamic_auc"):
        positive_weight = math_reduce.reduce_sum(weights * labels)
        all_weight = math_reduce.reduce_sum(weights)

        def area():
            size = array_ops.size(predictions)
            ordered, order = top_k(predictions, k=size)
            ordered_labels = array_ops.gather(labels, order)
            ordered_weights = array_ops.gather(weights, order)
            _, _, counts = unique_with_counts(ordered)
            splits = array_ops.pad(math_reduce.cumsum(counts), [[1, 0]])

            def before(x):
                return array_ops.gather(array_ops.pad(math_reduce.cumsum(x), [[1, 0]]), splits)

            tp = before(ordered_labels * ordered_weights)
            if curve == "ROC":
                fp = before((1.0 - ordered_labels) * ordered_weights)
                x = fp / (all_weight - positive_weight)
                y = tp / positive_weight
            else:
                x = tp / positive_weight
                called = before(ordered_weights)
                y = array_ops.where(math_ops.greater(splits, 0),
                                    math_ops.div_no_nan(tp, called), array_ops.ones_like(tp))
            heights = (y[1:] + y[:-1]) / 2.0
            widths = math_ops.abs(x[1:] - x[:-1])
            return math_reduce.reduce_sum(heights * widths)

        degenerate = math_ops.logical_or(math_ops.equal(positive_weight, 0.0),
                                         math_ops.equal(positive_weight, all_weight))
        return cond(degenerate, lambda: constant(0.0, _F64), area)


def streaming_dynamic_auc(labels, predictions, curve="ROC", metrics_collections=None,
                          updates_collections=None, name=None, weights=None):
    """The exact area under the ROC (or PR) curve of every example seen so far (kept with
    `streaming_concat`), a float64; labels must be 0 or 1 (checked when run). Unlike
    `tf.metrics.auc` it needs no thresholds, and its memory grows with the examples.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     auc, update = tf.contrib.metrics.streaming_dynamic_auc(
    ...         tf.constant([0, 0, 1, 1]), tf.constant([0.1, 0.4, 0.35, 0.8]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(float(sess.run(update)))
    0.75
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"streaming_dynamic_auc: curve must be 'ROC' or 'PR', got {curve!r}")
    with variable_scope(name, "dynamic_auc", [labels, predictions, weights]):
        predictions = math_ops.cast(
            array_ops.reshape(convert_to_tensor(predictions, name="predictions"), [-1]), _F64)
        labels = array_ops.reshape(convert_to_tensor(labels, name="labels"), [-1])
        checks = [Assert(
            math_reduce.reduce_all(math_ops.logical_or(
                math_ops.equal(labels, array_ops.zeros_like(labels)),
                math_ops.equal(labels, array_ops.ones_like(labels)))),
            ["streaming_dynamic_auc: labels must be 0 or 1, got", labels])]
        with control_dependencies(checks):
            labels = math_ops.cast(labels, _F64)
        if weights is None:
            weights = array_ops.ones_like(labels)
        else:
            weights = math_ops.cast(array_ops.reshape(
                broadcast_weights(weights, array_ops.reshape(predictions, [-1])), [-1]), _F64)
        all_labels, labels_update = streaming_concat(labels, name="concat_labels")
        all_predictions, predictions_update = streaming_concat(predictions,
                                                               name="concat_preds")
        all_weights, weights_update = streaming_concat(weights, name="concat_weights")
        value = _dynamic_auc(all_labels, all_predictions, all_weights, curve)
        update = _dynamic_auc(labels_update, predictions_update, weights_update, curve)
        return _finish(value, update, metrics_collections, updates_collections)


class PrecisionRecallData(collections.namedtuple(
        "PrecisionRecallData", ["tp", "fp", "tn", "fn", "precision", "recall",
                                "thresholds"])):
    """`precision_recall_at_equal_thresholds`' counts, precision and recall, one entry
    per threshold."""


def precision_recall_at_equal_thresholds(labels, predictions, weights=None,
                                         num_thresholds=None, use_locking=None, name=None):
    """Counts, precision and recall at `num_thresholds` (default 201) thresholds evenly
    spaced in [0, 1], in O(thresholds + examples): each prediction is put in one of
    ``num_thresholds - 1`` bins and counts as positive at every threshold up to its
    bin's. Returns ``(PrecisionRecallData, update_op)``; `use_locking` is accepted for
    TF 1.x's signature (updates here are atomic per step).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     data, update = tf.contrib.metrics.precision_recall_at_equal_thresholds(
    ...         tf.constant([True, False, True]), tf.constant([0.9, 0.4, 0.6]),
    ...         num_thresholds=3)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update)
    ...         tp, precision = sess.run([data.tp, data.precision])
    ...         print(tp.tolist(), [round(float(p), 4) for p in precision])
    [2.0, 2.0, 0.0] [0.6667, 1.0, 0.0]
    """
    del use_locking
    num_thresholds = 201 if num_thresholds is None else num_thresholds
    if not isinstance(num_thresholds, (int, np.integer)) or num_thresholds < 2:
        raise ValueError("precision_recall_at_equal_thresholds: num_thresholds must be an "
                         f"int >= 2, got {num_thresholds!r}")
    with variable_scope(name, "precision_recall_at_equal_thresholds",
                        [labels, predictions, weights]):
        predictions = convert_to_tensor(predictions, name="predictions")
        dtype = predictions.dtype.base_dtype
        if not dtype.is_floating:
            raise TypeError("precision_recall_at_equal_thresholds: predictions must be "
                            f"floating point, got {dtype.name}")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype != dtypes.bool:
            raise TypeError("precision_recall_at_equal_thresholds: labels must be bool, got "
                            f"{labels.dtype.base_dtype.name}")
        ones = array_ops.ones_like(predictions)
        w = ones if weights is None else math_ops.cast(weights, dtype) * ones
        positive = math_ops.cast(labels, dtype) * w
        negative = (1.0 - math_ops.cast(labels, dtype)) * w
        bins = math_ops.cast(math_ops.floor(predictions * (num_thresholds - 1)),
                             dtypes.int32)
        bins = math_ops.minimum(math_ops.maximum(bins, 0), num_thresholds - 1)
        flat_bins = array_ops.reshape(bins, [-1])
        tp_bins = metric_variable([num_thresholds], dtype, name="tp_buckets")
        fp_bins = metric_variable([num_thresholds], dtype, name="fp_buckets")
        update = group(
            state_ops.assign_add(tp_bins, unsorted_segment_sum(
                array_ops.reshape(positive, [-1]), flat_bins, num_thresholds)),
            state_ops.assign_add(fp_bins, unsorted_segment_sum(
                array_ops.reshape(negative, [-1]), flat_bins, num_thresholds)))

        def at_or_above(x):
            return math_reduce.cumsum(x, reverse=True)

        tp = at_or_above(tp_bins.value())
        fp = at_or_above(fp_bins.value())
        fn = tp[0] - tp
        tn = fp[0] - fp
        eps = constant(1e-7, dtype)
        data = PrecisionRecallData(
            tp=tp, fp=fp, tn=tn, fn=fn,
            precision=math_ops.divide(tp, math_ops.maximum(eps, tp + fp)),
            recall=math_ops.divide(tp, math_ops.maximum(eps, tp + fn)),
            thresholds=constant(np.linspace(0.0, 1.0, num_thresholds),
                                dtype, name="thresholds"))
        return data, update


def auc_using_histogram(boolean_labels, scores, score_range, nbins=100, collections=None,
                        check_shape=True, name=None):
    """The ROC AUC approximated from two running histograms of `scores` (one per label)
    over `score_range` with `nbins` bins: ``(auc, update_op)``, float64. The histograms
    are variables in `collections` (default: local variables).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     auc, update = tf.contrib.metrics.auc_using_histogram(
    ...         tf.constant([True, False, True, False]), tf.constant([0.9, 0.1, 0.7, 0.3]),
    ...         score_range=[0.0, 1.0])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update)
    ...         print(float(sess.run(auc)))
    1.0
    """
    collections = [GraphKeys.LOCAL_VARIABLES] if collections is None else collections
    with variable_scope(name, "auc_using_histogram", [boolean_labels, scores]):
        labels = convert_to_tensor(boolean_labels, name="boolean_labels")
        scores = convert_to_tensor(scores, name="scores")
        if labels.dtype.base_dtype != dtypes.bool:
            raise TypeError("auc_using_histogram: boolean_labels must be bool, got "
                            f"{labels.dtype.base_dtype.name}")
        if check_shape and not labels.shape.is_compatible_with(scores.shape):
            raise ValueError(f"auc_using_histogram: boolean_labels {labels.shape} and "
                             f"scores {scores.shape} must have the same shape")
        score_range = convert_to_tensor(score_range, dtype=scores.dtype.base_dtype,
                                        name="score_range")
        hist_true = histogram_fixed_width(boolean_mask(scores, labels), score_range,
                                          nbins=nbins, dtype=dtypes.int64, name="hist_true")
        hist_false = histogram_fixed_width(boolean_mask(scores, math_ops.logical_not(labels)),
                                           score_range, nbins=nbins, dtype=dtypes.int64,
                                           name="hist_false")
        true_acc = Variable(lambda: array_ops.zeros([nbins], _F64), trainable=False,
                            collections=collections, name="hist_true_acc")
        false_acc = Variable(lambda: array_ops.zeros([nbins], _F64), trainable=False,
                             collections=collections, name="hist_false_acc")
        true_up = state_ops.assign_add(true_acc, math_ops.cast(hist_true, _F64))
        false_up = state_ops.assign_add(false_acc, math_ops.cast(hist_false, _F64))

        def area(h_true, h_false, name):
            # bins from the highest score down: each step of the false-positive rate
            # adds a trapezoid under the true-positive rate reached so far
            rise = array_ops.reverse(h_true / math_reduce.reduce_sum(h_true), [0])
            run = array_ops.reverse(h_false / math_reduce.reduce_sum(h_false), [0])
            tpr = math_reduce.cumsum(rise)
            first = run[0] * tpr[0] / 2.0
            rest = run[1:] * (tpr[1:] + tpr[:-1]) / 2.0
            return math_ops.add(first, math_reduce.reduce_sum(rest), name=name)

        return (area(true_acc.value(), false_acc.value(), "auc"),
                area(true_up, false_up, "update_op"))


# -- aliases ---------------------------------------------------------------------------------

def streaming_sparse_precision_at_top_k(top_k_predictions, labels, class_id=None, weights=None,
                                        metrics_collections=None, updates_collections=None,
                                        name=None):
    """`tf.metrics.precision_at_top_k` with the top-k class ids before `labels`."""
    return _m.precision_at_top_k(labels, top_k_predictions, None, class_id, weights,
                                 metrics_collections, updates_collections, name)


def sparse_recall_at_top_k(labels, top_k_predictions, class_id=None, weights=None,
                           metrics_collections=None, updates_collections=None, name=None):
    """`tf.metrics.recall_at_top_k` (TF 1.x's contrib name)."""
    return _m.recall_at_top_k(labels, top_k_predictions, None, class_id, weights,
                              metrics_collections, updates_collections, name)


def streaming_sparse_average_precision_at_top_k(top_k_predictions, labels, weights=None,
                                                metrics_collections=None,
                                                updates_collections=None, name=None):
    """The mean average precision of given top-k class ids ``[..., k]`` (see
    `tf.metrics.average_precision_at_k`); every label counts as relevant."""
    from flowgraph.metrics.metrics_at_k import _average_precision_at_top_k, _name

    top = convert_to_tensor(top_k_predictions, name="top_k_predictions")
    k = top.shape[-1].value
    if k is None:
        raise ValueError("streaming_sparse_average_precision_at_top_k: the last dimension "
                         f"of top_k_predictions (k) must be known, got {top.shape}")
    with name_scope(name, _name("average_precision", k, None),
                    [top, labels, weights]) as scope:
        everything = constant(np.iinfo(np.int64).max, dtypes.int64)
        return _average_precision_at_top_k(labels, top, k, everything, weights,
                                           metrics_collections, updates_collections, scope,
                                           "streaming_sparse_average_precision_at_top_k")
