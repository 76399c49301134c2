"""TF1 programs "from the wild", round 6: model code in the style of the popular TF1
research repositories (tensor2tensor/Transformer, BERT, official ResNet, baselines-style
deep RL, seq2seq decoders), and the classes of discrepancy they found.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed (rounded to 4 decimals there).
Covered: the op names of the TensorArray methods (``TensorArrayWrite/TensorArrayWriteV3``,
``TensorArrayReadV3/index``, ``TensorArrayStack/TensorArrayGatherV3``) and a fixed-size
array's ``size()`` (its creation size, no ``TensorArraySizeV3``); the new
``tf.nn.raw_rnn``, ``tf.nn.static_state_saving_rnn``, ``tf.nn.ctc_loss_v2``,
``tf.nn.fractional_max_pool`` / ``fractional_avg_pool`` (with their gradient ops; their
sequences' static length is ``out + 1``, the length they have at run time, where TF's
shape function says ``out``); ``ctc_greedy_decoder`` as the one ``CTCGreedyDecoder`` op;
``piecewise_constant`` and an exclusive ``tf.case`` as TF's conds (``case/cond/Merge``);
``draw_bounding_boxes`` without colors as the V1 op; the op layout of
``tf.losses.huber_loss``, of ``Categorical.sample`` and of the non-fused batch norm
(``batchnorm/add_1``); ``static_rnn`` with a ``sequence_length`` stepping in TF's conds
(``rnn/cond_k/Merge``); ``dynamic_rnn``'s message without a dtype.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _r(x, d=4):
    return np.round(np.asarray(x, np.float64), d).tolist()


# -- TensorArray op names (beam search, scan, map_fn) ---------------------------------------
def test_tensor_array_ops_are_named_as_tensorflow_names_them():
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    r, st, g = ta.read(1), ta.stack(), ta.gather([0, 2])
    ta.scatter([1, 0], tf.ones([2, 2]))
    names = [(o.name, o.type) for o in tf.get_default_graph().get_operations()
             if o.type.startswith("TensorArray")]
    assert names[1:5] == [
        ("TensorArrayWrite/TensorArrayWriteV3", "TensorArrayWriteV3"),
        ("TensorArrayWrite_1/TensorArrayWriteV3", "TensorArrayWriteV3"),
        ("TensorArrayWrite_2/TensorArrayWriteV3", "TensorArrayWriteV3"),
        ("TensorArrayReadV3", "TensorArrayReadV3")]
    assert r.op.inputs[1].op.name == "TensorArrayReadV3/index"
    assert st.name == "TensorArrayStack/TensorArrayGatherV3:0"
    assert g.name == "TensorArrayGatherV3:0"
    assert g.op.inputs[1].op.name == "TensorArrayGatherV3/indices"
    assert names[-1][0] == "TensorArrayScatter/TensorArrayScatterV3"
    # a fixed-size array's size is the size it was created with
    sz = ta.size()
    assert sz.op.type == "Const"
    dyn = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(0, 1.0)
    assert dyn.size().op.type == "TensorArraySizeV3"
    with tf.Session() as sess:
        assert sess.run([sz, dyn.size()]) == [3, 1]
        assert sess.run(st).tolist() == [[1, 2], [3, 4], [5, 6]]


def test_beam_search_while_loop_with_gather_nd_top_k_and_a_tensor_array():
    B, K, V, L = 2, 3, 6, 4
    table = tf.constant(np.random.RandomState(0).randn(V, V).astype(np.float32))
    init_lp = tf.tile(tf.constant([[0.0] + [-1e9] * (K - 1)]), [B, 1])

    def body(i, ids, lp, ta):
        cand = tf.expand_dims(lp, 2) + tf.nn.log_softmax(tf.gather(table, ids))
        top_lp, top_idx = tf.nn.top_k(tf.reshape(cand, [B, K * V]), k=K)
        beam, tok = top_idx // V, top_idx % V
        coords = tf.stack([tf.tile(tf.range(B)[:, None], [1, K]), beam], axis=2)
        tf.gather_nd(ids, coords)
        return i + 1, tok, top_lp, ta.write(i, tok)

    i, ids, lp, ta = tf.while_loop(lambda i, *_: i < L, body,
                                   [tf.constant(0), tf.zeros([B, K], tf.int32), init_lp,
                                    tf.TensorArray(tf.int32, size=L)], name="beam")
    seq = tf.transpose(ta.stack(), [1, 2, 0])
    assert (i.name, ids.name, lp.name, seq.name) == ("beam/Exit:0", "beam/Exit_1:0",
                                                     "beam/Exit_2:0", "transpose:0")
    assert str(seq.shape) == "(2, 3, 4)" and str(lp.shape) == "(2, 3)"
    types = {o.type for o in tf.get_default_graph().get_operations()}
    assert "TensorArraySizeV3" not in types and "TopKV2" in types
    with tf.Session() as sess:
        s, l_, n = sess.run([seq, lp, i])
    assert s.tolist() == [[[3, 4, 0, 3], [4, 0, 3, 0], [0, 3, 4, 4]]] * 2
    assert _r(l_) == [[-3.8454, -4.059, -4.2188]] * 2 and n == 4


def test_scan_and_map_fn_outputs_are_named_by_the_stack():
    rewards = tf.placeholder(tf.float32, [None, 2])
    dones = tf.placeholder(tf.float32, [None, 2])
    rets = tf.scan(lambda acc, r: r + 0.99 * acc, rewards, initializer=tf.zeros([2]),
                   reverse=True, name="returns")
    ms = tf.map_fn(lambda x: (x[0] * 2, tf.cast(x[1], tf.int32)), (rewards, dones),
                   dtype=(tf.float32, tf.int32))
    assert rets.name == "returns/TensorArrayStack/TensorArrayGatherV3:0"
    assert [t.name for t in ms] == ["map/TensorArrayStack/TensorArrayGatherV3:0",
                                    "map/TensorArrayStack_1/TensorArrayGatherV3:0"]
    rs = np.random.RandomState(0)
    rs.rand(5, 2)
    feed = {rewards: rs.rand(5, 2), dones: np.zeros([5, 2])}
    with tf.Session() as sess:
        out = sess.run(rets, feed)
    assert _r(out[-1]) == _r(feed[rewards][-1])


# -- raw_rnn ----------------------------------------------------------------------------------
def _raw_rnn_program():
    T, B, D, U = 4, 2, 3, 5
    xs = tf.constant(np.random.RandomState(0).randn(T, B, D).astype(np.float32))
    seq_len = tf.constant([4, 2])
    cell = tf.nn.rnn_cell.LSTMCell(U, initializer=tf.constant_initializer(0.1), name="lstm")
    inputs_ta = tf.TensorArray(tf.float32, size=T).unstack(xs)

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(B, tf.float32) if cell_output is None else cell_state
        finished = time >= seq_len
        nxt = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([B, D], dtype=tf.float32),
                      lambda: inputs_ta.read(time))
        return finished, nxt, state, cell_output, None

    return xs, seq_len, cell, loop_fn


def test_raw_rnn_decoder_matches_dynamic_rnn():
    xs, seq_len, cell, loop_fn = _raw_rnn_program()
    outputs_ta, final_state, final_loop_state = tf.nn.raw_rnn(cell, loop_fn)
    outputs = outputs_ta.stack()
    assert outputs.name == "TensorArrayStack/TensorArrayGatherV3:0"
    assert str(outputs.shape) == "(?, 2, 5)"
    assert type(final_state).__name__ == "LSTMStateTuple"
    assert final_state.c.name == "rnn/while/Exit_4:0" and str(final_state.h.shape) == "(2, 5)"
    assert final_loop_state is None
    assert [v.name for v in tf.trainable_variables()] == ["rnn/lstm/kernel:0",
                                                          "rnn/lstm/bias:0"]
    dyn, dstate = tf.nn.dynamic_rnn(cell, xs, sequence_length=seq_len, time_major=True,
                                    dtype=tf.float32)
    grads = tf.gradients(tf.reduce_sum(outputs), tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, fh, d, dh, g = sess.run([outputs, final_state.h, dyn, dstate.h, grads])
    assert _r(out[:, 1]) == [[0.1002] * 5, [0.1506] * 5, [0.0] * 5, [0.0] * 5]
    assert _r(fh) == [[0.0285] * 5, [0.1506] * 5]
    assert np.abs(out - d).max() < 1e-6 and np.abs(fh - dh).max() < 1e-6
    assert _r([np.abs(v).sum() for v in g]) == [42.0791, 19.1748]


def test_raw_rnn_with_an_emit_structure_and_a_loop_state():
    xs, _, cell, _ = _raw_rnn_program()
    B, U = 2, 5

    def loop_fn(time, out, state, ls):
        if out is None:
            return (tf.zeros([B], tf.bool), xs[0], cell.zero_state(B, tf.float32),
                    tf.zeros([U + 1]), tf.constant(0.0))
        done = time >= 3
        nxt = tf.cond(tf.reduce_all(done), lambda: tf.zeros([B, 3]),
                      lambda: tf.gather(xs, tf.minimum(time, 3)))
        emit = tf.concat([out, tf.reduce_sum(out, 1, keepdims=True)], 1)
        return tf.fill([B], done), nxt, state, emit, ls + tf.reduce_sum(out)

    ta, _, ls = tf.nn.raw_rnn(cell, loop_fn, scope="rnn2")
    o = ta.stack()
    assert str(o.shape) == "(?, 2, 6)" and ls.name == "rnn2/while/Exit_6:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ov, lv = sess.run([o, ls])
    assert ov.shape == (3, 2, 6) and _r(lv) == 3.8589


def test_dynamic_rnn_without_a_dtype_says_so_as_tensorflow_does():
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    with pytest.raises(ValueError, match="If no initial_state is provided, argument `dtype` "
                                         "must be specified"):
        tf.nn.dynamic_rnn(cell, tf.ones([2, 4, 3]))


# -- static_state_saving_rnn ------------------------------------------------------------------
class _Saver:
    def __init__(self, names):
        self.vars = {n: tf.Variable(tf.fill([2, 4], 0.5), trainable=False, name=n)
                     for n in names}

    def state(self, name):
        return self.vars[name]

    def save_state(self, name, value):
        return tf.assign(self.vars[name], value)


def test_static_state_saving_rnn_saves_the_final_state():
    saver = _Saver(["c", "h"])
    cell = tf.nn.rnn_cell.LSTMCell(4, initializer=tf.constant_initializer(0.2))
    xs = [tf.constant(np.full([2, 3], k, np.float32)) for k in (0.1, 0.2, 0.3)]
    outs, state = tf.nn.static_state_saving_rnn(cell, xs, saver, ("c", "h"))
    assert len(outs) == 3 and outs[-1].op.type == "Identity"
    assert {c.type for c in outs[-1].op.control_inputs} == {"Assign"}
    _, ref_state = tf.nn.static_rnn(cell, xs, initial_state=tf.nn.rnn_cell.LSTMStateTuple(
        saver.vars["c"], saver.vars["h"]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(ref_state.h)
        got = sess.run(state.h)
        assert np.allclose(got, expected)
        assert np.allclose(sess.run(saver.vars["h"]), got)   # saved for the next segment
    with pytest.raises(ValueError, match="Argument `state_name` should be the same type as "):
        tf.nn.static_state_saving_rnn(cell, xs, saver, "c")


# -- ctc_loss_v2 ------------------------------------------------------------------------------
def test_ctc_loss_v2_dense_and_sparse_labels_with_any_blank():
    logits = tf.constant(np.random.RandomState(1).randn(6, 2, 5).astype(np.float32))
    labels = tf.constant([[1, 2, 2, 0], [3, 1, 0, 0]])
    ll, lg = tf.constant([3, 2]), tf.constant([6, 5])
    l0 = tf.nn.ctc_loss_v2(labels, logits, ll, lg)
    l4 = tf.nn.ctc_loss_v2(labels, logits, ll, lg, blank_index=4)
    lneg = tf.nn.ctc_loss_v2(labels, logits, ll, lg, blank_index=-1)
    lbm = tf.nn.ctc_loss_v2(labels, tf.transpose(logits, [1, 0, 2]), ll, lg,
                            logits_time_major=False, blank_index=2)
    sp = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], [1, 2, 2, 3, 1], [2, 3])
    lsp = tf.nn.ctc_loss_v2(sp, logits, None, lg, blank_index=0)
    assert str(l0.shape) == "(2,)" and l0.dtype == tf.float32
    g = tf.gradients(tf.reduce_sum(l0), logits)[0]
    with tf.Session() as sess:
        v = sess.run([l0, l4, lneg, lbm, lsp, g])
    assert [_r(x) for x in v[:5]] == [[8.3815, 7.2104], [8.8321, 5.2734], [8.8321, 5.2734],
                                      [11.0725, 5.6613], [8.3815, 7.2104]]
    assert _r(v[5][:2, 0]) == [[-0.113, -0.2576, 0.0661, 0.0383, 0.2662],
                               [-0.3666, -0.0831, 0.0266, 0.0761, 0.347]]
    with pytest.raises(ValueError, match="Argument `blank_index` must be provided"):
        tf.nn.ctc_loss_v2(sp, logits, None, lg)


# -- fractional pooling -----------------------------------------------------------------------
def _reference_pool(x, rows, cols, overlapping, reduce):
    extra = 1 if overlapping else 0
    out = np.empty((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    for i in range(len(rows) - 1):
        for j in range(len(cols) - 1):
            win = x[:, rows[i]:min(rows[i + 1] + extra, x.shape[1]),
                    cols[j]:min(cols[j + 1] + extra, x.shape[2])]
            out[:, i, j] = reduce(win, axis=(1, 2))
    return out


@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_fractional_pools_follow_their_pooling_sequences(pseudo_random, overlapping):
    x = np.random.RandomState(3).randn(2, 7, 9, 2).astype(np.float32)
    mx = tf.nn.fractional_max_pool(x, [1.0, 1.44, 1.73, 1.0], pseudo_random=pseudo_random,
                                   overlapping=overlapping)
    av = tf.nn.fractional_avg_pool(x, [1.0, 1.5, 2.0, 1.0], pseudo_random=pseudo_random,
                                   overlapping=overlapping)
    assert [t.name for t in mx] == ["FractionalMaxPool:0", "FractionalMaxPool:1",
                                    "FractionalMaxPool:2"]
    assert str(mx[0].shape) == "(2, 4, 5, 2)" and str(av[0].shape) == "(2, 4, 4, 2)"
    assert mx[1].dtype == tf.int64
    with tf.Session() as sess:
        (m, mr, mc), (a, ar, ac) = sess.run([mx, av])
    for seq, n, k in ((mr, 7, 4), (mc, 9, 5), (ar, 7, 4), (ac, 9, 4)):
        assert seq[0] == 0 and seq[-1] == n and len(seq) == k + 1
        assert set(np.diff(seq).tolist()) <= {n // k, n // k + 1}
    assert np.array_equal(m, _reference_pool(x, mr, mc, overlapping, np.max))
    assert np.allclose(a, _reference_pool(x, ar, ac, overlapping, np.mean))


def test_fractional_max_pool_gradient_ops_and_determinism():
    x = tf.constant(np.random.RandomState(0).randn(2, 7, 9, 2).astype(np.float32))
    o, r, c = tf.nn.fractional_max_pool(x, [1.0, 1.44, 1.73, 1.0], pseudo_random=True,
                                        overlapping=True, deterministic=True, seed=1, seed2=2)
    a = tf.nn.fractional_avg_pool(x, [1.0, 1.5, 2.0, 1.0])[0]
    g = tf.gradients(tf.reduce_sum(o * o), x)[0]
    ga = tf.gradients(tf.reduce_sum(a * a), x)[0]
    assert g.name == "gradients/FractionalMaxPool_grad/FractionalMaxPoolGrad:0"
    assert ga.name == "gradients_1/FractionalAvgPool_grad/FractionalAvgPoolGrad:0"
    assert ga.op.inputs[0].op.type == "Const"   # the static input shape
    with tf.Session() as sess:
        v1, v2 = sess.run([r, c]), sess.run([r, c])
        ov, gv = sess.run([o, g])
    assert all(np.array_equal(p, q) for p, q in zip(v1, v2))
    # each output's gradient lands on its region's first maximum (summed where shared)
    assert np.isclose(gv.sum(), 2 * ov.sum(), atol=1e-4)
    assert tf.nn.fractional_max_pool(tf.ones([1, 4, 4, 1], tf.int32),
                                     [1.0, 1.5, 1.5, 1.0])[0].dtype == tf.int32
    assert str(tf.nn.fractional_max_pool(tf.placeholder(tf.float32, [None, None, 8, 3]),
                                         [1.0, 1.5, 1.5, 1.0])[0].shape) == "(?, ?, 5, 3)"


def test_fractional_pool_errors_are_tensorflows():
    x = tf.ones([2, 7, 9, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Both seed and seed2 should be 0"):
        tf.Session().run(tf.nn.fractional_max_pool(x, [1.0, 1.5, 1.5, 1.0], seed=3)[0])
    with pytest.raises(tf.errors.UnimplementedError):
        tf.Session().run(tf.nn.fractional_max_pool(x, [2.0, 1.5, 1.5, 1.0])[0])
    with pytest.raises(ValueError, match="list of length 3 less than minimum 4"):
        tf.nn.fractional_max_pool(x, [1.5, 1.5, 1.0])
    with pytest.raises(ValueError, match=r"pooling_ratio cannot be smaller than 1, got: 0\.5"):
        tf.nn.fractional_max_pool(x, [1.0, 0.5, 1.5, 1.0])
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.fractional_max_pool(tf.ones([4, 4, 1]), [1.0, 1.5, 1.5, 1.0])
    with pytest.raises(TypeError, match="float16 not in list of allowed values"):
        tf.nn.fractional_avg_pool(tf.ones([1, 4, 4, 1], tf.float16), [1.0, 1.5, 1.5, 1.0])


# -- deep RL: DQN with a target network and the Huber loss ------------------------------------
def test_dqn_target_network_sync_and_huber_loss():
    def qnet(x, scope, k):
        with tf.variable_scope(scope):
            h = tf.layers.dense(x, 8, tf.nn.relu, name="fc1",
                                kernel_initializer=tf.constant_initializer(
                                    np.random.RandomState(k).randn(4, 8) * 0.5))
            return tf.layers.dense(h, 3, name="q", kernel_initializer=tf.constant_initializer(
                np.random.RandomState(k + 1).randn(8, 3) * 0.5))

    obs, obs2 = tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.float32, [None, 4])
    act, rew = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.float32, [None])
    done = tf.placeholder(tf.float32, [None])
    q, q_tp1 = qnet(obs, "q_func", 1), qnet(obs2, "target_q_func", 7)
    qvars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="q_func")
    tvars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="target_q_func")
    q_sel = tf.reduce_sum(q * tf.one_hot(act, 3), 1)
    target = tf.stop_gradient(rew + 0.99 * (1.0 - done) * tf.reduce_max(q_tp1, 1))
    hub = tf.losses.huber_loss(target, q_sel, delta=1.0)
    hub2 = tf.losses.huber_loss(target, q_sel, reduction=tf.losses.Reduction.NONE)
    assert (hub.name, hub2.name, str(hub2.shape)) == ("huber_loss/value:0",
                                                      "huber_loss_1/Mul_3:0", "(?,)")
    update = tf.group(*[t.assign(s) for s, t in zip(sorted(qvars, key=lambda v: v.name),
                                                   sorted(tvars, key=lambda v: v.name))])
    soft = tf.group(*[t.assign(0.5 * s + 0.5 * t) for s, t in zip(qvars, tvars)])
    opt = tf.train.AdamOptimizer(1e-2)
    train = opt.apply_gradients([(tf.clip_by_norm(g, 10.0), v)
                                 for g, v in opt.compute_gradients(hub, var_list=qvars)])
    rs = np.random.RandomState(0)
    feed = {obs: rs.randn(5, 4), obs2: rs.randn(5, 4), act: [0, 1, 2, 1, 0],
            rew: [1, 0, -1, 0.5, 2], done: [0, 0, 1, 0, 1]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert _r(sess.run(hub2, feed)) == [3.3942, 0.534, 0.1271, 0.8607, 2.2545]
        assert [_r(sess.run([train, hub], feed)[1]) for _ in range(3)] == \
            [1.4341, 1.3763, 1.3248]
        sess.run(soft)
        assert _r(sess.run(hub, feed)) == 1.1082
        sess.run(update)
        assert _r(sess.run(hub, feed)) == 1.5181


# -- Transformer: label smoothing and the Noam schedule ---------------------------------------
def test_label_smoothing_loss_with_a_noam_learning_rate():
    gs = tf.train.get_or_create_global_step()
    step = tf.cast(gs, tf.float32) + 1.0
    lr = 16.0 ** -0.5 * tf.minimum(step * 4.0 ** -1.5, tf.rsqrt(step))
    logits = tf.Variable(np.random.RandomState(0).randn(4, 5).astype(np.float32),
                         name="logits")
    oh = tf.one_hot(tf.constant([0, 3, 1, 4]), 5)
    loss = tf.losses.softmax_cross_entropy(oh, logits, label_smoothing=0.1)
    assert loss.name == "softmax_cross_entropy_loss/value:0"
    loss2 = tf.losses.softmax_cross_entropy(oh, logits, weights=tf.constant([1.0, 0.0, 2.0, 1.0]),
                                            label_smoothing=0.2,
                                            reduction=tf.losses.Reduction.MEAN)
    loss3 = tf.losses.sigmoid_cross_entropy(oh, logits, label_smoothing=0.1)
    train = tf.train.AdamOptimizer(lr, beta1=0.9, beta2=0.98, epsilon=1e-9).minimize(
        loss, global_step=gs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [_r(sess.run([train, loss, lr])[1:]) for _ in range(6)]
        assert got == [[1.8209, 0.0312], [1.7768, 0.0625], [1.6904, 0.0938], [1.5656, 0.125],
                       [1.4089, 0.1118], [1.279, 0.1021]]
        assert _r(sess.run([loss2, loss3])) == [1.1221, 0.7199]


# -- BERT ------------------------------------------------------------------------------------
class _AdamWeightDecay(tf.train.Optimizer):
    """BERT's optimizer: apply_gradients overridden with assign chains and tf.group."""

    def __init__(self, learning_rate, weight_decay_rate, exclude):
        super().__init__(False, "AdamWeightDecayOptimizer")
        self.lr, self.wd, self.exclude = learning_rate, weight_decay_rate, exclude

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            pname = param.name[:-2]
            m = tf.get_variable(pname + "/adam_m", param.shape.as_list(), trainable=False,
                                initializer=tf.zeros_initializer())
            v = tf.get_variable(pname + "/adam_v", param.shape.as_list(), trainable=False,
                                initializer=tf.zeros_initializer())
            next_m = tf.multiply(0.9, m) + tf.multiply(0.1, grad)
            next_v = tf.multiply(0.999, v) + tf.multiply(0.001, tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + 1e-6)
            if not any(e in pname for e in self.exclude):
                update += self.wd * param
            assignments += [param.assign(param - self.lr * update), m.assign(next_m),
                            v.assign(next_v)]
        return tf.group(*assignments, name=name)


def test_bert_style_embeddings_gelu_adamw_and_warmup():
    ids = tf.placeholder(tf.int32, [None, 4], name="input_ids")
    shape = [tf.shape(ids)[0], 4]
    table = tf.get_variable("word_embeddings", [7, 6], initializer=tf.constant_initializer(
        np.random.RandomState(0).randn(7, 6) * 0.2))
    flat = tf.reshape(ids, [-1])
    oh = tf.one_hot(flat, depth=7)
    e1, e2 = tf.matmul(oh, table), tf.gather(table, flat)
    out = tf.reshape(e1, [*shape, 6])
    assert (out.name, str(out.shape), oh.name, e2.name) == ("Reshape_1:0", "(?, 4, 6)",
                                                           "one_hot:0", "GatherV2:0")

    def gelu(x):
        return x * 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))

    h = tf.layers.dense(out, 6, activation=gelu, name="dense",
                        kernel_initializer=tf.constant_initializer(
                            np.random.RandomState(1).randn(6, 6) * 0.3))
    h2 = out * 0.5 * (1.0 + tf.erf(out / tf.sqrt(2.0)))
    pooled = tf.layers.dense(tf.squeeze(h[:, 0:1, :], axis=1), 3, activation=tf.tanh,
                             name="pooler", kernel_initializer=tf.constant_initializer(
                                 np.random.RandomState(2).randn(6, 3) * 0.3))
    logp = tf.nn.log_softmax(pooled, axis=-1)
    loss = -tf.reduce_mean(tf.reduce_sum(tf.one_hot(tf.constant([0, 2]), 3) * logp, axis=-1))
    global_step = tf.train.get_or_create_global_step()
    lr = tf.train.polynomial_decay(tf.constant(0.1), global_step, 10, end_learning_rate=0.0,
                                   power=1.0, cycle=False)
    gs_int = tf.cast(global_step, tf.int32)
    warm_lr = 0.1 * (tf.cast(gs_int, tf.float32) / tf.cast(tf.constant(3), tf.float32))
    is_warm = tf.cast(gs_int < tf.constant(3), tf.float32)
    lr = (1.0 - is_warm) * lr + is_warm * warm_lr
    tvars = tf.trainable_variables()
    grads, gn = tf.clip_by_global_norm(tf.gradients(loss, tvars), clip_norm=1.0)
    assert gn.name == "global_norm/global_norm:0"
    assert grads[0].name == "clip_by_global_norm/clip_by_global_norm/_0:0"
    train_op = _AdamWeightDecay(lr, 0.01, ["LayerNorm", "bias"]).apply_gradients(
        zip(grads, tvars), global_step=global_step)
    with tf.control_dependencies([train_op]):
        train_op = tf.group(global_step.assign(global_step + 1))
    xv = np.array([[1, 2, 3, 0], [4, 5, 6, 0]])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(tf.reduce_max(tf.abs(e1 - e2)), {ids: xv}) == 0.0
        g1, g2 = sess.run([h[0, 0], h2[0, 0]], {ids: xv})
        assert _r(g1) == [0.0139, -0.0248, -0.0575, -0.0484, -0.0008, -0.0423]
        assert _r(g2) == [0.1093, -0.0148, -0.0102, 0.0437, 0.0147, 0.1787]
        got = [_r(sess.run([train_op, loss, lr, gn], {ids: xv})[1:]) for _ in range(5)]
    assert got == [[1.1394, 0.0, 0.4986], [1.1394, 0.0333, 0.4986], [0.9304, 0.0667, 0.4054],
                   [0.421, 0.07, 0.4156], [0.2574, 0.06, 0.1471]]
    assert sorted(v.name for v in tf.global_variables())[:3] == [
        "dense/bias/adam_m:0", "dense/bias/adam_v:0", "dense/bias:0"]


def test_init_from_checkpoint_with_an_assignment_map_from_list_variables(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("bert"):
            tf.get_variable("embeddings/word_embeddings", [5, 3],
                            initializer=tf.constant_initializer(np.arange(15).reshape(5, 3)))
            tf.get_variable("encoder/layer_0/kernel", [3, 3],
                            initializer=tf.constant_initializer(np.eye(3) * 2))
            tf.get_variable("encoder/layer_0/bias", [3],
                            initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    listed = tf.train.list_variables(path)
    assert sorted(listed) == [("bert/embeddings/word_embeddings", [5, 3]),
                              ("bert/encoder/layer_0/bias", [3]),
                              ("bert/encoder/layer_0/kernel", [3, 3])]
    assert type(listed[0]) is tuple
    with tf.variable_scope("bert"):
        we = tf.get_variable("embeddings/word_embeddings", [5, 3])
        b = tf.get_variable("encoder/layer_0/bias", [3])
    cls = tf.get_variable("cls/output_weights", [3, 2], initializer=tf.ones_initializer())
    names = {v.name[:-2] for v in tf.trainable_variables()}
    tf.train.init_from_checkpoint(path, {n: n for n, _ in listed if n in names})
    with tf.variable_scope("new"):
        k2 = tf.get_variable("kernel", [3, 3])
    tf.train.init_from_checkpoint(path, {"bert/encoder/layer_0/": "new/"})
    with pytest.raises(ValueError, match="Tensor bert/nope is not found in"):
        tf.train.init_from_checkpoint(path, {"bert/nope": "new/kernel"})
    with pytest.raises(ValueError, match=r"Shape of variable new/kernel:0 \(\(3, 3\)\) doesn't "
                                         r"match with shape of tensor bert/encoder/layer_0/bias"):
        tf.train.init_from_checkpoint(path, {"bert/encoder/layer_0/bias": "new/kernel"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w, bv, c, k = sess.run([we, b, cls, k2])
    assert w.ravel().tolist() == list(range(15)) and bv.tolist() == [1, 2, 3]
    assert c.tolist() == [[1, 1]] * 3 and k.tolist() == (np.eye(3) * 2).tolist()


# -- official ResNet --------------------------------------------------------------------------
def test_resnet_block_with_fused_batch_norm_nesterov_and_piecewise_constant():
    def conv(inputs, filters, kernel_size, strides, k):
        if strides > 1:
            pad = kernel_size - 1
            inputs = tf.pad(inputs, [[0, 0], [pad // 2, pad - pad // 2],
                                     [pad // 2, pad - pad // 2], [0, 0]])
        return tf.layers.conv2d(
            inputs, filters, kernel_size, strides, padding="SAME" if strides == 1 else "VALID",
            use_bias=False, data_format="channels_last",
            kernel_initializer=tf.constant_initializer(np.random.RandomState(k).randn(
                kernel_size, kernel_size, int(inputs.shape[-1]), filters) * 0.2))

    def bn(inputs):
        return tf.layers.batch_normalization(inputs, axis=3, momentum=0.997, epsilon=1e-5,
                                             training=True, fused=True)

    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.placeholder(tf.int32, [None])
    net = tf.identity(conv(x, 4, 3, 1, 10), "initial_conv")
    shortcut_in = tf.nn.relu(bn(net))
    shortcut = conv(shortcut_in, 8, 1, 2, 20)
    net = conv(tf.nn.relu(bn(conv(shortcut_in, 8, 3, 2, 30))), 8, 3, 1, 31) + shortcut
    assert (net.name, str(net.shape)) == ("add:0", "(?, 4, 4, 8)")
    net = tf.squeeze(tf.reduce_mean(tf.nn.relu(bn(net)), [1, 2], keepdims=True), [1, 2])
    logits = tf.layers.dense(net, 3, kernel_initializer=tf.constant_initializer(
        np.random.RandomState(5).randn(8, 3) * 0.3))
    ce = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    l2 = 1e-2 * tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()
                          if "batch_normalization" not in v.name])
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.piecewise_constant(gs, [2, 4], [0.1, 0.01, 0.001])
    assert lr.name == "PiecewiseConstant/case/cond/Merge:0"
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [o.name for o in update_ops][:2] == ["batch_normalization/AssignMovingAvg",
                                                "batch_normalization/AssignMovingAvg_1"]
    with tf.control_dependencies(update_ops):
        train_op = tf.train.MomentumOptimizer(lr, 0.9, use_nesterov=True).minimize(ce + l2, gs)
    acc, acc_update = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, axis=1))
    assert [v.name for v in tf.local_variables()] == ["accuracy/total:0", "accuracy/count:0"]
    assert len(tf.global_variables()) == 31
    feed = {x: np.random.RandomState(0).rand(4, 8, 8, 3), y: [0, 1, 2, 1]}
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        got = [_r(sess.run([train_op, ce + l2, ce, lr], feed)[1:]) for _ in range(5)]
        sess.run(acc_update, feed)
        a = sess.run(acc)
        mm = sess.run(next(v for v in tf.global_variables() if "moving_mean" in v.name))
    assert got == [[1.3711, 1.1557, 0.1], [1.2334, 1.0189, 0.1], [1.1232, 0.9096, 0.1],
                   [1.0308, 0.8179, 0.01], [1.0214, 0.8086, 0.01]]
    assert _r(a) == 0.75 and _r(mm) == [0.0016, -0.0052, 0.0071, 0.0043]


def test_piecewise_constant_and_exclusive_case_build_tensorflows_conds():
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.piecewise_constant(gs, [2, 4], [0.1, 0.01, 0.001])
    lr2 = tf.train.piecewise_constant(tf.constant(3.0), [1.0], [5, 6], name="pc")
    x = tf.constant(3)
    c = tf.case([(x < 2, lambda: tf.constant(1.0)), (x > 4, lambda: tf.constant(3.0)),
                 ((x > 2) & (x <= 4), lambda: tf.constant(2.0))],
                default=lambda: tf.constant(1.0), exclusive=True)
    assert (lr.name, lr2.name, c.name) == ("PiecewiseConstant/case/cond/Merge:0",
                                           "pc/case/cond/Merge:0", "case/cond/Merge:0")
    assert lr2.dtype == tf.int32
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert _r(sess.run([lr, lr2, c])) == [0.1, 6.0, 2.0]
        sess.run(gs.assign(4))
        assert _r(sess.run(lr)) == 0.01
        sess.run(gs.assign(5))
        assert _r(sess.run(lr)) == 0.001
    with pytest.raises(ValueError, match=r"Boundaries \(<dtype: 'float32'>\) must have the "
                                         r"same dtype as x \(<dtype: 'int64'>\)\."):
        tf.train.piecewise_constant(gs, [2.0], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"Values must have elements all with the same dtype "
                                         r"\(<dtype: 'float32'> vs <dtype: 'int32'>\)\."):
        tf.train.piecewise_constant(gs, [2], [0.1, 2])
    with pytest.raises(ValueError, match=r"^The length of boundaries should be 1 less than the "
                                         r"length of values$"):
        tf.train.piecewise_constant(gs, [2, 3], [0.1, 0.2])


# -- deep RL: policy distributions, GAE -------------------------------------------------------
def test_policy_distributions_as_baselines_uses_them():
    logits = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.1, 3.0]])
    cat = tf.distributions.Categorical(logits=logits)
    lp, ent = cat.log_prob(tf.constant([1, 2])), cat.entropy()
    assert (lp.name, ent.name, cat.name) == ("Categorical/log_prob/Neg:0",
                                             "Categorical/entropy/Neg:0", "Categorical/")
    cat2 = tf.distributions.Categorical(probs=tf.nn.softmax([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
    kl = tf.distributions.kl_divergence(cat, cat2)
    samp = cat.sample(5, seed=1)
    assert (samp.name, str(samp.shape), samp.dtype) == ("Categorical/sample/Reshape_1:0",
                                                        "(5, 2)", tf.int32)
    n = tf.distributions.Normal(loc=[[0.0, 1.0]], scale=[[1.0, 0.5]])
    nx = tf.constant([[0.5, 0.5]])
    assert n.log_prob(nx).name == "Normal/log_prob/sub:0"
    assert str(n.sample(4, seed=2).shape) == "(4, 1, 2)"
    b = tf.distributions.Bernoulli(logits=tf.constant([0.0, 2.0]))
    assert b.dtype == tf.int32 and str(b.sample(3, seed=1).shape) == "(3, 2)"
    ms = tf.random.categorical(logits, 4, seed=5)
    ms2 = tf.multinomial(logits, 4, seed=5, output_dtype=tf.int32)
    assert (ms.dtype, ms2.dtype, ms2.name) == (tf.int64, tf.int32, "multinomial/Multinomial:0")
    lse = tf.reduce_logsumexp(logits, axis=1, keepdims=True)
    assert lse.name == "ReduceLogSumExp:0"
    ratio = tf.exp(lp - tf.stop_gradient(lp + 0.1))
    adv = tf.constant([1.0, -0.5])
    pg = -tf.reduce_mean(tf.minimum(ratio * adv, tf.clip_by_value(ratio, 0.8, 1.2) * adv))
    with tf.Session() as sess:
        assert [_r(v) for v in sess.run([lp, ent, kl])] == [
            [-0.4644, -0.1044], [0.906, 0.3919], [0.5052, 1.11]]
        assert [_r(v) for v in sess.run([n.log_prob(nx), n.entropy(), n.cdf(nx)])] == [
            [[-1.0439, -0.7258]], [[1.4189, 0.7258]], [[0.6915, 0.1587]]]
        assert [_r(v) for v in sess.run([b.log_prob([1, 0]), b.entropy()])] == [
            [-0.6931, -2.1269], [0.6931, 0.3653]]
        assert _r(sess.run(lse)) == [[2.4644], [3.1044]] and _r(sess.run(pg)) == -0.2262
        assert _r(sess.run(tf.gradients(pg, logits)[0])) == [[0.1046, -0.1681, 0.0634],
                                                             [-0.0112, -0.0112, 0.0224]]
        sv = sess.run(samp)
        assert sv.min() >= 0 and sv.max() <= 2
    assert sorted(cat.parameters) == ["allow_nan_stats", "dtype", "logits", "name", "probs",
                                      "validate_args"]
    with pytest.raises(NotImplementedError, match=r"No KL\(distribution_a"):
        tf.distributions.kl_divergence(cat, n)


def test_gae_with_a_reverse_scan():
    rewards = tf.placeholder(tf.float32, [None, 2])
    values = tf.placeholder(tf.float32, [None, 2])
    dones = tf.placeholder(tf.float32, [None, 2])
    last_v = tf.placeholder(tf.float32, [2])
    next_values = tf.concat([values[1:], last_v[None]], axis=0)
    deltas = rewards + 0.99 * next_values * (1.0 - dones) - values
    adv = tf.scan(lambda acc, e: e[0] + 0.99 * 0.95 * e[1] * acc, (deltas, 1.0 - dones),
                  initializer=tf.zeros_like(last_v), reverse=True)
    assert (adv.name, str(adv.shape)) == ("scan/TensorArrayStack/TensorArrayGatherV3:0",
                                          "(?, 2)")
    rets = tf.foldr(lambda acc, r: r + 0.99 * acc, rewards, initializer=tf.zeros([2]))
    rs = np.random.RandomState(0)
    feed = {rewards: rs.rand(5, 2), values: rs.rand(5, 2),
            dones: [[0, 0], [0, 1], [0, 0], [1, 0], [0, 0]], last_v: [0.5, -0.2]}
    with tf.Session() as sess:
        a, r = sess.run([adv, rets], feed)
    assert _r(a) == [[1.0951, 0.7446], [0.8247, -0.3807], [0.7652, 1.6432], [0.4174, 0.2766],
                     [0.6805, -0.6846]]
    assert _r(r) == [2.9111, 3.1213]


# -- object detection -------------------------------------------------------------------------
def test_detection_anchors_iou_nms_and_crops():
    sx, sy = tf.meshgrid(tf.range(3, dtype=tf.float32) * 4.0, tf.range(2, dtype=tf.float32) * 4.0)
    ctr = tf.stack([tf.reshape(sy, [-1]), tf.reshape(sx, [-1])], axis=1)
    a = tf.reshape(tf.stack([tf.concat([ctr - s / 2.0, ctr + s / 2.0], axis=1)
                             for s in (2.0, 4.0)], axis=1), [-1, 4]) / 12.0
    gt = tf.constant([[0.0, 0.0, 0.3, 0.3], [0.2, 0.3, 0.6, 0.7]])
    y1, x1, y2, x2 = tf.split(a, 4, axis=1)
    yy1, xx1, yy2, xx2 = tf.unstack(gt, axis=1)
    inter = tf.maximum(0.0, tf.minimum(y2, yy2) - tf.maximum(y1, yy1)) * \
        tf.maximum(0.0, tf.minimum(x2, xx2) - tf.maximum(x1, xx1))
    m = inter / ((y2 - y1) * (x2 - x1) + (yy2 - yy1) * (xx2 - xx1) - inter)
    assert str(m.shape) == "(12, 2)"
    scores = tf.reduce_max(m, axis=1)
    idx = tf.where(scores > 0.1)
    assert (idx.name, idx.dtype, str(idx.shape)) == ("Where:0", tf.int64, "(?, 1)")
    pa = tf.boolean_mask(a, scores > 0.1)
    sel = tf.image.non_max_suppression(a, scores, 4, iou_threshold=0.5, score_threshold=0.05)
    sel_p, nv = tf.image.non_max_suppression_padded(a, scores, 4, iou_threshold=0.5,
                                                    pad_to_max_output_size=True)
    sel_s, ss = tf.image.non_max_suppression_with_scores(a, scores, 4, iou_threshold=0.5,
                                                         soft_nms_sigma=0.5)
    assert sel.name == "non_max_suppression/NonMaxSuppressionV3:0"
    assert str(sel_p.shape) == "(4,)"
    img = tf.constant(np.arange(72).reshape(2, 6, 6, 1).astype(np.float32))
    crops = tf.image.crop_and_resize(img, tf.gather(a, sel_p), tf.zeros([4], tf.int32), [2, 2])
    assert (crops.name, str(crops.shape)) == ("CropAndResize:0", "(4, 2, 2, 1)")
    mm = tf.map_fn(lambda e: (tf.reduce_mean(e[0]), tf.cast(e[1], tf.int64) * 2),
                   (img, tf.constant([1, 2])), dtype=(tf.float32, tf.int64))
    drawn = tf.image.draw_bounding_boxes(tf.zeros([1, 6, 6, 3]), tf.reshape(gt, [1, 2, 4]))
    assert (drawn.name, drawn.op.type) == ("DrawBoundingBoxes:0", "DrawBoundingBoxes")
    colored = tf.image.draw_bounding_boxes(tf.zeros([1, 6, 6, 3]), tf.reshape(gt, [1, 2, 4]),
                                           colors=[[1.0, 0.0, 0.0, 1.0]])
    assert colored.op.type == "DrawBoundingBoxesV2"
    with tf.Session() as sess:
        v = sess.run([idx, pa, sel, sel_p, nv, sel_s, ss, crops, mm, drawn])
    assert v[0].ravel().tolist() == [1, 3, 7, 8, 9, 10, 11] and v[1].shape == (7, 4)
    assert v[2].tolist() == v[3].tolist() == v[5].tolist() == [9, 11, 1, 3] and v[4] == 4
    assert _r(v[6]) == [0.2842, 0.2842, 0.1603, 0.1242]
    assert _r(v[7][:, :, :, 0]) == [[[5.8333, 7.5], [15.8333, 17.5]],
                                    [[7.5, 9.1667], [17.5, 19.1667]],
                                    [[0.0, 0.0], [0.0, 5.8333]], [[0.0, 0.0], [5.8333, 7.5]]]
    assert _r(v[8][0]) == [17.5, 53.5] and v[8][1].tolist() == [2, 4]
    assert v[9].sum(axis=(0, 1, 2)).tolist() == [3.0, 3.0, 8.0]


# -- speech: CTC greedy decoding --------------------------------------------------------------
def test_ctc_greedy_decoder_is_one_op_with_any_blank():
    steps = np.eye(4, dtype=np.float32)[[0, 0, 3, 1, 1, 2, 2, 3]][:, None, :]
    x = tf.constant(np.concatenate([steps, steps[::-1]], 1)
                    + np.random.RandomState(0).rand(8, 2, 4).astype(np.float32) * 0.1)
    expected = {
        (True, None): ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], [0, 1, 2, 2, 1], [2, 3]),
        (True, 0): ([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2]],
                    [3, 1, 2, 3, 3, 2, 1], [2, 4]),
        (True, -2): ([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]], [0, 3, 1, 3, 3, 1],
                     [2, 4]),
        (False, None): ([[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [1, 0], [1, 1],
                         [1, 2], [1, 3]], [0, 0, 1, 1, 2, 2, 2, 2, 1, 1], [2, 6]),
        (False, -2): ([[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [1, 0], [1, 1],
                       [1, 2]], [0, 0, 3, 1, 1, 3, 3, 1, 1], [2, 6]),
    }
    with tf.Session() as sess:
        for (merge, blank), want in expected.items():
            (d,), lp = tf.nn.ctc_greedy_decoder(x, [8, 5], merge_repeated=merge,
                                                blank_index=blank)
            got, lpv = sess.run([d, lp])
            assert (got.indices.tolist(), got.values.tolist(),
                    got.dense_shape.tolist()) == want
            assert _r(lpv) == [[-8.5103], [-5.2456]]
        assert d.values.op.type == "CTCGreedyDecoder" and lp.name.endswith(":3")
        assert str(d.indices.shape) == "(?, 2)" and str(lp.shape) == "(2, 1)"
        with pytest.raises(tf.errors.FailedPreconditionError, match=r"sequence_length\(0\)"):
            sess.run(tf.nn.ctc_greedy_decoder(x, [9, 5])[1])


# -- deep RL: A3C and PPO ---------------------------------------------------------------------
def _ci(k, shape):
    return tf.constant_initializer(np.random.RandomState(k).randn(*shape) * 0.3)


def test_a3c_local_gradients_pushed_to_the_global_net():
    def net(scope):
        with tf.variable_scope(scope):
            s = tf.placeholder(tf.float32, [None, 4], "s")
            h = tf.layers.dense(s, 16, tf.nn.relu6, kernel_initializer=_ci(1, (4, 16)),
                                name="la")
            pi = tf.layers.dense(h, 3, tf.nn.softmax, kernel_initializer=_ci(2, (16, 3)),
                                 name="ap")
            v = tf.layers.dense(h, 1, kernel_initializer=_ci(3, (16, 1)), name="v")
        return s, pi, v, tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)

    _, _, _, gparams = net("Global_Net")
    s, pi, v, lparams = net("W_0")
    a_his = tf.placeholder(tf.int32, [None], "A")
    v_target = tf.placeholder(tf.float32, [None, 1], "Vtarget")
    td = tf.subtract(v_target, v, name="TD_error")
    with tf.name_scope("c_loss"):
        c_loss = tf.reduce_mean(tf.square(td))
    with tf.name_scope("a_loss"):
        log_prob = tf.reduce_sum(tf.log(pi + 1e-5) * tf.one_hot(a_his, 3, dtype=tf.float32),
                                 axis=1, keep_dims=True)
        entropy = -tf.reduce_sum(pi * tf.log(pi + 1e-5), axis=1, keep_dims=True)
        a_loss = tf.reduce_mean(-(log_prob * tf.stop_gradient(td) + 0.01 * entropy))
    assert (c_loss.name, a_loss.name, td.name) == ("c_loss/Mean:0", "a_loss/Mean:0",
                                                   "TD_error:0")
    with tf.name_scope("local_grad"):
        grads, _ = tf.clip_by_global_norm(tf.gradients(a_loss + 0.5 * c_loss, lparams), 40.0)
    assert grads[0].name == "local_grad/clip_by_global_norm/local_grad/clip_by_global_norm/_0:0"
    pull = [lp.assign(gp) for lp, gp in zip(lparams, gparams)]
    push = tf.train.RMSPropOptimizer(0.01, name="RMSPropA", decay=0.99,
                                     epsilon=0.1).apply_gradients(zip(grads, gparams))
    rs = np.random.RandomState(0)
    feed = {s: rs.randn(5, 4), a_his: [0, 1, 2, 1, 0], v_target: rs.randn(5, 1)}
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(pull)
            got.append(_r(sess.run([a_loss, c_loss], feed)))
            sess.run(push, feed)
    assert got == [[-0.5185, 2.7823], [-0.537, 2.7135], [-0.5553, 2.6475]]
    assert sorted(v.name for v in tf.global_variables() if "RMS" in v.name)[:2] == [
        "Global_Net/ap/bias/RMSPropA:0", "Global_Net/ap/bias/RMSPropA_1:0"]


def test_non_fused_batch_norm_ops_are_named_as_tf_nn_batch_normalization_names_them():
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    y = tf.layers.batch_normalization(x, training=True, fused=False)
    assert y.name == "batch_normalization/batchnorm/add_1:0"
    names = [o.name for o in tf.get_default_graph().get_operations()
             if o.name.startswith("batch_normalization/batchnorm/")]
    assert names == ["batch_normalization/batchnorm/add/y", "batch_normalization/batchnorm/add",
                     "batch_normalization/batchnorm/Rsqrt", "batch_normalization/batchnorm/mul",
                     "batch_normalization/batchnorm/mul_1", "batch_normalization/batchnorm/mul_2",
                     "batch_normalization/batchnorm/sub", "batch_normalization/batchnorm/add_1"]


def test_static_rnn_with_lengths_runs_each_step_in_tensorflows_conds():
    xs = [tf.constant(np.random.RandomState(k).randn(3, 2).astype(np.float32))
          for k in range(4)]
    seq = tf.placeholder(tf.int32, [None], "seq")
    cell = tf.nn.rnn_cell.GRUCell(3, kernel_initializer=tf.constant_initializer(0.3))
    outs, st = tf.nn.static_rnn(cell, xs, sequence_length=seq, dtype=tf.float32)
    assert [o.name for o in outs] == ["rnn/cond/Merge:0", "rnn/cond_1/Merge:0",
                                      "rnn/cond_2/Merge:0", "rnn/cond_3/Merge:0"]
    assert (st.name, str(outs[0].shape), str(st.shape)) == ("rnn/cond_3/Merge_1:0", "(3, 3)",
                                                            "(3, 3)")
    with tf.variable_scope("bi", initializer=tf.constant_initializer(0.2)):
        bo, fs, bs = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(2), tf.nn.rnn_cell.BasicLSTMCell(2), xs,
            sequence_length=seq, dtype=tf.float32)
    assert fs.c.name == "bi/bidirectional_rnn/fw/fw/cond_3/Merge_1:0"
    assert bs.h.name == "bi/bidirectional_rnn/bw/bw/cond_3/Merge_2:0"
    assert [v.name for v in tf.trainable_variables()][:2] == ["rnn/gru_cell/gates/kernel:0",
                                                             "rnn/gru_cell/gates/bias:0"]
    g = tf.gradients(tf.reduce_sum(outs[-1]) + tf.reduce_sum(bo[1]), tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s, b, f = sess.run([outs[1], st, bo[1], fs.h], {seq: [4, 2, 0]})
        assert _r(o) == [[0.1445] * 3, [-0.0832] * 3, [0.0] * 3]
        assert _r(s) == [[0.1717] * 3, [-0.0832] * 3, [0.0] * 3]
        assert _r(b) == [[0.1835, 0.1835, 0.1415, 0.1415], [0.0685, 0.0685, -0.0545, -0.0545],
                         [0.0] * 4]
        assert _r(f) == [[0.2735] * 2, [0.0685] * 2, [0.0] * 2]
        o, s = sess.run([outs[1], st], {seq: [1, 1, 1]})
        assert _r(o) == [[0.0] * 3] * 3 and _r(s) == [[0.0921] * 3, [0.0917] * 3, [0.0573] * 3]
        assert _r([v.sum() for v in sess.run(g, {seq: [4, 2, 1]})]) == [
            -0.9931, -0.3489, 1.5904, 1.6316, 3.1616, 2.2814, 1.6289, 1.9818]
