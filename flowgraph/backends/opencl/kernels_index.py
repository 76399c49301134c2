"""OpenCL kernels for indexing: GatherV2, ScatterNd (a segment sum), Select/SelectV2, Fill.

Gathers, selects and fills move elements without computing on them, so their programs
are built per element size (`_MOVE`: 1, 4 or 8 bytes) rather than per dtype: float64
moves as ``ulong`` even on a device without ``cl_khr_fp64``.

- GatherV2 views params as ``[B, O, A, N]`` (batch, outer, gathered axis, inner) and the
  indices as ``[B, I]``; one work-item per output element. A first kernel checks every
  index against ``[0, A)`` and records the first bad position with an integer
  ``atomic_min``; the host reads that one flag back (one wait for the queue) and raises
  InvalidArgumentError with the CPU kernel's message before the gather is launched.
- ScatterNd sums update rows into output rows. Floating-point additions do not commute
  bit for bit, so there are no float atomics: the indices are read back (one wait; they
  are validated there with the CPU kernel's message), stably sorted by target row on the
  host, and one work-item per output element adds its rows' updates in index order, as
  NumPy's ``np.add.at`` does: results are deterministic and equal to the CPU's.
  `segment_sum` is that core, ready for an ``UnsortedSegmentSum`` op.
- Select/SelectV2 run one ``_nd`` kernel over up to `MAX_DIMS` broadcast dimensions with
  per-operand strides (`kernels_elementwise.collapse` merges dimensions first).
- Fill reads its scalar from the device (no wait); its ``dims``, like GatherV2's axis and
  ScatterNd's shape, is a small host value (`kernels_reduce.host_value`).

Range has no kernel: its length depends on its inputs' values, so TensorFlow keeps it
in host memory too.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.opencl import opencl_kernel
from flowgraph.backends.opencl.kernels_elementwise import (
    BOOL,
    CTYPES,
    F32,
    F64,
    I32,
    I64,
    MAX_DIMS,
    NUMERIC,
    _nd_index,
    broadcast_strides,
    check_dtype,
    check_size,
    collapse,
    contiguous,
    fill,
    get_kernel,
    grid,
    header,
    launch,
    nd_args,
    on_device,
    operand,
)
from flowgraph.backends.opencl.kernels_reduce import host_value
from flowgraph.framework.errors import InvalidArgumentError

MOVE_DTYPES = (F32, F64, I32, I64, BOOL)  # dtypes whose elements the movers copy
_MOVE = {1: "uchar", 4: "uint", 8: "ulong"}
_INDEX = {I32: "int", I64: "long"}
_NO_BAD = 2 ** 31 - 1
_SOURCES: dict[tuple, str] = {}


def _invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _fmt_index(pos) -> str:
    return ",".join(str(int(p)) for p in pos)


def _mover(dtype, op_type: str) -> str:
    dtype = np.dtype(dtype)
    if dtype not in MOVE_DTYPES:
        raise TypeError(f"{op_type}: the OpenCL backend has no kernel for dtype {dtype.name}; "
                        "place the op on the CPU")
    return _MOVE[dtype.itemsize]


def _index_ctype(dtype, op_type: str, what: str = "indices") -> str:
    dtype = np.dtype(dtype)
    if dtype not in _INDEX:
        raise TypeError(f"{op_type}: {what} must be int32 or int64, got {dtype.name}")
    return _INDEX[dtype]


# -- GatherV2 ---------------------------------------------------------------------------------
def _check_source(index: str) -> str:
    key = ("check", index)
    code = _SOURCES.get(key)
    if code is None:
        code = _SOURCES[key] = f"""
__kernel void check_index(__global int* bad, __global const {index}* idx, int ioff, int n,
                          long limit) {{
  int i = get_global_id(0);
  if (i < n) {{
    {index} v = idx[ioff + i];
    if (v < 0 || v >= limit) atomic_min(bad, i);
  }}
}}"""
    return code


def _gather_source(value: str, index: str) -> str:
    key = ("gather", value, index)
    code = _SOURCES.get(key)
    if code is None:
        code = _SOURCES[key] = f"""
#define V {value}
__kernel void gather(__global V* out, __global const V* p, int poff,
                     __global const {index}* idx, int ioff, int n, int O, int A, int I,
                     int N) {{
  int e = get_global_id(0);
  if (e >= n) return;
  int k = e % N, t = e / N;
  int i = t % I;
  t /= I;
  int o = t % O, b = t / O;
  long j = idx[ioff + b * I + i];
  out[e] = p[poff + ((long)(b * O + o) * A + j) * N + k];
}}"""
    return code


def check_indices(rt, indices, limit: int, op_type: str) -> None:
    """Raise InvalidArgumentError (the CPU kernel's message) when an element of device
    array `indices` is outside ``[0, limit)``: checked on the device, one flag read back."""
    if indices.size == 0:
        return
    check_size(indices.size, op_type)
    indices = contiguous(rt, indices)
    src = _check_source(_index_ctype(indices.dtype, op_type))
    flag = fill(rt, (1,), I32, _NO_BAD)
    ib, io, _ = operand(indices)
    launch(rt, get_kernel(rt, src, "check_index"), grid(indices.size), None, flag.data, ib,
           np.int32(io), np.int32(indices.size), np.int64(limit))
    first = int(flag.get()[0])  # waits for the queue
    if first != _NO_BAD:
        value = int(indices.reshape(-1)[first:first + 1].get()[0])
        pos = np.unravel_index(first, indices.shape)
        raise _invalid(f"indices[{_fmt_index(pos)}] = {value} is not in [0, {limit})")


@opencl_kernel("GatherV2", dtypes=MOVE_DTYPES, fresh=True)
def gather(params, indices, axis, *, batch_dims=0, op=None):
    """``np.take(params, indices, axis)`` on the device, with TensorFlow's batch_dims."""
    a = int(np.reshape(host_value(axis, op, 2), -1)[0])
    rt, (params, indices) = on_device(params, indices)
    value = _mover(params.dtype, "GatherV2")
    index = _index_ctype(indices.dtype, "GatherV2")
    if not -params.ndim <= a < params.ndim:
        raise _invalid(f"Expected axis in the range [{-params.ndim}, {params.ndim}), but got {a}")
    a = a + params.ndim if a < 0 else a
    bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    check_indices(rt, indices, params.shape[a], "GatherV2")
    if bd and params.shape[:bd] != indices.shape[:bd]:
        raise _invalid(f"params.shape[:{bd}] = {list(params.shape[:bd])} must equal "
                       f"indices.shape[:{bd}] = {list(indices.shape[:bd])} (batch_dims={bd})")
    shape = (*params.shape[:a], *indices.shape[bd:], *params.shape[a + 1:])
    out = rt.empty(shape, params.dtype)
    if out.size == 0:
        return out
    for n in (params.size, out.size):
        check_size(n, "GatherV2")
    params, indices = contiguous(rt, params), contiguous(rt, indices)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in (
        params.shape[bd:a], indices.shape[bd:], params.shape[a + 1:])]
    pb, po, _ = operand(params)
    ib, io, _ = operand(indices)
    knl = get_kernel(rt, _gather_source(value, index), "gather")
    launch(rt, knl, grid(out.size), None, out.data, pb, np.int32(po), ib, np.int32(io),
           np.int32(out.size), np.int32(sizes[0]), np.int32(params.shape[a]),
           np.int32(sizes[1]), np.int32(sizes[2]))
    return out


# -- ScatterNd (segment sum) ------------------------------------------------------------------
SUM_DTYPES = (*NUMERIC, I64)


def _segment_source(dtype: np.dtype) -> str:
    key = ("segment", dtype)
    code = _SOURCES.get(key)
    if code is None:
        code = _SOURCES[key] = header(dtype) + f"""
#define T {CTYPES[dtype]}
__kernel void segment_sum(__global T* out, __global const T* upd, int uoff,
                          __global const int* perm, __global const int* starts, int n,
                          int N) {{
  int e = get_global_id(0);
  if (e >= n) return;
  int s = e / N, k = e % N;
  T acc = 0;
  for (int j = starts[s]; j < starts[s + 1]; ++j) acc += upd[uoff + (long)perm[j] * N + k];
  out[e] = acc;
}}"""
    return code


def segment_sum(rt, data, segment_ids: np.ndarray, num_segments: int, op_type: str):
    """``out[s] = sum of data[i] over i with segment_ids[i] == s`` (rows in index order).

    `data` is a device array ``[n, ...]``; `segment_ids` a host int array of ``n`` ids,
    already checked to lie in ``[0, num_segments)``. Returns a fresh device array
    ``[num_segments, ...]``; segments with no rows are 0.
    """
    check_dtype(rt, data.dtype, op_type)
    out = rt.empty((num_segments, *data.shape[1:]), data.dtype)
    if out.size == 0:
        return out
    for n in (data.size, out.size, len(segment_ids) + 1, num_segments + 1):
        check_size(n, op_type)
    if data.shape[0] == 0:
        return fill(rt, out.shape, out.dtype, 0)
    ids = np.asarray(segment_ids, np.int64).reshape(-1)
    perm = np.argsort(ids, kind="stable").astype(np.int32)
    starts = np.zeros(num_segments + 1, np.int32)
    np.cumsum(np.bincount(ids, minlength=num_segments), out=starts[1:])
    data = contiguous(rt, data)
    perm_d, starts_d = rt.to_device(perm), rt.to_device(starts)
    db, do, _ = operand(data)
    inner = out.size // num_segments
    knl = get_kernel(rt, _segment_source(data.dtype), "segment_sum")
    launch(rt, knl, grid(out.size), None, out.data, db, np.int32(do), perm_d.data,
           starts_d.data, np.int32(out.size), np.int32(inner))
    return out


# Selected by the updates' dtype, or the indices' when the updates are integers
# (`placement.kernel_dtype`).
@opencl_kernel("ScatterNd", dtypes=SUM_DTYPES, fresh=True)
def scatter_nd(indices, updates, shape, *, op=None):
    """A zero tensor of `shape` plus `updates` added at `indices` (duplicates add up)."""
    shape = tuple(int(d) for d in np.reshape(host_value(shape, op, 2), -1))
    rt, (indices, updates) = on_device(indices, updates)
    _index_ctype(indices.dtype, "ScatterNd")
    if np.dtype(updates.dtype) not in SUM_DTYPES:
        raise TypeError(f"ScatterNd: the OpenCL backend has no kernel for dtype "
                        f"{np.dtype(updates.dtype).name}; place the op on the CPU")
    m = indices.shape[-1]
    want = indices.shape[:-1] + shape[m:]
    if updates.shape != want:
        raise _invalid(f"updates must have shape {list(want)} (indices.shape[:-1] + "
                       f"shape[{m}:]), got {list(updates.shape)}")
    n = int(np.prod(indices.shape[:-1], dtype=np.int64))
    flat = indices.get().reshape(n, m).astype(np.int64)  # waits for the queue
    bounds = np.asarray(shape[:m], np.int64)
    bad = np.any((flat < 0) | (flat >= bounds), axis=1)
    if np.any(bad):
        k = int(np.argmax(bad))
        pos = np.unravel_index(k, indices.shape[:-1])
        raise _invalid(f"indices[{_fmt_index(pos)}] = {flat[k].tolist()} does not index into "
                       f"output shape {list(shape)}")
    rows = int(np.prod(shape[:m], dtype=np.int64))
    strides = np.cumprod((*shape[1:m], 1)[::-1])[::-1].astype(np.int64)
    ids = flat @ strides if m else np.zeros(n, np.int64)
    data = updates.reshape((n, *shape[m:])) if updates.flags.c_contiguous else \
        contiguous(rt, updates).reshape((n, *shape[m:]))
    return segment_sum(rt, data, ids, rows, "ScatterNd").reshape(shape)


# -- Select, SelectV2 -------------------------------------------------------------------------
def _select_source(value: str) -> str:
    key = ("select", value)
    code = _SOURCES.get(key)
    if code is None:
        dims = ", ".join(f"int d{d}" for d in range(1, MAX_DIMS))
        strides = ", ".join(f"int s{k}_{d}" for k in range(3) for d in range(MAX_DIMS))
        code = _SOURCES[key] = f"""
#define V {value}
__kernel void select_nd(__global V* out, __global const uchar* c, int off0,
                        __global const V* x, int off1, __global const V* y, int off2, int n,
                        {dims}, {strides}) {{
  int i = get_global_id(0);
  if (i < n) {{
      {_nd_index(3)}
    out[i] = c[o0] ? x[o1] : y[o2];
  }}
}}"""
    return code


def _run_select(rt, cond, x, y, shape, cond_strides, op_type: str):
    value = _mover(x.dtype, op_type)
    if y.dtype != x.dtype:
        raise TypeError(f"{op_type}: 'then' and 'else' have dtypes {x.dtype} and {y.dtype}")
    if np.dtype(cond.dtype) != BOOL:
        raise TypeError(f"{op_type}: 'cond' must be bool, got {np.dtype(cond.dtype).name}")
    out = rt.empty(shape, x.dtype)
    if out.size == 0:
        return out
    check_size(out.size, op_type)
    strides = [cond_strides, broadcast_strides(x, shape), broadcast_strides(y, shape)]
    dims, strides = collapse(shape, strides)
    args = []
    for v in (cond, x, y):
        buf, off, _ = operand(v)
        args += [buf, np.int32(off)]
    knl = get_kernel(rt, _select_source(value), "select_nd")
    launch(rt, knl, grid(out.size), None, out.data, *args, np.int32(out.size),
           *nd_args(dims or (1,), strides if dims else [(0,)] * 3))
    return out


@opencl_kernel("Select", dtypes=(BOOL,), fresh=True)
def select(cond, x, y):
    """``x`` where `cond`, else ``y``; `cond` has x's shape, is a scalar, or is a vector
    over x's first dimension (TensorFlow 1's ``tf.where``)."""
    rt, (cond, x, y) = on_device(cond, x, y)
    if x.shape != y.shape:
        raise _invalid(f"'then' and 'else' must have the same size, but received: "
                       f"{list(x.shape)} vs. {list(y.shape)}")
    if cond.ndim == 1 and x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise _invalid(f"Number of batches of 'then' must match size of 'cond', but saw: "
                           f"{x.shape[0]} vs. {cond.shape[0]}")
        cond_strides = (operand(cond)[2][0],) + (0,) * (x.ndim - 1)
    elif cond.ndim and cond.shape != x.shape:
        raise _invalid(f"'cond' and 'then' must have the same shape (or 'cond' be a scalar or "
                       f"a vector over the first dimension), got {list(cond.shape)} vs. "
                       f"{list(x.shape)}")
    else:
        cond_strides = broadcast_strides(cond, x.shape)
    return _run_select(rt, cond, x, y, x.shape, cond_strides, "Select")


@opencl_kernel("SelectV2", dtypes=(BOOL,), fresh=True)
def select_v2(cond, x, y):
    """``x`` where `cond`, else ``y``, all three broadcast together."""
    rt, (cond, x, y) = on_device(cond, x, y)
    try:
        shape = np.broadcast_shapes(cond.shape, x.shape, y.shape)
    except ValueError:
        raise _invalid(f"SelectV2: shapes {list(cond.shape)}, {list(x.shape)} and "
                       f"{list(y.shape)} cannot be broadcast together") from None
    return _run_select(rt, cond, x, y, shape, broadcast_strides(cond, shape), "SelectV2")


# -- Fill -------------------------------------------------------------------------------------
def _fill_source(value: str) -> str:
    key = ("fill", value)
    code = _SOURCES.get(key)
    if code is None:
        code = _SOURCES[key] = f"""
#define V {value}
__kernel void fill_from(__global V* out, __global const V* v, int voff, int n) {{
  int i = get_global_id(0);
  if (i < n) out[i] = v[voff];
}}"""
    return code


# Selected by the value's dtype, or the dims' when the value is not floating.
@opencl_kernel("Fill", dtypes=MOVE_DTYPES, fresh=True)
def fill_(dims, value, *, op=None):
    """A tensor of shape `dims` filled with scalar `value` (read on the device)."""
    dims = [int(d) for d in np.reshape(host_value(dims, op, 0), -1)]
    if any(d < 0 for d in dims):
        raise _invalid(f"dims must be non-negative, got {dims}")
    rt, (value,) = on_device(value)
    if value.size != 1:
        raise _invalid(f"Fill: value must be a scalar, got shape {list(value.shape)}")
    out = rt.empty(dims, value.dtype)
    if out.size == 0:
        return out
    check_size(out.size, "Fill")
    vb, vo, _ = operand(value)
    knl = get_kernel(rt, _fill_source(_mover(value.dtype, "Fill")), "fill_from")
    launch(rt, knl, grid(out.size), None, out.data, vb, np.int32(vo), np.int32(out.size))
    return out


# -- SegmentSum, UnsortedSegmentSum --------------------------------------------------------
# The ids (and num_segments) are host inputs: checked on the host, then `segment_sum`
# adds each segment's rows in index order, as the CPU's ``np.add.at`` does (bit-equal).
# Rows with a negative id are dropped (TensorFlow's unsorted segment ops) by sending them
# to one extra segment that is sliced off.
def _rows(rt, data, ids: np.ndarray):
    data = contiguous(rt, data)
    return data.reshape((ids.size, *data.shape[ids.ndim:]))


@opencl_kernel("UnsortedSegmentSum", dtypes=NUMERIC, fresh=True, host_inputs=(1, 2))
def unsorted_segment_sum(data, segment_ids, num_segments):
    rt, (data,) = on_device(data)
    ids = np.asarray(segment_ids)
    n = int(np.reshape(num_segments, -1)[0])
    if tuple(data.shape[:ids.ndim]) != ids.shape:
        raise _invalid(f"UnsortedSegmentSum: data.shape {list(data.shape)} must start with "
                       f"segment_ids.shape {list(ids.shape)}")
    if n < 0:
        raise _invalid(f"UnsortedSegmentSum: num_segments must be >= 0, got {n}")
    if ids.size and int(ids.max()) >= n:
        raise _invalid(f"UnsortedSegmentSum: segment_ids contain {int(ids.max())}, not in "
                       f"[0, num_segments = {n}); raise num_segments")
    flat = ids.reshape(-1).astype(np.int64)
    dropped = bool(ids.size) and int(flat.min()) < 0
    if dropped:
        flat = np.where(flat < 0, n, flat)
    out = segment_sum(rt, _rows(rt, data, ids), flat, n + int(dropped),
                      "UnsortedSegmentSum")
    return out[:n] if dropped else out


@opencl_kernel("SegmentSum", dtypes=NUMERIC, fresh=True, host_inputs=(1,))
def segment_sum_sorted(data, segment_ids):
    rt, (data,) = on_device(data)
    ids = np.asarray(segment_ids).reshape(-1)
    if len(data.shape) == 0 or ids.size != data.shape[0]:
        raise _invalid(f"SegmentSum: segment_ids should be the same size as dimension 0 of "
                       f"data, got {ids.size} ids for data of shape {list(data.shape)}")
    if ids.size and (ids[0] < 0 or np.any(ids[1:] < ids[:-1])):
        bad = 0 if ids[0] < 0 else int(np.argmax(ids[1:] < ids[:-1])) + 1
        raise _invalid(f"SegmentSum: segment ids are not increasing (or are negative): "
                       f"segment_ids[{bad}] = {int(ids[bad])}; sort the rows by id or use "
                       "tf.unsorted_segment_sum")
    n = int(ids[-1]) + 1 if ids.size else 0
    return segment_sum(rt, _rows(rt, data, ids), ids.astype(np.int64), n, "SegmentSum")
