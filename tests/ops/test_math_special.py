"""Inverse trigonometric/hyperbolic and special functions, `rint`, the ``x*log(y)``
family and the composite `tf.math` functions through the public API: values against
NumPy/SciPy and TensorFlow 1.x (recorded with the tf-oracle), dtypes and errors.
Gradients are checked by the registry tests (tests/ops/issue15_math_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import flowgraph as tf

X = np.array([0.2, 0.7, 0.0])
Y = np.array([1.5, 2.5, 3.0])


def _run(*fetches):
    with tf.Session() as sess:
        return sess.run(list(fetches))


UNARY = [("acos", np.arccos, X), ("asin", np.arcsin, X), ("atan", np.arctan, X),
         ("acosh", np.arccosh, Y), ("asinh", np.arcsinh, X), ("atanh", np.arctanh, X),
         ("cosh", np.cosh, X), ("sinh", np.sinh, X), ("lgamma", sp.gammaln, Y),
         ("digamma", sp.digamma, Y), ("erfc", sp.erfc, X), ("erfinv", sp.erfinv, X),
         ("ndtri", sp.ndtri, X + 0.1), ("rint", np.rint, Y), ("bessel_i0e", sp.i0e, X),
         ("bessel_i1e", sp.i1e, X), ("bessel_i0", sp.i0, X), ("bessel_i1", sp.i1, X)]


@pytest.mark.parametrize(("name", "ref", "x"), UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_matches_reference(name, ref, x, dtype):
    out = getattr(tf.math, name)(x.astype(dtype))
    assert out.dtype.as_numpy_dtype == dtype
    np.testing.assert_allclose(_run(out)[0], ref(x), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_binary_and_ternary_match_scipy():
    a = np.array([0.0, 1.0, 2.0])
    got = _run(tf.atan2(X, Y), tf.igamma(Y, X), tf.igammac(Y, X), tf.zeta(Y + 1, Y),
               tf.polygamma(a, Y), tf.math.xlogy(X, Y), tf.math.xdivy(X, Y),
               tf.math.xlog1py(X, Y), tf.betainc(Y, Y, X))
    want = [np.arctan2(X, Y), sp.gammainc(Y, X), sp.gammaincc(Y, X), sp.zeta(Y + 1, Y),
            sp.polygamma(a.astype(int), Y), sp.xlogy(X, Y), np.where(X == 0, 0, X / Y),
            sp.xlog1py(X, Y), sp.betainc(Y, Y, X)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def test_x_zero_gives_zero_even_for_bad_y():
    out = _run(tf.math.xlogy([0.0, 1.0], [0.0, 1.0]), tf.math.xdivy([0.0], [0.0]))
    np.testing.assert_array_equal(out[0], [0.0, 0.0])
    np.testing.assert_array_equal(out[1], [0.0])


def test_top_level_names_are_the_math_ones():
    for name in ("acos", "atan2", "lgamma", "igamma", "betainc", "zeta", "rint",
                 "confusion_matrix", "count_nonzero", "log_sigmoid", "lbeta"):
        assert getattr(tf, name) is getattr(tf.math, name), name


def test_composites_match_tensorflow():
    # Values recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle.
    x, y = tf.constant(X), tf.constant(Y)
    got = _run(tf.log_sigmoid(x), tf.lbeta(tf.reshape(y, [1, 3])), tf.math.reduce_variance(y),
               tf.math.reduce_std(y, keepdims=True), tf.math.reduce_euclidean_norm(y),
               tf.math.reciprocal_no_nan(x), tf.math.multiply_no_nan(y, x),
               tf.count_nonzero(x), tf.math.zero_fraction(x), tf.scalar_mul(2.0, y),
               tf.rint(tf.constant([0.5, 1.5, 2.5])))
    want = [[-0.59814, -0.40319, -0.69315], [-5.7222], 0.38889, [0.62361], 4.1833,
            [5.0, 1.42857, 0.0], [0.3, 1.75, 0.0], 2, 0.33333, [3.0, 5.0, 6.0],
            [0.0, 2.0, 2.0]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    assert got[7].dtype == np.int64 and got[8].dtype == np.float32


def test_confusion_matrix():
    cm = tf.confusion_matrix([0, 2], [1, 2])
    assert cm.dtype == tf.int32
    weighted = tf.math.confusion_matrix([0, 2], [1, 2], num_classes=4, weights=[0.5, 1.0],
                                        dtype=tf.float32)
    a, b = _run(cm, weighted)
    np.testing.assert_array_equal(a, [[0, 1, 0], [0, 0, 0], [0, 0, 1]])
    want = np.zeros((4, 4), np.float32)
    want[0, 1], want[2, 2] = 0.5, 1.0
    np.testing.assert_array_equal(b, want)


def test_dtype_errors():
    with pytest.raises(TypeError, match="Lgamma"):
        tf.lgamma([1, 2])
    with pytest.raises(ValueError, match="broadcast"):
        tf.atan2(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="Betainc"):
        tf.betainc(tf.constant(1.0), tf.constant(1.0, tf.float64), 0.5)
    assert tf.atan2([1.0], [1, 2]).shape.as_list() == [2]  # a list takes the tensor dtype


def test_more_math_matches_tensorflow():
    # Recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle.
    x = tf.constant([[0.5, -1.0, 2.0], [3.0, 0.0, -0.5]], tf.float64)
    cum = tf.math.cumulative_logsumexp(x, axis=1)
    outs = [tf.math.erfcinv(tf.constant([0.3, 1.0, 1.7])),
            tf.math.polyval([1.0, 0.0, -2.0], tf.constant([2.0, 3.0])),
            tf.math.polyval([], tf.constant([2.0])), cum,
            tf.math.cumulative_logsumexp(x, axis=0, exclusive=True, reverse=True),
            tf.is_non_decreasing([1, 1, 2]), tf.is_strictly_increasing([[1, 2], [3, 3]]),
            tf.is_non_decreasing([5]), tf.math.invert_permutation([2, 0, 1]),
            tf.gradients(tf.reduce_sum(cum * cum), x)[0]]
    want = [[0.73287, 0.0, -0.73287], [2.0, 7.0], [0.0],
            [[0.5, 0.70141, 2.24131], [3.0, 3.04859, 3.07695]],
            [[3.0, 0.0, -0.5], [-np.inf] * 3], True, False, True, [1, 2, 0],
            [[2.93268, 0.43124, 3.52154], [17.50614, 0.57286, 0.17207]]]
    for g, w in zip(_run(*outs), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    nxt = _run(tf.math.nextafter(tf.constant([1.0, 0.0]), tf.constant([2.0, -1.0])))[0]
    np.testing.assert_array_equal(nxt, np.nextafter(np.float32([1, 0]), np.float32([2, -1])))
    with pytest.raises(TypeError):
        tf.is_non_decreasing(["a"])
    with pytest.raises(TypeError):
        tf.math.cumulative_logsumexp([1, 2])
