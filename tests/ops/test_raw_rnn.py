"""The fused recurrent ops (flowgraph/ops/rnn_block_ops.py): ``LSTMBlockCell``,
``BlockLSTM``, ``BlockLSTMV2``, ``GRUBlockCell`` and their gradient ops, checked against
TensorFlow 2.15's kernels (values printed by the tf-oracle, inline below), gradients
against finite differences through whole sequences (unrolled and in a while loop), the
contrib cells that build them, and a GraphDef TensorFlow wrote with all of them
(tests/data/tf_formats/raw_rnn/, made by the script beside it)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.ops.rnn_block_ops import gru_block_cell, lstm_block_cell

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_rnn")


def _inputs():
    """The oracle script's inputs: uniform values rounded to 2 decimals, float32."""
    rng = np.random.RandomState(7)

    def u(*s):
        return np.round(rng.uniform(-1, 1, s), 2).astype(np.float32)

    x, cs, h = u(2, 2), u(2, 3), u(2, 3)
    w, b, p = u(5, 12), u(12), u(3)
    seq, g = u(3, 2, 2), u(3, 2, 3)
    gru = u(5, 6), u(5, 3), u(6), u(3)
    return x, cs, h, w, b, p, seq, g, gru


# TensorFlow 2.15's values (tf.raw_ops on the inputs above, rounded to 4 decimals).
TF = {
    "cell_cs": [[0.0991, -0.3, -0.0802], [-0.3, -0.1749, -0.3]],
    "cell_h": [[0.0726, -0.0804, -0.0304], [-0.0711, -0.1182, -0.1604]],
    "cellg_csprev": [[-0.0475, 0.148, 0.103], [0.6829, 0.3704, -0.459]],
    "cellg_dicfo": [[0.027, -0.0429, -0.0097, -0.1377, 0.0109, 0.0181, -0.0619, 0.0015, 0.0,
                     -0.0031, 0.0041, 0.0168],
                    [0.0992, 0.0257, 0.128, 0.0625, 0.2138, -0.1585, -0.0737, -0.0759, 0.0,
                     -0.0043, -0.0083, -0.0476]],
    "cellg_wci": [-0.0594, -0.0153, 0.0],
    "cellg_wco": [0.001, 0.0002, 0.0129],
    "blk_h": [[[0.057, -0.0638, 0.4222], [-0.0685, -0.0398, -0.0481]],
              [[0.0477, -0.1768, 0.1839], [-0.1475, -0.0867, 0.0533]],
              [[-0.0064, -0.137, 0.2204], [-0.14, -0.188, -0.0461]]],
    "blk_cs": [[[0.0993, -0.2546, 0.5402], [-0.718, -0.0585, -0.0609]],
               [[0.0966, -0.3702, 0.2907], [-0.6687, -0.2049, 0.0693]],
               [[-0.0124, -0.309, 0.2767], [-0.532, -0.4396, -0.089]]],
    "blkg_x": [[[-0.1784, 0.0685], [-0.8374, -0.0004]], [[-0.9932, -0.027], [0.1563, 0.02]],
               [[-0.7758, 0.1123], [-0.1845, 0.0367]]],
    "blkg_h": [[-0.1074, 0.0336, -0.1879], [-0.4896, -0.6138, 0.2131]],
    "blkg_wcf": [0.1254, -0.01, -0.099],
    "blkg_b": [-0.0558, 0.4394, 0.1281, 0.6566, -0.8993, -2.2871, -0.1412, 0.0551, -0.2125,
               -0.0533, 0.0997, -0.0008],
    "v2_h": [[[0.006, 0.0811, 0.3898], [-0.109, -0.3668, 0.3782]],
             [[0.0091, 0.1641, 0.2647], [-0.0778, -0.2565, 0.2702]],
             [[0.0232, 0.0373, 0.3716], [-0.0356, 0.0162, 0.1392]]],
    "v2g_x": [[[0.083, -0.0327], [-0.4774, -0.0565]], [[-0.7456, -0.1458], [0.8555, 0.2733]],
              [[-0.8391, -0.5194], [-0.412, -0.3635]]],
    "v2g_b": [0.1077, -0.3915, -0.4629, -0.235, -0.0583, -0.2331, 0.8079, -0.9516, -0.6545,
              -0.0021, -0.1891, -0.082],
    "gru_h": [[0.1109, 0.0899, 0.1493], [0.1618, -0.6519, 0.5517]],
    "gru_r": [[0.6907, 0.8905, 0.1346], [0.4957, 0.6261, 0.175]],
    "grug_dx": [[0.2922, -0.6239], [0.0304, -0.2571]],
    "grug_dh": [[0.7374, -1.0877, -0.3243], [0.2646, -0.7021, 0.0183]],
    "grug_ru": [[0.042, -0.0535, 0.0061, 0.0386, -0.2325, 0.1241],
                [-0.076, 0.0553, -0.0353, -0.0482, -0.0937, -0.0223]],
}


def test_kernels_match_tensorflow():
    x, cs, h, w, b, p, X, g, (wru, wc, bru, bc) = _inputs()
    raw = tf.raw_ops
    cell = raw.LSTMBlockCell(x=x, cs_prev=cs, h_prev=h, w=w, wci=p, wcf=-p, wco=p * 2, b=b,
                             forget_bias=0.5, cell_clip=0.3, use_peephole=True)
    cellg = raw.LSTMBlockCellGrad(
        x=x, cs_prev=cs, h_prev=h, w=w, wci=p, wcf=-p, wco=p * 2, b=b, i=cell.i, cs=cell.cs,
        f=cell.f, o=cell.o, ci=cell.ci, co=cell.co, cs_grad=g[0], h_grad=g[1],
        use_peephole=True)
    blk = raw.BlockLSTM(seq_len_max=np.int64(3), x=X, cs_prev=cs, h_prev=h, w=w, wci=p,
                        wcf=-p, wco=p * 2, b=b, forget_bias=1.0, cell_clip=-1.0,
                        use_peephole=True)
    blkg = raw.BlockLSTMGrad(
        seq_len_max=np.int64(3), x=X, cs_prev=cs, h_prev=h, w=w, wci=p, wcf=-p, wco=p * 2,
        b=b, i=blk.i, cs=blk.cs, f=blk.f, o=blk.o, ci=blk.ci, co=blk.co, h=blk.h, cs_grad=g,
        h_grad=g * 0.5, use_peephole=True)
    v2 = raw.BlockLSTMV2(seq_len_max=np.int64(3), x=X, cs_prev=cs, h_prev=h, w=w, wci=p,
                         wcf=p, wco=p, b=b)
    v2g = raw.BlockLSTMGradV2(
        seq_len_max=np.int64(3), x=X, cs_prev=cs, h_prev=h, w=w, wci=p, wcf=p, wco=p, b=b,
        i=v2.i, cs=v2.cs, f=v2.f, o=v2.o, ci=v2.ci, co=v2.co, h=v2.h, cs_grad=g, h_grad=g,
        use_peephole=False)
    gru = raw.GRUBlockCell(x=x, h_prev=h, w_ru=wru, w_c=wc, b_ru=bru, b_c=bc)
    grug = raw.GRUBlockCellGrad(x=x, h_prev=h, w_ru=wru, w_c=wc, b_ru=bru, b_c=bc, r=gru.r,
                                u=gru.u, c=gru.c, d_h=g[2])
    fetch = {"cell_cs": cell.cs, "cell_h": cell.h, "cellg_csprev": cellg.cs_prev_grad,
             "cellg_dicfo": cellg.dicfo, "cellg_wci": cellg.wci_grad,
             "cellg_wco": cellg.wco_grad, "blk_h": blk.h, "blk_cs": blk.cs,
             "blkg_x": blkg.x_grad, "blkg_h": blkg.h_prev_grad, "blkg_wcf": blkg.wcf_grad,
             "blkg_b": blkg.b_grad, "v2_h": v2.h, "v2g_x": v2g.x_grad, "v2g_b": v2g.b_grad,
             "gru_h": gru.h, "gru_r": gru.r, "grug_dx": grug.d_x, "grug_dh": grug.d_h_prev,
             "grug_ru": grug.d_r_bar_u_bar}
    with tf.Session() as sess:
        out = sess.run(fetch)
    for key, want in TF.items():
        assert out[key].dtype == np.float32, key
        np.testing.assert_allclose(out[key], want, atol=1.5e-4, err_msg=key)


def test_shapes_follow_tensorflow():
    m = tf.placeholder(tf.float32, [None, None])
    t3 = tf.placeholder(tf.float32, [None, None, None])
    z3 = np.zeros(3, np.float32)
    # LSTMBlockCell: batch from x, cell size from cs_prev (TF leaves the rest to the kernel)
    cell = tf.raw_ops.LSTMBlockCell(x=tf.zeros([4, 2]), cs_prev=m, h_prev=m, w=m, wci=m[0],
                                    wcf=m[0], wco=m[0], b=tf.zeros([8]))
    assert [o.shape.as_list() for o in cell] == [[4, None]] * 7
    # BlockLSTM: [time, batch] from x, cell size from b / 4
    blk = tf.raw_ops.BlockLSTM(seq_len_max=tf.placeholder(tf.int64), x=t3, cs_prev=m, h_prev=m,
                               w=np.zeros((5, 12), np.float32), wci=z3, wcf=z3, wco=z3,
                               b=np.zeros(12, np.float32))
    assert [o.shape.as_list() for o in blk] == [[None, None, 3]] * 7
    gru = tf.raw_ops.GRUBlockCell(x=m, h_prev=tf.zeros([2, 3]), w_ru=m, w_c=m, b_ru=z3,
                                  b_c=z3)
    assert [o.shape.as_list() for o in gru] == [[None, 3]] * 4
    with pytest.raises(ValueError, match="must be rank 2"):
        tf.raw_ops.LSTMBlockCell(x=t3, cs_prev=m, h_prev=m, w=m, wci=z3, wcf=z3, wco=z3, b=z3)


def test_bad_weights_fail_at_run_time_naming_the_op():
    x, cs, h, w, b, p, X, _, (wru, wc, bru, bc) = _inputs()
    m = tf.placeholder(tf.float32, [None, None])
    cell = tf.raw_ops.LSTMBlockCell(x=x, cs_prev=cs, h_prev=h, w=m, wci=p, wcf=p, wco=p, b=b)
    gru = tf.raw_ops.GRUBlockCell(x=x, h_prev=h, w_ru=m, w_c=wc, b_ru=bru, b_c=bc)
    steps = tf.placeholder(tf.int64, [])
    blk = tf.raw_ops.BlockLSTM(seq_len_max=steps, x=X, cs_prev=cs,
                               h_prev=h, w=w, wci=p, wcf=p, wco=p, b=b)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"LSTMBlockCell.*w must be"):
            sess.run(cell.h, {m: w[:4]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"GRUBlockCell.*w_ru must"):
            sess.run(gru.h, {m: wru[:3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_len_max must be in"):
            sess.run(blk.h, {steps: 9})


def test_gradient_ops_have_no_gradient_like_tensorflow():
    x, cs, h, w, b, p, _, g, _ = _inputs()
    out = tf.raw_ops.LSTMBlockCell(x=x, cs_prev=cs, h_prev=h, w=w, wci=p, wcf=p, wco=p, b=b)
    hg = tf.constant(g[1])
    grads = tf.raw_ops.LSTMBlockCellGrad(
        x=x, cs_prev=cs, h_prev=h, w=w, wci=p, wcf=p, wco=p, b=b, i=out.i, cs=out.cs, f=out.f,
        o=out.o, ci=out.ci, co=out.co, cs_grad=g[0], h_grad=hg, use_peephole=False)
    with pytest.raises(LookupError):
        tf.gradients(grads.dicfo, [hg])


# -- gradients through whole sequences ------------------------------------------------------
class _Cell(tf.nn.rnn_cell.RNNCell):
    """An RNNCell stepping with the fused ops on given (placeholder) weights."""

    def __init__(self, kind, weights, units=2, peephole=False):
        super().__init__()
        self._kind, self._w, self._n, self._peep = kind, weights, units, peephole

    @property
    def state_size(self):
        if self._kind == "gru":
            return self._n
        return tf.nn.rnn_cell.LSTMStateTuple(self._n, self._n)

    output_size = property(lambda self: self._n)

    def __call__(self, inputs, state, scope=None):
        if self._kind == "gru":
            h = gru_block_cell(inputs, state, *self._w)[3]
            return h, h
        w, b, wci, wcf, wco = self._w
        out = lstm_block_cell(inputs, state[0], state[1], w, b, wci, wcf, wco,
                              forget_bias=0.8, use_peephole=self._peep)
        return out[6], tf.nn.rnn_cell.LSTMStateTuple(out[1], out[6])


R = np.random.RandomState(31)


def _r(*shape, scale=1.0):
    return R.standard_normal(shape) * scale


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_block_cell_gradient_through_dynamic_rnn(peephole):
    def build(x, h0, w, b, wci, wcf, wco):
        cell = _Cell("lstm", [w, b, wci, wcf, wco], peephole=peephole)
        state = tf.nn.rnn_cell.LSTMStateTuple(tf.zeros_like(h0), h0)
        out, final = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2], initial_state=state)
        return [out, final.c]

    check_gradient(build, [_r(2, 4, 3), _r(2, 2), _r(5, 8, scale=0.5), _r(8), _r(2), _r(2),
                           _r(2)])


def test_gru_block_cell_gradient_through_unrolled_sequence():
    def build(x, h0, w_ru, w_c, b_ru, b_c):
        cell = _Cell("gru", [w_ru, w_c, b_ru, b_c])
        out, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), initial_state=h0)
        return out

    check_gradient(build, [_r(2, 3, 3), _r(2, 2), _r(5, 4), _r(5, 2), _r(4), _r(2)])


def test_block_lstm_gradient_matches_unrolled_cells():
    """BlockLSTM's gradient (BlockLSTMGrad) equals the LSTMBlockCell gradients summed
    through the unrolled steps."""
    x, h0, w, b, p = _r(4, 2, 3), _r(2, 2), _r(5, 8, scale=0.5), _r(8), [_r(2) for _ in "icf"]
    xt = tf.constant(x)
    c0, ht = tf.zeros([2, 2], tf.float64), tf.constant(h0)
    wt, bt = tf.constant(w), tf.constant(b)
    pt = [tf.constant(v) for v in p]
    fused = tf.raw_ops.BlockLSTM(seq_len_max=np.int64(4), x=xt, cs_prev=c0, h_prev=ht, w=wt,
                                 wci=pt[0], wcf=pt[1], wco=pt[2], b=bt, cell_clip=-1.0,
                                 use_peephole=True)
    c, h, hs = c0, ht, []
    for t in range(4):
        out = lstm_block_cell(xt[t], c, h, wt, bt, *pt, use_peephole=True)
        c, h = out[1], out[6]
        hs.append(h)
    unrolled = tf.stack(hs)
    wrt = [xt, ht, wt, bt, *pt]
    g1 = tf.gradients(tf.reduce_sum(tf.sin(fused.h)) + tf.reduce_sum(fused.cs[-1]), wrt)
    g2 = tf.gradients(tf.reduce_sum(tf.sin(unrolled)) + tf.reduce_sum(c), wrt)
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"BlockLSTMGrad", "LSTMBlockCellGrad"} <= types
    with tf.Session() as sess:
        a, b2, v1, v2 = sess.run([fused.h, unrolled, g1, g2])
    np.testing.assert_allclose(a, b2, rtol=1e-10)
    for left, right in zip(v1, v2):
        np.testing.assert_allclose(left, right, rtol=1e-9, atol=1e-12)


# -- the contrib cells build the fused ops ---------------------------------------------------
def _copy(sess, src_scope, dst_scope):
    by = {v.name: v for v in tf.global_variables()}
    for name, v in by.items():
        if name.startswith(src_scope + "/"):
            sess.run(tf.assign(by[dst_scope + name[len(src_scope):]], v))


def test_contrib_lstm_block_cells_build_block_ops_with_lstm_cell_values():
    x = tf.constant(R.uniform(-1, 1, (2, 4, 3)).astype(np.float32))
    lengths = [4, 2]
    block, bstate = tf.nn.dynamic_rnn(tf.contrib.rnn.LSTMBlockCell(3, use_peephole=True), x,
                                      sequence_length=lengths, dtype=tf.float32, scope="blk")
    with tf.variable_scope("fused"):
        fused_cell = tf.contrib.rnn.LSTMBlockFusedCell(3, use_peephole=True)
        fused, fstate = fused_cell(tf.transpose(x, [1, 0, 2]), dtype=tf.float32,
                                   sequence_length=lengths)
    plain, pstate = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True), x,
                                      sequence_length=lengths, dtype=tf.float32, scope="plain")
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "LSTMBlockCell" in types and types.count("BlockLSTM") == 1
    names = [v.name for v in tf.global_variables()]
    assert names[:5] == ["blk/lstm_cell/kernel:0", "blk/lstm_cell/bias:0",
                         "blk/lstm_cell/w_i_diag:0", "blk/lstm_cell/w_f_diag:0",
                         "blk/lstm_cell/w_o_diag:0"]
    assert names[5:10] == [f"fused/lstm_fused_cell/{n}:0" for n in (
        "kernel", "bias", "w_i_diag", "w_f_diag", "w_o_diag")]
    loss = tf.reduce_sum(block) + tf.reduce_sum(fused) + tf.reduce_sum(bstate.c) + \
        tf.reduce_sum(fstate.c)
    ploss = tf.reduce_sum(plain) * 2 + tf.reduce_sum(pstate.c) * 2
    grads = tf.gradients(loss, [x])[0]
    pgrads = tf.gradients(ploss, [x])[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _copy(sess, "plain/lstm_cell", "blk/lstm_cell")
        _copy(sess, "plain/lstm_cell", "fused/lstm_fused_cell")
        b, f, p, bs, fs, ps, g, pg = sess.run([block, fused, plain, bstate, fstate, pstate,
                                               grads, pgrads])
    np.testing.assert_allclose(b, p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.transpose(f, [1, 0, 2]), p, rtol=1e-5, atol=1e-6)
    for s in (bs, fs):
        np.testing.assert_allclose(s.c, ps.c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s.h, ps.h, rtol=1e-5, atol=1e-6)
    assert np.all(p[1, 2:] == 0) and np.all(f[2:, 1] == 0)
    np.testing.assert_allclose(g, pg, rtol=1e-4, atol=1e-5)


def test_contrib_gru_block_cells_build_gru_block_ops_with_gru_cell_values():
    x = tf.constant(R.uniform(-1, 1, (2, 3, 4)).astype(np.float32))
    v2, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.GRUBlockCellV2(3), x, dtype=tf.float32,
                              scope="v2")
    v1, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.GRUBlockCell(3), x, dtype=tf.float32, scope="v1")
    plain, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), x, dtype=tf.float32, scope="plain")
    assert "GRUBlockCell" in {op.type for op in tf.get_default_graph().get_operations()}
    names = [v.name for v in tf.global_variables()]
    assert names[:8] == [f"v2/gru_cell/{n}:0" for n in (
        "gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")] + [
        f"v1/gru_cell/{n}:0" for n in ("w_ru", "b_ru", "w_c", "b_c")]
    g = tf.gradients(tf.reduce_sum(v2 * v2), [x])[0]
    pg = tf.gradients(tf.reduce_sum(plain * plain), [x])[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _copy(sess, "plain/gru_cell", "v2/gru_cell")
        by = {v.name: v for v in tf.global_variables()}
        for a, b in (("gates/kernel", "w_ru"), ("gates/bias", "b_ru"),
                     ("candidate/kernel", "w_c"), ("candidate/bias", "b_c")):
            sess.run(tf.assign(by[f"v1/gru_cell/{b}:0"], by[f"plain/gru_cell/{a}:0"]))
        a, b, p, ga, gp = sess.run([v2, v1, plain, g, pg])
    np.testing.assert_allclose(a, p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ga, gp, rtol=1e-4, atol=1e-5)


# -- a GraphDef TensorFlow wrote ------------------------------------------------------------
def test_tensorflow_graph_with_block_rnn_ops_and_gradients_imports_and_runs():
    graph_def = tf.GraphDef()
    with open(os.path.join(DATA, "graph.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    expected = np.load(os.path.join(DATA, "expected.npz"))
    fetches = [str(s) for s in expected["fetches"]]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        types = {o.type for o in g.get_operations()}
        assert {"BlockLSTM", "BlockLSTMGrad", "BlockLSTMV2", "LSTMBlockCell",
                "LSTMBlockCellGrad", "GRUBlockCell", "GRUBlockCellGrad"} <= types
        with tf.Session(graph=g) as sess:
            values = sess.run(fetches, {"x:0": expected["feed_x"], "h0:0": expected["feed_h0"]})
    for k, (name, value) in enumerate(zip(fetches, values)):
        want = expected[f"out{k}"]
        assert value.dtype == want.dtype, name
        np.testing.assert_allclose(value, want, rtol=2e-5, atol=2e-5, err_msg=name)


@pytest.mark.parametrize("module", ["flowgraph.ops.rnn_block_ops", "flowgraph.contrib.rnn_block"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{module}: {result}"
