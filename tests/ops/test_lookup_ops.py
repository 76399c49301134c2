"""tf.lookup tables and the tf.contrib.lookup helpers, against TensorFlow's values
(recorded with the tf-oracle on the same tables: ids, OOV buckets, text-file columns)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

KEYS = ["a", "c", "zz", "hello", "b"]


@pytest.fixture
def vocab(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("emerson\t10\nlake\t20\npalmer\t30\n")
    return str(path)


def test_values_match_tensorflow(vocab):
    t1 = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        ["a", "b", "c"], [1, 2, 3], value_dtype=tf.int64), -1)
    t2 = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        ["a", "b"], tf.constant([0, 1], tf.int64)), 5)
    t3 = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64)), 7)
    t4 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, 0, tf.int64, 1, delimiter="\t"), -7)
    t5 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -7)
    t6 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string, 0), "?")
    keys = tf.constant(KEYS)
    outs = [t1.lookup(keys), t2.lookup(keys),
            t3.lookup(tf.constant([10, 5, 20, 99, -4], tf.int64)),
            t4.lookup(tf.constant(["lake", "nope"])), t5.lookup(tf.constant(["lake\t20", "x"])),
            t6.lookup(tf.constant([2, 0, 9], tf.int64)), t1.size(), t2.size()]
    assert outs[0].shape.as_list() == [5] and outs[0].dtype == tf.int64
    sp = t1.lookup(tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["c", "q"]), [2, 3]))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
            sess.run(outs[0])
        sess.run(tf.tables_initializer())
        got = sess.run(outs)
        sp_value = sess.run(sp)
        sess.run(tf.tables_initializer())  # a second run is a no-op, as in TensorFlow
    np.testing.assert_array_equal(got[0], [1, 3, -1, -1, 2])
    np.testing.assert_array_equal(got[1], [0, 4, 4, 3, 1])
    np.testing.assert_array_equal(got[2], [0, 3, 1, 6, 5])
    np.testing.assert_array_equal(got[3], [20, -7])
    np.testing.assert_array_equal(got[4], [1, -7])
    assert got[5].tolist() == [b"palmer", b"emerson", b"?"]
    assert (got[6], got[7]) == (3, 7)
    assert sp_value.values.tolist() == [3, -1]


def test_contrib_helpers(vocab):
    lines = tf.contrib.lookup.index_table_from_file(vocab, num_oov_buckets=0)
    ids = tf.contrib.lookup.index_table_from_tensor(["x", "y"], num_oov_buckets=3)
    ints = tf.compat.v1.contrib.lookup.index_table_from_tensor([7, 9], dtype=tf.int32)
    back = tf.contrib.lookup.index_to_string_table_from_tensor(["x", "y"], default_value="?")
    fetches = [lines.lookup(tf.constant(["lake\t20", "lake"])),
               ids.lookup(tf.constant(["y", "zz", "hello"])),
               ints.lookup(tf.constant([9, 8], tf.int64)),
               back.lookup(tf.constant([1, 4], tf.int64)), ids.size()]
    with tf.train.MonitoredSession() as sess:  # the Scaffold runs the table initializers
        got = sess.run(fetches)
    assert got[0].tolist() == [1, -1]
    assert got[1].tolist()[0] == 1 and all(2 <= g < 5 for g in got[1].tolist()[1:])
    assert got[2].tolist() == [1, -1]
    assert got[3].tolist() == [b"y", b"?"]
    assert got[4] == 5
    # without OOV buckets the table's keys are int64 and so must the keys looked up be
    with pytest.raises(TypeError, match="must be <dtype: 'int64'>, received: <dtype: 'int32'>"):
        ints.lookup(tf.constant([9, 8], tf.int32))


def test_errors(vocab):
    with pytest.raises(TypeError, match="dtype float32 is not supported"):
        tf.lookup.KeyValueTensorInitializer([1.0], [1])
    with pytest.raises(ValueError, match="`num_oov_buckets` must be > 0; use StaticHashTable"):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a"], tf.constant([0], tf.int64)), 0)
    with pytest.raises(ValueError, match="`key_dtype` must be int64 if `key_index` is -1"):
        tf.lookup.TextFileInitializer(vocab, tf.string, -1, tf.int64, 0)
    t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
    with pytest.raises(TypeError, match="keys` must be <dtype: 'string'>, received"):
        t.lookup(tf.constant([1]))
    dup = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), 0)
    short = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, -2, tf.int64, -1, vocab_size=9), -1)
    cols = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, 0, tf.int64, 4), -1)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="different value for same key"):
            sess.run(dup.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="vocab_size"):
            sess.run(short.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="column 4"):
            sess.run(cols.initializer)


def test_tables_inside_dataset_functions(vocab):
    """A TF1 input pipeline looks words up inside `Dataset.map`: the function's graph gets
    a copy of the table that fills itself from the same initializer."""
    words = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        vocab, tf.string, 0, tf.int64, 1), -1)
    ids = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        KEYS[:2], tf.constant([0, 1], tf.int64)), 5)
    ds = tf.data.Dataset.from_tensor_slices(["lake", "zz", "a"]).map(
        lambda s: (words.lookup(s), ids.lookup(s)))
    nxt = tf.data.make_one_shot_iterator(ds.batch(3)).get_next()
    with tf.Session() as sess:
        got_words, got_ids = sess.run(nxt)
    assert got_words.tolist() == [20, -1, -1]
    assert got_ids.tolist() == [3, 4, 0]  # "lake", "zz": 2 + Fingerprint64 % 5
    computed = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.placeholder(tf.string, [2]), [1, 2]), -1)
    with pytest.raises(ValueError, match="needs constant keys and values"):
        tf.data.Dataset.from_tensor_slices(["a"]).map(computed.lookup)
