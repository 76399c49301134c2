"""tf.nn.dropout and tf.nn.batch_normalization against NumPy, with gradients."""

import numpy as np
import pytest

import flowgraph as tf
from tests.ops.gradient_checker import check_gradient


def test_dropout_keep_prob_placeholder_scales_kept_values(sess):
    x = tf.ones([300, 40])
    keep_prob = tf.placeholder(tf.float32, [])
    y = tf.nn.dropout(x, keep_prob, seed=3)
    assert y.shape.as_list() == [300, 40] and y.dtype == tf.float32
    quarter = sess.run(y, {keep_prob: 0.25})
    assert 0.22 < (quarter > 0).mean() < 0.28
    assert set(np.unique(quarter)) <= {0.0, 4.0}
    np.testing.assert_array_equal(sess.run(y, {keep_prob: 1.0}), 1.0)


def test_dropout_rate_and_expected_value(sess):
    x = np.random.default_rng(0).normal(size=(200, 50))
    y = tf.nn.dropout(tf.constant(x), rate=0.2, seed=7)
    got = sess.run(y)
    kept = got != 0
    assert 0.77 < kept.mean() < 0.83
    np.testing.assert_allclose(got[kept], x[kept] / 0.8, rtol=1e-12)


def test_dropout_noise_shape_drops_whole_rows(sess):
    y = tf.nn.dropout(tf.ones([100, 6]), rate=0.5, noise_shape=[100, 1], seed=2)
    got = sess.run(y)
    assert all(len(set(row)) == 1 for row in got)
    assert 0.3 < (got[:, 0] > 0).mean() < 0.7


def test_dropout_is_reproducible_with_seeds():
    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(11)
            y = tf.nn.dropout(tf.ones([50]), 0.5, seed=4)
            with tf.Session() as s:
                return s.run(y)

    np.testing.assert_array_equal(draw(), draw())


def test_dropout_without_drop_returns_the_input():
    x = tf.ones([3])
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    assert tf.nn.dropout(x, rate=0.0) is x


@pytest.mark.parametrize("kwargs, match", [
    ({"keep_prob": 0.5, "rate": 0.5}, "both"),
    ({}, "keep_prob' or 'rate"),
    ({"rate": 1.0}, r"range \[0, 1\)"),
    ({"keep_prob": 0.0}, r"range \(0, 1\]"),
])
def test_dropout_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tf.nn.dropout(tf.ones([3]), **kwargs)


def test_dropout_of_integers_is_an_error():
    with pytest.raises(ValueError, match=r"int32.*floating"):
        tf.nn.dropout(tf.constant([1, 2]), 0.5)


def test_dropout_gradient_is_the_mask_over_keep_prob(sess):
    x = tf.constant(np.arange(1.0, 401.0).reshape(20, 20))
    y = tf.nn.dropout(x, 0.5, seed=5)
    out, g = sess.run([y, tf.gradients(tf.reduce_sum(y), x)[0]])
    np.testing.assert_array_equal(g, np.where(out != 0, 2.0, 0.0))


@pytest.mark.parametrize("with_offset, with_scale", [(True, True), (False, True),
                                                     (True, False), (False, False)])
def test_batch_normalization_matches_numpy(sess, with_offset, with_scale):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(6, 5, 3))
    mean, var = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
    offset, scale = rng.normal(size=3), rng.uniform(0.5, 2, size=3)
    y = tf.nn.batch_normalization(x, mean, var, offset if with_offset else None,
                                  scale if with_scale else None, 1e-3)
    want = (x - mean) / np.sqrt(var + 1e-3)
    if with_scale:
        want = want * scale
    if with_offset:
        want = want + offset
    np.testing.assert_allclose(sess.run(y), want, rtol=1e-10, atol=1e-12)


def test_batch_normalization_with_moments_float32(sess):
    x = tf.placeholder(tf.float32, [None, 4])
    mean, var = tf.nn.moments(x, axes=[0])
    y = tf.nn.batch_normalization(x, mean, var, 0.5, 2.0, 1e-5)
    assert y.dtype == tf.float32 and y.shape.as_list() == [None, 4]
    data = np.random.default_rng(1).normal(3, 2, size=(64, 4)).astype(np.float32)
    got = sess.run(y, {x: data})
    np.testing.assert_allclose(got.mean(axis=0), 0.5, atol=1e-5)
    np.testing.assert_allclose(got.std(axis=0), 2.0, rtol=1e-3)


def test_batch_normalization_gradients():
    rng = np.random.default_rng(2)
    check_gradient(
        lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
        [rng.normal(size=(4, 3)), rng.normal(size=3), rng.uniform(0.5, 2, size=3),
         rng.normal(size=3), rng.uniform(0.5, 2, size=3)])
    check_gradient(
        lambda x: tf.nn.batch_normalization(x, *tf.nn.moments(x, [0]), None, None, 1e-3),
        [rng.normal(size=(5, 2))])
