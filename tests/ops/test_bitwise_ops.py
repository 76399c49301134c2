"""tf.bitwise: values and dtypes recorded from TensorFlow 2.15 (tf.compat.v1) with the
tf-oracle (shift amounts clamped to [0, bits - 1]), broadcasting, dtype errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def test_matches_tensorflow():
    a = tf.constant([1, -8, 100, 7], tf.int32)
    b = tf.constant([2, 1, 40, -1], tf.int32)
    u = tf.constant([0, 5, 255], tf.uint8)
    outs = [tf.bitwise.bitwise_and(a, b), tf.bitwise.bitwise_or(a, b),
            tf.bitwise.bitwise_xor(a, b), tf.bitwise.left_shift(a, b),
            tf.bitwise.right_shift(a, b), tf.bitwise.invert(u), tf.bitwise.invert(a),
            tf.bitwise.left_shift(u, tf.constant([1, 9, 3], tf.uint8)),
            tf.bitwise.bitwise_and([[12], [3]], [10, 6])]
    want = [[0, 0, 32, 7], [3, -7, 108, -1], [3, -7, 76, -8], [4, -16, 0, 7], [0, -4, 0, 7],
            [255, 250, 0], [-2, 7, -101, -8], [0, 128, 248], [[8, 4], [2, 2]]]
    with tf.Session() as sess:
        got = sess.run(outs)
    for g, w, o in zip(got, want, outs):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == o.dtype.as_numpy_dtype
    assert outs[-1].shape.as_list() == [2, 2]


def test_rejects_floats():
    with pytest.raises(TypeError, match="BitwiseAnd"):
        tf.bitwise.bitwise_and([1.0], [2.0])
    with pytest.raises(TypeError, match="Invert"):
        tf.bitwise.invert([1.5])
