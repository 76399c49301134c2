"""TensorFlow's remaining scatter, gather and stitch op types: ``ScatterNdMax``/``Min`` on
a reference variable (``ResourceScatterNdMax``/``Min``, which a resource variable's
``scatter_nd_max``/``min`` methods emit, are in `resource_variable_ops`),
``ResourceGatherNd`` (`tf.gather_nd` of a resource variable), ``ScatterNdNonAliasingAdd``
(TF1's functional scatter-add), ``TensorStridedSliceUpdate`` (`x[spec] = value` on a plain
tensor, as a new tensor) and ``ParallelDynamicStitch`` (the stitch of TensorFlow's
partitioned ``embedding_lookup``), with TensorFlow's gradients.

Their kernels reuse those of the ops they generalize (`kernels_scatter.py`,
`kernels_slice_assign.py`, `kernels_segment.py`): `flowgraph/backends/cpu/
kernels_scatter_raw.py`.

    TensorStridedSliceUpdate([1, 2, 3, 4], begin=[3], end=[0], strides=[-2], [9, 8])
      -> [1, 8, 3, 9]

Example
-------
>>> import flowgraph as tf
>>> v = tf.Variable([1.0, 5.0, 3.0])
>>> up = tf.raw_ops.ScatterNdMax(ref=v, indices=[[0], [1]], updates=[4.0, 2.0])
>>> with tf.Session() as sess:
...     sess.run(v.initializer)
...     print(up.op.type, sess.run(up))
ScatterNdMax [4. 5. 3.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import (
    OpCost,
    get_op_def,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, make_tensor
from flowgraph.ops.resource_variable_ops import handle_shape
from flowgraph.ops.scatter_ops import _nd_shape, _tensor_shape
from flowgraph.ops.segment_ops import _stitch_dtypes, _stitch_shape

__all__: list[str] = []

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")

for _t in ("ScatterNdMax", "ScatterNdMin"):
    register_op(_t, attrs={"use_locking": False}, ref_inputs=(0,), ref_outputs=(0,),
                stateful=True)(_nd_shape)
register_op("ScatterNdNonAliasingAdd")(_tensor_shape)
register_op("ParallelDynamicStitch", attrs={"N": 1}, dtype_fn=_stitch_dtypes,
            cost=OpCost.EXPENSIVE)(_stitch_shape)


@register_op("ResourceGatherNd", attrs={"dtype": None, "Tindices": None},
             dtype_fn=attr_dtype("dtype"), stateful=True, cost=OpCost.EXPENSIVE)
def _resource_gather_nd_shape(op, handle, indices):
    var = handle_shape(op.inputs[0])
    if var.ndims is None or indices.ndims is None or indices[-1].value is None:
        return [TensorShape(None)]
    depth = indices[-1].value
    if depth > var.ndims:
        raise op.shape_error(f"index depth {depth} (last dimension of indices) exceeds the "
                             f"rank {var.ndims} of the variable's shape {var}")
    return [TensorShape(indices.dims[:-1] + var.dims[depth:])]


@register_op("TensorStridedSliceUpdate", attrs=dict.fromkeys(_MASKS, 0))
def _tensor_strided_slice_update_shape(op, x, begin, end, strides, value):
    if begin.ndims not in (None, 1) or end.ndims not in (None, 1) or \
            strides.ndims not in (None, 1):
        raise op.shape_error(f"begin, end and strides must be vectors, got {begin}, {end} "
                             f"and {strides}")
    return [x]


# -- gradients ---------------------------------------------------------------------------
@register_gradient("ScatterNdNonAliasingAdd")
def _non_aliasing_add_grad(op, grad):
    from flowgraph.ops.array_index_ops import gather_nd

    return [grad, None, gather_nd(grad, op.inputs[1])]


@register_gradient("ResourceGatherNd")
def _resource_gather_nd_grad(op, grad):
    """As TensorFlow: `IndexedSlices` of rows for ``[n, 1]`` indices, else the gradient
    scattered into the variable's shape."""
    from flowgraph.ops import array_ops
    from flowgraph.ops.resource_variable_ops import variable_shape

    handle, indices = op.inputs
    shape = variable_shape(handle, out_type=indices.dtype.base_dtype)
    if indices.shape.ndims == 2 and indices.shape[-1].value == 1:
        return [IndexedSlices(grad, array_ops.squeeze(indices, axis=[-1]), shape), None]
    return [array_ops.scatter_nd(indices, grad, shape), None]


@register_gradient("TensorStridedSliceUpdate")
def _tensor_strided_slice_update_grad(op, grad):
    """The input's gradient with the written slice zeroed; the value's, the slice of the
    gradient summed over the dimensions the value was broadcast along."""
    from flowgraph.ops import array_ops, math_reduce
    from flowgraph.ops.broadcast_grad import broadcast_gradient_args

    _, begin, end, strides, value = op.inputs
    masks = {m: op.attrs[m] for m in _MASKS}
    dy = array_ops.strided_slice(grad, begin, end, strides, **masks)
    dx = make_tensor("TensorStridedSliceUpdate",
                     [grad, begin, end, strides, array_ops.zeros_like(dy)], masks)
    slice_shape = array_ops.shape(dy, out_type=begin.dtype.base_dtype)
    value_shape = array_ops.shape(value, out_type=begin.dtype.base_dtype)
    _, axes = broadcast_gradient_args(slice_shape, value_shape)
    dy = array_ops.reshape(math_reduce.reduce_sum(dy, axes, keepdims=True), value_shape)
    return [dx, None, None, None, dy]


register_gradient("ParallelDynamicStitch")(get_op_def("DynamicStitch").gradient)
# Left without a gradient, as TensorFlow leaves ScatterNdMax and ScatterNdMin:
# tf.gradients raises LookupError when a gradient reaches one.


def tensor_strided_slice_update(input, begin, end, strides, value, begin_mask=0,
                                end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                                shrink_axis_mask=0, name=None):
    """A copy of `input` with ``input[begin:end:strides] = value`` (TensorFlow's slice
    spec and masks, `value` broadcast to the slice).

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tensor_strided_slice_update(tf.constant([1.0, 2.0, 3.0, 4.0]), [1], [3],
    ...                                   [1], [8.0, 9.0])
    >>> tf.Session().run(out).tolist()
    [1.0, 8.0, 9.0, 4.0]
    """
    from flowgraph.framework.constant_op import convert_to_tensor
    from flowgraph.framework.graph import name_scope

    with name_scope(name, "TensorStridedSliceUpdate", [input, value]) as scope:
        x = convert_to_tensor(input, name="input")
        ins = [convert_to_tensor(t, preferred_dtype=_dtypes.int32, name=n)
               for t, n in ((begin, "begin"), (end, "end"), (strides, "strides"))]
        v = convert_to_tensor(value, dtype=x.dtype.base_dtype, name="value")
        return make_tensor("TensorStridedSliceUpdate", [x, *ins, v], {
            "begin_mask": int(begin_mask), "end_mask": int(end_mask),
            "ellipsis_mask": int(ellipsis_mask), "new_axis_mask": int(new_axis_mask),
            "shrink_axis_mask": int(shrink_axis_mask)}, name=scope)
