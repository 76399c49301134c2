"""``Gather``: TensorFlow's first gather op (rows of `params` along axis 0, attribute
``validate_indices``), found in GraphDefs that TensorFlow 1.x's older versions wrote.
`tf.gather` builds ``GatherV2``; this op type exists so such graphs import and run.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.gather_v1_ops import gather_v1
>>> with tf.Session() as sess:
...     print(sess.run(gather_v1([[1, 2], [3, 4], [5, 6]], [2, 0])))
[[5 6]
 [1 2]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops.op_util import make_tensor

__all__ = ["gather_v1"]


@register_op("Gather", attrs={"validate_indices": True}, cost=OpCost.EXPENSIVE)
def _gather_v1_shape(op, params, indices):
    if params.ndims == 0:
        raise op.shape_error("params must have rank >= 1, got a scalar")
    if params.ndims is None or indices.ndims is None:
        return [TensorShape(None)]
    return [TensorShape([*indices.dims, *params.dims[1:]])]


def gather_v1(params, indices, validate_indices=True, name=None):
    """``params[indices]`` along axis 0 with the ``Gather`` op type (prefer `tf.gather`).

    Example
    -------
    >>> import flowgraph as tf
    >>> gather_v1(tf.zeros([4, 3]), [[0, 1]]).shape.as_list()
    [1, 2, 3]
    """
    p = convert_to_tensor(params, name="params")
    i = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
    if i.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"Gather: indices must be int32 or int64, got {i.dtype.name}")
    return make_tensor("Gather", [p, i], {"validate_indices": bool(validate_indices)},
                       name=name or "Gather")


@register_gradient("Gather")
def _gather_v1_grad(op, grad):
    params, indices = op.inputs
    shape = _a.shape(params, out_type=indices.dtype.base_dtype)
    n = _a.reshape(_a.size(indices, out_type=indices.dtype.base_dtype), [1])
    values = _a.reshape(grad, _a.concat([n, shape[1:]], 0))
    return [IndexedSlices(values, _a.reshape(indices, [-1]), shape), None]
