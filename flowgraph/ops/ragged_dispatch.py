"""Ops on `RaggedTensor` arguments, as TensorFlow's ragged dispatch builds them:
elementwise math on the flat values (``tf.add(rt, 1)``, ``rt * dense``, ``tf.cast``,
``tf.math.log``, the Python operators), ``tf.reduce_*`` along ragged or uniform axes
(``RaggedReduceSum`` from unsorted segment reductions), ``tf.concat`` and ``tf.stack``.

The handlers are registered with `op_dispatch` when this module is imported (by the
``tf`` namespace); the op functions call them when an argument is ragged.

Example
-------
>>> import flowgraph as tf
>>> rt = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
>>> with tf.Session() as sess:
...     print(sess.run(tf.reduce_sum(rt * 2.0, axis=1)))
[6. 0. 6.]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops import math_reduce as _r
from flowgraph.ops import op_dispatch
from flowgraph.ops import segment_ops as _s
from flowgraph.ops.check_ops import Assert as _Assert
from flowgraph.ops.control_flow_ops import with_dependencies as _with_dependencies
from flowgraph.ops.ragged_array_ops import _concat_rows
from flowgraph.ops.ragged_array_ops import range as _ragged_range
from flowgraph.ops.ragged_array_ops import stack as _ragged_stack
from flowgraph.ops.ragged_tensor import RaggedTensor

__all__: list = []


# -- elementwise ---------------------------------------------------------------------------
def _unary(fn, x, name=None):
    return x.with_flat_values(fn(x.flat_values, name=name))


def _dense_operand(rt: RaggedTensor, y, fn_name: str):
    """`y` (dense) as a tensor that broadcasts against `rt`'s flat values."""
    y = y if hasattr(y, "dtype") and hasattr(y, "op") else convert_to_tensor(
        y, dtype=rt.dtype)
    inner = rt.flat_values.shape.ndims
    if y.shape.ndims is None:
        raise ValueError(f"{fn_name}: a dense operand of a RaggedTensor must have a known "
                         f"rank")
    if inner is not None and y.shape.ndims < inner:
        return y  # broadcasts against the uniform inner dimensions
    if rt.ragged_rank != 1 or y.shape.ndims != rt.shape.ndims:
        raise ValueError(f"{fn_name}: cannot broadcast a dense operand of shape {y.shape} "
                         f"against a RaggedTensor of shape {rt.shape}")
    if y.shape[1].value != 1:
        raise ValueError(f"{fn_name}: a dense operand of shape {y.shape} broadcasts against "
                         f"the ragged dimension 1 of a RaggedTensor of shape {rt.shape} "
                         f"only with size 1 there")
    rows = _a.squeeze(y, [1])
    if rows.shape[0].value == 1:
        return _a.squeeze(rows, [0]) if rows.shape.ndims == 1 else rows[0]
    return _a.gather(rows, rt.value_rowids())


def _same_splits(a, b):
    na, nb = _a.size(a, out_type=a.dtype), _a.size(b, out_type=a.dtype)
    k = _m.minimum(na, nb)
    return _m.logical_and(_m.equal(na, nb), _r.reduce_all(_m.equal(a[:k], b[:k])))


def _checked_flat_values(x: RaggedTensor, y: RaggedTensor):
    """`x`'s flat values, once its row partitions are checked to equal `y`'s (when run,
    as TensorFlow does; partitions that are the same tensors need no check)."""
    checks = [_Assert(_same_splits(sx, sy), ["Inputs must have identical ragged splits",
                                             sx, sy])
              for sx, sy in zip(x.nested_row_splits, y.nested_row_splits) if sx is not sy]
    return _with_dependencies(checks, x.flat_values) if checks else x.flat_values


def _binary(fn, x, y, name=None):
    fn_name = getattr(fn, "__name__", "op")
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        if x.ragged_rank != y.ragged_rank:
            raise ValueError(f"{fn_name}: RaggedTensors of ragged ranks {x.ragged_rank} and "
                             f"{y.ragged_rank} do not have the same row partitions")
        return x.with_flat_values(fn(_checked_flat_values(x, y), y.flat_values, name=name))
    if isinstance(x, RaggedTensor):
        return x.with_flat_values(fn(x.flat_values, _dense_operand(x, y, fn_name), name=name))
    return y.with_flat_values(fn(_dense_operand(y, x, fn_name), y.flat_values, name=name))


# -- reductions ----------------------------------------------------------------------------
_SEGMENT = {"Sum": _s.unsorted_segment_sum, "Max": _s.unsorted_segment_max,
            "Min": _s.unsorted_segment_min, "Prod": _s.unsorted_segment_prod}
_DENSE = {"Sum": _r.reduce_sum, "Mean": _r.reduce_mean, "Max": _r.reduce_max,
          "Min": _r.reduce_min, "Prod": _r.reduce_prod, "Any": _r.reduce_any,
          "All": _r.reduce_all}


def _segment_reduce(kind, values, ids, n):
    if kind == "Mean":
        total = _s.unsorted_segment_sum(values, ids, n)
        count = _s.unsorted_segment_sum(_a.ones_like(values), ids, n)
        return _m.truediv(total, count)
    if kind in ("Any", "All"):  # as integers
        ints = _m.cast(values, _dtypes.int32)
        # TensorFlow sums (any) or multiplies (all): an empty row is False (any), True (all)
        out = _SEGMENT["Sum" if kind == "Any" else "Prod"](ints, ids, n)
        return _m.cast(out, _dtypes.bool)
    return _SEGMENT[kind](values, ids, n)


def _reduce_axis(kind, rt: RaggedTensor, axis: int):
    if axis > rt.ragged_rank:  # a uniform inner dimension: reduce the flat values
        return rt.with_flat_values(_DENSE[kind](rt.flat_values, axis - rt.ragged_rank))
    if axis == rt.ragged_rank:  # the innermost ragged dimension
        splits = rt.nested_row_splits
        last = RaggedTensor.from_row_splits(rt.flat_values, splits[-1], validate=False)
        out = _segment_reduce(kind, rt.flat_values, last.value_rowids(), last.nrows())
        if len(splits) == 1:
            return out
        return RaggedTensor.from_nested_row_splits(out, splits[:-1], validate=False)
    if axis == 0 and rt.ragged_rank == 1:  # across rows: by position within each row
        rowids = rt.value_rowids()
        starts = _a.gather(rt.row_splits[:-1], rowids)
        pos = _m.cast(_a.range(_a.shape(rowids, out_type=rowids.dtype)[0]),
                      rowids.dtype) - starts
        width = _r.reduce_max(_a.concat([rt.row_lengths(),
                                         _a.zeros([1], rowids.dtype)], 0))
        return _segment_reduce(kind, rt.values, pos, width)
    raise NotImplementedError(f"tf.reduce_{kind.lower()}: reducing axis {axis} of a "
                              f"RaggedTensor of ragged rank {rt.ragged_rank} is not "
                              f"supported (supported: 0 for ragged rank 1, the innermost "
                              f"ragged axis, uniform inner axes, or None)")


def _reduce(op_type, rt, axis, keepdims, name):
    kind = op_type[:-2] if op_type.endswith("V2") else op_type  # "Sum", "Max", ...
    kind = {"Mean": "Mean", "Any": "Any", "All": "All"}.get(kind, kind)
    with name_scope(name, f"RaggedReduce{kind}") as scope:
        if axis is None:
            return _DENSE[kind](rt.flat_values, None, keepdims, name=scope)
        rank = rt.shape.ndims
        axes = constant_value(axis) if hasattr(axis, "op") else axis
        if axes is None:
            raise ValueError(f"tf.reduce_{kind.lower()}: the axis of a RaggedTensor "
                             f"reduction must be known statically")
        axes = np.reshape(axes, [-1]).tolist()
        norm = []
        for a in axes:
            a = int(a)
            if not -rank <= a < rank:
                raise ValueError(f"tf.reduce_{kind.lower()}: axis {a} out of bounds for a "
                                 f"RaggedTensor of rank {rank}")
            norm.append(a % rank)
        out = rt
        for a in sorted(set(norm), reverse=True):
            out = _reduce_axis(kind, out, a)
            if keepdims:
                if isinstance(out, RaggedTensor):
                    raise NotImplementedError(f"tf.reduce_{kind.lower()}: keepdims=True "
                                              f"with a ragged result is not supported")
                out = _a.expand_dims(out, a)
        return out


def _add_n(inputs, name):
    """``tf.add_n`` of RaggedTensors with one row partition (``RaggedAddN/AddN``)."""
    with name_scope(name, "RaggedAddN"):
        rts = list(inputs)
        if not all(isinstance(r, RaggedTensor) for r in rts):
            raise ValueError("tf.add_n: all inputs must be RaggedTensors when one is")
        if len({r.ragged_rank for r in rts}) > 1:
            raise ValueError("tf.add_n: RaggedTensors of different ragged ranks")
        return rts[0].with_flat_values(_r.add_n(
            [rts[0].flat_values, *(_checked_flat_values(r, rts[0]) for r in rts[1:])]))


def _size(rt, name, out_type):
    return _a.size(rt.flat_values, name=name, out_type=out_type)


# -- where -----------------------------------------------------------------------------------
def _where(condition, x, y, name):
    with name_scope(name, "RaggedWhere"):
        if x is None and y is None:
            if not isinstance(condition, RaggedTensor):
                return _a.where(condition)
            coords = _a.where(condition.flat_values)  # [n, 1 + inner rank]
            index, rest = coords[:, 0], [coords[:, 1:]]
            for splits in reversed(condition.nested_row_splits):
                level = RaggedTensor.from_row_splits(index, splits, validate=False)
                rows = _a.gather(level.value_rowids(), index)
                col = index - _a.gather(splits, rows)
                rest.insert(0, _a.expand_dims(col, 1))
                index = rows
            return _a.concat([_a.expand_dims(index, 1), *rest], 1)
        if x is None or y is None:
            raise ValueError("tf.where: x and y must both be given, or neither")
        parts = [condition, x, y]
        ref = next(p for p in parts if isinstance(p, RaggedTensor))
        if not all(isinstance(p, RaggedTensor) for p in parts):
            raise ValueError("tf.where: condition, x and y must all be RaggedTensors when "
                             "one is")
        return ref.with_flat_values(_a.where(*(p.flat_values for p in parts)))


# -- concat and stack ----------------------------------------------------------------------
def _ragged_values(values, what: str) -> list:
    out = []
    for v in values:
        if isinstance(v, RaggedTensor):
            out.append(v)
            continue
        t = convert_to_tensor(v)
        if t.shape.ndims is None or t.shape.ndims < 2:
            raise ValueError(f"{what}: a dense input joined with ragged ones must have rank "
                             f">= 2, got shape {t.shape}")
        out.append(RaggedTensor.from_tensor(t))
    ranks = {v.shape.ndims for v in out}
    if len(ranks) > 1:
        raise ValueError(f"{what}: all inputs must have the same rank, got ranks "
                         f"{sorted(ranks)}")
    return out


def _concat(values, axis, name):
    with name_scope(name, "RaggedConcat"):
        rts = _ragged_values(values, "tf.concat")
        rank = rts[0].shape.ndims
        a = int(axis)
        if not -rank <= a < rank:
            raise ValueError(f"tf.concat: axis={axis} out of bounds for RaggedTensors of "
                             f"rank {rank}")
        a %= rank
        if len(rts) == 1:
            return rts[0]
        if a == 0:
            return _concat_rows(rts)
        if a == 1 and rts[0].ragged_rank == 1:
            return _ragged_stack(rts, axis=1).merge_dims(1, 2)
        if a > rts[0].ragged_rank:
            return rts[0].with_flat_values(
                _a.concat([rt.flat_values for rt in rts], a - rts[0].ragged_rank))
        raise NotImplementedError(f"tf.concat: axis {a} of RaggedTensors of ragged rank "
                                  f"{rts[0].ragged_rank} is not supported")


def _stack(values, axis, name):
    return _ragged_stack(list(values), axis=axis, name=name)


# -- indexing ----------------------------------------------------------------------------
def _bound(v, lengths, default):
    """A slice bound `v` (int, None) per row: negative counts from each row's end, then
    clipped to ``[0, length]``."""
    if v is None:
        return default
    v = _m.cast(convert_to_tensor(v), lengths.dtype)
    return _m.minimum(_m.maximum(_a.where_v2(v < 0, lengths + v, v), 0), lengths)


def _slice_rows_values(rt: RaggedTensor, key: slice) -> RaggedTensor:
    """``rt[:, start:stop]``: each row cut to ``[start, stop)``."""
    if key.step not in (None, 1):
        raise NotImplementedError("RaggedTensor: a slice of the ragged dimension with a "
                                  "step is not supported")
    lengths = rt.row_lengths()
    start = _bound(key.start, lengths, _a.zeros_like(lengths))
    stop = _m.maximum(_bound(key.stop, lengths, lengths), start)
    starts = rt.row_splits[:-1]
    pos = _ragged_range(starts + start, starts + stop)
    return RaggedTensor.from_row_splits(_a.gather(rt.values, pos.values), pos.row_splits,
                                        validate=False)


def _getitem(rt: RaggedTensor, key):
    """``rt[key]``: rows (an int or slice), then the ragged dimension (an int or a slice
    without step), then uniform inner dimensions."""
    with name_scope(None, "RaggedGetItem"):
        keys = list(key) if isinstance(key, tuple) else [key]
        if not keys:
            return rt
        first, rest = keys[0], keys[1:]
        if isinstance(first, slice):
            if first != slice(None):
                n = _m.cast(rt.nrows(), _dtypes.int64)
                rows = _a.range(n)[first]
                rt = rt.gather_rows(rows)
            if not rest:
                return rt
            second, rest = rest[0], rest[1:]
            if isinstance(rt.values, RaggedTensor):
                raise NotImplementedError("RaggedTensor indexing below the rows is "
                                          "supported for ragged rank 1 only")
            if isinstance(second, slice):
                out = _slice_rows_values(rt, second)
                if rest:
                    out = out.with_values(out.values[(slice(None), *rest)])
                return out
            raise ValueError("Cannot index into an inner ragged dimension.")
        row = rt.values[rt.row_splits[:-1][first]:rt.row_splits[1:][first]]
        if not rest:
            return row
        return row[tuple(rest)] if len(rest) > 1 else row[rest[0]]


def _install() -> None:
    for kind, handler in (("unary", _unary), ("binary", _binary), ("reduce", _reduce),
                          ("concat", _concat), ("stack", _stack), ("where", _where),
                          ("size", _size), ("add_n", _add_n)):
        op_dispatch.register(RaggedTensor, kind, handler)
    ops = [("add", _m.add), ("sub", _m.subtract), ("mul", _m.multiply),
           ("truediv", _m.truediv), ("floordiv", _m.floordiv), ("mod", _m.floormod),
           ("pow", _m.pow), ("and", _m.logical_and), ("or", _m.logical_or)]
    for op_name, fn in ops:
        setattr(RaggedTensor, f"__{op_name}__",
                lambda x, y, fn=fn, n=op_name: fn(x, y, name=None))
        setattr(RaggedTensor, f"__r{op_name}__",
                lambda x, y, fn=fn, n=op_name: fn(y, x, name=None))
    for dunder, fn in (("__lt__", _m.less), ("__le__", _m.less_equal),
                       ("__gt__", _m.greater), ("__ge__", _m.greater_equal)):
        setattr(RaggedTensor, dunder, lambda x, y, fn=fn: fn(x, y))
    RaggedTensor.__getitem__ = _getitem
    RaggedTensor.__neg__ = lambda x: _m.negative(x)
    RaggedTensor.__abs__ = lambda x: _m.abs(x)
    RaggedTensor.__invert__ = lambda x: _m.logical_not(x)


_install()
