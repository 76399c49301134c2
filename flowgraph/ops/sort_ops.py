"""Sorting and broadcasting helpers composed from existing ops: `sort`, `argsort`,
`broadcast_to` and `meshgrid` (issue 15).

`sort`/`argsort` move the sorted axis last and call ``TopKV2`` with ``k`` = the axis
length; an ascending sort ranks the negated values (bitwise-inverted for integers, so
the most negative integer does not overflow). ``TopKV2`` keeps equal values in index
order, so every sort here is stable. `broadcast_to` is the `BroadcastTo` op of
`array_broadcast_ops` (re-exported here).
"""

from __future__ import annotations

from flowgraph.framework.constant_op import (
    constant_value,
    convert_to_tensor,
)
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_broadcast_ops import broadcast_to
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.array_meshgrid import meshgrid
from flowgraph.ops.array_shape_ops import rank as _rank_of
from flowgraph.ops.array_shape_ops import shape as _shape_of
from flowgraph.ops.array_shape_ops import transpose
from flowgraph.ops.bitwise_ops import invert
from flowgraph.ops.math_ops import equal, negative
from flowgraph.ops.nn_loss_ops import top_k

__all__ = ["argsort", "broadcast_to", "meshgrid", "sort"]

_DIRECTIONS = ("ASCENDING", "DESCENDING")


def swap_axis_to_last(x, axis: int):
    """`x` with axis `axis` (in ``[0, rank)``) and the last axis swapped, and that
    permutation (its own inverse), or ``(x, None)`` when `axis` is already the last."""
    rank = x.shape.ndims
    if axis == rank - 1:
        return x, None
    perm = list(range(rank))
    perm[axis], perm[-1] = rank - 1, axis
    return transpose(x, perm), perm


def _swap_axis_to_last_dynamic(x, axis: int):
    """`swap_axis_to_last` for `x` of unknown rank: the permutation is a tensor."""
    r = _rank_of(x)
    ax = axis if axis >= 0 else r + axis
    last = r - 1
    idx = _range(r)
    perm = where_v2(equal(idx, ax), last, where_v2(equal(idx, last), ax, idx))
    return transpose(x, perm), perm


def _sort_indices_and_values(values, axis, direction, what: str):
    if direction not in _DIRECTIONS:
        raise ValueError(f"tf.{what}: direction must be one of {', '.join(_DIRECTIONS)}, "
                         f"got {direction!r}")
    x = convert_to_tensor(values, name="values")
    axis_value = constant_value(convert_to_tensor(axis, name="axis"))
    if axis_value is None or axis_value.ndim != 0:
        raise ValueError(f"tf.{what}: axis must be a constant scalar int, got {axis!r}")
    rank = x.shape.ndims
    axis = int(axis_value)
    if rank is not None and not -rank <= axis < rank:
        raise ValueError(f"tf.{what}: axis {axis} is out of range for values of rank "
                         f"{rank} (expected -{rank} <= axis < {rank})")
    perm = None
    if rank is not None:
        x, perm = swap_axis_to_last(x, axis % rank)
    elif axis != -1:
        x, perm = _swap_axis_to_last_dynamic(x, axis)
    keyed = x
    if direction == "ASCENDING":
        keyed = invert(x) if x.dtype.is_integer else negative(x)
    n = x.shape[-1].value if rank is not None else None
    k = n if n is not None else _shape_of(x)[-1]
    top_values, indices = top_k(keyed, k=k, sorted=True)
    return x, top_values, indices, perm, direction


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sort `values` along `axis` (stable; NaN counts as the largest value).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.sort([3, 1, 2], direction="DESCENDING")).tolist()
    [3, 2, 1]
    """
    with name_scope(name, "sort", [values]):
        _, top_values, _, perm, direction = _sort_indices_and_values(
            values, axis, direction, "sort")
        if direction == "ASCENDING":
            top_values = invert(top_values) if top_values.dtype.is_integer \
                else negative(top_values)
        return top_values if perm is None else transpose(top_values, perm)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort `values` along `axis`.

    Equal values keep their original order whether or not `stable` is set (the
    argument is accepted for TensorFlow's signature).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.argsort([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    del stable  # the TopKV2-based sort is always stable
    with name_scope(name, "argsort", [values]):
        _, _, indices, perm, _ = _sort_indices_and_values(values, axis, direction, "argsort")
        return indices if perm is None else transpose(indices, perm)
