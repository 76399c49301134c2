"""Top-k streaming metrics for multi-label ranking: `precision_at_k`, `recall_at_k`,
`average_precision_at_k`, their ``*_at_top_k`` forms on given top-k indices, and the
``sparse_*`` aliases of TensorFlow 1.x.

`labels` are int64 class ids shaped ``[D1, ..., DN, num_labels]`` (or ``[D1, ..., DN]``,
one label per row), read as a set per row; `predictions` are scores
``[D1, ..., DN, num_classes]`` whose `k` largest give each row's predicted classes. For
precision a label outside ``[0, num_classes)`` never matches; for recall and average
precision it counts as a label that was not found, as in TensorFlow. The accumulators are
float64 local variables; the values are float64.

Example
-------
>>> import flowgraph as tf
>>> value, update = tf.metrics.precision_at_k(
...     tf.constant([[1, 2]], tf.int64), tf.constant([[0.1, 0.8, 0.6, 0.3]]), k=2)
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     print(sess.run(update))
1.0
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.metrics.metrics_impl import add_to_metric_collections, metric_variable
from flowgraph.ops import array_ops, math_ops, math_reduce, state_ops
from flowgraph.ops.nn_loss_ops import top_k

__all__ = [
    "average_precision_at_k", "precision_at_k", "precision_at_top_k", "recall_at_k",
    "recall_at_top_k", "sparse_average_precision_at_k", "sparse_precision_at_k",
]

_F64 = _dtypes.float64


def _name(base: str, k, class_id) -> str:
    return f"{base}_at_{k}" if class_id is None else f"{base}_at_{k}_class{class_id}"


def _labels_and_top(labels, predictions_idx, fn: str):
    """int64 labels ``[..., m]`` and top-k indices ``[..., k]`` of equal leading rank."""
    labels = math_ops.cast(convert_to_tensor(labels, name="labels"), _dtypes.int64)
    top = math_ops.cast(convert_to_tensor(predictions_idx, name="predictions_idx"),
                        _dtypes.int64)
    lr, tr = labels.shape.ndims, top.shape.ndims
    if lr is None or tr is None:
        raise ValueError(f"{fn}: labels and predictions need known ranks, got {labels.shape} "
                         f"and {top.shape}")
    if lr == tr - 1:
        labels = array_ops.expand_dims(labels, -1)
    elif lr != tr:
        raise ValueError(f"{fn}: labels must have the rank of predictions or one less, got "
                         f"labels {labels.shape} and predictions {top.shape}")
    if labels.shape[-1].value is None:
        raise ValueError(f"{fn}: the last dimension of labels (labels per row) must be known "
                         f"when the graph is built, got {labels.shape}")
    return labels, top


def _top_of(predictions, k, fn: str):
    predictions = convert_to_tensor(predictions, name="predictions")
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"{fn}: k must be a Python int >= 1, got {k!r}")
    return top_k(predictions, k).indices


def _matches(labels, top):
    """``hit[..., i]``: top-k entry i is a label; ``found[..., j]``: label j is among the
    top k; ``first[..., j]``: label j is the first occurrence of its value in its row."""
    eq = math_ops.equal(array_ops.expand_dims(top, -1), array_ops.expand_dims(labels, -2))
    hit = math_reduce.reduce_any(eq, -1)
    found = math_reduce.reduce_any(eq, -2)
    m = labels.shape[-1].value
    same = math_ops.equal(array_ops.expand_dims(labels, -1), array_ops.expand_dims(labels, -2))
    earlier = constant(np.tril(np.ones((m, m), bool), -1))  # [j, j']: j' < j
    first = math_ops.logical_not(math_reduce.reduce_any(math_ops.logical_and(same, earlier), -1))
    return hit, found, first


def _row_weights(weights, like):
    """Per-row float64 weights shaped ``[..., 1]`` (ones without `weights`)."""
    ones = array_ops.ones_like(like[..., :1], dtype=_F64)
    if weights is None:
        return ones
    w = math_ops.cast(convert_to_tensor(weights), _F64)
    if w.shape.ndims not in (None, 0):
        w = array_ops.expand_dims(w, -1)
    return w * ones


def _count(mask, w):
    return math_reduce.reduce_sum(math_ops.cast(mask, _F64) * w)


def _streaming_ratio(scope, names, num, other, metrics_collections, updates_collections):
    """``a / (a + b)`` of two accumulators made in the metric's open name `scope`
    (``"precision_at_2/"``)."""
    a = metric_variable([], _F64, name=names[0])
    b = metric_variable([], _F64, name=names[1])
    upd_a = state_ops.assign_add(a, num)
    upd_b = state_ops.assign_add(b, other)
    # as TF: the value is named after the metric's scope, the update inside it
    value = math_ops.divide(a, a + b, name=scope)
    update = math_ops.divide(upd_a, upd_a + upd_b, name="update")
    return add_to_metric_collections(value, update, metrics_collections,
                                     updates_collections)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """Precision of the given top-k class indices `predictions_idx` ``[..., k]``: the
    (weighted) fraction of predicted classes that are labels. With `class_id`, only
    predictions of that class count.

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.precision_at_top_k(
    ...     tf.constant([[1, 2]], tf.int64), tf.constant([[1, 3]], tf.int64))
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.5
    """
    # names as TF's: "k" when k is not given, a "_class<id>" suffix on the variables too
    default = _name("precision", "k" if k is None else k, class_id)
    var_suffix = _name("", "k" if k is None else k, class_id)
    with name_scope(name, default, [predictions_idx, labels, weights]) as scope:
        labels, top = _labels_and_top(labels, predictions_idx, "precision_at_top_k")
        hit, _, _ = _matches(labels, top)
        w = _row_weights(weights, top)
        miss = math_ops.logical_not(hit)
        if class_id is not None:
            is_class = math_ops.equal(top, constant(class_id, _dtypes.int64))
            hit = math_ops.logical_and(hit, is_class)
            miss = math_ops.logical_and(miss, is_class)
        return _streaming_ratio(scope,
                                (f"true_positive{var_suffix}", f"false_positive{var_suffix}"),
                                _count(hit, w), _count(miss, w), metrics_collections,
                                updates_collections)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """Recall of the given top-k class indices: the (weighted) fraction of each row's
    distinct labels found among its predictions. With `class_id`, only that label counts.

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.recall_at_top_k(
    ...     tf.constant([[1, 2]], tf.int64), tf.constant([[1, 3]], tf.int64))
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.5
    """
    # names as TF's: "k" when k is not given, a "_class<id>" suffix on the variables too
    default = _name("recall", "k" if k is None else k, class_id)
    var_suffix = _name("", "k" if k is None else k, class_id)
    with name_scope(name, default, [predictions_idx, labels, weights]) as scope:
        labels, top = _labels_and_top(labels, predictions_idx, "recall_at_top_k")
        hit, found, first = _matches(labels, top)
        w = _row_weights(weights, top)
        lost = math_ops.logical_and(math_ops.logical_not(found), first)
        if class_id is not None:
            cid = constant(class_id, _dtypes.int64)
            hit = math_ops.logical_and(hit, math_ops.equal(top, cid))
            lost = math_ops.logical_and(lost, math_ops.equal(labels, cid))
        return _streaming_ratio(scope,
                                (f"true_positive{var_suffix}", f"false_negative{var_suffix}"),
                                _count(hit, w), _count(lost, w), metrics_collections,
                                updates_collections)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """`precision_at_top_k` of the `k` highest-scoring classes of `predictions`.

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.precision_at_k(
    ...     tf.constant([2], tf.int64), tf.constant([[0.1, 0.2, 0.7]]), k=1)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    1.0
    """
    with name_scope(name, _name("precision", k, class_id),
                    [predictions, labels, weights]) as scope:
        top = _top_of(predictions, k, "precision_at_k")
        return precision_at_top_k(labels, top, k, class_id, weights, metrics_collections,
                                  updates_collections, scope)


def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None):
    """`recall_at_top_k` of the `k` highest-scoring classes of `predictions`.

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.recall_at_k(
    ...     tf.constant([[0, 2]], tf.int64), tf.constant([[0.1, 0.2, 0.7]]), k=1)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.5
    """
    with name_scope(name, _name("recall", k, class_id),
                    [predictions, labels, weights]) as scope:
        top = _top_of(predictions, k, "recall_at_k")
        return recall_at_top_k(labels, top, k, class_id, weights, metrics_collections,
                               updates_collections, scope)


def _average_precision_at_top_k(labels, predictions_idx, k, num_classes, weights,
                                metrics_collections, updates_collections, scope, fn):
    """The streaming mean of each row's average precision, built in the metric's open
    name `scope` (``"average_precision_at_3/"``)."""
    with name_scope(None, "average_precision", [predictions_idx, labels]):
        labels, top = _labels_and_top(labels, predictions_idx, fn)
        k = top.shape[-1].value if k is None else k
        if k is None:
            raise ValueError(f"{fn}: the number of top-k indices must be known, got "
                             f"{top.shape}")
        hit, _, _ = _matches(labels, top)
        rel = math_ops.cast(hit, _F64)
        ranks = constant(np.arange(1, k + 1, dtype=np.float64))
        precision_at_i = math_reduce.cumsum(rel, axis=-1) / ranks
        precision_sum = math_reduce.reduce_sum(rel * precision_at_i, -1)
        # TensorFlow divides by min(k, number of labels in [0, num_classes)), repeats
        # included.
        valid = math_ops.logical_and(
            math_ops.greater_equal(labels, constant(0, _dtypes.int64)),
            math_ops.less(labels, num_classes))
        counted = math_reduce.reduce_sum(math_ops.cast(valid, _F64), -1)
        relevant = math_ops.minimum(counted, constant(float(k), _F64))
        per_row = math_ops.divide(precision_sum, relevant)
    w = _row_weights(weights, top)[..., 0]
    # TF's count variable is "max_1" (its "max" name scope was opened before it) and is
    # made before "total": the order of `tf.local_variables()`
    count = metric_variable([], _F64, name="max_1")
    total = metric_variable([], _F64, name="total")
    upd_total = state_ops.assign_add(total, math_reduce.reduce_sum(per_row * w))
    upd_count = state_ops.assign_add(count, math_reduce.reduce_sum(w))
    # as TF: ``<scope>/mean`` is the value and the update is named after the scope
    value = math_ops.divide(total, count, name="mean")
    update = math_ops.divide(upd_total, upd_count, name=scope)
    return add_to_metric_collections(value, update, metrics_collections,
                                     updates_collections)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The mean over rows of the average precision of the top `k` predictions: the sum of
    the precision at each rank that holds a label, divided by ``min(k, n)`` where ``n``
    counts the row's labels in ``[0, num_classes)`` (repeats included, as in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> value, update = tf.metrics.average_precision_at_k(
    ...     tf.constant([[0, 2]], tf.int64), tf.constant([[0.1, 0.2, 0.7]]), k=2)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(update))
    0.5
    """
    with name_scope(name, _name("average_precision", k, None),
                    [predictions, labels, weights]) as scope:
        top = _top_of(predictions, k, "average_precision_at_k")
        num_classes = math_ops.cast(array_ops.shape(convert_to_tensor(predictions))[-1],
                                    _dtypes.int64)
        return _average_precision_at_top_k(labels, top, k, num_classes, weights,
                                           metrics_collections, updates_collections, scope,
                                           "average_precision_at_k")


# TensorFlow 1.x's older names for the same metrics.
sparse_precision_at_k = precision_at_k
sparse_average_precision_at_k = average_precision_at_k
