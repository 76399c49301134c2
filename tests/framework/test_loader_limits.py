"""Loaders check declared sizes, shapes, dtypes and wire types before allocating, and
raise only flowgraph's errors (the cases issue 16 found; the fuzz campaign in
tests/test_loader_fuzz.py covers the rest)."""

from __future__ import annotations

import io
import json
import os
import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.framework import errors
from flowgraph.framework import event_format as ef
from flowgraph.framework.importer import ImportGraphDefError, graph_def_from_json
from flowgraph.io import tf_record
from flowgraph.train.checkpoint_utils import CheckpointReader

HUGE = 1 << 28  # elements: 1 GiB of float32


def _npy_header(shape, descr="<f4") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": tuple(shape)})
    return buf.getvalue()


def _huge_checkpoint(path, key="w", payload=1 << 20):
    """A 1 MB checkpoint whose member declares a 2^28-element float32 tensor."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(key + ".npy", _npy_header((HUGE,)) + bytes(payload))


def _bounded(fn, seconds=1.0, peak_bytes=16 << 20):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        fn()
    finally:
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert elapsed < seconds, f"took {elapsed:.2f} s"
        assert peak < peak_bytes, f"allocated {peak} bytes"


def test_saver_restore_checks_the_declared_shape_before_reading(tmp_path):
    path = str(tmp_path / "model.ckpt-1")
    _huge_checkpoint(path)
    assert os.path.getsize(path) < 1.1e6
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros((3, 2), np.float32), name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(w.initializer)

            def restore():
                with pytest.raises(errors.InvalidArgumentError,
                                   match=r"shape mismatch.*\(3, 2\).*\[268435456\]"):
                    saver.restore(sess, path)
            _bounded(restore)


def test_reader_refuses_a_declared_size_the_file_does_not_hold(tmp_path):
    path = str(tmp_path / "ckpt")
    _huge_checkpoint(path)
    reader = CheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"w": [HUGE]}  # headers only

    def read():
        with pytest.raises(errors.DataLossError, match=r"declares shape \[268435456\]"):
            reader.get_tensor("w")
    _bounded(read)


def test_saved_model_loader_checks_the_declared_shape_first(tmp_path):
    d = str(tmp_path / "1")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.zeros((3, 2), np.float32), name="w")
        with tf.Session() as sess:
            sess.run(w.initializer)
            sm.simple_save(sess, d, {"x": x}, {"y": tf.matmul(x, w)})
    _huge_checkpoint(os.path.join(d, "variables", "variables"))

    def load():
        with pytest.raises(sm.SavedModelFormatError, match=r"shape \[268435456\]"):
            sm.load(d)
    _bounded(load, seconds=2.0, peak_bytes=32 << 20)


def test_deflate_bomb_member_is_refused_before_inflating(tmp_path):
    path = str(tmp_path / "bomb")
    n = 64 << 20
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("z.npy", _npy_header((n // 4,)) + bytes(n))
    assert os.path.getsize(path) < 200_000
    reader = CheckpointReader(path)

    def read():
        with pytest.raises(errors.DataLossError, match="decompression bomb"):
            reader.get_tensor("z")
    _bounded(read)


@pytest.mark.parametrize("header, needle", [
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "exactly"),
    ("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", "object arrays"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "non-negative"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (9" + "9" * 400 + ",)}",
     "non-negative"),
    ("__import__('os').system('true')", "not a Python literal"),
    ("{'descr': 'zz', 'fortran_order': False, 'shape': ()}", "unknown dtype"),
    ("{" * 200, "not a Python literal"),
])
def test_malformed_npy_headers_are_data_loss(tmp_path, header, needle):
    path = str(tmp_path / "ckpt")
    raw = header.encode("latin1") + b"\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("w.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw)
    with pytest.raises(errors.DataLossError, match=needle):
        CheckpointReader(path).get_tensor("w")


def _graph_def():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2, 2], name="a")
        tf.matmul(a, a, name="mm")
        tf.cast(a, tf.int32, name="c")
    return json.loads(json.dumps(g.as_graph_def()))


def _node(gd, name):
    return next(n for n in gd["node"] if n["name"] == name)


@pytest.mark.parametrize("edit, needle", [
    (lambda gd: _node(gd, "mm").update(op="Relu"), r"Relu takes 1 input\(s\), the node has 2"),
    (lambda gd: _node(gd, "mm").update(op="Const"), r"Const takes 0 input\(s\)"),
    (lambda gd: _node(gd, "c")["attr"].update(DstT="int32"),
     "attribute 'DstT' should be a dtype"),
    (lambda gd: _node(gd, "mm")["attr"].update(transpose_a=3),
     "attribute 'transpose_a' should be a bool"),
    (lambda gd: _node(gd, "mm").update(device="nowhere"), "Invalid device specification"),
    (lambda gd: _node(gd, "mm").update(output_shapes=5), "'output_shapes' must be a list"),
])
def test_graph_import_checks_nodes_against_their_op_definition(edit, needle):
    gd = _graph_def()
    edit(gd)
    with tf.Graph().as_default():
        with pytest.raises(ImportGraphDefError, match=needle) as info:
            tf.import_graph_def(gd, name="")
    assert isinstance(info.value, ValueError)  # TensorFlow's type for import errors
    assert isinstance(info.value, errors.InvalidArgumentError)


def test_graph_json_that_is_not_an_object_is_an_import_error():
    for data in (b"\xff\xfe", b"[1, 2]", b"{" * 100_000):
        with pytest.raises(ImportGraphDefError):
            graph_def_from_json(data)


def test_event_decoder_checks_wire_types_and_declared_lengths():
    # field 1 of Event (wall_time, a double) sent as a varint
    with pytest.raises(ef.DecodeError, match="wire type 0, expected 1"):
        ef.Event.FromString(b"\x08\x01")
    # field 5 (summary, a message) as a 64-bit value
    with pytest.raises(ef.DecodeError, match="wire type 1, expected 2"):
        ef.Event.FromString(b"\x29" + bytes(8))
    # a 22-byte message declaring a 512 MiB field
    data = b"\x2a" + bytes([0x80, 0x80, 0x80, 0x80, 0x02]) + bytes(16)
    assert len(data) == 22

    def decode():
        with pytest.raises(ef.DecodeError, match="truncated"):
            ef.Event.FromString(data)
    _bounded(decode, peak_bytes=1 << 20)
    assert issubclass(ef.DecodeError, errors.DataLossError)


def test_event_file_with_a_corrupt_record_is_data_loss(tmp_path):
    path = str(tmp_path / "events.out.tfevents.1")
    with open(path, "wb") as f:
        f.write(ef.frame_record(ef.Event(wall_time=1.0, step=2).SerializeToString()))
        f.write(struct.pack("<Q", 1 << 40) + b"\0\0\0\0")  # a header with a bad CRC
    with pytest.raises(errors.DataLossError, match="corrupted record at 27"):  # TF's words
        list(ef.summary_iterator(path))


def test_tfrecord_gzip_bomb_is_bounded(tmp_path, monkeypatch):
    path = str(tmp_path / "bomb.tfrecord.gz")
    with tf_record.TFRecordWriter(path, "GZIP") as w:
        w.write(bytes(8 << 20))
    assert os.path.getsize(path) < 100_000
    monkeypatch.setattr(tf_record, "MAX_DECOMPRESSED_BYTES", 1 << 20)
    with pytest.raises(errors.DataLossError, match="expands to more than 1048576 bytes"):
        list(tf_record.tf_record_iterator(path, "GZIP"))


def test_tfrecord_declared_length_beyond_the_file_is_data_loss(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    header = struct.pack("<Q", 1 << 62)
    with open(path, "wb") as f:
        f.write(header + struct.pack("<I", tf_record.masked_crc32c(header)) + b"abc")

    def read():
        with pytest.raises(errors.DataLossError, match="truncated record"):
            list(tf_record.tf_record_iterator(path))
    _bounded(read, peak_bytes=1 << 20)
