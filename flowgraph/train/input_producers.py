"""Queue-based input producers: `input_producer`, `string_input_producer`,
`range_input_producer`, `slice_input_producer`, and `limit_epochs`.

Each producer fills a `FIFOQueue` with the rows of a tensor (optionally shuffled, once per
pass), pass after pass, through a `QueueRunner` in the ``QUEUE_RUNNERS`` collection. With
`num_epochs`, a local-variable counter (`count_up_to`) stops the runner after that many
passes: the queue closes, and reading past its last element raises `OutOfRangeError`
(so the local variables must be initialized, as in TensorFlow).

Example
-------
>>> import flowgraph as tf
>>> q = tf.train.string_input_producer(["a.csv", "b.csv"], num_epochs=1, shuffle=False)
>>> name = q.dequeue()
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     coord = tf.train.Coordinator()
...     threads = tf.train.start_queue_runners(sess, coord=coord)
...     print(sess.run(name), sess.run(name))
...     coord.request_stop()
...     coord.join(threads)
b'a.csv' b'b.csv'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, control_dependencies, name_scope
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.io.match_filenames import match_filenames_once
from flowgraph.ops import array_ops, check_ops, math_ops, random_ops
from flowgraph.ops.data_flow_ops import FIFOQueue
from flowgraph.ops.state_count_ops import count_up_to
from flowgraph.ops.variables import Variable
from flowgraph.summary import summary_ops
from flowgraph.train.queue_runner import QueueRunner, add_queue_runner

__all__ = ["input_producer", "limit_epochs", "match_filenames_once", "range_input_producer",
           "slice_input_producer", "string_input_producer"]


def limit_epochs(tensor, num_epochs=None, name=None):
    """Return `tensor` at most `num_epochs` times; the next evaluation raises
    `OutOfRangeError`. ``num_epochs=None`` returns `tensor` unchanged. The counter is a
    local variable named ``epochs``.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=1)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.local_variables_initializer())
    ...     print(sess.run(x))
    ...     try:
    ...         sess.run(x)
    ...     except tf.errors.OutOfRangeError:
    ...         print("done")
    [1 2]
    done
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"limit_epochs: num_epochs must be > 0 (or None), got {num_epochs}")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = convert_to_tensor(0, dtype=_dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A `FIFOQueue` of `capacity` fed with the rows of `input_tensor` (its first
    dimension), shuffled each pass when `shuffle`, for `num_epochs` passes (forever if
    None). `element_shape` is required when ``input_tensor.shape[1:]`` is not fully known.
    With `summary_name`, a scalar summary of how full the queue is (as a fraction of
    `capacity`) is added to ``GraphKeys.SUMMARIES``.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), shuffle=False)
    >>> q.dequeue().shape.as_list()
    [2]
    """
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(
            TensorShape(None) if element_shape is None else as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError(
                "input_producer: either `input_tensor` must have a fully defined shape or "
                f"`element_shape` must be specified (got element shape {element_shape})")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        # TF passes `name` through: a caller's scope ("input_producer/") names the
        # queue op itself; without one the op keeps its type's default name.
        queue = FIFOQueue(capacity, [input_tensor.dtype.base_dtype], [element_shape],
                          shared_name=shared_name, name=name)
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            summary_ops.scalar(summary_name,
                               math_ops.cast(queue.size(), _dtypes.float32) * (1.0 / capacity))
        return queue


def _is_nonempty(value) -> bool:
    """Whether a Python list or NumPy array of strings has any entry (graph values, such
    as a variable, are checked when the producer runs)."""
    if isinstance(value, (list, tuple)):
        return bool(value)
    size = getattr(value, "size", None)
    return not isinstance(size, int) or size > 0


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """A queue of the strings of the 1-D `string_tensor` (typically file names), pass
    after pass; see `input_producer`. An empty Python list is a ValueError here, an empty
    `string_tensor` an error at run time.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.train.string_input_producer(["f1", "f2"])
    >>> q.dequeue().dtype.name
    'string'
    """
    if not _is_nonempty(string_tensor):
        raise ValueError("string_input_producer requires a non-null input tensor")
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        # Converted inside the scope, as TensorFlow (``input_producer/Const``).
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        if string_tensor.shape.ndims not in (None, 1):
            raise ValueError(f"string_input_producer: string_tensor must be a vector, got "
                             f"shape {string_tensor.shape}")
        not_empty = math_ops.greater(array_ops.size(string_tensor), 0)
        check = check_ops.Assert(
            not_empty, ["string_input_producer requires a non-null input tensor"])
        with control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full", scope,
                              cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the int32 integers ``0 .. limit - 1``, pass after pass; see
    `input_producer`.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.train.range_input_producer(3, shuffle=False)
    >>> q.dequeue().dtype.name
    'int32'
    """
    with name_scope(name, "input_producer", [limit]) as scope:
        rows = math_ops.cast(array_ops.range(limit), _dtypes.int32)
        return input_producer(rows, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None):
    """One row of every tensor of `tensor_list` at a time (the same row index for all;
    they must share their first dimension), pass after pass; see `input_producer`.
    Returns the list of row tensors.

    Example
    -------
    >>> import flowgraph as tf
    >>> x, y = tf.train.slice_input_producer([tf.constant([[1, 2], [3, 4]]),
    ...                                       tf.constant([0, 1])], shuffle=False)
    >>> x.shape.as_list(), y.shape.as_list()
    ([2], [])
    """
    if not tensor_list:
        raise ValueError("slice_input_producer: expected at least one tensor in tensor_list")
    with name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        n = array_ops.shape(tensor_list[0], out_type=_dtypes.int32)[0]
        queue = range_input_producer(n, num_epochs, shuffle, seed, capacity, shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]
