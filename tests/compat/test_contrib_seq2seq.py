"""`tf.contrib.seq2seq`: decoders, helpers, attention and beam search.

Expected numbers were recorded from TensorFlow Addons 0.23 (`tfa.seq2seq`, the contrib
code ported to TF 2.15) on the same inputs, with weight-free cells (constant matrices) so
that no weights need to be matched; attention weights are set by `tf.assign`. The
variable names are TF 1.x contrib's."""

import doctest
import importlib

import numpy as np
import pytest

import flowgraph as tf

MODULES = ["flowgraph.contrib.seq2seq"] + [
    f"flowgraph.contrib.seq2seq.{m}"
    for m in ("loss", "helper", "decoder", "attention_wrapper", "monotonic_attention",
              "beam_search_decoder")]

S2S = tf.contrib.seq2seq


def _toy_cell(w_in, w_h, w_out=None):
    """A weight-free tanh RNN: ``h' = tanh(x w_in + h w_h)``, output ``h' w_out``."""
    units = w_h.shape[0]

    class Toy(tf.nn.rnn_cell.RNNCell):
        state_size = property(lambda self: units)
        output_size = property(lambda self: units if w_out is None else w_out.shape[1])

        def call(self, x, s):
            h = tf.tanh(tf.matmul(x, w_in) + tf.matmul(s, w_h))
            return (h if w_out is None else tf.matmul(h, w_out)), h

    return Toy()


# -- sequence_loss ---------------------------------------------------------------------------
def _xent(logits, targets):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, targets[..., None], -1)[..., 0]


@pytest.mark.parametrize("kwargs,reduce", [
    ({}, lambda c, w: (c * w).sum() / w.sum()),
    ({"average_across_timesteps": False}, lambda c, w: (c * w).sum(0) / w.sum(0)),
    ({"average_across_batch": False}, lambda c, w: (c * w).sum(1) / w.sum(1)),
    ({"average_across_timesteps": False, "average_across_batch": False},
     lambda c, w: c * w),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True, "sum_over_batch": True},
     lambda c, w: (c * w).sum() / (w != 0).sum()),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True}, lambda c, w: (c * w).sum(1) / (w != 0).sum(1)),
])
def test_sequence_loss_reductions(kwargs, reduce):
    rng = np.random.RandomState(1)
    logits = rng.randn(2, 5, 6).astype(np.float32)
    targets = rng.randint(0, 6, (2, 5)).astype(np.int32)
    weights = (rng.rand(2, 5) > 0.3).astype(np.float32) * 1.5
    with tf.Graph().as_default():
        loss = S2S.sequence_loss(logits, targets, weights, **kwargs)
        value = tf.Session().run(loss)
    np.testing.assert_allclose(value, reduce(_xent(logits, targets), weights), rtol=1e-5)


def test_sequence_loss_errors_and_custom_loss():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="logits must be a"):
            S2S.sequence_loss(tf.zeros([2, 3]), tf.zeros([2, 3], tf.int32), tf.ones([2, 3]))
        with pytest.raises(ValueError, match="cannot be set to True at same time"):
            S2S.sequence_loss(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32),
                              tf.ones([2, 3]), sum_over_timesteps=True)
        seen = {}

        def loss_fn(labels, logits):
            seen["shapes"] = (labels.shape.as_list(), logits.shape.as_list())
            return tf.ones_like(tf.cast(labels, tf.float32))

        loss = S2S.sequence_loss(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32),
                                 tf.ones([2, 3]), softmax_loss_function=loss_fn)
        assert seen["shapes"] == ([6], [6, 4])
        assert float(tf.Session().run(loss)) == pytest.approx(1.0)


# -- BasicDecoder, helpers, dynamic_decode -----------------------------------------------------
def _basic_setup():
    rng = np.random.RandomState(2)
    units, vocab, batch = 4, 6, 3
    w_h = rng.randn(units, units).astype(np.float32) * 0.5
    w_out = rng.randn(units, vocab).astype(np.float32)
    w_in = rng.randn(3, units).astype(np.float32)
    emb = rng.randn(vocab, 3).astype(np.float32)
    init = rng.randn(batch, units).astype(np.float32)
    x = rng.randn(batch, 5, 3).astype(np.float32)
    return _toy_cell(w_in, w_h, w_out), emb, init, x


@pytest.mark.parametrize("impute", [False, True])
def test_training_helper_decode_matches_tfa(impute):
    cell, _, init, x = _basic_setup()
    with tf.Graph().as_default():
        helper = S2S.TrainingHelper(tf.constant(x), tf.constant([5, 2, 0]))
        dec = S2S.BasicDecoder(cell, helper, tf.constant(init))
        out, state, lengths = tf.Session().run(S2S.dynamic_decode(dec, impute_finished=impute))
    assert out.rnn_output.shape == (3, 5, 6)
    assert lengths.tolist() == [5, 2, 0]
    np.testing.assert_allclose(out.rnn_output[0, 0], [0.5134, 1.301, -0.5149, -0.8606,
                                                      0.0572, -0.0912], atol=1e-4)
    if impute:  # finished rows: zero outputs, state copied through
        assert out.sample_id.tolist() == [[1, 3, 1, 2, 3], [4, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
        assert not out.rnn_output[2].any()
        np.testing.assert_allclose(state[1], [0.8468, 0.8922, -0.9998, 0.9968], atol=1e-4)
        np.testing.assert_allclose(state[2], init[2], atol=1e-6)
    else:
        assert out.sample_id.tolist() == [[1, 3, 1, 2, 3], [4, 0, 3, 0, 3], [1, 4, 4, 3, 1]]
        np.testing.assert_allclose(state[1], [-0.1336, -0.7032, 0.1995, -0.9873], atol=1e-4)
    np.testing.assert_allclose(state[0], [0.9562, -0.9709, 1.0, -0.998], atol=1e-4)


def test_greedy_helper_decode_matches_tfa():
    cell, emb, init, _ = _basic_setup()
    with tf.Graph().as_default():
        helper = S2S.GreedyEmbeddingHelper(tf.constant(emb), tf.fill([3], 0), 2)
        dec = S2S.BasicDecoder(cell, helper, tf.constant(init))
        out, state, lengths = S2S.dynamic_decode(dec, maximum_iterations=6,
                                                 output_time_major=True)
        assert out.rnn_output.shape.as_list() == [None, 3, 6]
        out, state, lengths = tf.Session().run([out, state, lengths])
    assert out.sample_id.T.tolist() == [[3] * 6, [3] * 6, [1, 4, 3, 0, 3, 3]]
    assert lengths.tolist() == [6, 6, 6]
    np.testing.assert_allclose(state[0], [-0.0026, -0.395, 0.8702, 0.1827], atol=1e-4)


def test_greedy_stops_at_end_token_and_sample_helpers():
    with tf.Graph().as_default():
        # the output layer always picks token 2, the end token: one step per entry
        cell = tf.nn.rnn_cell.BasicRNNCell(3)
        proj = tf.layers.Dense(4, kernel_initializer=tf.zeros_initializer(),
                               bias_initializer=tf.constant_initializer([0, 0, 5, 0]))
        dec = S2S.BasicDecoder(cell, S2S.GreedyEmbeddingHelper(tf.eye(4), [0, 1], 2),
                               cell.zero_state(2, tf.float32), output_layer=proj)
        out, _, lengths = S2S.dynamic_decode(dec, maximum_iterations=5)
        sample = S2S.SampleEmbeddingHelper(tf.eye(4), [0, 1], 2, seed=1)
        ids = sample.sample(0, tf.constant([[0.0, 0.0, 50.0, 0.0]] * 2), None)
        sched = S2S.ScheduledEmbeddingTrainingHelper(tf.ones([2, 3, 4]), [3, 3], tf.eye(4), 1.0,
                                                     seed=2)
        sched_ids = sched.sample(0, tf.constant([[0.0, 50.0, 0.0, 0.0]] * 2), None)
        _, nxt, _ = sched.next_inputs(0, None, None, sched_ids)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, lengths, ids, sched_ids, nxt = sess.run([out, lengths, ids, sched_ids, nxt])
    assert lengths.tolist() == [1, 1]
    assert out.sample_id.tolist() == [[2], [2]]
    assert ids.tolist() == [2, 2]
    assert sched_ids.tolist() == [1, 1]
    np.testing.assert_allclose(nxt, [[0, 1, 0, 0]] * 2)


def test_decoder_argument_errors():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3)
        helper = S2S.TrainingHelper(tf.zeros([2, 3, 4]), [3, 3])
        with pytest.raises(TypeError, match="helper must be a Helper"):
            S2S.BasicDecoder(cell, "helper", cell.zero_state(2, tf.float32))
        with pytest.raises(TypeError, match="output_layer must be a Layer"):
            S2S.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32), output_layer=3)
        with pytest.raises(ValueError, match="start_tokens must be a vector"):
            S2S.GreedyEmbeddingHelper(tf.eye(3), [[1]], 2)
        with pytest.raises(ValueError, match="end_token must be a scalar"):
            S2S.GreedyEmbeddingHelper(tf.eye(3), [1], [2])
        with pytest.raises(ValueError, match="sequence_length to be a vector"):
            S2S.TrainingHelper(tf.zeros([2, 3, 4]), 3)
        with pytest.raises(TypeError, match="expected decoder to be a Decoder"):
            S2S.dynamic_decode(cell)


# -- attention --------------------------------------------------------------------------------
# TensorFlow Addons 0.23, three AttentionWrapper steps with the weights below (the final
# attention output, then the final alignments).
_ATTENTION_TFA = {
    "bahdanau": ([[2.14166, 1.55836, 2.17566, 3.80681, -4.11757],
                  [-1.28738, 0.0951, 1.49207, -0.36947, -4.12394]],
                 [[0.24562, 0.10607, 0.50629, 0.07868, 0.06335],
                  [0.29889, 0.21969, 0.48142, 0.0, 0.0]]),
    "bahdanau_norm": ([[1.77564, 1.4167, 1.9226, 3.61473, -3.8374],
                       [-1.24998, -0.04688, 1.28985, -0.69626, -3.694]],
                      [[0.227, 0.17743, 0.28454, 0.16103, 0.14999],
                       [0.29287, 0.32851, 0.37862, 0.0, 0.0]]),
    "luong": ([[0.77953, 1.02352, 1.18268, 3.25554, -4.07395],
               [-1.21482, 0.86832, 0.71101, -1.34725, -1.49913]],
              [[0.65668, 0.04967, 0.00092, 0.12315, 0.16959],
               [0.99873, 0.00032, 0.00094, 0.0, 0.0]]),
    "luong_scale": ([[0.92224, 1.08637, 1.29054, 3.27532, -3.89542],
                     [-1.3005, 0.6511, 0.85977, -1.30276, -1.56926]],
                    [[0.52913, 0.08853, 0.00534, 0.16718, 0.20982],
                     [0.97575, 0.00757, 0.01668, 0.0, 0.0]]),
}


@pytest.mark.parametrize("kind", sorted(_ATTENTION_TFA))
def test_attention_wrapper_matches_tfa(kind):
    batch, units = 2, 4
    rng = np.random.RandomState(7)
    mem = rng.randn(batch, 5, 3).astype(np.float32)
    w_in = rng.randn(3 + 5, units).astype(np.float32) * 0.5
    w_h = rng.randn(units, units).astype(np.float32) * 0.5
    values = {"memory_layer/kernel": rng.randn(3, units), "query_layer/kernel":
              rng.randn(units, units), "attention_v": rng.randn(units),
              "attention_layer/kernel": rng.randn(units + 3, 5), "attention_g": 0.7,
              "attention_b": np.full(units, 0.1)}
    x = rng.randn(3, batch, 3).astype(np.float32)
    with tf.Graph().as_default():
        if kind.startswith("bahdanau"):
            mech = S2S.BahdanauAttention(units, tf.constant(mem), memory_sequence_length=[5, 3],
                                         normalize=kind.endswith("norm"))
        else:
            mech = S2S.LuongAttention(units, tf.constant(mem), memory_sequence_length=[5, 3],
                                      scale=kind.endswith("scale"))
        cell = S2S.AttentionWrapper(_toy_cell(w_in, w_h), mech, attention_layer_size=5,
                                    alignment_history=True)
        state = cell.zero_state(batch, tf.float32)
        with tf.variable_scope("decoder"):
            for t in range(3):
                out, state = cell(x[t], state)
        names = sorted(v.name for v in tf.global_variables())
        expected = {"bahdanau": ["attention_v", "query_layer/kernel"],
                    "bahdanau_norm": ["attention_b", "attention_g", "attention_v",
                                      "query_layer/kernel"],
                    "luong": [], "luong_scale": ["attention_g"]}[kind]
        scope = "decoder/attention_wrapper/" + kind.split("_")[0] + "_attention/"
        assert names == sorted(["memory_layer/kernel:0",
                                "decoder/attention_wrapper/attention_layer/kernel:0"]
                               + [scope + n + ":0" for n in expected])
        assert sorted(v.name for v in cell.trainable_variables) == names
        assigns = [tf.assign(v, np.asarray(values[next(k for k in values if k in v.name)],
                                           np.float32)) for v in tf.global_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(assigns)
            out, align, hist, time = sess.run([out, state.alignments,
                                               state.alignment_history.stack(), state.time])
    tfa_out, tfa_align = _ATTENTION_TFA[kind]
    np.testing.assert_allclose(out, tfa_out, atol=2e-4)
    np.testing.assert_allclose(align, tfa_align, atol=2e-5)
    assert hist.shape == (3, 2, 5) and time == 3
    np.testing.assert_allclose(hist[-1], align)


def test_attention_wrapper_options_and_errors():
    with tf.Graph().as_default():
        mem = tf.ones([2, 5, 4])
        luong = S2S.LuongAttention(4, mem)
        bahdanau = S2S.BahdanauAttention(3, mem)
        plain = S2S.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), luong, output_attention=False)
        assert plain.output_size == 4 and plain.state_size.attention == 4
        multi = S2S.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), [luong, bahdanau],
                                     attention_layer_size=[2, 3])
        out, state = multi(tf.ones([2, 1]), multi.zero_state(2, tf.float32))
        assert out.shape.as_list() == [2, 5]
        assert [a.shape.as_list() for a in state.alignments] == [[2, 5], [2, 5]]
        assert state.alignment_history == ((), ())
        with pytest.raises(ValueError, match="exactly one integer per attention_mechanism"):
            S2S.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), [luong, bahdanau],
                                 attention_layer_size=3)
        with pytest.raises(ValueError, match="Only one of attention_layer_size"):
            S2S.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), luong, attention_layer_size=3,
                                 attention_layer=tf.layers.Dense(3))
        with pytest.raises(TypeError, match="AttentionMechanism"):
            S2S.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), "memory")
        with pytest.raises(ValueError, match="tile_batch"):
            plain.zero_state(6, tf.float32)  # batch 6 vs memory batch 2: the beam hint
        with pytest.raises(ValueError, match="Perhaps you need to set num_units"):
            bad = S2S.LuongAttention(3, mem)
            bad(tf.ones([2, 4]), None)
        hard = tf.Session().run(S2S.hardmax([[0.1, 0.7, 0.2], [3.0, 1.0, 2.0]]))
    np.testing.assert_array_equal(hard, [[0, 1, 0], [1, 0, 0]])


# -- beam search ------------------------------------------------------------------------------
def test_gather_tree_and_tile_batch_match_tfa():
    ids = [[[3, 4, 4], [8, 2, 1]], [[6, 3, 8], [7, 0, 5]], [[2, 8, 8], [5, 0, 5]],
           [[8, 6, 6], [0, 4, 7]]]
    parents = [[[0, 2, 1], [2, 2, 0]], [[2, 1, 2], [0, 2, 0]], [[1, 0, 2], [2, 2, 1]],
               [[2, 2, 1], [0, 1, 1]]]
    with tf.Graph().as_default():
        tree = S2S.gather_tree(tf.constant(ids), tf.constant(parents), [4, 3], 8)
        tiled = S2S.tile_batch((tf.constant([[1, 2], [3, 4]]), tf.zeros([2])), 3)
        tree, tiled = tf.Session().run([tree, tiled])
    assert tree.transpose(1, 0, 2).tolist() == [  # TensorFlow Addons 0.23
        [[4, 4, 4], [8, 8, 6], [8, 8, 8], [8, 8, 8]],
        [[8, 8, 1], [8, 8, 0], [8, 8, 5], [8, 8, 8]]]
    assert tiled[0].tolist() == [[1, 2]] * 3 + [[3, 4]] * 3
    assert tiled[1].shape == (6,)


def _beam_setup():
    rng = np.random.RandomState(1)
    units, vocab, batch, beam = 4, 6, 2, 3
    rng.randn(100)
    w_h = rng.randn(units, units).astype(np.float32) * 0.5
    w_out = rng.randn(units, vocab).astype(np.float32)
    w_in = rng.randn(3, units).astype(np.float32)
    emb = rng.randn(vocab, 3).astype(np.float32)
    init = rng.randn(batch * beam, units).astype(np.float32)
    return _toy_cell(w_in, w_h, w_out), emb, init


_BEAM_TFA = {  # TensorFlow Addons 0.23: predicted ids, last step's scores, final lengths
    0.0: ([[[4, 4, 4], [1, 3, 3], [1, 4, 0], [1, 1, 2], [1, 1, 0], [1, 1, 2], [1, 1, 0]],
           [[1, 4, 5], [1, 1, 2], [1, 1, 2], [1, 1, 2], [1, 1, 2], [1, 1, 2], [1, 1, 2]]],
          [[-1.6457, -3.8687, -6.5917], [-0.7177, -2.7691, -4.4546]],
          [[2, 4, 7], [1, 2, 7]]),
    0.8: ([[[4, 4, 4], [1, 3, 3], [1, 4, 4], [1, 3, 3], [1, 4, 4], [1, 3, 3], [1, 4, 0]],
           [[1, 5, 5], [1, 2, 2], [1, 2, 2], [1, 2, 5], [1, 2, 2], [1, 2, 2], [1, 2, 2]]],
          [[-1.4548, -3.7441, -3.8619], [-0.7177, -2.5585, -3.2644]],
          [[2, 7, 7], [1, 7, 7]]),
}


@pytest.mark.parametrize("penalty", sorted(_BEAM_TFA))
def test_beam_search_matches_tfa(penalty):
    cell, emb, init = _beam_setup()
    with tf.Graph().as_default():
        dec = S2S.BeamSearchDecoder(cell, tf.constant(emb), tf.fill([2], 0), 1,
                                    tf.constant(init), 3, length_penalty_weight=penalty)
        out, state, lengths = S2S.dynamic_decode(dec, maximum_iterations=7)
        assert out.predicted_ids.shape.as_list() == [2, None, 3]
        out, state, lengths = tf.Session().run([out, state, lengths])
    ids, scores, final_lengths = _BEAM_TFA[penalty]
    assert out.predicted_ids.tolist() == ids
    np.testing.assert_allclose(out.beam_search_decoder_output.scores[:, -1], scores,
                               atol=2e-4)
    assert state.lengths.tolist() == final_lengths
    assert lengths.tolist() == final_lengths
    assert isinstance(out, S2S.FinalBeamSearchDecoderOutput)


def test_beam_width_one_is_greedy():
    cell, emb, init = _beam_setup()
    with tf.Graph().as_default():
        beam = S2S.BeamSearchDecoder(cell, tf.constant(emb), tf.fill([2], 0), 1,
                                     tf.constant(init[:2]), 1)
        b_out, _, _ = S2S.dynamic_decode(beam, maximum_iterations=7)
        greedy = S2S.BasicDecoder(cell, S2S.GreedyEmbeddingHelper(tf.constant(emb),
                                                                  tf.fill([2], 0), 1),
                                  tf.constant(init[:2]))
        g_out, _, g_len = S2S.dynamic_decode(greedy, maximum_iterations=7)
        b_ids, g_ids, g_len = tf.Session().run([b_out.predicted_ids[:, :, 0], g_out.sample_id,
                                                g_len])
    for row, n in enumerate(g_len):
        assert b_ids[row, :n].tolist() == g_ids[row, :n].tolist()


def test_beam_search_errors():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3)
        with pytest.raises(ValueError, match="start_tokens must be a vector"):
            S2S.BeamSearchDecoder(cell, tf.eye(4), 0, 1, cell.zero_state(3, tf.float32), 3)
        with pytest.raises(ValueError, match="end_token must be a scalar"):
            S2S.BeamSearchDecoder(cell, tf.eye(4), [0], [1], cell.zero_state(3, tf.float32), 3)
        with pytest.raises(TypeError, match="must be an RNNCell"):
            S2S.BeamSearchDecoder(None, tf.eye(4), [0], 1, None, 3)


# -- a classic NMT program ---------------------------------------------------------------------
def test_nmt_attention_program_trains_and_decodes():
    """Encoder dynamic_rnn, Bahdanau attention decoder trained with TrainingHelper, then
    greedy and beam-search inference sharing the variables; the model learns to copy."""
    rng = np.random.RandomState(0)
    vocab, units, batch, beam = 12, 16, 4, 3
    src = rng.randint(3, vocab, (batch, 6)).astype(np.int32)
    src_len = np.array([6, 4, 5, 3], np.int32)
    tgt_in = np.concatenate([np.ones((batch, 1), np.int32), src[:, :5]], 1)
    tgt_out = np.concatenate([src[:, :5], np.full((batch, 1), 2, np.int32)], 1)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        emb = tf.get_variable("embedding", [vocab, 8])
        enc_out, enc_state = tf.nn.dynamic_rnn(
            tf.nn.rnn_cell.LSTMCell(units), tf.nn.embedding_lookup(emb, src),
            sequence_length=src_len, dtype=tf.float32, scope="encoder")
        proj = tf.layers.Dense(vocab, use_bias=False, name="output_projection")

        def attention_cell(memory, lengths, batch_size, state, history=False):
            mech = S2S.BahdanauAttention(units, memory, memory_sequence_length=lengths)
            cell = S2S.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(units), mech,
                                        attention_layer_size=units, alignment_history=history)
            return cell, cell.zero_state(batch_size, tf.float32).clone(cell_state=state)

        with tf.variable_scope("decoder") as scope:
            cell, init = attention_cell(enc_out, src_len, batch, enc_state)
            helper = S2S.TrainingHelper(tf.nn.embedding_lookup(emb, tgt_in), [6] * batch)
            out, _, _ = S2S.dynamic_decode(S2S.BasicDecoder(cell, helper, init, proj),
                                           scope=scope)
        loss = S2S.sequence_loss(out.rnn_output, tgt_out, tf.ones([batch, 6]))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        with tf.variable_scope(scope, reuse=True) as scope:
            greedy = S2S.BasicDecoder(cell, S2S.GreedyEmbeddingHelper(emb, tf.fill([batch], 1),
                                                                      2), init, proj)
            g_out, _, g_len = S2S.dynamic_decode(greedy, maximum_iterations=10, scope=scope)
        with tf.variable_scope(scope, reuse=True) as scope:
            b_cell, b_init = attention_cell(
                S2S.tile_batch(enc_out, beam), S2S.tile_batch(src_len, beam), batch * beam,
                S2S.tile_batch(enc_state, beam), history=True)
            b_dec = S2S.BeamSearchDecoder(b_cell, emb, tf.fill([batch], 1), 2, b_init, beam,
                                          output_layer=proj, length_penalty_weight=0.5)
            b_out, b_state, _ = S2S.dynamic_decode(b_dec, maximum_iterations=10, scope=scope)
        names = sorted(v.name for v in tf.trainable_variables())
        assert names == sorted([
            "embedding:0", "encoder/lstm_cell/kernel:0", "encoder/lstm_cell/bias:0",
            "decoder/memory_layer/kernel:0", "decoder/attention_wrapper/lstm_cell/kernel:0",
            "decoder/attention_wrapper/lstm_cell/bias:0",
            "decoder/attention_wrapper/bahdanau_attention/query_layer/kernel:0",
            "decoder/attention_wrapper/bahdanau_attention/attention_v:0",
            "decoder/attention_wrapper/attention_layer/kernel:0",
            "decoder/output_projection/kernel:0"])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train])[0] for _ in range(120)]
            greedy_ids, lengths, beam_ids, history = sess.run(
                [g_out.sample_id, g_len, b_out.predicted_ids,
                 b_state.cell_state.alignment_history])
    assert losses[-1] < 0.1 * losses[0]
    assert greedy_ids[:, :6].tolist() == tgt_out.tolist()
    assert lengths.tolist() == [6] * batch
    assert beam_ids[:, :6, 0].tolist() == tgt_out.tolist()
    # the alignment history is reordered along the beams and stacked: [time, batch*beam, src]
    assert history.shape[1:] == (batch * beam, 6)
    np.testing.assert_allclose(history.sum(-1)[:6], 1.0, rtol=1e-5)


def test_gradient_through_attention_decoder():
    """d(loss)/d(memory) through dynamic_decode, along a random direction, against
    central differences in float64."""
    rng = np.random.RandomState(4)
    mem0 = rng.randn(2, 4, 3)
    direction = rng.randn(*mem0.shape)
    with tf.Graph().as_default():
        mem = tf.placeholder(tf.float64, mem0.shape)
        mech = S2S.LuongAttention(3, mem, memory_sequence_length=[4, 2], scale=True,
                                  dtype=tf.float64)
        cell = S2S.AttentionWrapper(tf.nn.rnn_cell.GRUCell(3, dtype=tf.float64), mech,
                                    attention_layer_size=2)
        helper = S2S.TrainingHelper(tf.constant(rng.randn(2, 3, 2)), [3, 2])
        dec = S2S.BasicDecoder(cell, helper, cell.zero_state(2, tf.float64))
        out, _, _ = S2S.dynamic_decode(dec, impute_finished=True)
        loss = tf.reduce_sum(tf.square(out.rnn_output))
        (grad,) = tf.gradients(loss, [mem])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g = sess.run(grad, {mem: mem0})
            eps = 1e-6
            up = sess.run(loss, {mem: mem0 + eps * direction})
            down = sess.run(loss, {mem: mem0 - eps * direction})
    np.testing.assert_allclose((g * direction).sum(), (up - down) / (2 * eps), rtol=1e-5)


def test_beam_search_with_attention_and_coverage_penalty_matches_tfa():
    rng = np.random.RandomState(11)
    batch, beam, units, vocab = 2, 3, 4, 6
    mem = rng.randn(batch, 4, 3).astype(np.float32)
    w_in = rng.randn(3 + 5, units).astype(np.float32) * 0.5
    w_h = rng.randn(units, units).astype(np.float32) * 0.5
    values = {"memory_layer": rng.randn(3, units), "query_layer": rng.randn(units, units),
              "attention_v": rng.randn(units), "attention_layer": rng.randn(units + 3, 5),
              "dense": rng.randn(5, vocab)}
    emb = rng.randn(vocab, 3).astype(np.float32)
    with tf.Graph().as_default():
        lengths = S2S.tile_batch(tf.constant([4, 2]), beam)
        mech = S2S.BahdanauAttention(units, S2S.tile_batch(tf.constant(mem), beam),
                                     memory_sequence_length=lengths)
        cell = S2S.AttentionWrapper(_toy_cell(w_in, w_h), mech, attention_layer_size=5)
        dec = S2S.BeamSearchDecoder(cell, tf.constant(emb), tf.fill([batch], 0), 1,
                                    cell.zero_state(batch * beam, tf.float32), beam,
                                    output_layer=tf.layers.Dense(vocab, use_bias=False),
                                    length_penalty_weight=0.3, coverage_penalty_weight=0.4)
        out, state, _ = S2S.dynamic_decode(dec, maximum_iterations=6)
        assigns = [tf.assign(v, np.asarray(values[next(k for k in values if k in v.name)],
                                           np.float32)) for v in tf.global_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(assigns)
            out, state = sess.run([out, state])
    # TensorFlow Addons 0.23
    assert out.predicted_ids.tolist() == [
        [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 1], [0, 1, 1]],
        [[3, 0, 5], [0, 3, 3], [1, 3, 2], [1, 2, 1], [1, 2, 1], [1, 2, 1]]]
    np.testing.assert_allclose(out.beam_search_decoder_output.scores[:, -1],
                               [[-1.9455, -2.2593, -2.284], [-1.8431, -2.314, -2.3906]],
                               atol=2e-4)
    assert state.lengths.tolist() == [[6, 6, 4], [3, 6, 4]]
    np.testing.assert_allclose(state.cell_state.alignments[1, 0], [0.5082, 0.4918, 0, 0],
                               atol=2e-4)


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{module}: {result}"


# -- monotonic attention ------------------------------------------------------------------------
def test_monotonic_attention_modes_match_tfa():
    rng = np.random.RandomState(5)
    p = rng.rand(2, 5).astype(np.float32)
    prev = rng.rand(2, 5).astype(np.float32)
    prev /= prev.sum(1, keepdims=True)
    with tf.Graph().as_default():
        rec = S2S.monotonic_attention(p, prev, "recursive")
        par = S2S.monotonic_attention(p, prev, "parallel")
        hard = S2S.monotonic_attention((p > 0.5).astype(np.float32),
                                       np.eye(5, dtype=np.float32)[[1, 3]], "hard")
        cum = S2S.safe_cumprod(tf.constant([[0.5, 0.0, 2.0, 0.3]]), axis=1, exclusive=True)
        rec, par, hard, cum = tf.Session().run([rec, par, hard, cum])
        with pytest.raises(ValueError, match="mode must be"):
            S2S.monotonic_attention(p, prev, "soft")
    expected = [[0.0078, 0.30351, 0.049, 0.236, 0.19717],  # TensorFlow Addons 0.23
                [0.07646, 0.18184, 0.0988, 0.11234, 0.0996]]
    np.testing.assert_allclose(rec, expected, atol=2e-5)
    np.testing.assert_allclose(par, expected, atol=2e-5)
    assert hard.tolist() == [[0, 1, 0, 0, 0], [0, 0, 0, 0, 0]]
    np.testing.assert_allclose(cum, [[1.0, 0.5, 0.0, 0.0]], atol=1e-6)


_MONOTONIC_TFA = {  # TensorFlow Addons 0.23: final alignments after three steps
    ("bahdanau", "parallel"): [[0.6042, 0.2325, 0.0217, 0.0213, 0.0165],
                               [0.038, 0.049, 0.4109, 0.0, 0.0]],
    ("bahdanau_norm", "recursive"): [[0.1879, 0.2342, 0.1016, 0.109, 0.0878],
                                     [0.0366, 0.0647, 0.1981, 0.0, 0.0]],
    ("luong", "parallel"): [[0.4072, 0.2299, 0.0195, 0.0955, 0.0775],
                            [0.0953, 0.0978, 0.0584, 0.0, 0.0]],
    ("luong_scale", "hard"): [[0.0] * 5, [0.0] * 5],
}


@pytest.mark.parametrize("kind,mode", sorted(_MONOTONIC_TFA))
def test_monotonic_mechanisms_match_tfa(kind, mode):
    rng = np.random.RandomState(5)
    rng.rand(2, 5), rng.rand(2, 5)  # the draws of the test above
    batch, units = 2, 4
    mem = rng.randn(batch, 5, 3).astype(np.float32)
    w_in = rng.randn(3 + 5, units).astype(np.float32) * 0.5
    w_h = rng.randn(units, units).astype(np.float32) * 0.5
    values = {"memory_layer/kernel": rng.randn(3, units),
              "query_layer/kernel": rng.randn(units, units), "attention_v": rng.randn(units),
              "attention_layer/kernel": rng.randn(units + 3, 5), "attention_g": 0.7,
              "attention_b": np.full(units, 0.1), "attention_score_bias": -0.3}
    x = rng.randn(3, batch, 3).astype(np.float32)
    with tf.Graph().as_default():
        if kind.startswith("bahdanau"):
            mech = S2S.BahdanauMonotonicAttention(units, tf.constant(mem), [5, 3], mode=mode,
                                                  normalize=kind.endswith("norm"),
                                                  score_bias_init=0.2)
        else:
            mech = S2S.LuongMonotonicAttention(units, tf.constant(mem), [5, 3], mode=mode,
                                               scale=kind.endswith("scale"),
                                               score_bias_init=0.2)
        cell = S2S.AttentionWrapper(_toy_cell(w_in, w_h), mech, attention_layer_size=5)
        state = cell.zero_state(batch, tf.float32)
        for t in range(3):
            _, state = cell(x[t], state)
        scope = "attention_wrapper/" + kind.split("_")[0] + "_monotonic_attention/"
        bias = [v for v in tf.global_variables() if v.name == scope + "attention_score_bias:0"]
        assert len(bias) == 1 and bias[0].shape.ndims == 0
        assigns = [tf.assign(v, np.asarray(values[next(k for k in values if k in v.name)],
                                           np.float32)) for v in tf.global_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(bias[0]) == pytest.approx(0.2)
            sess.run(assigns)
            align = sess.run(state.alignments)
    np.testing.assert_allclose(align, _MONOTONIC_TFA[kind, mode], atol=2e-4)


def test_scheduled_output_training_helper():
    """Probability 0 is teacher forcing; probability 1 feeds each step's output back,
    with the auxiliary inputs of the next step appended."""
    rng = np.random.RandomState(12)
    w_in = rng.randn(3, 2).astype(np.float32)
    w_h = rng.randn(2, 2).astype(np.float32)
    x = rng.randn(2, 4, 2).astype(np.float32)
    aux = rng.randn(2, 4, 1).astype(np.float32)
    cell = _toy_cell(w_in, w_h)
    init = np.zeros((2, 2), np.float32)
    with tf.Graph().as_default():
        outs = {}
        for prob in (0.0, 1.0):
            helper = S2S.ScheduledOutputTrainingHelper(tf.constant(x), [4, 4], prob, seed=1,
                                                       auxiliary_inputs=tf.constant(aux))
            dec = S2S.BasicDecoder(cell, helper, tf.constant(init))
            outs[prob] = S2S.dynamic_decode(dec)[0]
        forced, fed = tf.Session().run([outs[0.0], outs[1.0]])
    assert forced.sample_id.tolist() == [[0] * 4] * 2 and fed.sample_id.tolist() == [[1] * 4] * 2
    h_forced = h_fed = init
    prev_out = None
    for t in range(4):
        step_in = np.concatenate([x[:, t], aux[:, t]], 1)
        h_forced = np.tanh(step_in @ w_in + h_forced @ w_h)
        fed_in = step_in if t == 0 else np.concatenate([prev_out, aux[:, t]], 1)
        h_fed = np.tanh(fed_in @ w_in + h_fed @ w_h)
        prev_out = h_fed
        np.testing.assert_allclose(forced.rnn_output[:, t], h_forced, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fed.rnn_output[:, t], h_fed, rtol=1e-5, atol=1e-6)


def test_unknown_batch_and_time_with_stacked_cells():
    """Placeholders for the batch and both lengths (as NMT feeds them), a two-layer
    attention decoder, training and beam search in one graph."""
    rng = np.random.RandomState(13)
    with tf.Graph().as_default():
        src = tf.placeholder(tf.int32, [None, None])
        src_len = tf.placeholder(tf.int32, [None])
        tgt_in = tf.placeholder(tf.int32, [None, None])
        tgt_len = tf.placeholder(tf.int32, [None])
        emb = tf.get_variable("embedding", [9, 4])

        def stacked():
            return tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(6),
                                                tf.nn.rnn_cell.LSTMCell(6)])

        memory, enc_state = tf.nn.dynamic_rnn(stacked(), tf.nn.embedding_lookup(emb, src),
                                              sequence_length=src_len, dtype=tf.float32)
        batch = tf.size(src_len)
        proj = tf.layers.Dense(9, use_bias=False)

        def decoder_cell(beam):
            mech = S2S.LuongAttention(6, S2S.tile_batch(memory, beam),
                                      memory_sequence_length=S2S.tile_batch(src_len, beam),
                                      scale=True)
            cell = S2S.AttentionWrapper(stacked(), mech, attention_layer_size=6,
                                        alignment_history=beam > 1)
            return cell, cell.zero_state(batch * beam, tf.float32).clone(
                cell_state=S2S.tile_batch(enc_state, beam))

        with tf.variable_scope("decoder") as scope:
            cell, init = decoder_cell(1)
            helper = S2S.TrainingHelper(tf.nn.embedding_lookup(emb, tgt_in), tgt_len)
            out, _, _ = S2S.dynamic_decode(S2S.BasicDecoder(cell, helper, init, proj),
                                           impute_finished=True, scope=scope)
        loss = S2S.sequence_loss(out.rnn_output, tgt_in,
                                 tf.sequence_mask(tgt_len, tf.shape(tgt_in)[1], tf.float32))
        grads = tf.gradients(loss, tf.trainable_variables())
        with tf.variable_scope(scope, reuse=True) as scope:
            b_cell, b_init = decoder_cell(3)
            dec = S2S.BeamSearchDecoder(b_cell, emb, tf.fill([batch], 1), 2, b_init, 3,
                                        output_layer=proj, length_penalty_weight=1.0)
            b_out, b_state, b_len = S2S.dynamic_decode(
                dec, maximum_iterations=2 * tf.reduce_max(src_len), scope=scope)
        assert b_out.predicted_ids.shape.as_list() == [None, None, 3]
        feed = {src: rng.randint(3, 9, (2, 5)), src_len: [5, 3],
                tgt_in: rng.randint(3, 9, (2, 4)), tgt_len: [4, 2]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            loss_v, grads_v, ids, history, lengths = sess.run(
                [loss, grads, b_out.predicted_ids, b_state.cell_state.alignment_history,
                 b_len], feed)
    assert np.isfinite(loss_v)
    assert all(np.isfinite(getattr(g, "values", g)).all() for g in grads_v)
    assert ids.shape == (2, 10, 3) and history.shape == (10, 6, 5)
    assert lengths.shape == (2, 3) and lengths.max() <= 10
    assert not history[:, 3:6, 3:].any()  # the second entry's memory has 3 steps


def test_sample_embedding_helper_distribution():
    """The draws follow softmax(outputs / softmax_temperature)."""
    n = 4000
    with tf.Graph().as_default():
        helper = S2S.SampleEmbeddingHelper(tf.eye(3), tf.zeros([n], tf.int32), 2,
                                           softmax_temperature=2.0, seed=7)
        ids = helper.sample(0, tf.tile([[0.0, 1.0, 2.0]], [n, 1]), None)
        assert ids.dtype == tf.int32 and ids.shape.as_list() == [n]
        ids = tf.Session().run(ids)
    probs = np.exp([0.0, 0.5, 1.0])
    probs /= probs.sum()
    np.testing.assert_allclose(np.bincount(ids, minlength=3) / n, probs, atol=0.03)


def test_variable_names_of_the_tensorflow_nmt_attention_model():
    """The graph of tensorflow/nmt's AttentionModel (two layers, normed Bahdanau,
    time-major) has the variable names that nmt's own test expects under TF 1.x."""
    with tf.Graph().as_default():
        src, tgt = tf.placeholder(tf.int32, [None, None]), tf.placeholder(tf.int32, [None, None])
        src_len, tgt_len = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None])

        def layers():
            return tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(5),
                                                tf.nn.rnn_cell.BasicLSTMCell(5)])

        with tf.variable_scope("dynamic_seq2seq"):
            with tf.variable_scope("encoder"):
                emb_enc = tf.get_variable("embedding_encoder", [10, 4])
            with tf.variable_scope("decoder"):
                emb_dec = tf.get_variable("embedding_decoder", [10, 4])
            projection = tf.layers.Dense(10, use_bias=False, name="output_projection")
            with tf.variable_scope("encoder"):
                enc_out, enc_state = tf.nn.dynamic_rnn(
                    layers(), tf.nn.embedding_lookup(emb_enc, src), sequence_length=src_len,
                    time_major=True, dtype=tf.float32, swap_memory=True)
            with tf.variable_scope("decoder") as scope:
                mech = S2S.BahdanauAttention(5, tf.transpose(enc_out, [1, 0, 2]),
                                             memory_sequence_length=src_len, normalize=True)
                cell = S2S.AttentionWrapper(layers(), mech, attention_layer_size=5,
                                            name="attention")
                init = cell.zero_state(tf.size(src_len), tf.float32).clone(cell_state=enc_state)
                helper = S2S.TrainingHelper(tf.nn.embedding_lookup(emb_dec, tgt), tgt_len,
                                            time_major=True)
                out, _, _ = S2S.dynamic_decode(S2S.BasicDecoder(cell, helper, init),
                                               output_time_major=True, swap_memory=True,
                                               scope=scope)
                projection(out.rnn_output)
        names = [v.name for v in tf.trainable_variables()]
    lstm = "multi_rnn_cell/cell_{}/basic_lstm_cell/{}:0"
    assert names == [
        "dynamic_seq2seq/encoder/embedding_encoder:0",
        "dynamic_seq2seq/decoder/embedding_decoder:0",
        *[f"dynamic_seq2seq/encoder/rnn/{lstm.format(i, w)}" for i in (0, 1)
          for w in ("kernel", "bias")],
        "dynamic_seq2seq/decoder/memory_layer/kernel:0",
        *[f"dynamic_seq2seq/decoder/attention/{lstm.format(i, w)}" for i in (0, 1)
          for w in ("kernel", "bias")],
        "dynamic_seq2seq/decoder/attention/bahdanau_attention/query_layer/kernel:0",
        "dynamic_seq2seq/decoder/attention/bahdanau_attention/attention_v:0",
        "dynamic_seq2seq/decoder/attention/bahdanau_attention/attention_g:0",
        "dynamic_seq2seq/decoder/attention/bahdanau_attention/attention_b:0",
        "dynamic_seq2seq/decoder/attention/attention_layer/kernel:0",
        "dynamic_seq2seq/decoder/output_projection/kernel:0"]
