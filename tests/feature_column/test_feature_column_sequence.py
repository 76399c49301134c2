"""Sequence feature columns and `tf.contrib.feature_column.sequence_input_layer` (issue 15
API coverage), checked against NumPy."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.feature_column import feature_column_sequence

fc = tf.feature_column


def test_docstring_examples():
    result = doctest.testmod(feature_column_sequence, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _words():
    # example 0: ids 1, 4, 2; example 1: id 3; example 2: nothing
    return tf.SparseTensorValue([[0, 0], [0, 1], [0, 2], [1, 0]],
                                np.array([1, 4, 2, 3], np.int64), [3, 3])


def test_embedding_and_indicator_sequences():
    words = fc.sequence_categorical_column_with_identity("words", num_buckets=5)
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    emb = fc.embedding_column(words, 3, initializer=tf.constant_initializer(table))
    with tf.Graph().as_default():
        layer, length = tf.contrib.feature_column.sequence_input_layer(
            {"words": _words()}, [emb, fc.indicator_column(words)])
        assert [v.op.name for v in tf.global_variables()] == [
            "sequence_input_layer/words_embedding/embedding_weights"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, n = sess.run([layer, length])
    assert n.tolist() == [3, 1, 0]
    assert got.shape == (3, 3, 8)
    np.testing.assert_array_equal(got[0, :, :3], table[[1, 4, 2]])
    np.testing.assert_array_equal(got[1, 0, :3], table[3])
    np.testing.assert_array_equal(got[1, 1:], 0.0)
    np.testing.assert_array_equal(got[2], 0.0)
    np.testing.assert_array_equal(got[0, :, 3:], np.eye(5)[[1, 4, 2]])


def test_vocabulary_and_numeric_sequences():
    color = fc.sequence_categorical_column_with_vocabulary_list("color", ["r", "g", "b"])
    temps = fc.sequence_numeric_column("temps", shape=(2,), default_value=-1.0)
    features = {
        "color": tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]],
                                      np.array([b"b", b"r", b"g"], object), [2, 2]),
        "temps": tf.SparseTensorValue([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]],
                                      np.arange(6, dtype=np.float32), [2, 4]),
    }
    with tf.Graph().as_default():
        layer, length = tf.contrib.feature_column.sequence_input_layer(
            features, [temps, fc.indicator_column(color)])
        with tf.Session() as sess:
            got, n = sess.run([layer, length])
    assert n.tolist() == [2, 1]
    # sorted by name: color (3 wide), then temps (2 wide)
    np.testing.assert_array_equal(got[0, :, :3], [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(got[0, :, 3:], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(got[1, 1, 3:], [-1.0, -1.0])


def test_specs_and_errors():
    words = fc.sequence_categorical_column_with_hash_bucket("w", 10)
    assert words.parse_example_spec == {"w": tf.io.VarLenFeature(tf.string)}
    assert words.num_buckets == 10
    files = fc.sequence_categorical_column_with_vocabulary_file
    assert callable(files)
    with pytest.raises(ValueError, match="greater than 0"):
        fc.sequence_numeric_column("x", shape=(0,))
    with tf.Graph().as_default():
        plain = fc.numeric_column("x")
        with pytest.raises(ValueError, match="must be a sequence"):
            tf.contrib.feature_column.sequence_input_layer({"x": [[1.0]]}, [plain])
        lengths = tf.contrib.feature_column.sequence_input_layer(
            {"a": tf.SparseTensorValue([[0, 0]], [1.0], [1, 2]),
             "b": tf.SparseTensorValue([[0, 0], [0, 1]], [1.0, 2.0], [1, 2])},
            [fc.sequence_numeric_column("a"), fc.sequence_numeric_column("b")])[1]
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(lengths)
