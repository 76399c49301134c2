"""tf.data.TFRecordDataset over the TensorFlow-written fixtures, with parsing."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf

DATA = os.path.join(os.path.dirname(__file__), "tfrecord")


def _run(ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


@pytest.mark.parametrize(("name", "compression"), [
    ("tf_examples.tfrecord", None), ("tf_examples.tfrecord.gz", "GZIP"),
    ("tf_examples.tfrecord.zlib", "ZLIB")])
def test_parse_batches_of_tensorflow_records(name, compression):
    path = os.path.join(DATA, name)
    features = {"id": tf.FixedLenFeature([], tf.int64), "x": tf.FixedLenFeature([2], tf.float32)}
    ds = (tf.data.TFRecordDataset([path, path], compression_type=compression)
          .map(lambda s: tf.parse_single_example(s, features)).batch(8))
    (batch,) = _run(ds)
    np.testing.assert_array_equal(batch["id"], [0, 1, 2, 3] * 2)
    np.testing.assert_allclose(batch["x"][:4], [[0, 0], [0.5, -1], [1, -2], [1.5, -3]])


def test_var_len_after_batching():
    path = os.path.join(DATA, "tf_examples.tfrecord")
    ds = tf.data.TFRecordDataset(path).batch(4)
    (records,) = _run(ds)
    sp = tf.parse_example(records, {"name": tf.VarLenFeature(tf.string)})["name"]
    with tf.Session() as sess:
        value = sess.run(sp)
    assert value.values.tolist() == [b"n1", b"n2", b"n2"]
    assert value.indices.tolist() == [[1, 0], [2, 0], [2, 1]]
    assert value.dense_shape.tolist() == [4, 2]


def test_filenames_placeholder_and_errors(tmp_path):
    names = tf.placeholder(tf.string, [None])
    it = tf.data.make_initializable_iterator(tf.data.TFRecordDataset(names))
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {names: [os.path.join(DATA, "tf_examples.tfrecord")]})
        assert isinstance(sess.run(nxt), bytes)
        sess.run(it.initializer, {names: [str(tmp_path / "missing.tfrecord")]})
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(nxt)
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TFRecordDataset("a", compression_type="BZ2")
