"""Queue-based input pipelines: `batch`, `shuffle_batch`, `batch_join`, `shuffle_batch_join`.

Each function builds a queue, an enqueue op per thread (or per input list), a
`QueueRunner` added to the ``QUEUE_RUNNERS`` collection, and returns the dequeued batch
in the structure of its input (a dict for a dict, otherwise a list; a single tensor
when there is exactly one component, as in TensorFlow). Nothing runs until
`tf.train.start_queue_runners` starts the threads.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1.0, 2.0])
>>> xb = tf.train.batch([x], batch_size=4)
>>> xb.shape.as_list()
[4, 2]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import math_ops
from flowgraph.ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from flowgraph.summary import summary_ops
from flowgraph.train.input_sparse import is_sparse, restore_sparse, store_sparse, store_sparse_join
from flowgraph.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["batch", "batch_join", "shuffle_batch", "shuffle_batch_join"]


def _as_tensor_list(tensors) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if not isinstance(dequeued, list):
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list, what: str) -> list[Tensor]:
    tensors = [t if is_sparse(t) else convert_to_tensor(t) for t in tensor_list]
    if not tensors:
        raise ValueError(f"Expected at least one tensor in {what}().")
    return tensors


def _validate_join(tensors_list_list, what: str) -> list[list[Tensor]]:
    lists = [_validate(_as_tensor_list(tl), what) for tl in tensors_list_list]
    if not lists:
        raise ValueError(f"Expected at least one input in {what}().")
    types = [t.dtype.base_dtype for t in lists[0]]
    for i, tl in enumerate(lists[1:], 1):
        if [t.dtype.base_dtype for t in tl] != types:
            raise TypeError(
                f"{what}(): all input lists must have the same types; list 0 has "
                f"{[d.name for d in types]} but list {i} has "
                f"{[t.dtype.base_dtype.name for t in tl]}")
    return lists


def _shapes(tensor_lists, shapes, enqueue_many: bool) -> list[TensorShape]:
    """The element shapes: `shapes` if given, else merged from the inputs' static shapes."""
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    merged = []
    for i in range(len(tensor_lists[0])):
        shape = None
        for tl in tensor_lists:
            t = tl[i]
            if t.shape.ndims is None:
                raise ValueError(
                    f"Cannot infer the rank of Tensor '{t.name}'; pass `shapes` or give it "
                    "a static shape with set_shape")
            s = t.shape
            if enqueue_many:
                if s.ndims == 0:
                    raise ValueError(
                        f"enqueue_many=True needs a leading batch dimension, but Tensor "
                        f"'{t.name}' is a scalar")
                s = s[1:]
            shape = s if shape is None else shape.merge_with(s)
        merged.append(shape)
    return merged


def _enqueue(queue, tensor_lists, threads_per_list: int, enqueue_many: bool) -> None:
    fn = queue.enqueue_many if enqueue_many else queue.enqueue
    ops = []
    for tl in tensor_lists:
        ops.extend([fn(tl)] * threads_per_list)
    add_queue_runner(QueueRunner(queue, ops))


def _dequeue(queue, batch_size, allow_smaller_final_batch: bool, name: str):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _store(tensor_lists, enqueue_many):
    if len(tensor_lists) == 1:
        stored, infos = store_sparse(tensor_lists[0], enqueue_many)
        return [stored], infos
    return store_sparse_join(tensor_lists, enqueue_many)


def _dense_inputs(tensor_lists) -> list:
    return [t for tl in tensor_lists for t in tl if not is_sparse(t)]


def _batch(tensor_lists, original, batch_size, num_threads, capacity, enqueue_many, shapes,
           dynamic_pad, allow_smaller_final_batch, shared_name, name, what, stored_infos=None):
    with name_scope(name, what, _dense_inputs(tensor_lists)) as scope:
        # TensorFlow converts its default ``keep_input=True`` here (``batch/Const``).
        convert_to_tensor(True)
        tensor_lists, sparse_infos = _store(tensor_lists, enqueue_many)
        if stored_infos is not None:  # maybe_batch stored its SparseTensors already
            sparse_infos = _as_tensor_list(stored_infos)
        types = [t.dtype.base_dtype for t in tensor_lists[0]]
        shapes = _shapes(tensor_lists, shapes, enqueue_many)
        if dynamic_pad:
            queue = PaddingFIFOQueue(capacity, types, shapes, shared_name=shared_name)
        else:
            queue = FIFOQueue(capacity, types, shapes, shared_name=shared_name)
        _enqueue(queue, tensor_lists, num_threads, enqueue_many)
        # TensorFlow's queue summary: how full the queue is, in [0, 1].
        summary_ops.scalar(f"fraction_of_{capacity}_full",
                           math_ops.cast(queue.size(), _dtypes.float32) * (1.0 / capacity))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(original, restore_sparse(dequeued, sparse_infos))


def batch(tensors, batch_size, num_threads: int = 1, capacity: int = 32,
          enqueue_many: bool = False, shapes=None, dynamic_pad: bool = False,
          allow_smaller_final_batch: bool = False, shared_name=None, name=None):
    """Batch `tensors` (a list or dict) through a FIFO queue filled by `num_threads` threads.

    Parameters
    ----------
    tensors : list or dict of Tensor
        One element (or, with `enqueue_many`, a batch of elements along dimension 0).
    batch_size : int or scalar int32 Tensor
    capacity : int
        Maximum number of elements queued.
    shapes : list of shapes, optional
        Element shapes (default: the inputs' static shapes, which must be fully defined
        unless `dynamic_pad`).
    dynamic_pad : bool
        Use a `PaddingFIFOQueue`: ``None`` dimensions are padded to the largest in each
        batch.
    allow_smaller_final_batch : bool
        After the input is exhausted, return the last, smaller batch (dimension 0 of
        the result is then unknown).

    Returns
    -------
    The batch, in the structure of `tensors`.

    Example
    -------
    >>> import flowgraph as tf
    >>> batch = tf.train.batch({"x": tf.constant(1.0)}, batch_size=3)
    >>> batch["x"].shape.as_list()
    [3]
    """
    tensor_list = _validate(_as_tensor_list(tensors), "batch")
    return _batch([tensor_list], tensors, batch_size, num_threads, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch")


def batch_join(tensors_list, batch_size, capacity: int = 32, enqueue_many: bool = False,
               shapes=None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
               shared_name=None, name=None):
    """Like `batch`, but one enqueue thread per entry of `tensors_list` (same types).

    Example
    -------
    >>> import flowgraph as tf
    >>> b = tf.train.batch_join([[tf.constant(1)], [tf.constant(2)]], batch_size=2)
    >>> b.shape.as_list()
    [2]
    """
    lists = _validate_join(tensors_list, "batch_join")
    return _batch(lists, tensors_list[0], batch_size, 1, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch_join")


def _shuffle_batch(tensor_lists, original, batch_size, capacity, min_after_dequeue,
                   num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                   shared_name, name, what, stored_infos=None):
    if capacity <= min_after_dequeue:
        raise ValueError(
            f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
    with name_scope(name, what, _dense_inputs(tensor_lists)) as scope:
        # TensorFlow converts its default ``keep_input=True`` here (``batch/Const``).
        convert_to_tensor(True)
        tensor_lists, sparse_infos = _store(tensor_lists, enqueue_many)
        if stored_infos is not None:  # maybe_batch stored its SparseTensors already
            sparse_infos = _as_tensor_list(stored_infos)
        types = [t.dtype.base_dtype for t in tensor_lists[0]]
        shapes = _shapes(tensor_lists, shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity, min_after_dequeue, types, shapes, seed=seed,
                                   shared_name=shared_name)
        _enqueue(queue, tensor_lists, num_threads, enqueue_many)
        # The fraction of the queue above `min_after_dequeue` (what can be dequeued).
        spare = capacity - min_after_dequeue
        above = math_ops.maximum(0, queue.size() - min_after_dequeue)
        summary_ops.scalar(f"fraction_over_{min_after_dequeue}_of_{spare}_full",
                           math_ops.cast(above, _dtypes.float32) * (1.0 / spare))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(original, restore_sparse(dequeued, sparse_infos))


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads: int = 1,
                  seed=None, enqueue_many: bool = False, shapes=None,
                  allow_smaller_final_batch: bool = False, shared_name=None, name=None):
    """Batch `tensors` in random order through a `RandomShuffleQueue`.

    The queue keeps at least `min_after_dequeue` elements after each dequeue (until the
    input is exhausted) to mix them; `capacity` must exceed it.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([1, 2, 3])
    >>> xb = tf.train.shuffle_batch([x], batch_size=2, capacity=8, min_after_dequeue=2,
    ...                             enqueue_many=True)
    >>> xb.shape.as_list()
    [2]
    """
    tensor_list = _validate(_as_tensor_list(tensors), "shuffle_batch")
    return _shuffle_batch([tensor_list], tensors, batch_size, capacity, min_after_dequeue,
                          num_threads, seed, enqueue_many, shapes, allow_smaller_final_batch,
                          shared_name, name, "shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many: bool = False, shapes=None,
                       allow_smaller_final_batch: bool = False, shared_name=None, name=None):
    """Like `shuffle_batch`, but one enqueue thread per entry of `tensors_list`."""
    lists = _validate_join(tensors_list, "shuffle_batch_join")
    return _shuffle_batch(lists, tensors_list[0], batch_size, capacity, min_after_dequeue, 1,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name, "shuffle_batch_join")
