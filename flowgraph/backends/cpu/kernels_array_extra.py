"""CPU kernels for `flowgraph/ops/array_extra_ops.py`: NumPy's roll, searchsorted,
unravel_index and views, and the space/batch block rearrangements."""

from __future__ import annotations

import time

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _invalid(op, msg):
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


@cpu_kernel("Roll", fresh=True)
def roll(x, shift, axis, *, op):
    axes = np.atleast_1d(axis).astype(np.int64)
    shifts = np.atleast_1d(shift).astype(np.int64)
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise _invalid(op, f"axis {int(a)} is out of range for rank {x.ndim}")
    return np.roll(x, tuple(shifts.tolist()), tuple(axes.tolist()))


def _bound(side):
    def kernel(sorted_inputs, values, *, out_type, op):
        from flowgraph.framework.dtypes import as_dtype

        dtype = as_dtype(out_type).as_numpy_dtype
        if sorted_inputs.ndim <= 1:
            return np.searchsorted(sorted_inputs, values, side=side).astype(dtype)
        flat_s = sorted_inputs.reshape(-1, sorted_inputs.shape[-1])
        flat_v = values.reshape(-1, values.shape[-1])
        if flat_s.shape[0] != flat_v.shape[0]:
            raise _invalid(op, f"sorted_sequence {list(sorted_inputs.shape)} and values "
                           f"{list(values.shape)} have different leading dimensions")
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(flat_s, flat_v)])
        return out.reshape(values.shape).astype(dtype)

    return kernel


cpu_kernel("LowerBound", fresh=True)(_bound("left"))
cpu_kernel("UpperBound", fresh=True)(_bound("right"))


@cpu_kernel("ListDiff")
def list_diff(x, y, *, out_idx):
    from flowgraph.framework.dtypes import as_dtype

    keep = ~np.isin(x, y)
    idx = np.nonzero(keep)[0].astype(as_dtype(out_idx).as_numpy_dtype)
    return [x[keep], idx]


@cpu_kernel("UniqueWithCounts")
def unique_with_counts(x, *, out_idx):
    from flowgraph.framework.dtypes import as_dtype

    dtype = as_dtype(out_idx).as_numpy_dtype
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True)
    order = np.argsort(first, kind="stable")  # distinct values in order of appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return [x[first[order]], rank[inverse.reshape(-1)].astype(dtype),
            counts[order].astype(dtype)]


@cpu_kernel("UnravelIndex", fresh=True)
def unravel_index(indices, dims, *, op):
    size = int(np.prod(dims))
    if np.any((indices < 0) | (indices >= size)):
        raise _invalid(op, f"flat indices must be in [0, {size}) for dims "
                       f"{dims.tolist()}, got {np.asarray(indices).tolist()}")
    return np.asarray(np.unravel_index(indices, tuple(int(d) for d in dims)),
                      dtype=indices.dtype)


@cpu_kernel("Bitcast")
def bitcast(x, *, type, op):
    from flowgraph.framework.dtypes import as_dtype

    dst = np.dtype(as_dtype(type).as_numpy_dtype)
    src = x.dtype
    arr = np.ascontiguousarray(x).reshape(np.shape(x))  # keeps a 0-d input 0-d
    if src.itemsize == dst.itemsize:
        return arr.view(dst)
    if src.itemsize > dst.itemsize:
        return arr.reshape(*arr.shape, 1).view(dst)
    if arr.ndim == 0 or arr.shape[-1] != dst.itemsize // src.itemsize:
        raise _invalid(op, f"cannot bitcast {src} of shape {list(arr.shape)} to {dst}")
    return arr.view(dst).reshape(arr.shape[:-1])


@cpu_kernel("BroadcastArgs", fresh=True)
def broadcast_args(s0, s1, *, op):
    try:
        out = np.broadcast_shapes(tuple(int(d) for d in s0), tuple(int(d) for d in s1))
    except ValueError:
        raise _invalid(op, f"incompatible shapes {s0.tolist()} and {s1.tolist()}") from None
    return np.asarray(out, dtype=s0.dtype)


@cpu_kernel("Timestamp")
def timestamp():
    return np.asarray(time.time(), dtype=np.float64)


def _blocks(op, block_shape, pads, what):
    block = [int(b) for b in np.asarray(block_shape).reshape(-1)]
    pads = np.asarray(pads, dtype=np.int64).reshape(len(block), 2)
    if any(b < 1 for b in block):
        raise _invalid(op, f"block_shape must be positive, got {block}")
    if np.any(pads < 0):
        raise _invalid(op, f"{what} must be non-negative, got {pads.tolist()}")
    return block, pads


@cpu_kernel("SpaceToBatchND", fresh=True)
def space_to_batch_nd(x, block_shape, paddings, *, op):
    block, pads = _blocks(op, block_shape, paddings, "paddings")
    m = len(block)
    padded = np.pad(x, [(0, 0), *[tuple(p) for p in pads.tolist()],
                        *[(0, 0)] * (x.ndim - m - 1)])
    batch = x.shape[0]
    spatial = padded.shape[1:m + 1]
    for i, (s, b) in enumerate(zip(spatial, block)):
        if s % b:
            raise _invalid(op, f"padded spatial dimension {i} ({s}) is not divisible by "
                           f"block_shape[{i}] = {b}")
    rest = padded.shape[m + 1:]
    shape = [batch]
    for s, b in zip(spatial, block):
        shape += [s // b, b]
    y = padded.reshape(*shape, *rest)
    # [batch, s0/b0, b0, s1/b1, b1, ...] -> [b0, b1, ..., batch, s0/b0, s1/b1, ..., rest]
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = y.transpose(perm)
    return np.ascontiguousarray(y.reshape(batch * int(np.prod(block)),
                                          *[s // b for s, b in zip(spatial, block)], *rest))


@cpu_kernel("BatchToSpaceND", fresh=True)
def batch_to_space_nd(x, block_shape, crops, *, op):
    block, crops = _blocks(op, block_shape, crops, "crops")
    m = len(block)
    prod = int(np.prod(block))
    if x.shape[0] % prod:
        raise _invalid(op, f"batch dimension {x.shape[0]} is not divisible by the product "
                       f"of block_shape ({prod})")
    batch = x.shape[0] // prod
    spatial = x.shape[1:m + 1]
    rest = x.shape[m + 1:]
    y = x.reshape(*block, batch, *spatial, *rest)
    # [b0, ..., batch, s0, ...] -> [batch, s0, b0, s1, b1, ..., rest]
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = y.transpose(perm).reshape(batch, *[s * b for s, b in zip(spatial, block)], *rest)
    index = [slice(None)]
    for i in range(m):
        size = y.shape[i + 1]
        lo, hi = int(crops[i, 0]), int(crops[i, 1])
        if lo + hi > size:
            raise _invalid(op, f"crops {crops[i].tolist()} exceed dimension {i} ({size})")
        index.append(slice(lo, size - hi))
    return np.ascontiguousarray(y[tuple(index)])
