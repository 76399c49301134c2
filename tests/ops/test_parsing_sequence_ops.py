"""tf.io.parse_single_sequence_example against TensorFlow's values (recorded with the
tf-oracle on the same SequenceExample)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

# SerializeToString(deterministic=True) of the SequenceExample built in `_sequence`, by TF.
TF_BYTES = bytes.fromhex(
    "0a230a130a036c6162120c120a0a080000003f0000c03f0a0c0a036c656e12051a030a0103124d0a2f0a01"
    "76122a0a0c120a0a080000803f000000400a0c120a0a0800004040000080400a0c120a0a080000a04000"
    "00c0400a1a0a017712150a050a030a01610a080a060a01620a01630a020a00")


def _sequence() -> bytes:
    se = tf.train.SequenceExample()
    se.context.feature["len"].int64_list.value.append(3)
    se.context.feature["lab"].float_list.value.extend([0.5, 1.5])
    for w in ([b"a"], [b"b", b"c"], []):
        se.feature_lists.feature_list["w"].feature.add().bytes_list.value.extend(w)
    for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        se.feature_lists.feature_list["v"].feature.add().float_list.value.extend(v)
    return se.SerializeToString()


def test_bytes_and_values_match_tensorflow():
    assert _sequence() == TF_BYTES
    ctx, seq = tf.io.parse_single_sequence_example(
        tf.constant(TF_BYTES),
        {"len": tf.io.FixedLenFeature([], tf.int64), "lab": tf.io.VarLenFeature(tf.float32),
         "miss": tf.io.FixedLenFeature([2], tf.int64, default_value=[7, 8])},
        {"w": tf.io.VarLenFeature(tf.string),
         "v": tf.io.FixedLenSequenceFeature([2], tf.float32),
         "m": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)})
    assert ctx["len"].shape.as_list() == []
    assert seq["v"].shape.as_list() == [None, 2]
    assert seq["m"].shape.as_list() == [None]
    with tf.Session() as sess:
        c, q = sess.run([ctx, seq])
    assert c["len"] == 3
    np.testing.assert_array_equal(c["miss"], [7, 8])
    np.testing.assert_allclose(c["lab"].values, [0.5, 1.5])
    assert q["w"].indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert q["w"].values.tolist() == [b"a", b"b", b"c"]
    assert q["w"].dense_shape.tolist() == [3, 2]
    np.testing.assert_allclose(q["v"], [[1, 2], [3, 4], [5, 6]])
    assert q["v"].dtype == np.float32
    assert q["m"].shape == (0,) and q["m"].dtype == np.int64


def test_errors():
    _, seq = tf.io.parse_single_sequence_example(
        TF_BYTES, sequence_features={"zz": tf.io.FixedLenSequenceFeature([], tf.int64)})
    _, wrong = tf.io.parse_single_sequence_example(
        TF_BYTES, sequence_features={"v": tf.io.FixedLenSequenceFeature([3], tf.float32)})
    _, typed = tf.io.parse_single_sequence_example(
        TF_BYTES, sequence_features={"v": tf.io.FixedLenSequenceFeature([2], tf.int64)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Did you mean to include it"):
            sess.run(seq["zz"])
        with pytest.raises(tf.errors.InvalidArgumentError, match="2 values but shape"):
            sess.run(wrong["v"])
        with pytest.raises(tf.errors.InvalidArgumentError, match="expected int64"):
            sess.run(typed["v"])
    with pytest.raises(ValueError, match="both are empty"):
        tf.io.parse_single_sequence_example(TF_BYTES)
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.io.parse_single_sequence_example([TF_BYTES], {"a": tf.io.VarLenFeature(tf.int64)})
