"""Sampling helpers of `BasicDecoder`: where each step's inputs come from.

A helper answers three questions for a decoder: the first inputs and which batch
entries are already finished (`initialize`), which ids to emit from a step's outputs
(`sample`), and the next inputs and finished flags from those ids (`next_inputs`).
`TrainingHelper` feeds the ground truth (teacher forcing), `GreedyEmbeddingHelper`
feeds back the embedding of the argmax, `SampleEmbeddingHelper` of a sample,
`ScheduledEmbeddingTrainingHelper` mixes the two at random.
"""

from __future__ import annotations

from flowgraph.framework import dtypes, nest
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce, random_ops
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.embedding_ops import embedding_lookup
from flowgraph.ops.rnn import _transpose_batch_time
from flowgraph.ops.tensor_array import TensorArray

__all__ = [
    "CustomHelper",
    "GreedyEmbeddingHelper",
    "Helper",
    "InferenceHelper",
    "SampleEmbeddingHelper",
    "ScheduledEmbeddingTrainingHelper",
    "ScheduledOutputTrainingHelper",
    "TrainingHelper",
]


class Helper:
    """The interface: ``batch_size``, ``sample_ids_shape``, ``sample_ids_dtype``,
    ``initialize()``, ``sample(time, outputs, state)`` and ``next_inputs(time, outputs,
    state, sample_ids)``."""

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def sample_ids_shape(self):
        return TensorShape([])

    @property
    def sample_ids_dtype(self):
        return dtypes.int32

    def initialize(self, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def sample(self, time, outputs, state, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define sample")

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define next_inputs")


class CustomHelper(Helper):
    """A helper from three functions: ``initialize_fn() -> (finished, inputs)``,
    ``sample_fn(time, outputs, state) -> ids`` and ``next_inputs_fn(time, outputs,
    state, sample_ids) -> (finished, inputs, state)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> h = tf.contrib.seq2seq.CustomHelper(None, None, None, sample_ids_dtype=tf.float32)
    >>> h.sample_ids_dtype
    tf.float32
    """

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None) -> None:
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = dtypes.as_dtype(sample_ids_dtype or dtypes.int32)

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("CustomHelper: batch_size is known only after initialize() "
                             "was called.")
        return self._batch_size

    sample_ids_shape = property(lambda self: self._sample_ids_shape)
    sample_ids_dtype = property(lambda self: self._sample_ids_dtype)

    def initialize(self, name=None):
        with name_scope(name, "CustomHelperInitialize"):
            finished, inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = array_ops.size(finished)
            return finished, inputs

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "CustomHelperSample", [time, outputs, state]):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "CustomHelperNextInputs", [time, outputs, state, sample_ids]):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


def _unstack_ta(inp):
    return TensorArray(inp.dtype, size=array_ops.shape(inp)[0],
                       element_shape=inp.shape[1:]).unstack(inp)


def _argmax_ids(outputs, who: str):
    if not isinstance(outputs, Tensor):
        raise TypeError(f"{who}: expected outputs to be a single Tensor, got: "
                        f"{type(outputs).__name__}")
    return math_ops.cast(math_reduce.argmax(outputs, -1), dtypes.int32)


class TrainingHelper(Helper):
    """Reads the inputs of step ``t`` from ``inputs[:, t]`` (teacher forcing); an entry
    is finished after ``sequence_length`` steps.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     h = tf.contrib.seq2seq.TrainingHelper(tf.zeros([2, 5, 3]), [5, 3])
    ...     finished, first = h.initialize()
    ...     print(first.shape, tf.Session().run(finished))
    (2, 3) [False False]
    """

    def __init__(self, inputs, sequence_length, time_major: bool = False, name=None) -> None:
        with name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = nest.map_structure(lambda x: convert_to_tensor(x, name="inputs"), inputs)
            self._inputs = inputs
            if not time_major:
                inputs = nest.map_structure(_transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError("TrainingHelper: expected sequence_length to be a vector, "
                                 f"but received shape: {self._sequence_length.shape}")
            self._zero_inputs = nest.map_structure(lambda x: array_ops.zeros_like(x[0, :]),
                                                   inputs)
            self._batch_size = array_ops.size(self._sequence_length)

    inputs = property(lambda self: self._inputs)
    sequence_length = property(lambda self: self._sequence_length)
    batch_size = property(lambda self: self._batch_size)

    def _read(self, time, finished):
        def read():
            return nest.map_structure(lambda ta: ta.read(time), self._input_tas)

        return cond(math_reduce.reduce_all(finished), lambda: self._zero_inputs, read)

    def initialize(self, name=None):
        with name_scope(name, "TrainingHelperInitialize"):
            finished = math_ops.equal(0, self._sequence_length)
            return finished, self._read(0, finished)

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "TrainingHelperSample", [time, outputs]):
            return math_ops.cast(math_reduce.argmax(outputs, -1), dtypes.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperNextInputs", [time, outputs, state]):
            next_time = time + 1
            finished = math_ops.greater_equal(next_time, self._sequence_length)
            return finished, self._read(next_time, finished), state


def _embedding_fn(embedding):
    if callable(embedding):
        return embedding
    return lambda ids: embedding_lookup(embedding, ids)


class GreedyEmbeddingHelper(Helper):
    """Feeds back the embedding of each step's argmax; an entry is finished when it
    emits `end_token`. `embedding` is the embedding matrix or a function of the ids.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     h = tf.contrib.seq2seq.GreedyEmbeddingHelper(tf.ones([10, 4]), [1, 1, 1], 2)
    ...     print(h.initialize()[1].shape)
    (3, 4)
    """

    def __init__(self, embedding, start_tokens, end_token) -> None:
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError(f"{type(self).__name__}: start_tokens must be a vector, got "
                             f"shape {self._start_tokens.shape}.")
        if self._end_token.shape.ndims != 0:
            raise ValueError(f"{type(self).__name__}: end_token must be a scalar, got "
                             f"shape {self._end_token.shape}.")
        self._batch_size = array_ops.size(self._start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    batch_size = property(lambda self: self._batch_size)

    def initialize(self, name=None):
        finished = array_ops.tile([False], array_ops.reshape(self._batch_size, [1]))
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "GreedyEmbeddingHelperSample", [time, outputs, state]):
            return _argmax_ids(outputs, type(self).__name__)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "GreedyEmbeddingHelperNextInputs", [time, outputs, state]):
            finished = math_ops.equal(sample_ids, self._end_token)
            next_inputs = cond(math_reduce.reduce_all(finished),
                               lambda: self._start_inputs,
                               lambda: self._embedding_fn(sample_ids))
            return finished, next_inputs, state


def _categorical_ids(logits, seed):
    ids = random_ops.multinomial(logits, 1, seed=seed, output_dtype=dtypes.int32)
    return array_ops.reshape(ids, [-1])


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """As `GreedyEmbeddingHelper`, but the ids are drawn from the softmax of the
    outputs (divided by `softmax_temperature`).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     h = tf.contrib.seq2seq.SampleEmbeddingHelper(tf.ones([10, 4]), [1, 1], 2, seed=3)
    ...     print(h.sample(0, tf.zeros([2, 10]), None).shape)
    (2,)
    """

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None) -> None:
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "SampleEmbeddingHelperSample", [time, outputs, state]):
            if not isinstance(outputs, Tensor):
                raise TypeError("SampleEmbeddingHelper: expected outputs to be a single "
                                f"Tensor, got: {type(outputs).__name__}")
            logits = outputs if self._softmax_temperature is None else \
                outputs / self._softmax_temperature
            return _categorical_ids(logits, self._seed)


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """Teacher forcing, except that with probability `sampling_probability` an entry's
    next input is the embedding of an id sampled from its outputs (scheduled sampling).
    Sampled ids are returned as such, the other entries' ids as -1.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     h = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper(
    ...         tf.zeros([2, 5, 4]), [5, 5], tf.ones([10, 4]), 0.0)
    ...     print(tf.Session().run(h.sample(0, tf.zeros([2, 10]), None)))
    [-1 -1]
    """

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major: bool = False, seed=None, scheduling_seed=None,
                 name=None) -> None:
        with name_scope(name, "ScheduledEmbeddingSamplingWrapper",
                        [embedding, sampling_probability]):
            self._embedding_fn = _embedding_fn(embedding)
            self._sampling_probability = convert_to_tensor(sampling_probability,
                                                           name="sampling_probability")
            if self._sampling_probability.shape.ndims not in (0, 1):
                raise ValueError("ScheduledEmbeddingTrainingHelper: sampling_probability "
                                 "must be either a scalar or a vector, saw shape: "
                                 f"{self._sampling_probability.shape}")
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs, sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "ScheduledEmbeddingTrainingHelperSample", [time, outputs]):
            draw = random_ops.random_uniform(array_ops.reshape(self.batch_size, [1]),
                                             seed=self._scheduling_seed)
            select = math_ops.less(draw, math_ops.cast(self._sampling_probability,
                                                       draw.dtype))
            ids = _categorical_ids(outputs, self._seed)
            return array_ops.where(select, ids, array_ops.fill(
                array_ops.reshape(self.batch_size, [1]), -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs",
                        [time, outputs, state, sample_ids]):
            finished, base_inputs, state = super().next_inputs(time, outputs, state)
            sampled = self._embedding_fn(math_ops.maximum(sample_ids, 0))
            use_sample = math_ops.greater(sample_ids, -1)
            next_inputs = array_ops.where(use_sample, sampled, base_inputs)
            return finished, next_inputs, state


class ScheduledOutputTrainingHelper(TrainingHelper):
    """Teacher forcing, except that with probability `sampling_probability` an entry's
    next input is its own output (through `next_inputs_fn` when given), concatenated
    with `auxiliary_inputs` at the next step when given. The sample ids are the 0/1
    draws (int32).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     h = tf.contrib.seq2seq.ScheduledOutputTrainingHelper(tf.zeros([2, 4, 3]), [4, 4], 1.0)
    ...     ids = h.sample(0, tf.ones([2, 3]), None)
    ...     _, nxt, _ = h.next_inputs(0, tf.ones([2, 3]), None, ids)
    ...     print(tf.Session().run(nxt))
    [[1. 1. 1.]
     [1. 1. 1.]]
    """

    def __init__(self, inputs, sequence_length, sampling_probability, time_major: bool = False,
                 seed=None, next_inputs_fn=None, auxiliary_inputs=None, name=None) -> None:
        with name_scope(name, "ScheduledOutputTrainingHelper",
                        [inputs, auxiliary_inputs, sampling_probability]):
            self._sampling_probability = convert_to_tensor(sampling_probability,
                                                           name="sampling_probability")
            if self._sampling_probability.shape.ndims not in (0, 1):
                raise ValueError("ScheduledOutputTrainingHelper: sampling_probability must "
                                 "be either a scalar or a vector, saw shape: "
                                 f"{self._sampling_probability.shape}")
            if auxiliary_inputs is None:
                combined = inputs
                self._auxiliary_tas = None
            else:
                inputs = nest.map_structure(convert_to_tensor, inputs)
                auxiliary_inputs = nest.map_structure(convert_to_tensor, auxiliary_inputs)
                combined = nest.map_structure(lambda x, y: array_ops.concat([x, y], -1),
                                              inputs, auxiliary_inputs)
                if not time_major:
                    auxiliary_inputs = nest.map_structure(_transpose_batch_time,
                                                          auxiliary_inputs)
                self._auxiliary_tas = nest.map_structure(_unstack_ta, auxiliary_inputs)
            self._seed = seed
            self._next_inputs_fn = next_inputs_fn
            super().__init__(combined, sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "ScheduledOutputTrainingHelperSample", [time, outputs, state]):
            draw = random_ops.random_uniform(array_ops.reshape(self.batch_size, [1]),
                                             seed=self._seed)
            return math_ops.cast(math_ops.less(draw, math_ops.cast(
                self._sampling_probability, draw.dtype)), dtypes.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "ScheduledOutputTrainingHelperNextInputs",
                        [time, outputs, state, sample_ids]):
            finished, base_inputs, state = super().next_inputs(time, outputs, state)
            chosen = math_ops.cast(sample_ids, dtypes.bool)

            def with_outputs():
                fed = outputs if self._next_inputs_fn is None else self._next_inputs_fn(outputs)
                if self._auxiliary_tas is not None:
                    aux = nest.map_structure(lambda ta: ta.read(time + 1), self._auxiliary_tas)
                    fed = nest.map_structure(lambda x, y: array_ops.concat([x, y], -1), fed, aux)
                return array_ops.where(chosen, fed, base_inputs)

            skip = math_ops.logical_or(math_reduce.reduce_all(finished),
                                       math_ops.logical_not(math_reduce.reduce_any(chosen)))
            return finished, cond(skip, lambda: base_inputs, with_outputs), state


class InferenceHelper(Helper):
    """Feeds ``next_inputs_fn(sample_ids)`` (default: the ids themselves) back, with
    ``sample_fn(outputs)`` the ids and ``end_fn(sample_ids)`` the finished flags.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     h = tf.contrib.seq2seq.InferenceHelper(
    ...         lambda out: out, [2], tf.float32, tf.zeros([3, 2]),
    ...         lambda ids: tf.reduce_all(ids > 1.0, 1))
    ...     print(h.initialize()[1].shape)
    (3, 2)
    """

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None) -> None:
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = TensorShape(sample_shape)
        self._sample_dtype = dtypes.as_dtype(sample_dtype)
        self._next_inputs_fn = next_inputs_fn
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        self._batch_size = array_ops.shape(self._start_inputs)[0]

    batch_size = property(lambda self: self._batch_size)
    sample_ids_shape = property(lambda self: self._sample_shape)
    sample_ids_dtype = property(lambda self: self._sample_dtype)

    def initialize(self, name=None):
        finished = array_ops.tile([False], array_ops.reshape(self._batch_size, [1]))
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = self._end_fn(sample_ids)
        next_inputs = sample_ids if self._next_inputs_fn is None else \
            self._next_inputs_fn(sample_ids)
        return finished, next_inputs, state
