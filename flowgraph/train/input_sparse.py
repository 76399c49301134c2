"""SparseTensors through the batching queues of `tf.train.batch` and friends.

A queue holds dense tensors only, so each `SparseTensor` component is stored in the
session's sparse-tensors map before the enqueue (``AddSparseToTensorsMap``, or
``AddManySparseToTensorsMap`` with ``enqueue_many``) and travels as an int64 handle of
shape ``[1]``; after the dequeue, ``TakeManySparseFromTensorsMap`` takes the batch's
handles back out as one SparseTensor with a leading batch dimension. As in TensorFlow,
when the batch has several components every output then passes through a
``control_dependency`` Identity that waits for all of them, so one fetch never takes a
batch's SparseTensors out of their maps without the rest.

Example
-------
>>> import flowgraph as tf
>>> sp = tf.SparseTensor([[0], [2]], [1.5, 2.5], [4])
>>> b = tf.train.batch([sp], batch_size=2)
>>> type(b).__name__, b.indices.shape.as_list(), b.dense_shape.shape.as_list()
('SparseTensor', [None, 2], [2])
"""

from __future__ import annotations

from dataclasses import dataclass

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.operation import Operation
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_shape_ops import expand_dims, ones, squeeze
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import with_dependencies
from flowgraph.ops.op_util import make_op
from flowgraph.ops.sparse_ops import sparse_retain

__all__ = ["SparseInfo", "is_sparse", "restore_sparse", "store_sparse", "store_sparse_join",
           "store_sparse_kept"]


@dataclass
class SparseInfo:
    """How one queue component was stored: the map op of a SparseTensor (None for a
    dense component) and the rank of one stored element (None when unknown)."""

    map_op: Operation | None = None
    rank: int | None = None

    @property
    def sparse(self) -> bool:
        return self.map_op is not None


def _element_rank(t: SparseTensor, enqueue_many: bool) -> int | None:
    n = t.dense_shape.shape.with_rank(1)[0].value
    if n is None:
        return None
    return n - 1 if enqueue_many else n


def _store_one(t: SparseTensor, enqueue_many: bool, shared_name: str):
    op_type = "AddManySparseToTensorsMap" if enqueue_many else "AddSparseToTensorsMap"
    op = make_op(op_type, [t.indices, t.values, t.dense_shape],
                 {"T": t.values.dtype.base_dtype, "container": "",
                  "shared_name": shared_name}, name=op_type)
    handles = op.outputs[0]
    if enqueue_many:
        handles.set_shape([None])
    return op, handles


def store_sparse(tensor_list: list, enqueue_many: bool, shared_ops=None):
    """Replace each SparseTensor of `tensor_list` by its stored handle(s), expanded to a
    trailing dimension of 1; return ``(stored_list, infos)``. `shared_ops` (the map ops
    of an earlier list, for `batch_join`) makes every list store into the same maps."""
    shared_ops = shared_ops or [None] * len(tensor_list)
    stored, infos = [], []
    for t, shared in zip(tensor_list, shared_ops, strict=True):
        if not isinstance(t, SparseTensor):
            stored.append(t)
            infos.append(SparseInfo())
            continue
        op, handles = _store_one(t, enqueue_many, shared.name if shared is not None else "")
        stored.append(expand_dims(handles, [-1]))
        infos.append(SparseInfo(shared if shared is not None else op,
                                _element_rank(t, enqueue_many)))
    return stored, infos


def store_sparse_kept(t: SparseTensor, keep, enqueue_many: bool):
    """Store `t` only where the scalar or vector bool `keep` says so (for
    `tf.train.maybe_batch`); return ``(handles, info)``, the handles expanded as
    `store_sparse` does. A dropped element's handle is -1 (never enqueued)."""
    ops = []

    def store():
        op, handles = _store_one(t, enqueue_many, "")
        ops.append(op)
        return handles

    if keep.shape.ndims == 1:  # one flag per row: drop the other rows' values, store all
        t = sparse_retain(t, gather(keep, t.indices[:, 0]))
        handles = store()
    elif enqueue_many:
        handles = cond(keep, store, lambda: -1 * ones(t.dense_shape[:1], _dtypes.int64))
        handles.set_shape([None])
    else:
        handles = cond(keep, store, lambda: constant(-1, _dtypes.int64))
    return expand_dims(handles, [-1]), SparseInfo(ops[0], _element_rank(t, enqueue_many))


def store_sparse_join(tensor_lists: list, enqueue_many: bool):
    """`store_sparse` for each list of `batch_join`, all sharing the first list's maps."""
    first, infos = store_sparse(tensor_lists[0], enqueue_many)
    out = [first]
    for i, tl in enumerate(tensor_lists[1:], 1):
        stored, other = store_sparse(tl, enqueue_many, [info.map_op for info in infos])
        if [x.sparse for x in other] != [x.sparse for x in infos]:
            raise ValueError(f"batch_join: input list {i} has SparseTensors in other "
                             "positions than list 0")
        out.append(stored)
    return out, infos


def _take(info: SparseInfo, handles):
    m = info.map_op
    rank = None if info.rank is None else info.rank + 1
    op = make_op("TakeManySparseFromTensorsMap", [squeeze(handles, [1])],
                 {"dtype": m.get_attr("T"), "container": m.get_attr("container"),
                  "shared_name": m.get_attr("shared_name") or m.name},
                 name="TakeManySparseFromTensorsMap")
    indices, values, shape = op.outputs
    indices.set_shape(TensorShape([None, rank]))
    shape.set_shape(TensorShape([rank]))
    return SparseTensor(indices, values, shape)


def restore_sparse(dequeued, infos: list[SparseInfo]):
    """The dequeued batch with each stored SparseTensor taken back out of its map."""
    if not any(info.sparse for info in infos):
        return dequeued
    single = not isinstance(dequeued, (list, tuple))
    parts = [dequeued] if single else list(dequeued)
    parts = [_take(info, p) if info.sparse else p for p, info in zip(parts, infos, strict=True)]
    if single:  # one component: nothing to wait for
        return parts[0]
    deps = [p.values if isinstance(p, SparseTensor) else p for p in parts]

    def wait(t):
        return with_dependencies(deps, t)

    out = [SparseTensor(wait(p.indices), wait(p.values), wait(p.dense_shape))
           if isinstance(p, SparseTensor) else wait(p) for p in parts]
    return out


def is_sparse(t) -> bool:
    """Whether `t` is a SparseTensor (the batching functions pass those through as is)."""
    return isinstance(t, SparseTensor)

