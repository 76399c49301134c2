"""Dataset.save / Dataset.load in TensorFlow 2's saved-dataset format: flowgraph reads
what TensorFlow 2.15 wrote (tests/data/tf_formats/saved_dataset, see its make_fixture.py),
writes the same records, and reads its own back."""

import glob
import os
import shutil

import pytest

import flowgraph as tf
from flowgraph.io.tf_record import tf_record_iterator

FIXTURE = os.path.join(os.path.dirname(__file__), "tf_formats", "saved_dataset")
EXPECTED = [(i, [float(i), 2.0 * i], str(i).encode()) for i in range(5)]


def _elements(ds):
    it = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                e = sess.run(it)
            except tf.errors.OutOfRangeError:
                return out
            out.append((int(e["a"]), e["b"][0].tolist(), e["b"][1]))


def _dataset():
    return tf.data.Dataset.range(5).map(lambda x: {
        "a": x, "b": (tf.cast(x, tf.float32) * [1.0, 2.0], tf.strings.as_string(x))})


def test_reads_what_tensorflow_wrote():
    for sub, kw in (("plain", {}), ("gz", {"compression": "GZIP"})):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.load(os.path.join(FIXTURE, sub), **kw)
            assert ds.element_spec == {
                "a": tf.TensorSpec([], tf.int64),
                "b": (tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.string))}
            # two shards (a % 2) are read one element from each in turn, as TF reads them
            assert _elements(ds) == EXPECTED
            with tf.Session() as sess:  # the count the metadata records, as TF
                assert sess.run(tf.data.experimental.cardinality(ds)) == 5


def test_writes_tensorflows_records_and_reads_them_back(tmp_path):
    path = str(tmp_path / "plain")
    with tf.Graph().as_default():
        op = _dataset().save(path)
        assert op.type == "SaveDataset"
        # As TensorFlow: the element spec is written when the op is built.
        assert sorted(os.listdir(path)) == ["dataset_spec.pb"]
        with tf.Session() as sess:
            assert sess.run(op) is None
    (ours,) = glob.glob(os.path.join(path, "*", "00000000.shard", "00000000.snapshot"))
    (theirs,) = glob.glob(os.path.join(FIXTURE, "plain", "*", "00000000.shard", "*"))
    assert list(tf_record_iterator(ours)) == list(tf_record_iterator(theirs))
    with tf.Graph().as_default():
        assert _elements(tf.data.Dataset.load(path)) == EXPECTED
        spec = {"a": tf.TensorSpec([], tf.int64),
                "b": (tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.string))}
        assert _elements(tf.data.Dataset.load(path, element_spec=spec)) == EXPECTED


def test_shards_compression_and_captured_values(tmp_path):
    path = str(tmp_path / "gz")
    with tf.Graph().as_default():
        scale = tf.placeholder(tf.int64, [])
        ds = tf.data.Dataset.range(5).map(lambda x: {"a": x * scale})
        op = ds.save(path, compression="GZIP", shard_func=lambda e: e["a"] % 3)
        with tf.Session() as sess:
            sess.run(op, {scale: 10})
    (run,) = glob.glob(os.path.join(path, "[0-9]*"))
    assert sorted(os.listdir(run)) == [f"{i:08d}.shard" for i in range(3)]
    with tf.Graph().as_default():
        a = tf.data.make_one_shot_iterator(tf.data.Dataset.load(path, compression="GZIP"))
        a = a.get_next()["a"]
        with tf.Session() as sess:
            # Shards are interleaved over as many at once as there are cores (TF's
            # default reader), so the order depends on the machine; the elements do not.
            assert sorted(int(sess.run(a)) for _ in range(5)) == [0, 10, 20, 30, 40]


def test_errors(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.NotFoundError, match=r"snapshot\.metadata; No such file"):
            tf.data.Dataset.load(str(tmp_path / "missing"))
        ds = tf.data.Dataset.range(3)
        with pytest.raises(ValueError, match="compression must be None, 'GZIP' or 'ZLIB'"):
            ds.save(str(tmp_path / "x"), compression="SNAPPY")
        with pytest.raises(ValueError, match="shard_func must return a scalar int64"):
            ds.save(str(tmp_path / "x"), shard_func=lambda x: tf.cast(x, tf.float32))
        with pytest.raises(NotImplementedError, match="checkpoint_args"):
            ds.save(str(tmp_path / "x"), checkpoint_args={})
        sparse = tf.data.Dataset.from_tensors(tf.SparseTensor([[0]], [1.0], [2]))
        with pytest.raises(TypeError, match="only dense tensor components can be saved"):
            sparse.save(str(tmp_path / "y"))
        shutil.copytree(os.path.join(FIXTURE, "plain"), str(tmp_path / "z"))
        with pytest.raises(NotImplementedError, match="reader_func"):
            tf.data.Dataset.load(str(tmp_path / "z"), reader_func=lambda d: d)
        negative = tf.data.Dataset.range(2).save(str(tmp_path / "n"),
                                                 shard_func=lambda x: x - 5)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="shard index must be non-negative"):
            sess.run(negative)
