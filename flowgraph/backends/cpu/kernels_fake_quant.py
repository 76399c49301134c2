"""CPU kernels of the fake-quantization ops (`flowgraph/ops/fake_quant_ops.py`), in
float32 like TensorFlow's: nudge the range so that zero is a quantization level, clamp,
snap to the nearest level (halves round up), map back."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_F = np.float32


def _nudge(mn, mx, num_bits, narrow_range):
    """``(nudged_min, nudged_max, scale)`` as float32 arrays (broadcast over channels)."""
    qmin = _F(1.0 if narrow_range else 0.0)
    qmax = _F((1 << num_bits) - 1)
    mn = np.asarray(mn, _F)
    mx = np.asarray(mx, _F)
    scale = (mx - mn) / (qmax - qmin)
    with np.errstate(divide="ignore", invalid="ignore"):
        zero_from_min = qmin - mn / scale
    zero = np.where(zero_from_min < qmin, qmin,
                    np.where(zero_from_min > qmax, qmax, np.round(zero_from_min)))
    # C's round(): halves away from zero (NumPy rounds them to even)
    half = np.abs(zero_from_min - np.trunc(zero_from_min)) == 0.5
    zero = np.where(half & (zero_from_min >= qmin) & (zero_from_min <= qmax),
                    np.trunc(zero_from_min) + np.sign(zero_from_min), zero).astype(_F)
    return ((qmin - zero) * scale).astype(_F), ((qmax - zero) * scale).astype(_F), \
        scale.astype(_F)


def _quantize(x, lo, hi, scale):
    x = np.asarray(x, _F)
    clamped = np.clip(x, lo, hi)
    return (np.floor((clamped - lo) / scale + _F(0.5)) * scale + lo).astype(_F)


def _check_range(op, mn, mx):
    if np.any(np.asarray(mn) > np.asarray(mx)):
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': min ({np.asarray(mn).tolist()}) must not "
            f"exceed max ({np.asarray(mx).tolist()})")


@cpu_kernel("FakeQuantWithMinMaxArgs", fresh=True)
def fake_quant_args(x, *, min, max, num_bits, narrow_range):
    lo, hi, scale = _nudge(min, max, num_bits, narrow_range)
    return _quantize(x, lo, hi, scale)


@cpu_kernel("FakeQuantWithMinMaxArgsGradient", fresh=True)
def fake_quant_args_grad(grad, x, *, min, max, num_bits, narrow_range):
    lo, hi, _ = _nudge(min, max, num_bits, narrow_range)
    return np.where((x >= lo) & (x <= hi), grad, _F(0)).astype(_F)


@cpu_kernel("FakeQuantWithMinMaxVars", fresh=True)
def fake_quant_vars(x, mn, mx, *, num_bits, narrow_range, op):
    _check_range(op, mn, mx)
    lo, hi, scale = _nudge(mn, mx, num_bits, narrow_range)
    return _quantize(x, lo, hi, scale)


@cpu_kernel("FakeQuantWithMinMaxVarsPerChannel", fresh=True)
def fake_quant_channel(x, mn, mx, *, num_bits, narrow_range, op):
    _check_range(op, mn, mx)
    lo, hi, scale = _nudge(mn, mx, num_bits, narrow_range)
    return _quantize(x, lo, hi, scale)


def _vars_backprop(grad, x, mn, mx, num_bits, narrow_range, axes):
    lo, hi, _ = _nudge(mn, mx, num_bits, narrow_range)
    grad = np.asarray(grad, _F)
    inside = (x >= lo) & (x <= hi)
    below = np.where(x < lo, grad, _F(0)).sum(axis=axes).astype(_F)
    above = np.where(x > hi, grad, _F(0)).sum(axis=axes).astype(_F)
    return [np.where(inside, grad, _F(0)).astype(_F), below, above]


@cpu_kernel("FakeQuantWithMinMaxVarsGradient")
def fake_quant_vars_grad(grad, x, mn, mx, *, num_bits, narrow_range):
    return _vars_backprop(grad, x, mn, mx, num_bits, narrow_range, None)


@cpu_kernel("FakeQuantWithMinMaxVarsPerChannelGradient")
def fake_quant_channel_grad(grad, x, mn, mx, *, num_bits, narrow_range):
    axes = tuple(range(np.ndim(x) - 1))
    return _vars_backprop(grad, x, mn, mx, num_bits, narrow_range, axes)
