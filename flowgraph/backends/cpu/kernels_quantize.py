"""CPU kernels of the quantization ops (`flowgraph/ops/quantize_ops.py`,
`flowgraph/ops/quantize_nn_ops.py`).

A quantized value is a NumPy array of the type's one-field structured dtype
(``[("quint8", "u1")]``); the kernels read the codes as plain integers (`codes`) and
return the structured type again (`as_quantized`). Float arithmetic is float32 where
TensorFlow's kernels use float (the range scales, the elementwise maps) and float64 where
they use double (requantizing between ranges), so that codes agree with TensorFlow's
exactly, ties included.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.dtypes import as_dtype

_F = np.float32


def codes(x: np.ndarray) -> np.ndarray:
    """The integer codes of a quantized array (a view, no copy)."""
    x = np.asarray(x)
    return x.view(x.dtype[0]) if x.dtype.names else x


def as_quantized(a: np.ndarray, dtype) -> np.ndarray:
    """`a` (integers) as the structured array of the quantized `dtype`."""
    np_dtype = np.dtype(as_dtype(dtype).as_numpy_dtype)
    ints = np.asarray(a, dtype=np_dtype[0])  # (ascontiguousarray makes a 0-d array 1-d)
    return (ints if ints.flags.c_contiguous else ints.copy()).view(np_dtype)


def _limits(np_int):
    info = np.iinfo(np_int)
    return int(info.min), int(info.max)


def _invalid(op, message):
    return errors.InvalidArgumentError(None, op, f"{op.type} '{op.name}': {message}")


def _round_away(v):
    """C's round(): halves away from zero (NumPy's rint rounds them to even). Exact:
    adding 0.5 first would round 0.49999997 up in float32."""
    whole = np.trunc(v)
    return whole + np.where(np.abs(v - whole) >= 0.5, np.sign(v), 0).astype(whole.dtype)


def _to_int(v, np_int):
    # C's float-to-int cast: what does not fit wraps like x86's conversion (INT_MIN)
    with np.errstate(invalid="ignore", over="ignore"):
        return v.astype(np.int64).astype(np_int)


def _per_slice(x, mn, mx, axis):
    """`mn`, `mx` shaped to broadcast against `x` along `axis` (-1: scalars)."""
    mn, mx = np.asarray(mn, _F), np.asarray(mx, _F)
    if axis == -1:
        return mn.reshape(()), mx.reshape(())
    axis %= x.ndim
    shape = [1] * x.ndim
    shape[axis] = -1
    return mn.reshape(shape), mx.reshape(shape)


# -- QuantizeV2 -------------------------------------------------------------------------

def _quantize(x, lo, hi, np_int, mode, round_mode, narrow_range):
    """``(codes, out_min, out_max)`` for float32 `x` and adjusted ranges `lo`, `hi`."""
    qmin, qmax = _limits(np_int)
    if mode == "MIN_COMBINED":
        scale = (_F(float(qmax) - float(qmin)) / (hi - lo)).astype(_F)
        v = (np.minimum(np.maximum(x, lo), hi) - lo) * scale
        if qmin < 0:
            half = _F((float(qmax) - float(qmin) + 1) / 2)
            return _to_int(_round_away(v - half), np_int), lo, hi
        return _to_int(np.floor(v + _F(0.5)), np_int), lo, hi
    if mode == "MIN_FIRST":
        steps = float(1 << (8 * np.dtype(np_int).itemsize))
        with np.errstate(divide="ignore"):
            rscale = np.where(hi == lo, 0.0, (steps - 1.0) / (hi.astype(np.float64) - lo))
        rscale = rscale.astype(_F)
        min_scaled = _round_away(lo * rscale).astype(_F)
        v = _round_away(x * rscale) - (min_scaled - _F(qmin))
        v = np.clip(v, max(float(qmin), -2.147483648e9), min(float(qmax), 2.147483520e9))
        return _to_int(v, np_int), lo, hi
    low = qmin + (1 if narrow_range else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        from_min = np.where(low * lo > 0, _F(low) / lo, np.finfo(_F).max).astype(_F)
        from_max = np.where(qmax * hi > 0, _F(qmax) / hi, np.finfo(_F).max).astype(_F)
    scale = np.minimum(from_min, from_max)
    lo, hi = (_F(low) / scale).astype(_F), (_F(qmax) / scale).astype(_F)
    v = np.minimum(np.maximum(x, lo), hi) * scale
    v = np.rint(v) if round_mode == "HALF_TO_EVEN" else _round_away(v)
    return _to_int(v, np_int), lo, hi


@cpu_kernel("QuantizeV2", fresh=True)
def quantize_v2(x, mn, mx, *, T, mode, round_mode, narrow_range, axis, ensure_minimum_range,
                op):
    x = np.asarray(x, _F)
    mn_in, mx_in = _per_slice(x, mn, mx, axis)
    if axis != -1 and mn_in.size != x.shape[axis % x.ndim]:
        raise _invalid(op, f"min_range has {mn_in.size} values but input has "
                           f"{x.shape[axis % x.ndim]} slices along axis {axis}")
    if np.any(mn_in > mx_in):
        raise _invalid(op, "input_max_range must be larger than input_min_range.")
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise _invalid(op, f"Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', "
                           f"but mode is '{mode}'.")
    lo = np.minimum(_F(0), mn_in)
    eps = (np.maximum(_F(1), np.maximum(np.abs(mn_in), np.abs(mx_in)))
           * _F(ensure_minimum_range)).astype(_F)
    hi = np.maximum(_F(0), np.maximum(mx_in, (lo + eps).astype(_F))).astype(_F)
    np_int = np.dtype(as_dtype(T).as_numpy_dtype)[0]
    q, lo, hi = _quantize(x, lo, hi, np_int, mode, round_mode, narrow_range)
    shape = () if axis == -1 else (-1,)
    return (as_quantized(q, T), np.asarray(lo, _F).reshape(shape),
            np.asarray(hi, _F).reshape(shape))


# -- Dequantize -------------------------------------------------------------------------

@cpu_kernel("Dequantize", fresh=True)
def dequantize(x, mn, mx, *, mode, narrow_range, axis, dtype="float32", op):
    q = codes(x)
    lo, hi = _per_slice(q, mn, mx, axis)
    qmin, qmax = _limits(q.dtype)
    v = q.astype(_F)
    if mode == "MIN_COMBINED":
        scale = ((hi - lo) / _F(float(qmax) - float(qmin))).astype(_F)
        half = _F((float(qmax) - float(qmin) + 1) / 2) if qmin < 0 else _F(0)
        return ((v + half) * scale + lo).astype(_F)
    if mode == "MIN_FIRST":
        steps = float(1 << (8 * q.dtype.itemsize))
        rscale = ((hi.astype(np.float64) - lo) / (steps - 1.0)).astype(_F)
        with np.errstate(divide="ignore", invalid="ignore"):
            rounded = np.where(hi == lo, lo, _round_away(lo / rscale) * rscale).astype(_F)
        # TensorFlow's order of operations, which decides the last bit
        return ((rounded - _F(qmin) * rscale) + v * rscale).astype(_F)
    if qmin == 0:
        scale = hi / _F(qmax)
    else:
        low = qmin + (1 if narrow_range else 0)
        scale = np.maximum(lo / _F(low), hi / _F(qmax))
    return (v * scale.astype(_F)).astype(_F)


# -- requantizing -----------------------------------------------------------------------

def to_codes(v: np.ndarray, lo: float, hi: float, np_int) -> np.ndarray:
    """Float values `v` as codes of range ``[lo, hi]``, clamped to the type (TensorFlow's
    scalar FloatToQuantized, in double)."""
    qmin, qmax = _limits(np_int)
    if lo == hi:
        return np.full(np.shape(v), qmin, np_int)
    steps = float(1 << (8 * np.dtype(np_int).itemsize))
    scale = steps / ((hi - lo) * (steps / (steps - 1.0)))
    q = (_round_away(np.asarray(v, np.float64) * scale)
         - _round_away(np.float64(lo * scale)) + qmin)
    return np.clip(q, qmin, qmax).astype(np_int)


def _requantize(q, a, b, lo, hi):
    """Codes `q` of range ``[a, b]`` as codes of ``[lo, hi]``, through float32 (the
    MIN_FIRST maps, as TensorFlow's QuantizedConcat does)."""
    v = dequantize(q, _F(a), _F(b), mode="MIN_FIRST", narrow_range=False,
                               axis=-1, op=None)
    out, _, _ = _quantize(v, _F(lo), _F(hi), q.dtype, "MIN_FIRST", "HALF_AWAY_FROM_ZERO",
                          False)
    return out


_CONCAT_TYPES = ("quint8", "qint32")


@cpu_kernel("QuantizedConcat", fresh=True)
def quantized_concat(axis, *rest, N, op):
    dtype = op.outputs[0].dtype.base_dtype
    if dtype.name not in _CONCAT_TYPES:
        raise _invalid(op, f"no kernel for values of type {dtype.name}; QuantizedConcat "
                           f"has kernels for {' and '.join(_CONCAT_TYPES)} (as in "
                           f"TensorFlow). Dequantize and quantize to quint8 first.")
    values = [codes(v) for v in rest[:N]]
    mins = [float(np.asarray(m, _F).reshape(())) for m in rest[N:2 * N]]
    maxes = [float(np.asarray(m, _F).reshape(())) for m in rest[2 * N:]]
    lo = min(0.0, *mins)
    hi = max(maxes)
    if values[0].dtype.kind == "i":
        hi = max(abs(lo), abs(hi))
        lo = -hi
    ndim = values[0].ndim
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise _invalid(op, f"concat_dim {axis} is out of range for values of rank {ndim}")
    parts = [v if (a, b) == (lo, hi) else _requantize(v, a, b, lo, hi)
             for v, a, b in zip(values, mins, maxes)]
    try:
        out = np.concatenate(parts, axis=axis)
    except ValueError as e:
        raise _invalid(op, f"values do not fit together along concat_dim {axis}: "
                           f"shapes {[list(v.shape) for v in values]} ({e})") from None
    return as_quantized(out, dtype), np.asarray(lo, _F), np.asarray(hi, _F)


# -- nn ops ------------------------------------------------------------------------------

@cpu_kernel("QuantizedReluX", fresh=True)
def quantized_relu_x(x, max_value, mn, mx, *, Tinput, out_type, op):
    q = codes(x)
    lo, hi = float(np.asarray(mn, _F).reshape(())), float(np.asarray(mx, _F).reshape(()))
    zero = to_codes(_F(0), lo, hi, q.dtype)
    top = to_codes(np.asarray(max_value, _F).reshape(()), lo, hi, q.dtype)
    out = np.minimum(np.maximum(q, zero), top)
    np_out = np.dtype(as_dtype(out_type).as_numpy_dtype)[0]
    with np.errstate(over="ignore"):
        out = out.astype(np_out)
    return as_quantized(out, out_type), np.asarray(lo, _F), np.asarray(hi, _F)


def _windows(q, kh, kw, sh, sw, padding, fill):
    """``(patches [n, oh, ow, c, kh, kw], valid mask [oh, ow, kh, kw])``."""
    _, h, w, _ = q.shape
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph = max(0, (oh - 1) * sh + kh - h)
        pw = max(0, (ow - 1) * sw + kw - w)
        pads = ((ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2))
    else:
        pads = ((0, 0), (0, 0))
    padded = np.pad(q, ((0, 0), *pads, (0, 0)), constant_values=fill)
    mask = np.pad(np.ones((h, w), bool), pads)
    view = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(1, 2))
    mview = np.lib.stride_tricks.sliding_window_view(mask, (kh, kw))
    return view[:, ::sh, ::sw], mview[::sh, ::sw]


def _ranges(mn, mx):
    return np.asarray(mn, _F).reshape(()).copy(), np.asarray(mx, _F).reshape(()).copy()


@cpu_kernel("QuantizedMaxPool", fresh=True)
def quantized_max_pool(x, mn, mx, *, T, ksize, strides, padding, op):
    q = codes(x)
    lowest, _ = _limits(q.dtype)
    patches, _ = _windows(q, ksize[1], ksize[2], strides[1], strides[2], padding, lowest)
    out = patches.max(axis=(-2, -1)) if patches.size else patches.sum(axis=(-2, -1))
    return (as_quantized(out.astype(q.dtype), T), *_ranges(mn, mx))


@cpu_kernel("QuantizedAvgPool", fresh=True)
def quantized_avg_pool(x, mn, mx, *, T, ksize, strides, padding, op):
    q = codes(x)
    patches, mask = _windows(q.astype(np.int64), ksize[1], ksize[2], strides[1], strides[2],
                             padding, 0)
    total = patches.sum(axis=(-2, -1))
    count = np.maximum(mask.sum(axis=(-2, -1)), 1)[None, :, :, None]
    out = np.rint(total / count)
    lowest, highest = _limits(q.dtype)
    return (as_quantized(np.clip(out, lowest, highest).astype(q.dtype), T), *_ranges(mn, mx))


@cpu_kernel("QuantizedConv2D", fresh=True)
def quantized_conv2d(x, f, min_x, max_x, min_f, max_f, *, Tinput, Tfilter, out_type, strides,
                     padding, dilations, op):
    if list(dilations)[1:3] != [1, 1]:
        raise _invalid(op, "Current implementation only supports dilated rate as 1 in the "
                           "row and column dimensions.")
    Tinput, Tfilter, out_type = (as_dtype(t).name for t in (Tinput, Tfilter, out_type))
    if (Tinput, Tfilter, out_type) != ("quint8", "quint8", "qint32"):
        raise _invalid(op, f"no kernel for Tinput={Tinput}, Tfilter={Tfilter}, "
                           f"out_type={out_type}; QuantizedConv2D has a kernel for quint8 "
                           f"input and filter with qint32 output only (as in TensorFlow)")
    qx, qf = codes(x), codes(f)
    if qx.ndim != 4 or qf.ndim != 4 or qx.shape[3] != qf.shape[2]:
        raise _invalid(op, f"input {list(qx.shape)} and filter {list(qf.shape)} must be 4-D "
                           f"with input depth equal to the filter's in channels")
    rx = [float(np.asarray(v, _F).reshape(())) for v in (min_x, max_x)]
    rf = [float(np.asarray(v, _F).reshape(())) for v in (min_f, max_f)]
    zx = _zero_point(rx, qx.dtype)
    zf = _zero_point(rf, qf.dtype)
    kh, kw = qf.shape[:2]
    patches, _ = _windows(qx.astype(np.int64) - zx, kh, kw, strides[1], strides[2], padding, 0)
    out = np.einsum("nhwcij,ijco->nhwo", patches, qf.astype(np.int64) - zf, optimize=True)
    np_out = np.dtype(as_dtype(out_type).as_numpy_dtype)[0]
    lo_out, hi_out = _limits(np_out)
    out = np.clip(out, lo_out, hi_out).astype(np_out)
    step = _F(_F(rx[1] - rx[0]) / _F(_span(qx.dtype))) * _F(_F(rf[1] - rf[0])
                                                           / _F(_span(qf.dtype)))
    return (as_quantized(out, out_type), np.asarray(step * _F(lo_out), _F),
            np.asarray(step * _F(hi_out), _F))


def _span(np_int) -> int:
    lo, hi = _limits(np_int)
    return hi - lo


def _zero_point(rng, np_int) -> int:
    """The code of 0.0 in range `rng`, unclamped (TensorFlow's FloatToQuantizedUnclamped)."""
    lo, hi = rng
    qmin, _ = _limits(np_int)
    if lo == hi:
        return qmin
    steps = float(1 << (8 * np.dtype(np_int).itemsize))
    scale = steps / ((hi - lo) * (steps / (steps - 1.0)))
    return int(-_round_away(np.float64(lo * scale)) + qmin)


# -- QuantizeAndDequantizeV2 / V4 ------------------------------------------------------
# Arithmetic in the input's own type, as TensorFlow's kernel does. TensorFlow's CPU
# kernels take float32 and float64 only (float16 and bfloat16 have no CPU kernel there).
_QDQ_TYPES = ("float32", "float64")


def _qdq_slices(x, mn, mx, axis, dt):
    """`mn`, `mx` in type `dt`, shaped to broadcast against `x` along `axis`."""
    shape = [1] * x.ndim
    if axis != -1:
        shape[axis] = -1
    return np.asarray(mn).astype(dt).reshape(shape), np.asarray(mx).astype(dt).reshape(shape)


def _qdq_check(op, x, mn, mx, axis):
    if axis != -1:
        if axis >= x.ndim:
            raise _invalid(op, f"axis={axis} needs an input of rank at least {axis + 1}, "
                               f"got shape {x.shape}")
        if np.size(mn) != x.shape[axis] or np.size(mx) != x.shape[axis]:
            raise _invalid(op, f"input_min and input_max must hold {x.shape[axis]} values (the "
                               f"slices along axis {axis}), got {np.size(mn)} and "
                               f"{np.size(mx)}")


def _qdq_scale(lo, hi, qmin, qmax, dt):
    """TensorFlow's quantization range, per slice: the scale that keeps both ends inside
    ``[qmin, qmax]`` with 0 fixed (the smaller of the two ends' scales), its inverse, and
    the range with the other end moved to match."""
    big = dt.type(np.finfo(dt).max)
    qlo, qhi = dt.type(qmin), dt.type(qmax)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        from_min = np.where(qlo * lo > 0, qlo / lo, big).astype(dt)
        from_max = np.where(qhi * hi > 0, qhi / hi, big).astype(dt)
        by_min = from_min < from_max
        inverse = np.where(by_min, lo / qlo, hi / qhi).astype(dt)
        lo = np.where(by_min, lo, qlo * inverse).astype(dt)
        hi = np.where(by_min, qhi * inverse, hi).astype(dt)
    return np.where(by_min, from_min, from_max).astype(dt), inverse, lo, hi


def _qdq(x, mn, mx, *, signed_input, num_bits, range_given, round_mode, narrow_range,
         axis, op):
    if not 0 < num_bits < (62 if signed_input else 63):
        raise _invalid(op, f"num_bits is out of range: {num_bits} with signed_input "
                           f"{str(bool(signed_input)).lower()} (1 to "
                           f"{61 if signed_input else 62} bits)")
    if round_mode not in ("HALF_TO_EVEN", "HALF_UP"):
        raise _invalid(op, f"Invalid round mode: {round_mode}; use HALF_TO_EVEN or HALF_UP")
    v = x = np.asarray(x)
    dt = x.dtype
    _qdq_check(op, x, mn, mx, axis)
    if x.size == 0:
        return x.copy()
    if range_given:
        lo, hi = _qdq_slices(x, mn, mx, axis, dt)
        if np.any(lo > hi):
            raise _invalid(op, f"Invalid range: input_min {lo.reshape(-1).tolist()} > "
                               f"input_max {hi.reshape(-1).tolist()}; with range_given=True "
                               f"input_min must not exceed input_max")
    else:
        others = None if axis == -1 else tuple(i for i in range(v.ndim) if i != axis)
        lo, hi = v.min(axis=others, keepdims=True), v.max(axis=others, keepdims=True)
    if signed_input:
        qmin, qmax = -(1 << (num_bits - 1)) + int(bool(narrow_range)), (1 << (num_bits - 1)) - 1
    else:
        qmin, qmax = 0, (1 << num_bits) - 1
    scale, inverse, lo, hi = _qdq_scale(lo, hi, qmin, qmax, dt)
    if range_given:  # clamped to the adjusted range; std::min/max's order for -0.0
        v = np.where(hi < v, hi, v)
        v = np.where(v < lo, lo, v)
    with np.errstate(over="ignore", invalid="ignore"):
        v = (v * scale).astype(dt)
        v = np.rint(v) if round_mode == "HALF_TO_EVEN" else np.floor(v + dt.type(0.5))
        return (v * inverse).astype(x.dtype)


@cpu_kernel("QuantizeAndDequantizeV2", dtypes=_QDQ_TYPES, fresh=True)
@cpu_kernel("QuantizeAndDequantizeV4", dtypes=_QDQ_TYPES, fresh=True)
def quantize_and_dequantize(x, mn, mx, *, signed_input, num_bits, range_given, T=None,
                            round_mode, narrow_range, axis, op):
    """V2 and V4 compute the same values (they differ only in their gradients)."""
    return _qdq(x, mn, mx, signed_input=signed_input, num_bits=num_bits,
                range_given=range_given, round_mode=round_mode, narrow_range=narrow_range,
                axis=axis, op=op)


@cpu_kernel("QuantizeAndDequantizeV4Grad", dtypes=_QDQ_TYPES, fresh=True)
def quantize_and_dequantize_v4_grad(grad, x, mn, mx, *, T=None, axis, op):
    """The gradient where ``input_min <= x <= input_max`` (the ranges as given), zeros
    for the ranges."""
    grad, x = np.asarray(grad), np.asarray(x)
    if grad.shape != x.shape:
        raise _invalid(op, f"gradients and input must have one shape, got {grad.shape} and "
                           f"{x.shape}")
    _qdq_check(op, x, mn, mx, axis)
    lo, hi = _qdq_slices(x, mn, mx, axis, x.dtype)
    inside = ((x >= lo) & (x <= hi)).astype(grad.dtype)
    return ((grad * inside).astype(grad.dtype),  # a product, as TensorFlow's (-0.0 kept)
            np.zeros(np.shape(mn), grad.dtype), np.zeros(np.shape(mx), grad.dtype))
