"""Gradients of the array ops, plus the two ops only gradients need.

Most array ops move elements without changing them, so their gradient moves the output
gradient back: a reshape is undone by a reshape, a slice by a pad, a concat by slices, a
gather by a scatter. `tf.gather` along axis 0 gives an `IndexedSlices` (the gathered rows
and their indices) instead of a dense tensor, so that an optimizer updates only those rows.

Ops defined here:

- ``StridedSliceGrad(shape, begin, end, strides, dy)``: zeros of `shape` with `dy` written
  where ``StridedSlice`` read (same masks as attributes).
- ``MirrorPadGrad(dy, paddings)``: folds the mirrored borders of `dy` back onto the interior.
- ``ConcatOffset(concat_dim, shape_0, ..., shape_N-1)``: where each input of a concat
  starts in its output (the sum of the sizes before it along `concat_dim`, 0 elsewhere);
  the concat gradient slices its blocks out with it, as TensorFlow does.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
>>> g, = tf.gradients(x[:, 1:] * 10.0, x)
>>> with tf.Session() as sess:
...     print(sess.run(g))
[[ 0. 10. 10.]
 [ 0. 10. 10.]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import (
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_gen_ops
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops import math_reduce as _r
from flowgraph.ops.array_static import static_elements
from flowgraph.ops.math_grad import reduce_to
from flowgraph.ops.op_util import make_op, make_tensor, op_scope

__all__: list[str] = []

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def shape_of(x):
    """shape(x) as a constant when statically known, else a Shape op (int32)."""
    if x.shape.is_fully_defined():
        return constant(np.asarray(x.shape.as_list(), np.int32))
    return _a.shape(x)


def _int32(t):
    return _m.cast(t, _dtypes.int32) if t.dtype.base_dtype != _dtypes.int32 else t


# -- ops needed only by gradients -------------------------------------------------------
@register_op("StridedSliceGrad", attrs={m: 0 for m in _MASKS},
             dtype_fn=lambda op: [op.inputs[4].dtype.base_dtype])
def _strided_slice_grad_shape(op, shape, begin, end, strides, dy):
    elems = static_elements(op.inputs[0])
    if elems is None:
        n = shape[0].value if shape.ndims == 1 else None
        return [TensorShape(None if n is None else [None] * n)]
    return [TensorShape([e if isinstance(e, int) and e >= 0 else None for e in elems])]


@register_op("MirrorPadGrad", attrs={"mode": "REFLECT"})
def _mirror_pad_grad_shape(op, dy, paddings):
    pads = constant_value(op.inputs[1])
    if dy.ndims is None or pads is None:
        return [TensorShape(None if dy.ndims is None else [None] * dy.ndims)]
    dims = [None if d.value is None else d.value - int(a) - int(b)
            for d, (a, b) in zip(dy.dims, np.reshape(pads, (-1, 2)).tolist())]
    return [TensorShape(dims)]


@register_op("ConcatOffset", attrs={"N": 2}, num_outputs=lambda op: op.attrs["N"],
             dtype_fn=lambda op: [t.dtype.base_dtype for t in op.inputs[1:]])
def _concat_offset_shape(op, concat_dim, *shapes):
    if concat_dim.ndims not in (None, 0):
        raise op.shape_error(f"concat_dim must be a scalar, got shape {concat_dim}")
    return list(shapes)


not_differentiable("ConcatOffset")


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    masks = {m: op.attrs[m] for m in _MASKS}
    return [None, None, None, None, _a.strided_slice(grad, begin, end, strides, **masks)]


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [_a.pad(grad, op.inputs[1], mode=op.attrs["mode"]), None]


# -- pass-through ----------------------------------------------------------------------
@register_gradient("Identity")
@register_gradient("PlaceholderWithDefault")
def _identity_grad(op, grad):
    return [grad]


@register_gradient("Reshape")
def _reshape_grad(op, grad):
    return [_a.reshape(grad, shape_of(op.inputs[0])), None]


@register_gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [_a.reshape(grad, shape_of(op.inputs[0])), None]


@register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [_a.reshape(grad, shape_of(op.inputs[0]))]


def _inverse_perm(perm_t):
    # An InvertPermutation op even for a constant perm, as TensorFlow builds it (the
    # planner folds it).
    return _a.invert_permutation(perm_t)


@register_gradient("Transpose")
def _transpose_grad(op, grad):
    return [_a.transpose(grad, _inverse_perm(op.inputs[1])), None]


@register_gradient("ConjugateTranspose")
def _conjugate_transpose_grad(op, grad):
    return [_a.transpose(grad, _inverse_perm(op.inputs[1]), conjugate=True), None]


# -- joining and splitting -------------------------------------------------------------
def _axis_value(t, rank):
    a = constant_value(t)
    if a is None or rank is None:
        return None
    return int(a) % rank if rank else int(a)


def _input_shapes(values) -> list:
    """TensorFlow's shapes of the concat inputs: a constant each when all are static,
    else one ``ShapeN`` (the ``Shape`` made for the first unknown one stays, unused)."""
    sizes = []
    for v in values:
        s = _a.shape(v)
        if s.op.type != "Const":
            return _a.shape_n(list(values))
        sizes.append(s)
    return sizes


@register_gradient("ConcatV2")
def _concat_grad(op, grad):
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    if len(values) == 1:
        return [grad, None]
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    axis = axis_t % _a.rank(values[0])  # FloorMod `mod` of the axis and `Rank`
    sizes = _input_shapes(values)
    if len(sizes) > 16:
        # Many inputs: one SplitV by the sizes along the axis (TensorFlow's rule).
        along = _a.squeeze(_a.slice(_a.stack(sizes, axis=1), [axis, 0], [1, -1]))
        return [*_a.split(grad, along, axis, num=len(values)), None]
    offsets = make_op("ConcatOffset", [_int32(axis), *sizes], {"N": len(sizes)},
                      name="ConcatOffset").outputs
    return [*(_a.slice(grad, begin, size) for begin, size in zip(offsets, sizes)), None]


@register_gradient("Split")
def _split_grad(op, *grads):
    return [None, _a.concat(list(grads), op.inputs[0])]


@register_gradient("SplitV")
def _split_v_grad(op, *grads):
    return [_a.concat(list(grads), op.inputs[2]), None, None]


@register_gradient("Pack")
def _pack_grad(op, grad):
    return _a.unstack(grad, num=op.attrs["N"], axis=op.attrs["axis"])


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    return [_a.stack(list(grads), axis=op.attrs["axis"])]


@register_gradient("Tile")
def _tile_grad(op, grad):
    x, multiples = op.inputs
    # grad viewed as [m0, d0, m1, d1, ...] summed over the multiples axes.
    split_shape = _a.reshape(_a.transpose(_a.stack([_int32(multiples), _a.shape(x)])), [-1])
    axes = _a.range(0, _a.size(split_shape), 2)
    g = _r.reduce_sum(_a.reshape(grad, split_shape), axes)
    if x.shape.is_fully_defined():
        g = _a.reshape(g, shape_of(x))
    return [g, None]


def _pad_slice(op, grad):
    x, paddings = op.inputs[0], op.inputs[1]
    begin = _a.reshape(_a.slice(_int32(paddings), [0, 0], [-1, 1]), [-1])
    return _a.slice(grad, begin, shape_of(x))


@register_gradient("Pad")
def _pad_grad(op, grad):
    return [_pad_slice(op, grad), None]


@register_gradient("PadV2")
def _pad_v2_grad(op, grad):
    # The gradient of the fill value: the sum of the gradient over the padding.
    inner = _pad_slice(op, grad)
    cv = _r.reduce_sum(grad) - _r.reduce_sum(inner)
    return [inner, None, cv]


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [make_tensor("MirrorPadGrad", [grad, op.inputs[1]], {"mode": op.attrs["mode"]},
                        name="MirrorPadGrad"), None]


@register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [_a.reverse_v2(grad, op.inputs[1]), None]


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [_a.reverse_sequence(grad, op.inputs[1], seq_axis=op.attrs["seq_dim"],
                                batch_axis=op.attrs["batch_dim"]), None]


# -- slicing and indexing --------------------------------------------------------------
@register_gradient("Slice")
def _slice_grad(op, grad):
    x, begin = op.inputs[0], _int32(op.inputs[1])
    after = shape_of(x) - begin - _a.shape(op.outputs[0])
    paddings = _a.stack([begin, after], axis=1)
    return [_a.pad(grad, paddings), None, None]


@register_gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    # TensorFlow's construction: the shape in the index dtype (a Const "Shape" when
    # static), then every index input known at graph construction passed as a value, so
    # it becomes a Const of the grad op (StridedSliceGrad/shape, /begin, /end, /strides).
    x, begin, end, strides = op.inputs
    index_dtype = begin.dtype.base_dtype
    shape = _a.shape(x, out_type=index_dtype)
    inputs = [shape, begin, end, strides]
    values = [constant_value(t) for t in inputs]
    given = [t if v is None else v for t, v in zip(inputs, values)]
    masks = {m: op.attrs[m] for m in _MASKS}
    with op_scope(None, "StridedSliceGrad", [*given, grad]) as scope:
        args = [convert_to_tensor(v, dtype=index_dtype, name=n)
                for v, n in zip(given, ("shape", "begin", "end", "strides"))]
        g = make_tensor("StridedSliceGrad", [*args, grad], masks, name=scope)
    return [g, None, None, None]


@register_gradient("GatherV2")
def _gather_grad(op, grad):
    params, indices, axis_t = op.inputs
    if op.attrs.get("batch_dims", 0):
        return [_batch_gather_grad(op, grad), None, None]
    axis = _axis_value(axis_t, params.shape.ndims)
    if axis == 0:
        # TensorFlow's construction: int64 Shape (a constant when known) cast to int32,
        # ExpandDims(Size(indices)), then the two Reshapes.
        if params.shape.is_fully_defined():
            shape64 = constant(np.asarray(params.shape.as_list(), np.int64), name="Shape")
        else:
            shape64 = _a.shape(params, out_type=_dtypes.int64)
        pshape = _m.cast(shape64, _dtypes.int32)
        size = _a.expand_dims(_a.size(indices), 0)
        values = _a.reshape(grad, _a.concat([size, pshape[1:]], 0))
        return [IndexedSlices(values, _a.reshape(indices, size), pshape), None, None]
    pshape = _a.shape(params, out_type=indices.dtype.base_dtype) \
        if not params.shape.is_fully_defined() else \
        constant(np.asarray(params.shape.as_list(), indices.dtype.as_numpy_dtype))
    n = _a.size(indices, out_type=indices.dtype.base_dtype)
    if axis is None:
        raise NotImplementedError(
            f"Gradient of GatherV2 '{op.name}': the axis and the rank of params must be "
            "known when the graph is built")
    # Move the gathered dimensions to the front, scatter-add, move the axis back.
    rp, ri = params.shape.ndims, indices.shape.ndims
    if ri is None:
        raise NotImplementedError(f"Gradient of GatherV2 '{op.name}': indices need a known "
                                  "rank")
    perm = [*range(axis, axis + ri), *range(axis), *range(axis + ri, rp + ri - 1)]
    moved = _a.transpose(grad, perm)
    rest = _a.concat([pshape[:axis], pshape[axis + 1:]], 0)
    values = _a.reshape(moved, _a.concat([_a.reshape(n, [1]), rest], 0))
    front_shape = _a.concat([pshape[axis:axis + 1], rest], 0)
    dense = _a.scatter_nd(_a.reshape(indices, [-1, 1]), values, front_shape)
    back = [*range(1, axis + 1), 0, *range(axis + 1, rp)]
    return [_a.transpose(dense, back), None, None]


def _batch_gather_grad(op, grad):
    """The dense gradient of a gather with ``batch_dims = b > 0`` along ``axis = a``.

    ``grad`` is ``[B, P[b:a], I, P[a+1:]]``; moved to ``[B, I, P[b:a], P[a+1:]]`` and
    flattened, its rows are scatter-added into ``B * P[a]`` rows at ``batch * P[a] + index``
    (duplicates sum), which are then unflattened and moved back to the params' layout.
    """
    params, indices, axis_t = op.inputs
    rp, ri = params.shape.ndims, indices.shape.ndims
    axis = _axis_value(axis_t, rp)
    if axis is None or ri is None:
        raise NotImplementedError(
            f"Gradient of GatherV2 '{op.name}' with batch_dims: the axis and the ranks of "
            "params and indices must be known when the graph is built")
    b = op.attrs["batch_dims"] % ri if op.attrs["batch_dims"] < 0 else op.attrs["batch_dims"]
    ni = ri - b  # index dimensions after the batch ones
    itype = indices.dtype.base_dtype
    pshape = _a.shape(params, out_type=itype)
    perm = [*range(b), *range(axis, axis + ni), *range(b, axis), *range(axis + ni, rp + ni - 1)]
    moved = _a.transpose(grad, perm)
    between = _a.concat([pshape[b:axis], pshape[axis + 1:]], 0)  # P[b:a] + P[a+1:]
    n_batch = _r.reduce_prod(pshape[:b])
    rows = _a.reshape(_a.size(indices, out_type=itype), [1])
    values = _a.reshape(moved, _a.concat([rows, between], 0))
    batch_ids = _a.reshape(array_gen_ops.range(0, n_batch, dtype=itype),
                           _a.concat([pshape[:b], _a.ones([ni], itype)], 0))
    flat = _a.reshape(indices + batch_ids * pshape[axis], [-1, 1])
    dense = _a.scatter_nd(flat, values,
                          _a.concat([_a.reshape(n_batch * pshape[axis], [1]), between], 0))
    dense = _a.reshape(dense, _a.concat([pshape[:b], pshape[axis:axis + 1], between], 0))
    back = [*range(b), *range(b + 1, axis + 1), b, *range(axis + 1, rp)]
    return _a.transpose(dense, back)


@register_gradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    shape = _a.shape(params, out_type=indices.dtype.base_dtype)
    return [_a.scatter_nd(indices, grad, shape), None]


@register_gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, _a.gather_nd(grad, op.inputs[0]), None]


@register_gradient("Select")
def _select_grad(op, grad):
    cond = op.inputs[0]
    zeros = _a.zeros_like(op.inputs[1])
    return [None, _a.where(cond, grad, zeros), _a.where(cond, zeros, grad)]


@register_gradient("SelectV2")
def _select_v2_grad(op, grad):
    cond, x, y = op.inputs
    zeros = _a.zeros([], grad.dtype.base_dtype)  # a scalar, broadcast (as TensorFlow does)
    gx = reduce_to(_a.where_v2(cond, grad, zeros), x)
    gy = reduce_to(_a.where_v2(cond, zeros, grad), y)
    return [None, gx, gy]


@register_gradient("Fill")
def _fill_grad(op, grad):
    return [None, _r.reduce_sum(grad)]
