"""Simulated quantization with TensorFlow's op types ``QuantizeAndDequantizeV2`` and
``QuantizeAndDequantizeV4``: a float tensor snapped to the values an integer of
`num_bits` bits can stand for, and returned as floats of its own type.

The integer range is ``[-2^(b-1), 2^(b-1) - 1]`` (signed; ``+1`` at the bottom with
`narrow_range`) or ``[0, 2^b - 1]`` (unsigned). The float range is the input's own
min and max, or ``[input_min, input_max]`` with ``range_given=True`` (values outside are
clamped). One scale maps floats to integers, the largest that keeps both ends of the
float range inside the integer range while 0.0 stays 0; the side that did not set the
scale is moved to match it:

    signed, 4 bits, range [-1, 1]:  -8/-1 = 8 vs 7/1 = 7 -> scale 7
    levels -8/7 ... 7/7, step 1/7:  -1.3 -> -8/7 (clamped), 0.37 -> 3/7

With `axis`, ``input_min``/``input_max`` hold one range per slice along that axis.

The two op types compute the same values and differ in their gradient, as in
TensorFlow: ``V2`` (`quantize_and_dequantize`) passes the gradient straight through;
``V4`` (`quantize_and_dequantize_v2`) passes it only where ``input_min <= x <=
input_max`` (the range inputs as given, whether or not `range_given`), through the
``QuantizeAndDequantizeV4Grad`` op, and gives the range zeros. That op's own gradient
is the same mask applied to the incoming gradient (TensorFlow declares it too, but its
rule fails with a TypeError).

Example
-------
>>> import flowgraph as tf
>>> y = tf.quantization.quantize_and_dequantize([-1.3, 0.37], -1.0, 1.0, num_bits=4,
...                                             range_given=True)
>>> [round(v * 7, 4) for v in tf.Session().run(y).tolist()]
[-8.0, 3.0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op

__all__ = ["quantize_and_dequantize", "quantize_and_dequantize_v2"]

FLOATS = (_dtypes.bfloat16, _dtypes.float16, _dtypes.float32, _dtypes.float64)
ROUND_MODES = ("HALF_TO_EVEN", "HALF_UP")
_ATTRS = {"signed_input": True, "num_bits": 8, "range_given": False, "T": None,
          "round_mode": "HALF_TO_EVEN", "narrow_range": False, "axis": -1}


def _range_shape(op, x, mn, mx):
    """The shape of ``input_min``/``input_max``: a scalar, or with `axis` a vector with
    one value per slice of `x` along that axis (TensorFlow's shape function)."""
    axis = op.attrs["axis"]
    if axis < -1:
        raise op.shape_error(f"axis should be at least -1, got {axis}")
    rank = 0 if axis == -1 else 1
    for name, s in (("input_min", mn), ("input_max", mx)):
        if s.ndims is not None and s.ndims != rank:
            raise op.shape_error(f"{name} must have rank {rank} with axis={axis} (a "
                                 f"{'scalar' if rank == 0 else 'vector, one value per slice'}"
                                 f"), got shape {s}")
    out = mn.merge_with(mx) if mn.ndims is not None or mx.ndims is not None \
        else TensorShape([None] * rank)
    if axis != -1 and x.ndims is not None:
        if x.ndims <= axis:
            raise op.shape_error(f"axis={axis} needs an input of rank at least {axis + 1}, "
                                 f"got shape {x}")
        if not out.is_compatible_with(TensorShape([x[axis]])):
            raise op.shape_error(f"input_min/input_max have {out[0]} values but the input "
                                 f"has {x[axis]} slices along axis {axis} (shape {x})")
        out = out.merge_with(TensorShape([x[axis]]))
    return out


def _qdq_shape(op, x, mn, mx):
    _range_shape(op, x, mn, mx)
    return [x]


register_op("QuantizeAndDequantizeV2", attrs=_ATTRS, cost=OpCost.CHEAP)(_qdq_shape)
register_op("QuantizeAndDequantizeV4", attrs=_ATTRS, cost=OpCost.CHEAP)(_qdq_shape)


@register_op("QuantizeAndDequantizeV4Grad", num_outputs=3, cost=OpCost.CHEAP,
             attrs={"T": None, "axis": -1})
def _qdq_grad_shape(op, grad, x, mn, mx):
    if not grad.is_compatible_with(x):
        raise op.shape_error(f"gradients and input must have one shape, got {grad} and {x}")
    r = _range_shape(op, x, mn, mx)
    return [grad.merge_with(x), r, r]


@register_gradient("QuantizeAndDequantizeV2")
def _qdq_v2_grad(op, grad):
    return [grad, None, None]  # straight through, as TensorFlow registers it


@register_gradient("QuantizeAndDequantizeV4")
def _qdq_v4_grad(op, grad):
    x, mn, mx = op.inputs
    g = make_op("QuantizeAndDequantizeV4Grad", [grad, x, mn, mx],
                {"T": op.attrs["T"], "axis": op.attrs["axis"]})
    return list(g.outputs)


@register_gradient("QuantizeAndDequantizeV4Grad")
def _qdq_v4_grad_grad(op, grad, *unused):
    # Linear in `gradients` (the same mask again), flat in the rest. TensorFlow registers
    # this rule but its function takes one output gradient of three and raises TypeError.
    if grad is None:
        return [None] * 4
    _, x, mn, mx = op.inputs
    g = make_op("QuantizeAndDequantizeV4Grad", [grad, x, mn, mx],
                {"T": op.attrs["T"], "axis": op.attrs["axis"]})
    return [g.outputs[0], None, None, None]


def _build(op_type, input, input_min, input_max, signed_input, num_bits, range_given,
           round_mode, name, narrow_range, axis, what):
    x = convert_to_tensor(input, name="input")
    dtype = x.dtype.base_dtype
    if dtype not in FLOATS:
        raise TypeError(f"tf.quantization.{what}: Value passed to parameter 'input' has "
                        f"DataType {dtype.name} not in list of allowed values: "
                        + ", ".join(d.name for d in FLOATS)
                        + "; cast it first, e.g. tf.cast(x, tf.float32)")
    if round_mode not in ROUND_MODES:
        raise ValueError(f"Attr 'round_mode' of '{op_type}' Op passed string '{round_mode}' "
                         f"not in: " + ", ".join(f'"{m}"' for m in ROUND_MODES) + ".")
    if axis is None:
        axis = -1
    elif axis < 0:
        if x.shape.ndims is None:
            raise ValueError(f"tf.quantization.{what}: input should have known rank to use "
                             f"negative axis (axis={axis}, input {x.name} of unknown rank)")
        axis %= x.shape.ndims
    attrs = {"signed_input": bool(signed_input), "num_bits": int(num_bits),
             "range_given": bool(range_given), "T": dtype, "round_mode": round_mode,
             "narrow_range": bool(narrow_range), "axis": int(axis)}
    mn = convert_to_tensor(input_min, dtype=dtype, name="input_min")
    mx = convert_to_tensor(input_max, dtype=dtype, name="input_max")
    return make_op(op_type, [x, mn, mx], attrs, name=name or op_type).outputs[0]


def quantize_and_dequantize(input, input_min, input_max, signed_input=True, num_bits=8,
                            range_given=False, round_mode="HALF_TO_EVEN", name=None,
                            narrow_range=False, axis=None):
    """Quantize the float tensor `input` to `num_bits`-bit integers and back to floats
    (``tf.quantization.quantize_and_dequantize``, the ``QuantizeAndDequantizeV2`` op);
    its gradient passes straight through. TensorFlow deprecates it in favour of
    `quantize_and_dequantize_v2`, whose gradient is zero outside the range.

    Parameters
    ----------
    input : a float tensor (bfloat16, float16, float32 or float64).
    input_min, input_max : the range (scalars, or with `axis` one value per slice);
        used only with ``range_given=True``.
    signed_input : integers in ``[-2^(b-1), 2^(b-1) - 1]``, else ``[0, 2^b - 1]``.
    num_bits : the integer width `b` (1 to 61 signed, 62 unsigned).
    range_given : clamp to ``[input_min, input_max]`` instead of using the input's own
        min and max.
    round_mode : ``"HALF_TO_EVEN"`` or ``"HALF_UP"`` (``floor(v + 0.5)``).
    narrow_range : signed integers start at ``-2^(b-1) + 1`` (symmetric).
    axis : one range per slice along this axis (None: one range for all).

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.quantization.quantize_and_dequantize([0.5, 1.5, 2.5], -8.0, 7.0,
    ...                                             num_bits=4, range_given=True)
    >>> tf.Session().run(y).tolist()
    [0.0, 2.0, 2.0]
    """
    return _build("QuantizeAndDequantizeV2", input, input_min, input_max, signed_input,
                  num_bits, range_given, round_mode, name, narrow_range, axis,
                  "quantize_and_dequantize")


def quantize_and_dequantize_v2(input, input_min, input_max, signed_input=True, num_bits=8,
                               range_given=False, round_mode="HALF_TO_EVEN", name=None,
                               narrow_range=False, axis=None):
    """`quantize_and_dequantize` (the same arguments and values) as the
    ``QuantizeAndDequantizeV4`` op, whose gradient passes only where ``input_min <= x <=
    input_max`` and is zero for the range (``tf.quantization.quantize_and_dequantize_v2``).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([-2.0, 0.3, 2.0])
    >>> y = tf.quantization.quantize_and_dequantize_v2(x, -1.0, 1.0, range_given=True)
    >>> tf.Session().run(tf.gradients(y, x)[0]).tolist()
    [0.0, 1.0, 0.0]
    """
    return _build("QuantizeAndDequantizeV4", input, input_min, input_max, signed_input,
                  num_bits, range_given, round_mode, name, narrow_range, axis,
                  "quantize_and_dequantize_v2")
