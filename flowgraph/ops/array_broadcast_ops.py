"""`tf.broadcast_to`: one `BroadcastTo` op (TensorFlow's type), and its gradient.

The output repeats the input along the dimensions where it is 1 (or missing: dimensions
align from the right, NumPy's rule). Static shapes are checked when the graph is built,
the rest when it runs (the kernel's InvalidArgumentError names both shapes). The
gradient sums the incoming gradient over the broadcast dimensions.

Example
-------
>>> import flowgraph as tf
>>> y = tf.broadcast_to([1, 2], [3, 2])
>>> y.op.type, y.shape.as_list()
('BroadcastTo', [3, 2])
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_shape_ops as _s
from flowgraph.ops import math_reduce as _r
from flowgraph.ops.array_static import static_shape_of
from flowgraph.ops.broadcast_grad import broadcast_gradient_args
from flowgraph.ops.op_util import make_tensor, op_scope

__all__ = ["broadcast_to"]


def _incompatible(x: TensorShape, target: TensorShape, detail: str) -> ValueError:
    return ValueError(f"tf.broadcast_to: input of shape {x} cannot be broadcast to shape "
                      f"{target}: {detail}; each input dimension, aligned from the right, "
                      f"must be 1 or equal the target's")


def broadcast_static(x: TensorShape, target: TensorShape) -> TensorShape:
    """The static output shape of broadcasting `x` to `target`; ValueError when the known
    dimensions cannot broadcast."""
    if target.ndims is None:
        return target
    if x.ndims is not None and x.ndims > target.ndims:
        raise _incompatible(x, target, f"the input has rank {x.ndims} > {target.ndims}")
    if x.ndims is None:
        return target
    dims = [d.value for d in target.dims]
    offset = target.ndims - x.ndims
    for i, got in enumerate(d.value for d in x.dims):
        want = dims[offset + i]
        if got is not None and want is not None and got not in (1, want):
            raise _incompatible(x, target, f"dimension {got} vs {want}")
        if want is None and got is not None and got != 1:
            dims[offset + i] = got
    return TensorShape(dims)


@register_op("BroadcastTo")
def _broadcast_to_shape(op, x, shape):
    if shape.ndims not in (None, 1):
        raise op.shape_error(f"shape must be a 1-D tensor, got rank {shape.ndims}")
    target = static_shape_of(op.inputs[1])
    if target.ndims is None and shape.ndims == 1 and shape[0].value is not None:
        target = TensorShape([None] * shape[0].value)
    try:
        return [broadcast_static(x, target)]
    except ValueError as e:
        raise op.shape_error(str(e)) from None


def broadcast_to(input, shape, name=None):
    """Broadcast `input` to `shape` (NumPy's rules); the gradient sums over broadcast dims.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.broadcast_to([1, 2], [2, 2])).tolist()
    [[1, 2], [1, 2]]
    """
    with op_scope(name, "BroadcastTo", (input, shape)) as scope:
        x = convert_to_tensor(input, name="input")
        target = convert_to_tensor(shape, name="shape")
        if target.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"tf.broadcast_to: shape must be int32 or int64, got "
                            f"{target.dtype.name} ({target.name})")
        broadcast_static(x.shape, static_shape_of(target))
        return make_tensor("BroadcastTo", [x, target], {"Tidx": target.dtype.base_dtype},
                           name=scope)


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    x, target = op.inputs
    dtype = target.dtype.base_dtype
    if x.shape.is_fully_defined():  # a constant, as TensorFlow's shape() folds it
        x_shape = constant(x.shape.as_list(), dtype=dtype)
    else:
        x_shape = _s.shape(x, out_type=dtype)
    _, axes = broadcast_gradient_args(target, x_shape)
    summed = _r.reduce_sum(grad, axis=axes, keepdims=True)
    return [_s.reshape(summed, x_shape), None]
