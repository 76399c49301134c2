"""Segment reductions and data partitioning: ``Segment{Sum,Mean,Max,Min,Prod}`` (sorted
ids), ``UnsortedSegment{Sum,Max,Min,Prod}`` (any ids, a given segment count; negative ids
are dropped), `unsorted_segment_mean`/`unsorted_segment_sqrt_n` built on them,
``DynamicPartition`` and ``DynamicStitch``, with their gradients.

Example
-------
>>> import flowgraph as tf
>>> out = tf.unsorted_segment_sum([1.0, 2.0, 4.0], [1, 0, 1], num_segments=3)
>>> with tf.Session() as sess:
...     print(sess.run(out))
[2. 5. 0.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = [
    "dynamic_partition", "dynamic_stitch", "segment_max", "segment_mean", "segment_min",
    "segment_prod", "segment_sum", "unsorted_segment_max", "unsorted_segment_mean",
    "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n",
    "unsorted_segment_sum",
]

_INTS = (_dtypes.int32, _dtypes.int64)
_REAL = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16,
         _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.uint16)
_NUM = (*_REAL, _dtypes.complex64, _dtypes.complex128)
SORTED = ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd")
UNSORTED = ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
            "UnsortedSegmentProd")


def _check(t, allowed, op_type: str, param: str) -> None:
    if t.dtype.base_dtype not in allowed:
        raise TypeError(
            f"Value passed to parameter '{param}' of op '{op_type}' has DataType "
            f"{t.dtype.base_dtype.name} not in list of allowed values: "
            f"{', '.join(d.name for d in allowed)}. Cast it first, e.g. "
            f"tf.cast({t.name}, tf.{allowed[0].name}).")


# -- shape functions -------------------------------------------------------------------
def _sorted_shape(op, data, ids):
    if ids.ndims not in (None, 1):
        raise op.shape_error(f"segment_ids must be a vector, got shape {ids}")
    if data.ndims == 0:
        raise op.shape_error("data must have rank >= 1, got a scalar")
    if data.ndims is None:
        return [TensorShape(None)]
    if ids.ndims == 1 and not data[0].is_compatible_with(ids[0]):
        raise op.shape_error(f"segment_ids {ids} must have data's first dimension {data[0]}")
    return [TensorShape([None, *data.dims[1:]])]


def _unsorted_shape(op, data, ids, num_segments):
    if num_segments.ndims not in (None, 0):
        raise op.shape_error(f"num_segments must be a scalar, got shape {num_segments}")
    v = constant_value(op.inputs[2])
    n = None if v is None else int(v)
    if data.ndims is None or ids.ndims is None:
        return [TensorShape(None)]
    if ids.ndims > data.ndims or not TensorShape(data.dims[:ids.ndims]).is_compatible_with(ids):
        raise op.shape_error(f"segment_ids shape {ids} must be a prefix of data shape {data}")
    return [TensorShape([n, *data.dims[ids.ndims:]])]


for _name in SORTED:
    register_op(_name, cost=OpCost.EXPENSIVE)(_sorted_shape)
for _name in UNSORTED:
    register_op(_name, cost=OpCost.EXPENSIVE)(_unsorted_shape)


# -- wrappers --------------------------------------------------------------------------
def _sorted(op_type, allowed, data, segment_ids, name):
    with name_scope(name, op_type, [data, segment_ids]) as scope:
        d = convert_to_tensor(data, name="data")
        s = convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32, name="segment_ids")
        _check(d, allowed, op_type, "data")
        _check(s, _INTS, op_type, "segment_ids")
        return make_tensor(op_type, [d, s], name=scope)


def _unsorted(op_type, allowed, data, segment_ids, num_segments, name):
    with name_scope(name, op_type, [data, segment_ids, num_segments]) as scope:
        d = convert_to_tensor(data, name="data")
        s = convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32, name="segment_ids")
        n = convert_to_tensor(num_segments, preferred_dtype=_dtypes.int32, name="num_segments")
        _check(d, allowed, op_type, "data")
        _check(s, _INTS, op_type, "segment_ids")
        _check(n, _INTS, op_type, "num_segments")
        return make_tensor(op_type, [d, s, n], name=scope)


def segment_sum(data, segment_ids, name=None):
    """``out[i] = sum of data[j] over j with segment_ids[j] == i``. `segment_ids` is a
    sorted int vector as long as data's first dimension; ids no row names give 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.segment_sum([[1, 2], [3, 4], [5, 6]], [0, 0, 2])))
    [[4 6]
     [0 0]
     [5 6]]
    """
    return _sorted("SegmentSum", _NUM, data, segment_ids, name)


def segment_mean(data, segment_ids, name=None):
    """Like `segment_sum`, the mean of each segment (0 for an empty one).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.segment_mean([1.0, 3.0, 5.0], [0, 0, 1])))
    [2. 5.]
    """
    return _sorted("SegmentMean", _NUM, data, segment_ids, name)


def segment_max(data, segment_ids, name=None):
    """Like `segment_sum`, the maximum of each segment (0 for an empty one).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.segment_max([1.0, 3.0, 5.0], [0, 0, 1])))
    [3. 5.]
    """
    return _sorted("SegmentMax", _REAL, data, segment_ids, name)


def segment_min(data, segment_ids, name=None):
    """Like `segment_sum`, the minimum of each segment (0 for an empty one).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.segment_min([1.0, 3.0, 5.0], [0, 0, 1])))
    [1. 5.]
    """
    return _sorted("SegmentMin", _REAL, data, segment_ids, name)


def segment_prod(data, segment_ids, name=None):
    """Like `segment_sum`, the product of each segment (1 for an empty one).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.segment_prod([2.0, 3.0, 5.0], [0, 0, 1])))
    [6. 5.]
    """
    return _sorted("SegmentProd", _NUM, data, segment_ids, name)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """``out[i] = sum of data[j...] over j with segment_ids[j] == i`` for ``i`` in
    ``[0, num_segments)``. `segment_ids` may be unsorted and of any shape that prefixes
    data's; rows with a negative id are dropped. Output shape:
    ``[num_segments] + data.shape[segment_ids.ndim:]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.unsorted_segment_sum([1, 2, 4], [1, -1, 1], 2)))
    [0 5]
    """
    return _unsorted("UnsortedSegmentSum", _NUM, data, segment_ids, num_segments, name)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Like `unsorted_segment_sum`, the maximum (the dtype's lowest value if empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.unsorted_segment_max([1.0, 2.0, 4.0], [1, 0, 1], 2)))
    [2. 4.]
    """
    return _unsorted("UnsortedSegmentMax", _REAL, data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Like `unsorted_segment_sum`, the minimum (the dtype's largest value if empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.unsorted_segment_min([1.0, 2.0, 4.0], [1, 0, 1], 2)))
    [2. 1.]
    """
    return _unsorted("UnsortedSegmentMin", _REAL, data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Like `unsorted_segment_sum`, the product (1 if empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.unsorted_segment_prod([3.0, 2.0, 4.0], [1, 0, 1], 3)))
    [ 2. 12.  1.]
    """
    return _unsorted("UnsortedSegmentProd", _NUM, data, segment_ids, num_segments, name)


def _segment_counts(data, ids, num_segments):
    """Per segment, how many rows it holds (at least 1), shaped to broadcast over the
    segment sums ``[num_segments, 1, ...]`` (built op for op as TensorFlow does)."""
    num_segments = convert_to_tensor(num_segments)
    ones = _a.ones(_a.shape(ids), dtype=data.dtype.base_dtype)
    counts = unsorted_segment_sum(ones, ids, num_segments)
    lead = num_segments[None]
    tail = _a.ones([_a.rank(data) - _a.rank(ids)], dtype=num_segments.dtype.base_dtype)
    counts = _a.reshape(counts, _a.concat([lead, tail], axis=0))
    return _m.maximum(counts, 1)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Like `unsorted_segment_sum`, the mean of each segment (0 if empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.unsorted_segment_mean([1.0, 2.0, 4.0], [1, 0, 1], 3)))
    [2.  2.5 0. ]
    """
    with name_scope(name, "UnsortedSegmentMean", [data, segment_ids, num_segments]):
        d = convert_to_tensor(data)
        s = convert_to_tensor(segment_ids)
        counts = _segment_counts(d, s, num_segments)
        return unsorted_segment_sum(d, s, num_segments) / counts


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Like `unsorted_segment_sum`, each segment's sum divided by the square root of its
    size (0 if empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.unsorted_segment_sqrt_n([3.0, 1.0], [0, 0], 1)))
    [2.828427]
    """
    with name_scope(name, "UnsortedSegmentSqrtN", [data, segment_ids, num_segments]):
        d = convert_to_tensor(data)
        s = convert_to_tensor(segment_ids)
        counts = _segment_counts(d, s, num_segments)
        return unsorted_segment_sum(d, s, num_segments) / _m.sqrt(counts)


# -- DynamicPartition / DynamicStitch --------------------------------------------------
def _partition_dtypes(op):
    return [op.inputs[0].dtype.base_dtype] * op.attrs["num_partitions"]


@register_op("DynamicPartition", attrs={"num_partitions": 1}, dtype_fn=_partition_dtypes,
             num_outputs=lambda op: op.attrs["num_partitions"], cost=OpCost.EXPENSIVE)
def _partition_shape(op, data, partitions):
    k = op.attrs["num_partitions"]
    if data.ndims is None or partitions.ndims is None:
        return [TensorShape(None)] * k
    if (partitions.ndims > data.ndims
            or not TensorShape(data.dims[:partitions.ndims]).is_compatible_with(partitions)):
        raise op.shape_error(f"partitions shape {partitions} must be a prefix of data "
                             f"shape {data}")
    return [TensorShape([None, *data.dims[partitions.ndims:]])] * k


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Split `data` into `num_partitions` tensors: output ``i`` holds, in order, the
    slices ``data[j...]`` whose ``partitions[j...] == i``. `partitions` is an int32
    tensor whose shape prefixes data's, with values in ``[0, num_partitions)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = tf.dynamic_partition([10, 20, 30, 40], [1, 0, 1, 1], 2)
    >>> with tf.Session() as sess:
    ...     print(sess.run([a, b]))
    [array([20], dtype=int32), array([10, 30, 40], dtype=int32)]
    """
    if not isinstance(num_partitions, int) or num_partitions < 1:
        raise ValueError(f"dynamic_partition: num_partitions must be a Python int >= 1, "
                         f"got {num_partitions!r}")
    with name_scope(name, "DynamicPartition", [data, partitions]) as scope:
        d = convert_to_tensor(data, name="data")
        p = convert_to_tensor(partitions, preferred_dtype=_dtypes.int32, name="partitions")
        _check(p, (_dtypes.int32,), "DynamicPartition", "partitions")
        return make_op("DynamicPartition", [d, p], {"num_partitions": num_partitions},
                       name=scope).outputs


def _stitch_shape(op, *shapes):
    n = op.attrs["N"]
    indices, data = shapes[:n], shapes[n:]
    inner = None
    for ind, dat in zip(indices, data):
        if ind.ndims is None or dat.ndims is None:
            continue
        if (ind.ndims > dat.ndims
                or not TensorShape(dat.dims[:ind.ndims]).is_compatible_with(ind)):
            raise op.shape_error(f"data shape {dat} must start with indices shape {ind}")
        rest = TensorShape(dat.dims[ind.ndims:])
        if inner is not None and not inner.is_compatible_with(rest):
            raise op.shape_error(f"the data tensors' trailing shapes differ: {inner} vs "
                                 f"{rest}")
        inner = rest if inner is None else inner.merge_with(rest)
    if inner is None:
        return [TensorShape(None)]
    size = None
    values = [constant_value(t) for t in op.inputs[:n]]
    if all(v is not None for v in values):
        size = max((int(v.max()) + 1 for v in values if v.size), default=0)
    return [TensorShape([size, *inner.dims])]


def _stitch_dtypes(op):
    return [op.inputs[op.attrs["N"]].dtype.base_dtype]


register_op("DynamicStitch", attrs={"N": 1}, dtype_fn=_stitch_dtypes,
            cost=OpCost.EXPENSIVE)(_stitch_shape)


def dynamic_stitch(indices, data, name=None):
    """Interleave the `data` tensors into one: ``out[indices[m][i...], ...] =
    data[m][i..., ...]``, later writes winning. The output has ``max(indices) + 1`` rows.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.dynamic_stitch([[0, 2], [1]], [[1.0, 3.0], [2.0]])
    >>> with tf.Session() as sess:
    ...     print(sess.run(out))
    [1. 2. 3.]
    """
    indices, data = list(indices), list(data)
    if not indices or len(indices) != len(data):
        raise ValueError(f"dynamic_stitch: expected as many data tensors as index tensors "
                         f"(at least one), got {len(indices)} and {len(data)}")
    with name_scope(name, "DynamicStitch", indices + data) as scope:
        ind = [convert_to_tensor(t, preferred_dtype=_dtypes.int32) for t in indices]
        for t in ind:
            _check(t, (_dtypes.int32,), "DynamicStitch", "indices")
        dat = [convert_to_tensor(t) for t in data]
        dat = [dat[0]] + [convert_to_tensor(t, dtype=dat[0].dtype.base_dtype) for t in dat[1:]]
        return make_tensor("DynamicStitch", ind + dat, {"N": len(ind)}, name=scope)


# -- gradients -------------------------------------------------------------------------
# Built op for op as TensorFlow's gradients are, so the gradient tensors carry the same
# names (``SegmentMax_grad/SelectV2``, ``UnsortedSegmentSum_grad/SelectV2``, ...).
def _gather_drop_negatives(params, ids, clipped=None, positive=None):
    """``params[ids]`` with the rows of negative ids zeroed; also returns the clipped ids
    and the positive-id mask (broadcast to the gathered rows), for reuse."""
    if clipped is None:
        clipped = _m.maximum(ids, _a.zeros_like(ids))
    rows = _a.gather(params, clipped)
    if positive is None:
        positive = _m.greater_equal(ids, 0)
        ids_shape = _a.shape(positive)
        tail = _a.ones([_a.rank(rows) - _a.rank(positive)], dtype=ids_shape.dtype.base_dtype)
        positive = _a.reshape(positive, _a.concat([ids_shape, tail], axis=0))
        positive = positive & _a.ones_like(rows, dtype=_dtypes.bool)
    return _a.where_v2(positive, rows, _a.zeros_like(rows)), clipped, positive


@register_gradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return [_a.gather(grad, op.inputs[1]), None]


@register_gradient("SegmentMean")
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    tail = _a.ones(_a.expand_dims(_a.rank(data) - 1, 0), dtype=_dtypes.int32)
    ones = _a.ones(_a.concat([_a.shape(ids), tail], 0), dtype=grad.dtype.base_dtype)
    scaled = _m.divide(grad, segment_sum(ones, ids))
    return [_a.gather(scaled, ids), None]


@register_gradient("SegmentMax")
@register_gradient("SegmentMin")
def _segment_extremum_grad(op, grad):
    """Max/min: the gradient is split evenly among the rows that attain the extremum."""
    data, ids = op.inputs
    zeros = _a.zeros_like(data, dtype=data.dtype.base_dtype)
    picked = _a.gather(op.outputs[0], ids)
    hit = _m.equal(data, picked)
    ties = segment_sum(_m.cast(hit, grad.dtype.base_dtype), ids)
    share = _a.gather(_m.divide(grad, ties), ids)
    return [_a.where_v2(hit, share, zeros), None]


@register_gradient("UnsortedSegmentSum")
def _unsorted_sum_grad(op, grad):
    return [_gather_drop_negatives(grad, op.inputs[1])[0], None, None]


@register_gradient("UnsortedSegmentMax")
@register_gradient("UnsortedSegmentMin")
def _unsorted_extremum_grad(op, grad):
    picked, clipped, positive = _gather_drop_negatives(op.outputs[0], op.inputs[1])
    hit = _m.equal(op.inputs[0], picked)
    hit = _m.logical_and(hit, positive)
    ties = unsorted_segment_sum(_m.cast(hit, grad.dtype.base_dtype), op.inputs[1],
                                op.inputs[2])
    share, _, _ = _gather_drop_negatives(_m.divide(grad, ties), None, clipped, positive)
    return [_a.where_v2(hit, share, _a.zeros_like(share)), None, None]


def _prod_grad(op, grad, unsorted: bool):
    """d prod / d x_j is the product of the segment's other elements: prod / x_j when
    x_j != 0; the product of the non-zero elements for the one zero of a segment; 0 when
    a segment holds two zeros or more."""
    data, ids = op.inputs[:2]
    extra = list(op.inputs[2:])
    zero = _m.equal(data, 0)
    reduce_sum = unsorted_segment_sum if unsorted else segment_sum
    zeros_per_segment = reduce_sum(_m.cast(zero, _dtypes.int32), ids, *extra)
    grad = _a.where_v2(_m.greater(zeros_per_segment, 1), _a.zeros_like(grad), grad)
    safe = _a.where_v2(zero, _a.ones_like(data), data)
    nonzero_prod = (unsorted_segment_prod if unsorted else segment_prod)(safe, ids, *extra)
    clipped = _m.maximum(ids, _a.zeros_like(ids)) if unsorted else ids
    prod_rows = _a.gather(op.outputs[0], clipped)
    nonzero_rows = _a.gather(nonzero_prod, clipped)
    partial = _a.where_v2(zero, nonzero_rows, prod_rows / (data if unsorted else safe))
    if unsorted:
        grad_rows = _gather_drop_negatives(grad, ids, clipped)[0]
    else:
        grad_rows = _a.gather(grad, ids)
    return [grad_rows * partial, None] + [None] * len(extra)


@register_gradient("SegmentProd")
def _segment_prod_grad(op, grad):
    return _prod_grad(op, grad, unsorted=False)


@register_gradient("UnsortedSegmentProd")
def _unsorted_prod_grad(op, grad):
    return _prod_grad(op, grad, unsorted=True)


@register_gradient("DynamicPartition")
def _partition_grad(op, *grads):
    data, partitions = op.inputs
    positions = _a.reshape(_a.range(_a.size(partitions)), _a.shape(partitions))
    parts = dynamic_partition(positions, partitions, op.attrs["num_partitions"])
    grads = [_a.zeros_like(out) if g is None else g for g, out in zip(grads, op.outputs)]
    stitched = dynamic_stitch(parts, grads)
    return [_a.reshape(stitched, _a.shape(data)), None]


@register_gradient("DynamicStitch")
def _stitch_grad(op, grad):
    # As in TensorFlow, every data element gets the gradient of the output row its index
    # names, including elements that a later duplicate index overwrote.
    n = op.attrs["N"]
    if isinstance(grad, IndexedSlices):
        rows = _a.shape(op.outputs[0], out_type=grad.indices.dtype.base_dtype)[0]
        grad = unsorted_segment_sum(grad.values, grad.indices, rows)
    return [None] * n + [_a.gather(grad, ind) for ind in op.inputs[:n]]
