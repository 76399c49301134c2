"""TF1 sequence-model programs, sweep 9 (area ``rnn``), run under TensorFlow 2.15 and
flowgraph with the tf-oracle.

The programs (2016-2020 style, 23 of them): a char-level LM (embedding, 2-layer
`MultiRNNCell`, state fed back between batches, `clip_by_global_norm` + Adam); a
`bidirectional_dynamic_rnn` with a GRU forward and an LSTM backward cell, sequence
lengths (one of 0) and initial states; `DropoutWrapper` (variational and per-step, with
seeds) inside `MultiRNNCell` / `static_rnn` with a `ResidualWrapper`;
`static_bidirectional_rnn` with peepholes, projection and clipping; a `raw_rnn` greedy
decoder feeding back its argmax; CTC loss / greedy / beam-search decoding /
`edit_distance`, and CTC's `preprocess_collapse_repeated`, `ctc_merge_repeated=False`,
batch-major and too-long-label variants; a word LM trained with `sampled_softmax_loss`;
an RNN written with `tf.while_loop` + `TensorArray` and clipped gradients; a time-major
classifier on the last relevant output, saved and restored; an encoder-decoder with a
masked token loss; a siamese encoder reusing its cell (``state_is_tuple=False``);
float64 `dynamic_rnn` with `swap_memory`; a user-written `RNNCell` with nested tuple
inputs and outputs; a `tf.scan` RNN with RMSProp; char-RNN sampling with
`tf.multinomial`; `nce_loss` and candidate samplers; stacked time-major bi-LSTMs;
`static_rnn` with explicit tuple states, `DeviceWrapper` and scope reuse; and the
errors of misused RNN APIs.

Classes of discrepancy found and fixed (one test each below):

* `DropoutWrapper` gave its dropout ops the wrong op seeds: TensorFlow derives one per
  kind ("input", "state", "output") and leaf from the MD5 of the seed and a salt, for
  the per-step dropouts and for the variational masks alike, so seeded dropout masks
  differed from TensorFlow's.
* `tf.nn.ctc_loss(..., ctc_merge_repeated=False)` let a label repeat over consecutive
  frames; TensorFlow then allows only the blank to repeat (loss and gradient differed).

Also built here (tests in tests/ops/test_raw_rnn.py): TensorFlow's fused recurrent op
types, which `tf.contrib.rnn`'s block cells now emit.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf


def _dropout_program(variational: bool):
    with tf.Graph().as_default():
        if variational:
            tf.set_random_seed(5)
            xs = np.random.RandomState(1).randn(2, 4, 3).astype(np.float32)
            cell = tf.nn.rnn_cell.DropoutWrapper(
                tf.nn.rnn_cell.BasicLSTMCell(3, name="l"), input_keep_prob=0.8,
                output_keep_prob=0.7, state_keep_prob=0.9, variational_recurrent=True,
                input_size=3, dtype=tf.float32, seed=11)
        else:
            tf.set_random_seed(7)
            xs = np.random.RandomState(2).randn(2, 3, 3).astype(np.float32)
            cell = tf.nn.rnn_cell.DropoutWrapper(
                tf.nn.rnn_cell.LSTMCell(3, initializer=tf.constant_initializer(0.2)),
                input_keep_prob=0.6, output_keep_prob=0.5, state_keep_prob=0.7, seed=3)
        outs, state = tf.nn.static_rnn(cell, tf.unstack(tf.constant(xs), axis=1),
                                       dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run([outs[0], outs[-1], state.h])


def test_dropout_wrapper_seeds_its_masks_like_tensorflow():
    first, last, h = _dropout_program(variational=True)
    np.testing.assert_allclose(first, [[0.0, 0.1206, 0.2511], [0.0, -0.1099, -0.1751]],
                               atol=1e-4)
    np.testing.assert_allclose(last, [[0.0, 0.6439, 0.618], [0.0, 0.3938, 0.1453]], atol=1e-4)
    np.testing.assert_allclose(h, [[0.0, 0.5008, 0.4807], [0.0, 0.3063, 0.113]], atol=1e-4)
    first, last, h = _dropout_program(variational=False)
    np.testing.assert_allclose(first, [[-0.13, 0.0, -0.13], [0.0, 0.0, 0.0]], atol=1e-4)
    np.testing.assert_allclose(last, [[-0.2253, 0.0, -0.2253], [0.0, 0.0, 0.0]], atol=1e-4)
    np.testing.assert_allclose(h, [[0.0, 0.0, -0.1609], [-0.0446, 0.0, -0.0446]], atol=1e-4)


def test_ctc_loss_without_merging_repeats_matches_tensorflow():
    rng = np.random.RandomState(14)
    logits = tf.constant(rng.randn(5, 2, 4).astype(np.float32))
    labels = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]],
                             tf.constant([1, 1, 2, 0, 0], tf.int32), [2, 3])
    loss = tf.nn.ctc_loss(labels, logits, [5, 4], ctc_merge_repeated=False)
    grad = tf.gradients(tf.reduce_sum(loss), logits)[0]
    with tf.Session() as sess:
        value, slope = sess.run([loss, grad])
    np.testing.assert_allclose(value, [5.2876, 4.6707], atol=1e-4)
    np.testing.assert_allclose(slope[:, 0], [
        [0.5956, -0.2756, 0.1502, -0.4703], [0.1065, -0.2075, 0.1544, -0.0534],
        [0.4193, -0.4081, 0.0105, -0.0216], [0.0988, 0.048, -0.0723, -0.0744],
        [0.6664, 0.0707, -0.2534, -0.4837]], atol=1e-4)
    np.testing.assert_allclose(slope[:, 1], [
        [-0.2713, 0.4205, 0.0811, -0.2303], [-0.4433, 0.3851, 0.1692, -0.1109],
        [-0.2191, 0.2563, 0.3047, -0.3418], [-0.5828, 0.3223, 0.084, 0.1765],
        [0.0, 0.0, 0.0, 0.0]], atol=1e-4)
    # batch-major, with a sequence too short for its labels skipped
    rng = np.random.RandomState(14)
    lg = rng.randn(3, 5, 4).astype(np.float32)
    labels = tf.SparseTensor(
        [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1], [2, 2], [2, 3], [2, 4], [2, 5]],
        tf.constant([1, 1, 2, 0, 2, 1, 2, 1, 2, 1], tf.int32), [3, 6])
    loss = tf.nn.ctc_loss(labels, lg, [5, 3, 2], time_major=False, ctc_merge_repeated=False,
                          ignore_longer_outputs_than_inputs=True)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(loss), [4.9284, 2.6723, 0.0], atol=1e-4)
