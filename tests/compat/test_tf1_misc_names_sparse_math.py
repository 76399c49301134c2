"""``tf.sparse.bincount``/``expand_dims``/``eye``, ``tf.math.special`` and
``tf.math.sobol_sample`` against TensorFlow 2.15 (``tf.compat.v1`` graph mode): expected
values are what the tf-oracle printed; gradients are also checked against float64
finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _sp(x):
    with tf.Session() as sess:
        v = sess.run(x)
    return v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist(), v.values.dtype


X = [[1, 2, 2], [0, 5, 1]]


@pytest.mark.parametrize("kwargs, expected", [
    ({}, ([[0], [1], [2], [5]], [1, 2, 2, 1], [6])),
    ({"axis": -1}, ([[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]], [1, 2, 1, 1, 1], [2, 6])),
    ({"axis": -1, "binary_output": True},
     ([[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]], [1, 1, 1, 1, 1], [2, 6])),
    ({"minlength": 8}, ([[0], [1], [2], [5]], [1, 2, 2, 1], [8])),
    ({"maxlength": 2}, ([[0], [1]], [1, 2], [2])),
    ({"maxlength": 2, "axis": -1}, ([[0, 1], [1, 0], [1, 1]], [1, 1, 1], [2, 2])),
    ({"minlength": 7, "axis": -1},
     ([[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]], [1, 2, 1, 1, 1], [2, 7])),
])
def test_sparse_bincount_of_dense(kwargs, expected):
    out = tf.sparse.bincount(tf.constant(X), **kwargs)
    assert out.values.op.type == "DenseCountSparseOutput"
    idx, vals, shape, dtype = _sp(out)
    assert (idx, vals, shape) == expected and dtype == np.int32


def test_sparse_bincount_weights_sparse_and_ragged_inputs():
    w = tf.constant([[0.5, 1.0, 2.0], [1.0, 1.0, 3.0]])
    assert _sp(tf.sparse.bincount(tf.constant(X), weights=w))[:3] == (
        [[0], [1], [2], [5]], [1.0, 3.5, 3.0, 1.0], [6])
    sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [3, 1, 3], [2, 4])
    assert _sp(tf.sparse.bincount(sp))[:3] == ([[1], [3]], [1, 2], [4])
    assert _sp(tf.sparse.bincount(sp, axis=-1))[:3] == ([[0, 1], [0, 3], [1, 3]], [1, 1, 1],
                                                        [2, 4])
    sw = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.5, 2.0, 3.0], [2, 4])
    assert _sp(tf.sparse.bincount(sp, weights=sw, axis=-1))[1] == [2.0, 1.5, 3.0]
    rt = tf.ragged.constant([[1, 1], [], [4, 0, 4]])
    assert _sp(tf.sparse.bincount(rt, axis=-1))[:3] == ([[0, 1], [2, 0], [2, 4]], [2, 1, 2],
                                                        [3, 5])
    i64 = _sp(tf.sparse.bincount(tf.constant([3, 1], tf.int64)))
    assert i64[:3] == ([[1], [3]], [1, 1], [4]) and i64[3] == np.int64
    wi = tf.constant([[1, 2, 3], [4, 5, 6]], tf.int64)
    assert tf.sparse.bincount(tf.constant(X), weights=wi).values.dtype == tf.int64


def test_sparse_bincount_errors():
    with pytest.raises(ValueError, match=r"Unsupported value for argument axis=1\. Only 0 "
                                         "and -1 are currently supported."):
        tf.sparse.bincount(tf.constant(X), axis=1)
    with pytest.raises(TypeError, match="float32 not in list of allowed values: int32, int64"):
        tf.sparse.bincount(tf.constant([1.0]))
    with pytest.raises(errors.InvalidArgumentError, match="non-negative"):
        _sp(tf.sparse.bincount(tf.constant([-1, 1])))
    with pytest.raises(errors.InvalidArgumentError, match="rank 1 or 2"):
        _sp(tf.sparse.bincount(tf.constant([[[1, 2]]]), axis=-1))


def test_sparse_bincount_matches_numpy_per_row():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 7, (5, 9))
    w = rng.random((5, 9))
    idx, vals, shape, _ = _sp(tf.sparse.bincount(tf.constant(x), weights=tf.constant(w),
                                                 axis=-1))
    dense = np.zeros(shape)
    dense[tuple(np.array(idx).T)] = vals
    ref = np.stack([np.bincount(r, wr, minlength=shape[1]) for r, wr in zip(x, w)])
    np.testing.assert_allclose(dense, ref)


def test_sparse_expand_dims_and_eye():
    sp = tf.SparseTensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])
    assert _sp(tf.sparse.expand_dims(sp, 0))[:3] == ([[0, 0, 1], [0, 1, 2]], [1.0, 2.0],
                                                     [1, 2, 3])
    assert _sp(tf.sparse.expand_dims(sp, 1))[:3] == ([[0, 0, 1], [1, 0, 2]], [1.0, 2.0],
                                                     [2, 1, 3])
    for axis in (-1, None):
        assert _sp(tf.sparse.expand_dims(sp, axis))[:3] == ([[0, 1, 0], [1, 2, 0]],
                                                            [1.0, 2.0], [2, 3, 1])
    with pytest.raises(ValueError, match="axis 4 is out of range"):
        tf.sparse.expand_dims(sp, 4)
    assert _sp(tf.sparse.eye(3))[:3] == ([[0, 0], [1, 1], [2, 2]], [1.0, 1.0, 1.0], [3, 3])
    eye = tf.sparse.eye(2, 3, dtype=tf.int32)
    assert _sp(eye)[:3] == ([[0, 0], [1, 1]], [1, 1], [2, 3]) and eye.dtype == tf.int32
    assert tf.sparse.eye(3, 2).shape.as_list() == [3, 2]
    assert _sp(tf.sparse.eye(tf.constant(2)))[:3] == ([[0, 0], [1, 1]], [1.0, 1.0], [2, 2])


# TensorFlow 2.15 at x = [0.5, 1.0, 2.5] (float32): values and tf.gradients.
SPECIAL = {
    "bessel_i0": ([1.0635, 1.2661, 3.2898], [0.2579, 0.5652, 2.5167]),
    "bessel_i0e": ([0.645, 0.4658, 0.27], [-0.4886, -0.2578, -0.0635]),
    "bessel_i1": ([0.2579, 0.5652, 2.5167], [0.5477, 0.7009, 2.2832]),
    "bessel_i1e": ([0.1564, 0.2079, 0.2066], [0.1758, 0.0499, -0.0192]),
    "bessel_j0": ([0.9385, 0.7652, -0.0484], [-0.2423, -0.4401, -0.4971]),
    "bessel_j1": ([0.2423, 0.4401, 0.4971], [0.4539, 0.3251, -0.2472]),
    "bessel_k0": ([0.9244, 0.421, 0.0623], [-1.6564, -0.6019, -0.0739]),
    "bessel_k0e": ([1.5241, 1.1445, 0.7595], [-1.2069, -0.4917, -0.1406]),
    "bessel_k1": ([1.6564, 0.6019, 0.0739], [-4.2373, -1.0229, -0.0919]),
    "bessel_k1e": ([2.731, 1.6362, 0.9002], [-4.2551, -1.1445, -0.2194]),
    "bessel_y0": ([-0.4445, 0.0883, 0.4981], [1.4715, 0.7812, -0.1459]),
    "bessel_y1": ([-1.4715, -0.7812, 0.1459], [2.4984, 0.8695, 0.4397]),
    "dawsn": ([0.4244, 0.5381, 0.2231], [0.5756, -0.0762, -0.1154]),
    "expint": ([0.4542, 1.8951, 7.0738], [3.2974, 2.7183, 4.873]),
    "fresnel_cos": ([0.4923, 0.7799, 0.4574], [0.9239, 0.0, -0.9239]),
    "fresnel_sin": ([0.0647, 0.4383, 0.6192], [0.3827, 1.0, -0.3827]),
    "spence": ([0.5822, 0.0, -1.1474], [-1.3863, -1.0, -0.6109]),
}
OP_TYPES = {"dawsn": "Dawsn", "expint": "Expint", "fresnel_cos": "FresnelCos",
            "fresnel_sin": "FresnelSin", "spence": "Spence"}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_math_special_values_gradients_and_dtypes(name):
    fn = getattr(tf.math.special, name)
    x = tf.constant([0.5, 1.0, 2.5])
    y = fn(x)
    op_type = OP_TYPES.get(name) or "Bessel" + name.split("_")[1].upper().replace("E", "e")
    assert y.op.type == op_type
    with tf.Session() as sess:
        value, grad = sess.run([y, tf.gradients(y, x)[0]])
        assert sess.run(fn(tf.constant([0.5], tf.float64))).dtype == np.float64
        assert sess.run(fn(tf.constant([0.5], tf.float16))).dtype == np.float16
    np.testing.assert_allclose(value, SPECIAL[name][0], atol=1e-4)
    np.testing.assert_allclose(grad, SPECIAL[name][1], atol=1e-4)
    with pytest.raises(TypeError, match="int32 not in list of allowed values"):
        fn(tf.constant([1]))


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_math_special_gradients_match_finite_differences(name):
    x0 = np.array([0.4, 0.9, 1.7, 2.6])
    x = tf.constant(x0)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [4], getattr(tf.math.special, name)(x), [4],
                                             x_init_value=x0, delta=1e-6)
    assert err < 1e-5


def test_math_special_off_domain_values_and_gradients_at_zero():
    with tf.Session() as sess:
        neg = tf.constant([-1.0, 0.0, -0.5])
        s = tf.math.special
        assert sess.run(s.bessel_k0(neg)).tolist() == [np.inf] * 3
        assert sess.run(s.bessel_k1e(neg)).tolist() == [np.inf] * 3
        assert sess.run(s.bessel_y0(neg)).tolist() == [-np.inf] * 3
        y1 = sess.run(s.bessel_y1(neg))
        assert y1[0] == y1[2] == -np.inf and np.isnan(y1[1])
        e = sess.run(s.expint(neg))
        assert np.isnan(e[0]) and e[1] == -np.inf and np.isnan(e[2])
        zero_one = tf.constant([0.0, 1.0])
        grads = {n: sess.run(tf.gradients(getattr(s, n)(zero_one), zero_one)[0])[0]
                 for n in ("bessel_i1", "bessel_j1", "bessel_i1e", "bessel_k1", "spence",
                           "expint", "bessel_k1e")}
    # TensorFlow's values at 0 (its BesselI1 gradient takes 1 there).
    assert grads["bessel_i1"] == 1.0 and grads["bessel_j1"] == 0.5
    assert grads["bessel_i1e"] == 0.5 and grads["bessel_k1"] == -np.inf
    assert grads["spence"] == -np.inf and grads["expint"] == np.inf
    assert grads["bessel_k1e"] == -np.inf
    assert tf.math.bessel_i0 is tf.math.special.bessel_i0
    assert not hasattr(tf, "bessel_i0") and not hasattr(tf.math, "dawsn")


def test_sobol_sample_matches_tensorflow():
    with tf.Session() as sess:
        assert sess.run(tf.math.sobol_sample(3, 6)).tolist() == [
            [0.5, 0.5, 0.5], [0.75, 0.25, 0.25], [0.25, 0.75, 0.75], [0.375, 0.375, 0.625],
            [0.875, 0.875, 0.125], [0.625, 0.125, 0.875]]
        assert sess.run(tf.math.sobol_sample(2, 3, skip=5)).tolist() == [
            [0.625, 0.125], [0.125, 0.625], [0.1875, 0.3125]]
        pts64 = sess.run(tf.math.sobol_sample(2, 3, dtype=tf.float64))
        assert pts64.dtype == np.float64
        big = sess.run(tf.math.sobol_sample(40, 4, skip=100))
        with pytest.raises(errors.InvalidArgumentError, match="dim must be in"):
            sess.run(tf.math.sobol_sample(0, 3))
    # TensorFlow's first 8 columns of the 40-dimensional points (rounded to 4 places).
    np.testing.assert_allclose(big[:, :8], [
        [0.9141, 0.7578, 0.2734, 0.2266, 0.3828, 0.2422, 0.5234, 0.9766],
        [0.6641, 0.0078, 0.5234, 0.9766, 0.1328, 0.4922, 0.2734, 0.7266],
        [0.1641, 0.5078, 0.0234, 0.4766, 0.6328, 0.9922, 0.7734, 0.2266],
        [0.2266, 0.4453, 0.5859, 0.1641, 0.0703, 0.8047, 0.0859, 0.4141]], atol=1e-4)
    np.testing.assert_allclose(big[:, 39], [0.6328, 0.3828, 0.8828, 0.3203], atol=1e-4)
    pts = tf.math.sobol_sample(2, 3)
    assert pts.op.type == "SobolSample" and pts.shape.as_list() == [3, 2]
    assert tf.math.sobol_sample(2, tf.placeholder(tf.int32, [])).shape.as_list() == [None, 2]
    with pytest.raises(TypeError, match="float32, float64"):
        tf.math.sobol_sample(2, 3, dtype=tf.int32)
