"""Real quantization with TensorFlow's op types: ``QuantizeV2`` (float to a quantized
type plus the range it used), ``Dequantize`` (back to float) and ``QuantizedConcat``
(joins quantized tensors, requantizing them into one common range).

A quantized tensor always travels with two float scalars, the real values its lowest
and highest codes stand for; the ops take them as inputs and return them as outputs.
Three mappings between floats and codes exist (``mode``):

- ``MIN_COMBINED``: ``[min, max]`` spread linearly over the type's whole code range;
- ``MIN_FIRST``: the same, but ``min`` is first rounded to a multiple of the step, so
  that requantizing is exact;
- ``SCALED``: a symmetric scale ``code = value * s`` (zero is always code 0).

TensorFlow registers no gradient for these ops, and neither does flowgraph:
`tf.gradients` through them raises `LookupError` as it does there.

Example
-------
>>> import flowgraph as tf
>>> q = tf.quantize([0.0, 1.0, 2.55], 0.0, 2.55, tf.quint8)   # steps of 0.01
>>> x = tf.dequantize(q.output, q.output_min, q.output_max)
>>> [round(v, 3) for v in tf.Session().run(x).tolist()]
[0.0, 1.0, 2.55]
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import OpCost, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_static import const_int, normalize_axis
from flowgraph.ops.op_util import make_op

__all__ = ["dequantize", "quantize", "quantize_v2", "quantized_concat"]

QUANTIZED = (_dtypes.qint8, _dtypes.quint8, _dtypes.qint32, _dtypes.qint16, _dtypes.quint16)
MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")
ROUND_MODES = ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")

QuantizeV2 = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])
QuantizedConcat = collections.namedtuple("QuantizedConcat",
                                         ["output", "output_min", "output_max"])

_F32 = _dtypes.float32


def _range_shape(op, x, mn, mx):
    """The shape of the range tensors: scalars, or with `axis` one value per slice."""
    axis = op.attrs["axis"]
    if axis == -1:
        for name, s in (("min_range", mn), ("max_range", mx)):
            if s.ndims not in (None, 0):
                raise op.shape_error(f"{name} must be a scalar (rank 0) without axis, got "
                                     f"rank {s.ndims}; pass axis= for one range per slice")
        return TensorShape([])
    size = None if x.ndims is None else x[normalize_axis(axis, x.ndims, op.type)]
    out = TensorShape([size])
    for name, s in (("min_range", mn), ("max_range", mx)):
        if s.ndims is not None and (s.ndims != 1 or not s.is_compatible_with(out)):
            raise op.shape_error(f"with axis={axis}, {name} must be a vector of the "
                                 f"{size} slices along that axis, got shape {s}")
    return out


@register_op("QuantizeV2", num_outputs=3, cost=OpCost.CHEAP,
             attrs={"T": None, "mode": "MIN_COMBINED", "round_mode": "HALF_AWAY_FROM_ZERO",
                    "narrow_range": False, "axis": -1, "ensure_minimum_range": 0.01},
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["T"]), _F32, _F32])
def _quantize_shape(op, x, mn, mx):
    r = _range_shape(op, x, mn, mx)
    return [x, r, r]


@register_op("Dequantize", cost=OpCost.CHEAP,
             attrs={"mode": "MIN_COMBINED", "narrow_range": False, "axis": -1,
                    "dtype": _F32},
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["dtype"])])
def _dequantize_shape(op, x, mn, mx):
    _range_shape(op, x, mn, mx)
    return [x]


@register_op("QuantizedConcat", num_outputs=3, attrs={"N": 2},
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype, _F32, _F32])
def _quantized_concat_shape(op, axis, *rest):
    n = op.attrs["N"]
    values = rest[:n]
    ranks = {s.ndims for s in values if s.ndims is not None}
    if len(ranks) > 1:
        raise op.shape_error(f"all values must have the same rank, got ranks {sorted(ranks)}")
    scalar = TensorShape([])
    if not ranks:
        return [TensorShape(None), scalar, scalar]
    r = ranks.pop()
    d = const_int(op.inputs[0])
    if d is None:
        return [TensorShape([None] * r), scalar, scalar]
    d = normalize_axis(d, r, "quantized_concat")
    dims = []
    for i in range(r):
        sizes = [s[i] if s.ndims is not None else None for s in values]
        if i == d:
            known = [s for s in sizes if s is not None]
            dims.append(sum(known) if len(known) == len(sizes) else None)
        else:
            merged = next((s for s in sizes if s is not None), None)
            for s in sizes:
                if s is not None and merged is not None and s != merged:
                    raise op.shape_error(f"dimension {i} differs between values: "
                                         f"{s} vs {merged}")
            dims.append(merged)
    return [TensorShape(dims), scalar, scalar]


# -- wrappers ---------------------------------------------------------------------------

def check_quantized(dtype, what: str, param: str = "T"):
    """`dtype` as a `DType`, or TensorFlow's TypeError when it is not a quantized type."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in QUANTIZED:
        raise TypeError(f"{what}: Value passed to parameter '{param}' has DataType "
                        f"{dtype.name} not in list of allowed values: "
                        + ", ".join(d.name for d in QUANTIZED))
    return dtype


def _check_axis_mode(mode, axis, op_type):
    if axis is not None and mode == "MIN_FIRST":
        raise errors.UnimplementedError(
            None, None, f"{op_type}: mode MIN_FIRST has no per-slice form (axis={axis}), as "
            f"in TensorFlow; use MIN_COMBINED or SCALED with axis, or one range without it")


def _check_choice(value, choices, attr, op_type):
    if value not in choices:
        raise ValueError(f"Attr '{attr}' of '{op_type}' Op passed string '{value}' not in: "
                         + ", ".join(f'"{c}"' for c in choices) + ".")
    return value


def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED", name=None,
                round_mode="HALF_AWAY_FROM_ZERO", narrow_range=False, axis=None,
                ensure_minimum_range=0.01):
    """Quantize the float tensor `input` to the quantized type `T`.

    The range is first widened to contain 0.0 and to span at least
    ``ensure_minimum_range * max(1, |min_range|, |max_range|)``; `mode` picks the mapping
    (see the module docstring) and `round_mode` how halves round (``HALF_TO_EVEN`` works
    only with ``mode="SCALED"``). With `axis`, `min_range` and `max_range` are vectors,
    one range per slice along that axis. Returns ``(output, output_min, output_max)``:
    the codes and the float range they actually represent.

    Example
    -------
    >>> import flowgraph as tf
    >>> out, lo, hi = tf.quantize_v2([-1.0, 0.5, 6.0], -1.0, 6.0, tf.quint8)
    >>> tf.Session().run([out, lo, hi])[0].view("u1").tolist()
    [0, 55, 255]
    """
    T = check_quantized(T, "quantize")
    _check_axis_mode(mode, axis, "QuantizeV2")
    attrs = {"T": T, "mode": _check_choice(mode, MODES, "mode", "QuantizeV2"),
             "round_mode": _check_choice(round_mode, ROUND_MODES, "round_mode", "QuantizeV2"),
             "narrow_range": bool(narrow_range), "axis": -1 if axis is None else int(axis),
             "ensure_minimum_range": float(ensure_minimum_range)}
    x = convert_to_tensor(input, dtype=_F32, name="input")
    op = make_op("QuantizeV2", [x, convert_to_tensor(min_range, dtype=_F32, name="min_range"),
                                convert_to_tensor(max_range, dtype=_F32, name="max_range")],
                 attrs, name=name or "QuantizeV2")
    return QuantizeV2(*op.outputs)


def quantize(input, min_range, max_range, T, mode="MIN_COMBINED",
             round_mode="HALF_AWAY_FROM_ZERO", name=None, narrow_range=False, axis=None,
             ensure_minimum_range=0.01):
    """Quantize `input` to the quantized type `T` (`quantize_v2` with its arguments in
    TensorFlow 1.15's order).

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.quantize([0.0, 1.0], -1.0, 1.0, tf.qint8, mode="SCALED")
    >>> tf.Session().run(q.output).view("i1").tolist()
    [0, 127]
    """
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name,
                       round_mode=round_mode, narrow_range=narrow_range, axis=axis,
                       ensure_minimum_range=ensure_minimum_range)


def dequantize(input, min_range, max_range, mode="MIN_COMBINED", name=None, axis=None,
               narrow_range=False, dtype=_dtypes.float32):
    """Map the quantized tensor `input`, whose codes span ``[min_range, max_range]``,
    back to floats (the inverse of `quantize` with the same `mode`).

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.quantize([0.25, 0.75], 0.0, 1.0, tf.quint8)
    >>> y = tf.dequantize(q.output, q.output_min, q.output_max)
    >>> [round(v, 2) for v in tf.Session().run(y).tolist()]
    [0.25, 0.75]
    """
    x = convert_to_tensor(input, name="input")
    check_quantized(x.dtype, "dequantize")
    _check_axis_mode(mode, axis, "Dequantize")
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype != _F32:
        raise TypeError(f"dequantize: dtype must be float32 in flowgraph, got {dtype.name}")
    attrs = {"mode": _check_choice(mode, MODES, "mode", "Dequantize"),
             "narrow_range": bool(narrow_range), "axis": -1 if axis is None else int(axis),
             "dtype": dtype}
    op = make_op("Dequantize", [x, convert_to_tensor(min_range, dtype=_F32, name="min_range"),
                                convert_to_tensor(max_range, dtype=_F32, name="max_range")],
                 attrs, name=name or "Dequantize")
    return op.outputs[0]


def quantized_concat(concat_dim, values, input_mins, input_maxes, name=None):
    """Concatenate quantized tensors along `concat_dim`, each with its own range
    (``input_mins[i]``, ``input_maxes[i]``), into one tensor with a common range that
    covers them all and 0.0 (symmetric for signed types). Returns
    ``(output, output_min, output_max)``.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> a = tf.bitcast(tf.constant(np.uint8([0, 255])), tf.quint8)   # [0.0, 1.0]
    >>> b = tf.bitcast(tf.constant(np.uint8([0, 255])), tf.quint8)   # [0.0, 2.0]
    >>> out, lo, hi = tf.quantized_concat(0, [a, b], [0.0, 0.0], [1.0, 2.0])
    >>> tf.Session().run(out).view("u1").tolist()
    [0, 128, 0, 255]
    """
    values = [convert_to_tensor(v, name="values") for v in values]
    if not values:
        raise ValueError("quantized_concat: values must hold at least one tensor")
    dtype = check_quantized(values[0].dtype, "quantized_concat")
    for v in values[1:]:
        if v.dtype.base_dtype != dtype:
            raise TypeError(f"quantized_concat: all values must have one type, got "
                            f"{dtype.name} and {v.dtype.base_dtype.name} ({v.name})")
    n = len(values)
    mins = [convert_to_tensor(m, dtype=_F32, name="input_mins") for m in input_mins]
    maxes = [convert_to_tensor(m, dtype=_F32, name="input_maxes") for m in input_maxes]
    if len(mins) != n or len(maxes) != n:
        raise ValueError(f"quantized_concat: got {n} values but {len(mins)} input_mins and "
                         f"{len(maxes)} input_maxes; give one range per value")
    axis = convert_to_tensor(concat_dim, dtype=_dtypes.int32, name="concat_dim")
    op = make_op("QuantizedConcat", [axis, *values, *mins, *maxes], {"N": n},
                 name=name or "QuantizedConcat")
    return QuantizedConcat(*op.outputs)
