"""tf.clip_by_global_norm, tf.clip_by_norm, tf.global_norm against NumPy."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import clip_ops
from flowgraph.ops.clip_ops import clip_by_global_norm, clip_by_norm, global_norm

RNG = np.random.default_rng(3)
A = RNG.normal(size=(2, 3)).astype(np.float32)
B = RNG.normal(size=(4,)).astype(np.float32)
ROWS = RNG.normal(size=(3, 5)).astype(np.float32)


def _np_global_norm(*arrays):
    return np.sqrt(sum(float(np.sum(a.astype(np.float64) ** 2)) for a in arrays))


@pytest.mark.parametrize("clip", [0.5, 100.0])
def test_clip_by_global_norm_with_none_and_indexed_slices(clip, sess):
    sl = IndexedSlices(tf.constant(ROWS), tf.constant([4, 0, 4]), tf.constant([6, 5]))
    clipped, norm = clip_by_global_norm([tf.constant(A), None, sl, tf.constant(B)], clip)
    assert clipped[1] is None and isinstance(clipped[2], IndexedSlices)
    assert clipped[2].indices is sl.indices and clipped[2].dense_shape is sl.dense_shape
    n = _np_global_norm(A, ROWS, B)
    scale = clip / max(n, clip)
    a, r, b, got_norm = sess.run([clipped[0], clipped[2].values, clipped[3], norm])
    assert got_norm == pytest.approx(n, rel=1e-6)
    np.testing.assert_allclose(a, A * scale, rtol=1e-6)
    np.testing.assert_allclose(r, ROWS * scale, rtol=1e-6)
    np.testing.assert_allclose(b, B * scale, rtol=1e-6)
    assert a.dtype == np.float32 and clipped[0].shape.as_list() == [2, 3]


def test_clip_by_global_norm_use_norm_and_infinite_norm(sess):
    clipped, norm = clip_by_global_norm([tf.constant(A)], 1.0, use_norm=tf.constant(4.0))
    np.testing.assert_allclose(sess.run(clipped[0]), A / 4.0, rtol=1e-6)
    assert sess.run(norm) == 4.0
    inf = tf.constant([np.inf, 1.0])
    clipped, norm = clip_by_global_norm([inf, tf.constant(A)], 1.0)
    assert np.isinf(sess.run(norm))
    assert np.all(np.isnan(sess.run(clipped[1])))  # TF's behaviour for a non-finite norm


def test_global_norm(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    n = global_norm([x, None, tf.constant(B)])
    assert sess.run(n, {x: A}) == pytest.approx(_np_global_norm(A, B), rel=1e-6)
    assert sess.run(global_norm([None])) == 0.0
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        global_norm(tf.constant(A))
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        clip_by_global_norm(tf.constant(A), 1.0)
    with pytest.raises(TypeError, match="one dtype"):
        global_norm([tf.constant(A), tf.constant(B.astype(np.float64))])


@pytest.mark.parametrize("axes", [None, [1], [0]])
def test_clip_by_norm(axes, sess):
    x = A * 3
    got = sess.run(clip_by_norm(tf.constant(x), 1.5, axes=axes))
    l2 = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=None if axes is None else tuple(axes),
                        keepdims=True))
    np.testing.assert_allclose(got, x * 1.5 / np.maximum(l2, 1.5), rtol=1e-6)


def test_clip_by_norm_zero_tensor_and_shapes(sess):
    z = clip_by_norm(tf.zeros([2, 3]), 1.0)
    np.testing.assert_array_equal(sess.run(z), np.zeros((2, 3)))
    p = tf.placeholder(tf.float32, [None, 3])
    assert clip_by_norm(p, 1.0, axes=[1]).shape.as_list() == [None, 3]
    sl = IndexedSlices(tf.constant(ROWS), tf.constant([0, 1, 2]), tf.constant([3, 5]))
    out = clip_by_norm(sl, 0.1)
    assert isinstance(out, IndexedSlices)
    got = sess.run(out.values)
    assert np.sqrt(np.sum(got.astype(np.float64) ** 2)) == pytest.approx(0.1, rel=1e-5)


def test_docstring_examples():
    result = doctest.testmod(clip_ops, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
