"""CPU kernels for ``v[spec].assign(x)`` (`flowgraph/ops/slice_assign_ops.py`):
``StridedSliceAssign`` on a reference variable; `assigned` is also the update of
``ResourceStridedSliceAssign`` (`kernels_resource_variable.py`).

The update writes a copy of the variable's value and stores it, as the scatter kernels
do, so an array an earlier read handed out never changes. The positions to write are
found by slicing an array of flat positions with the same spec (`strided_slice_numpy`),
which covers every mask, a scalar result included; `value` is broadcast to the slice.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.ops.array_slicing import strided_slice_numpy

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def assigned(op, name: str, current: np.ndarray, begin, end, strides, value,
             masks: dict) -> np.ndarray:
    """A copy of `current` with ``current[spec] = value``; InvalidArgumentError naming
    op and variable `name` for a bad spec or a value that does not fit the slice."""
    positions = np.arange(current.size, dtype=np.int64).reshape(current.shape)
    try:
        taken = np.asarray(strided_slice_numpy(positions, begin, end, strides, **masks))
    except ValueError as e:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}' on variable '{name}': {e}") from None
    value = np.asarray(value)
    try:
        value = np.broadcast_to(value, taken.shape)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': sliced l-value shape {list(taken.shape)} "
            f"does not match r-value shape {list(value.shape)} (variable '{name}' of shape "
            f"{list(current.shape)}); the value must have the slice's shape or broadcast "
            "to it") from None
    new = np.array(current, copy=True)
    new.reshape(-1)[taken.reshape(-1)] = value.reshape(-1)
    return new


@cpu_kernel("StridedSliceAssign")
def strided_slice_assign(ref, begin, end, strides, value, *, op, **attrs):
    masks = {m: attrs.get(m, 0) for m in MASKS}
    with ref.lock:
        ref.value = assigned(op, ref.name, ref.read(op.name), begin, end, strides, value,
                             masks)
    return ref
