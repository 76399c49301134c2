"""``tf.ragged``: building ragged tensors (`flowgraph.ops.ragged_tensor`).

`constant` turns nested Python lists into a `RaggedTensor` of constants; the row
partition helpers convert between row splits and per-value row ids.

Example
-------
>>> import flowgraph as tf
>>> rt = tf.ragged.constant([[1, 2], [3], []])
>>> rt.shape.as_list(), rt.ragged_rank
([3, None], 1)
"""

from __future__ import annotations

import builtins

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant as _constant
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.ragged_tensor import RaggedTensor, RaggedTensorValue

__all__ = ["RaggedTensorValue", "boolean_mask", "constant", "constant_value", "cross",
           "cross_hashed", "map_flat_values", "placeholder", "range",
           "row_splits_to_segment_ids", "segment_ids_to_row_splits", "stack",
           "stack_dynamic_partitions"]


def _depth(x) -> int:
    """How deep lists nest in `x` (scalars: 0); an empty list counts as depth 1."""
    if isinstance(x, list | tuple):
        return 1 + max((_depth(v) for v in x), default=0)
    if isinstance(x, np.ndarray):
        return x.ndim
    return 0


def _scalar_depths(x, depth: int = 0, out=None) -> set:
    """The list depths at which scalars occur in `x`."""
    out = set() if out is None else out
    if isinstance(x, list | tuple):
        for v in x:
            _scalar_depths(v, depth + 1, out)
    else:
        out.add(depth + (x.ndim if isinstance(x, np.ndarray) else 0))
    return out


def _partition(pylist, ragged_rank: int):
    """(flat values as a Python list, row splits per ragged dimension, outermost first)."""
    splits = []
    level = list(pylist)
    for _ in builtins.range(ragged_rank):  # `range` is tf.ragged.range below
        bounds, flat = [0], []
        for row in level:
            if not isinstance(row, list | tuple | np.ndarray):
                raise ValueError(f"tf.ragged.constant: expected a list at ragged depth "
                                 f"{len(splits) + 1}, found {row!r}")
            flat.extend(list(row))
            bounds.append(len(flat))
        splits.append(bounds)
        level = flat
    return level, splits


def _values_and_splits(pylist, dtype, ragged_rank, inner_shape, row_splits_dtype):
    depth = _depth(pylist)
    scalar_depths = _scalar_depths(pylist)
    if len(scalar_depths) > 1:
        raise ValueError("tf.ragged.constant: all scalar values must have the same nesting "
                         "depth")
    if ragged_rank is not None and depth < ragged_rank:
        raise ValueError(f"Invalid pylist={pylist!r}, max depth smaller than "
                         f"ragged_rank={ragged_rank}")
    if ragged_rank is not None and scalar_depths and min(scalar_depths) <= ragged_rank:
        raise ValueError(f"pylist has scalar values depth {min(scalar_depths)}, but "
                         f"ragged_rank={ragged_rank} requires scalar value depth greater "
                         f"than {ragged_rank}")
    if ragged_rank is None:
        ragged_rank = max(depth - 1 - (len(inner_shape) if inner_shape else 0), 1)
    if ragged_rank < 1:
        raise ValueError(f"tf.ragged.constant: ragged_rank must be at least 1, got "
                         f"{ragged_rank}")
    flat, splits = _partition(pylist, ragged_rank)
    np_dtype = None if dtype is None else _dtypes.as_dtype(dtype).as_numpy_dtype
    if flat:
        values = np.asarray(flat, dtype=np_dtype)
        if values.dtype == np.float64 and dtype is None:
            values = values.astype(np.float32)
        if values.dtype == np.int64 and dtype is None:
            values = values.astype(np.int32)
    else:
        inner = list(inner_shape or [])
        if not inner and depth > ragged_rank + 1:
            raise ValueError("tf.ragged.constant: cannot infer the inner shape of an empty "
                             "list; pass inner_shape")
        values = np.zeros([0, *inner], dtype=np_dtype or np.float32)
    if values.dtype.kind == "U":
        values = values.astype(object)
    splits_np = [np.asarray(s, dtype=_dtypes.as_dtype(row_splits_dtype).as_numpy_dtype)
                 for s in splits]
    return values, splits_np


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=_dtypes.int64) -> RaggedTensor:
    """A `RaggedTensor` of constants from nested lists.

    Integers default to int32 and floats to float32, as `tf.constant`. `ragged_rank`
    (default: all but the innermost list level) says how many dimensions are ragged;
    the levels inside must be uniform.

    Example
    -------
    >>> import flowgraph as tf
    >>> rt = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    >>> rt.shape.as_list(), rt.values.shape.as_list()
    ([2, None, 2], [3, 2])
    """
    values, splits = _values_and_splits(pylist, dtype, ragged_rank, inner_shape,
                                        row_splits_dtype)
    with name_scope(name, "RaggedConstant"):
        result = _constant(values, dtype=dtype, name="values")
        for s in reversed(splits):
            result = RaggedTensor.from_row_splits(result, _constant(s), validate=False)
        return result


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None,
                   row_splits_dtype="int64") -> RaggedTensorValue:
    """A `RaggedTensorValue` (NumPy) from nested lists, as `constant` would hold."""
    values, splits = _values_and_splits(pylist, dtype, ragged_rank, inner_shape,
                                        row_splits_dtype)
    result = values
    for s in reversed(splits):
        result = RaggedTensorValue(result, s)
    return result


def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the `RaggedTensor` arguments (which must share
    their row partitions); the result has their partitions.

    Example
    -------
    >>> import flowgraph as tf
    >>> rt = tf.ragged.map_flat_values(tf.multiply, tf.ragged.constant([[1], [2, 3]]), 10)
    >>> with tf.Session() as sess:
    ...     print(sess.run(rt).to_list())
    [[10], [20, 30]]
    """
    partition = []

    def flat(x):
        if isinstance(x, RaggedTensor):
            partition.append(x)
            return x.flat_values
        return x

    new_args = [flat(a) for a in args]
    new_kwargs = {k: flat(v) for k, v in kwargs.items()}
    if not partition:
        return op(*args, **kwargs)
    return partition[0].with_flat_values(op(*new_args, **new_kwargs))


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row id of each value: ``[0, 2, 2, 5]`` gives ``[0, 0, 2, 2, 2]``."""
    from flowgraph.ops import array_ops, math_ops
    from flowgraph.ops.array_extra_ops import repeat
    from flowgraph.ops.array_gen_ops import range as _range

    with name_scope(name, "RaggedSplitsToSegmentIds"):
        splits = convert_to_tensor(splits, dtype_hint=_dtypes.int64)
        rows = _range(math_ops.cast(array_ops.shape(splits)[0] - 1, _dtypes.int32))
        ids = repeat(math_ops.cast(rows, splits.dtype), splits[1:] - splits[:-1])
        return ids if out_type is None else math_ops.cast(ids, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """Row splits of sorted `segment_ids`: ``[0, 0, 2]`` gives ``[0, 2, 2, 3]``."""
    with name_scope(name, "SegmentIdsToRaggedSplits"):
        ids = convert_to_tensor(segment_ids, dtype_hint=_dtypes.int64)
        rt = RaggedTensor.from_value_rowids(ids, ids, nrows=num_segments, validate=False)
        splits = rt.row_splits
        if out_type is not None:
            from flowgraph.ops import math_ops

            splits = math_ops.cast(splits, out_type)
        return splits


# boolean_mask, cross, placeholder, range, stack, ...: flowgraph/ops/ragged_array_ops.py
from flowgraph.ops.ragged_array_ops import (  # noqa: E402
    boolean_mask,
    cross,
    cross_hashed,
    placeholder,
    range,
    stack,
    stack_dynamic_partitions,
)
