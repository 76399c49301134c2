"""Initializers: values, statistics on large shapes, fans, seeds, dtypes, errors."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops import init_ops

TRUNC_STD = 0.87962566103423978


def _run(init, shape, dtype=None):
    with tf.Session() as sess:
        return sess.run(init(shape, dtype=dtype) if dtype is not None else init(shape))


def test_zeros_ones_constant():
    z = _run(tf.zeros_initializer(), [2, 3])
    o = _run(tf.ones_initializer(dtype=tf.int64), [3])
    assert z.dtype == np.float32 and z.shape == (2, 3) and not z.any()
    assert o.dtype == np.int64 and o.tolist() == [1, 1, 1]
    np.testing.assert_array_equal(_run(tf.constant_initializer(7), [2]), [7, 7])
    np.testing.assert_array_equal(_run(tf.constant_initializer([1, 2]), [2, 3]),
                                  [[1, 2, 2], [2, 2, 2]])
    np.testing.assert_array_equal(
        _run(tf.constant_initializer(np.arange(6).reshape(3, 2)), [2, 3]),
        [[0, 1, 2], [3, 4, 5]])
    with pytest.raises(ValueError, match="too many elements"):
        tf.constant_initializer([1, 2, 3, 4, 5, 6, 7])([2, 3])
    with pytest.raises(TypeError, match="invalid type for initial value"):
        tf.constant_initializer({"a": 1})


def test_random_initializers_statistics():
    u = _run(tf.random_uniform_initializer(-2.0, 3.0, seed=1), [200, 300])
    n = _run(tf.random_normal_initializer(1.0, 0.5, seed=2), [200, 300])
    t = _run(tf.truncated_normal_initializer(0.0, 2.0, seed=3), [200, 300])
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.03
    assert abs(n.mean() - 1) < 0.01 and abs(n.std() - 0.5) < 0.01
    assert np.abs(t).max() <= 4.0 and abs(t.std() - 2 * TRUNC_STD) < 0.02


@pytest.mark.parametrize("shape,fans", [([], (1, 1)), ([7], (7, 7)), ([30, 50], (30, 50)),
                                        ([3, 5, 4, 7], (60, 105)), ([2, 3, 4, 5, 6], (120, 144))])
def test_compute_fans(shape, fans):
    assert init_ops.compute_fans(shape) == fans


@pytest.mark.parametrize("mode,n", [("fan_in", 3 * 5 * 40), ("fan_out", 3 * 5 * 60),
                                    ("fan_avg", 3 * 5 * 50)])
def test_variance_scaling_uniform_and_normals(mode, n):
    shape = [3, 5, 40, 60]
    u = _run(tf.variance_scaling_initializer(2.0, mode, "uniform", seed=4), shape)
    limit = np.sqrt(3 * 2.0 / n)
    assert np.abs(u).max() <= limit and abs(u.std() - np.sqrt(2.0 / n)) < 0.03 * limit
    t = _run(tf.variance_scaling_initializer(2.0, mode, seed=5), shape)
    std = np.sqrt(2.0 / n)
    assert abs(t.std() - std) < 0.03 * std and np.abs(t).max() <= 2 * std / TRUNC_STD
    r = _run(tf.variance_scaling_initializer(2.0, mode, "untruncated_normal", seed=6), shape)
    assert abs(r.std() - std) < 0.03 * std and np.abs(r).max() > 2 * std / TRUNC_STD


def test_variance_scaling_defaults_and_normal_alias():
    init = tf.variance_scaling_initializer()
    assert init.get_config() == {"scale": 1.0, "mode": "fan_in",
                                 "distribution": "truncated_normal", "seed": None,
                                 "dtype": "float32"}
    with pytest.warns(DeprecationWarning, match="alias"):
        assert tf.variance_scaling_initializer(distribution="normal").distribution == "normal"
    with pytest.raises(ValueError, match="scale"):
        tf.variance_scaling_initializer(0.0)
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match="distribution"):
        tf.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match="floating point"):
        tf.variance_scaling_initializer(dtype=tf.int32)


def test_glorot_he_lecun_limits():
    shape = [3, 3, 20, 40]
    fan_in, fan_out = 180, 360
    g = _run(tf.glorot_uniform_initializer(seed=1), shape)
    assert np.abs(g).max() <= np.sqrt(6 / (fan_in + fan_out))
    assert np.abs(g).max() > 0.95 * np.sqrt(6 / (fan_in + fan_out))
    gn = _run(tf.glorot_normal_initializer(seed=1), shape)
    assert abs(gn.std() - np.sqrt(2 / (fan_in + fan_out))) < 0.003
    hu = _run(tf.initializers.he_uniform(seed=2), shape)
    assert np.abs(hu).max() <= np.sqrt(6 / fan_in)
    hn = _run(tf.initializers.he_normal(seed=2), shape)
    assert abs(hn.std() - np.sqrt(2 / fan_in)) < 0.004
    lu = _run(tf.initializers.lecun_uniform(seed=3), shape)
    assert np.abs(lu).max() <= np.sqrt(3 / fan_in)
    ln = _run(tf.initializers.lecun_normal(seed=3), shape)
    assert abs(ln.std() - np.sqrt(1 / fan_in)) < 0.003


def test_seed_reproducibility_and_graph_seed():
    def values(op_seed, graph_seed):
        g = tf.Graph()
        with g.as_default():
            if graph_seed is not None:
                tf.set_random_seed(graph_seed)
            init = tf.glorot_uniform_initializer(seed=op_seed)
            a, b = init([4, 5]), init([4, 5])
            with tf.Session() as sess:
                return sess.run([a, b])

    a1, b1 = values(7, None)
    a2, _ = values(7, None)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(a1, b1)  # one seeded initializer: same values twice
    c1, d1 = values(None, 11)
    c2, _ = values(None, 11)
    np.testing.assert_array_equal(c1, c2)
    assert not np.array_equal(c1, d1)
    assert not np.array_equal(values(8, None)[0], a1)


def test_dtype_argument_and_call_dtype():
    v = _run(tf.random_normal_initializer(seed=1, dtype=tf.float64), [3, 2])
    assert v.dtype == np.float64
    assert _run(tf.glorot_uniform_initializer(), [3, 2], tf.float16).dtype == np.float16
    with pytest.raises(TypeError, match="floating point"):  # TF 2.15: TypeError
        tf.truncated_normal_initializer()([2], tf.int32)


def test_uniform_unit_scaling_orthogonal_identity():
    u = _run(tf.uniform_unit_scaling_initializer(1.5, seed=1), [50, 8])
    assert np.abs(u).max() <= 1.5 * np.sqrt(3 / 50)
    for shape in ([6, 4], [4, 6], [2, 3, 10]):
        q = _run(tf.orthogonal_initializer(gain=2.0, seed=2), shape).reshape(-1, shape[-1])
        small = min(q.shape)
        gram = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-4)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.orthogonal_initializer()([3])
    np.testing.assert_array_equal(_run(tf.initializers.identity(gain=3.0), [2, 3]),
                                  [[3, 0, 0], [0, 3, 0]])


def test_get_config_round_trip_and_namespace():
    init = tf.random_uniform_initializer(-1.0, 2.0, seed=3)
    clone = type(init).from_config(init.get_config())
    assert clone.get_config() == init.get_config()
    assert tf.initializers.zeros is tf.zeros_initializer
    assert tf.initializers.variance_scaling is tf.variance_scaling_initializer
    assert tf.initializers.global_variables is tf.global_variables_initializer


def test_partition_info_is_accepted():
    assert _run(tf.zeros_initializer(), [2]).shape == (2,)
    t = tf.glorot_uniform_initializer()([2, 3], dtype=tf.float32, partition_info=None)
    assert t.shape.as_list() == [2, 3]


def test_contrib_initializers():
    x = _run(tf.contrib.layers.xavier_initializer(seed=1), [30, 50])
    assert np.abs(x).max() <= np.sqrt(6 / 80)
    v = _run(tf.contrib.layers.variance_scaling_initializer(seed=1), [300, 200])
    # contrib's truncated normal: stddev sqrt(1.3 * factor / fan_in) before truncation
    assert abs(v.std() - np.sqrt(1.3 * 2 / 300) * TRUNC_STD) < 0.002
    vu = _run(tf.contrib.layers.variance_scaling_initializer(1.0, "FAN_AVG", True), [30, 50])
    assert np.abs(vu).max() <= np.sqrt(3 / 40)
    with pytest.raises(TypeError, match="Unknown mode"):
        tf.contrib.layers.variance_scaling_initializer(mode="fan_in")


def test_docstring_examples():
    result = doctest.testmod(init_ops, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
