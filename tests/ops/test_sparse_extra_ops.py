"""SparseTensor functions added for TF1 API coverage (issue 15). Expected values were
recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle on the same inputs."""

from __future__ import annotations

import doctest

import numpy as np

import flowgraph as tf
from flowgraph.ops import sparse_extra_ops


def test_docstring_examples():
    result = doctest.testmod(sparse_extra_ops, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _sp(x):
    return (x.indices, x.values, x.dense_shape)


def _lists(v):
    return [np.asarray(x).tolist() for x in v]


def test_sparse_functions_match_tensorflow():
    with tf.Graph().as_default():
        a = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], [1.0, -2.0, 0.5], [3, 4])
        b = tf.SparseTensor([[1, 0], [1, 2], [2, 1]], [5.0, 2.0, -0.25], [3, 4])
        with tf.Session() as sess:
            got = sess.run({
                "add": _sp(tf.sparse_add(a, b)), "addt": _sp(tf.sparse_add(a, b, 0.3)),
                "max": _sp(tf.sparse_maximum(a, b)), "min": _sp(tf.sparse_minimum(a, b)),
                "rmax0": tf.sparse_reduce_max(a, 0, keepdims=True),
                "rmaxs": _sp(tf.sparse_reduce_max_sparse(a, axis=0)),
                "rsums": _sp(tf.sparse_reduce_sum_sparse(a, axis=1)),
                "slice": _sp(tf.sparse_slice(a, [1, 1], [5, 2])),
                "split": [_sp(p) for p in tf.sparse_split(sp_input=a, num_split=3, axis=1)],
                "tr": _sp(tf.sparse_transpose(a)),
                "reset": _sp(tf.sparse_reset_shape(a)),
                "dense_add": tf.sparse_add(tf.ones([3, 4]), a),
                "soft": tf.sparse_softmax(tf.SparseTensor(
                    [[0, 0], [0, 3], [2, 1], [2, 2]], [1.0, 2.0, 3.0, 3.0], [3, 4])).values,
                "ser": tf.serialize_sparse(a),
            })
    assert _lists(got["add"]) == [[[0, 0], [1, 0], [1, 2], [2, 1]], [1.0, 5.0, 0.0, 0.25],
                                  [3, 4]]
    assert _lists(got["addt"]) == [[[0, 0], [1, 0]], [1.0, 5.0], [3, 4]]
    assert _lists(got["max"])[1] == [1.0, 5.0, 2.0, 0.5]
    assert _lists(got["min"])[1] == [0.0, 0.0, -2.0, -0.25]
    assert got["rmax0"].tolist() == [[1.0, 0.5, -2.0, 0.0]]
    assert _lists(got["rmaxs"]) == [[[0], [1], [2]], [1.0, 0.5, -2.0], [4]]
    assert _lists(got["rsums"]) == [[[0], [1], [2]], [1.0, -2.0, 0.5], [3]]
    assert _lists(got["slice"]) == [[[0, 1], [1, 0]], [-2.0, 0.5], [2, 2]]
    assert [_lists(p)[2] for p in got["split"]] == [[3, 2], [3, 1], [3, 1]]
    assert _lists(got["split"][0])[:2] == [[[0, 0], [2, 1]], [1.0, 0.5]]
    assert _lists(got["split"][1])[:2] == [[[1, 0]], [-2.0]]
    assert _lists(got["tr"]) == [[[0, 0], [1, 2], [2, 1]], [1.0, 0.5, -2.0], [4, 3]]
    assert _lists(got["reset"])[2] == [3, 3]
    assert got["dense_add"].tolist() == [[2.0, 1.0, 1.0, 1.0], [1.0, 1.0, -1.0, 1.0],
                                         [1.0, 1.5, 1.0, 1.0]]
    np.testing.assert_allclose(got["soft"], [0.26894143, 0.7310586, 0.5, 0.5], rtol=1e-6)
    assert got["ser"][1] == b'\x08\x01\x12\x04\x12\x02\x08\x03"\x0c\x00\x00\x80?\x00\x00\x00' \
        b"\xc0\x00\x00\x00?"


def test_sparse_add_gradient_reaches_both_values():
    with tf.Graph().as_default():
        va = tf.constant([1.0, 2.0])
        vb = tf.constant([3.0])
        a = tf.SparseTensor([[0, 0], [1, 1]], va, [2, 2])
        b = tf.SparseTensor([[1, 1]], vb, [2, 2])
        s = tf.sparse_add(a, b)
        ga, gb = tf.gradients(tf.reduce_sum(s.values * [1.0, 10.0]), [va, vb])
        with tf.Session() as sess:
            ga, gb = sess.run([tf.convert_to_tensor(ga), tf.convert_to_tensor(gb)])
    assert ga.tolist() == [1.0, 10.0] and gb.tolist() == [10.0]
