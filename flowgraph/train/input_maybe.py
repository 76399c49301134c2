"""``tf.train.maybe_batch`` and friends: `batch`, `batch_join`, `shuffle_batch` and
`shuffle_batch_join` that enqueue an element only where `keep_input` is true.

`keep_input` is a scalar bool (the one element, or with ``enqueue_many`` the whole
batch, is kept or dropped) or, with ``enqueue_many``, a bool vector with one entry per
element. The kept elements pass to the queue as an ``enqueue_many`` batch of zero or
more rows (a `boolean_mask`), so nothing else about the batching changes.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1, 2, 3, 4])
>>> b = tf.train.maybe_batch([x], tf.equal(x % 2, 0), batch_size=2, enqueue_many=True)
>>> with tf.Session() as sess:
...     coord = tf.train.Coordinator()
...     threads = tf.train.start_queue_runners(sess, coord)
...     print(sess.run(b))
...     coord.request_stop(); coord.join(threads)
[2 4]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_index_ops import boolean_mask
from flowgraph.ops.array_shape_ops import expand_dims, fill, shape
from flowgraph.train import input as _input
from flowgraph.train.input_sparse import SparseInfo, is_sparse, store_sparse_kept

__all__ = ["maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
           "maybe_shuffle_batch_join"]


def _mask(tensors, keep_input, enqueue_many: bool, what: str):
    """`tensors` (list or dict) as an enqueue-many batch of the kept elements."""
    keep = convert_to_tensor(keep_input, dtype=_dtypes.bool, name="keep_input")
    rank = keep.shape.ndims
    if rank is None:
        raise ValueError(f"tf.train.{what}: the rank of keep_input must be known")
    if rank > 1 or (rank == 1 and not enqueue_many):
        raise ValueError(f"tf.train.{what}: keep_input must be a scalar bool, or a vector "
                         f"with enqueue_many=True; got shape {keep.shape}")
    items = tensors.items() if isinstance(tensors, dict) else enumerate(tensors)
    out, infos = {}, {}
    for key, t in items:
        if is_sparse(t):  # its map handle(s) travel instead, stored only where kept
            t, infos[key] = store_sparse_kept(t, keep, enqueue_many)
        else:
            t, infos[key] = convert_to_tensor(t), SparseInfo()
        if not enqueue_many:
            t = expand_dims(t, 0)
        mask = keep if rank == 1 else fill(shape(t)[:1], keep)
        out[key] = boolean_mask(t, mask)
    if isinstance(tensors, dict):
        return out, infos
    return [out[i] for i in range(len(tensors))], [infos[i] for i in range(len(tensors))]


def _shapes_of(tensors, shapes, enqueue_many):
    """Element shapes for the masked batch (whose dimension 0 is unknown)."""
    if shapes is not None:
        return shapes
    items = [tensors[k] for k in sorted(tensors, key=str)] if isinstance(tensors, dict) \
        else tensors
    out = []
    for t in items:
        if is_sparse(t):  # a stored handle
            out.append([1])
            continue
        s = convert_to_tensor(t).shape
        out.append(s[1:] if enqueue_many else s)
    return out


def _no_sparse(tensors_list, what: str) -> None:
    for tensors in tensors_list:
        items = tensors.values() if isinstance(tensors, dict) else tensors
        if any(is_sparse(t) for t in items):
            raise TypeError(f"tf.train.{what}: SparseTensor inputs are not supported here; "
                            "use tf.train.maybe_batch or maybe_shuffle_batch")


def _one(kept):
    return [_input._validate(_input._as_tensor_list(kept), "maybe_batch")]


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch` of the elements for which `keep_input` is true."""
    with name_scope(name, "batch", []) as scope:
        kept, infos = _mask(tensors, keep_input, enqueue_many, "maybe_batch")
        return _input._batch(_one(kept), kept, batch_size, num_threads, capacity, True,
                             _shapes_of(tensors, shapes, enqueue_many), dynamic_pad,
                             allow_smaller_final_batch, shared_name, scope, "batch", infos)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """`tf.train.batch_join` of the elements for which `keep_input` is true."""
    _no_sparse(tensors_list, "maybe_batch_join")
    with name_scope(name, "batch_join", []) as scope:
        kept = [_mask(t, keep_input, enqueue_many, "maybe_batch_join")[0] for t in tensors_list]
        return _input.batch_join(kept, batch_size, capacity, True,
                                 _shapes_of(tensors_list[0], shapes, enqueue_many),
                                 dynamic_pad, allow_smaller_final_batch, shared_name, scope)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.shuffle_batch` of the elements for which `keep_input` is true."""
    with name_scope(name, "shuffle_batch", []) as scope:
        kept, infos = _mask(tensors, keep_input, enqueue_many, "maybe_shuffle_batch")
        return _input._shuffle_batch(_one(kept), kept, batch_size, capacity, min_after_dequeue,
                                     num_threads, seed, True,
                                     _shapes_of(tensors, shapes, enqueue_many),
                                     allow_smaller_final_batch, shared_name, scope,
                                     "shuffle_batch", infos)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.shuffle_batch_join` of the elements for which `keep_input` is true."""
    _no_sparse(tensors_list, "maybe_shuffle_batch_join")
    with name_scope(name, "shuffle_batch_join", []) as scope:
        kept = [_mask(t, keep_input, enqueue_many, "maybe_shuffle_batch_join")[0]
                for t in tensors_list]
        return _input.shuffle_batch_join(kept, batch_size, capacity, min_after_dequeue, seed,
                                         True, _shapes_of(tensors_list[0], shapes,
                                                          enqueue_many),
                                         allow_smaller_final_batch, shared_name, scope)
