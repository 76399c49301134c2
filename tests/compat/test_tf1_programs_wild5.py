"""TF1 programs "from the wild", round 5: the classic tutorial programs (TensorFlow-Examples,
"Deep MNIST", CIFAR-10, word2vec, RNN/seq2seq tutorials, CS20SI), and the classes of
discrepancy they found.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed (rounded to 4 decimals there).
Covered: the op layout of ``tf.nn.dropout`` (``dropout/SelectV2``), of the softmax
cross-entropies (``softmax_cross_entropy_with_logits/Reshape_2``,
``SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits``), of
``embedding_lookup`` (``embedding_lookup/Identity``) and of the sampled losses (the
per-logit losses and row sums outside the loss's scope); the op names inside the RNN
cells (operators, as TF writes them: ``lstm_cell/mul_2``, ``gru_cell/add``); the extra
``rnn/`` name scope a plain ``RNNCell`` such as ``MultiRNNCell`` opens; the static shapes
of ``dynamic_rnn`` with ``sequence_length`` and of ``bidirectional_dynamic_rnn``; the
final op names of the image preprocessing composites (``adjust_contrast/Identity``,
``per_image_standardization``, ``resize_image_with_crop_or_pad/Squeeze``); the update ops
of a non-fused ``tf.layers.batch_normalization`` under a ``training`` placeholder
(``cond_2/Merge``); ``tf.train.Supervisor`` writing ``graph.pbtxt``.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _digits():
    sklearn = pytest.importorskip("sklearn.datasets")
    dg = sklearn.load_digits()
    return (dg.data / 16.0).astype(np.float32), np.eye(10)[dg.target].astype(np.float32)


def _det(shape, k, scale=0.1):
    return tf.Variable(tf.constant(np.random.RandomState(k).randn(*shape).astype(np.float32)
                                   * scale))


# -- dropout --------------------------------------------------------------------------------
def test_dropout_with_a_keep_prob_placeholder_has_tensorflows_ops():
    keep_prob = tf.placeholder(tf.float32)
    h = tf.ones([4, 32])
    d = tf.nn.dropout(h, keep_prob)
    assert d.name == "dropout/SelectV2:0" and str(d.shape) == "(4, 32)"
    g = tf.get_default_graph()
    assert [o.type for o in g.get_operations() if o.name.startswith("dropout/")] == \
        ["Const", "Sub", "RealDiv", "Const", "RandomUniform", "GreaterEqual", "Const",
         "SelectV2"]  # TF 2.15: dropout/Shape of a static shape is a Const
    # TF1's wrapper computes rate = 1 - keep_prob outside the scope
    assert [(o.name, o.type) for o in g.get_operations() if o.name.startswith("sub")] == \
        [("sub/x", "Const"), ("sub", "Sub")]
    with tf.Session() as sess:
        assert np.array_equal(sess.run(d, {keep_prob: 1.0}), np.ones([4, 32]))
        v = sess.run(d, {keep_prob: 0.5})
        assert sorted(set(v.ravel().tolist())) == [0.0, 2.0]


def test_dropout_with_python_rates():
    x = tf.ones([3, 5])
    d = tf.nn.dropout(x, keep_prob=0.8)
    assert d.op.type == "SelectV2"
    assert d.op.inputs[1].op.type == "Mul"  # x * 1/keep_prob, a constant scale
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    assert tf.nn.dropout(x, rate=0.0) is x
    r = tf.nn.dropout(x, rate=tf.constant(0.25))
    assert r.op.inputs[1].op.type == "RealDiv"
    with pytest.raises(ValueError):
        tf.nn.dropout(x, rate=tf.constant(0.25, tf.float64))  # not x's dtype
    with pytest.raises(ValueError):
        tf.nn.dropout(x, rate=tf.zeros([2]))
    with pytest.raises(ValueError):
        tf.nn.dropout(x, 1.5)
    with pytest.raises(ValueError):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with tf.Session() as sess:
        v = sess.run(tf.nn.dropout(tf.ones([2000]), rate=0.75, seed=1))
    assert sorted(set(v.tolist())) == [0.0, 4.0] and 0.2 < (v > 0).mean() < 0.3


@pytest.mark.slow
def test_convolutional_network_raw_trains_as_in_tensorflow():
    """TensorFlow-Examples convolutional_network_raw.py on the sklearn digits."""
    Xd, Yd = _digits()
    X = tf.placeholder(tf.float32, [None, 64])
    Y = tf.placeholder(tf.float32, [None, 10])
    keep_prob = tf.placeholder(tf.float32)

    def conv2d(x, W, b):
        return tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, W, [1, 1, 1, 1], "SAME"), b))

    def maxpool2d(x):
        return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    w = {"wc1": _det([3, 3, 1, 8], 1), "wc2": _det([3, 3, 8, 16], 2),
         "wd1": _det([2 * 2 * 16, 32], 3), "out": _det([32, 10], 4)}
    b = {"bc1": tf.Variable(tf.zeros([8])), "bc2": tf.Variable(tf.zeros([16])),
         "bd1": tf.Variable(tf.zeros([32])), "out": tf.Variable(tf.zeros([10]))}
    x = tf.reshape(X, shape=[-1, 8, 8, 1])
    conv1 = maxpool2d(conv2d(x, w["wc1"], b["bc1"]))
    conv2 = maxpool2d(conv2d(conv1, w["wc2"], b["bc2"]))
    fc1 = tf.reshape(conv2, [-1, w["wd1"].get_shape().as_list()[0]])
    fc1 = tf.nn.dropout(tf.nn.relu(tf.add(tf.matmul(fc1, w["wd1"]), b["bd1"])), keep_prob)
    logits = tf.add(tf.matmul(fc1, w["out"]), b["out"])
    assert [(m.name, str(m.shape)) for m in (conv1, conv2, fc1)] == [
        ("MaxPool:0", "(?, 4, 4, 8)"), ("MaxPool_1:0", "(?, 2, 2, 16)"),
        ("dropout/SelectV2:0", "(?, 32)")]
    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss_op)
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(Y, 1)), tf.float32))
    got = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, 11):
            idx = np.arange((step * 32) % 1700, (step * 32) % 1700 + 32)
            f = {X: Xd[idx], Y: Yd[idx], keep_prob: 1.0}
            sess.run(train_op, feed_dict=f)
            if step in (1, 10):
                got.append(sess.run([loss_op, acc], feed_dict=f))
    np.testing.assert_allclose(got, [[2.2791, 0.125], [2.0964, 0.5625]], atol=2e-4)


# -- cross-entropies ------------------------------------------------------------------------
def test_softmax_cross_entropy_has_tensorflows_layout():
    logits = tf.placeholder(tf.float32, [None, 5])
    labels = tf.placeholder(tf.float32, [None, 5])
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert v2.name == "softmax_cross_entropy_with_logits/Reshape_2:0" and str(v2.shape) == "(?,)"
    types = [o.type for o in tf.get_default_graph().get_operations()
             if o.name.startswith("softmax_cross_entropy_with_logits")]
    assert types == ["Const", "Shape", "Const", "Shape", "Const", "Sub", "Pack", "Const",
                     "Slice", "Const", "Const", "ConcatV2", "Reshape", "Const", "Shape",
                     "Const", "Sub", "Pack", "Const", "Slice", "Const", "Const", "ConcatV2",
                     "Reshape", "SoftmaxCrossEntropyWithLogits", "Const", "Sub", "Const",
                     "Pack", "Slice", "Reshape"]
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert v1.name == "softmax_cross_entropy_with_logits_sg/Reshape_2:0"
    named = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xe")
    assert named.name == "xe/Reshape_2:0" and named.op.inputs[0].op.name == "xe"
    three = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.fill([2, 3, 5], 0.2),
                                                       logits=tf.zeros([2, 3, 5]))
    assert str(three.shape) == "(2, 3)"
    unknown = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.placeholder(tf.float32),
                                                         logits=tf.placeholder(tf.float32))
    assert unknown.shape.ndims is None
    lg = np.array([[1.0, 2.0, 0.5, 0.0, -1.0], [0.0, 0.0, 3.0, 1.0, 1.0]], np.float32)
    lb = np.eye(5, dtype=np.float32)[[1, 2]]
    with tf.Session() as sess:
        out = sess.run([v2, v1, three], {logits: lg, labels: lb})
    np.testing.assert_allclose(out[0], [0.5744, 0.315], atol=1e-4)
    np.testing.assert_allclose(out[1], out[0])
    np.testing.assert_allclose(out[2], np.full([2, 3], np.log(5.0)), rtol=1e-6)


def test_sparse_softmax_cross_entropy_op_is_nested_in_its_scope():
    logits = tf.placeholder(tf.float32, [None, 5])
    s = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.placeholder(tf.int32, [None]), logits=logits)
    assert s.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits:0"
    named = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=[[0.0, 1.0]],
                                                           name="xe")
    assert named.name == "xe/xe:0"
    three = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.zeros([2, 3], tf.int32), logits=tf.zeros([2, 3, 4]))
    assert three.name == "SparseSoftmaxCrossEntropyWithLogits_1/Reshape_2:0"
    assert str(three.shape) == "(2, 3)"
    tf.losses.sparse_softmax_cross_entropy([0, 2], tf.ones([2, 3]))
    names = {o.name for o in tf.get_default_graph().get_operations()}
    assert "sparse_softmax_cross_entropy_loss/xentropy/xentropy" in names


def test_logistic_regression_example_structure_and_training():
    """TensorFlow-Examples logistic_regression.py (zeros init, batches of 100), on fixed
    random data."""
    rng = np.random.RandomState(0)
    Xd = rng.rand(1700, 64).astype(np.float32)
    Yd = np.eye(10, dtype=np.float32)[(Xd[:, :10].argmax(1))]
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.float32, [None, 10])
    W = tf.Variable(tf.zeros([64, 10]))
    b = tf.Variable(tf.zeros([10]))
    pred = tf.nn.softmax(tf.matmul(x, W) + b)
    cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
    optimizer = tf.train.GradientDescentOptimizer(0.1).minimize(cost)
    assert [pred.name, cost.name, optimizer.name] == ["Softmax:0", "Mean:0",
                                                      "GradientDescent"]
    costs = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            avg = 0.0
            for i in range(17):
                _, c = sess.run([optimizer, cost], {x: Xd[i * 100:(i + 1) * 100],
                                                    y: Yd[i * 100:(i + 1) * 100]})
                avg += c / 17
            costs.append(avg)
        logits = tf.matmul(x, W) + b
        ce = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
        sce = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.argmax(y, 1), logits=logits))
        assert ce.op.inputs[0].op.type == "Reshape"
        vals = sess.run([ce, sce], {x: Xd[:50], y: Yd[:50]})
    np.testing.assert_allclose(vals[0], vals[1], rtol=1e-6)
    assert costs[1] < costs[0] < 2.31


# -- embeddings and sampled losses ----------------------------------------------------------
def test_embedding_lookup_ends_in_an_identity():
    emb = tf.Variable(tf.constant(np.arange(12.0, dtype=np.float32).reshape(6, 2)))
    ids = tf.placeholder(tf.int32, [3])
    e = tf.nn.embedding_lookup(emb, ids)
    assert (e.name, str(e.shape), e.op.type) == ("embedding_lookup/Identity:0", "(3, 2)",
                                                 "Identity")
    assert e.op.inputs[0].op.name == "embedding_lookup"
    clipped = tf.nn.embedding_lookup(emb, [1], max_norm=1.0)
    assert clipped.name == "embedding_lookup_1/Identity:0"
    grad = tf.gradients(tf.reduce_sum(e), emb)[0]
    assert type(grad).__name__ == "IndexedSlices"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(e, {ids: [5, 0, 5]}).tolist() == [[10, 11], [0, 1], [10, 11]]
        np.testing.assert_allclose(sess.run(clipped), [[0.5547, 0.8321]], atol=1e-4)


def _w2v_setup():
    vocab, dim, batch = 12, 6, 8
    inputs = tf.placeholder(tf.int32, [batch])
    labels = tf.placeholder(tf.int32, [batch, 1])
    rs = np.random.RandomState
    embeddings = tf.Variable(tf.constant(rs(0).uniform(-1, 1, (vocab, dim)).astype(np.float32)))
    embed = tf.nn.embedding_lookup(embeddings, inputs)
    nce_w = tf.Variable(tf.constant(rs(1).randn(vocab, dim).astype(np.float32) / np.sqrt(dim)))
    nce_b = tf.Variable(tf.zeros([vocab]))
    sv = (tf.constant([3, 5, 7, 9], tf.int64), tf.constant(np.full([batch, 1], 0.3, np.float32)),
          tf.constant(np.full([4], 0.2, np.float32)))
    kw = dict(weights=nce_w, biases=nce_b, labels=labels, inputs=embed, num_sampled=4,
              num_classes=vocab, sampled_values=sv)
    feed = {inputs: [2, 2, 5, 5, 3, 3, 6, 6], labels: [[1], [5], [2], [3], [5], [6], [3], [7]]}
    return kw, feed


def test_nce_and_sampled_softmax_losses_match_tensorflow_with_fixed_samples():
    """word2vec_basic.py's losses with fixed ``sampled_values`` (the sampler's stream is
    not TensorFlow's)."""
    kw, feed = _w2v_setup()
    nce = tf.nn.nce_loss(**kw)
    ssm = tf.nn.sampled_softmax_loss(**kw)
    nce_rm = tf.nn.nce_loss(remove_accidental_hits=True, **kw)
    ssm_nr = tf.nn.sampled_softmax_loss(remove_accidental_hits=False, **kw)
    # the per-logit losses and the row sums are top-level ops, as in TF
    assert (nce.name, str(nce.shape), nce.op.inputs[0].op.type) == ("Reshape:0", "(8,)",
                                                                     "MatMul")
    assert nce.op.inputs[0].op.inputs[0].op.name == "sampled_losses"
    assert ssm.name == "softmax_cross_entropy_with_logits/Reshape_2:0"
    assert ssm.op.inputs[0].op.inputs[1].op.inputs[0].op.name == "labels_stop_gradient"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([nce, ssm, nce_rm, ssm_nr], feed)
    np.testing.assert_allclose(got[0], [9.3235, 8.7179, 8.3127, 8.297, 8.5586, 8.2483, 7.1959,
                                        7.1458], atol=2e-4)
    np.testing.assert_allclose(got[1], [3.7079, 1.6555, 2.3153, 2.0888, 2.9028, 1.9072, 1.9717,
                                        1.7717], atol=2e-4)
    np.testing.assert_allclose(got[2], [9.3235, 6.3963, 8.3127, 6.5717, 7.3346, 8.2483, 5.6463,
                                        5.4472], atol=2e-4)
    np.testing.assert_allclose(got[3], [3.7079, 1.9074, 2.3153, 2.2592, 2.9819, 1.9072, 2.1614,
                                        1.9989], atol=2e-4)


# -- RNN cells ------------------------------------------------------------------------------
_CELLS = {
    "lstm": (lambda: tf.nn.rnn_cell.LSTMCell(4, initializer=tf.constant_initializer(0.05)),
             ["lstm/rnn/lstm_cell/mul_2:0", "lstm/rnn/lstm_cell/mul_5:0",
              "lstm/rnn/lstm_cell/mul_8:0"],
             [[-0.0007] * 4, [-0.0101] * 4]),
    "lstm_peep": (lambda: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=3,
                                                  initializer=tf.constant_initializer(0.05)),
                  ["lstm_peep/rnn/lstm_cell/MatMul_1:0", "lstm_peep/rnn/lstm_cell/MatMul_3:0",
                   "lstm_peep/rnn/lstm_cell/MatMul_5:0"],
                  [[-0.0007] * 3, [-0.0023] * 3]),
    "gru": (lambda: tf.nn.rnn_cell.GRUCell(4, kernel_initializer=tf.constant_initializer(0.05)),
            ["gru/rnn/gru_cell/add:0", "gru/rnn/gru_cell/add_1:0", "gru/rnn/gru_cell/add_2:0"],
            [[-0.0118] * 4, [-0.0205] * 4]),
    "basic": (lambda: tf.nn.rnn_cell.BasicRNNCell(4),
              ["basic/rnn/basic_rnn_cell/Tanh:0", "basic/rnn/basic_rnn_cell/Tanh_1:0",
               "basic/rnn/basic_rnn_cell/Tanh_2:0"],
              [[-0.1188] * 4, [-0.0685] * 4]),
    "multi": (lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4)
                                                   for _ in range(2)]),
              ["multi/rnn/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_2:0",
               "multi/rnn/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_5:0",
               "multi/rnn/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/Mul_8:0"],
              [[0.0029] * 4, [0.001] * 4]),
}


@pytest.mark.parametrize("name", sorted(_CELLS))
def test_static_rnn_cell_output_names_and_values(name):
    make, names, want = _CELLS[name]
    xs = [tf.constant(np.random.RandomState(i).randn(2, 3).astype(np.float32))
          for i in range(3)]
    with tf.variable_scope(name, initializer=tf.constant_initializer(0.05)):
        outs, _ = tf.nn.static_rnn(make(), xs, dtype=tf.float32)
    assert [o.name for o in outs] == names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(outs[-1]), want, atol=1e-4)


def test_multi_rnn_cell_variables_keep_their_scope_and_dynamic_rnn_nests_in_the_loop():
    with tf.variable_scope("m"):
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(4) for _ in range(2)])
        tf.nn.dynamic_rnn(cell, tf.zeros([2, 2, 3]), dtype=tf.float32)
    assert [v.name for v in tf.global_variables()] == [
        "m/rnn/multi_rnn_cell/cell_0/basic_rnn_cell/kernel:0",
        "m/rnn/multi_rnn_cell/cell_0/basic_rnn_cell/bias:0",
        "m/rnn/multi_rnn_cell/cell_1/basic_rnn_cell/kernel:0",
        "m/rnn/multi_rnn_cell/cell_1/basic_rnn_cell/bias:0"]
    scopes = sorted({o.name.rsplit("/", 1)[0] for o in tf.get_default_graph().get_operations()
                     if o.type == "Tanh"})
    assert scopes == ["m/rnn/while/rnn/multi_rnn_cell/cell_0/basic_rnn_cell",
                      "m/rnn/while/rnn/multi_rnn_cell/cell_1/basic_rnn_cell"]


def test_recurrent_network_example_trains_as_in_tensorflow():
    """TensorFlow-Examples recurrent_network.py: BasicLSTMCell + static_rnn over unstack."""
    X = tf.placeholder("float", [None, 4, 3])
    Y = tf.placeholder("float", [None, 2])
    w_out = tf.Variable(tf.constant(np.random.RandomState(1).randn(5, 2).astype(np.float32)))
    b_out = tf.Variable(tf.constant(np.random.RandomState(2).randn(2).astype(np.float32)))
    x = tf.unstack(X, 4, 1)
    with tf.variable_scope("rnn_vars", initializer=tf.constant_initializer(0.1)):
        outputs, states = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(5, forget_bias=1.0), x,
                                           dtype=tf.float32)
    assert [o.name for o in outputs][-1] == "rnn_vars/rnn/basic_lstm_cell/Mul_11:0"
    assert states.c.name == "rnn_vars/rnn/basic_lstm_cell/Add_7:0"
    logits = tf.matmul(outputs[-1], w_out) + b_out
    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=Y))
    train_op = tf.train.GradientDescentOptimizer(learning_rate=0.5).minimize(loss_op)
    rng = np.random.RandomState(0)
    bx = rng.randn(6, 4, 3).astype(np.float32)
    by = np.eye(2)[(bx.sum((1, 2)) > 0).astype(int)].astype(np.float32)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, 21):
            sess.run(train_op, feed_dict={X: bx, Y: by})
            if step in (1, 10, 20):
                losses.append(sess.run(loss_op, feed_dict={X: bx, Y: by}))
    np.testing.assert_allclose(losses, [0.4745, 0.1553, 0.0598], atol=2e-4)


def test_dynamic_rnn_with_sequence_length_keeps_the_batch_dimension_unknown():
    x = tf.placeholder("float", [None, 5, 2])
    seqlen = tf.placeholder(tf.int32, [None])
    with tf.variable_scope("dyn", initializer=tf.constant_initializer(0.1)):
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), x, dtype=tf.float32,
                                           sequence_length=seqlen)
    assert (outputs.name, str(outputs.shape), state.c.name, str(state.h.shape)) == (
        "dyn/rnn/transpose_1:0", "(?, 5, 4)", "dyn/rnn/while/Exit_3:0", "(?, 4)")
    with tf.variable_scope("gru", initializer=tf.constant_initializer(0.1)):
        gout, gstate = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), x, sequence_length=[5, 2, 3],
                                         dtype=tf.float32)
    assert (str(gout.shape), str(gstate.shape)) == ("(?, 5, 3)", "(?, 3)")
    xv = np.random.RandomState(0).randn(3, 5, 2).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        h, g = sess.run([state.h, gstate], {x: xv, seqlen: [5, 2, 3]})
    np.testing.assert_allclose(h[:, 0], [0.1423, 0.063, -0.0061], atol=1e-4)
    np.testing.assert_allclose(g[:, 0], [0.093, 0.0525, -0.0131], atol=1e-4)


def test_bidirectional_dynamic_rnn_reverses_outside_its_scope():
    X = tf.placeholder("float", [None, 3, 2])
    xv = np.random.RandomState(0).randn(2, 3, 2).astype(np.float32)
    with tf.variable_scope("d", initializer=tf.constant_initializer(0.1)):
        (ofw, obw), (sfw, sbw) = tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(3), X, sequence_length=[3, 2],
            dtype=tf.float32)
        out = tf.concat([ofw, obw], axis=2)
    assert [(t.name, str(t.shape)) for t in (ofw, obw, sfw, sbw, out)] == [
        ("d/bidirectional_rnn/fw/fw/transpose_1:0", "(?, 3, 3)"),
        ("d/ReverseSequence:0", "(2, 3, 3)"),
        ("d/bidirectional_rnn/fw/fw/while/Exit_3:0", "(?, 3)"),
        ("d/bidirectional_rnn/bw/bw/while/Exit_3:0", "(2, 3)"),
        ("d/concat:0", "(2, 3, 6)")]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, f, b = sess.run([out, sfw, sbw], {X: xv})
    np.testing.assert_allclose(o[:, :, 0], [[0.0487, 0.1055, 0.1072], [0.0202, 0.0241, 0.0]],
                               atol=1e-4)
    np.testing.assert_allclose(o[:, :, 3], [[0.117, 0.0839, 0.0224], [0.0267, 0.0081, 0.0]],
                               atol=1e-4)
    np.testing.assert_allclose([f[:, 0], b[:, 0]], [[0.1072, 0.0241], [0.117, 0.0267]],
                               atol=1e-4)


# -- image preprocessing (cifar10_input.py) -------------------------------------------------
def test_cifar10_input_preprocessing_names_and_values():
    img = tf.constant(np.arange(6 * 6 * 3, dtype=np.float32).reshape(6, 6, 3) / 100.0)
    distorted = tf.random_crop(img, [4, 4, 3], seed=1)
    distorted = tf.image.random_flip_left_right(distorted, seed=2)
    distorted = tf.image.random_brightness(distorted, max_delta=63, seed=3)
    distorted = tf.image.random_contrast(distorted, lower=0.2, upper=1.8, seed=4)
    float_image = tf.image.per_image_standardization(distorted)
    assert [(t.name, str(t.shape)) for t in (distorted, float_image)] == [
        ("adjust_contrast/Identity:0", "(4, 4, 3)"), ("per_image_standardization:0", "(4, 4, 3)")]
    resized = tf.image.resize_image_with_crop_or_pad(img, 4, 4)
    ps = tf.image.per_image_standardization(resized)
    assert [(t.name, str(t.shape)) for t in (resized, ps)] == [
        ("resize_image_with_crop_or_pad/Squeeze:0", "(4, 4, 3)"),
        ("per_image_standardization_1:0", "(4, 4, 3)")]
    bright = tf.image.adjust_brightness(resized, 0.5)
    # TF 2.15: random_brightness above made the first adjust_brightness scope
    assert bright.name == "adjust_brightness_1/Identity:0"
    assert bright.op.inputs[0].op.name == "adjust_brightness_1"
    u8 = tf.image.adjust_brightness(tf.zeros([2, 2, 1], tf.uint8), 0.5)
    assert u8.dtype == tf.uint8
    with tf.Session() as sess:
        fi = sess.run(float_image)
        assert abs(fi.mean()) < 1e-5 and abs(fi.std() - 1.0) < 1e-3
        np.testing.assert_allclose(sess.run(resized)[:, 0, 0], [0.21, 0.39, 0.57, 0.75],
                                   atol=1e-6)
        np.testing.assert_allclose(sess.run(ps)[0], [[-1.5917, -1.5427, -1.4937],
                                                     [-1.4448, -1.3958, -1.3468],
                                                     [-1.2978, -1.2489, -1.1999],
                                                     [-1.1509, -1.1019, -1.053]], atol=1e-4)
        np.testing.assert_allclose(sess.run(bright)[0, :, 0], [0.71, 0.74, 0.77, 0.8], atol=1e-6)
        np.testing.assert_allclose(
            sess.run(tf.image.adjust_contrast(resized, 2.0))[0, :, 0],
            [-0.105, -0.045, 0.015, 0.075], atol=1e-6)
        pad = sess.run(tf.image.resize_image_with_crop_or_pad(img, 8, 7))
        assert pad.shape == (8, 7, 3) and not pad[0].any()


# -- tf.train.Supervisor (the PTB tutorial) -------------------------------------------------
def test_supervisor_managed_session_writes_the_graph_and_restores(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.constant([1.0, -2.0]), name="w")
        loss = tf.reduce_sum(tf.square(w), name="loss")
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        sv = tf.train.Supervisor(logdir=d, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as session:
            for _ in range(5):
                _, val = session.run([train_op, loss])
            sv.saver.save(session, str(tmp_path / "model"), global_step=sv.global_step)
        assert round(float(val), 4) == 0.8389
    files = sorted(f.name for f in tmp_path.iterdir() if not f.name.startswith("events"))
    assert files == ["checkpoint", "graph.pbtxt", "model-5.data-00000-of-00001",
                     "model-5.index", "model-5.meta"]
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.constant([0.0, 0.0]), name="w")
        sv = tf.train.Supervisor(logdir=d, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as session:
            np.testing.assert_allclose(session.run(w), [0.3277, -0.6554], atol=1e-4)
            assert session.run(gs) == 5
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):  # a replica's variables must be placed (as TF)
            tf.Variable(1.0)
        worker = tf.train.Supervisor(logdir=d, is_chief=False)
        with pytest.raises(RuntimeError):
            worker.start_standard_services(None)


# -- tf.layers.batch_normalization with a `training` placeholder (dcgan.py) ----------------
def test_batch_norm_update_ops_follow_tensorflows_fused_and_non_fused_paths():
    is_training = tf.placeholder(tf.bool)
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope("Generator"):
        h = tf.layers.batch_normalization(x, training=is_training)  # 2-D: not fused
        img = tf.layers.batch_normalization(tf.reshape(h, [-1, 2, 2, 1]), training=is_training)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope="Generator")
    assert [o.name for o in updates] == [
        "Generator/batch_normalization/cond_2/Merge",
        "Generator/batch_normalization/cond_3/Merge",
        "Generator/batch_normalization_1/AssignMovingAvg",
        "Generator/batch_normalization_1/AssignMovingAvg_1"]
    mm = next(v for v in tf.global_variables()
              if v.name == "Generator/batch_normalization/moving_mean:0")
    xv = np.arange(8, dtype=np.float32).reshape(2, 4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(updates, {x: xv, is_training: False})
        assert sess.run(mm).tolist() == [0.0] * 4
        sess.run(updates, {x: xv, is_training: True})
        np.testing.assert_allclose(sess.run(mm), [0.02, 0.03, 0.04, 0.05], rtol=1e-5)
        out = sess.run(img, {x: xv, is_training: True})
    assert out.shape == (2, 2, 2, 1)
