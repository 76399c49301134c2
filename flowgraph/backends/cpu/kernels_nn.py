"""CPU kernels for neural-network ops: activations, softmax, bias_add, depthwise convolution.

The depthwise convolution views the padded NHWC input (no copy, `as_strided`) as windows
``[batch, out_h, out_w, k_h, k_w, channels]`` and adds one multiply per tap. NCHW tensors
are transposed to NHWC and back. Conv2D and pooling live in `kernels_conv.py`.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from flowgraph.backends.cpu import cpu_in_place, cpu_kernel, kernel_pool
from flowgraph.backends.kernel_util import bias_channels
from flowgraph.framework import errors
from flowgraph.ops.nn_ops import same_padding

try:  # fused one-pass ReLU kernels, recycled output arrays (Cython); NumPy otherwise
    from flowgraph.backends.cpu import _nn
    from flowgraph.backends.cpu._buffers import empty as _empty
except ImportError:  # pragma: no cover - extension not built yet
    _nn = None

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """float16 is computed in float32 (NumPy's half arithmetic is slow and inexact)."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# -- Activations --------------------------------------------------------------------------
def _fused(x) -> bool:
    """Whether the Cython kernels of `_nn` take `x` (a C-contiguous float32/float64
    ndarray: a NumPy scalar, which a ufunc kernel returns for 0-d inputs, is not one)."""
    return _nn is not None and type(x) is np.ndarray and \
        x.dtype.type in (np.float32, np.float64) and x.flags.c_contiguous


@cpu_kernel("Relu", fresh=True)
def relu(x):
    if _fused(x):
        return _nn.relu(x)  # one vectorized pass, without the GIL
    return np.asarray(np.maximum(x, x.dtype.type(0)))


@cpu_in_place("Relu")
def relu_in_place(x):
    """`relu` into `x` itself, when the plan says nobody else holds `x`."""
    if _fused(x) and x.flags.writeable:
        return _nn.relu(x, x)
    return relu(x)


@cpu_kernel("Relu6")
def relu6(x):
    return np.asarray(np.clip(x, x.dtype.type(0), x.dtype.type(6)))


@cpu_kernel("Elu")
def elu(x):
    return np.where(x < 0, np.expm1(np.minimum(x, 0)), x).astype(x.dtype, copy=False)


@cpu_kernel("Selu")
def selu(x):
    neg = SELU_ALPHA * np.expm1(np.minimum(x, 0))
    return np.asarray(SELU_SCALE * np.where(x > 0, x, neg)).astype(x.dtype, copy=False)


@cpu_kernel("Softplus")
def softplus(x):
    return np.asarray(np.logaddexp(x, x.dtype.type(0)))


@cpu_kernel("Softsign")
def softsign(x):
    return np.asarray(x / (np.abs(x) + x.dtype.type(1)))


@cpu_kernel("LeakyRelu")
def leaky_relu(x, *, alpha):
    if x.dtype.kind in "iu":
        x = x.astype(np.float32)
    return np.where(x >= 0, x, x * x.dtype.type(alpha)).astype(x.dtype, copy=False)


# -- Softmax ------------------------------------------------------------------------------
def _shifted(x, axis):
    if x.ndim < 1:
        raise _invalid(f"logits must have rank at least 1, got shape {x.shape}")
    if not -x.ndim <= axis < x.ndim:
        raise _invalid(f"softmax axis {axis} is out of range for logits of shape {x.shape}")
    if x.size == 0:
        return None
    return x - np.max(x, axis=axis, keepdims=True)


def _softmax_rows(x, axis, log: bool):
    """Large C-contiguous logits normalized along the last axis, split by rows across
    the kernel threads (`kernel_pool`); None for any other input. Each row goes through
    the same NumPy calls as on one thread, so the result is bitwise the same."""
    if (x.size < 2 * kernel_pool.GRAIN["softmax"] or kernel_pool.threads() < 2
            or axis not in (-1, x.ndim - 1) or not x.flags.c_contiguous or x.ndim < 2):
        return None
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty_like(rows)

    def chunk(a: int, b: int) -> None:
        z = rows[a:b] - np.max(rows[a:b], axis=1, keepdims=True)
        if log:
            np.subtract(z, np.log(np.sum(np.exp(z), axis=1, keepdims=True)), out=out[a:b])
        else:
            e = np.exp(z)
            np.divide(e, np.sum(e, axis=1, keepdims=True), out=out[a:b])

    kernel_pool.parallel_for(rows.shape[0], chunk, align=1,
                             grain=-(-kernel_pool.GRAIN["softmax"] // max(x.shape[-1], 1)))
    return out.reshape(x.shape)


@cpu_kernel("Softmax")
def softmax(x, *, axis=-1):
    split = _softmax_rows(x, axis, log=False)
    if split is not None:
        return split
    z = _shifted(x, axis)
    if z is None:
        return x.copy()
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


@cpu_kernel("LogSoftmax")
def log_softmax(x, *, axis=-1):
    split = _softmax_rows(x, axis, log=True)
    if split is not None:
        return split
    z = _shifted(x, axis)
    if z is None:
        return x.copy()
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


# -- BiasAdd ------------------------------------------------------------------------------
@cpu_kernel("BiasAdd", fresh=True)
def bias_add(value, bias, *, data_format="NHWC"):
    nchw = data_format == "NCHW"
    bias_channels(value.shape, bias.shape, data_format)
    if nchw:
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
    elif _nn is not None and value.dtype == bias.dtype and \
            value.dtype.type in (np.float32, np.float64):
        # A recycled output array (no page faults per step; see _buffers.pyx).
        return np.add(value, bias, out=_empty(value.shape, value.dtype))
    return np.add(value, bias, dtype=value.dtype)


@cpu_in_place("BiasAdd")
def bias_add_in_place(value, bias, *, data_format="NHWC"):
    """`bias_add` into `value` itself, when the plan says nobody else holds `value`."""
    if isinstance(value, np.ndarray) and data_format == "NHWC" and value.ndim >= 2 and \
            bias.ndim == 1 and value.shape[-1] == bias.shape[0] and \
            value.dtype == bias.dtype and value.flags.writeable:
        return np.add(value, bias, out=value)
    return bias_add(value, bias, data_format=data_format)


# -- Windows ------------------------------------------------------------------------------
def _hw(values, data_format):
    return (values[2], values[3]) if data_format == "NCHW" else (values[1], values[2])


def _windows(x, kh, kw, strides, dilations, padding, explicit, data_format, fill):
    """View NHWC `x` as ``[n, out_h, out_w, kh, kw, c]`` windows (padding with `fill`)."""
    sh, sw = _hw(strides, data_format)
    dh, dw = _hw(dilations, data_format)
    _, height, width, _ = x.shape
    if padding == "SAME":
        (pt, pb), (pl, pr) = same_padding(height, kh, sh, dh), same_padding(width, kw, sw, dw)
    elif padding == "EXPLICIT":
        h = 2 if data_format == "NCHW" else 1
        pt, pb, pl, pr = explicit[2 * h:2 * h + 4]
    else:
        pt = pb = pl = pr = 0
    if pt or pb or pl or pr:
        x = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if x.shape[1] < eh or x.shape[2] < ew:
        raise _invalid(
            f"window of {kh}x{kw} (dilation {dh}x{dw}) does not fit in the padded input of "
            f"{x.shape[1]}x{x.shape[2]} (input shape {tuple(x.shape)}, padding {padding})")
    oh, ow = (x.shape[1] - eh) // sh + 1, (x.shape[2] - ew) // sw + 1
    s = x.strides
    view = as_strided(x, shape=(x.shape[0], oh, ow, kh, kw, x.shape[3]),
                      strides=(s[0], sh * s[1], sw * s[2], dh * s[1], dw * s[2], s[3]),
                      writeable=False)
    return view, (pt, pl)


def _to_nhwc(x, data_format):
    if x.ndim != 4:
        raise _invalid(f"input must be 4-D, got shape {x.shape}")
    return x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x


def _from_nhwc(y, data_format):
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2)) if data_format == "NCHW" else y


def _check_filter(x, f, what, last):
    if f.ndim != 4 or f.shape[2] != x.shape[3]:
        raise _invalid(
            f"{what}: input depth must equal the filter's input depth: input shape "
            f"{x.shape} (NHWC), filter shape {f.shape} = [height, width, in, {last}]")


# -- DepthwiseConv2dNative ---------------------------------------------------------------
@cpu_kernel("DepthwiseConv2dNative")
def depthwise_conv2d(x, f, *, strides, padding, explicit_paddings=(),
                     dilations=(1, 1, 1, 1), data_format="NHWC"):
    out_dtype = x.dtype
    x = _to_nhwc(x, data_format)
    _check_filter(x, f, "DepthwiseConv2dNative", "multiplier")
    kh, kw, cin, mult = f.shape
    work = _compute_dtype(out_dtype)
    x = x.astype(work, copy=False)
    f = f.astype(work, copy=False)
    view, _ = _windows(x, kh, kw, strides, dilations, padding, explicit_paddings, data_format,
                       0)
    n, oh, ow = view.shape[:3]
    # One contiguous multiply-add per tap and multiplier beats einsum and strided updates.
    acc = np.zeros((mult, n, oh, ow, cin), dtype=work)
    tmp = np.empty((n, oh, ow, cin), dtype=work)
    for i in range(kh):
        for j in range(kw):
            tap = np.ascontiguousarray(view[:, :, :, i, j, :])
            for m in range(mult):
                np.multiply(tap, f[i, j, :, m], out=tmp)
                acc[m] += tmp
    out = np.ascontiguousarray(acc.transpose(1, 2, 3, 4, 0)).reshape(n, oh, ow, cin * mult)
    return _from_nhwc(out.astype(out_dtype, copy=False), data_format)


# -- L2Normalize --------------------------------------------------------------------------
@cpu_kernel("L2Normalize")
def l2_normalize(x, *, axis=None, epsilon=1e-12):
    work = _compute_dtype(x.dtype)
    xw = x.astype(work, copy=False)
    if axis is not None:
        if any(not -x.ndim <= a < x.ndim for a in axis):
            raise _invalid(f"l2_normalize: axis {list(axis)} out of range for shape {x.shape}")
        axis = tuple(axis)
    sq = np.sum(xw * xw, axis=axis, keepdims=True)
    out = xw / np.sqrt(np.maximum(sq, work.type(epsilon)))
    return np.asarray(out).astype(x.dtype, copy=False)
