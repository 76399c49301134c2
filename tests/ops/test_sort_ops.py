"""tf.sort, tf.argsort, tf.meshgrid and tf.broadcast_to (issue 15), against NumPy.

Expected values and error types were checked under TensorFlow 2.15's tf.compat.v1.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from tests.ops.gradient_checker import check_gradient

R = np.random.RandomState(15)


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_matches_numpy(axis, direction):
    x = R.randint(-4, 4, size=(3, 4, 5)).astype(np.float32)  # many ties
    got_values = _run(tf.sort(x, axis=axis, direction=direction))
    got_indices = _run(tf.argsort(x, axis=axis, direction=direction, stable=True))
    key = x if direction == "ASCENDING" else -x
    want_indices = np.argsort(key, axis=axis, kind="stable")
    np.testing.assert_array_equal(got_indices, want_indices)
    np.testing.assert_array_equal(got_values, np.take_along_axis(x, want_indices, axis))
    assert got_indices.dtype == np.int32


def test_sort_integer_extremes_and_unknown_length():
    x = np.array([3, np.iinfo(np.int32).min, 2, np.iinfo(np.int32).max, 3], np.int32)
    np.testing.assert_array_equal(_run(tf.sort(x)), np.sort(x))
    np.testing.assert_array_equal(_run(tf.sort(x, direction="DESCENDING")), np.sort(x)[::-1])
    p = tf.placeholder(tf.float32, [2, None])
    v = np.array([[2.0, 0.5, 1.0], [0.0, -1.0, 3.0]], np.float32)
    np.testing.assert_array_equal(_run(tf.argsort(p), {p: v}), np.argsort(v, axis=-1))


def test_sort_errors():
    with pytest.raises(ValueError, match="direction"):
        tf.sort([1.0, 2.0], direction="UP")
    with pytest.raises(ValueError, match="axis"):
        tf.argsort([1.0, 2.0], axis=1)
    assert tf.sort(tf.placeholder(tf.float32)).shape.ndims is None  # TF 2.15: <unknown>


def test_sort_gradient():
    x = R.permutation(12).reshape(3, 4) * 0.3 - 1.0
    check_gradient(lambda t: tf.sort(t, axis=0, direction="ASCENDING"), [x])


def test_meshgrid_xy_and_ij():
    a, b, c = np.arange(3), np.arange(10, 12), np.arange(20, 24)
    for indexing in ("xy", "ij"):
        got = _run(tf.meshgrid(a, b, c, indexing=indexing))
        for g, w in zip(got, np.meshgrid(a, b, c, indexing=indexing)):
            np.testing.assert_array_equal(g, w)
    x, y = tf.meshgrid([1.0, 2.0, 3.0], [4.0, 5.0])
    assert x.shape.as_list() == [2, 3] and y.shape.as_list() == [2, 3]


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="'xy' or 'ij'"):
        tf.meshgrid([1], indexing="zz")
    with pytest.raises(TypeError, match="'foo' is an invalid keyword argument"):
        tf.meshgrid([1], foo=1)


def test_broadcast_to_values_dtypes_and_static_shape():
    x = np.array([[1.0], [2.0]], np.float32)
    out = tf.broadcast_to(x, [3, 2, 4])
    assert out.shape.as_list() == [3, 2, 4]
    np.testing.assert_array_equal(_run(out), np.broadcast_to(x, (3, 2, 4)))
    assert _run(tf.broadcast_to([True], [2])).tolist() == [True, True]
    assert _run(tf.broadcast_to(["a"], [2])).tolist() == [b"a", b"a"]
    p = tf.placeholder(tf.int32, [None])
    assert _run(tf.broadcast_to(5, p), {p: [2, 3]}).tolist() == [[5] * 3] * 2


def test_broadcast_to_errors():
    with pytest.raises(ValueError, match="cannot be broadcast"):
        tf.broadcast_to([1, 2, 3], [2, 2])
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="broadcast_to"):
        _run(tf.broadcast_to([1, 2, 3], p), {p: [2, 2]})


@pytest.mark.parametrize("shapes", ["static", "dims"])
def test_broadcast_to_gradient_sums_broadcast_dims(shapes):
    x = R.uniform(-1, 1, size=(2, 1))
    check_gradient(lambda t: tf.broadcast_to(t, [3, 2, 4]), [x], shapes=shapes)
    v = tf.constant([[1.0], [2.0]])
    g = tf.gradients(tf.reduce_sum(tf.broadcast_to(v, [3, 2, 4]) * 2.0), v)[0]
    assert _run(g).tolist() == [[24.0], [24.0]]
