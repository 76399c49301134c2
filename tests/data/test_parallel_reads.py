"""`num_parallel_reads` of the file readers: TensorFlow 2.15's interleaved record order
(values printed by TF under the tf-oracle), and the argument checks."""

from __future__ import annotations

import pytest

import flowgraph as tf


def _records(ds):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        try:
            while True:
                out.append(sess.run(nxt).decode())
        except tf.errors.OutOfRangeError:
            return out


@pytest.fixture
def text_files(tmp_path):
    names = []
    for i, n in enumerate([3, 1, 4]):
        path = tmp_path / f"f{i}.txt"
        path.write_text("".join(f"{i}-{j}\n" for j in range(n)))
        names.append(str(path))
        with tf.python_io.TFRecordWriter(str(tmp_path / f"f{i}.rec")) as writer:
            for j in range(n):
                writer.write(f"{i}-{j}".encode())
    return names


# TF 2.15: a file that ends hands its place to the next file, which gives its first
# record on that place's next turn.
TF_ORDER = {
    None: ["0-0", "0-1", "0-2", "1-0", "2-0", "2-1", "2-2", "2-3"],
    1: ["0-0", "0-1", "0-2", "1-0", "2-0", "2-1", "2-2", "2-3"],
    2: ["0-0", "1-0", "0-1", "0-2", "2-0", "2-1", "2-2", "2-3"],
    3: ["0-0", "1-0", "2-0", "0-1", "2-1", "0-2", "2-2", "2-3"],
    5: ["0-0", "1-0", "2-0", "0-1", "2-1", "0-2", "2-2", "2-3"],
}


@pytest.mark.parametrize("reads", [None, 1, 2, 3, 5])
def test_text_and_tfrecord_readers_interleave_as_tensorflow(text_files, reads):
    with tf.Graph().as_default():
        lines = _records(tf.data.TextLineDataset(text_files, num_parallel_reads=reads))
        records = _records(tf.data.TFRecordDataset(
            [n.replace(".txt", ".rec") for n in text_files], num_parallel_reads=reads))
    assert lines == TF_ORDER[reads]
    assert records == TF_ORDER[reads]


def test_fixed_length_reader_interleaves_as_tensorflow(tmp_path):
    names = []
    for i, n in enumerate([2, 3, 1, 2]):
        path = tmp_path / f"f{i}.bin"
        path.write_bytes(b"HH" + b"".join(f"{i}{j}".encode() for j in range(n)) + b"F")
        names.append(str(path))
    expected = {None: ["00", "01", "10", "11", "12", "20", "30", "31"],
                2: ["00", "10", "01", "11", "12", "20", "30", "31"],
                3: ["00", "10", "20", "01", "11", "12", "30", "31"]}
    for reads, want in expected.items():
        with tf.Graph().as_default():
            got = _records(tf.data.FixedLengthRecordDataset(
                names, 2, header_bytes=2, footer_bytes=1, num_parallel_reads=reads))
        assert got == want, reads


def test_parallel_reads_arguments(text_files):
    with tf.Graph().as_default():
        from_tensor = _records(tf.data.TextLineDataset(
            text_files, num_parallel_reads=tf.constant(2, tf.int64), name="lines"))
        assert from_tensor == TF_ORDER[2]
        assert len(_records(tf.data.TextLineDataset(
            text_files, num_parallel_reads=tf.data.experimental.AUTOTUNE))) == 8
        with pytest.raises(ValueError, match="TFRecordDataset: num_parallel_reads must be"):
            tf.data.TFRecordDataset(text_files, num_parallel_reads=0)
        with pytest.raises(ValueError, match="must be known when the dataset is built"):
            tf.data.TextLineDataset(text_files, num_parallel_reads=tf.placeholder(tf.int64))
