"""CPU kernels for indexing and generated index tensors (`flowgraph.ops.array_index_ops`,
`flowgraph.ops.array_gen_ops`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel, kernel_pool
from flowgraph.framework import errors
from flowgraph.ops.array_gen_ops import range_numpy
from flowgraph.ops.array_slicing import strided_slice_numpy


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _fmt_index(pos) -> str:
    return ",".join(str(int(p)) for p in pos)


@cpu_kernel("Slice")
def slice_(x, begin, size):
    x = np.asarray(x)
    begin = [int(b) for b in np.reshape(begin, -1)]
    size = [int(s) for s in np.reshape(size, -1)]
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise _invalid(f"Expected begin and size arguments to be 1-D tensors of size "
                       f"{x.ndim}, but got shapes [{len(begin)}] and [{len(size)}] instead.")
    idx = []
    for i, (b, s, d) in enumerate(zip(begin, size, x.shape)):
        s = d - b if s == -1 else s
        if not 0 <= b <= d:  # TF's two messages: begin first, then size
            raise _invalid(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if not (0 <= s and b + s <= d):
            raise _invalid(f"Expected size[{i}] in [0, {d - b}], but got {size[i]}")
        idx.append(np.s_[b:b + s])
    return x[tuple(idx)]


@cpu_kernel("StridedSlice")
def strided_slice(x, begin, end, strides, *, begin_mask, end_mask, ellipsis_mask,
                  new_axis_mask, shrink_axis_mask):
    x = np.asarray(x)
    try:
        out = strided_slice_numpy(x, begin, end, strides, begin_mask=begin_mask,
                                  end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                                  new_axis_mask=new_axis_mask,
                                  shrink_axis_mask=shrink_axis_mask)
    except ValueError as e:
        raise _invalid(str(e)) from None
    # one string element stays an object array: a fixed-width bytes array would drop
    # its trailing NULs (a serialized Example's last byte can be 0)
    return np.asarray(out, dtype=object) if x.dtype == object else np.asarray(out)


def _check_range(indices, n: int) -> None:
    bad = (indices < 0) | (indices >= n)
    if np.any(bad):
        pos = np.argwhere(bad)[0]
        where = f"[{_fmt_index(pos)}]" if len(pos) else ""  # TF: "indices = 7" for a scalar
        raise _invalid(f"indices{where} = {int(indices[tuple(pos)])} is not in [0, {n})")


def take(params: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """``np.take(params, indices, axis)`` for in-range `indices`, copied by chunks on the
    kernel threads (`kernel_pool`) when large: chunks of the indices for ``axis=0``, of
    the dimensions before `axis` otherwise. A copy, so bitwise the one-thread result.

    >>> take(np.arange(6).reshape(3, 2), np.array([2, 0]), 0)
    array([[4, 5],
           [0, 1]])
    """
    inner = int(np.prod(params.shape[axis + 1:], dtype=np.int64))
    size = indices.size * inner * int(np.prod(params.shape[:axis], dtype=np.int64))
    if size < 2 * kernel_pool.GRAIN["gather"] or kernel_pool.threads() < 2:
        return np.take(params, indices, axis=axis)
    grain = kernel_pool.GRAIN["gather"]
    if axis == 0:
        flat = indices.reshape(-1)
        out = np.empty((flat.size, *params.shape[1:]), params.dtype)

        def rows(a: int, b: int) -> None:  # mode="clip": no buffered copy (already checked)
            np.take(params, flat[a:b], axis=0, out=out[a:b], mode="clip")

        kernel_pool.parallel_for(flat.size, rows, grain=-(-grain // max(inner, 1)), align=1)
        return out.reshape((*indices.shape, *params.shape[1:]))
    outer = params.shape[:axis]
    p = params.reshape((-1, *params.shape[axis:]))
    out = np.empty((p.shape[0], *indices.shape, *params.shape[axis + 1:]), params.dtype)

    def blocks(a: int, b: int) -> None:
        np.take(p[a:b], indices, axis=1, out=out[a:b], mode="clip")

    kernel_pool.parallel_for(p.shape[0], blocks, grain=-(-grain * p.shape[0] // size),
                             align=1)
    return out.reshape((*outer, *out.shape[1:]))


@cpu_kernel("GatherV2")
def gather(params, indices, axis, *, batch_dims):
    params, indices = np.asarray(params), np.asarray(indices)
    a = int(axis)
    if not -params.ndim <= a < params.ndim:
        raise _invalid(f"Expected axis in the range [{-params.ndim}, {params.ndim}), but got {a}")
    a = a + params.ndim if a < 0 else a
    bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    _check_range(indices, params.shape[a])
    if bd == 0:
        return take(params, indices, a)
    if params.shape[:bd] != indices.shape[:bd]:
        raise _invalid(f"params.shape[:{bd}] = {list(params.shape[:bd])} must equal "
                       f"indices.shape[:{bd}] = {list(indices.shape[:bd])} (batch_dims={bd})")
    batch = params.shape[:bd]
    p = params.reshape((-1, *params.shape[bd:]))
    i = indices.reshape((-1, *indices.shape[bd:]))
    parts = [np.take(p[b], i[b], axis=a - bd) for b in range(p.shape[0])]
    inner = (*params.shape[bd:a], *indices.shape[bd:], *params.shape[a + 1:])
    if not parts:
        return np.zeros((*batch, *inner), dtype=params.dtype)
    return np.stack(parts).reshape((*batch, *inner))


def _nd_index(indices, shape, what: str):
    m = indices.shape[-1]
    flat = indices.reshape(-1, m)
    bounds = np.asarray(shape[:m])
    bad = np.any((flat < 0) | (flat >= bounds), axis=1)
    if np.any(bad):
        k = int(np.argmax(bad))
        pos = np.unravel_index(k, indices.shape[:-1])
        raise _invalid(f"indices[{_fmt_index(pos)}] = {flat[k].tolist()} does not index into "
                       f"{what} shape {list(shape)}")
    return tuple(np.moveaxis(indices, -1, 0))


@cpu_kernel("GatherNd")
def gather_nd(params, indices):
    params, indices = np.asarray(params), np.asarray(indices)
    m = indices.shape[-1]
    if m > params.ndim:
        raise _invalid(f"index innermost dimension length must be <= params rank; saw: "
                       f"{m} vs. {params.ndim}")
    if m == 0:
        return np.broadcast_to(params, indices.shape[:-1] + params.shape).copy()
    return params[_nd_index(indices, params.shape, "param")]


@cpu_kernel("ScatterNd")
def scatter_nd(indices, updates, shape):
    indices, updates = np.asarray(indices), np.asarray(updates)
    shape = tuple(int(d) for d in np.reshape(shape, -1))
    m = indices.shape[-1]
    want = indices.shape[:-1] + shape[m:]
    if updates.shape != want:
        raise _invalid(f"updates must have shape {list(want)} (indices.shape[:-1] + "
                       f"shape[{m}:]), got {list(updates.shape)}")
    # strings start empty and duplicates concatenate, as in TensorFlow
    out = (np.full(shape, b"", dtype=object) if updates.dtype == object
           else np.zeros(shape, dtype=updates.dtype))
    np.add.at(out, _nd_index(indices, shape, "output"), updates)
    return out


@cpu_kernel("Where")
def where(cond):
    return np.argwhere(np.asarray(cond)).astype(np.int64)


@cpu_kernel("Select")
def select(cond, x, y):
    cond, x, y = np.asarray(cond), np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        raise _invalid(f"'then' and 'else' must have the same size, but received: "
                       f"{list(x.shape)} vs. {list(y.shape)}")
    if cond.ndim == 1 and x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise _invalid(f"Number of batches of 'then' must match size of 'cond', but saw: "
                           f"{x.shape[0]} vs. {cond.shape[0]}")
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    elif cond.ndim and cond.shape != x.shape:
        raise _invalid(f"'cond' and 'then' must have the same shape (or 'cond' be a scalar or "
                       f"a vector over the first dimension), got {list(cond.shape)} vs. "
                       f"{list(x.shape)}")
    return np.asarray(np.where(cond, x, y), dtype=x.dtype)


@cpu_kernel("SelectV2")
def select_v2(cond, x, y):
    x = np.asarray(x)
    return np.asarray(np.where(cond, x, y), dtype=x.dtype)


@cpu_kernel("Range")
def range_(start, limit, delta):
    try:
        return range_numpy(start, limit, delta, np.asarray(start).dtype)
    except ValueError as e:
        raise _invalid(str(e)) from None


@cpu_kernel("LinSpace")
def linspace(start, stop, num):
    n = int(num)
    if n <= 0:
        raise _invalid(f"Requires num > 0: {n}")
    start = np.asarray(start)
    return np.linspace(start, stop, n, dtype=start.dtype)


@cpu_kernel("OneHot")
def one_hot(indices, depth, on_value, off_value, *, axis):
    depth = int(depth)
    if depth < 0:
        raise _invalid(f"depth must be non-negative, got: {depth}")
    on_value = np.asarray(on_value)
    hit = np.expand_dims(np.asarray(indices), -1) == np.arange(depth)
    out = np.where(hit, on_value, off_value).astype(on_value.dtype, copy=False)
    return out if axis == -1 else np.moveaxis(out, -1, axis)


@cpu_kernel("Unique", dtypes=(np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                              np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_,
                              np.object_))  # no complex kernel in TensorFlow
def unique(x, *, out_idx):
    x = np.asarray(x)
    if x.size == 0:
        return x.copy(), np.zeros(0, dtype=out_idx.as_numpy_dtype)
    _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return x[first[order]], rank[inverse.reshape(-1)].astype(out_idx.as_numpy_dtype)


@cpu_kernel("InvertPermutation")
def invert_permutation(x):
    x = np.asarray(x)
    n = x.shape[0]
    if sorted(x.tolist()) != list(range(n)):
        raise _invalid(f"x is not a valid permutation of 0..{n - 1}: {x.tolist()}")
    out = np.empty_like(x)
    out[x] = np.arange(n, dtype=x.dtype)
    return out
