"""`tf.gather_nd(..., batch_dims=b)`: one ordinary ``GatherNd`` after folding the batch.

The first `b` dimensions of `params` and `indices` are a shared batch. They are flattened
into one axis of size ``B``; each index row gets its batch position prepended, so that
a plain ``GatherNd`` on ``params`` reshaped to ``[B, ...]`` picks the right slices; the
result is unfolded back to the batch shape. The static shape is set the way TensorFlow
sets it: ``batch + indices.shape[b:-1] + params.shape[b + depth:]``.
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_tensor


def batch_gather_nd(params, indices, batch_dims: int, name: str | None = None):
    """`gather_nd` where the first `batch_dims` dimensions of both inputs are a batch.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.reshape(tf.range(12), [2, 3, 2])
    >>> y = tf.gather_nd(p, [[[2]], [[0]]], batch_dims=1)
    >>> tf.Session().run(y).tolist()
    [[[4, 5]], [[6, 7]]]
    """
    from flowgraph.ops.array_gen_ops import range as _range
    from flowgraph.ops.array_join_ops import concat, tile
    from flowgraph.ops.array_shape_ops import reshape, shape
    from flowgraph.ops.math_ops import cast

    if not isinstance(batch_dims, int) or isinstance(batch_dims, bool):
        raise TypeError(f"gather_nd: batch_dims must be an int, got {batch_dims!r}")
    if batch_dims < 0:
        raise ValueError(f"gather_nd: batch_dims must be non-negative, got {batch_dims}")
    with name_scope(name, "BatchGatherND", [params, indices]):
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
        rank = i.shape.ndims
        if rank is None:
            raise ValueError("gather_nd: with batch_dims > 0 the rank of indices must be "
                             f"known, got shape {i.shape}; set it with Tensor.set_shape")
        if rank <= batch_dims or (p.shape.ndims is not None and p.shape.ndims <= batch_dims):
            raise ValueError(f"gather_nd: batch_dims ({batch_dims}) must be less than the "
                             f"rank of indices ({i.shape}) and of params ({p.shape})")
        p_shape, i_shape = shape(p), shape(i)
        flat_p = reshape(p, concat([[-1], p_shape[batch_dims:]], 0))
        flat_i = reshape(i, concat([[-1], i_shape[batch_dims:]], 0))
        inner = rank - batch_dims - 1  # index dimensions between the batch and the depth
        n = shape(flat_i)[0]
        pos = reshape(cast(_range(n), i.dtype), concat([[n], [1] * (inner + 1)], 0))
        pos = tile(pos, concat([[1], shape(flat_i)[1:-1], [1]], 0))
        out = make_tensor("GatherNd", [flat_p, concat([pos, flat_i], -1)], name="GatherNd")
        out = reshape(out, concat([i_shape[:batch_dims], shape(out)[1:]], 0))
        out.set_shape(_static_shape(p.shape, i.shape, batch_dims))
        return out


def _static_shape(p: TensorShape, i: TensorShape, b: int) -> TensorShape:
    batch = i[:b].merge_with(p[:b]) if p.ndims is not None else i[:b]
    depth = i[-1].value
    if depth is None or p.ndims is None:
        return TensorShape(None)
    return batch.concatenate(i[b:-1]).concatenate(p[b + depth:])
