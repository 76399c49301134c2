"""`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr` (functional_ops.py): values against
NumPy, nested structures, TensorFlow 1.x's static shapes and errors, gradients against
finite differences."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf

R = np.random.RandomState(3)


def test_map_fn_values_and_static_shape(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.map_fn(lambda r: r * 2.0 + 1.0, x)
    assert y.shape.as_list() == [None, 3]
    assert tf.map_fn(lambda r: r, tf.zeros([4, 3])).shape.as_list() == [4, 3]
    X = R.normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_allclose(sess.run(y, {x: X}), X * 2 + 1, rtol=1e-6)


def test_map_fn_nested_input_and_dtype(sess):
    Pair = collections.namedtuple("Pair", "a b")
    elems = Pair(tf.constant([1.0, 2.0, 3.0]), tf.constant([[1, 2], [3, 4], [5, 6]]))
    out = tf.map_fn(lambda p: {"sum": p.a + tf.cast(tf.reduce_sum(p.b), tf.float32),
                               "first": p.b[0]},
                    elems, dtype={"sum": tf.float32, "first": tf.int32})
    got = sess.run(out)
    assert got["sum"].tolist() == [4.0, 9.0, 14.0] and got["first"].tolist() == [1, 3, 5]


def test_map_fn_wrong_output_dtype_is_explained():
    with pytest.raises(TypeError, match="pass dtype="):
        tf.map_fn(lambda r: tf.cast(r, tf.int32), tf.zeros([2, 3]))


def test_scan_with_and_without_initializer_and_reverse(sess):
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert sess.run(tf.scan(lambda a, v: a + v, x)).tolist() == [1, 3, 6, 10]
    assert sess.run(tf.scan(lambda a, v: a + v, x, reverse=True)).tolist() == [10, 9, 7, 4]
    fib = tf.scan(lambda a, _: (a[1], a[0] + a[1]), tf.zeros([6]),
                  initializer=(tf.constant(0), tf.constant(1)))
    assert sess.run(fib)[0].tolist() == [1, 1, 2, 3, 5, 8]


def test_folds(sess):
    x = tf.constant([1, 2, 3])
    assert sess.run(tf.foldl(lambda a, v: a * 10 + v, x)) == 123
    assert sess.run(tf.foldr(lambda a, v: a * 10 + v, x)) == 321
    assert sess.run(tf.foldl(lambda a, v: a - v, x, initializer=100)) == 94
    pairs = tf.foldl(lambda a, v: (a[0] + v[0], a[1] * v[1]),
                     (tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])),
                     initializer=(tf.constant(0.0), tf.constant(1.0)))
    assert sess.run(pairs) == (3.0, 12.0)


def test_length_known_only_at_run_time(sess):
    n = tf.placeholder(tf.int32, [])
    out = tf.scan(lambda a, v: a * v, tf.range(1, n + 1))
    assert sess.run(out, {n: 5}).tolist() == [1, 2, 6, 24, 120]


def _numpy_recurrence(x, w):
    a = np.ones(x.shape[1])
    out = []
    for row in x:
        a = np.tanh(a * w + row)
        out.append(a)
    return np.array(out)


def test_scan_matches_numpy_recurrence(sess):
    x = tf.placeholder(tf.float64, [None, 3])
    w = tf.placeholder(tf.float64, [3])
    y = tf.scan(lambda a, r: tf.tanh(a * w + r), x, initializer=tf.ones([3], tf.float64))
    X, W = R.normal(size=(5, 3)), R.normal(size=3)
    np.testing.assert_allclose(sess.run(y, {x: X, w: W}), _numpy_recurrence(X, W))


@pytest.mark.parametrize("which", ["map_fn", "scan", "scan_reverse", "foldl", "foldr"])
def test_gradients_match_finite_differences(which):
    def build(x, w):
        if which == "map_fn":
            return tf.map_fn(lambda r: tf.sin(r) * w, x)
        if which.startswith("scan"):
            return tf.scan(lambda a, r: tf.tanh(a * w + r), x, initializer=tf.sin(w),
                           reverse=which.endswith("reverse"))
        fold = tf.foldl if which == "foldl" else tf.foldr
        return fold(lambda a, r: a * tf.cos(r) + w, x)
    check_gradient(build, [R.normal(size=(4, 3)), R.normal(size=3)])


def test_back_prop_false_stops_gradients():
    x = tf.constant([1.0, 2.0])
    y = tf.map_fn(lambda v: v * v, x, back_prop=False)
    assert tf.gradients(tf.reduce_sum(y), x) == [None]


def test_errors():
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.map_fn(lambda v: v, tf.constant(1.0))
    with pytest.raises(ValueError, match="different first dimensions"):
        tf.map_fn(lambda p: p[0], (tf.zeros([2]), tf.zeros([3])))
    with pytest.raises(TypeError, match="callable"):
        tf.scan(3, tf.zeros([2]))


def test_nested_loops_gradients_match_finite_differences():
    check_gradient(lambda x: tf.map_fn(lambda row: tf.scan(lambda a, v: a * v + 1.0, row), x),
                   [R.normal(size=(3, 4))])
