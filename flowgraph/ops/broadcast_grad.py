"""Reducing the gradients of a broadcasting binary op (``x + y``, ``x * y``, ...) to the
shapes of its inputs, built with the ops and names TensorFlow's graph mode uses.

The reduction axes come from the static shapes when they decide them: an input dimension
of 1 facing one that is not 1 (or unknown) was broadcast; equal known dimensions were not;
anything else is decided at run time by ``BroadcastGradientArgs``. An input whose axes are
known to need no reduction (and whose rank equals the output's) gets the output gradient
itself, with no op: the gradient of ``x`` in ``x + b`` for ``x: [None, 3]``, ``b: [3]``
is the incoming gradient, and ``b``'s is ``Reshape(Sum(grad, [0], keepdims), Shape_1)``.

    x: [None, 3]  ─┐                      gx = grad
                   Add ──► grad            gy = Reshape(Sum(grad, [0], keep_dims), [3])
    y: [3]        ─┘

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 3])
>>> b = tf.constant([1.0, 2.0, 3.0])
>>> gx, gb = tf.gradients(tf.reduce_sum(x + b), [x, b])
>>> gb.name
'gradients/add_grad/Reshape:0'
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_reduce as _r
from flowgraph.ops.op_util import make_op

__all__ = ["broadcast_gradient_args", "infer_reduction_axes", "reduce_gradient_args",
           "shape_or_const"]


@register_op("BroadcastGradientArgs", num_outputs=2)
def _broadcast_gradient_args_shape(op, s0, s1):
    for s in (s0, s1):
        if s.ndims is not None and s.ndims != 1:
            raise op.shape_error(f"shapes must be 1-D vectors, got rank {s.ndims}")
    return [TensorShape([None]), TensorShape([None])]


def broadcast_gradient_args(s0, s1, name=None):
    """(axes to sum for shape s0, axes to sum for shape s1) after broadcasting them."""
    op = make_op("BroadcastGradientArgs", [s0, s1], name=name or "BroadcastGradientArgs")
    return op.outputs[0], op.outputs[1]


def shape_or_const(t, name: str = "Shape"):
    """``tf.shape(t)``, as a constant named like the Shape op when `t`'s shape is known."""
    if t.shape.is_fully_defined():
        return constant(np.asarray(t.shape.as_list(), np.int32), dtype=_dtypes.int32,
                        name=name)
    return _a.shape(t, name=name)


def infer_reduction_axes(sx, sy):
    """Axes (of the broadcast result) to sum the gradients of x and of y over, from the
    static shapes; (None, None) when some axis is decided only at run time."""
    if sx.ndims is None or sy.ndims is None:
        return None, None
    n = max(sx.ndims, sy.ndims)
    px = [1] * (n - sx.ndims) + sx.as_list()
    py = [1] * (n - sy.ndims) + sy.as_list()
    rx, ry = [], []
    for axis, (dx, dy) in enumerate(zip(px, py)):
        if dx == 1 and dy != 1:
            rx.append(axis)
        elif dy == 1 and dx != 1:
            ry.append(axis)
        elif dx is None or dy is None:
            return None, None
    return rx, ry


def _reduce_one(grad, shape, axes, must_reduce: bool):
    if grad is None or not must_reduce:
        return grad
    return _a.reshape(_r.reduce_sum(grad, axes, keepdims=True), shape)


def reduce_gradient_args(x, y, gx, gy):
    """`gx`, `gy` (gradients shaped like the broadcast result of ``op(x, y)``) summed to
    the shapes of `x` and `y`; None stays None."""
    if gx is None and gy is None:
        return gx, gy
    sx = shape_or_const(x)
    sy = shape_or_const(y)
    rx, ry = infer_reduction_axes(x.shape, y.shape)
    if rx is None:
        rx, ry = broadcast_gradient_args(sx, sy)
        must_x = must_y = True
    else:
        must_x = bool(rx) or x.shape.ndims < y.shape.ndims
        must_y = bool(ry) or y.shape.ndims < x.shape.ndims
    return _reduce_one(gx, sx, rx, must_x), _reduce_one(gy, sy, ry, must_y)


def same_full_shapes(*tensors) -> bool:
    """Whether all `tensors` are Tensors (not IndexedSlices) of the same fully known
    static shape."""
    if not all(isinstance(t, Tensor) for t in tensors):
        return False
    first = tensors[0].shape
    if not first.is_fully_defined():
        return False
    return all(t.shape.is_fully_defined() and t.shape.as_list() == first.as_list()
               for t in tensors[1:])


not_differentiable("BroadcastGradientArgs")
