"""`tf.nn.dynamic_rnn`, `bidirectional_dynamic_rnn`, `static_rnn`,
`static_bidirectional_rnn` (rnn.py): agreement between them, `sequence_length` masking,
`time_major`, gradients against finite differences, a model that trains, checkpoints."""

from __future__ import annotations

import os

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf

R = np.random.RandomState(17)


def _init(sess):
    sess.run(tf.global_variables_initializer())


def test_dynamic_and_static_rnn_agree_and_time_major(sess):
    x = tf.placeholder(tf.float32, [3, 5, 4])
    cell = tf.nn.rnn_cell.LSTMCell(6, use_peepholes=True)
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="rnn")
    assert out.shape.as_list() == [3, 5, 6] and state.h.shape.as_list() == [3, 6]
    s_out, s_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32,
                                      scope="rnn")
    t_out, t_state = tf.nn.dynamic_rnn(cell, tf.transpose(x, [1, 0, 2]), dtype=tf.float32,
                                       time_major=True, scope="rnn")
    assert len(tf.global_variables()) == 5  # one set of weights, shared by all three
    _init(sess)
    X = R.normal(size=(3, 5, 4)).astype(np.float32)
    d, ds, st, ss, t, ts = sess.run([out, state, s_out, s_state, t_out, t_state], {x: X})
    np.testing.assert_allclose(d, np.stack(st, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ds.c, ss.c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t, d.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ts.h, ds.h, rtol=1e-5, atol=1e-6)


def test_sequence_length_zeroes_outputs_and_copies_state(sess):
    x = tf.placeholder(tf.float32, [None, None, 2])
    lengths = tf.placeholder(tf.int32, [None])
    cell = tf.nn.rnn_cell.GRUCell(3)
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    alone, alone_state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)  # shares rnn/gru_cell
    _init(sess)
    X = R.normal(size=(3, 6, 2)).astype(np.float32)
    L = [6, 2, 4]
    o, s = sess.run([out, state], {x: X, lengths: L})
    for b, n in enumerate(L):
        assert not o[b, n:].any()  # zero past the length
        ref_o, ref_s = sess.run([alone, alone_state], {x: X[b:b + 1, :n]})
        np.testing.assert_allclose(o[b, :n], ref_o[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s[b], ref_s[0], rtol=1e-5, atol=1e-6)
    # the loop stops after the longest sequence; the remaining outputs are zeros too
    o, s = sess.run([out, state], {x: X, lengths: [1, 3, 2]})
    assert o.shape == (3, 6, 3) and not o[:, 3:].any()


def test_gradient_past_the_length_is_zero(sess):
    x = tf.placeholder(tf.float32, [2, 4, 2])
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), x,
                                   sequence_length=[4, 2], dtype=tf.float32)
    (g,) = tf.gradients(tf.reduce_sum(out) + tf.reduce_sum(state.c), x)
    _init(sess)
    gv = sess.run(g, {x: R.normal(size=(2, 4, 2))})
    assert not gv[1, 2:].any() and np.abs(gv[1, :2]).min() > 0 and np.abs(gv[0]).min() > 0


def test_initial_state_and_dtype_errors(sess):
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    x = tf.ones([1, 3, 2])
    with pytest.raises(ValueError, match="argument `dtype` must be specified"):
        tf.nn.dynamic_rnn(cell, x)
    with pytest.raises(TypeError, match="RNNCell"):
        tf.nn.dynamic_rnn(object(), x, dtype=tf.float32)
    h0 = tf.constant([[0.5, -0.5]])
    out, _ = tf.nn.dynamic_rnn(cell, x, initial_state=h0)
    out0, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    _init(sess)
    a, b = sess.run([out, out0])
    assert not np.allclose(a[:, 0], b[:, 0])


def test_nested_inputs(sess):
    cell = tf.nn.rnn_cell.GRUCell(2)

    class Concat(tf.nn.rnn_cell.RNNCell):
        state_size = property(lambda self: cell.state_size)
        output_size = property(lambda self: cell.output_size)

        def call(self, inputs, state):
            return cell(tf.concat(list(inputs), 1), state)

    a, b = tf.ones([2, 3, 1]), tf.zeros([2, 3, 2])
    out, _ = tf.nn.dynamic_rnn(Concat(), (a, b), dtype=tf.float32)
    assert out.shape.as_list() == [2, 3, 2]
    _init(sess)
    assert sess.run(out).shape == (2, 3, 2)


def test_bidirectional_dynamic_rnn_names_and_reversal(sess):
    x = tf.placeholder(tf.float32, [2, 4, 3])
    lengths = [4, 2]
    with tf.variable_scope("enc"):
        (_, bw), (_, sb) = tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.LSTMCell(2), tf.nn.rnn_cell.GRUCell(3), x,
            sequence_length=lengths, dtype=tf.float32)
    names = [v.name for v in tf.global_variables()]
    assert names[:2] == ["enc/bidirectional_rnn/fw/lstm_cell/kernel:0",
                         "enc/bidirectional_rnn/fw/lstm_cell/bias:0"]
    assert names[2] == "enc/bidirectional_rnn/bw/gru_cell/gates/kernel:0"
    rev = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)
    with tf.variable_scope("enc/bidirectional_rnn/bw", reuse=True):
        ref, ref_state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), rev,
                                           sequence_length=lengths, dtype=tf.float32,
                                           scope=tf.get_variable_scope())
    _init(sess)
    X = R.normal(size=(2, 4, 3))
    b, sbv, r, rs = sess.run([bw, sb, ref, ref_state], {x: X})
    np.testing.assert_allclose(sbv, rs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b[0], r[0, ::-1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b[1, :2], r[1, 1::-1], rtol=1e-5, atol=1e-6)
    assert not b[1, 2:].any()


def test_static_bidirectional_rnn(sess):
    xs = [tf.constant(R.normal(size=(2, 3)).astype(np.float32)) for _ in range(3)]
    outs, sf, sb = tf.nn.static_bidirectional_rnn(
        tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2), xs, dtype=tf.float32)
    assert [v.name for v in tf.global_variables()][::2] == [
        "bidirectional_rnn/fw/basic_rnn_cell/kernel:0",
        "bidirectional_rnn/bw/basic_rnn_cell/kernel:0"]
    _init(sess)
    o, f, b = sess.run([outs, sf, sb])
    np.testing.assert_allclose(o[-1][:, :2], f, rtol=1e-6)
    np.testing.assert_allclose(o[0][:, 2:], b, rtol=1e-6)


def _weights_getter(weights):
    """A custom getter that hands out placeholders instead of variables."""
    def getter(getter, name, *args, **kwargs):
        return weights[name.rsplit("/", 1)[-1]]
    return getter


@pytest.mark.parametrize("sequence_length", [None, [3, 1]])
def test_dynamic_rnn_gradients_match_finite_differences(sequence_length):
    def build(x, h0, kernel, bias):
        getter = _weights_getter({"kernel": kernel, "bias": bias})
        with tf.variable_scope("g", custom_getter=getter):
            out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(3), x,
                                           initial_state=h0, sequence_length=sequence_length)
        return [out, state]
    check_gradient(build, [R.normal(size=(2, 3, 2)), R.normal(size=(2, 3)),
                           R.normal(size=(5, 3)) * 0.5, R.normal(size=3)])


def test_lstm_gradients_match_finite_differences():
    def build(x, c0, kernel, bias):
        getter = _weights_getter({"kernel": kernel, "bias": bias})
        with tf.variable_scope("g", custom_getter=getter):
            state = tf.nn.rnn_cell.LSTMStateTuple(c0, tf.tanh(c0))
            out, final = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), x,
                                           initial_state=state, time_major=True)
        return [out, final.c]
    check_gradient(build, [R.normal(size=(3, 2, 2)), R.normal(size=(2, 2)),
                           R.normal(size=(4, 8)) * 0.5, R.normal(size=8)])


def _sequence_task(n, t, rng):
    """Label 1 when the first half of the sequence sums to more than the second half."""
    x = rng.normal(size=(n, t, 1)).astype(np.float32)
    y = (x[:, : t // 2].sum((1, 2)) > x[:, t // 2:].sum((1, 2))).astype(np.int32)
    lengths = np.full(n, t, np.int32)
    return x, y, lengths


def test_lstm_sequence_classifier_trains():
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    lengths = tf.placeholder(tf.int32, [None])
    cell = tf.nn.rnn_cell.BasicLSTMCell(16)
    _, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    logits = tf.layers.dense(state.h, 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    rng = np.random.RandomState(0)
    xs, ys, ls = _sequence_task(256, 8, rng)
    feed = {x: xs, y: ys, lengths: ls}
    with tf.Session() as sess:
        _init(sess)
        first = sess.run(loss, feed)
        for _ in range(200):
            sess.run(train, feed)
        last = sess.run(loss, feed)
    assert last < first / 10, (first, last)


def test_checkpoint_round_trip(tmp_path):
    def model():
        x = tf.constant(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 4, 3))
        cells = [tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.LSTMCell(2, num_proj=1)]
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), x, dtype=tf.float32)
        return out

    path = os.path.join(tmp_path, "model.ckpt")
    with tf.Graph().as_default():
        out = model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            before = sess.run(out)
            saver.save(sess, path)
    names = dict(tf.train.list_variables(path))
    assert names["rnn/multi_rnn_cell/cell_1/lstm_cell/projection/kernel"] == [2, 1]
    assert names["rnn/multi_rnn_cell/cell_0/gru_cell/candidate/bias"] == [3]
    with tf.Graph().as_default():
        out = model()
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_allclose(sess.run(out), before, rtol=1e-6)
