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
    from flowgraph.ops import raw_ops
    from flowgraph.ops.array_join_ops import concat, stack, tile, unstack
    from flowgraph.ops.array_meshgrid import meshgrid
    from flowgraph.ops.array_shape_ops import ones, rank, reshape, shape, transpose

    if not isinstance(batch_dims, int) or isinstance(batch_dims, bool):
        raise TypeError(f"gather_nd: batch_dims must be an int, got {batch_dims!r}")
    if batch_dims < 0:
        raise ValueError(f"gather_nd: batch_dims must be non-negative, got {batch_dims}")
    with name_scope(name, "BatchGatherND", [params, indices]):
        i = convert_to_tensor(indices, name="indices")
        p = convert_to_tensor(params, name="params")
        for what, t in (("indices", i), ("params", p)):
            if t.shape.ndims is not None and batch_dims >= t.shape.ndims:
                raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than "
                                 f"rank(`{what}`) = {t.shape.ndims}")
        # Built op for op as TensorFlow does: an index grid of batch coordinates (a
        # meshgrid of the batch dimensions) prepended to every index row, one GatherNd on
        # the unreshaped params, the batch shape restored at the end.
        p_shape, i_shape = shape(p), shape(i)
        batch_shape = p_shape[:batch_dims]
        with name_scope(None, "Prod") as scope:
            axis = convert_to_tensor([0], dtype=_dtypes.int32, name="reduction_indices")
            batch_size = make_tensor("Prod", [batch_shape, axis], {"keep_dims": False},
                                     name=scope)
        inner = rank(i) - batch_dims - 1
        inner_shape = i_shape[batch_dims:-1]
        ranges = [raw_ops.Cast(x=raw_ops.Range(start=0, limit=raw_ops.Cast(
            x=x, DstT=_dtypes.int32), delta=1), DstT=i.dtype.base_dtype)
            for x in unstack(batch_shape, axis=0)]
        grid = transpose(stack([reshape(x, shape=(-1,)) for x in meshgrid(*ranges,
                                                                           indexing="ij")],
                               axis=0))
        grid_shape = shape(grid)
        grid = reshape(grid, concat([grid_shape[:1], ones(inner, dtype=grid_shape.dtype),
                                     grid_shape[1:]], axis=0))
        grid = tile(grid, multiples=concat(((1,), inner_shape, (1,)), axis=0))
        flat_i = reshape(i, shape=concat(([batch_size], i_shape[batch_dims:]), axis=0))
        out = make_tensor("GatherNd", [p, concat((grid, flat_i), axis=-1)], name="GatherNd")
        out = reshape(out, shape=concat((batch_shape, shape(out)[1:]), axis=0))
        out.set_shape(_static_shape(p.shape, i.shape, batch_dims))
        return out


def _static_shape(p: TensorShape, i: TensorShape, b: int) -> TensorShape:
    batch = i[:b].merge_with(p[:b]) if p.ndims is not None else i[:b]
    depth = i[-1].value
    if depth is None or p.ndims is None:
        return TensorShape(None)
    return batch.concatenate(i[b:-1]).concatenate(p[b + depth:])
