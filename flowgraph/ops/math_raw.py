"""Element-wise and reduction op types of TensorFlow graphs beside `math_ops`: the TF 1.0
names ``Div``, ``Mod``, ``Inv``, ``InvGrad``, ``BiasAddV1`` and ``TileGrad``; the ops
TensorFlow 2.x's public functions emit (``MulNoNan`` for `tf.math.multiply_no_nan`,
``EuclideanNorm`` for `tf.math.reduce_euclidean_norm`, ``CumulativeLogsumexp`` for
`tf.math.cumulative_logsumexp`); and ``ApproximateEqual``, ``ClipByValue``,
``AccumulateNV2``, ``ToBool``, ``PopulationCount`` and ``IgammaGradA``.

``Div`` divides integers truncating toward zero (C's ``/``) and floats exactly; ``Mod``
is C's ``fmod`` (the sign of the dividend). Gradients are TensorFlow's; ``Mod``,
``TileGrad``, ``ToBool`` and ``IgammaGradA`` have none, as in TensorFlow.
Kernels: `flowgraph/backends/cpu/kernels_math_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.raw_ops.Div(x=[7, -7], y=[2, 2])).tolist()
[3, -3]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.registry import (
    get_op_def,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape, broadcast_shape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.math_grad import unbroadcast
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import fixed_dtype, make_tensor, op_scope

__all__ = ["cumulative_logsumexp", "multiply_no_nan", "reduce_euclidean_norm"]


def _broadcast(op, x, y):
    try:
        return [broadcast_shape(x, y)]
    except ValueError:
        raise _m.broadcast_error(op, x, y) from None


def _same(op, x, *rest):
    return [x]


for _name in ("Div", "Mod", "MulNoNan", "IgammaGradA"):
    register_op(_name)(_broadcast)
register_op("Inv")(_same)
register_op("InvGrad")(_same)


@register_op("ApproximateEqual", attrs={"tolerance": 1e-5},
             dtype_fn=fixed_dtype(_dtypes.bool))
def _approx_equal_shape(op, x, y):
    if not x.is_compatible_with(y):
        raise op.shape_error(f"x {x} and y {y} must have the same shape")
    return [x.merge_with(y)]


@register_op("ClipByValue")
def _clip_shape(op, t, lo, hi):
    return [t]  # as TensorFlow: the bounds' shapes are checked when the kernel runs


@register_op("EuclideanNorm", attrs={"keep_dims": False}, cost="expensive")
def _euclidean_norm_shape(op, x, axis):
    return get_op_def("Sum").shape_fn(op, x, axis)


@register_op("CumulativeLogsumexp", attrs={"exclusive": False, "reverse": False},
             cost="expensive")
def _cumulative_logsumexp_shape(op, x, axis):
    if axis.ndims not in (None, 0):
        raise op.shape_error(f"axis must be a scalar, got shape {axis}")
    return [x]


@register_op("AccumulateNV2", attrs={"N": 1, "shape": None})
def _accumulate_shape(op, *inputs):
    out = TensorShape(op.attrs.get("shape")) if op.attrs.get("shape") is not None \
        else TensorShape(None)
    for s in inputs:
        if not out.is_compatible_with(s):
            raise op.shape_error(f"inputs of shapes {list(inputs)} and shape {out} differ")
        out = out.merge_with(s)
    return [out]


@register_op("BiasAddV1")
def _bias_add_v1_shape(op, value, bias):
    if value.ndims is not None and value.ndims < 2:
        raise op.shape_error(f"value must be at least 2-D, got shape {value}")
    if bias.ndims not in (None, 1):
        raise op.shape_error(f"bias must be 1-D, got shape {bias}")
    if value.ndims is not None and bias.ndims == 1 and \
            not value.dims[-1].is_compatible_with(bias.dims[0]):
        raise op.shape_error(f"bias of shape {bias} does not match the last dimension of "
                             f"value {value}")
    return [value]


@register_op("TileGrad")
def _tile_grad_shape(op, x, multiples):
    m = constant_value(op.inputs[1])
    if x.ndims is None or m is None:
        return [TensorShape(None) if x.ndims is None else TensorShape([None] * x.ndims)]
    return [TensorShape([None if d.value is None else d.value // int(k)
                         for d, k in zip(x.dims, m.ravel())])]


register_op("ToBool", dtype_fn=fixed_dtype(_dtypes.bool))(lambda op, x: [TensorShape([])])
register_op("PopulationCount", dtype_fn=fixed_dtype(_dtypes.uint8))(_same)

not_differentiable("ApproximateEqual", "PopulationCount")


# -- wrappers (the public functions that emit these ops) --------------------------------------

def multiply_no_nan(x, y, name=None):
    """``x * y``, but 0 wherever ``y`` is 0 even if ``x`` is NaN or infinite (op
    ``MulNoNan``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.math.multiply_no_nan([float("inf"), 2.0], [0.0, 3.0])).tolist()
    [0.0, 6.0]
    """
    with op_scope(name, "multiply_no_nan", (x, y)) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        return make_tensor("MulNoNan", [x, y], name=scope)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """The Euclidean norm ``sqrt(sum(x * conj(x)))`` over `axis` (all axes by default; op
    ``EuclideanNorm``). Integer inputs give the truncated integer norm, as in TensorFlow.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.math.reduce_euclidean_norm([[3.0, 4.0], [6.0, 8.0]], 1)).tolist()
    [5.0, 10.0]
    """
    with op_scope(name, "EuclideanNorm", (input_tensor, axis)) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if axis is None:
            axes = _a.range(_a.rank(x)) if x.shape.ndims is None else \
                list(range(x.shape.ndims))
        else:
            axes = axis
        ax = convert_to_tensor(axes, dtype=_dtypes.int32, name="axis")
        return make_tensor("EuclideanNorm", [x, ax], {"keep_dims": bool(keepdims)},
                           name=scope)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """``log(cumsum(exp(x)))`` along `axis`, computed stably (op ``CumulativeLogsumexp``);
    `exclusive` leaves out each element itself (starting from -inf), `reverse` runs from
    the end.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.math.cumulative_logsumexp([0.0, 0.0])
    >>> [round(v, 4) for v in tf.Session().run(y).tolist()]
    [0.0, 0.6931]
    """
    with op_scope(name, "CumulativeLogsumexp", (x, axis)) as scope:
        t = convert_to_tensor(x, name="x")
        _m.check_dtype(t, (_dtypes.float16, _dtypes.float32, _dtypes.float64),
                       "CumulativeLogsumexp")
        ax = convert_to_tensor(axis, dtype=_dtypes.int32, name="axis")
        return make_tensor("CumulativeLogsumexp", [t, ax],
                           {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                           name=scope)


def approximate_equal(x, y, tolerance=1e-5, name=None):
    """Whether ``|x - y| < tolerance``, element-wise (same shapes; op
    ``ApproximateEqual``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.math_raw import approximate_equal
    >>> tf.Session().run(approximate_equal([1.0, 2.0], [1.0, 2.5])).tolist()
    [True, False]
    """
    with op_scope(name, "ApproximateEqual", (x, y)) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        return make_tensor("ApproximateEqual", [x, y], {"tolerance": float(tolerance)},
                           name=scope)


def clip_by_value_op(t, clip_value_min, clip_value_max, name=None):
    """One ``ClipByValue`` op: `t` clipped to ``[clip_value_min, clip_value_max]`` (each
    a scalar or of `t`'s shape). `tf.clip_by_value` builds ``Minimum``/``Maximum``, as
    TensorFlow does; this is the fused op graphs may hold.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.math_raw import clip_by_value_op
    >>> tf.Session().run(clip_by_value_op([-1.0, 0.5, 3.0], 0.0, 1.0)).tolist()
    [0.0, 0.5, 1.0]
    """
    with op_scope(name, "ClipByValue", (t, clip_value_min, clip_value_max)) as scope:
        x = convert_to_tensor(t, name="t")
        lo = convert_to_tensor(clip_value_min, dtype=x.dtype.base_dtype, name="clip_value_min")
        hi = convert_to_tensor(clip_value_max, dtype=x.dtype.base_dtype, name="clip_value_max")
        return make_tensor("ClipByValue", [x, lo, hi], name=scope)


# -- gradients -------------------------------------------------------------------------------

@register_gradient("Div")
def _div_grad(op, grad):
    return get_op_def("RealDiv").gradient(op, grad)


@register_gradient("Inv")
def _inv_grad(op, grad):
    return get_op_def("Reciprocal").gradient(op, grad)


@register_gradient("InvGrad")
def _inv_grad_grad(op, grad):
    return get_op_def("ReciprocalGrad").gradient(op, grad)


@register_gradient("MulNoNan")
def _mul_no_nan_grad(op, grad):
    x, y = op.inputs
    return list(unbroadcast(op, multiply_no_nan(grad, y), multiply_no_nan(x, grad)))


@register_gradient("ClipByValue")
def _clip_grad(op, grad):
    x, lo, hi = op.inputs
    zeros = _a.zeros_like(grad)
    below = _m.less(x, lo)
    above = _m.greater(x, hi)
    gx = where_v2(_m.logical_or(below, above), zeros, grad)
    glo = where_v2(below, grad, zeros)
    ghi = where_v2(above, grad, zeros)
    return [gx, _sum_to(glo, lo), _sum_to(ghi, hi)]


def _sum_to(g, like):
    """`g` summed down to the shape of `like` (a scalar or g's shape)."""
    if like.shape.ndims == 0:
        return reduce_sum(g)
    if like.shape.is_fully_defined() and g.shape.is_fully_defined() and \
            like.shape.as_list() == g.shape.as_list():
        return g
    from flowgraph.ops.broadcast_grad import broadcast_gradient_args

    axes, _ = broadcast_gradient_args(_a.shape(like), _a.shape(g))
    return _a.reshape(reduce_sum(g, axes), _a.shape(like))


@register_gradient("EuclideanNorm")
def _euclidean_norm_grad(op, grad):
    from flowgraph.ops.reduce_grad import _kept_shape

    x = op.inputs[0]
    norm = op.outputs[0]
    if not op.attrs["keep_dims"]:
        shape = _kept_shape(op)
        norm = _a.reshape(norm, shape)
        grad = _a.reshape(grad, shape)
    return [_m.truediv(x, norm / grad), None]


@register_gradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op, grad):
    x, axis = op.inputs
    out = op.outputs[0]
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    lowest = grad.dtype.base_dtype.min
    pos = where_v2(_m.greater(grad, 0), _m.log(grad), lowest)
    neg = where_v2(_m.less(grad, 0), _m.log(-grad), lowest)
    out_pos = _m.exp(cumulative_logsumexp(pos - out, axis, exclusive, not reverse) + x)
    out_neg = _m.exp(cumulative_logsumexp(neg - out, axis, exclusive, not reverse) + x)
    return [out_pos - out_neg, None]


@register_gradient("AccumulateNV2")
def _accumulate_grad(op, grad):
    return [grad] * len(op.inputs)


@register_gradient("BiasAddV1")
def _bias_add_v1_grad(op, grad):
    axes = _a.range(_a.rank(op.inputs[0]) - 1)
    return [grad, reduce_sum(grad, axes)]
