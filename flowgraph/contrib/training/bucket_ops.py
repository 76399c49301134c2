"""`tf.contrib.training.bucket` and `bucket_by_sequence_length`: TF 1.x's queue-based
batching of examples by bucket (e.g. by sequence length, so that a batch pads little).

Each example goes to the queue of its bucket (a `PaddingFIFOQueue` with
``dynamic_pad=True``); a queue runner takes ``batch_size`` examples from any bucket that
has them and puts the batch, with its bucket id, on a top queue, which the returned
tensors dequeue. Start the queue runners (``tf.train.start_queue_runners``, or a
`MonitoredSession`) as for ``tf.train.batch``.

Example
-------
>>> import flowgraph as tf
>>> length, = tf.train.slice_input_producer([tf.constant([1, 5, 2, 6])], num_epochs=1,
...                                         shuffle=False)
>>> size, (value,) = tf.contrib.training.bucket_by_sequence_length(
...     length, [length * 10], batch_size=2, bucket_boundaries=[4])
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     coord = tf.train.Coordinator()
...     threads = tf.train.start_queue_runners(sess, coord)
...     print(sorted(sorted(sess.run(size).tolist()) for _ in range(2)))
...     coord.request_stop(); coord.join(threads, ignore_live_threads=True)
[[1, 2], [5, 6]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import math_ops
from flowgraph.ops.array_index_ops import where
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue
from flowgraph.ops.math_reduce import reduce_min
from flowgraph.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["bucket", "bucket_by_sequence_length"]


def _flatten(tensors):
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return [tensors[k] for k in keys], keys
    if isinstance(tensors, Tensor) or not isinstance(tensors, list | tuple):
        return [tensors], None
    return list(tensors), None


def _restore(original, keys, values):
    if keys is not None:
        return dict(zip(keys, values))
    if isinstance(original, Tensor) or not isinstance(original, list | tuple):
        return values[0]
    return type(original)(values) if isinstance(original, tuple) else list(values)


def bucket(tensors, which_bucket, batch_size, num_buckets, num_threads=1, capacity=32,
           bucket_capacities=None, shapes=None, dynamic_pad=False,
           allow_smaller_final_batch=False, keep_input=True, shared_name=None, name=None):
    """``(bucket_id, batched tensors)``: examples batched per bucket `which_bucket`
    (an int32 scalar in ``[0, num_buckets)``); `batch_size` is an int or one per bucket.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant(3)
    >>> bid, batch = tf.contrib.training.bucket([x], which_bucket=x % 2, batch_size=4,
    ...                                         num_buckets=2)
    >>> batch[0].shape.as_list()
    [4]
    """
    batch_sizes = list(batch_size) if isinstance(batch_size, list | tuple) else (
        [batch_size] * num_buckets)
    if len(batch_sizes) != num_buckets:
        raise ValueError(f"bucket: batch_size must be an int or a list of {num_buckets} "
                         f"(num_buckets) ints, got {len(batch_sizes)}")
    bucket_capacities = bucket_capacities or [capacity] * num_buckets
    if len(bucket_capacities) != num_buckets:
        raise ValueError(f"The list bucket_capacities ({len(bucket_capacities)}) must "
                         f"have exactly num_buckets ({num_buckets}) elements.")
    flat, keys = _flatten(tensors)
    if any(isinstance(t, SparseTensor) for t in flat):
        raise NotImplementedError("tf.contrib.training.bucket: SparseTensor inputs are not "
                                  "supported by flowgraph; batch dense tensors")
    with name_scope(name, "bucket", flat):
        flat = [convert_to_tensor(t) for t in flat]
        which_bucket = math_ops.cast(convert_to_tensor(which_bucket), _dtypes.int32)
        types = [t.dtype.base_dtype for t in flat]
        if shapes is None:
            shapes = [t.shape for t in flat]
        shapes = [TensorShape(s) for s in shapes]
        if not dynamic_pad and not all(s.is_fully_defined() for s in shapes):
            raise ValueError(f"bucket: all shapes must be fully defined without "
                             f"dynamic_pad=True, got {[str(s) for s in shapes]}")
        make = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queues = [make(capacity=bucket_capacities[i], dtypes=types, shapes=shapes,
                       shared_name=f"{shared_name}_bucket_{i}" if shared_name else None,
                       name=f"bucket_queue_{i}") for i in range(num_buckets)]
        same = (len(set(batch_sizes)) == 1 and not allow_smaller_final_batch)
        top_batch = batch_sizes[0] if same else None
        top = PaddingFIFOQueue(
            capacity=capacity, dtypes=[_dtypes.int32, *types],
            shapes=[TensorShape([]), *[TensorShape([None]).concatenate(s) for s in shapes]],
            shared_name=shared_name, name="top_queue")
        keep = convert_to_tensor(keep_input, _dtypes.bool)
        enqueues = []
        for i, q in enumerate(queues):
            take = math_ops.logical_and(keep, math_ops.equal(which_bucket, i))
            enqueues.append(cond(take, lambda q=q: _enqueue_and_true(q, flat),
                                 lambda: constant(False)))
        enqueue_op = group(*enqueues, name="enqueue_to_bucket")
        add_queue_runner(QueueRunner(
            queues[0], [enqueue_op] * num_threads,
            close_op=group(*[q.close() for q in queues]),
            cancel_op=group(*[q.close(cancel_pending_enqueues=True) for q in queues])))
        to_top = []
        for i, (q, bs) in enumerate(zip(queues, batch_sizes)):
            taken = (q.dequeue_up_to(bs, name=f"read_bucket_{i}") if allow_smaller_final_batch
                     else q.dequeue_many(bs, name=f"read_bucket_{i}"))
            taken = taken if isinstance(taken, list) else [taken]
            to_top.append(top.enqueue([constant(i, _dtypes.int32), *taken],
                                      name=f"enqueue_from_bucket_{i}"))
        add_queue_runner(QueueRunner(
            queues[0], to_top, close_op=top.close(),
            cancel_op=top.close(cancel_pending_enqueues=True),
            queue_closed_exception_types=(errors.OutOfRangeError, errors.CancelledError)))
        out = top.dequeue(name="dequeue_top")
        out = out if isinstance(out, list) else [out]
        which, batched = out[0], out[1:]
        for t, s in zip(batched, shapes):
            t.set_shape(TensorShape([top_batch]).concatenate(s))
        return which, _restore(tensors, keys, batched)


def _enqueue_and_true(q, flat):
    with control_dependencies([q.enqueue(flat)]):
        return constant(True)


def bucket_by_sequence_length(input_length, tensors, batch_size, bucket_boundaries,
                              num_threads=1, capacity=32, bucket_capacities=None,
                              shapes=None, dynamic_pad=False,
                              allow_smaller_final_batch=False, keep_input=True,
                              shared_name=None, name=None):
    """``(lengths, batched tensors)``: `bucket` with the bucket chosen by where the int32
    `input_length` falls among the sorted `bucket_boundaries` (``len + 1`` buckets:
    ``[-inf, b0)``, ``[b0, b1)``, ..., ``[bn, inf)``)."""
    boundaries = list(bucket_boundaries)
    if not boundaries:
        raise ValueError("bucket_boundaries must not be empty")
    if any(boundaries[k] >= boundaries[k + 1] for k in range(len(boundaries) - 1)):
        raise ValueError("bucket_boundaries must be a sorted list")
    if isinstance(batch_size, list | tuple) and len(batch_size) != len(boundaries) + 1:
        raise ValueError(f"batch_size must be an int or a list of {len(boundaries) + 1} "
                         f"(len(bucket_boundaries) + 1) ints, got {len(batch_size)}")
    flat, keys = _flatten(tensors)
    with name_scope(name, "bucket_by_sequence_length", [input_length, *flat]):
        input_length = math_ops.cast(convert_to_tensor(input_length), _dtypes.int32)
        lo = constant([np.iinfo(np.int32).min, *boundaries], _dtypes.int32)
        hi = constant([*boundaries, np.iinfo(np.int32).max], _dtypes.int32)
        inside = math_ops.logical_and(math_ops.less_equal(lo, input_length),
                                      math_ops.less(input_length, hi))
        which = reduce_min(math_ops.cast(where(inside), _dtypes.int32))
        full_shapes = None if shapes is None else [TensorShape([]), *shapes]
        _, out = bucket([input_length, *flat], which, batch_size, len(boundaries) + 1,
                        num_threads=num_threads, capacity=capacity,
                        bucket_capacities=bucket_capacities, shapes=full_shapes,
                        dynamic_pad=dynamic_pad,
                        allow_smaller_final_batch=allow_smaller_final_batch,
                        keep_input=keep_input, shared_name=shared_name, name="bucket")
        return out[0], _restore(tensors, keys, out[1:])
