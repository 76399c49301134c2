"""`tf.contrib.layers` functional layers and `optimize_loss` (issue 15, item 1), checked
against NumPy and against the `tf.layers` equivalents (TF1 contrib variable names)."""

import numpy as np
import pytest

import flowgraph as tf


def _init_run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict=feed)


def test_fully_connected_names_shapes_and_values():
    x = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.contrib.layers.fully_connected(tf.constant(x), 4)
        y2 = tf.contrib.layers.fully_connected(tf.constant(x), 2, activation_fn=None)
        names = [v.name for v in tf.global_variables()]
        assert names == ["fully_connected/weights:0", "fully_connected/biases:0",
                         "fully_connected_1/weights:0", "fully_connected_1/biases:0"]
        assert [v.name for v in tf.model_variables()] == names
        assert [v.name for v in tf.trainable_variables()] == names
        w, b, w2, out, out2 = _init_run([tf.global_variables()[0], tf.global_variables()[1],
                                         tf.global_variables()[2], y, y2])
    assert w.shape == (3, 4) and b.shape == (4,) and not b.any()
    limit = np.sqrt(6.0 / (3 + 4))  # xavier (glorot) uniform
    assert np.abs(w).max() <= limit
    np.testing.assert_allclose(out, np.maximum(x @ w, 0.0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out2, x @ w2, rtol=1e-5, atol=1e-6)


def test_fully_connected_options():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2, 3])
        y = tf.contrib.layers.fully_connected(
            x, 4, activation_fn=tf.nn.sigmoid, weights_initializer=tf.ones_initializer(),
            biases_initializer=tf.constant_initializer(0.5),
            weights_regularizer=tf.contrib.layers.l2_regularizer(0.1), scope="fc",
            variables_collections=["mine"], outputs_collections="outs")
        assert y.shape.as_list() == [None, 2, 4]
        assert [v.name for v in tf.get_collection("mine")] == ["fc/weights:0", "fc/biases:0"]
        assert tf.get_collection("outs") == [y]
        reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert len(reg) == 1
        # reuse shares the variables
        tf.contrib.layers.fully_connected(x, 4, scope="fc", reuse=True)
        assert len(tf.global_variables()) == 2
        # no biases
        tf.contrib.layers.fully_connected(x, 4, biases_initializer=None, scope="nob")
        assert [v.name for v in tf.global_variables()][-1] == "nob/weights:0"
        xv = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
        out, r = _init_run([y, reg[0]], {x: xv})
    expect = 1 / (1 + np.exp(-(xv.sum(-1, keepdims=True) + 0.5)))
    np.testing.assert_allclose(out, np.broadcast_to(expect, (1, 2, 4)), rtol=1e-5)
    np.testing.assert_allclose(r, 0.1 * 12 / 2, rtol=1e-5)


def test_fully_connected_matches_tf_layers_dense():
    x = np.random.RandomState(1).randn(4, 5).astype(np.float32)
    with tf.Graph().as_default():
        init = tf.constant_initializer(np.linspace(-1, 1, 15).reshape(5, 3))
        a = tf.contrib.layers.fully_connected(tf.constant(x), 3, weights_initializer=init)
        b = tf.layers.dense(tf.constant(x), 3, activation=tf.nn.relu, kernel_initializer=init)
        va, vb = _init_run([a, b])
    np.testing.assert_allclose(va, vb, rtol=1e-6)


def test_conv2d_names_and_values_match_tf_layers():
    x = np.random.RandomState(2).randn(2, 5, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        init = tf.constant_initializer(np.linspace(-1, 1, 3 * 3 * 3 * 4).reshape(3, 3, 3, 4))
        a = tf.contrib.layers.conv2d(tf.constant(x), 4, 3, stride=2, weights_initializer=init)
        b = tf.layers.conv2d(tf.constant(x), 4, 3, strides=2, padding="same",
                             activation=tf.nn.relu, kernel_initializer=init)
        c = tf.contrib.layers.conv2d(tf.constant(x), 2, [1, 1], padding="VALID",
                                     activation_fn=None)
        names = [v.name for v in tf.model_variables()]
        assert names == ["Conv/weights:0", "Conv/biases:0", "Conv_1/weights:0",
                         "Conv_1/biases:0"]
        assert tf.global_variables()[0].shape.as_list() == [3, 3, 3, 4]
        assert a.shape.as_list() == [2, 3, 3, 4] and c.shape.as_list() == [2, 5, 5, 2]
        va, vb = _init_run([a, b])
    np.testing.assert_allclose(va, vb, rtol=1e-5, atol=1e-6)
    assert tf.contrib.layers.convolution2d is tf.contrib.layers.conv2d


def test_flatten():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2, 3, 4])
        y = tf.contrib.layers.flatten(x)
        assert y.shape.as_list() == [None, 24]
        xv = np.arange(48, dtype=np.float32).reshape(2, 2, 3, 4)
        out = _init_run(y, {x: xv})
    np.testing.assert_array_equal(out, xv.reshape(2, 24))


def test_batch_norm_defaults_names_and_updates():
    x = np.random.RandomState(3).randn(6, 3).astype(np.float32) * 2 + 1
    with tf.Graph().as_default():
        y = tf.contrib.layers.batch_norm(tf.constant(x))
        names = [v.name for v in tf.global_variables()]
        assert names == ["BatchNorm/beta:0", "BatchNorm/moving_mean:0",
                         "BatchNorm/moving_variance:0"]
        assert [v.name for v in tf.trainable_variables()] == ["BatchNorm/beta:0"]
        assert len(tf.model_variables()) == 3
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(y)
            sess.run(updates)
            mm, mv = sess.run(tf.global_variables()[1:])
    mean, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 0.001), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mm, 0.001 * mean, rtol=1e-4, atol=1e-6)
    # 2-D inputs take TF 1.x's fused path: the moving variance gets the unbiased variance
    np.testing.assert_allclose(mv, 0.999 + 0.001 * x.var(0, ddof=1), rtol=1e-5)


def test_batch_norm_matches_tf_layers_and_inline_updates():
    x = np.random.RandomState(4).randn(2, 4, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        a = tf.contrib.layers.batch_norm(tf.constant(x), scale=True, updates_collections=None,
                                         is_training=True, scope="bn")
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        b = tf.layers.batch_normalization(tf.constant(x), momentum=0.999, training=True,
                                          name="ref")
        assert sorted(v.name for v in tf.global_variables() if v.name.startswith("bn/")) \
            == ["bn/beta:0", "bn/gamma:0", "bn/moving_mean:0", "bn/moving_variance:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            va = sess.run(a)  # runs the moving-average updates too
            sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
            vb = sess.run(b)
            mm_a, mm_b = sess.run(["bn/moving_mean:0", "ref/moving_mean:0"])
            mv_a, mv_b = sess.run(["bn/moving_variance:0", "ref/moving_variance:0"])
    np.testing.assert_allclose(va, vb, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mm_a, mm_b, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(mv_a, mv_b, rtol=1e-5)


def test_batch_norm_inference_and_normalizer_fn():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
        y = tf.contrib.layers.batch_norm(x, is_training=False, epsilon=0.0)
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        z = tf.contrib.layers.fully_connected(x, 3, normalizer_fn=tf.contrib.layers.batch_norm,
                                              normalizer_params={"is_training": True})
        names = [v.name for v in tf.global_variables()]
        assert "fully_connected/BatchNorm/beta:0" in names
        assert "fully_connected/biases:0" not in names
        vy, vz = _init_run([y, z])
    # the fused kernel raises epsilon to at least 1.001e-5, as in TF 1.x
    np.testing.assert_allclose(vy, np.array([[1.0, 2.0], [3.0, 6.0]]) / np.sqrt(1 + 1.001e-5),
                               rtol=1e-6)
    np.testing.assert_allclose(vz.mean(0), np.maximum(vz, 0).mean(0))
    assert vz.shape == (2, 3)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "Adagrad", "Momentum", "RMSProp",
                                       "Ftrl"])
def test_optimize_loss_by_name_decreases_loss_and_steps(optimizer):
    with tf.Graph().as_default():
        w = tf.Variable([3.0, -2.0])
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_sum(tf.square(w))
        train = tf.contrib.layers.optimize_loss(loss, step, 0.1, optimizer)
        assert "OptimizeLoss/learning_rate:0" in [v.name for v in tf.global_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(train)
            for _ in range(20):
                last = sess.run(train)
            assert int(sess.run(step)) == 21
    assert first == pytest.approx(13.0)
    assert last < first


def test_optimize_loss_sgd_values_clip_class_and_instance():
    with tf.Graph().as_default():
        w = tf.Variable([3.0, 4.0])
        step = tf.train.get_or_create_global_step()
        train = tf.contrib.layers.optimize_loss(tf.reduce_sum(tf.square(w)), step, 0.5,
                                                tf.train.GradientDescentOptimizer,
                                                clip_gradients=1.0, summaries=["loss"])
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(train) == pytest.approx(25.0)
            # gradient (6, 8) clipped to global norm 1 -> (0.6, 0.8); lr 0.5
            np.testing.assert_allclose(sess.run(w), [2.7, 3.6], rtol=1e-6)
    with tf.Graph().as_default():
        w = tf.Variable(1.0)
        step = tf.train.get_or_create_global_step()
        train = tf.contrib.layers.optimize_loss(
            tf.square(w), step, None, tf.train.GradientDescentOptimizer(0.25),
            increment_global_step=False)
        tags = tf.get_collection(tf.GraphKeys.SUMMARIES)
        assert len(tags) == 2  # loss and global gradient norm (no learning rate)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            assert float(sess.run(w)) == pytest.approx(0.5)
            assert int(sess.run(step)) == 0
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Optimizer name"):
        tf.contrib.layers.optimize_loss(tf.square(tf.Variable(1.0)), None, 0.1, "Nope")


def test_optimize_loss_runs_update_ops_first():
    x = np.random.RandomState(5).randn(8, 2).astype(np.float32)
    with tf.Graph().as_default():
        h = tf.contrib.layers.batch_norm(tf.constant(x), decay=0.5)
        loss = tf.reduce_mean(tf.square(tf.contrib.layers.fully_connected(h, 1)))
        step = tf.train.get_or_create_global_step()
        train = tf.contrib.layers.optimize_loss(loss, step, 0.01, "SGD")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            mm = sess.run("BatchNorm/moving_mean:0")
    np.testing.assert_allclose(mm, 0.5 * x.mean(0), rtol=1e-4, atol=1e-6)
