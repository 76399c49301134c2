"""`tf.nn.rnn_cell` (rnn_cell_impl.py): one step of each cell against NumPy, TensorFlow
1.x's exact values (recorded with the tf-oracle), variable names and shapes, wrappers."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

R = np.random.RandomState(9)
X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) / 10.0 - 1.0


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class PatternInit:
    """The initializer the oracle script used: (k % 7 - 3) * 0.05 over the flat index."""

    def __call__(self, shape, dtype=None, partition_info=None):
        n = int(np.prod(shape))
        return tf.constant((np.arange(n) % 7 - 3).reshape(shape) * 0.05, dtype=tf.float32)


def _run_oracle_config(make_cell, **kw):
    with tf.variable_scope("m", initializer=PatternInit()):
        out, state = tf.nn.dynamic_rnn(make_cell(), tf.constant(X), dtype=tf.float32, **kw)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s = sess.run([out, state])
    return o, s, [v.name for v in tf.global_variables()]


# Recorded from TensorFlow 2.15 (tf.compat.v1) with /work/shared/tools/tf-oracle.
TF_LSTM_STATE = ([[-0.023734, 0.017767, -0.058404], [0.109855, -0.040094, 0.136584]],
                 [[-0.012025, 0.008928, -0.029136], [0.052028, -0.021425, 0.066231]])
TF_GRU_STATE = [[0.02182, 0.046298, 0.002276], [-0.013032, -0.103764, 0.003113]]
TF_RNN_STATE = [[0.018611, 0.014947, -0.000759], [-0.021564, -0.215264, 0.006914]]
TF_LSTMP_STATE = ([[-0.0196, 0.02372, -0.061844], [0.107088, -0.044546, 0.138501]],
                  [[-0.000657, -0.002108], [-0.003034, 0.001629]])
TF_MULTI_OUT = [[[-0.000164, 0.00059], [-0.000345, 0.001173], [0.0, 0.0]],
                [[-0.000002, -0.000195], [0.000062, -0.000761], [0.000222, -0.001755]]]


def test_lstm_matches_tensorflow():
    o, (c, h), names = _run_oracle_config(lambda: tf.nn.rnn_cell.BasicLSTMCell(3))
    assert names == ["m/rnn/basic_lstm_cell/kernel:0", "m/rnn/basic_lstm_cell/bias:0"]
    np.testing.assert_allclose(c, TF_LSTM_STATE[0], atol=2e-6)
    np.testing.assert_allclose(h, TF_LSTM_STATE[1], atol=2e-6)
    np.testing.assert_allclose(o[:, -1], h, atol=1e-7)


def test_gru_and_basic_rnn_match_tensorflow():
    _, s, names = _run_oracle_config(lambda: tf.nn.rnn_cell.GRUCell(3))
    assert names == [f"m/rnn/gru_cell/{p}:0" for p in (
        "gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")]
    np.testing.assert_allclose(s, TF_GRU_STATE, atol=2e-6)
    tf.reset_default_graph()
    _, s, names = _run_oracle_config(lambda: tf.nn.rnn_cell.BasicRNNCell(3))
    assert names == ["m/rnn/basic_rnn_cell/kernel:0", "m/rnn/basic_rnn_cell/bias:0"]
    np.testing.assert_allclose(s, TF_RNN_STATE, atol=2e-6)


def test_lstm_with_peepholes_projection_and_clip_matches_tensorflow():
    _, (c, m), names = _run_oracle_config(lambda: tf.nn.rnn_cell.LSTMCell(
        3, use_peepholes=True, num_proj=2, cell_clip=0.5))
    assert names == [f"m/rnn/lstm_cell/{p}:0" for p in (
        "kernel", "bias", "w_f_diag", "w_i_diag", "w_o_diag", "projection/kernel")]
    np.testing.assert_allclose(c, TF_LSTMP_STATE[0], atol=2e-6)
    np.testing.assert_allclose(m, TF_LSTMP_STATE[1], atol=2e-6)


def test_multi_rnn_cell_with_sequence_length_matches_tensorflow():
    o, _, names = _run_oracle_config(lambda: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.BasicLSTMCell(2)]), sequence_length=[2, 3])
    assert names[0] == "m/rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel:0"
    assert names[-1] == "m/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/bias:0"
    np.testing.assert_allclose(o, TF_MULTI_OUT, atol=2e-6)


def _numpy_lstm_step(x, c, h, kernel, bias, forget_bias=1.0, peep=None, clip=None,
                     proj=None):
    z = np.concatenate([x, h], 1) @ kernel + bias
    i, j, f, o = np.split(z, 4, axis=1)
    if peep is not None:
        f = f + peep["f"] * c
        i = i + peep["i"] * c
    new_c = _sigmoid(f + forget_bias) * c + _sigmoid(i) * np.tanh(j)
    if clip is not None:
        new_c = np.clip(new_c, -clip, clip)
    if peep is not None:
        o = o + peep["o"] * new_c
    new_h = _sigmoid(o) * np.tanh(new_c)
    if proj is not None:
        new_h = new_h @ proj
    return new_c, new_h


def _load(sess, cell, values):
    for v, val in zip(cell.variables, values):
        sess.run(tf.assign(v, val.astype(np.float32)))


def test_lstm_step_matches_numpy(sess):
    cell = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, cell_clip=0.8, num_proj=3)
    x = tf.placeholder(tf.float32, [2, 5])
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.placeholder(tf.float32, [2, 4]),
                                          tf.placeholder(tf.float32, [2, 3]))
    out, new = cell(x, state)
    assert cell.state_size == (4, 3) and cell.output_size == 3 and out.shape == (2, 3)
    sess.run(tf.global_variables_initializer())
    kernel, bias = R.normal(size=(8, 16)), R.normal(size=16)
    peep = {"f": R.normal(size=4), "i": R.normal(size=4), "o": R.normal(size=4)}
    proj = R.normal(size=(4, 3))
    _load(sess, cell, [kernel, bias, peep["f"], peep["i"], peep["o"], proj])
    xv, cv, hv = R.normal(size=(2, 5)), R.normal(size=(2, 4)), R.normal(size=(2, 3))
    got_out, got = sess.run([out, new], {x: xv, state.c: cv, state.h: hv})
    want_c, want_h = _numpy_lstm_step(xv, cv, hv, kernel, bias, peep=peep, clip=0.8,
                                      proj=proj)
    np.testing.assert_allclose(got.c, want_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got.h, want_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_out, want_h, rtol=1e-4, atol=1e-5)


def test_basic_lstm_and_gru_steps_match_numpy(sess):
    lstm, gru = tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=0.5), tf.nn.rnn_cell.GRUCell(3)
    x = tf.placeholder(tf.float32, [2, 2])
    s = tf.placeholder(tf.float32, [2, 3])
    with tf.variable_scope("a"):
        _, (c1, h1) = lstm(x, (s, s * 2.0))
    with tf.variable_scope("b"):
        g1, _ = gru(x, s)
    sess.run(tf.global_variables_initializer())
    k, b = R.normal(size=(5, 12)), R.normal(size=12)
    gk, gb, ck, cb = R.normal(size=(5, 6)), R.normal(size=6), R.normal(size=(5, 3)), \
        R.normal(size=3)
    _load(sess, lstm, [k, b])
    _load(sess, gru, [gk, gb, ck, cb])
    xv, sv = R.normal(size=(2, 2)), R.normal(size=(2, 3))
    c, h, g = sess.run([c1, h1, g1], {x: xv, s: sv})
    want_c, want_h = _numpy_lstm_step(xv, sv, 2 * sv, k, b, forget_bias=0.5)
    np.testing.assert_allclose(c, want_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h, want_h, rtol=1e-4, atol=1e-5)
    r, u = np.split(_sigmoid(np.concatenate([xv, sv], 1) @ gk + gb), 2, axis=1)
    cand = np.tanh(np.concatenate([xv, r * sv], 1) @ ck + cb)
    np.testing.assert_allclose(g, u * sv + (1 - u) * cand, rtol=1e-4, atol=1e-5)


def test_zero_state_sizes_and_tuple_flags(sess):
    multi = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3),
                                         tf.nn.rnn_cell.GRUCell(2)])
    assert multi.state_size == ((3, 3), 2) and multi.output_size == 2
    batch = tf.placeholder(tf.int32, [])
    zs = multi.zero_state(batch, tf.float32)
    assert isinstance(zs[0], tf.nn.rnn_cell.LSTMStateTuple)
    assert zs[0].c.shape.as_list() == [None, 3]
    got = sess.run(zs, {batch: 4})
    assert got[0].h.shape == (4, 3) and got[1].shape == (4, 2) and not got[1].any()
    flat = tf.nn.rnn_cell.BasicLSTMCell(3, state_is_tuple=False)
    assert flat.state_size == 6 and flat.zero_state(2, tf.float32).shape == (2, 6)
    out, new = flat(tf.ones([2, 1]), flat.zero_state(2, tf.float32))
    assert new.shape == (2, 6) and out.shape == (2, 3)


def test_explicit_scope_and_reuse_names():
    cell = tf.nn.rnn_cell.GRUCell(3)
    cell(tf.zeros([1, 2]), cell.zero_state(1, tf.float32), scope="manual")
    cell(tf.zeros([1, 2]), cell.zero_state(1, tf.float32))  # reuses
    assert [v.name for v in tf.global_variables()] == [
        "manual/gates/kernel:0", "manual/gates/bias:0", "manual/candidate/kernel:0",
        "manual/candidate/bias:0"]
    a, b = tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2)
    a(tf.zeros([1, 2]), tf.zeros([1, 2]))
    b(tf.zeros([1, 2]), tf.zeros([1, 2]))
    assert tf.global_variables()[-1].name == "basic_rnn_cell_1/bias:0"
    assert tf.contrib.rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell
    assert tf.contrib.rnn.LSTMStateTuple is tf.nn.rnn_cell.LSTMStateTuple


def test_dropout_wrapper(sess):
    base = tf.nn.rnn_cell.BasicRNNCell(200, activation=tf.identity)
    x = tf.ones([1, 200])
    keep_all = tf.nn.rnn_cell.DropoutWrapper(base, output_keep_prob=1.0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        tf.nn.rnn_cell.DropoutWrapper(base, input_keep_prob=1.5)
    full, state = keep_all(x, base.zero_state(1, tf.float32))
    half = tf.nn.rnn_cell.DropoutWrapper(base, input_keep_prob=0.5, output_keep_prob=0.5,
                                         seed=1)
    dropped, _ = half(x, base.zero_state(1, tf.float32))
    sess.run(tf.global_variables_initializer())
    f, s, d = sess.run([full, state, dropped])
    np.testing.assert_array_equal(f, s)  # keep probability 1: nothing dropped
    kept = d != 0
    assert 0.1 < kept.mean() < 0.6  # about a quarter of the outputs survive both masks
    # LSTM state: c is never dropped by default, h is.
    lstm = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(50), state_keep_prob=0.5)
    _, st = lstm(tf.ones([1, 3]), lstm.zero_state(1, tf.float32))
    sess.run(tf.global_variables_initializer())
    c, h = sess.run([st.c, st.h])
    assert (c != 0).all() and (h == 0).any()


def test_variational_dropout_uses_one_mask_per_sequence(sess):
    cell = tf.nn.rnn_cell.DropoutWrapper(
        tf.nn.rnn_cell.BasicRNNCell(40, activation=tf.identity), output_keep_prob=0.5,
        variational_recurrent=True, dtype=tf.float32, seed=3)
    out, _ = tf.nn.dynamic_rnn(cell, tf.ones([1, 4, 2]), dtype=tf.float32)
    sess.run(tf.global_variables_initializer())
    o = sess.run(out)
    zero = o[0] == 0
    assert zero.any() and (zero == zero[0]).all()  # the same units at every step


def test_residual_wrapper_adds_inputs(sess):
    cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(3))
    x = tf.constant(R.normal(size=(2, 3)).astype(np.float32))
    out, state = cell(x, cell.zero_state(2, tf.float32))
    sess.run(tf.global_variables_initializer())
    o, s, xv = sess.run([out, state, x])
    np.testing.assert_allclose(o, s + xv, rtol=1e-6)
