"""CPU kernels for the scatter ops (`flowgraph/ops/scatter_ops.py`).

The variable forms copy the variable's value, apply the update with NumPy's unbuffered
``ufunc.at`` (so repeated indices accumulate) and store the copy, like ``AssignAdd``: an
array handed out by an earlier read is never changed underneath its reader.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _div_at(a, idx, b):
    np.divide.at(a, idx, b) if a.dtype.kind in "fc" else np.floor_divide.at(a, idx, b)


_UFUNCS = {"Update": None, "Add": np.add.at, "Sub": np.subtract.at,
           "Mul": np.multiply.at, "Div": _div_at, "Min": np.minimum.at, "Max": np.maximum.at}


def _check_rows(op_type, name, indices, n):
    bad = (indices < 0) | (indices >= n)
    if np.any(bad):
        i = int(np.asarray(indices)[bad].flat[0])
        raise errors.InvalidArgumentError(
            None, None, f"{op_type} on '{name}': index {i} is out of range [0, {n}); "
            "every index must address an existing row")


def _nd_positions(op_type, name, shape, indices):
    """The tuple of index arrays addressed by `indices` (``[..., depth]``) in `shape`."""
    depth = indices.shape[-1]
    flat = indices.reshape(-1, depth)
    limits = np.asarray(shape[:depth])
    bad = np.any((flat < 0) | (flat >= limits), axis=1)
    if np.any(bad):
        raise errors.InvalidArgumentError(
            None, None, f"{op_type} on '{name}': index {flat[bad][0].tolist()} is out of "
            f"range for shape {list(shape)}; every index tuple must address an element")
    return tuple(flat.T), flat.shape[0], depth


def _apply(kind, target, idx, updates):
    if kind == "Update":
        target[idx] = updates
    else:
        _UFUNCS[kind](target, idx, updates)


def _row_kernel(kind):
    def kernel(ref, indices, updates, *, op):
        with ref.lock:
            current = ref.read(op.name)
            _check_rows(op.type, ref.name, indices, current.shape[0] if current.ndim else 0)
            new = np.array(current, copy=True)
            upd = np.broadcast_to(updates, np.shape(indices) + current.shape[1:])
            _apply(kind, new, np.asarray(indices, dtype=np.int64), upd)
            ref.value = new
        return ref

    return kernel


def _nd_kernel(kind):
    def kernel(ref, indices, updates, *, op):
        with ref.lock:
            current = ref.read(op.name)
            ref.value = _scatter_nd(op.type, ref.name, kind, current, indices, updates)
        return ref

    return kernel


def _scatter_nd(op_type, name, kind, tensor, indices, updates):
    new = np.array(tensor, copy=True)
    idx, count, depth = _nd_positions(op_type, name, tensor.shape, np.asarray(indices))
    upd = np.reshape(updates, (count, *tensor.shape[depth:]))
    _apply(kind, new, idx, upd)
    return new


def _tensor_kernel(kind):
    def kernel(tensor, indices, updates, *, op):
        return _scatter_nd(op.type, op.name, kind, tensor, indices, updates)

    return kernel


for _kind in ("Update", "Add", "Sub", "Mul", "Div", "Min", "Max"):
    cpu_kernel(f"Scatter{_kind}")(_row_kernel(_kind))
for _kind in ("Update", "Add", "Sub"):
    cpu_kernel(f"ScatterNd{_kind}")(_nd_kernel(_kind))
for _kind in ("Update", "Add", "Sub", "Max", "Min"):
    cpu_kernel(f"TensorScatter{_kind}", fresh=True)(_tensor_kernel(_kind))
