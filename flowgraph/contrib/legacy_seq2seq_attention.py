"""`tf.contrib.legacy_seq2seq`'s embedding and attention models (TF1's translation
tutorial): `embedding_rnn_decoder` / `embedding_rnn_seq2seq`, `attention_decoder`,
`embedding_attention_decoder` / `embedding_attention_seq2seq`, and `model_with_buckets`.

Inputs and outputs are Python lists with one tensor per time step. The variables, their
scopes and shapes are TensorFlow 1.x's, so its checkpoints of these models restore here::

    embedding_attention_seq2seq/
      rnn/embedding_wrapper/embedding                    [encoder symbols, embedding]
      rnn/embedding_wrapper/<cell>/...                   the encoder (a copy of `cell`)
      embedding_attention_decoder/embedding              [decoder symbols, embedding]
      embedding_attention_decoder/attention_decoder/
        AttnW_<h> [1, 1, attn, attn], AttnV_<h> [attn]   one pair per head
        kernel, bias                                     [input + heads * attn, input]
        output_projection_wrapper/<cell>/..., kernel, bias
        Attention_<h>/kernel, bias                       [state size, attn]
        AttnOutputProjection/kernel, bias                [output + heads * attn, output]

A `feed_previous` that is a boolean tensor builds both decoders (feeding the previous
output's argmax embedding, then feeding `decoder_inputs`) over one set of variables and
picks one with `tf.cond`.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     enc = [tf.zeros([2], tf.int32)] * 3
...     dec = [tf.zeros([2], tf.int32)] * 2
...     outs, state = tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(
...         enc, dec, tf.nn.rnn_cell.GRUCell(4), num_encoder_symbols=5,
...         num_decoder_symbols=6, embedding_size=3)
...     print(len(outs), outs[0].shape, state.shape)
2 (2, 6) (2, 4)
"""

from __future__ import annotations

import copy
import math

from flowgraph.contrib.legacy_seq2seq_core import (
    rnn_decoder,
    sequence_loss,
    sequence_loss_by_example,
)
from flowgraph.framework import dtypes, nest
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, init_ops, math_ops, math_reduce, nn_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_identity_ops import stop_gradient
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.embedding_ops import embedding_lookup
from flowgraph.ops.nn_extra_ops import xw_plus_b
from flowgraph.ops.rnn import static_rnn
from flowgraph.ops.rnn_cell_impl import RNNCell
from flowgraph.ops.rnn_cell_wrappers import OutputProjectionWrapper, _CellWithVariables

__all__ = ["EmbeddingWrapper", "attention_decoder", "embedding_attention_decoder",
           "embedding_attention_seq2seq", "embedding_rnn_decoder", "embedding_rnn_seq2seq",
           "model_with_buckets"]


class EmbeddingWrapper(_CellWithVariables):
    """Looks each step's symbol ids up in an ``embedding`` [`embedding_classes`,
    `embedding_size`] (in the wrapper's scope, ``embedding_wrapper``) before `cell`
    (`tf.contrib.rnn.EmbeddingWrapper`). Without `initializer` the variable scope's, else
    uniform in ``[-sqrt(3), sqrt(3)]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.EmbeddingWrapper(tf.nn.rnn_cell.GRUCell(4), 10, 3).output_size
    4
    """

    def __init__(self, cell, embedding_classes: int, embedding_size: int, initializer=None,
                 reuse=None) -> None:
        super().__init__(_reuse=reuse)
        if not isinstance(cell, RNNCell):
            raise TypeError(f"EmbeddingWrapper: the wrapped cell must be an RNNCell, got "
                            f"{cell!r}.")
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._cell = cell
        self._embedding_classes = int(embedding_classes)
        self._embedding_size = int(embedding_size)
        self._initializer = initializer
        self._embedding = None

    output_size = property(lambda self: self._cell.output_size)

    def call(self, inputs, state):
        if self._embedding is None:
            init = self._initializer or vs.get_variable_scope().initializer or \
                init_ops.random_uniform_initializer(-math.sqrt(3), math.sqrt(3))
            dtype = nest.flatten(state)[0].dtype
            self._embedding = self.add_variable(
                "embedding", [self._embedding_classes, self._embedding_size],
                dtype=dtype, initializer=init)
        ids = array_ops.reshape(inputs, [-1])
        return self._cell(embedding_lookup(self._embedding, ids), state)


def _linear(args, output_size: int, who: str):
    """``concat(args) kernel + bias`` with ``kernel`` and ``bias`` (zeros) in the current
    variable scope (TF 1.x's ``_Linear``)."""
    depth = 0
    for a in args:
        d = a.shape[-1].value if a.shape.ndims == 2 else None
        if d is None:
            raise ValueError(f"{who}: a linear layer needs 2-D inputs of known depth, got "
                             f"{a.name} of shape {a.shape}.")
        depth += d
    dtype = args[0].dtype
    kernel = vs.get_variable("kernel", [depth, output_size], dtype=dtype)
    bias = vs.get_variable("bias", [output_size], dtype=dtype,
                           initializer=init_ops.constant_initializer(0.0))
    x = args[0] if len(args) == 1 else array_ops.concat(args, 1)
    return nn_ops.bias_add(math_ops.matmul(x, kernel), bias)


def _extract_argmax_and_embed(embedding, output_projection=None, update_embedding=True):
    """A loop function: the embedding of the previous output's argmax (projected first
    with `output_projection` ``(W, b)``); gradients stop at the embedding unless
    `update_embedding`."""
    def loop_function(prev, _):
        if output_projection is not None:
            prev = xw_plus_b(prev, output_projection[0], output_projection[1])
        emb_prev = embedding_lookup(embedding, math_reduce.argmax(prev, 1))
        return emb_prev if update_embedding else stop_gradient(emb_prev)
    return loop_function


def _check_projection(output_projection, num_symbols: int, dtype) -> None:
    if output_projection is None:
        return
    weights = convert_to_tensor(output_projection[0], dtype=dtype)
    weights.shape.assert_is_compatible_with([None, num_symbols])
    biases = convert_to_tensor(output_projection[1], dtype=dtype)
    biases.shape.assert_is_compatible_with([num_symbols])


def embedding_rnn_decoder(decoder_inputs, initial_state, cell, num_symbols, embedding_size,
                          output_projection=None, feed_previous=False,
                          update_embedding_for_previous=True, scope=None):
    """`rnn_decoder` over the embeddings (``embedding`` [`num_symbols`, `embedding_size`],
    scope ``embedding_rnn_decoder``) of the symbol ids `decoder_inputs`; with
    `feed_previous`, steps after the first embed the previous output's argmax."""
    with vs.variable_scope(scope or "embedding_rnn_decoder") as sc:
        _check_projection(output_projection, num_symbols, sc.dtype)
        embedding = vs.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [embedding_lookup(embedding, i) for i in decoder_inputs]
        return rnn_decoder(emb_inp, initial_state, cell, loop_function=loop_function)


def _both_decoders(feed_previous, decoder, n_outputs: int, structure):
    """Both decoders over the same variables (feeding back first, which creates them),
    picked by the boolean tensor `feed_previous`: ``(outputs, state)``."""
    def branch(feed: bool):
        with vs.variable_scope(vs.get_variable_scope(), reuse=None if feed else True):
            outputs, state = decoder(feed)
            return list(outputs) + list(nest.flatten(state))

    flat = cond(feed_previous, lambda: branch(True), lambda: branch(False))
    state = flat[n_outputs:]
    state = nest.pack_sequence_as(structure, state) if nest.is_nested(structure) \
        else state[0]
    return flat[:n_outputs], state


def embedding_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                          num_decoder_symbols, embedding_size, output_projection=None,
                          feed_previous=False, dtype=None, scope=None):
    """Encode the symbol ids `encoder_inputs` with an embedding-wrapped copy of `cell`;
    decode with `embedding_rnn_decoder` (outputs projected to `num_decoder_symbols`
    unless `output_projection` is given). Scope ``embedding_rnn_seq2seq``."""
    with vs.variable_scope(scope or "embedding_rnn_seq2seq") as sc:
        if dtype is not None:
            sc.set_dtype(dtype)
        else:
            dtype = sc.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), num_encoder_symbols,
                                        embedding_size)
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)

        def decoder(feed: bool, update: bool = True):
            return embedding_rnn_decoder(
                decoder_inputs, encoder_state, cell, num_decoder_symbols, embedding_size,
                output_projection=output_projection, feed_previous=feed,
                update_embedding_for_previous=update)

        if isinstance(feed_previous, bool):
            return decoder(feed_previous)
        return _both_decoders(feed_previous, lambda feed: decoder(feed, update=False),
                              len(decoder_inputs), encoder_state)


def attention_decoder(decoder_inputs, initial_state, attention_states, cell,
                      output_size=None, num_heads=1, loop_function=None, dtype=None,
                      scope=None, initial_state_attention=False):
    """An RNN decoder attending over `attention_states` [batch, length, size] with
    `num_heads` heads (Bahdanau's additive scores): each step's input is mixed with the
    last attention reads, the cell runs, its state queries the heads, and the cell output
    with the reads is projected to `output_size`. Returns ``(outputs, final state)``."""
    if not decoder_inputs:
        raise ValueError("Must provide at least 1 input to attention decoder.")
    if num_heads < 1:
        raise ValueError("With less than 1 heads, use a non-attention decoder.")
    attention_states = convert_to_tensor(attention_states)
    if attention_states.shape.ndims != 3 or attention_states.shape[2].value is None:
        raise ValueError(f"Shape[2] of attention_states must be known: "
                         f"{attention_states.shape}")
    if output_size is None:
        output_size = cell.output_size
    with vs.variable_scope(scope or "attention_decoder", dtype=dtype) as sc:
        dtype = sc.dtype
        batch_size = array_ops.shape(decoder_inputs[0])[0]
        attn_length = attention_states.shape[1].value
        if attn_length is None:
            attn_length = array_ops.shape(attention_states)[1]
        attn_size = attention_states.shape[2].value
        hidden = array_ops.reshape(attention_states, [-1, attn_length, 1, attn_size])
        features, scorers = [], []
        for h in range(num_heads):
            k = vs.get_variable(f"AttnW_{h}", [1, 1, attn_size, attn_size], dtype=dtype)
            features.append(nn_ops.conv2d(hidden, k, [1, 1, 1, 1], "SAME"))
            scorers.append(vs.get_variable(f"AttnV_{h}", [attn_size], dtype=dtype))

        def attention(query):
            query = nest.flatten(query)
            for q in query:
                if q.shape.ndims not in (None, 2):
                    raise ValueError(f"attention_decoder: each part of the query (the "
                                     f"cell state) must be 2-D, got {q.shape}.")
            query = query[0] if len(query) == 1 else array_ops.concat(query, 1)
            reads = []
            for h in range(num_heads):
                with vs.variable_scope(f"Attention_{h}"):
                    y = _linear([query], attn_size, "attention_decoder")
                    y = math_ops.cast(array_ops.reshape(y, [-1, 1, 1, attn_size]), dtype)
                    scores = math_reduce.reduce_sum(
                        scorers[h] * math_ops.tanh(features[h] + y), [2, 3])
                    weights = math_ops.cast(
                        nn_ops.softmax(math_ops.cast(scores, dtypes.float32)), dtype)
                    read = math_reduce.reduce_sum(
                        array_ops.reshape(weights, [-1, attn_length, 1, 1]) * hidden, [1, 2])
                    reads.append(array_ops.reshape(read, [-1, attn_size]))
            return reads

        state = initial_state
        zeros_shape = array_ops.stack([batch_size, attn_size])
        attns = [array_ops.zeros(zeros_shape, dtype=dtype) for _ in range(num_heads)]
        for a in attns:
            a.set_shape([None, attn_size])
        if initial_state_attention:
            attns = attention(initial_state)
        outputs, prev = [], None
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                vs.get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with vs.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            input_size = inp.shape.with_rank(2)[1].value
            if input_size is None:
                raise ValueError(f"Could not infer input size from input: {inp.name}")
            x = _linear([math_ops.cast(t, dtype) for t in [inp, *attns]], input_size,
                        "attention_decoder")
            cell_output, state = cell(x, state)
            if i == 0 and initial_state_attention:
                with vs.variable_scope(vs.get_variable_scope(), reuse=True):
                    attns = attention(state)
            else:
                attns = attention(state)
            with vs.variable_scope("AttnOutputProjection"):
                output = _linear([math_ops.cast(cell_output, dtype), *attns], output_size,
                                 "attention_decoder")
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(decoder_inputs, initial_state, attention_states, cell,
                                num_symbols, embedding_size, num_heads=1, output_size=None,
                                output_projection=None, feed_previous=False,
                                update_embedding_for_previous=True, dtype=None, scope=None,
                                initial_state_attention=False):
    """`attention_decoder` over the embeddings (``embedding`` [`num_symbols`,
    `embedding_size`], scope ``embedding_attention_decoder``) of the symbol ids
    `decoder_inputs`; with `feed_previous`, steps after the first embed the previous
    output's argmax."""
    if output_size is None:
        output_size = cell.output_size
    with vs.variable_scope(scope or "embedding_attention_decoder", dtype=dtype) as sc:
        _check_projection(output_projection, num_symbols, sc.dtype)
        embedding = vs.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [embedding_lookup(embedding, i) for i in decoder_inputs]
        return attention_decoder(emb_inp, initial_state, attention_states, cell,
                                 output_size=output_size, num_heads=num_heads,
                                 loop_function=loop_function,
                                 initial_state_attention=initial_state_attention)


def embedding_attention_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                                num_decoder_symbols, embedding_size, num_heads=1,
                                output_projection=None, feed_previous=False, dtype=None,
                                scope=None, initial_state_attention=False):
    """Encode the symbol ids `encoder_inputs` with an embedding-wrapped copy of `cell`,
    then decode with `embedding_attention_decoder` attending over the encoder outputs
    (decoder outputs projected to `num_decoder_symbols` unless `output_projection` is
    given). Scope ``embedding_attention_seq2seq``."""
    with vs.variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) as sc:
        dtype = sc.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), num_encoder_symbols,
                                        embedding_size)
        encoder_outputs, encoder_state = static_rnn(encoder_cell, encoder_inputs,
                                                    dtype=dtype)
        top_states = [array_ops.reshape(e, [-1, 1, cell.output_size])
                      for e in encoder_outputs]
        attention_states = array_ops.concat(top_states, 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols

        def decoder(feed: bool, update: bool = True):
            return embedding_attention_decoder(
                decoder_inputs, encoder_state, attention_states, cell,
                num_decoder_symbols, embedding_size, num_heads=num_heads,
                output_size=output_size, output_projection=output_projection,
                feed_previous=feed, update_embedding_for_previous=update,
                initial_state_attention=initial_state_attention)

        if isinstance(feed_previous, bool):
            return decoder(feed_previous)
        return _both_decoders(feed_previous, lambda feed: decoder(feed, update=False),
                              len(decoder_inputs), encoder_state)


def model_with_buckets(encoder_inputs, decoder_inputs, targets, weights, buckets, seq2seq,
                       softmax_loss_function=None, per_example_loss=False, name=None):
    """One `seq2seq(encoder_inputs, decoder_inputs)` model per bucket ``(encoder length,
    decoder length)``, all sharing variables, each with its `sequence_loss` (per example
    with `per_example_loss`). Returns ``(outputs per bucket, losses per bucket)``."""
    for what, items, k in (("encoder_inputs", encoder_inputs, 0), ("targets", targets, 1),
                           ("weights", weights, 1)):
        if len(items) < buckets[-1][k]:
            raise ValueError(f"Length of {what} ({len(items)}) must be at least that of "
                             f"last bucket ({buckets[-1][k]}).")
    all_inputs = [*encoder_inputs, *decoder_inputs, *targets, *weights]
    outputs, losses = [], []
    loss = sequence_loss_by_example if per_example_loss else sequence_loss
    with name_scope(name, "model_with_buckets", all_inputs):
        for j, (enc_len, dec_len) in enumerate(buckets):
            with vs.variable_scope(vs.get_variable_scope(), reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:enc_len],
                                            decoder_inputs[:dec_len])
                outputs.append(bucket_outputs)
                losses.append(loss(bucket_outputs, targets[:dec_len], weights[:dec_len],
                                   softmax_loss_function=softmax_loss_function))
    return outputs, losses
