"""`tf.io.parse_sequence_example` (flowgraph/ops/parsing_sequence_batch_ops.py): values,
static shapes and errors as TensorFlow 2.15 gives them (recorded with the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _example(n, ts, ws):
    e = tf.train.SequenceExample()
    e.context.feature["n"].int64_list.value.append(n)
    for t in ts:
        e.feature_lists.feature_list["t"].feature.add().float_list.value.extend([t, t + 0.5])
    for w in ws:
        e.feature_lists.feature_list["w"].feature.add().bytes_list.value.extend(w)
    return e.SerializeToString()


DATA = [_example(1, [1.0, 2.0, 3.0], [[b"a"], [b"b", b"c"]]),
        _example(2, [4.0], [[b"d", b"e", b"f"]]), _example(3, [], [])]


def test_parse_sequence_example_matches_tensorflow():
    ctx, seq, lengths = tf.io.parse_sequence_example(
        DATA, context_features={"n": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={"t": tf.io.FixedLenSequenceFeature([2], tf.float32,
                                                              allow_missing=True),
                           "w": tf.io.VarLenFeature(tf.string)})
    assert ctx["n"].shape.as_list() == [3] and seq["t"].shape.as_list() == [3, None, 2]
    assert seq["w"].indices.shape.as_list() == [None, 3]
    assert lengths["t"].shape.as_list() == [3] and lengths["t"].dtype == tf.int64
    with tf.Session() as sess:
        c, s, n = sess.run([ctx, seq, lengths])
    assert c["n"].tolist() == [1, 2, 3]
    np.testing.assert_array_equal(s["t"], [[[1, 1.5], [2, 2.5], [3, 3.5]],
                                           [[4, 4.5], [0, 0], [0, 0]], np.zeros((3, 2))])
    assert s["w"].indices.tolist() == [[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0],
                                       [1, 0, 1], [1, 0, 2]]
    assert s["w"].values.tolist() == [b"a", b"b", b"c", b"d", b"e", b"f"]
    assert s["w"].dense_shape.tolist() == [3, 2, 3]
    assert n["t"].tolist() == [3, 1, 0]


def test_parse_sequence_example_errors():
    missing = tf.io.parse_sequence_example(DATA, sequence_features={
        "t": tf.io.FixedLenSequenceFeature([2], tf.float32)})[1]["t"]
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Did you mean to include it"):
        sess.run(missing)
    with pytest.raises(ValueError, match=r"dense_defaults\[t\] must be None"):
        tf.io.parse_sequence_example(DATA, sequence_features={
            "t": tf.io.FixedLenSequenceFeature([2], tf.float32, default_value=-1.0,
                                               allow_missing=True)})
    ctx = tf.io.parse_sequence_example(DATA, context_features={
        "n": tf.io.VarLenFeature(tf.int64)})[0]["n"]
    with tf.Session() as sess:
        v = sess.run(ctx)
    assert v.indices.tolist() == [[0, 0], [1, 0], [2, 0]] and v.dense_shape.tolist() == [3, 1]
