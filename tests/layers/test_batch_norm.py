"""tf.layers.batch_normalization: training vs inference, UPDATE_OPS, moving averages."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.layers import normalization

RNG = np.random.RandomState(0)
X2 = RNG.randn(24, 5).astype(np.float32) * 2 + 1
X4 = RNG.randn(2, 3, 4, 5).astype(np.float32)


def test_variables_and_update_ops_names():
    tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, 5]), training=True)
    assert [v.name for v in tf.global_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert [v.name for v in tf.trainable_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0"]
    ups = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [u.name for u in ups] == ["batch_normalization/AssignMovingAvg",
                                     "batch_normalization/AssignMovingAvg_1"]
    assert all(u.type == "AssignSub" for u in ups)


def test_training_output_and_moving_average_update(sess):
    x = tf.placeholder(tf.float32, [None, 5])
    y = tf.layers.batch_normalization(x, training=True, momentum=0.5,
                                      gamma_initializer=tf.constant_initializer(2.0),
                                      beta_initializer=tf.constant_initializer(0.5))
    ups = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    sess.run(tf.global_variables_initializer())
    mean, var = X2.mean(0), X2.var(0)
    out = sess.run(y, {x: X2})
    np.testing.assert_allclose(out, 2 * (X2 - mean) / np.sqrt(var + 1e-3) + 0.5,
                               rtol=1e-4, atol=1e-4)
    mm, mv = tf.global_variables()[2:]
    np.testing.assert_array_equal(sess.run(mm), np.zeros(5))  # the output runs no update
    sess.run(ups, {x: X2})
    np.testing.assert_allclose(sess.run(mm), 0.5 * mean, rtol=1e-5)
    np.testing.assert_allclose(sess.run(mv), 0.5 + 0.5 * var, rtol=1e-5)  # biased (2-D)
    sess.run(ups, {x: X2})
    np.testing.assert_allclose(sess.run(mm), 0.75 * mean, rtol=1e-5)


def test_fused_4d_updates_with_unbiased_variance(sess):
    y = tf.layers.batch_normalization(tf.constant(X4), training=True, momentum=0.5)
    flat = X4.reshape(-1, 5)
    sess.run(tf.global_variables_initializer())
    out, _ = sess.run([y, tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
    np.testing.assert_allclose(out, (X4 - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-3),
                               rtol=1e-4, atol=1e-4)
    mv = sess.run(tf.global_variables()[3])
    np.testing.assert_allclose(mv, 0.5 + 0.5 * flat.var(0, ddof=1), rtol=1e-5)


def test_fused_false_uses_biased_variance(sess):
    tf.layers.batch_normalization(tf.constant(X4), training=True, momentum=0.5, fused=False)
    sess.run(tf.global_variables_initializer())
    sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    np.testing.assert_allclose(sess.run(tf.global_variables()[3]),
                               0.5 + 0.5 * X4.reshape(-1, 5).var(0), rtol=1e-5)


def test_inference_uses_moving_statistics_and_adds_no_updates(sess):
    x = tf.placeholder(tf.float32, [None, 5])
    y = tf.layers.batch_normalization(
        x, moving_mean_initializer=tf.constant_initializer(1.0),
        moving_variance_initializer=tf.constant_initializer(4.0), epsilon=0.0)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y, {x: X2}), (X2 - 1) / 2, rtol=1e-5)


def test_training_tensor_switches_at_run_time(sess):
    training = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [None, 5])
    y = tf.layers.batch_normalization(x, training=training, momentum=0.5, epsilon=0.0)
    ups = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(ups) == 2
    sess.run(tf.global_variables_initializer())
    mm = tf.global_variables()[2]
    out_inf, _ = sess.run([y, ups], {x: X2, training: False})
    np.testing.assert_allclose(out_inf, X2, rtol=1e-5)  # moving stats 0 / 1
    np.testing.assert_array_equal(sess.run(mm), np.zeros(5))  # momentum 1: unchanged
    out_tr, _ = sess.run([y, ups], {x: X2, training: True})
    np.testing.assert_allclose(out_tr, (X2 - X2.mean(0)) / X2.std(0), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(sess.run(mm), 0.5 * X2.mean(0), rtol=1e-5)


def test_channels_first_axis_and_multi_axis(sess):
    x = tf.constant(X4)
    y1 = tf.layers.batch_normalization(x, axis=1, training=True, center=False, scale=False)
    y2 = tf.layers.batch_normalization(x, axis=[1, 3], training=True)
    shapes = [v.shape.as_list() for v in tf.global_variables()]
    assert shapes[:2] == [[3], [3]] and shapes[2] == [1, 3, 1, 5]
    sess.run(tf.global_variables_initializer())
    m1, v1 = X4.mean((0, 2, 3), keepdims=True), X4.var((0, 2, 3), keepdims=True)
    m2, v2 = X4.mean((0, 2), keepdims=True), X4.var((0, 2), keepdims=True)
    a, b = sess.run([y1, y2])
    np.testing.assert_allclose(a, (X4 - m1) / np.sqrt(v1 + 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(b, (X4 - m2) / np.sqrt(v2 + 1e-3), rtol=1e-4, atol=1e-4)


def test_reuse_naming_and_errors():
    x = tf.placeholder(tf.float32, [None, 5])
    tf.layers.batch_normalization(x, name="bn", training=True)
    tf.layers.batch_normalization(x, name="bn", training=True, reuse=True)
    tf.layers.batch_normalization(x)
    assert len(tf.global_variables()) == 8
    assert tf.global_variables()[4].name == "batch_normalization/gamma:0"
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 4
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="undefined rank"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32))
    with pytest.raises(NotImplementedError, match="adjustment"):
        tf.layers.batch_normalization(x, adjustment=lambda shape: (1.0, 0.0))
    # TF 2.15's messages
    with pytest.raises(ValueError, match=r"Received invalid keys for `renorm_clipping` "
                                         r"argument: \{'bad': 1\}"):
        tf.layers.batch_normalization(x, renorm=True, renorm_clipping={"bad": 1})
    with pytest.raises(ValueError, match="must be a positive integer that divides"):
        tf.layers.batch_normalization(x, virtual_batch_size=0)
    with pytest.raises(ValueError, match=r"axis cannot include 0\. Received axis=\[0\]"):
        tf.layers.batch_normalization(x, virtual_batch_size=2, axis=0)


def test_gamma_regularizer_and_trainable_false():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.batch_normalization(x, gamma_regularizer=tf.contrib.layers.l2_regularizer(0.1),
                                  trainable=False)
    assert tf.trainable_variables() == []
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1


def test_docstring_examples():
    result = doctest.testmod(normalization, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
