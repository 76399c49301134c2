"""The backward ops of unary math functions whose derivative is cheapest from the output.

``XGrad(y, dy)`` takes the forward op's *output* ``y`` and the incoming gradient ``dy``
and returns ``dy * f'(x)`` written in terms of ``y`` (the types and input order
TensorFlow's gradient graphs have, so ``op.type`` counts and exported graphs match)::

    TanhGrad(y, dy)       = dy * (1 - y * y)
    SigmoidGrad(y, dy)    = dy * (y * (1 - y))
    SqrtGrad(y, dy)       = dy * 0.5 / y
    RsqrtGrad(y, dy)      = dy * (-0.5 * y * y * y)
    ReciprocalGrad(y, dy) = -(y * y * dy)

Each is one elementwise op, so the planner fuses it like any other (the CPU kernels do
the NumPy calls the former composite graph made, in its order: results are bitwise the
same). Each has a gradient itself, so gradients of gradients work. On complex inputs
SqrtGrad, RsqrtGrad and ReciprocalGrad use ``conj(y)`` in place of ``y`` (as TensorFlow's
kernels do), and the gradients of Tanh and Sigmoid pass ``conj(y)``: `math_grad`'s
convention, ``grad * conj(f'(x))``.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([0.0, 1.0])
>>> g = tf.gradients(tf.tanh(x), x)[0]
>>> g.op.type, [t.op.type for t in g.op.inputs]
('TanhGrad', ['Tanh', 'Fill'])
>>> with tf.Session() as sess:
...     print(sess.run(g).round(4))
[1.   0.42]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import constant
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import math_ops as _m
from flowgraph.ops.op_util import make_tensor

__all__ = ["CONJUGATING", "OUTPUT_GRAD_OPS", "output_grad"]

# forward op type -> its backward op type
OUTPUT_GRAD_OPS = {"Tanh": "TanhGrad", "Sigmoid": "SigmoidGrad", "Sqrt": "SqrtGrad",
                   "Rsqrt": "RsqrtGrad", "Reciprocal": "ReciprocalGrad"}


def _same_shape(op, y: TensorShape, dy: TensorShape):
    try:
        return [y.merge_with(dy)]
    except ValueError:
        raise op.shape_error(f"y of shape {y} and dy of shape {dy} must have one shape; "
                             f"pass the forward output and its gradient") from None


for _grad_type in OUTPUT_GRAD_OPS.values():
    register_op(_grad_type)(_same_shape)


def _c(t):
    return _m.conj(t) if t.dtype.is_complex else t


def _k(value, like):
    return constant(value, dtype=like.dtype.base_dtype)


def _grad_op(op_type: str, y, dy):
    return make_tensor(op_type, [y, dy], name=op_type)


# These conjugate y themselves on complex inputs (TensorFlow's kernels do); TanhGrad and
# SigmoidGrad are given conj(y) by their callers.
CONJUGATING = frozenset({"SqrtGrad", "RsqrtGrad", "ReciprocalGrad"})


def output_grad(op_type: str, op, grad):
    """The backward op `op_type` of the forward `op` (output ``y``) for the incoming
    `grad`: a gradient rule's result (see the module docstring)."""
    y = op.outputs[0]
    return _grad_op(op_type, y if op_type in CONJUGATING else _c(y), grad)


# -- second order: gradients of the backward ops, w.r.t. (y, dy) ---------------------------
@register_gradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    y, dy = _c(op.inputs[0]), _c(op.inputs[1])
    return [grad * _k(-2, grad) * dy * y, _grad_op("TanhGrad", y, grad)]


@register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    y, dy = _c(op.inputs[0]), _c(op.inputs[1])
    g_dy = grad * dy
    return [g_dy - _k(2, grad) * g_dy * y, _grad_op("SigmoidGrad", y, grad)]


@register_gradient("SqrtGrad")
def _sqrt_grad_grad(op, grad):
    g_over_y = grad / op.inputs[0]
    # SqrtGrad is linear in dy: d/d(dy) is 0.5 / y (no conj: checked on complex inputs)
    return [-_c(g_over_y) * op.outputs[0], _k(0.5, grad) * g_over_y]


@register_gradient("RsqrtGrad")
def _rsqrt_grad_grad(op, grad):
    y, dy = _c(op.inputs[0]), op.inputs[1]
    return [_k(-1.5, grad) * _c(grad) * dy * _m.square(y), _grad_op("RsqrtGrad", y, grad)]


@register_gradient("ReciprocalGrad")
def _reciprocal_grad_grad(op, grad):
    y, dy = _c(op.inputs[0]), op.inputs[1]
    return [_c(grad) * _k(-2, grad) * dy * y, _grad_op("ReciprocalGrad", y, grad)]
