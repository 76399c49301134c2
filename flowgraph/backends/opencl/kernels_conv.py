"""OpenCL kernels for 2-D convolution and pooling: Conv2D, Conv2DBackpropInput,
Conv2DBackpropFilter, MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad.

Convolutions are im2col plus one GEMM (`kernels_nn.matmul`). With the filter viewed as
``W[KH*KW*C, CO]`` (its HWIO layout, unchanged) and ``cols[N*OH*OW, KH*KW*C]`` holding
every output position's receptive field (zeros where it overhangs the padding; column
order ki, kj, c):

    Conv2D                y    = cols · W           (NHWC rows; NCHW is one transpose copy)
    Conv2DBackpropFilter  dW   = colsᵀ · dy
    Conv2DBackpropInput   dcol = dy · Wᵀ, then col2im: each work-item owns one input
                          element and sums the dcol entries of the windows covering it

so no kernel needs atomics. A 1x1 convolution with unit strides and no padding on NHWC
input skips im2col (the input already is `cols`). `cols` is built for at most
`IM2COL_BYTES` of it at a time: a larger batch runs in chunks of whole images (Conv2D
copies each chunk's product into place, the filter gradient adds them up).

Pooling gives one work-item to each output element (MaxPool, AvgPool) or input element
(the gradients, summing over the windows that cover it). MaxPoolGrad first stores each
window's argmax (one work-item per window), with the CPU kernel's rule: the first
maximum in row-major window order, padding counting as -inf, the first NaN winning; the
gradient of a window whose argmax is a padding cell is dropped, as on the CPU.

Every kernel reads its inputs through element strides in N, H, W, C order (views and
both data formats), and writes a fresh contiguous output in the op's data format,
enumerating it in memory order (consecutive work-items write consecutive addresses).
That is the GPU form. CPU-type devices (PoCL) have no vector integer division, which the
per-element index arithmetic needs: there each work-item of the per-element kernels
takes a run of `RUN` consecutive elements, splitting the first index only and
incrementing through the rest (the covering windows of a gradient element are
recomputed only when its pixel changes), and im2col writes one row per work-item
(`_cpu_shaped` picks the form, as `kernels_nn` does for MatMul).

The shape inputs (``input_sizes``, ``filter_sizes``, ``orig_input_shape``) are taken from
the other inputs' shapes and the graph's static shapes where possible (a ``Const``, or a
``Shape`` of a tensor whose height and width are known), so that the host does not wait
for the device; otherwise the device copy is read back.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from flowgraph.backends.cpu.kernels_conv import window_geometry
from flowgraph.backends.opencl import opencl_kernel
from flowgraph.backends.opencl.kernels_elementwise import (
    CTYPES,
    FLOATS,
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
)
from flowgraph.backends.opencl.kernels_nn import matmul
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant_value_as_shape

IM2COL_BYTES = 1 << 27  # the largest im2col matrix built at once (whole images per chunk)
RUN = 32  # elements per work-item of the per-element kernels on CPU-type devices
FORMATS = ("NHWC", "NCHW")
_SOURCES: dict[np.dtype, str] = {}



def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


# -- geometry -----------------------------------------------------------------------------
class Window(namedtuple("Window", "n h w c kh kw sh sw dh dw pt pl oh ow")):
    """A convolution or pooling window (size, strides, dilations, top and left padding,
    output size) over an input of NHWC-ordered size `n, h, w, c`."""

    def args(self) -> list[np.int32]:
        """The kernels' geometry arguments H, W, C, KH, KW, SH, SW, DH, DW, PT, PL, OH, OW."""
        return [np.int32(v) for v in self[1:]]


def _check_format(op_type: str, data_format) -> str:
    if data_format not in FORMATS:
        raise NotImplementedError(
            f"{op_type} on the OpenCL backend supports data_format 'NHWC' and 'NCHW', not "
            f"{data_format!r}; place the op on the CPU")
    return data_format


def _hw(values, data_format) -> tuple[int, int]:
    values = list(values)
    if len(values) != 4:
        raise _invalid(f"expected 4 values (one per dimension), got {values}")
    return (int(values[2]), int(values[3])) if data_format == "NCHW" else \
        (int(values[1]), int(values[2]))


def nhwc(shape, data_format) -> tuple[int, ...]:
    """`shape` (4 ints in `data_format` order) as (n, h, w, c)."""
    s = tuple(int(v) for v in shape)
    return (s[0], s[2], s[3], s[1]) if data_format == "NCHW" else s


def _in_format(shape, data_format) -> tuple[int, ...]:
    n, h, w, c = shape
    return (n, c, h, w) if data_format == "NCHW" else (n, h, w, c)


def window(op_type, shape, kh, kw, strides, dilations, padding, explicit,
           data_format) -> Window:
    """The `Window` of an op on an input of NHWC-ordered `shape`: the CPU kernels' rules
    (`flowgraph.backends.cpu.kernels_conv.window_geometry`)."""
    if padding not in ("SAME", "VALID", "EXPLICIT"):
        raise NotImplementedError(f"{op_type} on the OpenCL backend: padding must be 'SAME', "
                                  f"'VALID' or 'EXPLICIT', got {padding!r}")
    for values in (strides, dilations):
        _hw(values, data_format)  # InvalidArgumentError unless 4 values
    n, height, width, c = shape
    return Window(n, height, width, c, *window_geometry(
        op_type, height, width, kh, kw, strides, dilations, padding, explicit, data_format))


def _strides(x, data_format) -> list[np.int32]:
    """Element offset and N, H, W, C element strides of 4-D device array `x`."""
    _, off, st = operand(x)
    if data_format == "NCHW":
        st = (st[0], st[2], st[3], st[1])
    return [np.int32(off), *(np.int32(s) for s in st)]


def _check_4d(op_type: str, what: str, x) -> None:
    if x.ndim != 4:
        raise _invalid(f"{op_type}: {what} must be 4-D, got shape {list(x.shape)}")


def _check_float(rt, dtype, op_type: str) -> None:
    check_dtype(rt, dtype, op_type)
    if np.dtype(dtype).kind != "f":
        raise TypeError(f"{op_type}: the OpenCL backend computes float32 and float64 only, "
                        f"not {np.dtype(dtype)}; place the op on the CPU")


def _sizes(value, op, index: int, known, op_type: str, what: str) -> tuple[int, ...]:
    """The 4 ints of shape input `index` (see the module docstring): `known` holds the
    dimensions (None where unknown) that the other inputs' shapes fix."""
    dims = list(known)
    if None in dims and op is not None and len(op.inputs) > index:
        static = constant_value_as_shape(op.inputs[index])
        if static.ndims == 4:
            dims = [s if d is None else d for d, s in zip(dims, static.as_list(), strict=True)]
    if None in dims:
        host = value.get() if hasattr(value, "get") else np.asarray(value)
        host = np.reshape(host, -1)
        if host.size != 4:
            raise _invalid(f"{op_type}: {what} must be a 4-vector, got {host.tolist()}")
        dims = [int(v) for v in host]
    return tuple(int(d) for d in dims)


# -- programs -----------------------------------------------------------------------------
def _split(fmt: str, dims: str) -> str:
    """C statements setting n, h, w, c from element index i of a contiguous 4-D tensor in
    layout `fmt` whose N, H, W, C sizes are the C expressions `dims`."""
    _, H, W, C = dims.split(",")
    if fmt == "NHWC":
        return (f"int c = i % {C}, t = i / {C}; int w = t % {W}; t /= {W}; "
                f"int h = t % {H}, n = t / {H};")
    return (f"int w = i % {W}, t = i / {W}; int h = t % {H}; t /= {H}; "
            f"int c = t % {C}, n = t / {C};")


def _advance(fmt: str, dims: str) -> str:
    """C statement moving n, h, w, c on to element i + 1 (see `_split`)."""
    _, H, W, C = dims.split(",")
    inner = [("c", C), ("w", W), ("h", H)] if fmt == "NHWC" else [("w", W), ("h", H), ("c", C)]
    code = "++n;"
    for var, size in reversed(inner):
        code = f"if (++{var} == {size}) {{ {var} = 0; {code} }}"
    return code


def _each(name: str, params: str, fmt: str, dims: str, body: str, cover: str = "") -> str:
    """A kernel running `body` for each element i of a contiguous `fmt` tensor of `dims`
    (with n, h, w, c set): work-item g takes elements g*run .. g*run+run-1, splitting its
    first index with divisions and stepping through the others with increments (`run` is
    1 on GPUs; on CPU-type devices, where vector integer division is slow, it is `RUN`).
    With `cover` (the windows' extents, e.g. ``"KH, KW"``), th, tw and the ranges of
    windows covering input element (h, w), ``oh_lo..oh_hi`` and ``ow_lo..ow_hi``, are set
    too, recomputed only when (h, w) changes."""
    pixel = ""
    if cover:
        ekh, ekw = (e.strip() for e in cover.split(","))
        fresh = "i == (int)first || c == 0" if fmt == "NHWC" else "1"
        pixel = f"""if ({fresh}) {{
      th = h + PT;
      tw = w + PL;
      oh_lo = th < ({ekh}) ? 0 : (th - ({ekh}) + SH) / SH;
      oh_hi = min(OH - 1, th / SH);
      ow_lo = tw < ({ekw}) ? 0 : (tw - ({ekw}) + SW) / SW;
      ow_hi = min(OW - 1, tw / SW);
    }}"""
    return f"""
__kernel void {name}_{fmt.lower()}({params}, int run, int total) {{
  long first = (long)get_global_id(0) * run;
  if (first >= total) return;
  int i = (int)first, end = (int)min(first + run, (long)total);
  {_split(fmt, dims)}
  int th = 0, tw = 0, oh_lo = 0, oh_hi = -1, ow_lo = 0, ow_hi = -1;
  for (; i < end; ++i) {{
    {pixel}
    {body}
    {_advance(fmt, dims)}
  }}
}}"""


_GEOMETRY = ("int H, int W, int C, int KH, int KW, int SH, int SW, int DH, int DW, int PT, "
             "int PL, int OH, int OW")
_X = "__global const T* x, int xo, int xn, int xh, int xw, int xc"
_DY = "__global const T* dy, int yo, int yn, int yh, int yw, int yc"
_AT_X = "x[xo + n * xn + ih * xh + iw * xw + c * xc]"
_AT_DY = "dy[yo + n * yn + oh * yh + ow * yw + c * yc]"

_IM2COL = f"""
/* cols[r][q], r = (n0 + n, oh, ow), q = (ki, kj, c): the receptive fields, zero-padded.
   GPUs: one element per work-item (coalesced writes and, for NHWC, reads). */
__kernel void im2col(__global T* cols, {_X}, {_GEOMETRY}, int n0, int total) {{
  int i = get_global_id(0);
  if (i >= total) return;
  int KC = KW * C;
  int q = i % (KH * KC), r = i / (KH * KC);
  int ki = q / KC, kj = (q % KC) / C, c = q % C;
  int ow = r % OW, t = r / OW, oh = t % OH, n = n0 + t / OH;
  int ih = oh * SH - PT + ki * DH, iw = ow * SW - PL + kj * DW;
  cols[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? {_AT_X} : (T)0;
}}

/* The same, one row of cols per work-item (CPU-type devices: no divisions per element). */
__kernel void im2col_rows(__global T* cols, {_X}, {_GEOMETRY}, int n0, int rows) {{
  int r = get_global_id(0);
  if (r >= rows) return;
  int ow = r % OW, t = r / OW, oh = t % OH, n = n0 + t / OH;
  __global T* dst = cols + (long)r * KH * KW * C;
  for (int ki = 0; ki < KH; ++ki) {{
    int ih = oh * SH - PT + ki * DH;
    for (int kj = 0; kj < KW; ++kj, dst += C) {{
      int iw = ow * SW - PL + kj * DW;
      if (ih >= 0 && ih < H && iw >= 0 && iw < W) {{
        __global const T* p = x + xo + n * xn + ih * xh + iw * xw;
        for (int c = 0; c < C; ++c) dst[c] = p[c * xc];
      }} else {{
        for (int c = 0; c < C; ++c) dst[c] = 0;
      }}
    }}
  }}
}}

__kernel void accumulate(__global T* acc, __global const T* part, int total) {{
  int i = get_global_id(0);
  if (i < total) acc[i] += part[i];
}}"""

# dx (images n0.. of the batch) from dcols: over the windows covering the element, the
# dcols entry of the filter tap that lands on it (if one does: dilations can skip it).
_COL2IM = """T acc = 0;
    for (int oh = oh_lo; oh <= oh_hi; ++oh) {
      int ki = th - oh * SH;
      if (DH > 1) { if (ki % DH) continue; ki /= DH; }
      for (int ow = ow_lo; ow <= ow_hi; ++ow) {
        int kj = tw - ow * SW;
        if (DW > 1) { if (kj % DW) continue; kj /= DW; }
        acc += dcols[((n * OH + oh) * OW + ow) * KH * KW * C + (ki * KW + kj) * C + c];
      }
    }
    dx[(long)n0 * H * W * C + i] = acc;"""

# One output element: the window's maximum; NaN propagates (np.max).
_MAX_POOL = f"""T m = -INFINITY;
    for (int ih = max(h * SH - PT, 0); ih < min(h * SH - PT + KH, H); ++ih)
      for (int iw = max(w * SW - PL, 0); iw < min(w * SW - PL + KW, W); ++iw) {{
        T v = {_AT_X};
        m = (m >= v || ISNAN(m)) ? m : v;
      }}
    y[i] = m;"""

# One output element: the mean over the window's cells inside the input.
_AVG_POOL = f"""int h0 = h * SH - PT, w0 = w * SW - PL;
    int h1 = min(h0 + KH, H), w1 = min(w0 + KW, W);
    h0 = max(h0, 0);
    w0 = max(w0, 0);
    T s = 0;
    for (int ih = h0; ih < h1; ++ih)
      for (int iw = w0; iw < w1; ++iw) s += {_AT_X};
    y[i] = s / (T)((h1 - h0) * (w1 - w0));"""

# arg[i]: the window-local index ki * KW + kj of window i's first maximum, scanning the
# padded window (padding is -inf) row by row; the first NaN wins (np.argmax).
_ARGMAX = f"""T best = -INFINITY;
    int at = 0;
    for (int ki = 0; ki < KH; ++ki)
      for (int kj = 0; kj < KW; ++kj) {{
        int ih = h * SH - PT + ki, iw = w * SW - PL + kj;
        T v = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? {_AT_X} : -INFINITY;
        if ((ki | kj) == 0) best = v;
        else if (!ISNAN(best) && (ISNAN(v) || v > best)) {{ best = v; at = ki * KW + kj; }}
      }}
    arg[i] = at;"""

# dx element i: the gradients of the windows covering it whose argmax it is (arg has the
# layout of dy's shape, contiguous).
_MAX_POOL_GRAD = f"""T acc = 0;
    for (int oh = oh_lo; oh <= oh_hi; ++oh)
      for (int ow = ow_lo; ow <= ow_hi; ++ow)
        if (arg[ARG_AT] == (th - oh * SH) * KW + (tw - ow * SW)) acc += {_AT_DY};
    dx[i] = acc;"""

# dx element i: each covering window's gradient divided by the window's cell count.
_AVG_POOL_GRAD = f"""T acc = 0;
    for (int oh = oh_lo; oh <= oh_hi; ++oh) {{
      int h0 = oh * SH - PT;
      int rows = min(h0 + KH, H) - max(h0, 0);
      for (int ow = ow_lo; ow <= ow_hi; ++ow) {{
        int w0 = ow * SW - PL;
        acc += {_AT_DY} / (T)(rows * (min(w0 + KW, W) - max(w0, 0)));
      }}
    }}
    dx[i] = acc;"""

_ARG_AT = {"NHWC": "((n * OH + oh) * OW + ow) * C + c", "NCHW": "((n * C + c) * OH + oh) * OW + ow"}


def _source(dtype: np.dtype) -> str:
    code = _SOURCES.get(dtype)
    if code is not None:
        return code
    parts = [header(dtype), f"#define T {CTYPES[dtype]}", _IM2COL]
    out, outputs = "__global T* y", "N,OH,OW,C"
    for fmt in FORMATS:
        parts += [
            _each("col2im", f"__global T* dx, __global const T* dcols, {_GEOMETRY}, int n0",
                  fmt, "N,H,W,C", _COL2IM, "(KH - 1) * DH + 1, (KW - 1) * DW + 1"),
            _each("max_pool", f"{out}, {_X}, {_GEOMETRY}", fmt, outputs, _MAX_POOL),
            _each("avg_pool", f"{out}, {_X}, {_GEOMETRY}", fmt, outputs, _AVG_POOL),
            _each("max_pool_argmax", f"__global int* arg, {_X}, {_GEOMETRY}", fmt, outputs,
                  _ARGMAX),
            _each("max_pool_grad", f"__global T* dx, {_DY}, __global const int* arg, "
                  f"{_GEOMETRY}", fmt, "N,H,W,C",
                  _MAX_POOL_GRAD.replace("ARG_AT", _ARG_AT[fmt]), "KH, KW"),
            _each("avg_pool_grad", f"__global T* dx, {_DY}, {_GEOMETRY}", fmt, "N,H,W,C",
                  _AVG_POOL_GRAD, "KH, KW"),
        ]
    code = _SOURCES[dtype] = "\n".join(parts)
    return code


def _cpu_shaped(rt) -> bool:
    """Whether `rt` is a CPU-type device (per-element kernels then take runs of `RUN`
    elements, and im2col a row per work-item)."""
    return rt.is_cpu


def _launch_each(rt, dtype, name: str, fmt: str, total: int, *args) -> None:
    """Launch per-element kernel `name` (see `_each`) over `total` elements."""
    run = RUN if _cpu_shaped(rt) else 1
    knl = get_kernel(rt, _source(dtype), f"{name}_{fmt.lower()}")
    launch(rt, knl, grid(-(-total // run)), None, *args, np.int32(run), np.int32(total))


# -- convolution --------------------------------------------------------------------------
def _images_per_chunk(g: Window, itemsize: int) -> int:
    per_image = g.oh * g.ow * g.kh * g.kw * g.c
    check_size(per_image, "im2col")
    limit = min(IM2COL_BYTES // itemsize, 2 ** 31 - 1)
    return max(1, min(g.n, limit // max(per_image, 1)))


def _im2col(rt, x, g: Window, data_format, n0: int, nb: int):
    """The [nb*OH*OW, KH*KW*C] receptive fields of images n0..n0+nb-1 of `x`."""
    kkc = g.kh * g.kw * g.c
    if g.kh == g.kw == 1 and g.sh == g.sw == 1 and g.pt == g.pl == 0 and \
            g.oh == g.h and g.ow == g.w and data_format == "NHWC" and x.flags.c_contiguous:
        return x.reshape(g.n * g.h * g.w, g.c)[n0 * g.h * g.w:(n0 + nb) * g.h * g.w]
    cols = rt.empty((nb * g.oh * g.ow, kkc), x.dtype)
    args = [operand(x)[0], *_strides(x, data_format), *g.args(), np.int32(n0)]
    if _cpu_shaped(rt):
        knl, total = get_kernel(rt, _source(x.dtype), "im2col_rows"), cols.shape[0]
    else:
        knl, total = get_kernel(rt, _source(x.dtype), "im2col"), cols.size
    launch(rt, knl, grid(total), None, cols.data, *args, np.int32(total))
    return cols


def _rows_nhwc(rt, t, data_format):
    """4-D device array `t` as a contiguous [N*H*W, C] matrix (NHWC order)."""
    if data_format == "NCHW":
        t = copy(rt, t.transpose((0, 2, 3, 1)))
    else:
        t = contiguous(rt, t)
    return t.reshape(t.shape[0] * t.shape[1] * t.shape[2], t.shape[3])


def _conv_window(op_type, shape, f_shape, strides, padding, explicit_paddings, dilations,
                 data_format) -> Window:
    if shape[3] != f_shape[2]:
        raise _invalid(
            f"{op_type}: input depth must equal the filter's input depth: input shape "
            f"{list(shape)} (NHWC), filter shape {list(f_shape)} = [height, width, in, out]")
    return window(op_type, shape, f_shape[0], f_shape[1], strides, dilations, padding,
                  explicit_paddings, data_format)


def _check_dy(op_type, dy_shape, g: Window, cout: int) -> None:
    want = (g.n, g.oh, g.ow, cout)
    if tuple(dy_shape) != want:
        raise _invalid(f"{op_type}: out_backprop has shape {list(dy_shape)} (NHWC) but the "
                       f"forward op's output is {list(want)}")


@opencl_kernel("Conv2D", dtypes=FLOATS, fresh=True)
def conv2d(x, f, *, strides, padding, explicit_paddings=(), dilations=(1, 1, 1, 1),
           data_format="NHWC"):
    """Conv2D as im2col + GEMM (see the module docstring)."""
    fmt = _check_format("Conv2D", data_format)
    _check_4d("Conv2D", "input", x)
    _check_4d("Conv2D", "filter", f)
    rt, (x, f) = on_device(x, f)
    _check_float(rt, x.dtype, "Conv2D")
    g = _conv_window("Conv2D", nhwc(x.shape, fmt), f.shape, strides, padding,
                     explicit_paddings, dilations, fmt)
    cout = f.shape[3]
    out_shape = (g.n, g.oh, g.ow, cout)
    rows, kkc = g.n * g.oh * g.ow, g.kh * g.kw * g.c
    check_size(max(x.size, rows * cout), "Conv2D")
    if rows * cout == 0:
        return rt.empty(_in_format(out_shape, fmt), x.dtype)
    if kkc == 0:
        return fill(rt, _in_format(out_shape, fmt), x.dtype, 0)
    w2 = contiguous(rt, f).reshape(kkc, cout)
    step = _images_per_chunk(g, x.dtype.itemsize)
    if step >= g.n:
        out = matmul(_im2col(rt, x, g, fmt, 0, g.n), w2)
    else:
        out = rt.empty((rows, cout), x.dtype)
        per_image = g.oh * g.ow * cout * x.dtype.itemsize
        for n0 in range(0, g.n, step):
            nb = min(step, g.n - n0)
            part = matmul(_im2col(rt, x, g, fmt, n0, nb), w2)
            with rt.lock:  # enqueued on the device's queue: see `_runtime`'s docstring
                rt.cl.enqueue_copy(rt.queue, out.data, part.data,
                                   byte_count=nb * per_image, dst_offset=n0 * per_image)
    out = out.reshape(out_shape)
    return copy(rt, out.transpose((0, 3, 1, 2))) if fmt == "NCHW" else out


@opencl_kernel("Conv2DBackpropFilter", dtypes=FLOATS, fresh=True)
def conv2d_backprop_filter(x, filter_sizes, dy, *, strides, padding, explicit_paddings=(),
                           dilations=(1, 1, 1, 1), data_format="NHWC", op=None):
    """The filter gradient, colsᵀ · dy (see the module docstring)."""
    name = "Conv2DBackpropFilter"
    fmt = _check_format(name, data_format)
    _check_4d(name, "input", x)
    _check_4d(name, "out_backprop", dy)
    xs, ys = nhwc(x.shape, fmt), nhwc(dy.shape, fmt)
    f_shape = _sizes(filter_sizes, op, 1, (None, None, xs[3], ys[3]), name, "filter_sizes")
    rt, (x, dy) = on_device(x, dy)
    _check_float(rt, x.dtype, name)
    g = _conv_window(name, xs, f_shape, strides, padding, explicit_paddings, dilations, fmt)
    _check_dy(name, ys, g, f_shape[3])
    kkc, cout = g.kh * g.kw * g.c, f_shape[3]
    check_size(max(x.size, dy.size, kkc * cout), name)
    if g.n * g.oh * g.ow * kkc * cout == 0:
        return fill(rt, f_shape, x.dtype, 0)
    dy2 = _rows_nhwc(rt, dy, fmt)
    step = _images_per_chunk(g, x.dtype.itemsize)
    df = None
    for n0 in range(0, g.n, step):
        nb = min(step, g.n - n0)
        r0, r1 = n0 * g.oh * g.ow, (n0 + nb) * g.oh * g.ow
        part = matmul(_im2col(rt, x, g, fmt, n0, nb), dy2[r0:r1], transpose_a=True)
        if df is None:
            df = part
        else:
            launch(rt, get_kernel(rt, _source(x.dtype), "accumulate"), grid(df.size), None,
                   df.data, part.data, np.int32(df.size))
    return df.reshape(f_shape)


@opencl_kernel("Conv2DBackpropInput", dtypes=FLOATS, fresh=True)
def conv2d_backprop_input(input_sizes, f, dy, *, strides, padding, explicit_paddings=(),
                          dilations=(1, 1, 1, 1), data_format="NHWC", op=None):
    """The input gradient, dy · Wᵀ then col2im (see the module docstring)."""
    name = "Conv2DBackpropInput"
    fmt = _check_format(name, data_format)
    _check_4d(name, "filter", f)
    _check_4d(name, "out_backprop", dy)
    ys = nhwc(dy.shape, fmt)
    known = _in_format((ys[0], None, None, f.shape[2]), fmt)
    xs = nhwc(_sizes(input_sizes, op, 0, known, name, "input_sizes"), fmt)
    rt, (f, dy) = on_device(f, dy)
    _check_float(rt, dy.dtype, name)
    g = _conv_window(name, xs, f.shape, strides, padding, explicit_paddings, dilations, fmt)
    _check_dy(name, ys, g, f.shape[3])
    size = int(np.prod(xs))
    check_size(max(size, dy.size), name)
    dx = rt.empty(_in_format(xs, fmt), dy.dtype)
    kkc, cout = g.kh * g.kw * g.c, f.shape[3]
    if size == 0:
        return dx
    if kkc * cout * g.oh * g.ow == 0:
        return fill(rt, dx.shape, dy.dtype, 0)
    dy2 = _rows_nhwc(rt, dy, fmt)
    w2 = contiguous(rt, f).reshape(kkc, cout)
    step = _images_per_chunk(g, dy.dtype.itemsize)
    for n0 in range(0, g.n, step):
        nb = min(step, g.n - n0)
        r0, r1 = n0 * g.oh * g.ow, (n0 + nb) * g.oh * g.ow
        dcols = matmul(dy2[r0:r1], w2, transpose_b=True)
        total = nb * g.h * g.w * g.c
        _launch_each(rt, dy.dtype, "col2im", fmt, total, dx.data, dcols.data, *g.args(),
                     np.int32(n0))
    return dx


# -- pooling ------------------------------------------------------------------------------
def _pool_window(op_type, shape, ksize, strides, padding, data_format) -> Window:
    ksize = list(ksize)
    c_at = 1 if data_format == "NCHW" else 3
    if len(ksize) != 4 or ksize[0] != 1 or ksize[c_at] != 1:
        raise _invalid(f"{op_type}: pooling over the batch or depth dimension is not "
                       f"supported (ksize={ksize})")
    kh, kw = _hw(ksize, data_format)
    if padding not in ("SAME", "VALID"):
        raise NotImplementedError(f"{op_type} on the OpenCL backend: padding must be 'SAME' "
                                  f"or 'VALID', got {padding!r}")
    return window(op_type, shape, kh, kw, strides, (1, 1, 1, 1), padding, (), data_format)


def _pool(op_type: str, kernel: str, x, ksize, strides, padding, data_format):
    fmt = _check_format(op_type, data_format)
    _check_4d(op_type, "input", x)
    rt, (x,) = on_device(x)
    _check_float(rt, x.dtype, op_type)
    g = _pool_window(op_type, nhwc(x.shape, fmt), ksize, strides, padding, fmt)
    y = rt.empty(_in_format((g.n, g.oh, g.ow, g.c), fmt), x.dtype)
    check_size(max(x.size, y.size), op_type)
    if y.size:
        _launch_each(rt, x.dtype, kernel, fmt, y.size, y.data, operand(x)[0],
                     *_strides(x, fmt), *g.args())
    return y


@opencl_kernel("MaxPool", dtypes=FLOATS, fresh=True)
def max_pool(x, *, ksize, strides, padding, data_format="NHWC"):
    """Max pooling, one work-item per output element."""
    return _pool("MaxPool", "max_pool", x, ksize, strides, padding, data_format)


@opencl_kernel("AvgPool", dtypes=FLOATS, fresh=True)
def avg_pool(x, *, ksize, strides, padding, data_format="NHWC"):
    """Average pooling over the cells inside the input, one work-item per output element."""
    return _pool("AvgPool", "avg_pool", x, ksize, strides, padding, data_format)


@opencl_kernel("MaxPoolGrad", dtypes=FLOATS, fresh=True)
def max_pool_grad(x, y, dy, *, ksize, strides, padding, data_format="NHWC"):
    """Each window's gradient to its first maximum (the CPU kernel's tie-breaking)."""
    name = "MaxPoolGrad"
    fmt = _check_format(name, data_format)
    _check_4d(name, "orig_input", x)
    _check_4d(name, "grad", dy)
    rt, (x, dy) = on_device(x, dy)
    _check_float(rt, x.dtype, name)
    g = _pool_window(name, nhwc(x.shape, fmt), ksize, strides, padding, fmt)
    pooled = _in_format((g.n, g.oh, g.ow, g.c), fmt)
    if tuple(dy.shape) != pooled:
        raise _invalid(f"{name}: gradient of shape {list(dy.shape)} does not match the "
                       f"pooled shape {list(pooled)}")
    check_size(max(x.size, dy.size), name)
    dx = rt.empty(x.shape, x.dtype)
    if x.size == 0:
        return dx
    if dy.size == 0:
        return fill(rt, x.shape, x.dtype, 0)
    arg = rt.empty(pooled, np.int32)
    _launch_each(rt, x.dtype, "max_pool_argmax", fmt, arg.size, arg.data, operand(x)[0],
                 *_strides(x, fmt), *g.args())
    _launch_each(rt, x.dtype, "max_pool_grad", fmt, dx.size, dx.data, operand(dy)[0],
                 *_strides(dy, fmt), arg.data, *g.args())
    return dx


@opencl_kernel("AvgPoolGrad", dtypes=FLOATS, fresh=True)
def avg_pool_grad(orig_input_shape, dy, *, ksize, strides, padding, data_format="NHWC",
                  op=None):
    """Each input element sums its covering windows' gradients over their cell counts."""
    name = "AvgPoolGrad"
    fmt = _check_format(name, data_format)
    _check_4d(name, "grad", dy)
    ys = nhwc(dy.shape, fmt)
    known = _in_format((ys[0], None, None, ys[3]), fmt)
    xs = nhwc(_sizes(orig_input_shape, op, 0, known, name, "orig_input_shape"), fmt)
    rt, (dy,) = on_device(dy)
    _check_float(rt, dy.dtype, name)
    g = _pool_window(name, xs, ksize, strides, padding, fmt)
    _check_dy(name, ys, g, g.c)
    dx = rt.empty(_in_format(xs, fmt), dy.dtype)
    check_size(max(dx.size, dy.size), name)
    if dx.size == 0:
        return dx
    if dy.size == 0:
        return fill(rt, dx.shape, dy.dtype, 0)
    _launch_each(rt, dy.dtype, "avg_pool_grad", fmt, dx.size, dx.data, operand(dy)[0],
                 *_strides(dy, fmt), *g.args())
    return dx
