"""TFRecord files: flowgraph reads the files TensorFlow wrote (tests/data/tfrecord/,
written once by TensorFlow 2.15 through the tf-oracle: 4 Examples, uncompressed, GZIP and
ZLIB) and writes byte-identical uncompressed files; CRC and truncation errors."""

from __future__ import annotations

import os
import struct

import pytest

import flowgraph as tf
from flowgraph.io import tf_record

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tfrecord")
FILES = {"": "tf_examples.tfrecord", "GZIP": "tf_examples.tfrecord.gz",
         "ZLIB": "tf_examples.tfrecord.zlib"}


def example(i: int) -> bytes:
    """The records of the fixtures (the oracle script built the same Examples)."""
    return tf.train.Example(features=tf.train.Features(feature={
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -i])),
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"n%d" % i] * (i % 3))),
    })).SerializeToString()


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_reads_files_written_by_tensorflow(compression):
    path = os.path.join(DATA, FILES[compression])
    options = tf.python_io.TFRecordOptions(compression or None)
    assert list(tf.python_io.tf_record_iterator(path, options)) == [example(i)
                                                                    for i in range(4)]
    assert len(list(tf.io.tf_record_iterator(path, compression or None))) == 4


def test_writes_the_bytes_tensorflow_writes(tmp_path):
    path = str(tmp_path / "out.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(4):
            w.write(example(i))
    with open(path, "rb") as f, open(os.path.join(DATA, FILES[""]), "rb") as g:
        assert f.read() == g.read()


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB",
                                         tf.python_io.TFRecordCompressionType.GZIP])
def test_compressed_round_trip(tmp_path, compression):
    path = str(tmp_path / "c.tfrecord")
    records = [b"", b"x" * 5000, "text"]
    with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(compression)) as w:
        for r in records:
            w.write(r)
    got = list(tf.python_io.tf_record_iterator(path, tf.python_io.TFRecordOptions(compression)))
    assert got == [b"", b"x" * 5000, b"text"]


def test_masked_crc_and_backend():
    # masked crc32c of the empty string and of b"123456789" (crc 0xe3069283)
    assert tf_record.masked_crc32c(b"") == 0xA282EAD8
    crc = 0xE3069283
    assert tf_record.masked_crc32c(b"123456789") == (
        ((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert tf_record.crc32c_backend() in ("crc32c", "google-crc32c", "pure-python")


def test_corrupt_truncated_and_wrong_compression(tmp_path):
    good = open(os.path.join(DATA, FILES[""]), "rb").read()
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(good[:20] + bytes([good[20] ^ 1]) + good[21:])
    with pytest.raises(tf.errors.DataLossError, match="data CRC mismatch"):
        list(tf.io.tf_record_iterator(str(bad)))
    bad.write_bytes(good[:-3])
    with pytest.raises(tf.errors.DataLossError, match="truncated record"):
        list(tf.io.tf_record_iterator(str(bad)))
    bad.write_bytes(struct.pack("<Q", 3) + b"\0\0\0\0abc")
    with pytest.raises(tf.errors.DataLossError, match="length CRC mismatch"):
        list(tf.io.tf_record_iterator(str(bad)))
    with pytest.raises(tf.errors.DataLossError, match="not a valid GZIP stream"):
        list(tf.io.tf_record_iterator(os.path.join(DATA, FILES[""]), "GZIP"))
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.io.tf_record_iterator(str(tmp_path / "missing")))
    with pytest.raises(ValueError, match="compression_type must be"):
        tf.io.TFRecordOptions("LZ4")
    w = tf.io.TFRecordWriter(str(tmp_path / "w"))
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write(b"x")
