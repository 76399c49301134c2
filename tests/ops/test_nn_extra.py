"""TF 1.x tf.nn helpers composed from existing ops (flowgraph/ops/nn_extra_ops.py,
nn_norm_ops.py):
TensorFlow 2.15's values and gradients (tests/ops/data/tf_nn_extra.py, run once with
the tf-oracle), finite differences, NumPy identities and errors."""

import pathlib
import runpy

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf

HERE = pathlib.Path(__file__).parent / "data"
DATA = np.load(HERE / "tf_nn_extra.npz")
RNG = np.random.default_rng(0)


def test_values_and_gradients_match_tensorflow(tmp_path, monkeypatch):
    """Runs the oracle script itself under flowgraph and compares every fetched value."""
    out = tmp_path / "flowgraph.npz"
    monkeypatch.setenv("TF_MODULE", "flowgraph")
    monkeypatch.setenv("OUT_NPZ", str(out))
    with tf.Graph().as_default():
        runpy.run_path(str(HERE / "tf_nn_extra.py"), run_name="__main__")
    got = np.load(out)
    assert set(got) == set(DATA)
    for key in DATA:
        assert np.shape(got[key]) == np.shape(DATA[key]), key
        np.testing.assert_allclose(got[key], DATA[key], rtol=1e-4, atol=1e-4, err_msg=key)
        assert got[key].dtype == DATA[key].dtype, key


def test_gradients_by_finite_differences():
    x = RNG.standard_normal((2, 2, 3, 4))
    check_gradient(lambda a: tf.nn.lrn(a, 1, 1.0, 0.5, 0.75), [x])
    check_gradient(lambda a: tf.nn.space_to_depth(a, 2), [RNG.standard_normal((1, 4, 2, 3))])
    check_gradient(lambda a: tf.nn.depth_to_space(a, 2), [x])
    check_gradient(lambda a, w: tf.nn.weighted_moments(a, [0, 1], w),
                   [x, np.abs(RNG.standard_normal((2, 2, 3, 1))) + 0.1])
    check_gradient(lambda a, f: tf.nn.conv1d_transpose(a, f, [2, 7, 2], 2, "VALID"),
                   [RNG.standard_normal((2, 3, 3)), RNG.standard_normal((3, 2, 3))])
    check_gradient(lambda a: tf.nn.crelu(a), [RNG.standard_normal((3, 2))])


def test_fused_batch_norm_gradient_matches_the_composed_formula(sess):
    # fused_batch_norm is float32-only (as TensorFlow), too coarse for finite differences:
    # its gradients must equal those of moments + batch_normalization (float64-checked).
    x = RNG.standard_normal((2, 2, 3, 4)).astype(np.float32)
    s, o = (RNG.standard_normal(4).astype(np.float32) for _ in range(2))
    w = RNG.standard_normal((2, 2, 3, 4)).astype(np.float32)
    xs, ss, os_ = tf.constant(x), tf.constant(s), tf.constant(o)
    fused = tf.nn.fused_batch_norm(xs, ss, os_)[0]
    mean, var = tf.nn.moments(xs, [0, 1, 2])
    composed = tf.nn.batch_normalization(xs, mean, var, os_, ss, 1e-3)
    got = sess.run(tf.gradients(tf.reduce_sum(fused * w), [xs, ss, os_]))
    want = sess.run(tf.gradients(tf.reduce_sum(composed * w), [xs, ss, os_]))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_fused_batch_norm_dtypes_as_tensorflow():
    with pytest.raises(TypeError, match="'x' has DataType float64 not in list of allowed"):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3], tf.float64), tf.ones([3]), tf.zeros([3]))
    with pytest.raises(TypeError, match="'scale' has DataType float64"):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), np.ones(3), tf.zeros([3]))
    y, m, v = tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3], tf.float16), tf.ones([3]),
                                     tf.zeros([3]))
    assert (y.dtype, m.dtype, v.dtype) == (tf.float16, tf.float32, tf.float32)


def test_space_depth_round_trip_and_nchw(sess):
    x = RNG.standard_normal((2, 4, 6, 3))
    s2d = tf.nn.space_to_depth(x, 2)
    back = tf.nn.depth_to_space(s2d, 2)
    nchw = tf.nn.space_to_depth(x.transpose(0, 3, 1, 2), 2, data_format="NCHW")
    a, b, c = sess.run([s2d, back, nchw])
    np.testing.assert_array_equal(b, x)
    np.testing.assert_array_equal(c.transpose(0, 2, 3, 1), a)
    assert tf.space_to_depth is tf.nn.space_to_depth


def test_fused_batch_norm_moving_average_and_inference(sess):
    x = RNG.standard_normal((4, 2, 2, 3)).astype(np.float32)
    one, zero = np.ones(3, np.float32), np.zeros(3, np.float32)
    old_mean, old_var = one, np.full(3, 2.0, np.float32)
    _, m, v = tf.nn.fused_batch_norm(x, one, zero, old_mean, old_var,
                                     exponential_avg_factor=0.25)
    y, m2, v2 = tf.nn.fused_batch_norm(x, one, zero, old_mean, old_var, is_training=False)
    m, v, y, m2, v2 = sess.run([m, v, y, m2, v2])
    np.testing.assert_allclose(m, 0.75 * old_mean + 0.25 * x.mean((0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(v, 0.75 * old_var + 0.25 * x.var((0, 1, 2), ddof=1),
                               rtol=1e-5)
    np.testing.assert_allclose(y, (x - 1) / np.sqrt(2 + 1e-3), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(m2, old_mean)
    np.testing.assert_array_equal(v2, old_var)


def test_approx_min_k_and_pool_dispatch(sess):
    x = RNG.standard_normal((3, 7))
    values, indices = sess.run(tf.nn.approx_min_k(x, 3))
    np.testing.assert_array_equal(indices, np.argsort(x, axis=1)[:, :3])
    np.testing.assert_allclose(values, np.sort(x, axis=1)[:, :3])
    v3 = tf.nn.max_pool_v2(tf.zeros([1, 4, 4, 4, 2]), 2, 2, "VALID")
    assert v3.shape.as_list() == [1, 2, 2, 2, 2]


def test_errors():
    with pytest.raises(ValueError, match="divisible by block_size"):
        tf.nn.space_to_depth(tf.zeros([1, 3, 4, 1]), 2)
    with pytest.raises(ValueError, match="divisible by block_size \\* block_size"):
        tf.nn.depth_to_space(tf.zeros([1, 2, 2, 3]), 2)
    with pytest.raises(ValueError, match="'mean' and 'variance' must be given"):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), tf.ones([3]), tf.zeros([3]),
                               is_training=False)
    with pytest.raises(ValueError, match="dilation_rate"):
        tf.nn.pool(tf.zeros([1, 4, 4, 1]), [2, 2], "MAX", "VALID", dilation_rate=[2, 2])
    with pytest.raises(ValueError, match="must be 4-D"):
        tf.nn.lrn(tf.zeros([2, 3]))
