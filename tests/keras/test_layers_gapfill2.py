"""tf.keras.layers gap-fill, part 2: recurrent cells and `RNN`, ConvLSTM, attention,
preprocessing layers and `DenseFeatures`. Expected values come from TF 2.15
(tensorflow.compat.v1 with v2 behaviour disabled) via the tf-oracle; scripts in
/tmp/s16/wild/kl2_*.py."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flowgraph as tf

L = tf.keras.layers
fc = tf.feature_column


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches, feed)


def _const_inits():
    return dict(kernel_initializer=tf.keras.initializers.Constant(0.1),
                recurrent_initializer=tf.keras.initializers.Constant(-0.2))


_X = np.linspace(-1, 1, 24).reshape(2, 4, 3).astype(np.float32)


# -- cells and RNN ----------------------------------------------------------------------------
def test_cells_names_state_sizes_and_weight_names():
    x = tf.keras.Input((5, 3))
    cell = L.LSTMCell(4)
    assert (cell.name, cell.state_size, cell.output_size) == ("lstm_cell", [4, 4], 4)
    rnn = L.RNN(cell, return_sequences=True, return_state=True)
    seq, h, c = rnn(x)
    assert [seq.shape.as_list(), h.shape.as_list(), c.shape.as_list()] == \
        [[None, 5, 4], [None, 4], [None, 4]]
    assert [w.name for w in rnn.weights] == ["rnn/lstm_cell/kernel:0",
                                             "rnn/lstm_cell/recurrent_kernel:0",
                                             "rnn/lstm_cell/bias:0"]
    gru, simple = L.GRUCell(3), L.SimpleRNNCell(2)
    assert (gru.name, simple.name, gru.state_size, gru.reset_after) == \
        ("gru_cell", "simple_rnn_cell", 3, False)
    stack = L.StackedRNNCells([L.LSTMCell(4), L.GRUCell(3)])
    assert (stack.name, stack.state_size, stack.output_size) == \
        ("stacked_rnn_cells", ([4, 4], 3), 3)
    r2 = L.RNN(stack)
    assert r2(x).shape.as_list() == [None, 3]
    assert [w.name for w in r2.weights] == [
        "rnn_1/stacked_rnn_cells/lstm_cell_1/kernel:0",
        "rnn_1/stacked_rnn_cells/lstm_cell_1/recurrent_kernel:0",
        "rnn_1/stacked_rnn_cells/lstm_cell_1/bias:0",
        "rnn_1/stacked_rnn_cells/gru_cell_1/kernel:0",
        "rnn_1/stacked_rnn_cells/gru_cell_1/recurrent_kernel:0",
        "rnn_1/stacked_rnn_cells/gru_cell_1/bias:0"]
    # the LSTM layer is an RNN over a cell named lstm_cell (the name counter unmoved)
    lstm = L.LSTM(4)
    lstm(x)
    assert isinstance(lstm, L.RNN) and lstm.cell.name == "lstm_cell"
    assert lstm.weights[0].name == "lstm/lstm_cell/kernel:0"
    alone = L.LSTMCell(4)
    out, (h2, _) = alone(tf.zeros([2, 3]), [tf.zeros([2, 4]), tf.zeros([2, 4])])
    assert out.shape.as_list() == [2, 4] and h2.shape.as_list() == [2, 4]
    assert [w.name for w in alone.weights] == ["lstm_cell_2/kernel:0",
                                               "lstm_cell_2/recurrent_kernel:0",
                                               "lstm_cell_2/bias:0"]
    assert issubclass(L.LSTMCell, L.AbstractRNNCell)


def test_cell_configs_have_tf_keys():
    assert sorted(L.LSTMCell(4).get_config()) == sorted([
        "activation", "bias_constraint", "bias_initializer", "bias_regularizer", "dropout",
        "dtype", "implementation", "kernel_constraint", "kernel_initializer",
        "kernel_regularizer", "name", "recurrent_activation", "recurrent_constraint",
        "recurrent_dropout", "recurrent_initializer", "recurrent_regularizer", "trainable",
        "unit_forget_bias", "units", "use_bias"])
    simple = L.SimpleRNNCell(4).get_config()
    assert "recurrent_activation" not in simple and "implementation" not in simple
    assert L.GRUCell(4).get_config()["reset_after"] is False
    rnn = L.RNN(L.LSTMCell(4))
    assert sorted(rnn.get_config()) == ["cell", "dtype", "go_backwards", "name",
                                        "return_sequences", "return_state", "stateful",
                                        "time_major", "trainable", "unroll"]


_MASK = [[True, True, False, True], [True, False, False, False]]


@pytest.mark.parametrize("make, expected_seq, expected_states", [
    (lambda: L.LSTM(2, return_sequences=True, return_state=True, kernel_initializer="ones",
                    recurrent_initializer="ones"),
     [[0.0906, 0.5337, 0.5337, 0.9511], [0.7612, 0.7612, 0.7612, 0.7612]],
     [[0.9511, 0.7612], [1.8427, 0.9992]]),
    (lambda: L.RNN(L.SimpleRNNCell(2, kernel_initializer="ones",
                                   recurrent_initializer="ones"),
                   return_sequences=True, return_state=True),
     [[0.2913, 0.945, 0.945, 0.9999], [0.9992, 0.9992, 0.9992, 0.9992]],
     [[0.9999, 0.9992]]),
    (lambda: L.GRU(2, return_sequences=True, return_state=True, kernel_initializer="ones",
                   recurrent_initializer="ones"),
     [[0.1282, 0.2863, 0.2863, 0.2863], [0.0, 0.0, 0.0, 0.0]],
     [[0.2863, 0.0]]),
])
def test_masked_steps_keep_the_previous_output_and_state(make, expected_seq,
                                                         expected_states):
    # TF 2.15: a masked step repeats the previous output (not zeros) and keeps the states
    x = tf.placeholder(tf.float32, [2, 4, 3])
    xv = np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 10
    outs = make()(x, mask=tf.constant(_MASK))
    assert outs[0]._keras_mask is not None
    got = _run(outs, {x: xv})
    np.testing.assert_allclose(got[0][:, :, 0], expected_seq, atol=1e-4)
    for state, want in zip(got[1:], expected_states, strict=True):
        np.testing.assert_allclose(state[:, 0], want, atol=1e-4)


def test_stacked_go_backwards_reset_after_and_time_major_match_tf():
    x = tf.constant(_X)
    rnn = L.RNN([L.LSTMCell(2, **_const_inits()), L.SimpleRNNCell(3, **_const_inits())],
                return_state=True, go_backwards=True)
    out, (h1, c1), h2 = rnn(x)  # TF groups the states per cell
    gru = L.GRU(2, reset_after=True, return_sequences=True, bias_initializer="ones",
                **_const_inits())
    seq = gru(x)
    assert gru.weights[2].shape.as_list() == [2, 6]
    tm = L.SimpleRNN(2, time_major=True, **_const_inits())
    last = tm(tf.transpose(x, [1, 0, 2]))
    got = _run([out, h1, c1, h2, seq, last])
    np.testing.assert_allclose(got[0][:, 0], [-0.012, 0.0055], atol=1e-4)
    np.testing.assert_allclose(got[1][:, 0], [-0.0861, 0.063], atol=1e-4)
    np.testing.assert_allclose(got[2][:, 0], [-0.1937, 0.1264], atol=1e-4)
    np.testing.assert_allclose(got[3], got[0])
    np.testing.assert_allclose(got[4][:, :, 0], [[0.142, 0.2594, 0.356, 0.435],
                                                 [0.0885, 0.1617, 0.2212, 0.2685]], atol=1e-4)
    np.testing.assert_allclose(got[5][:, 0], [-0.0064, 0.2092], atol=1e-4)


def _np_lstm(x, k, u, b):
    def hsig(z):
        return np.clip(0.2 * z + 0.5, 0, 1)

    h = np.zeros((x.shape[0], u.shape[0]))
    c = np.zeros_like(h)
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ u + b
        i, f, g, o = np.split(z, 4, axis=1)
        c = hsig(f) * c + hsig(i) * np.tanh(g)
        h = hsig(o) * np.tanh(c)
    return h


def test_rnn_over_lstm_cell_matches_numpy_and_finite_differences():
    x = tf.placeholder(tf.float64, [2, 4, 3])
    layer = L.RNN(L.LSTMCell(3, dtype="float64"), dtype="float64")
    y = layer(x)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    k, u, b = sess.run(layer.weights)
    np.testing.assert_allclose(sess.run(y, {x: _X}), _np_lstm(_X.astype(np.float64), k, u, b),
                               atol=1e-10)
    with sess.as_default():
        err = tf.test.compute_gradient_error(x, [2, 4, 3], y, [2, 3],
                                             x_init_value=_X.astype(np.float64))
    assert err < 1e-6
    for weight in layer.weights:  # every weight gets its gradient, through the loop
        _check_weight_gradient(sess, weight, y, {x: _X})


def _check_weight_gradient(sess, var, y, feed):
    """d sum(y * r) / d var along a random direction, against central differences."""
    rng = np.random.RandomState(4)
    r = rng.randn(*y.shape.as_list())
    (grad,) = tf.gradients(tf.reduce_sum(y * r), [var])
    assert grad is not None, var.name
    base = sess.run(var)
    direction = rng.randn(*base.shape)
    analytic = float(np.sum(sess.run(grad, feed) * direction))
    values = []
    for sign in (1, -1):
        var.load(base + sign * 1e-6 * direction, sess)
        values.append(float(np.sum(sess.run(y, feed) * r)))
    var.load(base, sess)
    assert abs((values[0] - values[1]) / 2e-6 - analytic) < 1e-5 * max(1.0, abs(analytic))


def test_custom_abstract_cell_and_initial_state_list_input():
    class MinimalCell(L.AbstractRNNCell):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        @property
        def state_size(self):
            return self.units

        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", [input_shape[-1], self.units],
                                          initializer="ones")

        def call(self, inputs, states):
            out = tf.matmul(inputs, self.kernel) + states[0]
            return out, [out]

    x = tf.constant(_X)
    layer = L.RNN(MinimalCell(2), return_sequences=True)
    h0 = tf.constant([[1.0, 1.0], [0.0, 0.0]])
    seq = layer([x, h0])
    assert [w.name for w in layer.weights] == ["rnn/minimal_cell/kernel:0"]
    want = np.cumsum(_X.sum(-1), axis=1)[..., None] + np.array([1.0, 0.0])[:, None, None]
    np.testing.assert_allclose(_run(seq), np.repeat(want, 2, -1), atol=1e-5)
    assert L.LSTMCell(3).get_initial_state(batch_size=2, dtype=tf.float32)[0].shape \
        .as_list() == [2, 3]


def test_rnn_config_round_trip_and_errors():
    rnn = L.RNN([L.LSTMCell(4), L.GRUCell(3)], return_sequences=True, go_backwards=True)
    config = rnn.get_config()
    assert config["cell"]["class_name"] == "StackedRNNCells"
    again = L.RNN.from_config(config)
    assert isinstance(again.cell, L.StackedRNNCells) and again.go_backwards
    assert [c.units for c in again.cell.cells] == [4, 3]
    with pytest.raises(ValueError, match="should have a `call` method"):
        L.RNN(object())
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        L.LSTM(2)(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="expects 2 initial state"):
        L.LSTM(2)(tf.zeros([2, 3, 1]), initial_state=[tf.zeros([2, 2])])


# -- ConvLSTM ---------------------------------------------------------------------------------
def test_conv_lstm_1d_2d_3d_match_tf():
    rng = np.random.RandomState(0)
    tf.set_random_seed(5)
    g = dict(recurrent_initializer="glorot_uniform")
    x2 = tf.constant(rng.randn(2, 3, 5, 4, 2).astype(np.float32) * 0.5)
    c2 = L.ConvLSTM2D(3, (3, 2), padding="same", return_sequences=True, return_state=True,
                      **g)
    outs = c2(x2)
    assert [w.name for w in c2.weights] == ["conv_lstm2d/kernel:0",
                                            "conv_lstm2d/recurrent_kernel:0",
                                            "conv_lstm2d/bias:0"]
    assert [w.shape.as_list() for w in c2.weights] == [[3, 2, 2, 12], [3, 2, 3, 12], [12]]
    assert outs[0].shape.as_list() == [2, 3, 5, 4, 3]
    x1 = tf.constant(rng.randn(2, 3, 6, 2).astype(np.float32) * 0.5)
    c1 = L.ConvLSTM1D(2, 3, strides=2, **g)
    y1 = c1(x1)
    assert y1.shape.as_list() == [2, 2, 2]
    assert [w.shape.as_list() for w in c1.weights] == [[3, 2, 8], [3, 2, 8], [8]]
    x3 = tf.constant(rng.randn(1, 2, 3, 4, 4, 1).astype(np.float32) * 0.5)
    c3 = L.ConvLSTM3D(2, 2, padding="same", return_sequences=True, **g)
    y3 = c3(x3)
    assert [w.shape.as_list() for w in c3.weights] == [[2, 2, 2, 1, 8], [2, 2, 2, 2, 8], [8]]
    cf = L.ConvLSTM2D(2, 2, data_format="channels_first", **g)
    yf = cf(tf.constant(rng.randn(2, 3, 2, 4, 5).astype(np.float32)))
    assert yf.shape.as_list() == [2, 2, 3, 4]
    got = _run([outs[0], outs[1], outs[2], y1, y3, yf])
    sums = [-0.911, -0.095, -0.41, 0.246, -1.847, 0.147]
    firsts = [[-0.0314, 0.1067, -0.0065], [0.0132, 0.0708, 0.0783], [0.0226, 0.157, 0.1348],
              [0.1061, -0.019, -0.0617], [0.0162, 0.0209, 0.0238], [-0.193, 0.102, 0.1805]]
    for value, total, first in zip(got, sums, firsts, strict=True):
        assert abs(float(value.sum()) - total) < 2e-3
        np.testing.assert_allclose(value.ravel()[:3], first, atol=1e-4)
    cfg = c2.get_config()
    assert cfg["filters"] == 3 and cfg["kernel_size"] == (3, 2) and "cell" not in cfg
    assert L.ConvLSTM2D.from_config(cfg).get_config()["padding"] == "same"


def test_conv_lstm_gradient_against_finite_differences():
    x = tf.placeholder(tf.float64, [1, 2, 4, 4, 1])
    layer = L.ConvLSTM2D(2, 2, dtype="float64")
    y = layer(x)
    xv = np.random.RandomState(1).randn(1, 2, 4, 4, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        err = tf.test.compute_gradient_error(x, [1, 2, 4, 4, 1], y, [1, 3, 3, 2],
                                             x_init_value=xv)
        assert err < 1e-6
        for weight in layer.weights:
            _check_weight_gradient(sess, weight, y, {x: xv})


# -- attention --------------------------------------------------------------------------------
def _qv():
    rng = np.random.RandomState(0)
    return (tf.constant(rng.randn(2, 3, 4).astype(np.float32)),
            tf.constant(rng.randn(2, 5, 4).astype(np.float32)))


def test_dense_attention_layers_match_tf():
    tf.set_random_seed(3)
    q, v = _qv()
    qm = tf.constant([[True, True, False], [True, True, True]])
    vm = tf.constant([[True, True, True, False, False], [True] * 5])
    a = L.Attention()
    y = a([q, v])
    a2 = L.Attention(use_scale=True, score_mode="concat")
    y2, s2 = a2([q, v], mask=[qm, vm], return_attention_scores=True)
    ad = L.AdditiveAttention()
    y3 = ad([q, v, v], mask=[qm, vm])
    y4 = L.Attention()([q, q], use_causal_mask=True)
    assert a.weights == [] and [w.name for w in a2.weights] == [
        "attention_1/scale:0", "attention_1/concat_score_weight:0"]
    assert [(w.name, w.shape.as_list()) for w in ad.weights] == [
        ("additive_attention/scale:0", [4])]
    assert a2.get_config() == {"name": "attention_1", "trainable": True, "dtype": "float32",
                               "dropout": 0.0, "use_scale": True, "score_mode": "concat"}
    got = _run([y, y2, s2, y3, y4])
    np.testing.assert_allclose(got[0][0, 0], [1.636, 0.8018, 0.0804, 0.2468], atol=1e-4)
    np.testing.assert_allclose(got[1][0], [[1.4593, 0.8395, 0.105, 0.2878],
                                           [1.39, 0.8467, 0.0976, 0.2983], [0, 0, 0, 0]],
                               atol=1e-4)
    np.testing.assert_allclose(got[2][0, 0], [0.1321, 0.7973, 0.0706, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(got[3][0, :2, 0], [1.183, 1.1207], atol=1e-4)
    np.testing.assert_allclose(got[4][0, 0], [1.7641, 0.4002, 0.9787, 2.2409], atol=1e-4)
    with pytest.raises(ValueError, match="score_mode"):
        L.Attention(score_mode="general")


def test_einsum_dense_and_multi_head_attention_match_tf():
    tf.set_random_seed(3)
    q, v = _qv()
    a = L.Attention()
    a([q, v])
    L.Attention(use_scale=True, score_mode="concat")([q, v])
    L.AdditiveAttention()([q, v, v])
    L.Attention()([q, q], use_causal_mask=True)
    ed = L.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d",
                       activation="relu")
    y5 = ed(q)
    assert y5.shape.as_list() == [2, 3, 6]
    assert [(w.name, w.shape.as_list()) for w in ed.weights] == [
        ("einsum_dense/kernel:0", [4, 6]), ("einsum_dense/bias:0", [6])]
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3)
    y6, s6 = mha(q, v, return_attention_scores=True,
                 attention_mask=tf.constant(np.ones((2, 3, 5), bool)))
    assert (y6.shape.as_list(), s6.shape.as_list()) == ([2, 3, 4], [2, 2, 3, 5])
    assert [(w.name, w.shape.as_list()) for w in mha.weights] == [
        ("multi_head_attention/query/kernel:0", [4, 2, 3]),
        ("multi_head_attention/query/bias:0", [2, 3]),
        ("multi_head_attention/key/kernel:0", [4, 2, 3]),
        ("multi_head_attention/key/bias:0", [2, 3]),
        ("multi_head_attention/value/kernel:0", [4, 2, 3]),
        ("multi_head_attention/value/bias:0", [2, 3]),
        ("multi_head_attention/attention_output/kernel:0", [2, 3, 4]),
        ("multi_head_attention/attention_output/bias:0", [4])]
    mha2 = L.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2, output_shape=7,
                                use_bias=False)
    y7 = mha2(q, v, v)
    assert y7.shape.as_list() == [2, 3, 7]
    assert [w.shape.as_list() for w in mha2.weights] == [[4, 2, 3], [4, 2, 3], [4, 2, 2],
                                                         [2, 2, 7]]
    got = _run([ed.weights[0], mha.weights[0], mha.weights[2], y5, y6, s6, y7])
    # the seeded initial values are TensorFlow's
    assert round(float(got[0].ravel()[0]), 5) == 0.43078
    assert round(float(got[1].ravel()[0]), 5) == 0.38448
    assert round(float(got[2].ravel()[0]), 5) == -0.30323
    np.testing.assert_allclose(got[3][0, 0], [1.6406, 1.571, 0.0, 0.9322, 0.0, 0.3206],
                               atol=1e-4)
    np.testing.assert_allclose(got[4][0, 0], [-0.1037, -0.0723, 0.2352, -0.2828], atol=1e-4)
    np.testing.assert_allclose(got[5][0, 0, 0], [0.0831, 0.2764, 0.1575, 0.2422, 0.2408],
                               atol=1e-4)
    np.testing.assert_allclose(got[6][0, 0, :3], [0.3711, -0.1516, 0.2567], atol=1e-4)
    assert mha.get_config()["attention_axes"] == (1,)


def test_attention_gradients_against_finite_differences():
    rng = np.random.RandomState(2)
    q = tf.placeholder(tf.float64, [2, 3, 4])
    v = tf.constant(rng.randn(2, 5, 4))
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float64")
    y = mha(q, v)
    z = L.AdditiveAttention(dtype="float64")([q, v])
    qv = rng.randn(2, 3, 4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for out in (y, z):
            assert tf.test.compute_gradient_error(q, [2, 3, 4], out, [2, 3, 4],
                                                  x_init_value=qv) < 1e-6
        for weight in mha.weights:
            _check_weight_gradient(sess, weight, y, {q: qv})


def test_einsum_dense_numpy_reference_and_elided_equation():
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    layer = L.EinsumDense("...b,bc->...c", output_shape=4, bias_axes="c",
                          kernel_initializer="ones", bias_initializer="ones")
    y = layer(x)
    assert layer.kernel.shape.as_list() == [3, 4] and y.shape.as_list() == [2, 2, 4]
    want = np.arange(12, dtype=np.float32).reshape(2, 2, 3).sum(-1, keepdims=True) + 1
    np.testing.assert_allclose(_run(y), np.repeat(want, 4, -1))
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        L.EinsumDense("ab->b", output_shape=2)(x)


# -- preprocessing ----------------------------------------------------------------------------
def test_image_preprocessing_layers_match_tf():
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    y = L.Rescaling(1 / 255.0, offset=-1.0)(x)
    assert y.name == "rescaling/add:0"
    img = tf.constant(np.arange(2 * 5 * 6 * 3, dtype=np.float32).reshape(2, 5, 6, 3))
    crop = L.CenterCrop(3, 4)(img)
    up = L.CenterCrop(7, 4)(img)
    resize = L.Resizing(3, 4)(img)
    nearest = L.Resizing(3, 4, interpolation="nearest", crop_to_aspect_ratio=True)(img)
    assert crop.shape.as_list() == [2, 3, 4, 3] and up.shape.as_list() == [2, 7, 4, 3]
    got = _run([y, crop, up, resize, nearest])
    np.testing.assert_allclose(got[0][0, 0], [-1.0, -0.996078, -0.992157, -0.988235],
                               atol=1e-6)
    np.testing.assert_allclose(got[1][0, :, :, 0], [[21, 24, 27, 30], [39, 42, 45, 48],
                                                    [57, 60, 63, 66]])
    np.testing.assert_allclose(got[2][0, :2, :, 0], [[6.0, 6.75, 8.25, 9.0],
                                                     [16.2857, 17.0357, 18.5357, 19.2857]],
                               atol=1e-3)
    np.testing.assert_allclose(got[3][0, :, :, 0], [[6.75, 11.25, 15.75, 20.25],
                                                    [36.75, 41.25, 45.75, 50.25],
                                                    [66.75, 71.25, 75.75, 80.25]], atol=1e-4)
    np.testing.assert_allclose(got[4][0, :, :, 0], [[0, 6, 9, 15], [36, 42, 45, 51],
                                                    [54, 60, 63, 69]])
    with pytest.raises(NotImplementedError, match="Value not recognized for `interpolation`"):
        L.Resizing(3, 4, interpolation="foo")


def test_category_encoding_hashing_discretization_match_tf():
    ids = tf.constant([[0, 1], [3, 3]])
    multi = L.CategoryEncoding(num_tokens=5)(ids)
    count = L.CategoryEncoding(num_tokens=5, output_mode="count")(ids)
    one = L.CategoryEncoding(num_tokens=5, output_mode="one_hot")(tf.constant([0, 1, 4]))
    weighted = L.CategoryEncoding(num_tokens=5, output_mode="count")(
        ids, count_weights=tf.constant([[0.5, 1.0], [2.0, 3.0]]))
    h = L.Hashing(num_bins=3)(tf.constant([["A"], ["B"], ["C"], ["D"], ["E"]]))
    hm = L.Hashing(num_bins=3, mask_value="")(tf.constant([["A"], [""], ["C"]]))
    hs = L.Hashing(num_bins=3, salt=133)(tf.constant([["A"], ["B"], ["C"], ["D"]]))
    hi = L.Hashing(num_bins=3)(tf.constant([[1], [2], [3], [4]]))
    h1 = L.Hashing(num_bins=4, output_mode="one_hot")(tf.constant(["A", "B"]))
    d = L.Discretization(bin_boundaries=[0.0, 1.0, 2.0])(
        tf.constant([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]]))
    assert (multi.dtype, h.dtype, d.dtype) == (tf.float32, tf.int64, tf.int64)
    got = _run([multi, count, one, weighted, h, hm, hs, hi, h1, d])
    assert got[0].tolist() == [[1, 1, 0, 0, 0], [0, 0, 0, 1, 0]]
    assert got[1].tolist() == [[1, 1, 0, 0, 0], [0, 0, 0, 2, 0]]
    assert got[2].tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1]]
    assert got[3].tolist() == [[0.5, 1, 0, 0, 0], [0, 0, 0, 5, 0]]
    assert got[4].ravel().tolist() == [1, 0, 1, 1, 2]
    assert got[5].ravel().tolist() == [1, 0, 2]
    assert got[6].ravel().tolist() == [0, 0, 2, 1]
    assert got[7].ravel().tolist() == [0, 1, 0, 2]
    assert got[8].tolist() == [[1, 0, 0, 0], [1, 0, 0, 0]]
    assert got[9].tolist() == [[0, 2, 3, 1], [1, 3, 2, 1]]
    bad = L.CategoryEncoding(num_tokens=3)(tf.constant([[0, 5]]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Input values must be in the range 0 <= values < num_tokens"):
        _run(bad)
    with pytest.raises(ValueError, match="Unkown value for `output_mode`"):
        L.CategoryEncoding(num_tokens=3, output_mode="tf_idf")
    with pytest.raises(ValueError, match="cannot be `None` or non-positive"):
        L.Hashing(num_bins=0)
    with pytest.raises(ValueError, match="Both `num_bins` and `bin_boundaries`"):
        L.Discretization(bin_boundaries=[1.0], num_bins=3)


def test_normalization_matches_tf_and_adapt_is_tf2_only():
    n = L.Normalization()
    y = n(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert [(w.name, w.shape.as_list(), w.dtype.base_dtype, w.trainable) for w in n.weights] \
        == [("normalization/mean:0", [2], tf.float32, False),
            ("normalization/variance:0", [2], tf.float32, False),
            ("normalization/count:0", [], tf.int64, False)]
    fixed = L.Normalization(mean=[1.0, 2.0], variance=[4.0, 16.0])
    yf = fixed(tf.constant([[3.0, 6.0]]))
    inv = L.Normalization(invert=True, mean=1.0, variance=4.0)(tf.constant([[3.0, 6.0]]))
    x = tf.placeholder(tf.float32, [None, 3])
    zero_var = L.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 0.0])(x)
    got = _run([y, yf, inv, zero_var], {x: [[2.0, 4.0, 4.0]]})
    assert got[0].tolist() == [[1, 2], [3, 4]]
    assert got[1].tolist() == [[1, 1]] and got[2].tolist() == [[7, 13]]
    np.testing.assert_allclose(got[3], [[1.0, 1.0, 1e7]], rtol=1e-6)
    assert fixed.weights == [] and fixed.get_config()["mean"] == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="`adapt` is only supported in tensorflow v2"):
        n.adapt(np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match="`adapt` is only supported in tensorflow v2"):
        L.Discretization(num_bins=3).adapt(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="both `mean` and `variance` must be set"):
        L.Normalization(mean=1.0)
    # the statistics load with set_weights, as from a file
    n.set_weights([np.array([1.0, 2.0]), np.array([4.0, 4.0]), np.array(3)])
    np.testing.assert_allclose(tf.keras.backend.get_session().run(y), [[0, 0], [1, 1]])


# -- DenseFeatures ----------------------------------------------------------------------------
def _columns():
    return [fc.numeric_column("price"),
            fc.embedding_column(fc.categorical_column_with_vocabulary_list(
                "color", ["r", "g", "b"]), 2),
            fc.indicator_column(fc.categorical_column_with_identity("size", 3)),
            fc.bucketized_column(fc.numeric_column("age"), [10.0, 20.0])]


def test_dense_features_matches_tf_directly_and_in_a_model():
    tf.set_random_seed(1)
    feats = {"price": tf.constant([[1.0], [2.0]]), "color": tf.constant([["r"], ["b"]]),
             "size": tf.constant([[0], [2]]), "age": tf.constant([[5.0], [25.0]])}
    layer = L.DenseFeatures(_columns())
    y = layer(feats)
    assert (layer.name, y.name, y.shape.as_list()) == ("dense_features",
                                                       "dense_features/concat:0", [2, 9])
    assert [(w.name, w.shape.as_list()) for w in layer.weights] == [
        ("dense_features/color_embedding/embedding_weights:0", [3, 2])]
    np.testing.assert_allclose(_run(y), [
        [1, 0, 0, 0.2158, 0.401, 1, 1, 0, 0], [0, 0, 1, -0.6313, -0.4914, 2, 0, 0, 1]],
        atol=1e-4)
    keys = ["price", "color", "size", "age"]
    inputs = {"price": tf.keras.Input((1,), name="price"),
              "color": tf.keras.Input((1,), name="color", dtype=tf.string),
              "size": tf.keras.Input((1,), name="size", dtype=tf.int64),
              "age": tf.keras.Input((1,), name="age")}
    h = L.DenseFeatures(_columns(), name="feat")(inputs)
    out = L.Dense(1, kernel_initializer="ones")(h)
    model = tf.keras.Model([inputs[k] for k in keys], out)
    model.compile("sgd", "mse")
    assert [w.name for w in model.weights] == ["feat/color_embedding/embedding_weights:0",
                                               "dense/kernel:0", "dense/bias:0"]
    tf.keras.backend.get_session().run(tf.tables_initializer())
    data = {"price": np.array([[1.0], [2.0]]), "color": np.array([["r"], ["b"]]),
            "size": np.array([[0], [2]]), "age": np.array([[5.0], [25.0]])}
    pred = model.predict([data[k] for k in keys])
    assert pred.shape == (2, 1)
    with pytest.raises(ValueError, match="We expected a dictionary"):
        L.DenseFeatures(_columns())(tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="must be a DenseColumn"):
        L.DenseFeatures([fc.categorical_column_with_identity("size", 3)])


# -- saving -----------------------------------------------------------------------------------
_BUILD = textwrap.dedent("""
    import numpy as np, flowgraph as tf
    L = tf.keras.layers
    x = tf.keras.Input((5, 3))
    h = L.RNN([L.LSTMCell(4), L.GRUCell(3, reset_after=True)], return_sequences=True)(x)
    h = L.Bidirectional(L.RNN(L.SimpleRNNCell(2), return_sequences=True))(h)
    a = L.MultiHeadAttention(num_heads=2, key_dim=3)(h, h)
    a = L.Attention(use_scale=True)([a, h])
    a = L.AdditiveAttention()([a, h])
    e = L.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d")(a)
    e = L.Normalization(mean=[0.0] * 6, variance=[4.0] * 6)(e)
    e = L.Rescaling(2.0, offset=0.5)(e)
    y = L.LSTM(2)(e)
    img = tf.keras.Input((2, 6, 6, 1))
    c = L.ConvLSTM2D(2, 3)(img)
    c = L.CenterCrop(2, 2)(c)
    c = L.Flatten()(L.Resizing(3, 3)(c))
    ids = tf.keras.Input((2,), dtype="int32")
    hashed = L.Hashing(4, output_mode="multi_hot")(ids)
    out = L.Concatenate()([y, c, L.CategoryEncoding(5)(ids), hashed])
    model = tf.keras.Model([x, img, ids], out)
    model.compile("sgd", "mse")
    rng = np.random.RandomState(0)
    data = [rng.randn(2, 5, 3).astype("f"), rng.randn(2, 2, 6, 6, 1).astype("f"),
            np.array([[1, 2], [4, 4]], "int32")]
""")


@pytest.mark.slow
def test_hdf5_save_and_load_in_a_fresh_process(tmp_path):
    path = str(tmp_path / "m.h5")
    save = _BUILD + textwrap.dedent(f"""
        model.fit(data, np.zeros((2, 29), "f"), epochs=1, verbose=0)
        np.save({path!r} + ".npy", model.predict(data))
        model.save({path!r})
    """)
    load = textwrap.dedent(f"""
        import numpy as np, flowgraph as tf
        model = tf.keras.models.load_model({path!r})
        rng = np.random.RandomState(0)
        data = [rng.randn(2, 5, 3).astype("f"), rng.randn(2, 2, 6, 6, 1).astype("f"),
                np.array([[1, 2], [4, 4]], "int32")]
        print(float(np.abs(model.predict(data) - np.load({path!r} + ".npy")).max()))
        print(model.layers[1].__class__.__name__, type(model.get_layer("rnn").cell).__name__)
    """)
    subprocess.run([sys.executable, "-c", save], check=True, capture_output=True, text=True)
    out = subprocess.run([sys.executable, "-c", load], check=True, capture_output=True,
                         text=True).stdout.split("\n")
    assert float(out[0]) == 0.0
    assert out[1].split()[1] == "StackedRNNCells"


# -- TF1-era programs (/tmp/s16/wild/kl2_prog_*.py): trained losses equal TF 2.15's --------
def test_program_masked_stacked_rnn_classifier_trains_as_tf():
    tf.set_random_seed(42)
    rng = np.random.RandomState(0)
    vocab, maxlen = 30, 8
    x = rng.randint(1, vocab, size=(64, maxlen))
    for i, n in enumerate(rng.randint(3, maxlen + 1, size=64)):
        x[i, n:] = 0
    y = (x[:, 0] > vocab // 2).astype(np.float32)
    g = dict(recurrent_initializer="glorot_uniform")
    inp = L.Input((maxlen,))
    h = L.Masking(mask_value=0.0)(L.Embedding(vocab, 6)(inp))
    h = L.RNN([L.LSTMCell(8, **g), L.GRUCell(4, **g)])(h)
    model = tf.keras.Model(inp, L.Dense(1, activation="sigmoid")(h))
    model.compile(tf.train.AdamOptimizer(0.01), "binary_crossentropy", metrics=["accuracy"])
    hist = model.fit(x.astype(np.float32), y, batch_size=16, epochs=3, shuffle=False,
                     verbose=0)
    np.testing.assert_allclose(hist.history["loss"], [0.692, 0.686, 0.681], atol=1e-3)
    np.testing.assert_allclose(model.predict(x[:4].astype(np.float32)).ravel(),
                               [0.419, 0.416, 0.415, 0.426], atol=1e-3)


def test_program_transformer_block_trains_as_tf():
    tf.set_random_seed(3)
    rng = np.random.RandomState(2)
    x = rng.randn(48, 6, 8).astype(np.float32)
    y = (x[:, :, 0].mean(1) > 0).astype(np.int32)
    inp = L.Input((6, 8))
    att, scores = L.MultiHeadAttention(num_heads=2, key_dim=4, name="mha")(
        inp, inp, return_attention_scores=True)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([inp, att]))
    ffn = L.EinsumDense("abc,cd->abd", output_shape=(None, 8), bias_axes="d",
                        activation="relu")(h)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([h, ffn]))
    out = L.Dense(2, activation="softmax")(L.GlobalAveragePooling1D()(h))
    model = tf.keras.Model(inp, out)
    model.compile(tf.train.GradientDescentOptimizer(0.1), "sparse_categorical_crossentropy")
    hist = model.fit(x, y, batch_size=12, epochs=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(hist.history["loss"], [0.6431, 0.529, 0.4555, 0.3978],
                               atol=1e-4)
    np.testing.assert_allclose(tf.keras.Model(inp, scores).predict(x[:1])[0, 0, 0],
                               [0.188, 0.1517, 0.2301, 0.1591, 0.1684, 0.1027], atol=1e-4)


def test_program_user_cell_and_cudnn_layers():
    class MinimalRNNCell(L.AbstractRNNCell):
        def __init__(self, units, **kwargs):
            self.units = units
            super().__init__(**kwargs)

        @property
        def state_size(self):
            return self.units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                          initializer="uniform", name="kernel")
            self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                    initializer="uniform",
                                                    name="recurrent_kernel")

        def call(self, inputs, states):
            out = tf.keras.backend.dot(inputs, self.kernel) + \
                tf.keras.backend.dot(states[0], self.recurrent_kernel)
            return out, out

    tf.set_random_seed(1)
    x = L.Input((None, 5))
    layer = L.RNN(MinimalRNNCell(3), return_sequences=True, return_state=True)
    seq, state = layer(x)
    assert state.shape.as_list() == [None, 3]
    model = tf.keras.Model(x, L.Dense(1)(seq))
    model.compile("sgd", "mse")
    data = np.random.RandomState(6).randn(8, 4, 5).astype(np.float32)
    assert [w.name for w in layer.weights] == ["rnn/minimal_rnn_cell/kernel:0",
                                               "rnn/minimal_rnn_cell/recurrent_kernel:0"]
    hist = model.fit(data, np.ones((8, 4, 1), np.float32), epochs=3, verbose=0,
                     shuffle=False)
    np.testing.assert_allclose(hist.history["loss"], [1.1095, 1.0362, 0.9699], atol=1e-4)
    # CuDNN layers: TF's weights and config, a CudnnRNNV2 op with no kernel on this machine
    seq_in = L.Input((10, 4))
    h = L.Bidirectional(L.CuDNNLSTM(8, return_sequences=True))(seq_in)
    gru = L.CuDNNGRU(4)
    out = gru(h)
    assert [(w.name, w.shape.as_list()) for w in gru.weights] == [
        ("cu_dnngru/kernel:0", [16, 12]), ("cu_dnngru/recurrent_kernel:0", [4, 12]),
        ("cu_dnngru/bias:0", [24])]
    assert out.shape.as_list() == [None, 4]
    lstm = L.CuDNNLSTM(4, return_state=True)
    assert sorted(lstm.get_config()) == sorted([
        "activity_regularizer", "bias_constraint", "bias_initializer", "bias_regularizer",
        "dtype", "go_backwards", "kernel_constraint", "kernel_initializer",
        "kernel_regularizer", "name", "recurrent_constraint", "recurrent_initializer",
        "recurrent_regularizer", "return_sequences", "return_state", "stateful",
        "time_major", "trainable", "unit_forget_bias", "units"])
    assert len(tf.gradients(tf.reduce_sum(out), gru.weights)) == 3
    lstm(tf.zeros([2, 3, 4]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # unit_forget_bias: the recurrent forget gate's bias (units 20..23 of 32) is 1
        assert sess.run(lstm.bias).tolist() == [0.0] * 20 + [1.0] * 4 + [0.0] * 8
        with pytest.raises(tf.errors.InvalidArgumentError, match="CudnnRNNV2"):
            sess.run(out, {seq_in: np.zeros((2, 10, 4), np.float32)})


def test_a_tf_written_hdf5_model_loads_and_predicts_as_tf():
    # tests/data/keras_h5/make_gapfill2_fixture.py, run under TF 2.15
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "data", "keras_h5",
                        "gapfill2_layers.h5")
    model = tf.keras.models.load_model(path)
    rng = np.random.RandomState(0)
    data = [rng.randn(2, 5, 3).astype("f"), rng.randn(2, 2, 6, 6, 1).astype("f"),
            np.array([[1, 2], [4, 4]], "int32")]
    got = model.predict(data)
    np.testing.assert_allclose(got[0, :8], [0.1149, 0.0417, -0.152, -0.049, 0.0084, -0.0722,
                                            0.1688, -0.0953], atol=1e-4)
    np.testing.assert_allclose(got[1, 15:20], [-0.3341, 0.12, -0.1431, 0.22, 0.0479],
                               atol=1e-4)
    assert got[:, 20:].tolist() == [[0, 1, 1, 0, 0, 0, 1, 0, 1], [0, 0, 0, 0, 1, 0, 0, 0, 1]]
    assert type(model.get_layer("rnn").cell).__name__ == "StackedRNNCells"


def test_dropout_and_recurrent_dropout_draw_tfs_masks():
    # TF 2.15 with a graph seed: one mask per gate per call (implementation 1), the
    # first only for implementation 2 (which LSTM/GRU fall back from under
    # recurrent_dropout); the inference outputs are the undropped ones
    tf.set_random_seed(1)
    x = tf.constant(_X)
    outs = []
    for impl in (1, 2):
        for layer in (L.LSTM(2, dropout=0.5, recurrent_dropout=0.3 * (impl == 1),
                             implementation=impl, **_const_inits()),
                      L.GRU(2, dropout=0.5, recurrent_dropout=0.3 * (impl == 1),
                            implementation=impl, **_const_inits()),
                      L.SimpleRNN(2, dropout=0.5, recurrent_dropout=0.3, **_const_inits())):
            outs.append((layer(x, training=False), layer(x, training=True)))
    got = _run(outs)
    want_train = [[-0.0338, 0.0], [-0.1172, 0.0], [-0.0003, 0.0], [-0.063, 0.1925],
                  [-0.0594, 0.0], [-0.0315, 0.2624]]
    want_infer = [[-0.0548, 0.1303], [-0.0682, 0.175], [-0.0064, 0.2092]] * 2
    for (infer, train), wi, wt in zip(got, want_infer, want_train, strict=True):
        np.testing.assert_allclose(infer[:, 0], wi, atol=1e-4)
        np.testing.assert_allclose(train[:, 0], wt, atol=1e-4)
    assert L.LSTM(2, dropout=0.5, recurrent_dropout=0.1, implementation=2).implementation == 1


def test_dropout_in_reset_after_gru_and_stacked_cells_matches_tf():
    tf.set_random_seed(1)
    x = tf.constant(_X)
    k = dict(**_const_inits(), bias_initializer="ones")
    g = dict(recurrent_initializer="glorot_uniform")
    outs = []
    for impl in (1, 2):
        gru = L.GRU(2, dropout=0.4, recurrent_dropout=0.2 * (impl == 1), implementation=impl,
                    reset_after=True, **k)
        rnn = L.RNN([L.LSTMCell(3, dropout=0.3, recurrent_dropout=0.3, **g),
                     L.GRUCell(2, dropout=0.2, **g)])
        outs.append((gru(x, training=True), rnn(x, training=True), rnn(x, training=False)))
    got = _run(outs)
    np.testing.assert_allclose(got[0][0][:, 0], [0.4575, 0.3086], atol=1e-4)
    np.testing.assert_allclose(got[0][1], [[0.0296, -0.0514], [-0.0099, 0.0093]], atol=1e-4)
    np.testing.assert_allclose(got[0][2], [[0.0347, -0.0104], [0.0289, 0.0137]], atol=1e-4)
    np.testing.assert_allclose(got[1][0][:, 0], [0.4364, 0.2008], atol=1e-4)
    np.testing.assert_allclose(got[1][1], [[0.0, 0.0], [-0.0776, -0.027]], atol=1e-4)
    np.testing.assert_allclose(got[1][2], [[0.0226, 0.0999], [-0.1036, -0.1109]], atol=1e-4)


def test_masks_propagate_through_recurrent_and_attention_layers():
    x = L.Input((None, 3))
    masked = L.Masking()(x)
    seq = L.LSTM(2, return_sequences=True)(masked)
    last = L.LSTM(2)(seq)
    both = L.Bidirectional(L.GRU(2, return_sequences=True))(masked)
    att = L.MultiHeadAttention(num_heads=2, key_dim=2)(both, both)
    assert seq._keras_mask is not None and both._keras_mask is not None
    assert getattr(last, "_keras_mask", None) is None and att._keras_mask is not None
    model = tf.keras.Model(x, [last, att])
    data = np.zeros((1, 4, 3), np.float32)
    data[0, :2] = 1.0  # two real steps, two masked
    short = model.predict(data[:, :2])
    full = model.predict(data)
    np.testing.assert_allclose(full[0], short[0], atol=1e-6)  # masked steps change nothing


# TF 2.15 (/tmp/s16/wild/kl2_probe12.py): sums and first values of the three outputs
TF_CONV_LSTM_DROPOUT = ([0.7271, -0.4158, 0.0877],
                        [[0.019, -0.0255, 0.0454, 0.0231], [0.0446, -0.2666, -0.0761, -0.1535],
                         [-0.078, 0.0167, 0.0664, -0.145]])


def test_conv_lstm_dropout_draws_tfs_masks():
    tf.set_random_seed(4)
    rng = np.random.RandomState(0)
    x = tf.constant(rng.randn(2, 3, 5, 4, 2).astype(np.float32) * 0.5)
    g = dict(recurrent_initializer="glorot_uniform")
    c = L.ConvLSTM2D(3, 3, padding="same", dropout=0.3, recurrent_dropout=0.2, **g)
    c1 = L.ConvLSTM1D(2, 3, dropout=0.4, **g)
    y = [c(x, training=True), c1(x[:, :, :, 0], training=True)]
    c2 = L.ConvLSTM2D(3, 3, padding="same", dropout=0.3, recurrent_dropout=0.2, **g)
    y.append(c2(x, training=False))
    got = _run(y)
    for value, total, first in zip(got, TF_CONV_LSTM_DROPOUT[0], TF_CONV_LSTM_DROPOUT[1],
                                   strict=True):
        assert abs(float(value.sum()) - total) < 1e-3
        np.testing.assert_allclose(value.ravel()[:4], first, atol=1e-4)
    assert (c.get_config()["dropout"], c.get_config()["recurrent_dropout"]) == (0.3, 0.2)


def test_a_tf_written_multi_head_attention_model_loads():
    # TF writes the attention's `value` as a node keyword argument naming a tensor
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "data", "keras_h5",
                        "gapfill2_mha.h5")
    model = tf.keras.models.load_model(path)
    rng = np.random.RandomState(0)
    data = [rng.randn(2, 3, 4).astype("f"), rng.randn(2, 5, 4).astype("f")]
    np.testing.assert_allclose(model.predict(data)[0], [
        [0.0021, 0.0008, 0.013, 0.008], [0.0077, 0.0077, -0.0445, -0.0232],
        [0.0081, 0.0072, -0.0284, -0.0139]], atol=1e-4)
