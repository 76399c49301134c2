"""`Decoder`, `BasicDecoder` and `dynamic_decode`: running a decoder in a while loop.

`dynamic_decode` is one `tf.while_loop`. Its loop variables are the step counter,
one TensorArray per output (the step's outputs are written at the step's index), the
decoder's state, the next inputs, the per-entry ``finished`` flags and the lengths;
the loop stops when every entry is finished or after `maximum_iterations` steps. The
length of an entry is the number of steps before (and including) the one that
finished it. With ``impute_finished`` a finished entry's outputs are zeros and its
state is copied through unchanged, so its final state is the one of its last step.
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes, nest
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.rnn import _transpose_batch_time
from flowgraph.ops.rnn_cell_impl import size_shape, zeros_for_size
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["BasicDecoder", "BasicDecoderOutput", "Decoder", "dynamic_decode"]


class Decoder:
    """The interface `dynamic_decode` runs: ``batch_size``, ``output_size`` and
    ``output_dtype`` (matching structures), ``initialize() -> (finished, inputs,
    state)``, ``step(time, inputs, state) -> (outputs, state, inputs, finished)`` and,
    optionally, ``finalize(outputs, state, lengths)``. ``tracks_own_finished`` says
    that `step` returns the complete finished flags (no OR with the previous ones)."""

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    @property
    def output_dtype(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_dtype")

    @property
    def tracks_own_finished(self) -> bool:
        return False

    def initialize(self, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def step(self, time, inputs, state, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define step")

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    """A `BasicDecoder` step's outputs: the (projected) cell output and the ids."""

    __slots__ = ()


def is_layer(obj) -> bool:
    """Whether `obj` looks like a `tf.layers.Layer` (callable, with weights)."""
    return callable(obj) and (hasattr(obj, "trainable_variables") or hasattr(obj, "units"))


def layer_output_size(layer, size):
    """The output size of `layer` applied to inputs of `size` (no batch dimension)."""
    if layer is None:
        return size
    compute = getattr(layer, "compute_output_shape", None)
    if compute is not None:
        return nest.map_structure(
            lambda s: TensorShape(compute(TensorShape([None]).concatenate(size_shape(s))))[1:],
            size)
    units = getattr(layer, "units", None)
    if units is None:
        raise TypeError(f"output_layer {layer!r} has neither compute_output_shape nor units; "
                        "its output size is unknown.")
    return TensorShape([units])


class BasicDecoder(Decoder):
    """Decoding with a cell, a `Helper` and an optional output layer (e.g. a `Dense`
    projection to the vocabulary): each step calls the cell, the layer, then the
    helper's `sample` and `next_inputs`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.GRUCell(4)
    ...     helper = tf.contrib.seq2seq.TrainingHelper(tf.ones([2, 3, 5]), [3, 2])
    ...     dec = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32),
    ...                                           output_layer=tf.layers.Dense(7))
    ...     out, state, lengths = tf.contrib.seq2seq.dynamic_decode(dec)
    ...     print(out.rnn_output.shape, out.sample_id.dtype)
    (2, ?, 7) <dtype: 'int32'>
    """

    def __init__(self, cell, helper, initial_state, output_layer=None) -> None:
        from flowgraph.contrib.seq2seq.helper import Helper

        if not callable(cell) or not hasattr(cell, "output_size"):
            raise TypeError(f"BasicDecoder: cell must be an RNNCell, received: {cell!r}")
        if not isinstance(helper, Helper):
            raise TypeError(f"BasicDecoder: helper must be a Helper, received: {helper!r}")
        if output_layer is not None and not is_layer(output_layer):
            raise TypeError("BasicDecoder: output_layer must be a Layer, received: "
                            f"{output_layer!r}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    batch_size = property(lambda self: self._helper.batch_size)

    @property
    def output_size(self):
        return BasicDecoderOutput(layer_output_size(self._output_layer, self._cell.output_size),
                                  self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        size = layer_output_size(self._output_layer, self._cell.output_size)
        return BasicDecoderOutput(nest.map_structure(lambda _: dtype, size),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return (*self._helper.initialize(), self._initial_state)

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BasicDecoderStep", (time, inputs, state)):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished


def _leaf_shapes(size):
    """`size` with each leaf as a `TensorShape`."""
    return nest.map_structure(size_shape, size)


def dynamic_decode(decoder, output_time_major: bool = False, impute_finished: bool = False,
                   maximum_iterations=None, parallel_iterations: int = 32,
                   swap_memory: bool = False, scope=None):
    """Run `decoder` until every entry is finished (or `maximum_iterations` steps).

    Returns ``(final_outputs, final_state, final_sequence_lengths)``: the outputs of
    every step, ``[batch, time, ...]`` (``[time, batch, ...]`` with
    `output_time_major`), as the decoder's `finalize` left them; the final state; and
    the number of steps of each entry. Variables are created in variable scope `scope`
    (default ``"decoder"``).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.BasicRNNCell(6)
    ...     helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(tf.eye(6), [0, 0], 5)
    ...     dec = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32))
    ...     out, _, lengths = tf.contrib.seq2seq.dynamic_decode(dec, maximum_iterations=4)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(out.rnn_output).shape[2], max(sess.run(lengths)) <= 4)
    6 True
    """
    if not isinstance(decoder, Decoder):
        raise TypeError(f"dynamic_decode: expected decoder to be a Decoder, but saw: "
                        f"{decoder!r}")
    with vs.variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("dynamic_decode: maximum_iterations must be a scalar, got "
                                 f"shape {maximum_iterations.shape}.")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        output_size = _leaf_shapes(decoder.output_size)
        output_dtype = decoder.output_dtype
        zero_outputs = nest.map_structure(
            lambda s, d: zeros_for_size(s, decoder.batch_size, d), output_size, output_dtype)
        if maximum_iterations is not None:
            initial_finished = math_ops.logical_or(
                initial_finished, math_ops.greater_equal(0, maximum_iterations))
        initial_lengths = array_ops.zeros_like(initial_finished, dtype=dtypes.int32)
        static_batch = constant_value(convert_to_tensor(decoder.batch_size))

        def make_ta(s, d):
            return TensorArray(d, size=0, dynamic_size=True,
                               element_shape=TensorShape([static_batch]).concatenate(s))

        initial_tas = nest.map_structure(make_ta, output_size, output_dtype)

        def condition(time, tas, state, inputs, finished, lengths):
            return math_ops.logical_not(math_reduce.reduce_all(finished))

        def body(time, tas, state, inputs, finished, lengths):
            outputs, dec_state, next_inputs, dec_finished = decoder.step(time, inputs, state)
            own_lengths = getattr(dec_state, "lengths", None)
            if decoder.tracks_own_finished:
                next_finished = dec_finished
            else:
                next_finished = math_ops.logical_or(dec_finished, finished)
            if decoder.tracks_own_finished and own_lengths is not None:
                next_lengths = math_ops.cast(own_lengths, dtypes.int32)  # beam search's own
            else:
                next_lengths = array_ops.where(
                    math_ops.logical_not(finished),
                    array_ops.fill(array_ops.shape(lengths), time + 1), lengths)
            nest.assert_same_structure(state, dec_state)
            nest.assert_same_structure(tas, outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                outputs = nest.map_structure(
                    lambda out, zero: array_ops.where(finished, zero, out), outputs,
                    zero_outputs)

                def copy_state(new, cur):
                    if isinstance(cur, TensorArray):
                        return new
                    new.set_shape(cur.shape)
                    return new if new.shape.ndims == 0 else array_ops.where(finished, cur, new)

                dec_state = nest.map_structure(copy_state, dec_state, state)
            tas = nest.map_structure(lambda ta, out: ta.write(time, out), tas, outputs)
            return time + 1, tas, dec_state, next_inputs, next_finished, next_lengths

        res = while_loop(condition, body,
                         (constant(0, dtypes.int32), initial_tas, initial_state,
                          initial_inputs, initial_finished, initial_lengths),
                         parallel_iterations=parallel_iterations,
                         maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_tas, final_state, final_lengths = res[1], res[2], res[5]
        final_outputs = nest.map_structure(lambda ta: ta.stack(), final_tas)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(_transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_lengths
