"""Embedding lookups: rows of a (possibly sharded) table for dense ids
(`embedding_lookup`) or for the ids of a `SparseTensor`, combined per example
(`embedding_lookup_sparse`, `safe_embedding_lookup_sparse`).

Every path reads the table with ``GatherV2`` only, so the gradient with respect to the
table is `IndexedSlices` holding just the looked-up rows: optimizers update those rows
in place (``SparseApply*``) and a table of a million rows is never densified. Per-example
combining runs on the small gathered block with ``SparseSegment{Sum,Mean,SqrtN}``:

    sp_ids (batch 2):  row 0 -> [7, 3]   row 1 -> [7]
    unique ids [7, 3]  -> gather 2 rows of the table -> segment mean over idx [0, 1 | 0]

A sharded table (a list of tensors) follows TF's ``partition_strategy``: ``"mod"`` puts
id ``i`` in shard ``i % n`` at row ``i // n``; ``"div"`` gives each shard a contiguous
range of ids (the first ``total % n`` shards one id more).

Example
-------
>>> import flowgraph as tf
>>> table = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
>>> sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([0, 2, 1], tf.int64), [2, 2])
>>> with tf.Session() as sess:
...     print(sess.run(tf.nn.embedding_lookup_sparse(table, sp, None, combiner="sum")))
[[4. 6.]
 [2. 3.]]
"""

from __future__ import annotations

import contextlib

from flowgraph.framework import constant_op
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape, convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import (
    array_gen_ops,
    array_ops,
    clip_ops,
    math_ops,
    math_reduce,
    segment_ops,
    sparse_ops,
)
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.variables import Variable

__all__ = ["embedding_lookup", "embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

_COMBINERS = ("mean", "sqrtn", "sum")


def _as_list(params) -> list:
    if params is None:
        raise ValueError("Need at least one param: params is None")
    if hasattr(params, "_get_variable_list"):  # a partitioned variable
        params = params._get_variable_list()
    params = list(params) if isinstance(params, list | tuple) else [params]
    if not params:
        raise ValueError("Need at least one param: params is an empty list")
    return params


def _clip(rows: Tensor, ids: Tensor, max_norm):
    """Rescale each embedding (the dimensions after those of `ids`) to norm <= max_norm."""
    if max_norm is None:
        return rows
    ids_rank, rows_rank = ids.shape.ndims, rows.shape.ndims
    if ids_rank is None or rows_rank is None:
        raise ValueError(f"embedding_lookup with max_norm needs ids and params of known rank, "
                         f"got ids {ids.shape} and embeddings {rows.shape}")
    return clip_ops.clip_by_norm(rows, max_norm, axes=list(range(ids_rank, rows_rank)))


def _colocated(param):
    target = getattr(param, "op", None)
    if target is None:
        return contextlib.nullcontext()
    return get_default_graph().colocate_with(target)


def embedding_lookup(params, ids, partition_strategy: str = "mod", name: str | None = None,
                     validate_indices: bool = True, max_norm=None):
    """Rows of `params` for `ids`: ``output[i...] = params[ids[i...]]``, shape
    ``ids.shape + params.shape[1:]``. `params` may be a list of shards (see the module
    docstring for `partition_strategy`); the gradient is `IndexedSlices`.

    Parameters
    ----------
    params : Tensor, Variable or list of them
        The table, or its shards (equal trailing dimensions).
    ids : int32/int64 Tensor
        Ids to look up; any shape.
    partition_strategy : {"mod", "div"}
        How ids map to shards when `params` is a list.
    max_norm : float, optional
        Embeddings with a larger L2 norm are rescaled to this norm.

    Example
    -------
    >>> import flowgraph as tf
    >>> table = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.nn.embedding_lookup(table, [[2], [0]])))
    [[[5. 6.]]
    <BLANKLINE>
     [[1. 2.]]]
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"embedding_lookup: partition_strategy must be 'mod' or 'div', got "
                         f"{partition_strategy!r}")
    if (h := handler_for("unary", ids)) is not None:  # ragged ids: a ragged result
        with name_scope(name, "embedding_lookup_ragged"):
            return h(lambda v, name=None: embedding_lookup(
                params, v, partition_strategy, None, validate_indices, max_norm), ids)
    params = _as_list(params)
    with name_scope(name, "embedding_lookup", [*params, ids]) as scope:
        n = len(params)
        if n == 1:
            with _colocated(params[0]):
                p = params[0]  # a resource variable gathers itself (ResourceGather)
                if not hasattr(p, "sparse_read"):
                    p = convert_to_tensor(p, name="params")
                ids_t = convert_to_tensor(ids, preferred_dtype=_dtypes.int32, name="ids")
                _check_ids(ids_t)
                rows = array_ops.gather(p, ids_t, name=scope)
                rows = _clip(rows, ids_t, max_norm) if max_norm is not None else rows
            # As in TF: an Identity outside the colocation ("embedding_lookup/Identity").
            return array_ops.identity(rows)
        ps = [convert_to_tensor(p, name="params") for p in params]
        ids_t = convert_to_tensor(ids, preferred_dtype=_dtypes.int32, name="ids")
        _check_ids(ids_t)
        flat = array_ops.reshape(ids_t, [-1])
        # TF's graph, op for op: the positions first, then each id's shard and its id in
        # the shard, each shard's ids and positions (DynamicPartition), each shard's rows
        # (gathered beside the shard) and the rows put back in id order by
        # ParallelDynamicStitch.
        positions = array_ops.range(array_ops.size(flat))
        assign, new_ids = _partition(params, ps, flat, partition_strategy)
        assign = math_ops.cast(assign, _dtypes.int32)
        local_ids = make_op("DynamicPartition", [new_ids, assign],
                            {"num_partitions": n}).outputs
        local_pos = make_op("DynamicPartition", [positions, assign],
                            {"num_partitions": n}).outputs
        pieces = []
        for k, p in enumerate(ps):
            with _colocated(params[k]):
                # A resource variable's part gathers itself (ResourceGather, as TF).
                part = params[k] if hasattr(params[k], "sparse_read") else p
                rows = array_ops.gather(part, local_ids[k])
            pieces.append(rows)
        # As TF: the op merging the shards takes the scope's name, the result is the
        # scope's second Reshape ("embedding_lookup/Reshape_1"), clipped after it with
        # max_norm ("embedding_lookup/clip_by_norm"). The trailing dimensions are a
        # constant when every shard's are known, else read from the first shard.
        merged = make_tensor("ParallelDynamicStitch", local_pos + pieces, {"N": n},
                             name=scope)
        trailing = _trailing(ps)
        if trailing.is_fully_defined():
            shape = array_ops.concat([array_ops.shape(ids_t), trailing.as_list()], 0)
        else:
            with _colocated(params[0]):
                rest = array_ops.shape(ps[0])[1:]
            shape = array_ops.concat([array_ops.shape(ids_t), rest], 0)
        out = array_ops.reshape(merged, shape)
        out.set_shape(ids_t.shape.concatenate(trailing))
        return _clip(out, ids_t, max_norm)


def _trailing(ps) -> TensorShape:
    shape = TensorShape(None)
    for p in ps:
        if p.shape.ndims is not None:
            s = TensorShape(p.shape.dims[1:])
            shape = s if shape.ndims is None else shape.merge_with(s)
    return shape


def _check_ids(ids: Tensor) -> None:
    if not ids.dtype.is_integer:
        raise TypeError(f"embedding_lookup: ids must be int32 or int64, got {ids.dtype.name} "
                        f"({ids.name})")


def _partition(params, ps, ids, strategy):
    """Each id's shard and its row in that shard, as TF builds them ("mod", "floordiv";
    for "div" the total row count is a constant when every shard's is known, else the
    sum of the shards' dimension 0, each read beside its shard)."""
    n = len(ps)
    if strategy == "mod":
        return ids % n, ids // n
    sizes = [p.shape[0].value if p.shape.ndims else None for p in ps]
    if all(s is not None for s in sizes):
        total = constant_op.constant(sum(sizes), ids.dtype)
    else:
        dims = []
        for param, p, size in zip(params, ps, sizes, strict=True):
            if size is not None:
                dims.append(size)
                continue
            with _colocated(param):
                dims.append(array_ops.shape(p)[0])
        total = math_reduce.reduce_sum(math_ops.cast(array_ops.stack(dims), ids.dtype))
    per = total // n
    extras = total % n
    assign = math_ops.maximum(ids // (per + 1), (ids - extras) // per)
    new_ids = array_ops.where(math_ops.less(assign, extras), ids % (per + 1),
                              (ids - extras) % per)
    return assign, new_ids


def _check_sparse_args(fn, combiner, sp_ids, sp_weights):
    if combiner not in _COMBINERS:
        raise ValueError(f"{fn}: combiner must be one of 'mean', 'sqrtn' or 'sum', got "
                         f"{combiner!r}")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"{fn}: sp_ids must be a SparseTensor, got {type(sp_ids).__name__}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError(f"{fn}: sp_weights must be None or a SparseTensor, got "
                        f"{type(sp_weights).__name__}")
    if not sp_ids.dtype.is_integer:
        raise TypeError(f"{fn}: sp_ids must hold int32/int64 ids, got {sp_ids.dtype.name}")
    if sp_weights is not None and not sp_weights.values.shape.is_compatible_with(
            sp_ids.values.shape):
        raise ValueError(f"{fn}: sp_weights values {sp_weights.values.shape} do not match "
                         f"sp_ids values {sp_ids.values.shape}")


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy: str = "mod",
                            name: str | None = None, combiner: str | None = None,
                            max_norm=None, allow_fast_lookup: bool = False):
    """One embedding per row of `sp_ids` (a [batch, n] `SparseTensor` of ids): the
    `combiner` ('sum', 'mean' or 'sqrtn') of the embeddings of that row's ids, weighted by
    `sp_weights` (same indices as `sp_ids`) when given. As in TensorFlow, the result has
    ``max(row) + 1`` rows (trailing rows without ids are absent; use
    `safe_embedding_lookup_sparse` for one row per example, zeros for empty ones).

    Example
    -------
    >>> import flowgraph as tf
    >>> table = tf.constant([[2.0], [4.0], [8.0]])
    >>> ids = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([0, 1], tf.int64), [1, 2])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.nn.embedding_lookup_sparse(table, ids, None, combiner="mean")))
    [[3.]]
    """
    if combiner is None:
        combiner = "mean"
    _check_sparse_args("embedding_lookup_sparse", combiner, sp_ids, sp_weights)
    params = _as_list(params)
    with name_scope(name, "embedding_lookup_sparse", [*params, sp_ids.values]) as scope:
        reduce = {"sum": sparse_ops.sparse_segment_sum, "mean": sparse_ops.sparse_segment_mean,
                  "sqrtn": sparse_ops.sparse_segment_sqrt_n}
        if len(params) == 1 and max_norm is None and sp_weights is None:
            # Reduce straight from the table (TF 2.15's graph: the int64 row ids as segment
            # ids, the reduction named after the scope); its gradient is IndexedSlices.
            table = convert_to_tensor(params[0], name="params")
            if table.dtype.base_dtype == _dtypes.float16:
                table = math_ops.cast(table, _dtypes.float32)
            return reduce[combiner](table, sp_ids.values, sp_ids.indices[:, 0], name=scope,
                                    sparse_gradient=True)
        # As TensorFlow 2.15: look up each distinct id once, then gather the rows back
        # (the table's gradient has one row per distinct id).
        segment_ids = sp_ids.indices[:, 0]
        ids, idx = array_gen_ops.unique(sp_ids.values)
        rows = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                max_norm=max_norm)
        if segment_ids.dtype.base_dtype != _dtypes.int32:
            segment_ids = math_ops.cast(segment_ids, _dtypes.int32)
        if sp_weights is None:
            if rows.dtype.base_dtype == _dtypes.float16:
                rows = math_ops.cast(rows, _dtypes.float32)
            return reduce[combiner](rows, idx, segment_ids, name=scope)
        weights = sp_weights.values
        rows = array_ops.gather(rows, idx)
        if rows.dtype.base_dtype == _dtypes.float16:
            rows = math_ops.cast(rows, _dtypes.float32)
        if weights.dtype.base_dtype != rows.dtype.base_dtype:
            weights = math_ops.cast(weights, rows.dtype.base_dtype)
        ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(rows) - 1, 0),
                              dtype=_dtypes.int32)
        weights = array_ops.reshape(weights, array_ops.concat([array_ops.shape(weights),
                                                               ones], 0))
        rows = rows * weights
        # Rows whose weights sum to 0 (or that have no ids) are 0, as div_no_nan makes them.
        if combiner == "sum":
            return segment_ops.segment_sum(rows, segment_ids, name=scope)
        total = segment_ops.segment_sum(rows, segment_ids)
        if combiner == "mean":
            return math_ops.div_no_nan(total, segment_ops.segment_sum(weights, segment_ids),
                                       name=scope)
        norm = math_ops.sqrt(segment_ops.segment_sum(math_ops.pow(weights, 2), segment_ids))
        return math_ops.div_no_nan(total, norm, name=scope)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner: str = "mean", default_id=None,
                                 name: str | None = None, partition_strategy: str = "div",
                                 max_norm=None, allow_fast_lookup: bool = False):
    """`embedding_lookup_sparse` that tolerates bad input: ids < 0 are dropped (and, unless
    ``combiner='sum'``, entries with weight <= 0), examples left without ids get the
    embedding of `default_id` or zeros, and `sparse_ids` of rank > 2 give a result of
    shape ``dense_shape[:-1] + [dim]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> table = tf.constant([[1.0, 1.0], [3.0, 5.0]])
    >>> ids = tf.SparseTensor([[0, 0], [2, 0]], tf.constant([1, -1], tf.int64), [3, 1])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.nn.safe_embedding_lookup_sparse(table, ids)))
    [[3. 5.]
     [0. 0.]
     [0. 0.]]
    """
    if embedding_weights is None:
        raise ValueError("safe_embedding_lookup_sparse: missing embedding_weights (None)")
    params = _as_list(embedding_weights)
    _check_sparse_args("safe_embedding_lookup_sparse", combiner, sparse_ids, sparse_weights)
    dtype = sparse_weights.dtype.base_dtype if sparse_weights is not None else None
    params = [p if isinstance(p, Variable) else convert_to_tensor(p, dtype=dtype)
              for p in params]
    with name_scope(name, "embedding_lookup", [sparse_ids.values]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape[0].value if original_shape.shape.ndims else None
        rank = array_ops.size(original_shape) if rank_dim is None else rank_dim
        if rank_dim == 2:
            ids2 = sparse_ids
        else:
            outer = math_reduce.reduce_prod(array_ops.slice(original_shape, [0], [rank - 1]))
            ids2 = sparse_ops.sparse_reshape(sparse_ids, array_ops.stack(
                [outer, array_ops.gather(original_shape, rank - 1)]))
        # As TensorFlow's shape inference: leading dims from a constant dense shape.
        known = constant_value_as_shape(original_shape)
        if (rank_dim == 2 and sparse_weights is None and default_id is None
                and max_norm is None and len(params) == 1):
            fused = _fused_safe_lookup(params[0], sparse_ids, combiner)
            if fused is not None:
                # named as TensorFlow's select of the empty rows: the scope itself
                fused = array_ops.identity(fused, name=scope)
                final = _reshape_back(fused, original_shape, rank,
                                      _final_name(False, combiner, None))
                final.set_shape((known[:1] if known.ndims == 2 else TensorShape([None]))
                                .concatenate(fused.shape[1:]))
                return final
        weights2 = None
        if sparse_weights is not None:
            weights2 = SparseTensor(ids2.indices, sparse_weights.values, ids2.dense_shape)
        ids2, weights2 = _prune(ids2, weights2, math_ops.greater_equal(
            ids2.values, math_ops.cast(0, ids2.dtype.base_dtype)))
        if combiner != "sum" and weights2 is not None:
            ids2, weights2 = _prune(ids2, weights2, math_ops.greater(
                weights2.values, math_ops.cast(0, weights2.dtype.base_dtype)))
        ids2, is_row_empty = sparse_ops.sparse_fill_empty_rows(ids2, default_id or 0)
        if weights2 is not None:
            weights2, _ = sparse_ops.sparse_fill_empty_rows(weights2, 1.0)
        result = embedding_lookup_sparse(params, ids2, weights2, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         max_norm=max_norm)
        if default_id is None:
            empty = array_ops.tile(array_ops.reshape(is_row_empty, [-1, 1]),
                                   array_ops.stack([1, array_ops.shape(result)[1]]))
            # TensorFlow names this select after the scope itself ("embedding_lookup")
            result = array_ops.where(empty, array_ops.zeros_like(result), result,
                                     name=scope)
        final = _reshape_back(result, original_shape, rank,
                              _final_name(weights2 is not None, combiner, default_id))
        lead = TensorShape(None) if rank_dim is None else TensorShape([None] * (rank_dim - 1))
        if known.ndims is not None:
            lead = known[:-1]
        final.set_shape(lead.concatenate(result.shape[1:] if result.shape.ndims else
                                         TensorShape(None)))
        return final


# -- the fused path ------------------------------------------------------------------------
@register_op("SafeSparseLookup", attrs={"combiner": "mean"}, num_outputs=3, cost=OpCost.EXPENSIVE,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  op.inputs[2].dtype.base_dtype, _dtypes.int32])
def _safe_sparse_lookup_shape(op, params, indices, values, dense_shape):
    if params.ndims == 0:
        raise op.shape_error(f"params must have rank >= 1, got shape {params}")
    if indices.ndims is not None and (indices.ndims != 2 or
                                      indices.dims[1].value not in (None, 2)):
        raise op.shape_error(f"ids must be a [batch, n] SparseTensor; indices {indices}")
    rows = TensorShape(None) if params.ndims is None else TensorShape(
        [None, *params.dims[1:]])
    return [rows, TensorShape([None]), TensorShape([None])]


@register_gradient("SafeSparseLookup")
def _safe_sparse_lookup_grad(op, grad, d_ids, d_rows):
    """The table's gradient: for every kept id, its example's output gradient (divided by
    the example's id count for 'mean', its square root for 'sqrtn')."""
    del d_ids, d_rows
    params = op.inputs[0]
    ids, rows = op.outputs[1], op.outputs[2]
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    values = make_tensor("SparseSegmentGradRows", [grad, rows],
                         {"combiner": op.attrs["combiner"]})
    shape = params.shape
    if shape.is_fully_defined():
        dense_shape = convert_to_tensor(shape.as_list(), dtype=ids.dtype.base_dtype)
    else:
        dense_shape = array_ops.shape(params, out_type=ids.dtype.base_dtype)
    return [IndexedSlices(values, ids, dense_shape), None, None, None]


def _final_name(weighted: bool, combiner: str, default_id) -> str:
    """The name TensorFlow's graph gives the result inside the lookup's scope: its last
    Reshape, numbered after the Reshapes before it (one per `sparse_retain`: ids, plus the
    weights; again for pruning weights unless ``combiner='sum'``; the weights' broadcast
    when `default_id` shares the scope with the inner lookup; the empty-row mask)."""
    count = 1 + weighted
    if weighted and combiner != "sum":
        count += 2
    if weighted and default_id is not None:
        count += 1
    if default_id is None:
        count += 1
    return f"Reshape_{count}"


def _reshape_back(result, original_shape, rank, name: str):
    """`result` reshaped to the ids' leading dimensions, as TensorFlow ends the lookup."""
    return array_ops.reshape(result, array_ops.concat([
        array_ops.slice(math_ops.cast(original_shape, _dtypes.int32), [0], [rank - 1]),
        array_ops.slice(array_ops.shape(result), [1], [-1])], 0), name=name)


def _fused_safe_lookup(param, sparse_ids: SparseTensor, combiner: str):
    """`safe_embedding_lookup_sparse` of a rank-2 `sparse_ids` on one table, without
    weights, `default_id` or `max_norm`, as one ``SafeSparseLookup`` op (the general graph
    is about fifteen ops and as many again in its gradient): ids < 0 are dropped, each
    example's remaining rows are combined, examples without ids get zeros. None when the
    table's dtype needs the general path."""
    table = convert_to_tensor(param, name="params")
    if table.dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
        return None
    op = make_op("SafeSparseLookup", [table, sparse_ids.indices, sparse_ids.values,
                                      sparse_ids.dense_shape], {"combiner": combiner})
    final = op.outputs[0]
    final.set_shape(TensorShape([None]).concatenate(
        table.shape[1:] if table.shape.ndims else TensorShape(None)))
    return final


def _prune(ids: SparseTensor, weights, keep):
    ids_out = sparse_ops.sparse_retain(ids, keep)
    w_out = sparse_ops.sparse_retain(weights, keep) if weights is not None else None
    return ids_out, w_out

