"""The rest of `tf.contrib.rnn`: `LayerNormBasicLSTMCell`, `GRUBlockCellV2`,
`LSTMBlockCell`, `UGRNNCell`, `HighwayWrapper`, `AttentionCellWrapper` and
`stack_bidirectional_(dynamic_)rnn`, checked against NumPy step by step (TF 2.15 has no
contrib; the variable names are TF 1.15 contrib's)."""

import doctest
import importlib

import numpy as np
import pytest

import flowgraph as tf

MODULES = ["flowgraph.contrib.rnn", "flowgraph.contrib.rnn_extra", "flowgraph.contrib.rnn_cells"]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _run_steps(cell, x, init):
    """Unrolled cell over ``x [batch, time, depth]``; returns outputs, state, variables."""
    with tf.Graph().as_default():
        out, state = tf.nn.dynamic_rnn(cell, tf.constant(x), initial_state=init,
                                       dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            variables = {v.name: sess.run(v) for v in tf.global_variables()}
            out, state = sess.run([out, state])
    return out, state, variables


def _layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def test_layer_norm_basic_lstm_cell_against_numpy():
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3, 4).astype(np.float32)
    out, state, v = _run_steps(tf.contrib.rnn.LayerNormBasicLSTMCell(5, norm_gain=1.5,
                                                                    norm_shift=0.2), x, None)
    p = "rnn/layer_norm_basic_lstm_cell/"
    assert sorted(v) == sorted([p + "kernel:0"] + [f"{p}{g}/{w}:0" for g in (
        "input", "transform", "forget", "output", "state") for w in ("gamma", "beta")])
    np.testing.assert_allclose(v[p + "input/gamma:0"], 1.5)
    np.testing.assert_allclose(v[p + "state/beta:0"], 0.2)
    c = h = np.zeros((2, 5), np.float32)

    def ln(t, g):
        return _layer_norm(t, v[f"{p}{g}/gamma:0"], v[f"{p}{g}/beta:0"])

    for t in range(3):
        z = np.concatenate([x[:, t], h], 1) @ v[p + "kernel:0"]
        i, j, f, o = np.split(z, 4, 1)
        i, j, f, o = ln(i, "input"), ln(j, "transform"), ln(f, "forget"), ln(o, "output")
        c = ln(c * _sigmoid(f + 1.0) + _sigmoid(i) * np.tanh(j), "state")
        h = np.tanh(c) * _sigmoid(o)
        np.testing.assert_allclose(out[:, t], h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state.c, c, rtol=1e-4, atol=1e-5)


def test_layer_norm_basic_lstm_without_norm_and_dropout():
    with tf.Graph().as_default():
        cell = tf.contrib.rnn.LayerNormBasicLSTMCell(3, layer_norm=False,
                                                     dropout_keep_prob=0.5)
        out, _ = cell(tf.ones([2, 4]), cell.zero_state(2, tf.float32))
        assert [v.name for v in tf.global_variables()] == [
            "layer_norm_basic_lstm_cell/kernel:0", "layer_norm_basic_lstm_cell/bias:0"]
        assert out.shape.as_list() == [2, 3]


def test_block_cells_equal_core_cells():
    x = np.random.RandomState(1).randn(2, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        with tf.variable_scope("a", initializer=tf.random_normal_initializer(seed=3)):
            o1, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.GRUBlockCellV2(4), x, dtype=tf.float32)
        with tf.variable_scope("b", initializer=tf.random_normal_initializer(seed=3)):
            o2, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), x, dtype=tf.float32)
        with tf.variable_scope("c", initializer=tf.random_normal_initializer(seed=4)):
            o3, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.LSTMBlockCell(4), x, dtype=tf.float32)
        with tf.variable_scope("d", initializer=tf.random_normal_initializer(seed=4)):
            o4, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), x, dtype=tf.float32)
        names = [v.name for v in tf.global_variables()]
        assert names[:4] == ["a/rnn/gru_cell/gates/kernel:0", "a/rnn/gru_cell/gates/bias:0",
                             "a/rnn/gru_cell/candidate/kernel:0",
                             "a/rnn/gru_cell/candidate/bias:0"]
        assert "c/rnn/lstm_cell/kernel:0" in names and "c/rnn/lstm_cell/bias:0" in names
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o1, o2, o3, o4 = sess.run([o1, o2, o3, o4])
    np.testing.assert_allclose(o1, o2, rtol=1e-6)
    np.testing.assert_allclose(o3, o4, rtol=1e-6)


def test_ugrnn_cell_against_numpy():
    x = np.random.RandomState(2).randn(3, 4, 2).astype(np.float32)
    out, state, v = _run_steps(tf.contrib.rnn.UGRNNCell(3, forget_bias=0.5), x, None)
    k, b = v["rnn/ugrnn_cell/kernel:0"], v["rnn/ugrnn_cell/bias:0"]
    assert k.shape == (5, 6) and not b.any()
    h = np.zeros((3, 3), np.float32)
    for t in range(4):
        g_act, c_act = np.split(np.concatenate([x[:, t], h], 1) @ k + b, 2, 1)
        g = _sigmoid(g_act + 0.5)
        h = g * h + (1 - g) * np.tanh(c_act)
        np.testing.assert_allclose(out[:, t], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state, h, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("coupled", [True, False])
def test_highway_wrapper_against_numpy(coupled):
    x = np.random.RandomState(3).randn(2, 3, 4).astype(np.float32)
    cell = tf.contrib.rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(4),
                                         couple_carry_transform_gates=coupled,
                                         carry_bias_init=0.5)
    out, _, v = _run_steps(cell, x, None)
    assert v["rnn/carry_b:0"].tolist() == [0.5] * 4
    if not coupled:
        assert v["rnn/transform_b:0"].tolist() == [-0.5] * 4
    h = np.zeros((2, 4), np.float32)
    for t in range(3):
        h = np.tanh(np.concatenate([x[:, t], h], 1) @ v["rnn/basic_rnn_cell/kernel:0"]
                    + v["rnn/basic_rnn_cell/bias:0"])
        carry = _sigmoid(x[:, t] @ v["rnn/carry_w:0"] + v["rnn/carry_b:0"])
        transform = 1 - carry if coupled else \
            _sigmoid(x[:, t] @ v["rnn/transform_w:0"] + v["rnn/transform_b:0"])
        np.testing.assert_allclose(out[:, t], x[:, t] * carry + h * transform, rtol=1e-5,
                                   atol=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="HighwayWrapper"):
            tf.contrib.rnn.HighwayWrapper(tf.nn.rnn_cell.GRUCell(3))(tf.ones([2, 4]),
                                                                     tf.zeros([2, 3]))


def test_attention_cell_wrapper_against_numpy():
    x = np.random.RandomState(4).randn(2, 4, 3).astype(np.float32)
    cell = tf.contrib.rnn.AttentionCellWrapper(tf.nn.rnn_cell.GRUCell(5), attn_length=2,
                                               attn_vec_size=6)
    out, state, v = _run_steps(cell, x, None)
    p = "rnn/attention_cell_wrapper/"
    assert v[p + "attention/attn_w:0"].shape == (1, 1, 5, 6)
    gk, gb = v[p + "gru_cell/gates/kernel:0"], v[p + "gru_cell/gates/bias:0"]
    ck, cb = v[p + "gru_cell/candidate/kernel:0"], v[p + "gru_cell/candidate/bias:0"]
    h = np.zeros((2, 5), np.float32)
    attns = np.zeros((2, 5), np.float32)
    window = np.zeros((2, 2, 5), np.float32)
    for t in range(4):
        inp = np.concatenate([x[:, t], attns], 1) @ v[p + "kernel:0"] + v[p + "bias:0"]
        r, u = np.split(_sigmoid(np.concatenate([inp, h], 1) @ gk + gb), 2, 1)
        c = np.tanh(np.concatenate([inp, r * h], 1) @ ck + cb)
        h = u * h + (1 - u) * c
        feats = window @ v[p + "attention/attn_w:0"][0, 0]
        y = h @ v[p + "attention/kernel:0"] + v[p + "attention/bias:0"]
        s = (v[p + "attention/attn_v:0"] * np.tanh(feats + y[:, None])).sum(-1)
        a = np.exp(s - s.max(1, keepdims=True))
        a /= a.sum(1, keepdims=True)
        attns = (a[:, :, None] * window).sum(1)
        output = np.concatenate([h, attns], 1) @ v[p + "attn_output_projection/kernel:0"] \
            + v[p + "attn_output_projection/bias:0"]
        window = np.concatenate([window[:, 1:], output[:, None]], 1)
        np.testing.assert_allclose(out[:, t], output, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state[2], window.reshape(2, -1), rtol=1e-4, atol=1e-5)


def test_stack_bidirectional_dynamic_rnn():
    x = np.random.RandomState(5).randn(3, 4, 2).astype(np.float32)
    lengths = np.array([4, 2, 3], np.int32)
    with tf.Graph().as_default():
        def cells(n):
            return [tf.nn.rnn_cell.GRUCell(n), tf.nn.rnn_cell.GRUCell(n + 1)]

        out, fw, bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
            cells(3), cells(3), tf.constant(x), sequence_length=lengths, dtype=tf.float32)
        assert out.shape.as_list() == [3, 4, 8]
        assert len(fw) == len(bw) == 2
        names = [v.name for v in tf.global_variables()]
        assert names[0] == "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/" \
                           "gates/kernel:0"
        assert "stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/gru_cell/candidate/" \
               "bias:0" in names
        # the same network built from bidirectional_dynamic_rnn calls
        layer = tf.constant(x)
        for i, (cf, cb) in enumerate(zip(cells(3), cells(3))):
            with tf.variable_scope(f"stack_bidirectional_rnn/cell_{i}", reuse=True):
                outs, _ = tf.nn.bidirectional_dynamic_rnn(cf, cb, layer, lengths,
                                                          dtype=tf.float32)
                layer = tf.concat(outs, 2)
        static, _, _ = tf.contrib.rnn.stack_bidirectional_rnn(
            cells(3), cells(3), tf.unstack(tf.constant(x), axis=1), sequence_length=lengths,
            dtype=tf.float32, scope="stack_bidirectional_rnn_static")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b, f1 = sess.run([out, layer, fw[1]])
            st = sess.run(static)
    np.testing.assert_allclose(a, b, rtol=1e-6)
    assert not a[1, 2:].any()  # past the length
    assert f1.shape == (3, 4)
    assert len(st) == 4 and st[0].shape == (3, 8)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="at least one fw cell"):
            tf.contrib.rnn.stack_bidirectional_dynamic_rnn([], [], tf.ones([1, 2, 3]))
        with pytest.raises(ValueError, match="same depth"):
            tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
                cells(2), cells(2)[:1], tf.ones([1, 2, 3]), dtype=tf.float32)


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{module}: {result}"


def _np_layer_norm(x, gamma=1.0, beta=0.0):
    return _layer_norm(x, gamma, beta)


@pytest.mark.parametrize("num_proj,use_biases", [(None, False), (2, True)])
def test_nas_cell_against_numpy(num_proj, use_biases):
    x = np.random.RandomState(6).randn(2, 3, 3).astype(np.float32)
    out, state, v = _run_steps(tf.contrib.rnn.NASCell(4, num_proj=num_proj,
                                                      use_biases=use_biases), x, None)
    p = "rnn/nas_cell/"
    names = ["recurrent_kernel", "kernel"] + (["bias"] if use_biases else []) + \
        (["projection_weights"] if num_proj else [])
    assert sorted(v) == sorted(p + n + ":0" for n in names)
    relu = lambda t: np.maximum(t, 0)  # noqa: E731
    c = np.zeros((2, 4), np.float32)
    m = np.zeros((2, num_proj or 4), np.float32)
    for t in range(3):
        mm = m @ v[p + "recurrent_kernel:0"] + (v[p + "bias:0"] if use_biases else 0)
        xm = x[:, t] @ v[p + "kernel:0"]
        ms, xs = np.split(mm, 8, 1), np.split(xm, 8, 1)
        l1 = [_sigmoid(xs[0] + ms[0]), relu(xs[1] + ms[1]), _sigmoid(xs[2] + ms[2]),
              relu(xs[3] * ms[3]), np.tanh(xs[4] + ms[4]), _sigmoid(xs[5] + ms[5]),
              np.tanh(xs[6] + ms[6]), _sigmoid(xs[7] + ms[7])]
        c = np.tanh(np.tanh(l1[0] * l1[1]) + c) * np.tanh(l1[2] + l1[3])
        m = np.tanh(c * np.tanh(np.tanh(l1[4] * l1[5]) + _sigmoid(l1[6] + l1[7])))
        if num_proj:
            m = m @ v[p + "projection_weights:0"]
        np.testing.assert_allclose(out[:, t], m, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state.c, c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("peep,proj,norm", [(False, None, False), (True, 2, False),
                                            (False, None, True)])
def test_coupled_input_forget_gate_lstm_against_numpy(peep, proj, norm):
    x = np.random.RandomState(7).randn(2, 3, 3).astype(np.float32)
    cell = tf.contrib.rnn.CoupledInputForgetGateLSTMCell(4, use_peepholes=peep, num_proj=proj,
                                                         layer_norm=norm, forget_bias=0.5)
    out, _, v = _run_steps(cell, x, None)
    p = "rnn/coupled_input_forget_gate_lstm_cell/"
    assert p + "W_0:0" in v and p + "B:0" in v
    assert (p + "W_F_diag:0" in v) == peep and (p + "W_P_0:0" in v) == bool(proj)
    c = np.zeros((2, 4), np.float32)
    m = np.zeros((2, proj or 4), np.float32)
    for t in range(3):
        z = np.concatenate([x[:, t], m], 1) @ v[p + "W_0:0"]
        if not norm:
            z = z + v[p + "B:0"]
        j, f, o = np.split(z, 3, 1)
        if norm:
            j, f, o = _np_layer_norm(j), _np_layer_norm(f), _np_layer_norm(o)
        f_act = _sigmoid(f + 0.5 + (v[p + "W_F_diag:0"] * c if peep else 0))
        c = f_act * c + (1 - f_act) * np.tanh(j)
        if norm:
            c = _np_layer_norm(c)
        m = _sigmoid(o + (v[p + "W_O_diag:0"] * c if peep else 0)) * np.tanh(c)
        if proj:
            m = m @ v[p + "W_P_0:0"]
        np.testing.assert_allclose(out[:, t], m, rtol=1e-4, atol=1e-5)


def test_intersection_rnn_and_layer_norm_gru_against_numpy():
    x = np.random.RandomState(8).randn(2, 3, 3).astype(np.float32)
    out, _, v = _run_steps(tf.contrib.rnn.IntersectionRNNCell(4, num_in_proj=4), x, None)
    p = "rnn/intersection_rnn_cell/"
    h = np.zeros((2, 4), np.float32)
    for t in range(3):
        inp = x[:, t] @ v[p + "in_projection/kernel:0"] + v[p + "in_projection/bias:0"]
        z = np.concatenate([inp, h], 1) @ v[p + "kernel:0"] + v[p + "bias:0"]
        gh, hh, gy, yy = np.split(z, 4, 1)
        gh, gy = _sigmoid(gh + 1.0), _sigmoid(gy + 1.0)
        h = gh * h + (1 - gh) * np.tanh(hh)
        np.testing.assert_allclose(out[:, t], gy * inp + (1 - gy) * np.maximum(yy, 0),
                                   rtol=1e-4, atol=1e-5)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_in_proj should be set"):
            cell = tf.contrib.rnn.IntersectionRNNCell(4)
            cell(tf.ones([2, 3]), cell.zero_state(2, tf.float32))

    out, _, v = _run_steps(tf.contrib.rnn.LayerNormBasicGRUCell(4), x, None)
    p = "rnn/layer_norm_basic_gru_cell/"
    assert v[p + "update_gate/kernel:0"].shape == (7, 4)
    assert v[p + "candidate_linear_h/kernel:0"].shape == (4, 4)
    h = np.zeros((2, 4), np.float32)
    for t in range(3):
        args = np.concatenate([x[:, t], h], 1)
        z = _sigmoid(_np_layer_norm(args @ v[p + "update_gate/kernel:0"]))
        r = _sigmoid(_np_layer_norm(args @ v[p + "reset_gate/kernel:0"]))
        cand = np.tanh(_np_layer_norm(x[:, t] @ v[p + "candidate_linear_x/kernel:0"])
                       + r * _np_layer_norm(h @ v[p + "candidate_linear_h/kernel:0"]))
        h = (1 - z) * h + z * cand
        np.testing.assert_allclose(out[:, t], h, rtol=1e-4, atol=1e-5)


def _conv2d_same(x, k):
    """``SAME`` stride-1 2-D convolution in NumPy: x [b, h, w, c], k [kh, kw, c, o]."""
    kh, kw = k.shape[:2]
    top, left = (kh - 1) // 2, (kw - 1) // 2
    xp = np.pad(x, [(0, 0), (top, kh - 1 - top), (left, kw - 1 - left), (0, 0)])
    out = np.zeros((*x.shape[:3], k.shape[3]), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += xp[:, i:i + x.shape[1], j:j + x.shape[2]] @ k[i, j]
    return out


def test_conv2d_lstm_cell_against_numpy():
    x = np.random.RandomState(9).randn(2, 3, 5, 4, 2).astype(np.float32)
    cell = tf.contrib.rnn.Conv2DLSTMCell(input_shape=[5, 4, 2], output_channels=3,
                                         kernel_shape=[3, 2])
    assert cell.output_size.as_list() == [5, 4, 3]
    out, state, v = _run_steps(cell, x, None)
    assert sorted(v) == ["rnn/conv_lstm_cell/biases:0", "rnn/conv_lstm_cell/kernel:0"]
    k, b = v["rnn/conv_lstm_cell/kernel:0"], v["rnn/conv_lstm_cell/biases:0"]
    assert k.shape == (3, 2, 5, 12) and not b.any()
    c = np.zeros((2, 5, 4, 3))
    h = np.zeros((2, 5, 4, 3))
    for t in range(3):
        z = _conv2d_same(np.concatenate([x[:, t], h], -1), k) + b
        i, j, f, o = np.split(z, 4, -1)
        c = _sigmoid(f + 1.0) * c + _sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * _sigmoid(o)
        np.testing.assert_allclose(out[:, t], h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state.c, c, rtol=1e-4, atol=1e-5)
    with tf.Graph().as_default():  # skip_connection: the inputs join the output (one step)
        cell = tf.contrib.rnn.Conv2DLSTMCell(input_shape=[5, 4, 2], output_channels=3,
                                             kernel_shape=[3, 2], skip_connection=True)
        assert cell.output_size.as_list() == [5, 4, 5]
        out, _ = cell(tf.ones([2, 5, 4, 2]), cell.zero_state(2, tf.float32))
        assert out.shape.as_list() == [2, 5, 4, 5]
    with pytest.raises(ValueError, match="Invalid input_shape"):
        tf.contrib.rnn.ConvLSTMCell(2, [5, 2], 3, [3])


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_block_fused_cell_equals_lstm_cell(peephole):
    rng = np.random.RandomState(10)
    x = rng.randn(5, 3, 2).astype(np.float32)  # time-major
    lengths = np.array([5, 2, 0], np.int32)
    with tf.Graph().as_default():
        fused = tf.contrib.rnn.LSTMBlockFusedCell(4, use_peephole=peephole)
        f_out, f_state = fused(tf.constant(x), dtype=tf.float32, sequence_length=lengths)
        f_list, _ = fused(tf.unstack(tf.constant(x)), dtype=tf.float32)  # reuses the weights
        names = [v.name for v in tf.global_variables()]
        peeps = ["lstm_fused_cell/w_i_diag:0", "lstm_fused_cell/w_f_diag:0",
                 "lstm_fused_cell/w_o_diag:0"] if peephole else []
        assert names == ["lstm_fused_cell/kernel:0", "lstm_fused_cell/bias:0", *peeps]
        ref = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=peephole)
        r_out, r_state = tf.nn.dynamic_rnn(ref, tf.constant(x), sequence_length=lengths,
                                           dtype=tf.float32, time_major=True)
        ref_vars = {v.name.split("/")[-1]: v for v in ref.variables}
        copies = [tf.assign(ref_vars[v.name.split("/")[-1]], v)
                  for v in tf.global_variables() if v.name.startswith("lstm_fused_cell")]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(copies)
            f_out, f_state, r_out, r_state, f_list = sess.run([f_out, f_state, r_out, r_state,
                                                               f_list])
    np.testing.assert_allclose(f_out, r_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f_state.c, r_state.c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f_state.h, r_state.h, rtol=1e-5, atol=1e-6)
    assert not f_out[2:, 1].any() and not f_state.h[2].any()
    assert len(f_list) == 5
    np.testing.assert_allclose(f_list[1][:2], f_out[1][:2], rtol=1e-5)


def test_fused_adaptor_and_time_reversed_fused_rnn():
    x = np.random.RandomState(11).randn(5, 3, 2).astype(np.float32)  # time-major
    lengths = np.array([5, 3, 1], np.int32)
    with tf.Graph().as_default():
        cell_fw, cell_bw = tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(4)
        (ref_fw, ref_bw), _ = tf.nn.bidirectional_dynamic_rnn(
            cell_fw, cell_bw, tf.constant(x), sequence_length=lengths, dtype=tf.float32,
            time_major=True)
        n_vars = len(tf.global_variables())
        fw = tf.contrib.rnn.FusedRNNCellAdaptor(cell_fw, use_dynamic_rnn=True)
        bw = tf.contrib.rnn.TimeReversedFusedRNN(
            tf.contrib.rnn.FusedRNNCellAdaptor(cell_bw, use_dynamic_rnn=True))
        out_fw, _ = fw(tf.constant(x), dtype=tf.float32, sequence_length=lengths)
        out_bw, _ = bw(tf.constant(x), dtype=tf.float32, sequence_length=lengths)
        static = tf.contrib.rnn.FusedRNNCellAdaptor(cell_fw)(tf.constant(x), dtype=tf.float32,
                                                             sequence_length=lengths)[0]
        assert len(tf.global_variables()) == n_vars  # the cells' weights are shared
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b, c, d, s = sess.run([ref_fw, ref_bw, out_fw, out_bw, static])
    np.testing.assert_allclose(c, a, rtol=1e-6)
    np.testing.assert_allclose(d, b, rtol=1e-6)
    np.testing.assert_allclose(s, a, rtol=1e-5, atol=1e-6)
