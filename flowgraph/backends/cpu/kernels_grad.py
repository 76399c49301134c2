"""CPU kernels of the ops that exist for gradients (see `flowgraph/ops/*_grad.py`).

Scatter-style backward ops reuse the forward computation on an *index array*: applying
the forward op (strided slice, mirror pad) to ``arange(size).reshape(shape)`` tells, for
every output element, which input element it came from; the backward op then adds each
output gradient to that source (`np.bincount` with weights, or `np.add.at`).

Depthwise convolution backward ops loop over the kernel taps (``kh * kw`` iterations,
each one einsum over the whole batch). Conv2D's and the pools' backward ops live in
`kernels_conv.py`.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.cpu import cpu_in_place, cpu_kernel
from flowgraph.backends.kernel_util import bias_grad_axes
from flowgraph.framework import errors
from flowgraph.ops.array_slicing import strided_slice_numpy
from flowgraph.ops.nn_ops import same_padding

try:  # fused one-pass ReLU kernels (Cython); NumPy otherwise
    from flowgraph.backends.cpu import _nn
except ImportError:  # pragma: no cover - extension not built yet
    _nn = None

_FUSED_DTYPES = (np.float32, np.float64)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _scatter_add(source_index: np.ndarray, values: np.ndarray, size: int, dtype) -> np.ndarray:
    """out[source_index[k]] += values[k] over a flat output of `size` elements."""
    src = source_index.reshape(-1)
    vals = np.asarray(values).reshape(-1)
    if vals.dtype.kind == "c":
        out = (np.bincount(src, vals.real, size) + 1j * np.bincount(src, vals.imag, size))
    elif vals.dtype.kind == "f":
        out = np.bincount(src, vals.astype(np.float64, copy=False), size)
    else:
        out = np.zeros(size, dtype=vals.dtype)
        np.add.at(out, src, vals)
    return out.astype(dtype, copy=False)


# -- BroadcastGradientArgs --------------------------------------------------------------
@cpu_kernel("BroadcastGradientArgs")
def broadcast_gradient_args(s0, s1):
    return kernel_util.broadcast_gradient_args(s0, s1)


# -- array -------------------------------------------------------------------------------
@cpu_kernel("ConcatOffset")
def concat_offset(concat_dim, *shapes):
    if np.ndim(concat_dim) != 0:
        raise _invalid(f"Concat dim tensor should be a scalar integer, but got shape "
                       f"{list(np.shape(concat_dim))}")
    first = np.asarray(shapes[0])
    for i, s in enumerate(shapes):
        if np.ndim(s) != 1:
            raise _invalid(f"input {i} should be a vector, but got shape {list(np.shape(s))}")
        if np.size(s) != first.size:
            raise _invalid(f"input {i} should contain {first.size} elements, but got "
                           f"{np.size(s)}")
    dims = first.size
    axis = int(concat_dim)
    axis = axis + dims if axis < 0 else axis
    if not 0 <= axis < dims:
        raise _invalid(f"Concat dim is out of range: {int(concat_dim)} vs. {dims}")
    out, offset = [], 0
    for i, s in enumerate(shapes):
        s = np.asarray(s)
        rest = np.arange(dims) != axis
        if np.any(s[rest] != first[rest]):
            raise _invalid(f"All dimensions except {axis} must match. Input {i} has shape "
                           f"[{' '.join(map(str, s.tolist()))}] and doesn't match input 0 "
                           f"with shape [{' '.join(map(str, first.tolist()))}].")
        begin = np.zeros(dims, dtype=s.dtype)
        begin[axis] = offset
        offset += int(s[axis])
        out.append(begin)
    return tuple(out)


@cpu_kernel("StridedSliceGrad")
def strided_slice_grad(shape, begin, end, strides, dy, *, begin_mask=0, end_mask=0,
                       ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
    shape = tuple(int(d) for d in np.reshape(shape, -1))
    size = int(np.prod(shape, dtype=np.int64))
    index = np.arange(size, dtype=np.int64).reshape(shape)
    taken = strided_slice_numpy(index, begin, end, strides, begin_mask=begin_mask,
                                end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                                new_axis_mask=new_axis_mask,
                                shrink_axis_mask=shrink_axis_mask)
    if np.shape(taken) != np.shape(dy):
        raise _invalid(f"StridedSliceGrad: dy of shape {list(np.shape(dy))} does not match "
                       f"the slice shape {list(np.shape(taken))} of an input {list(shape)}")
    return _scatter_add(np.asarray(taken), dy, size, dy.dtype).reshape(shape)


@cpu_kernel("MirrorPadGrad")
def mirror_pad_grad(dy, paddings, *, mode):
    p = np.asarray(paddings, dtype=np.int64).reshape(-1, 2)
    if p.shape[0] != dy.ndim:
        raise _invalid(f"MirrorPadGrad: paddings of shape {list(p.shape)} for a gradient of "
                       f"rank {dy.ndim}")
    shape = tuple(int(n - a - b) for n, (a, b) in zip(dy.shape, p))
    size = int(np.prod(shape, dtype=np.int64))
    index = np.arange(size, dtype=np.int64).reshape(shape)
    src = np.pad(index, [(int(a), int(b)) for a, b in p],
                 mode="reflect" if mode == "REFLECT" else "symmetric")
    return _scatter_add(src, dy, size, dy.dtype).reshape(shape)


# -- activations -------------------------------------------------------------------------
def _zero(x):
    return x.dtype.type(0)


def _fused_relu_grad(g, x) -> bool:
    # ndarrays only: a ufunc kernel passes a NumPy scalar on for a 0-d result
    return _nn is not None and type(g) is np.ndarray and type(x) is np.ndarray and \
        g.dtype == x.dtype and g.dtype.type in _FUSED_DTYPES and g.shape == x.shape and \
        g.flags.c_contiguous and x.flags.c_contiguous


@cpu_kernel("ReluGrad", fresh=True)
def relu_grad(g, x):
    if _fused_relu_grad(g, x):
        return _nn.relu_grad(g, x)  # g * (x > 0) in one pass, without the GIL
    return np.where(x > 0, g, _zero(g)).astype(g.dtype, copy=False)


@cpu_in_place("ReluGrad")
def relu_grad_in_place(g, x):
    """`relu_grad` into `g` itself, when the plan says nobody else holds `g`."""
    if _fused_relu_grad(g, x) and g.flags.writeable:
        return _nn.relu_grad(g, x, g)
    return relu_grad(g, x)


@cpu_kernel("Relu6Grad")
def relu6_grad(g, x):
    return np.where((x > 0) & (x < 6), g, _zero(g)).astype(g.dtype, copy=False)


@cpu_kernel("LeakyReluGrad")
def leaky_relu_grad(g, x, *, alpha=0.2):
    return np.where(x > 0, g, g * g.dtype.type(alpha)).astype(g.dtype, copy=False)


@cpu_kernel("EluGrad")
def elu_grad(g, y):
    return np.where(y < 0, g * (y + 1), g).astype(g.dtype, copy=False)


@cpu_kernel("SeluGrad")
def selu_grad(g, y):
    out = np.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE)
    return out.astype(g.dtype, copy=False)


@cpu_kernel("SoftplusGrad")
def softplus_grad(g, x):
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-x.astype(np.float64)))
    return (g * s).astype(g.dtype, copy=False)


@cpu_kernel("SoftsignGrad")
def softsign_grad(g, x):
    d = 1 + np.abs(x)
    return (g / (d * d)).astype(g.dtype, copy=False)


# -- backward ops taking the forward output (`flowgraph/ops/math_grad_ops.py`) -----------
# Each is the NumPy calls the composite gradient graph made, in its order, as
# (ufunc name, operands): an operand is an input position (0: y, 1: dy), "t" (the
# previous call's result) or a float constant. The fused kernels run the same calls
# (`kernels_fused._SEQUENCES`), so fused and unfused results are bitwise equal. On complex
# inputs SqrtGrad, RsqrtGrad and ReciprocalGrad read conj(y), as TensorFlow's kernels do.
OUTPUT_GRAD_SEQUENCES = {
    "TanhGrad": [("multiply", (0, 0)), ("subtract", (1.0, "t")), ("multiply", (1, "t"))],
    "SigmoidGrad": [("subtract", (1.0, 0)), ("multiply", (0, "t")), ("multiply", (1, "t"))],
    "SqrtGrad": [("multiply", (1, 0.5)), ("true_divide", ("t", 0))],
    "RsqrtGrad": [("multiply", (-0.5, 0)), ("multiply", ("t", 0)), ("multiply", ("t", 0)),
                  ("multiply", (1, "t"))],
    # -(dy * (y * y)) is bitwise (-dy) * (y * y): negation is exact
    "ReciprocalGrad": [("multiply", (0, 0)), ("multiply", (1, "t")), ("negative", ("t",))],
}


def _sequence_kernel(op_type: str, calls, conj_y: bool):
    def kernel(y, dy):
        if y.shape != dy.shape:
            raise _invalid(f"{op_type}: y of shape {list(y.shape)} and dy of shape "
                           f"{list(dy.shape)} must have one shape (the forward output and "
                           f"its gradient)")
        if conj_y and y.dtype.kind == "c":
            y = np.conj(y)
        inputs, t = (y, dy), None
        for name, args in calls:
            ins = [t if a == "t" else y.dtype.type(a) if isinstance(a, float) else inputs[a]
                   for a in args]
            t = getattr(np, name)(*ins)
        return t

    kernel.__name__ = op_type
    return kernel


for _op_type, _calls in OUTPUT_GRAD_SEQUENCES.items():
    cpu_kernel(_op_type, fresh=True)(_sequence_kernel(
        _op_type, _calls, _op_type in ("SqrtGrad", "RsqrtGrad", "ReciprocalGrad")))


@cpu_kernel("BiasAddGrad")
def bias_add_grad(dy, *, data_format="NHWC"):
    axes = bias_grad_axes(dy.shape, data_format)
    return np.asarray(np.sum(dy, axis=axes, dtype=dy.dtype))


# -- window geometry ----------------------------------------------------------------------
def _hw(values, data_format):
    return (values[2], values[3]) if data_format == "NCHW" else (values[1], values[2])


def _nhwc(x, data_format):
    return x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x


def _back(y, data_format):
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2)) if data_format == "NCHW" else y


def _nhwc_shape(sizes, data_format):
    s = [int(v) for v in np.reshape(sizes, -1)]
    if len(s) != 4:
        raise _invalid(f"input sizes must be a 4-vector, got {s}")
    return (s[0], s[2], s[3], s[1]) if data_format == "NCHW" else tuple(s)


def _pads(height, width, kh, kw, strides, dilations, padding, explicit, data_format):
    sh, sw = _hw(strides, data_format)
    dh, dw = _hw(dilations, data_format)
    if padding == "SAME":
        (pt, pb), (pl, pr) = same_padding(height, kh, sh, dh), same_padding(width, kw, sw, dw)
    elif padding == "EXPLICIT":
        h = 2 if data_format == "NCHW" else 1
        pt, pb, pl, pr = (int(v) for v in explicit[2 * h:2 * h + 4])
    else:
        pt = pb = pl = pr = 0
    return (pt, pb, pl, pr), (sh, sw), (dh, dw)


def _check_out(what, dy, pads, geometry, height, width, kh, kw):
    """InvalidArgumentError unless NHWC `dy` has the forward op's output size."""
    (sh, sw), (dh, dw) = geometry
    pt, pb, pl, pr = pads
    want = ((height + pt + pb - (kh - 1) * dh - 1) // sh + 1,
            (width + pl + pr - (kw - 1) * dw - 1) // sw + 1)
    if tuple(dy.shape[1:3]) != want:
        raise _invalid(f"{what}: out_backprop has spatial size {list(dy.shape[1:3])} but the "
                       f"forward op's output is {list(want)} (input {height}x{width}, window "
                       f"{kh}x{kw}, strides {sh}x{sw}, dilations {dh}x{dw}, pads {list(pads)})")


def _tap(i, j, geometry, oh, ow):
    """Slices of the padded input read by filter tap (i, j) for all output positions."""
    (sh, sw), (dh, dw) = geometry
    return (slice(None), slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))


def _work(dtype):
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _padded_input(x, pads):
    pt, pb, pl, pr = pads
    if pt or pb or pl or pr:
        return np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    return x


def _crop(xp, pads, height, width):
    pt, _, pl, _ = pads
    return xp[:, pt:pt + height, pl:pl + width, :]


# -- depthwise convolution backward ops ---------------------------------------------------
@cpu_kernel("DepthwiseConv2dNativeBackpropInput")
def depthwise_conv2d_backprop_input(sizes, f, dy, *, strides, padding, explicit_paddings=(),
                                    dilations=(1, 1, 1, 1), data_format="NHWC"):
    n, height, width, cin = _nhwc_shape(sizes, data_format)
    dy = _nhwc(dy, data_format)
    work = _work(dy.dtype)
    kh, kw = f.shape[:2]
    pads, *geometry = _pads(height, width, kh, kw, strides, dilations, padding,
                            explicit_paddings, data_format)
    _check_out("conv backprop input", dy, pads, geometry, height, width, kh, kw)
    pt, pb, pl, pr = pads
    dx = np.zeros((n, height + pt + pb, width + pl + pr, cin), dtype=work)
    oh, ow = dy.shape[1:3]
    fw = f.astype(work, copy=False)
    dy5 = dy.astype(work, copy=False).reshape(n, oh, ow, cin, -1)
    for i in range(kh):
        for j in range(kw):
            dx[_tap(i, j, geometry, oh, ow)] += np.einsum("nhwcm,cm->nhwc", dy5, fw[i, j])
    out = _crop(dx, pads, height, width).astype(dy.dtype, copy=False)
    return _back(out, data_format)


@cpu_kernel("DepthwiseConv2dNativeBackpropFilter")
def depthwise_conv2d_backprop_filter(x, sizes, dy, *, strides, padding, explicit_paddings=(),
                                     dilations=(1, 1, 1, 1), data_format="NHWC"):
    kh, kw, cin, cout = (int(v) for v in np.reshape(sizes, -1))
    x = _nhwc(x, data_format)
    dy = _nhwc(dy, data_format)
    work = _work(dy.dtype)
    height, width = x.shape[1:3]
    pads, *geometry = _pads(height, width, kh, kw, strides, dilations, padding,
                            explicit_paddings, data_format)
    _check_out("conv backprop filter", dy, pads, geometry, height, width, kh, kw)
    xp = _padded_input(x.astype(work, copy=False), pads)
    n, oh, ow = dy.shape[:3]
    df = np.zeros((kh, kw, cin, cout), dtype=work)
    dy5 = dy.astype(work, copy=False).reshape(n, oh, ow, cin, cout)
    for i in range(kh):
        for j in range(kw):
            df[i, j] = np.einsum("nhwc,nhwcm->cm", xp[_tap(i, j, geometry, oh, ow)], dy5)
    return df.astype(dy.dtype, copy=False)
