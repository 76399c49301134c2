"""Fake quantization (quantization-aware training) with TensorFlow's op types:
``FakeQuantWithMinMaxArgs`` (a fixed range), ``FakeQuantWithMinMaxVars`` (a range from
tensors, usually variables) and ``...PerChannel`` (one range per last-axis channel), and
their ``...Gradient`` ops.

Values are clamped to the range, snapped to one of ``2^num_bits`` levels (``2^num_bits
- 1`` with `narrow_range`) and mapped back to floats. The range is first "nudged" so that
0.0 is exactly representable. The gradient passes through inside the nudged range
(straight-through estimator); for the ``Vars`` forms the range itself receives the
gradients of the values clamped at its ends.

Example
-------
>>> import flowgraph as tf
>>> q = tf.fake_quant_with_min_max_args([-0.1, 0.26, 9.0], min=0.0, max=2.55)
>>> [round(v, 4) for v in tf.Session().run(q).tolist()]
[0.0, 0.26, 2.55]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient"]

_ARGS = {"min": -6.0, "max": 6.0, "num_bits": 8, "narrow_range": False}
_VARS = {"num_bits": 8, "narrow_range": False}


def _first(op, *shapes):
    return [shapes[0]]


register_op("FakeQuantWithMinMaxArgs", attrs=_ARGS)(_first)
register_op("FakeQuantWithMinMaxArgsGradient", attrs=_ARGS)(_first)
register_op("FakeQuantWithMinMaxVars", attrs=_VARS)(_first)
register_op("FakeQuantWithMinMaxVarsPerChannel", attrs=_VARS)(_first)


@register_op("FakeQuantWithMinMaxVarsGradient", attrs=_VARS, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.float32] * 3)
def _vars_grad_shape(op, gradients, inputs, mn, mx):
    return [inputs, TensorShape([]), TensorShape([])]


@register_op("FakeQuantWithMinMaxVarsPerChannelGradient", attrs=_VARS, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.float32] * 3)
def _channel_grad_shape(op, gradients, inputs, mn, mx):
    return [inputs, mn, mx]


# Left without a gradient, as TensorFlow leaves the FakeQuant...Gradient ops (no second derivative):
# tf.gradients raises LookupError when a gradient reaches one.


def _check_bits(num_bits, narrow_range, what):
    if not 2 <= int(num_bits) <= 16:
        raise ValueError(f"tf.{what}: num_bits must be between 2 and 16, got {num_bits}")
    return {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)}


def _f32(x, what):
    return convert_to_tensor(x, dtype=_dtypes.float32, name=what)


def fake_quant_with_min_max_args(inputs, min=-6.0, max=6.0, num_bits=8, narrow_range=False,
                                 name=None):
    """Fake-quantize float32 `inputs` to the fixed range ``[min, max]``."""
    if not min < max:
        raise ValueError(f"tf.fake_quant_with_min_max_args: min ({min}) must be less than "
                         f"max ({max})")
    attrs = {"min": float(min), "max": float(max),
             **_check_bits(num_bits, narrow_range, "fake_quant_with_min_max_args")}
    return make_tensor("FakeQuantWithMinMaxArgs", [_f32(inputs, "inputs")], attrs,
                       name=name or "FakeQuantWithMinMaxArgs")


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6.0, max=6.0, num_bits=8,
                                          narrow_range=False, name=None):
    """The backprop of `fake_quant_with_min_max_args`: `gradients` where `inputs` lie in
    the nudged range, zero elsewhere."""
    attrs = {"min": float(min), "max": float(max),
             **_check_bits(num_bits, narrow_range, "fake_quant_with_min_max_args_gradient")}
    return make_tensor("FakeQuantWithMinMaxArgsGradient",
                       [_f32(gradients, "gradients"), _f32(inputs, "inputs")], attrs,
                       name=name or "FakeQuantWithMinMaxArgsGradient")


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):
    """Fake-quantize float32 `inputs` to the range given by the scalar tensors `min` and
    `max` (trainable: they receive gradients).

    Example
    -------
    >>> import flowgraph as tf
    >>> lo, hi = tf.constant(-1.0), tf.constant(1.0)
    >>> y = tf.fake_quant_with_min_max_vars([0.3, 5.0], lo, hi, num_bits=4)
    >>> [round(v, 4) for v in tf.Session().run(y).tolist()]
    [0.2667, 1.0667]
    """
    attrs = _check_bits(num_bits, narrow_range, "fake_quant_with_min_max_vars")
    return make_tensor("FakeQuantWithMinMaxVars",
                       [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")], attrs,
                       name=name or "FakeQuantWithMinMaxVars")


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8,
                                          narrow_range=False, name=None):
    """The backprops of `fake_quant_with_min_max_vars`: ``(to inputs, to min, to max)``."""
    attrs = _check_bits(num_bits, narrow_range, "fake_quant_with_min_max_vars_gradient")
    op = make_op("FakeQuantWithMinMaxVarsGradient",
                 [_f32(gradients, "gradients"), _f32(inputs, "inputs"), _f32(min, "min"),
                  _f32(max, "max")], attrs, name=name or "FakeQuantWithMinMaxVarsGradient")
    return tuple(op.outputs)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,
                                             name=None):
    """`fake_quant_with_min_max_vars` with one range per channel (the last axis); `min`
    and `max` are vectors of the channel count."""
    attrs = _check_bits(num_bits, narrow_range, "fake_quant_with_min_max_vars_per_channel")
    return make_tensor("FakeQuantWithMinMaxVarsPerChannel",
                       [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")], attrs,
                       name=name or "FakeQuantWithMinMaxVarsPerChannel")


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max, num_bits=8,
                                                      narrow_range=False, name=None):
    """The backprops of the per-channel form: ``(to inputs, to min, to max)``."""
    attrs = _check_bits(num_bits, narrow_range,
                        "fake_quant_with_min_max_vars_per_channel_gradient")
    op = make_op("FakeQuantWithMinMaxVarsPerChannelGradient",
                 [_f32(gradients, "gradients"), _f32(inputs, "inputs"), _f32(min, "min"),
                  _f32(max, "max")], attrs,
                 name=name or "FakeQuantWithMinMaxVarsPerChannelGradient")
    return tuple(op.outputs)


@register_gradient("FakeQuantWithMinMaxArgs")
def _args_grad(op, grad):
    a = op.attrs
    return [fake_quant_with_min_max_args_gradient(grad, op.inputs[0], a["min"], a["max"],
                                                  a["num_bits"], a["narrow_range"])]


@register_gradient("FakeQuantWithMinMaxVars")
def _vars_grad(op, grad):
    x, mn, mx = op.inputs
    return list(fake_quant_with_min_max_vars_gradient(
        grad, x, mn, mx, op.attrs["num_bits"], op.attrs["narrow_range"]))


@register_gradient("FakeQuantWithMinMaxVarsPerChannel")
def _channel_grad(op, grad):
    x, mn, mx = op.inputs
    return list(fake_quant_with_min_max_vars_per_channel_gradient(
        grad, x, mn, mx, op.attrs["num_bits"], op.attrs["narrow_range"]))
