"""OpenCL kernels for reductions (Sum, Mean, Max, Min, Prod), ArgMax/ArgMin, BiasAddGrad
and AddN (at the end).

One template (`_reduce_source`) per dtype holds two kernels per combiner:

- ``rows_<op>``: ``[A, R] -> [A, P]``: one work-group of `GROUP` items per (row, chunk),
  items stride over the chunk, then a tree in local memory;
- ``cols_<op>``: ``[A, R, K] -> [A, P, K]``: one work-item per (a, chunk, k), looping over
  the chunk (consecutive items read consecutive k: coalesced).

A reduction over any set of axes runs as passes: the input (made contiguous) has its
dimensions merged into alternating kept/reduced groups, and each pass reduces the last
remaining reduced group, viewed as ``[A, R, K]`` (``K == 1``: rows). A long reduced group
with few outputs is split into `P` chunks reduced again in a second pass, so that a full
reduction uses many work-groups and sums short runs (closer to NumPy's pairwise sum).
Mean divides by the element count in its last pass.

ArgMax/ArgMin (`_arg_source`) view the input as ``[A, R, K]`` around the axis: with
``K == 1`` one work-group per row keeps a (value, index) pair per item and merges the
pairs in local memory, the smaller index winning ties; otherwise one work-item per
(a, k) walks R. NaN never wins: it counts as the worst value (as -inf for ArgMax), as in
TensorFlow.

The reduction axes come as the op's second input. When it is produced by a ``Const`` op
(the usual ``reduce_sum(x, axis=1)``), the axes are read from the constant's value at
bind time, so the host never waits for the device; otherwise (a computed axes tensor)
the device copy is read back with ``.get()``, which waits for the queue.
"""

from __future__ import annotations

import weakref

import numpy as np

from flowgraph.backends.kernel_util import bias_grad_axes, reduction_axes
from flowgraph.backends.opencl import opencl_kernel
from flowgraph.backends.opencl.kernels_elementwise import (
    CTYPES,
    I32,
    I64,
    NUMERIC,
    check_dtype,
    check_size,
    contiguous,
    copy,
    fill,
    get_kernel,
    grid,
    header,
    launch,
    on_device,
    operand,
    vector_aligned,
)
from flowgraph.backends.opencl.launches import keep, make
from flowgraph.framework.errors import InvalidArgumentError

GROUP = 64  # work-items of a rows work-group
CHUNK = 4096  # longest run one work-group (rows) or work-item (cols) reduces in one pass

_COMBINE = {
    "sum": "a + b",
    "max": "(a >= b || ISNAN(a)) ? a : b",  # NaN propagates, as np.max
    "min": "(a <= b || ISNAN(a)) ? a : b",
    "prod": "a * b",
}


def _identity(op: str, dtype: np.dtype) -> str:
    if op == "sum":
        return "0"
    if op == "prod":
        return "1"
    if dtype.kind == "f":
        return "-INFINITY" if op == "max" else "INFINITY"
    return "INT_MIN" if op == "max" else "INT_MAX"


_SOURCES: dict[np.dtype, str] = {}


def _reduce_source(dtype: np.dtype) -> str:
    code = _SOURCES.get(dtype)
    if code is not None:
        return code
    parts = [header(dtype), f"#define T {CTYPES[dtype]}"]
    for op, combine in _COMBINE.items():
        ident = _identity(op, dtype)
        parts.append(f"""
inline T combine_{op}(T a, T b) {{ return {combine}; }}

__kernel __attribute__((reqd_work_group_size({GROUP}, 1, 1)))
void rows_{op}(__global T* out, __global const T* x, int xoff, int R, int chunk, int P,
               int count) {{
  __local T part[{GROUP}];
  int g = get_group_id(0), l = get_local_id(0);
  int row = g / P, c = g % P;
  int begin = c * chunk, end = min(R, begin + chunk);
  __global const T* src = x + xoff + (long)row * R;
  T acc = {ident};
  for (int j = begin + l; j < end; j += {GROUP}) acc = combine_{op}(acc, src[j]);
  part[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = {GROUP} / 2; s > 0; s >>= 1) {{
    if (l < s) part[l] = combine_{op}(part[l], part[l + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (l == 0) out[g] = count > 0 ? part[0] / (T)count : part[0];
}}

__kernel void cols_{op}(__global T* out, __global const T* x, int xoff, int A, int R, int K,
                        int chunk, int P, int count) {{
  int i = get_global_id(0);
  if (i >= A * P * K) return;
  int k = i % K, t = i / K, c = t % P, a = t / P;
  int begin = c * chunk, end = min(R, begin + chunk);
  __global const T* src = x + xoff + (long)a * R * K + k;
  T acc = {ident};
  for (int r = begin; r < end; ++r) acc = combine_{op}(acc, src[(long)r * K]);
  out[i] = count > 0 ? acc / (T)count : acc;
}}""")
    parts.append(f"""
#define T16 {CTYPES[dtype]}16
__kernel void cols16_sum(__global T* out, __global const T* x, int xoff, int A, int R, int K,
                         int chunk, int P, int count) {{
  int i = get_global_id(0) * 16;
  if (i >= A * P * K) return;
  int k = i % K, t = i / K, c = t % P, a = t / P;
  int begin = c * chunk, end = min(R, begin + chunk);
  __global const T* src = x + xoff + (long)a * R * K + k;
  T16 acc = (T16)(0);
  for (int r = begin; r < end; ++r) acc += *(__global const T16*)(src + (long)r * K);
  *(__global T16*)(out + i) = count > 0 ? acc / (T)count : acc;
}}""")
    code = _SOURCES[dtype] = "\n".join(parts)
    return code


def _cols16(rt, op: str, K: int, x) -> bool:
    """Whether a column pass over `x` takes ``cols16_sum``: a sum on a CPU-type device
    (PoCL), 16 columns per work-item in one vector register, aligned loads only. PoCL
    does not vectorize ``cols_<op>`` across work-items (the column sum of a 256 x 512
    matrix, the BiasAddGrad of a dense layer, ran 9x slower); the order of the additions
    is the same."""
    return op == "sum" and not rt.is_gpu and K % 16 == 0 and vector_aligned(x)


def _groups(shape, axes):
    """Merge `shape`'s dimensions into [(size, reduced)] runs, dropping size-1 dims."""
    runs: list[list] = []
    for i, d in enumerate(shape):
        if d == 1:
            continue
        red = i in axes
        if runs and runs[-1][1] == red:
            runs[-1][0] *= d
        else:
            runs.append([d, red])
    return runs


def _pass(rt, x, op: str, A: int, R: int, K: int, count: int, record=None):
    """Reduce contiguous `x` viewed as [A, R, K] over R; returns a fresh [A * K] array.
    `record`: a list receiving each pass's `launches.Launch` (buffers: output, input)."""
    dtype = x.dtype
    src = _reduce_source(dtype)
    P = 1
    if R > CHUNK and A * K < 4096:
        P = -(-R // CHUNK)
    chunk = -(-R // P)
    last = P == 1
    out = rt.empty((A * P * K,), dtype)
    buf, off, _ = operand(x)
    cnt = np.int32(count if last else 0)
    if K == 1:
        name, sizes = f"rows_{op}", ((A * P * GROUP,), (GROUP,))
        args = (out.data, buf, np.int32(off), np.int32(R), np.int32(chunk), np.int32(P), cnt)
    else:
        name = "cols16_sum" if _cols16(rt, op, K, x) else f"cols_{op}"
        sizes = (grid(A * P * K // 16 if name == "cols16_sum" else A * P * K), None)
        args = (out.data, buf, np.int32(off), np.int32(A), np.int32(R), np.int32(K),
                np.int32(chunk), np.int32(P), cnt)
    if record is None:
        launch(rt, get_kernel(rt, src, name), *sizes, *args)
    else:
        entry = make(rt, src, name, *sizes, args, out.shape, dtype)
        entry(out.base_data, buf)
        record.append(entry)
    if last:
        return out
    return _pass(rt, out, op, A, P, K, count, record)


def _repeat(rt, passes, x):
    """The output of the reduction whose passes were kept (`reduce`) for device array `x`:
    each pass's output from the pool, the last one of the result's shape."""
    src = x.base_data
    for entry in passes:
        out = rt.empty(entry.shape, entry.dtype)
        entry(out.base_data, src)
        src = out.base_data
    return out


def reduce(rt, x, axes, op: str, mean: bool, keep_dims: bool, op_type: str):
    """`x` reduced with `op` over the sorted tuple `axes` (a fresh device array).

    A reduction of a contiguous `x` keeps its passes (`launches`) under its signature,
    so that a repeated call only allocates and enqueues."""
    sig = (op_type, op, mean, keep_dims, tuple(axes), x.shape, x.strides, x.offset, x.dtype)
    kept = rt.launches.get(sig)
    # a first pass in vector form also needs x's address aligned, which a host array
    # wrapped without a copy need not be (a fed array: `vector_aligned`)
    if kept is not None and (not kept[1] or vector_aligned(x)):
        return _repeat(rt, kept[0], x)
    check_dtype(rt, x.dtype, op_type)
    check_size(x.size, op_type)
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep_dims \
        else tuple(d for i, d in enumerate(x.shape) if i not in axes)
    out_size = int(np.prod(out_shape, dtype=np.int64))
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if out_size == 0:
        return rt.empty(out_shape, x.dtype)
    if count == 0:
        if mean:
            value = np.nan if x.dtype.kind == "f" else 0
        elif op == "sum":
            value = 0
        elif op == "prod":
            value = 1
        elif x.dtype.kind == "f":
            value = -np.inf if op == "max" else np.inf
        else:
            info = np.iinfo(x.dtype)
            value = info.min if op == "max" else info.max
        return fill(rt, out_shape, x.dtype, value)
    runs = _groups(x.shape, set(axes))
    reduced = [i for i, (_, red) in enumerate(runs) if red]
    if not reduced:  # only size-1 dimensions reduced: a copy
        return copy(rt, x).reshape(out_shape)
    cur = contiguous(rt, x)
    record = [] if cur is x else None  # a copy first: nothing kept
    sizes = [d for d, _ in runs]
    for n_done, gi in enumerate(reversed(reduced)):
        A = int(np.prod(sizes[:gi], dtype=np.int64))
        K = int(np.prod(sizes[gi + 1:], dtype=np.int64))
        final = n_done == len(reduced) - 1
        cur = _pass(rt, cur, op, A, sizes[gi], K, count if (mean and final) else 0, record)
        sizes[gi] = 1
    if record:
        record[-1].shape = out_shape  # the last pass allocates the result's shape at once
        keep(rt, sig, (tuple(record), record[0].knl.function_name == "cols16_sum"))
    return cur.reshape(out_shape)


def host_value(value, op, index: int) -> np.ndarray:
    """The host value of input `index` of `op` (axes, dims, shapes: small constants).

    When that input is produced by a ``Const`` op, its value is read from the constant at
    bind time and the host never waits for the device; otherwise the device copy `value`
    is read back with ``.get()``, which waits for the queue.

    >>> host_value(np.array([1, 2]), None, 1).tolist()
    [1, 2]
    """
    src = op.inputs[index].op if op is not None and len(op.inputs) > index else None
    if src is not None and src.type == "Const":
        return np.asarray(src.attrs["value"])
    if hasattr(value, "get"):
        return value.get()  # waits for the queue: only for computed inputs
    return np.asarray(value)


# op -> {input shape: axes}, for reductions whose axes are a Const: reading and
# normalizing them cost 2.8 µs of a 6.4 µs repeated Sum (host side).
_CONST_AXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _axes_of(x, axes, op) -> tuple[int, ...]:
    """The sorted non-negative reduction axes (see the module docstring); computed once
    per op and input shape when the axes come from a ``Const`` op."""
    if op is None:
        return reduction_axes(x.shape, host_value(axes, op, 1))
    known = _CONST_AXES.get(op)
    if known is not None:
        found = known.get(x.shape)
        if found is not None:
            return found
    found = reduction_axes(x.shape, host_value(axes, op, 1))
    if len(op.inputs) > 1 and op.inputs[1].op.type == "Const":
        if known is None:
            known = _CONST_AXES.setdefault(op, {})
        if len(known) < 64:
            known[x.shape] = found
    return found


def _register(op_type: str, combiner: str, mean: bool) -> None:
    def kernel(x, axes, *, keep_dims=False, op=None):
        ax = _axes_of(x, axes, op)
        rt, (x,) = on_device(x)
        return reduce(rt, x, ax, combiner, mean, keep_dims, op_type)

    kernel.__name__ = f"opencl_{op_type.lower()}"
    opencl_kernel(op_type, dtypes=NUMERIC, fresh=True)(kernel)


_register("Sum", "sum", False)
_register("Mean", "sum", True)
_register("Max", "max", False)
_register("Min", "min", False)
_register("Prod", "prod", False)


@opencl_kernel("BiasAddGrad", dtypes=NUMERIC, fresh=True)
def bias_add_grad(dy, *, data_format="NHWC"):
    axes = bias_grad_axes(dy.shape, data_format)
    rt, (dy,) = on_device(dy)
    return reduce(rt, dy, axes, "sum", False, False, "BiasAddGrad")



# -- ArgMax, ArgMin ---------------------------------------------------------------------------
_ARG_SOURCES: dict[np.dtype, str] = {}
_INDEX_CTYPES = {I32: "int", I64: "long"}


def _arg_source(dtype: np.dtype) -> str:
    code = _ARG_SOURCES.get(dtype)
    if code is not None:
        return code
    parts = [header(dtype), f"#define T {CTYPES[dtype]}\n#define G {GROUP}"]
    floating = np.dtype(dtype).kind == "f"
    for op, cmp, worst in (("max", ">", "-INFINITY"), ("min", "<", "INFINITY")):
        worst_a = f"ISNAN(a) || a == {worst}" if floating else "0"
        worst_b = f"ISNAN(b) || b == {worst}" if floating else "0"
        parts.append(f"""
/* Whether (b, bi) beats (a, ai): an index < 0 is no candidate; NaN never wins, counting as
   the worst value (as -inf for max); the smaller index wins ties. */
inline int better_{op}(T b, int bi, T a, int ai) {{
  if (bi < 0) return 0;
  if (ai < 0) return 1;
  int wa = {worst_a}, wb = {worst_b};
  if (wa || wb) return wa && (!wb || bi < ai);
  return b {cmp} a || (b == a && bi < ai);
}}""")
        for out in _INDEX_CTYPES.values():
            parts.append(f"""
__kernel __attribute__((reqd_work_group_size(G, 1, 1)))
void arg{op}_rows_{out}(__global {out}* out, __global const T* x, int xoff, int R) {{
  __local T pv[G];
  __local int pi[G];
  int row = get_group_id(0), l = get_local_id(0);
  __global const T* src = x + xoff + (long)row * R;
  T v = 0;
  int vi = -1;
  for (int j = l; j < R; j += G)
    if (better_{op}(src[j], j, v, vi)) {{ v = src[j]; vi = j; }}
  pv[l] = v;
  pi[l] = vi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = G / 2; s > 0; s >>= 1) {{
    if (l < s && better_{op}(pv[l + s], pi[l + s], pv[l], pi[l])) {{
      pv[l] = pv[l + s];
      pi[l] = pi[l + s];
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (l == 0) out[row] = pi[0];
}}

__kernel void arg{op}_cols_{out}(__global {out}* out, __global const T* x, int xoff, int n,
                                 int R, int K) {{
  int i = get_global_id(0);
  if (i >= n) return;
  __global const T* src = x + xoff + (long)(i / K) * R * K + i % K;
  T v = src[0];
  int vi = 0;
  for (int r = 1; r < R; ++r)
    if (better_{op}(src[(long)r * K], r, v, vi)) {{ v = src[(long)r * K]; vi = r; }}
  out[i] = vi;
}}""")
    code = _ARG_SOURCES[dtype] = "\n".join(parts)
    return code


def arg_reduce(rt, x, axis: int, which: str, out_dtype):
    """The index of the max (`which` "max") or min of `x` along `axis`, as `out_dtype`."""
    out_dtype = np.dtype(out_dtype)
    shape = x.shape
    out = rt.empty(shape[:axis] + shape[axis + 1:], out_dtype)
    if out.size == 0:
        return out
    check_size(x.size, f"Arg{which.capitalize()}")
    x = contiguous(rt, x)
    R = shape[axis]
    K = int(np.prod(shape[axis + 1:], dtype=np.int64))
    xb, xo, _ = operand(x)
    name = f"arg{which}_{{}}_{_INDEX_CTYPES[out_dtype]}"
    if K == 1:
        knl = get_kernel(rt, _arg_source(x.dtype), name.format("rows"))
        launch(rt, knl, (out.size * GROUP,), (GROUP,), out.data, xb, np.int32(xo),
               np.int32(R))
    else:
        knl = get_kernel(rt, _arg_source(x.dtype), name.format("cols"))
        launch(rt, knl, grid(out.size), None, out.data, xb, np.int32(xo),
               np.int32(out.size), np.int32(R), np.int32(K))
    return out


def _register_arg(op_type: str, which: str) -> None:
    def kernel(x, axis, *, output_type, op=None):
        rt, (x,) = on_device(x)
        check_dtype(rt, x.dtype, op_type)
        a = int(np.reshape(host_value(axis, op, 1), -1)[0])
        if not -x.ndim <= a < x.ndim:
            raise InvalidArgumentError(
                None, None, f"ArgMax/ArgMin: axis {a} must be in the range [{-x.ndim}, "
                f"{x.ndim}) for an input of shape {list(x.shape)}")
        a %= x.ndim
        if x.shape[a] == 0:
            raise InvalidArgumentError(None, None, f"Reduction axis {a} is empty in shape "
                                                   f"{list(x.shape)}")
        out_dtype = np.dtype(output_type.as_numpy_dtype)
        if out_dtype not in _INDEX_CTYPES:
            raise TypeError(f"{op_type}: output_type must be int32 or int64, got "
                            f"{out_dtype.name}")
        return arg_reduce(rt, x, a, which, out_dtype)

    kernel.__name__ = f"opencl_{op_type.lower()}"
    opencl_kernel(op_type, dtypes=NUMERIC, fresh=True)(kernel)


_register_arg("ArgMax", "max")
_register_arg("ArgMin", "min")


# -- AddN -------------------------------------------------------------------------------------
# One launch adds up to ADD_N_MAX inputs, left to right as the CPU kernel does (so float
# results round the same); more inputs take further launches that add the next ones to
# the partial sum in place (each work-item reads its element before writing it).
ADD_N_MAX = 16  # a launch's inputs: OpenCL guarantees only 1,024 bytes of arguments
_ADD_N: dict[tuple[np.dtype, int], str] = {}


def _add_n_source(dtype: np.dtype, n: int) -> str:
    code = _ADD_N.get((dtype, n))
    if code is None:
        params = ", ".join(f"__global const T* a{k}, int o{k}" for k in range(n))
        total = "a0[o0 + i]"
        for k in range(1, n):
            total = f"({total} + a{k}[o{k} + i])"
        code = _ADD_N[(dtype, n)] = header(dtype) + f"""
#define T {CTYPES[dtype]}
__kernel void add_n(__global T* out, {params}, int n) {{
  int i = get_global_id(0);
  if (i < n) out[i] = (T)({total});
}}"""
    return code


@opencl_kernel("AddN", dtypes=NUMERIC, fresh=True)
def add_n(*inputs):
    """The elementwise sum of inputs of one shape (the gradient of a shared value)."""
    first = inputs[0]
    for i, x in enumerate(inputs[1:], 1):
        if tuple(x.shape) != tuple(first.shape):
            raise InvalidArgumentError(
                None, None, f"Inputs to AddN must have the same shape: input 0 is "
                f"{list(first.shape)}, input {i} is {list(x.shape)}")
    rt, xs = on_device(*inputs)
    check_dtype(rt, xs[0].dtype, "AddN")
    if len(xs) == 1:
        return copy(rt, xs[0])
    out = rt.empty(xs[0].shape, xs[0].dtype)
    if out.size == 0:
        return out
    check_size(out.size, "AddN")
    rest = [contiguous(rt, x) for x in xs]
    chunk = rest[:ADD_N_MAX]
    rest = rest[ADD_N_MAX:]
    while True:
        args = []
        for x in chunk:
            buf, off, _ = operand(x)
            args += [buf, np.int32(off)]
        knl = get_kernel(rt, _add_n_source(out.dtype, len(chunk)), "add_n")
        launch(rt, knl, grid(out.size), None, out.data, *args, np.int32(out.size))
        if not rest:
            return out
        chunk, rest = [out, *rest[:ADD_N_MAX - 1]], rest[ADD_N_MAX - 1:]
