"""`tf.contrib.legacy_seq2seq`'s plain models and losses: `rnn_decoder` (optionally
feeding each output back through `loop_function`), `basic_rnn_seq2seq`,
`tied_rnn_seq2seq`, and the per-step losses `sequence_loss_by_example` /
`sequence_loss` (the embedding and attention models:
`flowgraph.contrib.legacy_seq2seq_attention`).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     cell = tf.nn.rnn_cell.BasicRNNCell(4)
...     steps = [tf.ones([2, 3])] * 3
...     outputs, state = rnn_decoder(steps, cell.zero_state(2, tf.float32), cell)
...     print(len(outputs), outputs[0].shape, [v.op.name for v in tf.trainable_variables()])
3 (2, 4) ['rnn_decoder/basic_rnn_cell/kernel', 'rnn_decoder/basic_rnn_cell/bias']
"""

from __future__ import annotations

import copy

from flowgraph.framework import dtypes
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_shape_ops, math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.nn_loss_ops import sparse_softmax_cross_entropy_with_logits
from flowgraph.ops.rnn import static_rnn

__all__ = ["basic_rnn_seq2seq", "rnn_decoder", "sequence_loss", "sequence_loss_by_example",
           "tied_rnn_seq2seq"]


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """Run `cell` over the list `decoder_inputs` from `initial_state` (scope
    ``rnn_decoder``); with `loop_function(prev_output, i)`, steps after the first take
    its result instead of their input. Returns ``(outputs, final state)``."""
    with vs.variable_scope(scope or "rnn_decoder"):
        state = initial_state
        outputs = []
        prev = None
        for i, step_input in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with vs.variable_scope("loop_function", reuse=True):
                    step_input = loop_function(prev, i)
            if i > 0:
                vs.get_variable_scope().reuse_variables()
            output, state = cell(step_input, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype=dtypes.float32, scope=None):
    """Encode `encoder_inputs` with a copy of `cell`, decode `decoder_inputs` from the
    final encoder state with `cell` (scope ``basic_rnn_seq2seq``)."""
    with vs.variable_scope(scope or "basic_rnn_seq2seq"):
        _, encoder_state = static_rnn(copy.deepcopy(cell), encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, encoder_state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None,
                     dtype=dtypes.float32, scope=None):
    """`basic_rnn_seq2seq` with one set of weights for the encoder and the decoder."""
    with vs.variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, encoder_state = static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        vs.get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, encoder_state, cell, loop_function=loop_function,
                           scope=scope)


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """Per example, the weighted sum over time steps of the cross-entropy of
    ``logits[t]`` against ``targets[t]`` (divided by the summed weights with
    `average_across_timesteps`)."""
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(f"Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with name_scope(name, "sequence_loss_by_example", [*logits, *targets, *weights]):
        per_step = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = sparse_softmax_cross_entropy_with_logits(
                    labels=array_shape_ops.reshape(target, [-1]), logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            per_step.append(crossent * weight)
        total = math_reduce.add_n(per_step)
        if average_across_timesteps:
            total /= math_reduce.add_n(weights) + 1e-12  # all-zero weights: no division by 0
    return total


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """`sequence_loss_by_example` summed over the batch (averaged with
    `average_across_batch`)."""
    with name_scope(name, "sequence_loss", [*logits, *targets, *weights]):
        cost = math_reduce.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            batch_size = array_shape_ops.shape(targets[0])[0]
            return cost / math_ops.cast(batch_size, cost.dtype)
        return cost

