"""In-place kernel variants: a node overwrites its input 0 only when nobody else can see it.

`plan._write_in_place` binds `BiasAdd`, `Relu` and `ReluGrad` to kernels that write into
their input when that input is a fresh array (from `MatMul`, `BiasAdd`, `Relu`,
`ReluGrad`, possibly through `Identity` nodes) read by that node alone. Every test here
checks values against NumPy, and the `in_place` mark of the compiled plan's nodes.
The last test checks what replaces them with fusion on: fused nodes.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.runtime.config import RewriterConfig

RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 5))
W = RNG.standard_normal((5, 4))
B = RNG.standard_normal(4)


# Fusion (`runtime/fusion.py`) would turn BiasAdd + Relu into one fused node; these tests
# are about the in-place variants of the unfused kernels, so they switch it off.
NO_FUSION = tf.ConfigProto(graph_options=tf.GraphOptions(
    rewrite_options=RewriterConfig(remapping=RewriterConfig.OFF)))


def _in_place(sess) -> set[str]:
    return {n.name for cp in sess._plans.values() for n in cp.nodes if n.in_place}


def _layer(x):
    mm = tf.matmul(x, tf.constant(W), name="mm")
    pre = tf.nn.bias_add(mm, tf.constant(B), name="pre")
    return mm, pre, tf.nn.relu(pre, name="act")


def test_dense_layer_writes_in_place_when_only_the_activation_is_fetched():
    x = tf.placeholder(tf.float64, [None, 5])
    _, _, act = _layer(x)
    feed = X.copy()
    with tf.Session(config=NO_FUSION) as sess:
        for _ in range(3):
            got = sess.run(act, {x: feed})
            np.testing.assert_allclose(got, np.maximum(X @ W + B, 0))
        assert _in_place(sess) == {"pre", "act"}
    np.testing.assert_array_equal(feed, X)  # the feed is untouched


def test_fetched_intermediates_are_not_overwritten():
    x = tf.placeholder(tf.float64, [None, 5])
    mm, pre, act = _layer(x)
    with tf.Session(config=NO_FUSION) as sess:
        got_mm, got_pre, got_act = sess.run([mm, pre, act], {x: X})
        assert _in_place(sess) == set()
        got_mm2, got_act2 = sess.run([mm, act], {x: X})
        assert _in_place(sess) == {"act"}  # a second plan: pre is no longer fetched
    np.testing.assert_allclose(got_mm, X @ W)
    np.testing.assert_allclose(got_pre, X @ W + B)
    np.testing.assert_allclose(got_act, np.maximum(X @ W + B, 0))
    np.testing.assert_allclose(got_mm2, X @ W)
    np.testing.assert_allclose(got_act2, got_act)


def test_a_value_read_twice_is_not_overwritten():
    x = tf.placeholder(tf.float64, [None, 5])
    mm = tf.matmul(x, tf.constant(W))
    a = tf.nn.bias_add(mm, tf.constant(B), name="a")
    b = tf.nn.bias_add(mm, tf.constant(-B), name="b")
    with tf.Session(config=NO_FUSION) as sess:
        got_a, got_b = sess.run([a, b], {x: X})
        assert not _in_place(sess) & {"a", "b"}
    np.testing.assert_allclose(got_a, X @ W + B)
    np.testing.assert_allclose(got_b, X @ W - B)


def test_variables_and_feeds_are_never_overwritten():
    v = tf.Variable(X @ W, name="v")
    x = tf.placeholder(tf.float64, [6, 4])
    from_var = tf.nn.relu(tf.nn.bias_add(v, tf.constant(B)), name="from_var")
    from_feed = tf.nn.bias_add(x, tf.constant(B), name="from_feed")
    fed = X @ W
    with tf.Session(config=NO_FUSION) as sess:
        sess.run(v.initializer)
        for _ in range(3):
            got_v, got_f = sess.run([from_var, from_feed], {x: fed})
        assert "from_feed" not in _in_place(sess)
        np.testing.assert_allclose(sess.run(v), X @ W)
    np.testing.assert_allclose(got_v, np.maximum(X @ W + B, 0))
    np.testing.assert_allclose(got_f, X @ W + B)
    np.testing.assert_allclose(fed, X @ W)


def test_identity_passes_ownership_on_unless_it_is_fetched():
    x = tf.placeholder(tf.float64, [None, 5])
    mm = tf.matmul(x, tf.constant(W))
    ident = tf.identity(mm, name="ident")
    out = tf.nn.bias_add(ident, tf.constant(B), name="out")
    with tf.Session(config=NO_FUSION) as sess:
        np.testing.assert_allclose(sess.run(out, {x: X}), X @ W + B)
        assert "out" in _in_place(sess)
        got_ident, got_out = sess.run([ident, out], {x: X})
    np.testing.assert_allclose(got_ident, X @ W)
    np.testing.assert_allclose(got_out, X @ W + B)


def test_relu_gradient_in_place_matches_numpy():
    x = tf.placeholder(tf.float64, [None, 5])
    w = tf.Variable(W, name="w")
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), tf.constant(B)))
    w2 = RNG.standard_normal((4, 3))
    y = tf.matmul(h, tf.constant(w2))
    (gw,) = tf.gradients(tf.reduce_sum(y * y), [w])
    with tf.Session(config=NO_FUSION) as sess:
        sess.run(w.initializer)
        got = sess.run(gw, {x: X})
        assert any("ReluGrad" in n for n in _in_place(sess))
    pre = X @ W + B
    dy = 2 * (np.maximum(pre, 0) @ w2)
    np.testing.assert_allclose(got, X.T @ ((dy @ w2.T) * (pre > 0)), rtol=1e-10)


def test_partial_run_keeps_values_needed_later():
    x = tf.placeholder(tf.float64, [None, 5])
    mm, _, act = _layer(x)
    with tf.Session(config=NO_FUSION) as sess:
        handle = sess.partial_run_setup([act, mm], [x])
        got_act = sess.partial_run(handle, act, {x: X})
        got_mm = sess.partial_run(handle, mm)
    np.testing.assert_allclose(got_act, np.maximum(X @ W + B, 0))
    np.testing.assert_allclose(got_mm, X @ W)


def test_in_place_inside_a_while_loop():
    w = tf.constant(np.eye(4) * 0.5)

    def body(i, h):
        return i + 1, tf.nn.relu(tf.nn.bias_add(tf.matmul(h, w), tf.constant(B)))

    h0 = tf.constant(X @ W)
    _, out = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), h0])
    want = X @ W
    for _ in range(3):
        want = np.maximum(want @ (np.eye(4) * 0.5) + B, 0)
    with tf.Session(config=NO_FUSION) as sess:
        np.testing.assert_allclose(sess.run(out), want)


def test_with_fusion_on_the_elementwise_tails_become_fused_nodes():
    x = tf.placeholder(tf.float64, [None, 5])
    mm = tf.matmul(x, tf.constant(W))
    fused = tf.sin(mm) * 2.0
    act = tf.nn.relu(tf.matmul(fused, tf.constant(np.eye(4))) + tf.constant(B), name="act")
    with tf.Session() as sess:
        got = sess.run(act, {x: X})
        fused_nodes = [n for cp in sess._plans.values() for n in cp.nodes if n.fused]
        assert {tuple(op.type for op in n.fused) for n in fused_nodes} == {
            ("Sin", "Mul"), ("AddV2", "Relu")}
    np.testing.assert_allclose(got, np.maximum((np.sin(X @ W) * 2.0) @ np.eye(4) + B, 0))
