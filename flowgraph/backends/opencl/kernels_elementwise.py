"""OpenCL kernels for elementwise math: unary ops, broadcasting binary ops, activation
gradients, BiasAdd, Cast, ZerosLike/OnesLike and Identity.

Every elementwise op is one C expression in a table (`_UNARY`, `_BINARY`); one template
(`_elementwise_source`) turns a table into one program per dtype holding, per op, a
``_flat`` kernel (contiguous operands of the output's shape) and an ``_nd`` kernel
(up to `MAX_DIMS` dimensions, per-operand element strides, 0 on broadcast dimensions),
so that all float32 unary ops cost one program build. Before launching, dimensions of
size 1 are dropped and adjacent dimensions that are contiguous in every operand are
merged (`collapse`): ``x[64, 32] + b[32]`` runs as a 2-D loop, ``x + 2.0`` as a 1-D one.

Kernels loop over their elements with a grid stride (`grid`), read operands at any
element offset and strides (views included), and write a fresh contiguous output from
the device's pool. float64 is registered only when every OpenCL device has
``cl_khr_fp64`` (`FLOATS`); int32 where the op is cheap and exact.

A call on device arrays keeps its launch under its signature (op, and each operand's
shape, strides, offset and dtype: `flowgraph.backends.opencl.launches`); the next call
with the same signature skips all of the above and only sets the buffers and enqueues.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.kernel_util import bias_channels
from flowgraph.backends.opencl import opencl_kernel
from flowgraph.backends.opencl._runtime import discover, runtime_of
from flowgraph.backends.opencl.launches import prepare

MAX_DIMS = 6
F32, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
BOOL = np.dtype(np.bool_)
CTYPES = {F32: "float", F64: "double", I32: "int", I64: "long", BOOL: "uchar"}
_FP64_PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"


def _floats() -> tuple[np.dtype, ...]:
    devices = discover()
    if devices and all(r.has_fp64 for r in devices):
        return (F32, F64)
    return (F32,)


FLOATS = _floats()
NUMERIC = (*FLOATS, I32)


# -- shared helpers (used by the other kernels_* modules too) -------------------------------
# OpenCL C lets a compiler contract ``a * b + c`` into one fused multiply-add (one
# rounding instead of two) unless a program says otherwise, and NVIDIA's compiler does so
# even across statements. A fused kernel has its members' multiply and add side by side
# where the unfused kernels have them in two programs, so the two rounded apart by an ulp
# on an H100 (PoCL does not contract). Elementwise programs, unfused and fused, are
# therefore built without contraction: each operation rounds on its own, as NumPy's do.
# The matrix products and convolutions keep it: their speed rests on multiply-adds.
NO_CONTRACT = "#pragma OPENCL FP_CONTRACT OFF\n"


def header(*dtypes, contract: bool = True) -> str:
    """The program prelude: the fp64 pragma when a double is involved, and ``ISNAN(v)``
    for the first dtype (always 0 for integers, without a self-comparison warning);
    with ``contract=False``, the pragma that forbids contracting a multiply and an add
    into one rounding (`NO_CONTRACT`: every elementwise program, fused or not)."""
    dtypes = [np.dtype(d) for d in dtypes]
    pragma = _FP64_PRAGMA if F64 in dtypes else ""
    if not contract:
        pragma += NO_CONTRACT
    isnan = "isnan(v)" if dtypes and dtypes[0].kind == "f" else "0"
    return f"{pragma}#define ISNAN(v) ({isnan})\n"


def get_kernel(rt, source: str, name: str):
    """The device's cached kernel object (`DeviceRuntime.kernel`, built once)."""
    return rt.kernel(source, name)


_typed: set[int] = set()  # ids of kernel objects whose argument types are declared


def launch(rt, knl, global_size, local_size, *args) -> None:
    """Enqueue `knl` with `args` (buffers, and NumPy scalars of the kernel's parameter
    types). A kernel object holds its arguments, and executor threads share the cached
    objects, so setting them and enqueueing is one step under the device's submission
    lock (``rt.lock``, which prepared launches, uploads and pool allocations take too).

    The first launch of a kernel object declares its argument types from `args` (NumPy
    scalars: their dtype; anything else: a buffer), after which pyopencl packs the
    scalars in one call: 7 arguments cost 0.6 µs instead of 27 (6.6 µs a scalar)."""
    with rt.lock:
        if id(knl) not in _typed:
            knl.set_arg_types([a.dtype if isinstance(a, np.generic) else None for a in args])
            _typed.add(id(knl))
        knl.set_args(*args)
        rt.cl.enqueue_nd_range_kernel(rt.queue, knl, global_size, local_size)


def check_dtype(rt, dtype, op_type: str) -> None:
    """A clear error for a dtype this device cannot compute."""
    dtype = np.dtype(dtype)
    if dtype == F64 and not rt.has_fp64:
        raise TypeError(f"{op_type}: the OpenCL device '{rt.name}' has no float64 support "
                        "(cl_khr_fp64); place the op on the CPU")
    if dtype not in CTYPES:
        raise TypeError(f"{op_type}: the OpenCL backend has no kernel for dtype {dtype}")


def grid(n: int, group: int = 256) -> tuple[int]:
    """A 1-D global size for `n` elements: one work-item per element, rounded up to
    `group`. Kernels index with ``get_global_id(0)`` and no loop: PoCL vectorizes
    across work-items only without one (add of 16M floats: 29 GB/s with a grid-stride
    loop, 57 with none; NumPy 34)."""
    return (max(group, -(-n // group) * group),)


def operand(x):
    """(buffer, element offset, element strides) of device array `x` (views welcome)."""
    item = x.dtype.itemsize
    return x.base_data, x.offset // item, tuple(s // item for s in x.strides)


_POOLED: list = []  # pyopencl's PooledBuffer class, looked up once (imports cost ~1 µs each)


def _pooled_type():
    if not _POOLED:
        from pyopencl.tools import PooledBuffer

        _POOLED.append(PooledBuffer)
    return _POOLED[0]


def vector_aligned(x, items: int = 16) -> bool:
    """Whether device array `x` starts on a boundary of `items` elements in memory, as
    vector loads of that width need: its offset is a multiple, and its buffer is one the
    driver allocated (aligned) or wraps a host array at such an address (a fed array
    wrapped without a copy need not be: a vector load from it crashed PoCL)."""
    if x.offset % (items * x.dtype.itemsize):
        return False
    buf = x.base_data
    if type(buf) is _pooled_type():  # from the device's pool: the driver allocated it
        return True
    import pyopencl as cl

    step = items * x.dtype.itemsize
    if buf.get_info(cl.mem_info.FLAGS) & cl.mem_flags.USE_HOST_PTR:
        return buf.get_host_array((1,), np.uint8).ctypes.data % step == 0
    return True


def is_plain(x) -> bool:
    """Whether `x` is C-contiguous with no offset (its buffer holds exactly it)."""
    return x.flags.c_contiguous and x.offset == 0


def on_device(*xs):
    """(runtime, inputs as device arrays). The planner moves feeds and constants to the
    device (`_ToDevice`), but a variable read by dereference (a ref input the op does not
    update) reaches the kernel as a host array: it is copied to the device of the first
    device input."""
    rt = None
    for x in xs:
        if hasattr(x, "base_data"):
            rt = runtime_of(x)
            break
    if rt is None:
        rt = discover()[0]
    return rt, [x if hasattr(x, "base_data") else rt.to_device(np.asarray(x)) for x in xs]


def check_size(n: int, op_type: str) -> None:
    if n >= 2 ** 31:
        raise ValueError(f"{op_type}: tensors of 2**31 or more elements are not supported "
                         "by the OpenCL backend")


def collapse(shape, strides_list):
    """Drop size-1 dimensions and merge dimensions contiguous in every operand.

    >>> collapse((4, 1, 3), [(3, 0, 1), (0, 0, 1)])
    ((4, 3), [(3, 1), (0, 1)])
    >>> collapse((4, 3), [(3, 1), (3, 1)])
    ((12,), [(1,), (1,)])
    """
    keep = [i for i, d in enumerate(shape) if d != 1]
    dims = [shape[i] for i in keep]
    strides = [[s[i] for i in keep] for s in strides_list]
    i = len(dims) - 2
    while i >= 0:
        if all(s[i] == s[i + 1] * dims[i + 1] for s in strides):
            dims[i] *= dims[i + 1]
            del dims[i + 1]
            for s in strides:
                s[i] = s[i + 1]
                del s[i + 1]
        i -= 1
    return tuple(dims), [tuple(s) for s in strides]


def broadcast_strides(x, shape):
    """Element strides of `x` broadcast to `shape` (0 on broadcast dimensions)."""
    _, _, st = operand(x)
    pad = len(shape) - x.ndim
    out = [0] * pad
    for d, s, full in zip(x.shape, st, shape[pad:], strict=True):
        out.append(0 if d == 1 and full != 1 else s)
    return tuple(out)


def nd_args(shape, strides_list):
    """Kernel arguments of an ``_nd`` kernel: dims 1..MAX_DIMS-1, then each operand's
    MAX_DIMS strides (shape left-padded with 1s)."""
    pad = MAX_DIMS - len(shape)
    if pad < 0:
        raise ValueError(f"more than {MAX_DIMS} non-mergeable dimensions: {shape}")
    dims = (1,) * pad + tuple(shape)
    args = [np.int32(d) for d in dims[1:]]
    for s in strides_list:
        args.extend(np.int32(v) for v in (0,) * pad + tuple(s))
    return args


def _nd_index(arity: int) -> str:
    """C statements computing operand offsets o0..o{arity-1} of output element i."""
    lines = ["int r = i;"] + [f"int o{k} = off{k};" for k in range(arity)]
    for d in range(MAX_DIMS - 1, 0, -1):
        terms = " ".join(f"o{k} += c * s{k}_{d};" for k in range(arity))
        lines.append(f"{{ int c = r % d{d}; r /= d{d}; {terms} }}")
    lines.append(" ".join(f"o{k} += r * s{k}_0;" for k in range(arity)))
    return "\n      ".join(lines)


def _elementwise_source(in_ctype: str, kernels, arity: int, vec: bool = True) -> str:
    """One program: for each (name, C expression of x [, y], out ctype) a ``name_flat`` and
    a ``name_nd`` kernel, and with `vec` a ``name_vec`` one where the output has the
    input's type (not for bool). ``T`` is the input type inside expressions (``T4`` its
    4-vector in ``_vec``, where the expression is evaluated on vectors)."""
    names = "xy"[:arity]
    ins = ", ".join(f"__global const T* {v}_, int off{k}" for k, v in enumerate(names))
    dims = ", ".join(f"int d{d}" for d in range(1, MAX_DIMS))
    strides = ", ".join(f"int s{k}_{d}" for k in range(arity) for d in range(MAX_DIMS))
    flat_load = " ".join(f"T {v} = {v}_[off{k} + i];" for k, v in enumerate(names))
    nd_load = " ".join(f"T {v} = {v}_[o{k}];" for k, v in enumerate(names))
    out = [f"#define T {in_ctype}", f"#define T4 {in_ctype}4"]
    vec_ins = ", ".join(f"__global const T* {v}_, int off{k}" for k, v in enumerate(names))
    vec_load = " ".join(f"T4 {v} = ((__global const T4*)({v}_ + off{k}))[i];"
                        for k, v in enumerate(names))
    for name, expr, out_ctype in kernels:
        if vec and out_ctype == in_ctype != "uchar":
            # GPUs: four elements per work-item in 16-byte loads and stores (operands'
            # offsets multiples of 4, so aligned); the last item takes the tail singly
            out.append(f"""
__kernel void {name}_vec(__global T* out, {vec_ins}, int n) {{
  int i = get_global_id(0);
  if (4 * i + 4 <= n) {{
    {vec_load}
    ((__global T4*)out)[i] = (T4)({expr});
  }} else {{
    for (int j = 4 * i; j < n; ++j) {{
      {" ".join(f"T {v} = {v}_[off{k} + j];" for k, v in enumerate(names))}
      out[j] = (T)({expr});
    }}
  }}
}}""")
        out.append(f"""
__kernel void {name}_flat(__global {out_ctype}* out, {ins}, int n) {{
  int i = get_global_id(0);
  if (i < n) {{
    {flat_load}
    out[i] = ({out_ctype})({expr});
  }}
}}
__kernel void {name}_nd(__global {out_ctype}* out, {ins}, int n, {dims}, {strides}) {{
  int i = get_global_id(0);
  if (i < n) {{
      {_nd_index(arity)}
    {nd_load}
    out[i] = ({out_ctype})({expr});
  }}
}}""")
    return "\n".join(out)


def _use_vec(rt, n: int, out, inputs, bufs) -> bool:
    """Whether a contiguous elementwise op takes the four-per-item ``_vec`` kernel: on
    GPUs (PoCL vectorizes the one-per-item kernel itself), for 4096 elements or more,
    when every operand starts at a multiple of 4 elements and the output has the inputs'
    type (comparisons and casts do not, and have no ``_vec`` kernel)."""
    return (rt.is_gpu and n >= 4096 and all(x.dtype == out.dtype for x in inputs)
            and all(int(off) % 4 == 0 for off in bufs[1::2]))


def run_elementwise(source: str, name: str, out, inputs, op_type: str, vec: bool = True,
                    signature=None):
    """Launch kernel `name` (``_vec``, ``_flat`` or ``_nd`` variant) of `source` writing
    `out` (contiguous, fresh) from `inputs` broadcast to ``out.shape``; returns `out`.
    `vec`: whether `source` has ``_vec`` kernels (`_elementwise_source`). With a
    `signature` (see `flowgraph.backends.opencl.launches`; it must determine out's shape
    and dtype and every input's shape, strides, offset and dtype) the launch is kept
    under it: `cached_elementwise` repeats it with new buffers."""
    n = out.size
    if n == 0:
        return out
    check_size(n, op_type)
    rt = runtime_of(out)
    shape = out.shape
    strides = [broadcast_strides(x, shape) for x in inputs]
    dims, strides = collapse(shape, strides)
    bufs = []
    for x in inputs:
        buf, off, _ = operand(x)
        bufs += [buf, np.int32(off)]
    if not dims or (len(dims) == 1 and all(s == (1,) for s in strides)):
        if vec and _use_vec(rt, n, out, inputs, bufs):
            kname, size, args = name + "_vec", grid(-(-n // 4)), (out.data, *bufs, np.int32(n))
        else:
            kname, size, args = name + "_flat", grid(n), (out.data, *bufs, np.int32(n))
    else:
        kname, size = name + "_nd", grid(n)
        args = (out.data, *bufs, np.int32(n), *nd_args(dims, strides))
    if signature is None:
        launch(rt, get_kernel(rt, source, kname), size, None, *args)
    else:
        prepare(rt, signature, source, kname, size, None, args, out.shape, out.dtype)(
            out.base_data, *(x.base_data for x in inputs))
    return out


def cached_elementwise(signature, x, y=None):
    """The output of the elementwise launch kept under `signature` (`run_elementwise`)
    for device arrays `x` (and `y`), or None when there is none yet: the fast path of
    a repeated call, with no shape arithmetic and only the buffers set."""
    rt = runtime_of(x)
    entry = rt.launches.get(signature)
    if entry is None:
        return None
    out = rt.empty(entry.shape, entry.dtype)
    if y is None:
        entry(out.base_data, x.base_data)
    else:
        entry(out.base_data, x.base_data, y.base_data)
    return out


# -- tables -----------------------------------------------------------------------------------
# op type -> (C expression of x, or {"f": float expression, "i": int expression}, dtypes)
_UNARY = {
    "Neg": ("-x", NUMERIC),
    "Abs": ({"f": "fabs(x)", "i": "(x < 0 ? -x : x)"}, NUMERIC),
    "Square": ("x * x", NUMERIC),
    "Sqrt": ("sqrt(x)", FLOATS),
    "Rsqrt": ("(T)1 / sqrt(x)", FLOATS),
    "Exp": ("exp(x)", FLOATS),
    "Log": ("log(x)", FLOATS),
    "Tanh": ("tanh(x)", FLOATS),
    "Sigmoid": ("x >= 0 ? (T)1 / ((T)1 + exp(-x)) : exp(x) / ((T)1 + exp(x))", FLOATS),
    "Relu": ("x < 0 ? (T)0 : x", NUMERIC),  # NaN stays NaN, as np.maximum(x, 0)
    "Relu6": ("x < 0 ? (T)0 : (x > 6 ? (T)6 : x)", NUMERIC),
    "Elu": ("x < 0 ? expm1(x) : x", FLOATS),
    "Sign": ("x > 0 ? (T)1 : (x < 0 ? (T)-1 : x)", NUMERIC),
    "Floor": ("floor(x)", FLOATS),
    "Ceil": ("ceil(x)", FLOATS),
    "Reciprocal": ("(T)1 / x", FLOATS),
}

# op type -> (C expression of x, y, dtypes); NaN propagates through Maximum/Minimum.
_BINARY = {
    "Add": ("x + y", NUMERIC),
    "AddV2": ("x + y", NUMERIC),
    "Sub": ("x - y", NUMERIC),
    "Mul": ("x * y", NUMERIC),
    "RealDiv": ("x / y", FLOATS),
    "DivNoNan": ("y == 0 ? (T)0 : x / y", FLOATS),
    "Maximum": ("(x >= y || ISNAN(x)) ? x : y", NUMERIC),
    "Minimum": ("(x <= y || ISNAN(x)) ? x : y", NUMERIC),
    "SquaredDifference": ("(x - y) * (x - y)", NUMERIC),
    "Pow": ("pow(x, y)", FLOATS),
    # gradients: x is the incoming gradient, y the forward input (or output, for Elu)
    "ReluGrad": ("y > 0 ? x : (T)0", NUMERIC),
    "Relu6Grad": ("(y > 0 && y < 6) ? x : (T)0", NUMERIC),
    "EluGrad": ("y < 0 ? x * (y + (T)1) : x", FLOATS),
    # backward ops from the forward output: x is that output, y the incoming gradient
    "TanhGrad": ("y * ((T)1 - x * x)", FLOATS),
    "SigmoidGrad": ("y * (x * ((T)1 - x))", FLOATS),
    "SqrtGrad": ("y * (T)0.5 / x", FLOATS),
    "RsqrtGrad": ("y * ((T)-0.5 * x * x * x)", FLOATS),
    "ReciprocalGrad": ("-(y * (x * x))", FLOATS),
}


def _expr(expr, dtype) -> str:
    if isinstance(expr, dict):
        return expr["f" if dtype.kind == "f" else "i"]
    return expr


def _table_source(table, dtype, arity: int) -> str:
    ct = CTYPES[dtype]
    kernels = [(op, _expr(e, dtype), ct) for op, (e, dts) in table.items() if dtype in dts]
    return header(dtype, contract=False) + _elementwise_source(ct, kernels, arity)


_SOURCES: dict[tuple[int, np.dtype], str] = {}


def _source(arity: int, dtype: np.dtype) -> str:
    key = (arity, dtype)
    src = _SOURCES.get(key)
    if src is None:
        src = _SOURCES[key] = _table_source(_UNARY if arity == 1 else _BINARY, dtype, arity)
    return src


def _register_unary(op_type: str, dtypes) -> None:
    def kernel(x):
        sig = None
        if hasattr(x, "base_data"):
            sig = (op_type, x.shape, x.strides, x.offset, x.dtype)
            out = cached_elementwise(sig, x)
            if out is not None:
                return out
        rt, (x,) = on_device(x)
        check_dtype(rt, x.dtype, op_type)
        out = rt.empty(x.shape, x.dtype)
        return run_elementwise(_source(1, x.dtype), op_type, out, (x,), op_type,
                               signature=sig)

    kernel.__name__ = f"opencl_{op_type.lower()}"
    opencl_kernel(op_type, dtypes=dtypes, fresh=True)(kernel)


def _register_binary(op_type: str, dtypes) -> None:
    def kernel(x, y):
        sig = None
        if hasattr(x, "base_data") and hasattr(y, "base_data"):
            sig = (op_type, x.shape, x.strides, x.offset, x.dtype,
                   y.shape, y.strides, y.offset, y.dtype)
            out = cached_elementwise(sig, x, y)
            if out is not None:
                return out
        rt, (x, y) = on_device(x, y)
        check_dtype(rt, x.dtype, op_type)
        if y.dtype != x.dtype:
            raise TypeError(f"{op_type}: operands of dtypes {x.dtype} and {y.dtype}")
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise ValueError(f"{op_type}: shapes {list(x.shape)} and {list(y.shape)} cannot "
                             "be broadcast together") from None
        out = rt.empty(shape, x.dtype)
        return run_elementwise(_source(2, x.dtype), op_type, out, (x, y), op_type,
                               signature=sig)

    kernel.__name__ = f"opencl_{op_type.lower()}"
    opencl_kernel(op_type, dtypes=dtypes, fresh=True)(kernel)


for _op, (_e, _dts) in _UNARY.items():
    _register_unary(_op, _dts)
for _op, (_e, _dts) in _BINARY.items():
    _register_binary(_op, _dts)


# -- Cast -------------------------------------------------------------------------------------
CAST_DTYPES = (*FLOATS, I32, I64, BOOL)
_CAST_SOURCES: dict[np.dtype, str] = {}


def _cast_source(src: np.dtype) -> str:
    code = _CAST_SOURCES.get(src)
    if code is None:
        kernels = []
        for dst in CAST_DTYPES:
            expr = "x != 0" if dst == BOOL else "x"
            kernels.append((f"to_{dst.name}", expr, CTYPES[dst]))
        code = _CAST_SOURCES[src] = header(*CAST_DTYPES) + _elementwise_source(
            CTYPES[src], kernels, 1, vec=False)
    return code


@opencl_kernel("Cast", dtypes=CAST_DTYPES, fresh=True)
def cast(x, *, DstT):
    """Cast between float32/float64/int32/int64/bool (floats to ints truncate)."""
    dst = np.dtype(DstT.as_numpy_dtype)
    sig = None
    if hasattr(x, "base_data"):
        sig = ("Cast", dst, x.shape, x.strides, x.offset, x.dtype)
        out = cached_elementwise(sig, x)
        if out is not None:
            return out
    rt, (x,) = on_device(x)
    check_dtype(rt, x.dtype, "Cast")
    if dst not in CAST_DTYPES:
        raise TypeError(f"Cast: the OpenCL backend casts only to "
                        f"{[d.name for d in CAST_DTYPES]}, not {dst.name}")
    check_dtype(rt, dst, "Cast")
    out = rt.empty(x.shape, dst)
    return run_elementwise(_cast_source(x.dtype), f"to_{dst.name}", out, (x,), "Cast",
                           vec=False, signature=sig)


# -- BiasAdd ----------------------------------------------------------------------------------
_BIAS_SOURCES: dict[np.dtype, str] = {}


def _bias_source(dtype: np.dtype) -> str:
    code = _BIAS_SOURCES.get(dtype)
    if code is None:
        code = _BIAS_SOURCES[dtype] = header(dtype, contract=False) + f"""
#define T {CTYPES[dtype]}
__kernel void bias_add(__global T* out, __global const T* x, int xoff,
                       __global const T* b, int boff, int n, int channels, int inner) {{
  int i = get_global_id(0);
  if (i < n)
    out[i] = x[xoff + i] + b[boff + (i / inner) % channels];
}}"""
    return code


def copy(rt, x):
    """A fresh contiguous copy of device array `x` (through Cast's same-dtype kernel)."""
    sig = None
    if x.base_data is not None:
        sig = ("copy", x.shape, x.strides, x.offset, x.dtype)
        out = cached_elementwise(sig, x)
        if out is not None:
            return out
    out = rt.empty(x.shape, x.dtype)
    return run_elementwise(_cast_source(x.dtype), f"to_{x.dtype.name}", out, (x,), "copy",
                           vec=False, signature=sig)


def contiguous(rt, x):
    """`x` itself if C-contiguous, else a contiguous copy."""
    return x if x.flags.c_contiguous else copy(rt, x)


@opencl_kernel("BiasAdd", dtypes=NUMERIC, fresh=True)
def bias_add(value, bias, *, data_format="NHWC"):
    sig = None
    if hasattr(value, "base_data") and hasattr(bias, "base_data"):
        sig = ("BiasAdd", data_format, value.shape, value.strides, value.offset, value.dtype,
               bias.shape, bias.strides, bias.offset, bias.dtype)
        out = cached_elementwise(sig, value, bias)
        if out is not None:
            return out
    nchw = data_format == "NCHW"
    channels = bias_channels(value.shape, bias.shape, data_format)
    rt, (value, bias) = on_device(value, bias)
    check_dtype(rt, value.dtype, "BiasAdd")
    out = rt.empty(value.shape, value.dtype)
    n = out.size
    if n == 0:
        return out
    check_size(n, "BiasAdd")
    given_value, given_bias = value, bias
    value = contiguous(rt, value)
    bias = contiguous(rt, bias)
    if value is not given_value or bias is not given_bias:
        sig = None  # copies were made first: the launch reads their buffers
    inner = int(np.prod(value.shape[2:], dtype=np.int64)) if nchw else 1
    xb, xo, _ = operand(value)
    bb, bo, _ = operand(bias)
    args = (out.data, xb, np.int32(xo), bb, np.int32(bo), np.int32(n), np.int32(channels),
            np.int32(inner))
    if sig is None:
        launch(rt, get_kernel(rt, _bias_source(value.dtype), "bias_add"), grid(n), None, *args)
    else:
        prepare(rt, sig, _bias_source(value.dtype), "bias_add", grid(n), None, args,
                out.shape, out.dtype)(out.base_data, xb, bb)
    return out


# -- Identity, ZerosLike, OnesLike ------------------------------------------------------------
@opencl_kernel("Identity", dtypes=CAST_DTYPES)
def identity(x):
    return x


def fill(rt, shape, dtype, value):
    """A fresh device array of `shape` filled with `value` (no program needed)."""
    out = rt.empty(shape, dtype)
    if out.size:
        with rt.lock:  # a command on the queue, like a launch (see _runtime)
            rt.cl.enqueue_fill_buffer(rt.queue, out.data, np.array(value, dtype=dtype), 0,
                                      out.nbytes)
    return out


@opencl_kernel("ZerosLike", dtypes=CAST_DTYPES, fresh=True)
def zeros_like(x):
    rt, (x,) = on_device(x)
    check_dtype(rt, x.dtype, "ZerosLike")
    return fill(rt, x.shape, x.dtype, 0)


@opencl_kernel("OnesLike", dtypes=CAST_DTYPES, fresh=True)
def ones_like(x):
    rt, (x,) = on_device(x)
    check_dtype(rt, x.dtype, "OnesLike")
    return fill(rt, x.shape, x.dtype, 1)
