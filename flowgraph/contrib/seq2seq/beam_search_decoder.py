"""`BeamSearchDecoder`, `tile_batch` and `gather_tree`.

The decoder keeps ``beam_width`` hypotheses per batch entry. Its state holds the
cell's state split to ``[batch, beam, ...]``, each hypothesis' total log-probability,
finished flags and lengths. A step runs the cell on the ``batch * beam`` merged
inputs, adds each hypothesis' log-probability to the log-softmax of its logits (a
finished hypothesis may only continue with ``end_token``, at no cost), divides by the
length penalty ``((5 + length) / 6) ** length_penalty_weight``, keeps the best
``beam_width`` of the ``beam * vocab`` continuations per entry (`top_k`) and gathers
the cell states of their parent beams. Each step emits the scores, the chosen word
ids and the parent beam ids; `finalize` follows the parents back from the last step
(`gather_tree`) to give whole sequences, best first. The encoder outputs and state
that an attention cell reads must be repeated ``beam_width`` times per entry first
(`tile_batch`).
"""

from __future__ import annotations

import collections

import numpy as np

from flowgraph.contrib.seq2seq.attention_wrapper import AttentionWrapperState
from flowgraph.contrib.seq2seq.decoder import Decoder, is_layer
from flowgraph.contrib.seq2seq.helper import _embedding_fn
from flowgraph.framework import dtypes, nest
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce, nn_ops
from flowgraph.ops.array_extra_ops import batch_gather
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.nn_loss_ops import top_k
from flowgraph.ops.tensor_array import TensorArray

__all__ = [
    "BeamSearchDecoder",
    "BeamSearchDecoderOutput",
    "BeamSearchDecoderState",
    "FinalBeamSearchDecoderOutput",
    "gather_tree",
    "tile_batch",
]


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    __slots__ = ()


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    __slots__ = ()


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamSearchDecoderOutput", ("predicted_ids", "beam_search_decoder_output"))):
    """`predicted_ids` ``[batch, time, beam]`` are whole hypotheses, best beam first;
    `beam_search_decoder_output` the raw per-step `BeamSearchDecoderOutput`."""

    __slots__ = ()


def tile_batch(t, multiplier: int, name=None):
    """Repeat each batch entry `multiplier` times: ``[b0, b1] -> [b0, b0, b1, b1]``
    (for every tensor of a nested structure).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     tiled = tf.contrib.seq2seq.tile_batch(tf.constant([[1], [2]]), 2)
    ...     print(tf.Session().run(tiled).ravel())
    [1 1 2 2]
    """
    flat = nest.flatten(t)
    with name_scope(name, "tile_batch", flat):
        def tile_one(x):
            x = convert_to_tensor(x, name="t")
            if x.shape.ndims is None:
                raise ValueError(f"tile_batch: t must have statically known rank, got {x}.")
            if x.shape.ndims == 0:
                raise ValueError(f"tile_batch: t must have rank >= 1 (a batch axis), got "
                                 f"the scalar {x.name}.")
            shape = array_ops.shape(x)
            multiples = [1] * (x.shape.ndims + 1)
            multiples[1] = multiplier
            tiled = array_ops.tile(array_ops.expand_dims(x, 1), multiples)
            tiled = array_ops.reshape(tiled, array_ops.concat(
                [shape[:1] * multiplier, shape[1:]], 0))
            b = x.shape[0].value
            tiled.set_shape(TensorShape([None if b is None else b * multiplier])
                            .concatenate(x.shape[1:]))
            return tiled

        return nest.map_structure(tile_one, t)


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """Whole beams from per-step ids and parent beam indices (all ``[max_time, batch,
    beam]``): walking back from step ``max_sequence_lengths[b] - 1``, beam ``k`` of
    the result is the path that ends in beam ``k``. Steps past the length, and past
    the first `end_token` of a path, hold `end_token`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     ids = tf.constant([[[2, 3]], [[4, 5]]])
    ...     parents = tf.constant([[[0, 0]], [[1, 0]]])
    ...     print(tf.Session().run(tf.contrib.seq2seq.gather_tree(ids, parents, [2], 9))
    ...           [:, 0].tolist())
    [[3, 2], [4, 5]]
    """
    with name_scope(name, "GatherTree", [step_ids, parent_ids, max_sequence_lengths]):
        step_ids = convert_to_tensor(step_ids, name="step_ids")
        parent_ids = math_ops.cast(convert_to_tensor(parent_ids, name="parent_ids"),
                                   step_ids.dtype)
        lengths = math_ops.cast(convert_to_tensor(max_sequence_lengths), dtypes.int32)
        end_token = math_ops.cast(convert_to_tensor(end_token), step_ids.dtype)
        shape = array_ops.shape(step_ids)
        max_time, batch, beam = shape[0], shape[1], shape[2]
        beams = array_ops.tile(array_ops.expand_dims(math_ops.cast(
            array_ops.range(beam), step_ids.dtype), 0), array_ops.stack([batch, 1]))
        out_ta = TensorArray(step_ids.dtype, size=max_time,
                             element_shape=step_ids.shape[1:])

        def body(t, parent, ta):
            alive = array_ops.expand_dims(math_ops.less(t, lengths), 1)  # [batch, 1]
            safe = math_ops.minimum(math_ops.maximum(parent, 0), math_ops.cast(
                beam - 1, parent.dtype))
            ids = batch_gather(array_ops.gather(step_ids, t), safe)
            ids = array_ops.where(math_ops.logical_and(
                array_ops.tile(alive, array_ops.stack([1, beam])), math_ops.equal(safe, parent)),
                ids, array_ops.fill(array_ops.shape(ids), end_token))
            next_parent = batch_gather(array_ops.gather(parent_ids, t), safe)
            next_parent = array_ops.where(array_ops.tile(alive, array_ops.stack([1, beam])),
                                          next_parent, parent)
            return t - 1, next_parent, ta.write(t, ids)

        _, _, out_ta = while_loop(lambda t, *_: t >= 0, body, (max_time - 1, beams, out_ta))
        beams_out = out_ta.stack()
        # after a path's first end_token, only end_token
        is_end = math_ops.cast(math_ops.equal(beams_out, end_token), dtypes.int32)
        seen = math_reduce.cumsum(is_end, 0, exclusive=True) > 0
        result = array_ops.where(seen, array_ops.fill(shape, end_token), beams_out)
        result.set_shape(step_ids.shape)
        return result


def _length_penalty(lengths, weight):
    static = constant_value(convert_to_tensor(weight))
    if static is not None and float(static) == 0.0:
        return 1.0
    weight = math_ops.cast(weight, dtypes.float32)
    return ((5.0 + math_ops.cast(lengths, dtypes.float32)) ** weight) / (6.0 ** weight)


def _attention_probs(cell_state, coverage_penalty_weight):
    static = constant_value(convert_to_tensor(coverage_penalty_weight))
    if static is not None and float(static) == 0.0:
        return None
    if not isinstance(cell_state, AttentionWrapperState):
        raise ValueError("BeamSearchDecoder: coverage_penalty_weight is non-zero but the "
                         "cell state is not an AttentionWrapperState.")
    probs = cell_state.alignments
    if isinstance(probs, tuple):
        probs = math_reduce.reduce_mean(array_ops.stack(probs, -1), -1)
    return probs


class BeamSearchDecoder(Decoder):
    """Beam search with a cell, an embedding and an optional output layer (see the
    module's notes). `initial_state` is the cell's state for ``batch * beam_width``
    rows, e.g. ``cell.zero_state(batch * beam_width, dtype).clone(cell_state=
    tile_batch(encoder_state, beam_width))``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.GRUCell(4)
    ...     dec = tf.contrib.seq2seq.BeamSearchDecoder(
    ...         cell, tf.eye(5), [0, 0], 4, cell.zero_state(6, tf.float32), beam_width=3,
    ...         output_layer=tf.layers.Dense(5))
    ...     out, _, _ = tf.contrib.seq2seq.dynamic_decode(dec, maximum_iterations=6)
    ...     print(out.predicted_ids.shape)
    (2, ?, 3)
    """

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state,
                 beam_width: int, output_layer=None, length_penalty_weight=0.0,
                 coverage_penalty_weight=0.0, reorder_tensor_arrays: bool = True) -> None:
        if not callable(cell) or not hasattr(cell, "output_size"):
            raise TypeError(f"BeamSearchDecoder: cell must be an RNNCell, received: {cell!r}")
        if output_layer is not None and not is_layer(output_layer):
            raise TypeError("BeamSearchDecoder: output_layer must be a Layer, received: "
                            f"{output_layer!r}")
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = _embedding_fn(embedding)
        start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                         name="start_tokens")
        if start_tokens.shape.ndims != 1:
            raise ValueError(f"BeamSearchDecoder: start_tokens must be a vector, got shape "
                             f"{start_tokens.shape}.")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError(f"BeamSearchDecoder: end_token must be a scalar, got shape "
                             f"{self._end_token.shape}.")
        self._batch_size = array_ops.size(start_tokens)
        static = start_tokens.shape[0].value
        self._static_batch = static
        self._beam_width = int(beam_width)
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._initial_cell_state = nest.map_structure(self._maybe_split, initial_state)
        self._start_tokens = array_ops.tile(array_ops.expand_dims(start_tokens, 1),
                                            [1, self._beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = array_ops.one_hot(
            array_ops.zeros([self._batch_size], dtypes.int32), depth=self._beam_width,
            on_value=False, off_value=True, dtype=dtypes.bool)

    batch_size = property(lambda self: self._batch_size)
    tracks_own_finished = property(lambda self: True)

    @property
    def output_size(self):
        k = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=k, predicted_ids=k, parent_ids=k)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=dtype, predicted_ids=dtypes.int32,
                                       parent_ids=dtypes.int32)

    # -- [batch * beam, ...] <-> [batch, beam, ...] -------------------------------------
    def _split(self, t):
        shape = array_ops.shape(t)
        out = array_ops.reshape(t, array_ops.concat(
            [array_ops.stack([self._batch_size, self._beam_width]), shape[1:]], 0))
        out.set_shape(TensorShape([self._static_batch, self._beam_width])
                      .concatenate(t.shape[1:]))
        return out

    def _merge(self, t):
        shape = array_ops.shape(t)
        out = array_ops.reshape(t, array_ops.concat(
            [array_ops.reshape(self._batch_size * self._beam_width, [1]), shape[2:]], 0))
        b = None if self._static_batch is None else self._static_batch * self._beam_width
        out.set_shape(TensorShape([b]).concatenate(t.shape[2:]))
        return out

    def _maybe_split(self, t):
        if isinstance(t, TensorArray):
            return t
        t = convert_to_tensor(t)
        if t.shape.ndims is None:
            raise ValueError(f"BeamSearchDecoder: expected a tensor of known rank in the "
                             f"cell state, saw {t.name} of unknown rank.")
        return self._split(t) if t.shape.ndims >= 1 else t

    def _maybe_merge(self, t):
        if isinstance(t, TensorArray):
            return t
        return self._merge(t) if t.shape.ndims >= 2 else t

    def _gather_beams(self, t, beam_ids):
        if isinstance(t, TensorArray) or t.shape.ndims < 2:
            return t
        out = batch_gather(t, beam_ids)
        out.set_shape(t.shape)
        return out

    # -- the decoder interface -------------------------------------------------------------
    def initialize(self, name=None):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = array_ops.one_hot(
            array_ops.zeros([self._batch_size], dtypes.int32), depth=self._beam_width,
            on_value=math_ops.cast(0.0, dtype), off_value=math_ops.cast(-np.inf, dtype),
            dtype=dtype)
        probs = _attention_probs(self._initial_cell_state, self._coverage_penalty_weight)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=array_ops.zeros(array_ops.stack([self._batch_size, self._beam_width]),
                                    dtypes.int64),
            accumulated_attention_probs=() if probs is None else probs)
        return self._finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BeamSearchDecoderStep", (time, inputs, state)):
            inputs = nest.map_structure(self._merge, inputs)
            cell_state = nest.map_structure(self._maybe_merge, state.cell_state)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(self._split, cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split, next_cell_state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = self._search_step(time, cell_outputs, next_cell_state, state)
            finished = next_state.finished
            next_inputs = cond(math_reduce.reduce_all(finished), lambda: self._start_inputs,
                               lambda: self._embedding_fn(output.predicted_ids))
        return output, next_state, next_inputs, finished

    def _search_step(self, time, logits, next_cell_state, beam_state):
        k, end = self._beam_width, self._end_token
        prev_finished = beam_state.finished
        not_finished = math_ops.logical_not(prev_finished)
        vocab = logits.shape[-1].value or array_ops.shape(logits)[-1]
        step_log_probs = nn_ops.log_softmax(logits)
        # a finished beam continues only with end_token, at log-probability 0
        eos_row = array_ops.one_hot(end, vocab, dtype=logits.dtype, on_value=0.0,
                                    off_value=logits.dtype.min)
        step_log_probs = array_ops.where(
            array_ops.tile(array_ops.expand_dims(prev_finished, 2), [1, 1, vocab]),
            array_ops.zeros_like(step_log_probs) + eos_row, step_log_probs)
        total = array_ops.expand_dims(beam_state.log_probs, 2) + step_log_probs
        lengths_to_add = array_ops.one_hot(
            array_ops.fill(array_ops.stack([self._batch_size, k]), end), depth=vocab,
            on_value=np.int64(0), off_value=np.int64(1), dtype=dtypes.int64)
        lengths_to_add *= array_ops.expand_dims(math_ops.cast(not_finished, dtypes.int64), 2)
        new_lengths = lengths_to_add + array_ops.expand_dims(beam_state.lengths, 2)

        accumulated = None
        probs = _attention_probs(next_cell_state, self._coverage_penalty_weight)
        if probs is not None:
            probs *= array_ops.expand_dims(math_ops.cast(not_finished, probs.dtype), 2)
            accumulated = beam_state.accumulated_attention_probs + probs
        scores = total / math_ops.cast(_length_penalty(new_lengths,
                                                       self._length_penalty_weight),
                                       total.dtype)
        if accumulated is not None:
            # masked source positions (never attended: 0) do not count
            covered = array_ops.where(math_ops.equal(accumulated, 0.0),
                                      array_ops.ones_like(accumulated), accumulated)
            coverage = math_reduce.reduce_sum(math_ops.log(math_ops.minimum(covered, 1.0)), 2)
            coverage = array_ops.where(prev_finished, coverage, array_ops.zeros_like(coverage))
            scores += array_ops.expand_dims(coverage * self._coverage_penalty_weight, 2)

        flat_scores = array_ops.reshape(scores, array_ops.stack([self._batch_size, -1]))
        next_scores, word_indices = top_k(flat_scores, k=k)
        next_scores.set_shape([self._static_batch, k])
        word_indices.set_shape([self._static_batch, k])
        next_log_probs = batch_gather(
            array_ops.reshape(total, array_ops.stack([self._batch_size, -1])), word_indices)
        next_word_ids = math_ops.cast(math_ops.floormod(word_indices, vocab), dtypes.int32,
                                      name="next_beam_word_ids")
        next_beam_ids = math_ops.cast(math_ops.floordiv(word_indices, vocab), dtypes.int32,
                                      name="next_beam_parent_ids")
        parent_finished = batch_gather(prev_finished, next_beam_ids)
        next_finished = math_ops.logical_or(parent_finished, math_ops.equal(next_word_ids, end),
                                            name="next_beam_finished")
        next_lengths = batch_gather(beam_state.lengths, next_beam_ids) + math_ops.cast(
            math_ops.logical_not(parent_finished), dtypes.int64)
        next_accumulated = () if accumulated is None else \
            batch_gather(accumulated, next_beam_ids)
        next_cell_state = nest.map_structure(lambda t: self._gather_beams(t, next_beam_ids),
                                             next_cell_state)
        next_state = BeamSearchDecoderState(
            cell_state=next_cell_state, log_probs=next_log_probs, finished=next_finished,
            lengths=next_lengths, accumulated_attention_probs=next_accumulated)
        output = BeamSearchDecoderOutput(scores=next_scores, predicted_ids=next_word_ids,
                                         parent_ids=next_beam_ids)
        return output, next_state

    def finalize(self, outputs, final_state, sequence_lengths):
        """Whole hypotheses from the per-step ids (`gather_tree`), and TensorArrays in
        the cell state (alignment histories) reordered the same way (stacked)."""
        max_lengths = math_ops.cast(math_reduce.reduce_max(final_state.lengths, 1),
                                    dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids,
                                    max_sequence_lengths=max_lengths,
                                    end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._sort_array_beams(t, outputs.parent_ids, final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids=predicted_ids,
                                            beam_search_decoder_output=outputs), final_state

    def _sort_array_beams(self, t, parent_ids, lengths):
        if not isinstance(t, TensorArray):
            return t
        stacked = t.stack()  # [time, batch * beam, ...]
        shape = array_ops.shape(stacked)
        max_time = array_ops.shape(parent_ids)[0]
        k = self._beam_width
        beam_ids = array_ops.tile(array_ops.reshape(array_ops.range(k), [1, 1, k]),
                                  array_ops.stack([max_time, self._batch_size, 1]))
        max_lengths = math_ops.cast(math_reduce.reduce_max(lengths, 1), dtypes.int32)
        sorted_ids = gather_tree(beam_ids, parent_ids, max_lengths, end_token=k + 1)
        in_bound = array_ops.transpose(array_ops.sequence_mask(
            lengths, maxlen=max_time), [2, 0, 1])
        sorted_ids = array_ops.where(in_bound, sorted_ids, beam_ids)
        grouped = array_ops.reshape(stacked, array_ops.stack(
            [max_time, self._batch_size, k, -1]))
        # gather along the beam axis for every (time, batch)
        flat = array_ops.reshape(grouped, array_ops.stack([max_time * self._batch_size, k, -1]))
        idx = array_ops.reshape(sorted_ids, array_ops.stack([max_time * self._batch_size, k]))
        ordered = array_ops.reshape(batch_gather(flat, idx), shape)
        ordered.set_shape(stacked.shape)
        return ordered

