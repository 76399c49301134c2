"""Gradients of ``Sum`` and ``Mean``, built with TensorFlow's ops and names.

The output gradient is reshaped to the input's rank (reduced axes kept as 1) and tiled
back to the input's shape. With the rank known and every axis reduced (a loss), that is
``Reshape(grad, [1, ..., 1])`` then ``Tile`` by the input's shape (a constant when known,
else a ``Shape`` op). With the input's shape fully known the reshape target and the tile
multiples are constants. Otherwise the shapes are computed at run time. ``Mean``
divides the result by the number of elements reduced into each output element.

    Mean(x: [None, 3])   grad ─► Reshape [1, 1] ─► Tile Shape(x) ─► truediv ─► dx
                                                     count = Prod(Gather(Shape(x), axes))

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 3])
>>> tf.gradients(tf.reduce_mean(x), x)[0].name
'gradients/Mean_grad/truediv:0'
"""

from __future__ import annotations

import weakref

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value
from flowgraph.framework.registry import register_gradient
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops import math_reduce as _r
from flowgraph.ops.op_util import make_tensor, op_scope

__all__: list[str] = []

# Per graph: (input shape, axes) whose kept shape and tile multiples were already worked
# out. TensorFlow builds the (unused) Maximum/floordiv ops only the first time; so do we.
_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _static_kept_shape(graph, dims: list[int], axes) -> tuple[list[int], list[int]]:
    kept = np.asarray(dims, np.int32)
    kept[np.asarray(axes, np.int32).reshape(-1)] = 1
    scaling = np.asarray(dims, np.int32) // np.maximum(kept, 1)
    seen = _SEEN.setdefault(graph, set())
    key = (tuple(dims), tuple(np.asarray(axes).reshape(-1).tolist()))
    if key not in seen:
        seen.add(key)
        # TensorFlow evaluates these ops for their constant values and leaves them
        # unused in the graph; they are pruned from every run.
        big = _m.maximum(kept, 1)
        with op_scope(None, "floordiv", (None,)) as scope:  # opens scope floordiv/
            top = constant(np.asarray(dims, np.int32), name="x")
            make_tensor("FloorDiv", [top, big], name=scope)
    return kept.tolist(), scaling.tolist()


def _sum_to_input(op, grad):
    """`grad` of a Sum/Mean output tiled back to the input's shape."""
    x = op.inputs[0]
    rank = x.shape.ndims
    axes = constant_value(op.inputs[1])
    if rank is not None and axes is not None:
        dims = x.shape.as_list()
        if np.array_equal(np.reshape(axes, -1), np.arange(rank)):
            grad = _a.reshape(grad, [1] * rank)
            if None not in dims:
                multiples = constant(np.asarray(dims, np.int32), dtype=_dtypes.int32)
            else:
                multiples = _a.shape(x)
            return _a.tile(grad, multiples)
        if None not in dims:
            kept, scaling = _static_kept_shape(x.graph, dims, axes)
            return _a.tile(_a.reshape(grad, kept), scaling)
    return _broadcast_back(op, grad)


def _kept_shape(op):
    """The output shape with reduced axes kept as 1 (a tensor), for broadcasting back."""
    x, axes = op.inputs[0], op.inputs[1]
    static = constant_value(axes)
    rank = x.shape.ndims
    if rank is not None and static is not None:
        red = {int(a) % rank for a in np.reshape(static, -1).tolist()} if rank else set()
        if x.shape.is_fully_defined():
            dims = [1 if i in red else d for i, d in enumerate(x.shape.as_list())]
            return constant(np.asarray(dims, np.int32))
        mask = constant(np.asarray([i in red for i in range(rank)], bool))
    else:
        r = _a.rank(x)
        # A scalar (rank 0 at run time) is reduced over no axes; the modulus must not be 0.
        flat = _m.floormod(_m.cast(_a.reshape(axes, [-1]), _dtypes.int32) + r,
                           _m.maximum(r, 1))
        hits = _r.reduce_sum(_a.one_hot(flat, r, dtype=_dtypes.int32), 0)
        mask = _m.greater(hits, 0)
    shape = _a.shape(x)
    return _a.where_v2(mask, _a.ones_like(shape), shape)


def _broadcast_back(op, grad):
    """`grad` of a reduction's output broadcast to the input's shape."""
    x = op.inputs[0]
    if not op.attrs.get("keep_dims", False):
        grad = _a.reshape(grad, _kept_shape(op))
    return grad * _a.ones_like(x) if not _same_static(grad, x) else grad


def _same_static(a, b) -> bool:
    return a.shape.is_fully_defined() and b.shape.is_fully_defined() and a.shape == b.shape


@register_gradient("Sum")
def _sum_grad(op, grad):
    return [_sum_to_input(op, grad), None]


@register_gradient("Mean")
def _mean_grad(op, grad):
    sum_grad = _sum_to_input(op, grad)
    x, y = op.inputs[0], op.outputs[0]
    dtype = sum_grad.dtype.base_dtype
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        n = x.shape.num_elements() // max(y.shape.num_elements(), 1)
        factor = constant(n, dtype=dtype)
    else:
        input_shape = _a.shape(x)
        rank = x.shape.ndims
        if rank is not None:
            size = constant(np.int32(rank), dtype=_dtypes.int32, name="Size")
        else:  # a scalar at run time has no axes; keep the modulus nonzero
            size = _m.maximum(_a.size(input_shape), 1)
        axes = op.inputs[1]
        if axes.dtype.base_dtype != _dtypes.int32:
            size = _m.cast(size, axes.dtype.base_dtype)
        axes = _m.floormod(make_tensor("AddV2", [axes, size], name="add"), size, name="mod")
        factor = _m.cast(_r.reduce_prod(_a.gather(input_shape, axes)), dtype)
    return [_m.truediv(sum_grad, factor), None]
