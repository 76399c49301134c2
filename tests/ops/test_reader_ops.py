"""TF1's queue-fed readers (issue 15 API coverage). The expected keys and values were
recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle on the same files."""

from __future__ import annotations

import doctest
import os

import pytest

import flowgraph as tf
from flowgraph.ops import reader_ops


def test_docstring_examples():
    result = doctest.testmod(reader_ops, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


@pytest.fixture
def files(tmp_path):
    rec, txt, binf, empty = (str(tmp_path / n) for n in ("r.tfrecord", "t.txt", "b.bin",
                                                          "e.txt"))
    with tf.io.TFRecordWriter(rec) as w:
        for i in range(3):
            w.write(b"rec%d" % i)
    with open(txt, "w", newline="") as f:
        f.write("h\nl1\r\nl2\n\nl4")
    with open(binf, "wb") as f:
        f.write(b"HH" + bytes(range(10)) + b"F")
    open(empty, "w").close()
    return {"rec": rec, "txt": txt, "bin": binf, "empty": empty, "dir": str(tmp_path)}


def _drain(files, make, names, up_to=None):
    with tf.Graph().as_default():
        queue = tf.train.string_input_producer(names, num_epochs=1, shuffle=False)
        reader = make()
        kv = reader.read_up_to(queue, up_to) if up_to else reader.read(queue)
        counts = [reader.num_records_produced(), reader.num_work_units_completed()]
        out = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                while True:
                    k, v = sess.run(kv)
                    out.append((k, v))
            except tf.errors.OutOfRangeError:
                pass
            finally:  # never leave a queue-runner thread behind, even on a failure
                coord.request_stop()
                coord.join(threads)
            produced, completed = sess.run(counts)
    d = files["dir"]
    if up_to:
        return [([x.decode().replace(d, "D") for x in k], v.tolist()) for k, v in out], \
            produced, completed
    return [(k.decode().replace(d, "D"), v) for k, v in out], produced, completed


def test_tfrecord_and_text_line_readers(files):
    got, produced, completed = _drain(files, tf.TFRecordReader, [files["rec"]])
    assert got == [("D/r.tfrecord:0", b"rec0"), ("D/r.tfrecord:20", b"rec1"),
                   ("D/r.tfrecord:40", b"rec2")]
    assert (produced, completed) == (3, 1)
    got, _, completed = _drain(files, lambda: tf.TextLineReader(skip_header_lines=1),
                               [files["txt"], files["empty"], files["txt"]])
    once = [("D/t.txt:2", b"l1"), ("D/t.txt:3", b"l2"), ("D/t.txt:4", b""),
            ("D/t.txt:5", b"l4")]
    assert got == once + once and completed == 3


def test_fixed_length_whole_file_identity_readers(files):
    got, _, _ = _drain(files, lambda: tf.FixedLengthRecordReader(3, header_bytes=2,
                                                                 footer_bytes=1),
                       [files["bin"]])
    assert got == [("D/b.bin:0", b"\x00\x01\x02"), ("D/b.bin:1", b"\x03\x04\x05"),
                   ("D/b.bin:2", b"\x06\x07\x08")]
    got, _, _ = _drain(files, lambda: tf.FixedLengthRecordReader(
        4, header_bytes=2, footer_bytes=1, hop_bytes=3), [files["bin"]])
    assert [v for _, v in got] == [b"\x00\x01\x02\x03", b"\x03\x04\x05\x06",
                                   b"\x06\x07\x08\t"]
    got, _, _ = _drain(files, tf.WholeFileReader, [files["txt"]])
    assert got == [("D/t.txt", b"h\nl1\r\nl2\n\nl4")]
    got, _, _ = _drain(files, tf.IdentityReader, ["a", "b"])
    assert got == [("a", b"a"), ("b", b"b")]


def test_read_up_to_stays_within_one_file(files):
    got, produced, _ = _drain(files, tf.TFRecordReader, [files["rec"], files["rec"]], up_to=2)
    batch = (["D/r.tfrecord:0", "D/r.tfrecord:20"], [b"rec0", b"rec1"])
    assert got == [batch, (["D/r.tfrecord:40"], [b"rec2"])] * 2 and produced == 6


def test_missing_file_is_not_found(files):
    with pytest.raises(tf.errors.NotFoundError):
        _drain(files, tf.TextLineReader, [os.path.join(files["dir"], "missing.txt")])
