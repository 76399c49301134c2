"""Summary ops, the hand-written protobuf/TFRecord encoding, and FileWriter; event files
are checked with TensorBoard's own reader (tensorboard is a test-only dependency)."""

from __future__ import annotations

import bisect
import glob
import os
import struct
import sys
import time
import zlib

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import summary
from flowgraph.framework import errors
from flowgraph.framework.graph import GraphKeys
from flowgraph.summary import event_format as ef
from flowgraph.summary.writer import FileWriter, FileWriterCache

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")


def _run(sess, t, feed=None) -> ef.Summary:
    out = sess.run(t, feed)
    if isinstance(out, np.ndarray):
        assert out.dtype == object and out.shape == ()
        out = out.item()
    assert isinstance(out, bytes)
    return ef.Summary.FromString(out)


def _png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit PNG (every filter type: encode_png filters as libpng does)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == \
            zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    assert depth == 8
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, -1)
    out = np.zeros((height, width * channels), np.int32)
    for r in range(height):
        line, prev = rows[r, 1:].astype(np.int32), out[r - 1] if r else out[r] * 0
        cur = out[r]
        for i in range(width * channels):
            a = cur[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            paeth = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[i] = (line[i] + (0, a, b, (a + b) // 2, paeth)[rows[r, 0]]) & 0xFF
    return out.astype(np.uint8).reshape(height, width, channels)


def _accumulator(logdir):
    acc = ea.EventAccumulator(logdir, size_guidance={ea.SCALARS: 0, ea.IMAGES: 0,
                                                     ea.HISTOGRAMS: 0, ea.TENSORS: 0})
    acc.Reload()
    return acc


# -- scalar ----------------------------------------------------------------------------------
def test_scalar_tags_names_and_collections(sess):
    x = tf.constant(2.5)
    with tf.name_scope("train"):
        a = summary.scalar("loss", x)
        b = summary.scalar("loss", x)
        c = summary.scalar("loss", x, family="fam")
    d = summary.scalar("bad name!", x, collections=["mine"])
    assert (a.name, b.name, c.name) == ("train/loss:0", "train/loss_1:0", "train/fam/loss:0")
    assert a.op.type == "ScalarSummary" and a.dtype == tf.string and a.shape.ndims == 0
    assert tf.get_collection(GraphKeys.SUMMARIES) == [a, b, c]
    assert tf.get_collection("mine") == [d]
    tags = [_run(sess, t).value[0].tag for t in (a, b, c, d)]
    assert tags == ["train/loss", "train/loss_1", "fam/train/fam/loss", "bad_name_"]
    assert _run(sess, a).value[0].simple_value == 2.5


@pytest.mark.parametrize("dtype", [tf.float64, tf.int32, tf.int64, tf.uint8, tf.float16])
def test_scalar_dtypes(sess, dtype):
    s = summary.scalar("v", tf.constant(3, dtype=dtype))
    assert _run(sess, s).value[0].simple_value == 3.0


def test_scalar_errors(sess):
    vec = summary.scalar("v", tf.constant([1.0, 2.0]))  # as TensorFlow: fails when run
    with pytest.raises(errors.InvalidArgumentError, match=r"same shape: \[\] != \[2\]"):
        sess.run(vec)
    with pytest.raises(TypeError, match="string"):
        summary.scalar("v", tf.constant("a"))
    with pytest.raises(TypeError, match="bool"):
        summary.scalar("v", tf.constant(True))
    p = tf.placeholder(tf.float32)  # unknown rank: checked when it runs
    s = summary.scalar("p", p)
    with pytest.raises(errors.InvalidArgumentError, match="same shape"):
        sess.run(s, {p: np.zeros(3, np.float32)})
    assert _run(sess, s, {p: 0.0}).value[0].simple_value == 0.0


# -- histogram ---------------------------------------------------------------------------------
def _reference_limits():
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    return [-x for x in reversed(pos)] + [0.0] + pos


def test_histogram_matches_reference(sess):
    rng = np.random.RandomState(0)
    values = np.concatenate([rng.randn(3, 50) .ravel() * 5, [0.0, 0.0, 1e-14, 1e30, -7.0]])
    h = _run(sess, summary.histogram("w", tf.constant(values))).value[0]
    assert h.tag == "w"
    histo = h.histo
    limits = _reference_limits()
    counts = [0] * len(limits)
    for x in values:
        counts[bisect.bisect_right(limits, x)] += 1
    # expected: runs of empty buckets collapse into the run's last limit
    exp_limits, exp_counts, i = [], [], 0
    while i < len(counts):
        end, c = limits[i], counts[i]
        i += 1
        if c == 0:
            while i < len(counts) and counts[i] == 0:
                end = limits[i]
                i += 1
        exp_limits.append(end)
        exp_counts.append(float(c))
    assert histo.bucket_limit == exp_limits
    assert histo.bucket == exp_counts
    assert (histo.min, histo.max, histo.num) == (values.min(), values.max(), values.size)
    assert histo.sum == pytest.approx(values.sum())
    assert histo.sum_squares == pytest.approx((values ** 2).sum())


def test_histogram_int_empty_and_nan(sess):
    h = _run(sess, summary.histogram("i", tf.constant([1, 1, 2]))).value[0].histo
    assert h.num == 3 and sum(h.bucket) == 3
    empty = _run(sess, summary.histogram("e", tf.zeros([0, 2]))).value[0].histo
    assert empty.num == 0 and empty.min == sys.float_info.max
    assert empty.bucket == [0.0] and empty.bucket_limit == [sys.float_info.max]
    with pytest.raises(errors.InvalidArgumentError, match="Nan in summary histogram for: n"):
        sess.run(summary.histogram("n", tf.constant([1.0, np.nan])))


# -- image --------------------------------------------------------------------------------------
def test_image_uint8_is_exact_and_tags(sess):
    rng = np.random.RandomState(1)
    imgs = rng.randint(0, 256, size=(4, 5, 7, 3)).astype(np.uint8)
    values = _run(sess, summary.image("img", tf.constant(imgs), max_outputs=2)).value
    assert [v.tag for v in values] == ["img/image/0", "img/image/1"]
    for i, v in enumerate(values):
        assert (v.image.height, v.image.width, v.image.colorspace) == (5, 7, 3)
        np.testing.assert_array_equal(_png_pixels(v.image.encoded_image_string), imgs[i])
    one = _run(sess, summary.image("one", tf.constant(imgs[:, :, :, :1]), max_outputs=1))
    assert [v.tag for v in one.value] == ["one/image"]
    assert one.value[0].image.colorspace == 1


def test_image_float_scaling_and_bad_color(sess):
    pos = np.array([[[[0.0], [0.5]], [[1.0], [2.0]]]], np.float32)  # 1x2x2x1, max 2
    v = _run(sess, summary.image("p", tf.constant(pos))).value[0]
    np.testing.assert_array_equal(_png_pixels(v.image.encoded_image_string)[..., 0],
                                  [[0, 63], [127, 255]])
    neg = np.array([[[[-1.0, 0.0, 1.0, 0.5]], [[np.nan, 0.0, 0.0, 0.0]]]], np.float32)
    v = _run(sess, summary.image("n", tf.constant(neg))).value[0]
    px = _png_pixels(v.image.encoded_image_string)
    assert v.image.colorspace == 4
    np.testing.assert_array_equal(px[0, 0], [1, 128, 255, 191])
    np.testing.assert_array_equal(px[1, 0], [255, 0, 0, 255])  # non-finite pixel: red


def test_image_errors(sess):
    # As in TensorFlow, bad image shapes are reported when the summary runs.
    with pytest.raises(errors.InvalidArgumentError, match="4-D"):
        sess.run(summary.image("x", tf.zeros([5, 7, 3])))
    with pytest.raises(errors.InvalidArgumentError, match=r"last dim 1, 3, or 4, not \[1,5,7,2\]"):
        sess.run(summary.image("x", tf.zeros([1, 5, 7, 2])))
    with pytest.raises(TypeError, match="int32"):
        summary.image("x", tf.zeros([1, 5, 7, 3], tf.int32))


def test_image_decodes_with_pillow(sess):
    image_mod = pytest.importorskip("PIL.Image")
    import io

    imgs = np.random.RandomState(2).rand(2, 6, 9, 3).astype(np.float32)
    v = _run(sess, summary.image("x", tf.constant(imgs))).value[1]
    pic = image_mod.open(io.BytesIO(v.image.encoded_image_string))
    assert pic.size == (9, 6) and pic.mode == "RGB"


# -- text / tensor ---------------------------------------------------------------------------------
def test_text_and_tensor_summary(sess):
    t = summary.text("notes", tf.constant(["a", "**b**"]))
    assert t.op.type == "TensorSummaryV2"
    v = _run(sess, t).value[0]
    assert v.tag == "notes" and v.metadata.plugin_data.plugin_name == "text"
    assert v.tensor.dtype == tf.string.as_datatype_enum
    assert v.tensor.string_val == [b"a", b"**b**"]
    assert [d.size for d in v.tensor.tensor_shape.dim] == [2]
    with pytest.raises(ValueError, match="dtype string"):
        summary.text("bad", tf.constant(1.0))
    n = _run(sess, summary.tensor_summary("m", tf.constant([[1, 2, 3]], tf.int64),
                                          summary_description="desc")).value[0]
    assert n.metadata.summary_description == "desc"
    from tensorboard.util import tensor_util

    proto = summary_pb2.Summary.FromString(ef.Summary(value=[n]).SerializeToString())
    np.testing.assert_array_equal(tensor_util.make_ndarray(proto.value[0].tensor),
                                  [[1, 2, 3]])


# -- merge ----------------------------------------------------------------------------------------
def test_merge_and_merge_all(sess):
    assert summary.merge_all() is None
    a = summary.scalar("a", tf.constant(1.0))
    with tf.name_scope("inner"):
        b = summary.histogram("b", tf.constant([1.0]))
    m = summary.merge_all()
    assert m.op.name == "Merge/MergeSummary" and m.op.type == "MergeSummary"
    assert [v.tag for v in _run(sess, m).value] == ["a", "inner/b"]
    only = summary.merge_all(scope="inner")
    assert [v.tag for v in _run(sess, only).value] == ["inner/b"]
    named = summary.merge([a, b], name="merged")
    assert named.op.name == "merged/merged"
    dup = summary.merge([a, a])
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate tag a found"):
        sess.run(dup)
    with pytest.raises(TypeError, match="string"):
        summary.merge([tf.constant(1.0)])


# -- wire format ----------------------------------------------------------------------------------
def test_messages_match_official_protobuf():
    s = ef.Summary()
    s.value.add(tag="a", simple_value=0.0)
    s.value.add(tag="h", histo=ef.HistogramProto(min=-1.0, max=1.0, num=2.0,
                                                 bucket_limit=[0.0, 1.0], bucket=[1.0, 1.0]))
    ev = ef.Event(wall_time=12.5, step=-7, summary=s)
    official = event_pb2.Event.FromString(ev.SerializeToString())
    assert official.step == -7 and official.summary.value[0].HasField("simple_value")
    assert official.SerializeToString() == ev.SerializeToString()
    back = ef.Event.FromString(official.SerializeToString())
    assert back == ev and back.summary.value[1].histo.bucket == [1.0, 1.0]
    log = ef.Event(session_log=ef.SessionLog(status=ef.SessionLog.START))
    assert event_pb2.Event.FromString(log.SerializeToString()).session_log.status == 1


def test_crc32c_and_record_framing(tmp_path):
    assert ef.crc32c(b"123456789") == 0xE3069283
    assert ef.crc32c(b"") == 0
    path = tmp_path / "records"
    path.write_bytes(ef.frame_record(b"abc") + ef.frame_record(b"") + ef.frame_record(b"x"))
    assert list(ef.read_records(str(path))) == [b"abc", b"", b"x"]
    data = bytearray(path.read_bytes())
    data[13] ^= 1  # damage the first record's data
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupt record data"):
        list(ef.read_records(str(path)))


# -- FileWriter ------------------------------------------------------------------------------------
def test_file_writer_end_to_end_with_tensorboard(tmp_path):
    logdir = str(tmp_path / "logs")
    x = tf.placeholder(tf.float32, [], name="x")
    w = tf.Variable(tf.zeros([3, 2]), name="weights")
    with tf.name_scope("train"):
        summary.scalar("loss", x * 2.0)
    summary.histogram("weights", w.value() + x)  # the name scope makes it "weights_1"
    summary.image("pic", tf.fill([2, 4, 6, 1], x) if hasattr(tf, "fill") else
                  tf.zeros([2, 4, 6, 1]) + x)
    summary.text("note", tf.constant("hello"))
    merged = summary.merge_all()
    writer = FileWriter(logdir, graph=tf.get_default_graph(), flush_secs=60)
    with tf.Session() as sess:
        sess.run(w.initializer)
        for step in range(4):
            writer.add_summary(sess.run(merged, {x: float(step) + 1}), global_step=step * 10)
    writer.add_session_log(ef.SessionLog(status=ef.SessionLog.STOP), 40)
    assert writer.get_logdir() == logdir
    writer.close()

    files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    assert len(files) == 1
    host = os.path.basename(files[0]).split(".", 4)[4]
    assert host == __import__("socket").gethostname()
    events = list(ef.summary_iterator(files[0]))
    assert events[0].file_version == "brain.Event:2"

    acc = _accumulator(logdir)
    tags = acc.Tags()
    assert tags["scalars"] == ["train/loss"] and tags["histograms"] == ["weights_1"]
    assert tags["images"] == ["pic/image/0", "pic/image/1"] and tags["graph"]
    scalars = acc.Scalars("train/loss")
    assert [(e.step, e.value) for e in scalars] == [(0, 2.0), (10, 4.0), (20, 6.0), (30, 8.0)]
    histo = acc.Histograms("weights_1")[-1].histogram_value
    assert histo.num == 6 and histo.min == 4.0 and histo.max == 4.0
    img = acc.Images("pic/image/1")[0]
    assert (img.width, img.height) == (6, 4)
    assert _png_pixels(img.encoded_image_string).shape == (4, 6, 1)
    text = acc.Tensors("note")
    assert [t.tensor_proto.string_val[0] for t in text] == [b"hello"] * 4
    # plugin metadata is written with the first value of a tag only
    metas = [v.HasField("metadata") for e in events if e.HasField("summary")
             for v in e.summary.value if v.tag == "note"]
    assert metas == [True, False, False, False]
    graph = acc.Graph()
    nodes = {n.name: n for n in graph.node}
    assert {"x", "weights", "weights/Assign", "train/loss"} <= set(nodes)
    assert nodes["x"].attr["dtype"].type == 1
    assert nodes["weights/Assign"].input == ["weights", "zeros"]  # output 0: no ":0"
    assert [d.size for d in nodes["weights"].attr["_output_shapes"].list.shape[0].dim] == [3, 2]
    assert events[-1].session_log.status == ef.SessionLog.STOP and events[-1].step == 40


def test_background_thread_flushes_every_flush_secs(tmp_path):
    # TensorFlow's writer thread: the first event is flushed at once; later ones when an
    # event is written `flush_secs` after the last flush (an idle writer flushes nothing).
    writer = FileWriter(str(tmp_path), flush_secs=0.1, max_queue=2)
    path = writer.event_writer.path

    def add(step):
        writer.add_summary(ef.Summary(value=[ef.Summary.Value(tag="t", simple_value=step)]),
                           step)

    def on_disk():
        return [e.step for e in ef.summary_iterator(path) if e.HasField("summary")]

    def wait_for(steps):
        deadline = time.time() + 5
        while on_disk() != steps and time.time() < deadline:
            time.sleep(0.02)
        return on_disk()

    for step in range(5):  # more than max_queue: add_summary waits for the thread
        add(step)
    assert wait_for([0]) == [0]
    time.sleep(0.3)
    assert on_disk() == [0]  # idle: still buffered
    add(5)
    assert wait_for([0, 1, 2, 3, 4, 5]) == [0, 1, 2, 3, 4, 5]  # no flush() or close()
    writer.close()


def test_close_reopen_and_suffix(tmp_path):
    writer = FileWriter(str(tmp_path), filename_suffix=".v1")
    first = writer.event_writer.path
    assert first.endswith(".v1")
    writer.close()
    with pytest.warns(UserWarning, match="closed FileWriter"):  # as TensorFlow
        writer.add_summary(ef.Summary(value=[ef.Summary.Value(tag="dropped", simple_value=1)]))
    writer.close()  # closing twice is fine
    writer.reopen()
    second = writer.event_writer.path
    assert second != first and os.path.exists(second)
    writer.add_event(ef.Event(wall_time=1.0, step=3, file_version="custom"))
    writer.add_meta_graph(b"\x0a\x00", global_step=1)
    writer.flush()
    kinds = [e.file_version or ("meta" if e.meta_graph_def else "?")
             for e in ef.summary_iterator(second)]
    assert kinds == ["brain.Event:2", "custom", "meta"]
    assert [e for e in ef.summary_iterator(first) if e.HasField("summary")] == []
    writer.close()


def test_add_graph_errors_and_run_metadata(tmp_path, sess):
    with FileWriter(str(tmp_path)) as writer:
        with pytest.raises(ValueError, match="both"):
            writer.add_graph(tf.get_default_graph(), graph_def={"node": []})
        p = tf.placeholder(tf.float32, [2])
        c = tf.multiply(p, 2.0, name="mul")
        md = tf.RunMetadata()
        sess.run(c, {p: [1.0, 2.0]},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
        writer.add_run_metadata(md, "step1", global_step=1)
        with pytest.raises(ValueError, match="already"):
            writer.add_run_metadata(md, "step1")
        writer.add_graph(None, graph_def=tf.get_default_graph().as_graph_def())
    acc = _accumulator(str(tmp_path))
    assert acc.Tags()["run_metadata"] == ["step1"]
    stats = acc.RunMetadata("step1").step_stats
    assert any(ns.node_name for d in stats.dev_stats for ns in d.node_stats)
    assert "mul" in {n.name for n in acc.Graph().node}


def test_file_writer_cache(tmp_path):
    a = FileWriterCache.get(str(tmp_path))
    assert FileWriterCache.get(str(tmp_path)) is a
    FileWriterCache.clear()
    b = FileWriterCache.get(str(tmp_path))
    assert b is not a
    FileWriterCache.clear()


def test_add_summary_accepts_bytes_message_and_fetched_array(tmp_path, sess):
    s = summary.scalar("v", tf.constant(1.5))
    with FileWriter(str(tmp_path)) as writer:
        writer.add_summary(sess.run(s), 1)  # as fetched by Session.run
        writer.add_summary(np.asarray(sess.run(s), dtype=object), np.int64(2))
        writer.add_summary(ef.Summary(value=[ef.Summary.Value(tag="v", simple_value=3)]), 3)
        with pytest.raises(TypeError):
            writer.add_summary(12)
    assert [(e.step, e.value) for e in _accumulator(str(tmp_path)).Scalars("v")] == \
        [(1, 1.5), (2, 1.5), (3, 3.0)]
