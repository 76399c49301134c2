"""``tf.GradientTape`` in graph mode (`flowgraph.ops.gradient_tape`).

Oracle-checked (TensorFlow 2.15 tf.compat.v1, a graph, x = [1, 2, 3]): with
``watch(x)``, ``gradient(sum(x * x * v), x)`` is [2, 8, 18] for v = [1, 2, 3]; a value
computed before the tape (``pre = 3x``) or under ``stop_recording`` (``s = 2x``) is a
constant: ``gradient(sum(pre * x), x)`` is [3, 6, 9] and ``gradient(sum(s * x), x)``
[2, 4, 6]; a second ``gradient`` call of a non-persistent tape raises RuntimeError; a
source the target does not reach gets None, or zeros with
``UnconnectedGradients.ZERO``; with ``watch_accessed_variables=False`` an unwatched
variable gets None; ``watched_variables()`` lists the resource variables read. (TF's
tape fails on TF1 reference variables; flowgraph's variables are watched as TF's
resource variables are.)
"""

import numpy as np
import pytest

import flowgraph as tf

X = np.array([1.0, 2.0, 3.0], np.float32)


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed)


def test_the_tape_differentiates_only_what_it_recorded():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        pre = x * 3.0
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * x * v)
            z = tf.reduce_sum(pre * x)
            with tape.stop_recording():
                s = x * 2.0
            u = tf.reduce_sum(s * x)
        gx, gv = tape.gradient(y, [x, v])
        assert [w.op.name for w in tape.watched_variables()] == ["v"]
        out = _run(gx, gv, tape.gradient(z, x), tape.gradient(u, x), feed={x: X})
    np.testing.assert_allclose(out[0], 2 * X * [1, 2, 3])
    np.testing.assert_allclose(out[1], X * X)
    np.testing.assert_allclose(out[2], 3 * X)  # not 6x: pre is a constant for the tape
    np.testing.assert_allclose(out[3], 2 * X)


def test_gradient_matches_finite_differences_along_a_random_direction():
    rng = np.random.RandomState(0)
    x0 = rng.randn(4, 3)
    d = rng.randn(4, 3)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4, 3])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.tanh(tf.matmul(x, tf.transpose(x))) * tf.sin(x[:, :1]))
        g = tape.gradient(y, x)
        with tf.Session() as sess:
            grad = sess.run(g, {x: x0})
            eps = 1e-6
            fd = (sess.run(y, {x: x0 + eps * d}) - sess.run(y, {x: x0 - eps * d})) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad * d), fd, rtol=1e-6)


def test_non_persistent_unconnected_and_unwatched():
    with tf.Graph().as_default():
        x = tf.constant(X)
        c = tf.constant(X)
        v = tf.Variable([1.0, 1.0, 1.0], name="v")
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * 2.0 + tf.stop_gradient(c))
        assert tape.gradient(y, c) is None
        with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
            tape.gradient(y, x)
        with tf.GradientTape(persistent=True) as tape:
            y = tf.reduce_sum(x * 2.0)  # x is not watched
            w = tf.reduce_sum(v * x)
        assert tape.gradient(y, x) is None
        zero = tape.gradient(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        with tf.GradientTape(watch_accessed_variables=False) as quiet:
            a = tf.reduce_sum(v * 2.0)
        assert quiet.gradient(a, v) is None and quiet.watched_variables() == ()
        gv = tape.gradient(w, {"v": v})
        out = _run(zero, gv["v"])
    np.testing.assert_array_equal(out[0], [0, 0, 0])
    np.testing.assert_allclose(out[1], X)


def test_training_with_tape_gradients_and_apply_gradients():
    rng = np.random.RandomState(1)
    xs = rng.randn(32, 2).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0]], np.float32) + 0.5
    with tf.Graph().as_default():
        w = tf.Variable(tf.zeros([2, 1]))
        b = tf.Variable(0.0)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(xs, w) + b - ys))
        grads = tape.gradient(loss, [w, b])
        train = tf.train.GradientDescentOptimizer(0.3).apply_gradients(zip(grads, [w, b]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(100):
                sess.run(train)
            wv, bv = sess.run([w, b])
    np.testing.assert_allclose(wv.ravel(), [2.0, -1.0], atol=1e-3)
    np.testing.assert_allclose(bv, 0.5, atol=1e-3)


def test_jacobian_of_a_vector():
    with tf.Graph().as_default():
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x * tf.reduce_sum(x)
        jac = tape.jacobian(y, x)
        (j,) = _run(jac)
    expected = np.diag(2 * X * X.sum()) + (X * X)[:, None]
    np.testing.assert_allclose(j, expected, rtol=1e-6)
