"""Segment reductions, dynamic_partition and dynamic_stitch through the public API:
values against NumPy references and TensorFlow 1.x's (recorded with the tf-oracle),
static shapes and dtypes, errors. Gradients are checked by the registry tests
(tests/ops/issue15_math_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

R = np.random.RandomState(3)


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


def _reference(kind, data, ids, n, empty):
    out = np.full((n, *data.shape[ids.ndim:]), empty, dtype=np.float64)
    rows = data.reshape(ids.size, -1).reshape((ids.size, *data.shape[ids.ndim:]))
    for s in range(n):
        sel = rows[ids.reshape(-1) == s]
        if len(sel):
            out[s] = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod,
                      "mean": np.mean}[kind](sel, axis=0)
    return out


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
def test_sorted_segments_match_numpy(kind):
    data = R.uniform(-2, 2, size=(7, 3))
    ids = np.array([0, 0, 1, 3, 3, 3, 5])
    fn = getattr(tf, f"segment_{kind}")
    assert fn is getattr(tf.math, f"segment_{kind}")
    out = fn(tf.constant(data), ids)
    assert out.shape.as_list() == [None, 3] and out.dtype == tf.float64
    empty = 1.0 if kind == "prod" else 0.0  # TF: 0 for an empty sum/mean/max/min
    np.testing.assert_allclose(_run(out)[0], _reference(kind, data, ids, 6, empty))


@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod"])
def test_unsorted_segments_match_numpy(kind):
    data = R.uniform(-2, 2, size=(2, 3, 2)).astype(np.float32)
    ids = np.array([[4, 0, -1], [4, 1, 0]])
    fn = getattr(tf, f"unsorted_segment_{kind}")
    out = fn(data, ids, num_segments=5)
    assert out.shape.as_list() == [5, 2] and out.dtype == tf.float32
    lowest, highest = np.finfo(np.float32).min, np.finfo(np.float32).max
    empty = {"sum": 0.0, "prod": 1.0, "max": lowest, "min": highest}[kind]
    np.testing.assert_allclose(_run(out)[0], _reference(kind, data, ids, 5, empty),
                               rtol=1e-6)


def test_values_match_tensorflow():
    # Recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle.
    x = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    mean, sqrt_n, stitch, imax = _run(
        tf.unsorted_segment_mean(x, [2, 0, 2], 4), tf.unsorted_segment_sqrt_n(x, [2, 0, 2], 4),
        tf.dynamic_stitch([[0, 2], [1, 0]], [x[:2], x[1:]]),
        tf.unsorted_segment_max(tf.constant([[1, 2], [3, 4]]), [1, 1], 3))
    np.testing.assert_allclose(mean, [[3, 4], [0, 0], [3, 4], [0, 0]])
    np.testing.assert_allclose(sqrt_n, [[3, 4], [0, 0], [4.24264, 5.65685], [0, 0]],
                               rtol=1e-5)
    np.testing.assert_allclose(stitch, [[5, 6], [3, 4], [3, 4]])
    np.testing.assert_array_equal(imax, [[-2**31, -2**31], [3, 4], [-2**31, -2**31]])
    g = tf.gradients(tf.reduce_sum(tf.segment_prod(x * x, [0, 0, 2]))
                     + tf.reduce_sum(tf.unsorted_segment_max(x, [0, 0, 0], 1)), x)[0]
    np.testing.assert_allclose(_run(g)[0], [[18, 64], [6, 32], [11, 13]])


def test_integer_and_unknown_shapes():
    data = tf.placeholder(tf.int32, [None, 2])
    ids = tf.placeholder(tf.int64, [None])
    n = tf.placeholder(tf.int32, [])
    out = tf.unsorted_segment_sum(data, ids, n)
    assert out.shape.as_list() == [None, 2] and out.dtype == tf.int32
    (v,) = _run(out, feed={data: [[1, 2], [3, 4]], ids: [1, 1], n: 3})
    np.testing.assert_array_equal(v, [[0, 0], [4, 6], [0, 0]])


def test_dynamic_partition_and_stitch_round_trip():
    data = R.uniform(size=(6, 2))
    parts = np.array([2, 0, 1, 2, 0, 2], np.int32)
    pieces = tf.dynamic_partition(data, parts, 3)
    assert len(pieces) == 3 and pieces[0].shape.as_list() == [None, 2]
    positions = tf.dynamic_partition(tf.range(6), parts, 3)
    back = tf.dynamic_stitch(positions, pieces)
    got = _run(*pieces, back)
    for i in range(3):
        np.testing.assert_array_equal(got[i], data[parts == i])
    np.testing.assert_array_equal(got[3], data)


def test_errors_name_the_op():
    x = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"SegmentSum.*not increasing"):
            sess.run(tf.segment_sum(x, [1, 0, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_segments"):
            sess.run(tf.unsorted_segment_sum(x, [0, 5, 1], 2))
        with pytest.raises(tf.errors.InvalidArgumentError, match="DynamicPartition"):
            sess.run(tf.dynamic_partition(x, [0, 3, 1], 2)[0])
    with pytest.raises(ValueError, match="vector"):
        tf.segment_sum(x, [[0, 0, 2]])
    with pytest.raises(ValueError, match="prefix"):
        tf.unsorted_segment_sum(x, [0, 1], 2)
    with pytest.raises(TypeError, match="segment_ids"):
        tf.segment_sum(x, [0.0, 1.0, 1.0])
