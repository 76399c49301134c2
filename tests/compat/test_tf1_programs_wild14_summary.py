"""TF1 programs that write TensorBoard data, sweep 14 (area ``summary``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): a dense regression logging a loss scalar, a weight
histogram and a ``family`` scalar through ``merge_all`` and a ``FileWriter`` built with the
session graph, read back with ``tf.train.summary_iterator`` (histogram fields and TF's
default bucket limits and counts); image (uint8 and float, ``max_outputs``, ``family``),
audio (mono and stereo), text and ``tensor_summary`` (``summary_description``) merged
under a name and written with ``filename_suffix``; a ``FileWriter`` with ``max_queue`` and
``flush_secs`` writing session logs, traced run metadata, hand-built ``Summary``/``Event``
protos, then closed and reopened, with a summary in a custom collection merged by
``merge_all(key=)``; tags of repeated names, illegal characters, families and towers,
hand-built protos (``Summary``, ``HistogramProto``, ``Summary.Image``, ``Event``,
``SummaryDescription``) compared byte for byte, and ``FileWriterCache``; the TF
tutorial's ``mnist_with_summaries`` (``variable_summaries``, ``nn_layer``) trained under
``MonitoredTrainingSession`` with a ``SummarySaverHook``; ``tf.contrib.summary`` (TF 1.x:
``create_file_writer``, ``always_record_summaries``,
``record_summaries_every_n_global_steps``, ``never_record_summaries``,
``all_summary_ops``, ``summary_writer_initializer_op``, then ``image``, ``audio``,
``generic``, ``import_event``, an explicit ``step`` and ``initialize``, settled against
TF 2.15's ``summary_ops_v2``, which keeps that API); text tables, merged merges, ``collections=``,
``add_graph``/``add_meta_graph`` events and ``summary_iterator`` on bad files; and the
histograms of mixed-sign, integer, uint8 and constant tensors; tags under reused
variable scopes, ``tf.cond`` branches and devices; and an ``Estimator``'s train and eval
event files (``global_step/sec``, model_fn summaries, eval metrics). Files written by each
side were read by the other's ``summary_iterator`` with the same records.

Left as is: ``FileWriter.reopen()`` within the same second as the writer's creation makes
TensorFlow open the same file name again and truncate the first file (its events are
lost); flowgraph starts a second file (``events...{host}.{pid}.{n}``) and keeps them.
TensorFlow flushes float32 subnormals to zero (``summary.scalar`` of ``1e-40`` as float64
reads back ``0.0``); flowgraph keeps ``~1e-40``. Reading a variable in the same
``Session.run`` as its update is unordered in TensorFlow (its histogram at a step may show
the updated value); the programs fetch summaries before the train step.

Classes of discrepancy found and fixed (one focused test each below):

* Summary ops checked shapes while the graph was built: ``summary.scalar`` of a
  non-scalar raised ValueError, ``summary.image`` of a non-4-D tensor or 2 channels and
  ``summary.audio`` of a 4-D tensor raised shape errors. TensorFlow builds them and fails
  when they run, with InvalidArgumentError ("tags and values are not the same shape:
  [] != [2] (tag 'vec')", "Tensor must be 4-D with last dim 1, 3, or 4, not [2,3]",
  "Tensor must be 3-D or 2-D, got: [2,3,4,5]").
* A histogram of an infinite value said "Nan in summary histogram"; TensorFlow reports
  the first non-finite value: "Infinity in Histogram for: h" for an infinity.
* ``tensor_summary``/``text`` values had no ``metadata`` field when the metadata was
  empty; TensorFlow always writes it (an empty message), so the bytes differed.
* ``FileWriter`` used after ``close()`` dropped events silently; TensorFlow warns
  "Attempting to use a closed FileWriter..." (UserWarning) on add_*/flush.
* ``add_graph(None, graph_def=gd)`` re-serialized the graph with ``_output_shapes``;
  TensorFlow writes the given GraphDef as it is. ``add_meta_graph`` of a non-message
  raises TypeError "meta_graph_def must be type MetaGraphDef, saw type: ...".
* ``tf.train.summary_iterator`` raised FileNotFoundError for a missing file, ended
  silently at a truncated record and raised a DecodeError for a damaged one; TensorFlow
  raises NotFoundError, and DataLossError "truncated record at 0" / "corrupted record at
  12".
"""

from __future__ import annotations

import glob
import os
import warnings

import numpy as np
import pytest

import flowgraph as tf

MAX = 1.7976931348623157e308


def _events(path):
    """The records of an event file as plain lists (wall_time only checked present)."""
    out = []
    for e in tf.train.summary_iterator(path):
        kind = e.WhichOneof("what")
        rec = [e.step, e.wall_time > 0, kind]
        if kind == "file_version":
            rec.append(e.file_version)
        elif kind == "summary":
            for v in e.summary.value:
                k = v.WhichOneof("value")
                item = [v.tag, k, v.metadata.plugin_data.plugin_name]
                if k == "simple_value":
                    item.append(round(v.simple_value, 4))
                elif k == "histo":
                    h = v.histo
                    item += [round(h.min, 4), round(h.max, 4), h.num, round(h.sum, 4),
                             round(h.sum_squares, 4), [round(x, 4) for x in h.bucket_limit],
                             list(h.bucket)]
                elif k == "image":
                    item += [v.image.height, v.image.width, v.image.colorspace,
                             len(v.image.encoded_image_string) > 0]
                elif k == "audio":
                    item += [v.audio.sample_rate, v.audio.num_channels,
                             v.audio.length_frames, v.audio.content_type]
                elif k == "tensor":
                    item += [v.tensor.dtype, [d.size for d in v.tensor.tensor_shape.dim]]
                rec.append(item)
        out.append(rec)
    return out


def _only_file(logdir):
    files = sorted(f for f in glob.glob(os.path.join(logdir, "*")) if os.path.isfile(f))
    assert len(files) == 1
    assert os.path.basename(files[0]).startswith("events.out.tfevents.")
    return files[0]


# -- program 1: dense regression with merge_all and a graph ------------------------------------
def test_dense_regression_scalars_histogram_family_and_graph_events(tmp_path):
    logdir = str(tmp_path / "run1")
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("dense"):
        w = tf.get_variable("w", [4, 1],
                            initializer=tf.truncated_normal_initializer(stddev=0.1))
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        pred = tf.matmul(x, w) + b
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.square(pred - y))
        s_loss = tf.summary.scalar("mse", loss)
    with tf.name_scope("weights"):
        s_w = tf.summary.histogram("w_hist", w)
        s_b = tf.summary.scalar("bias", tf.reduce_sum(b), family="params")
    assert [s_loss.name, s_w.name, s_b.name] == [
        "loss/mse:0", "weights/w_hist:0", "weights/params/bias:0"]
    assert (s_loss.op.type, s_w.op.type, s_loss.dtype, s_loss.shape.as_list()) == (
        "ScalarSummary", "HistogramSummary", tf.string, [])
    merged = tf.summary.merge_all()
    assert (merged.name, merged.op.type) == ("Merge/MergeSummary:0", "MergeSummary")
    assert [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)] == [
        "loss/mse:0", "weights/w_hist:0", "weights/params/bias:0"]
    gs = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    rng = np.random.RandomState(0)
    X = rng.randn(16, 4).astype(np.float32)
    Y = X.sum(1, keepdims=True).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        writer = tf.summary.FileWriter(logdir, sess.graph)
        assert type(writer).__name__ == "FileWriter" and writer.get_logdir() == logdir
        for _ in range(3):
            s, step = sess.run([merged, gs], {x: X, y: Y})
            writer.add_summary(s, global_step=step)
            sess.run(train, {x: X, y: Y})
        writer.flush()
        writer.close()
    ev = _events(_only_file(logdir))
    assert ev[:3] == [[0, True, "file_version", "brain.Event:2"], [0, True, "graph_def"],
                      [0, True, "meta_graph_def"]]
    assert ev[3:] == [
        [0, True, "summary", ["loss/mse", "simple_value", "", 5.481],
         ["weights/w_hist", "histo", "", 0.0233, 0.0567, 4.0, 0.1524, 0.0064,
          [0.0223, 0.0245, 0.0297, 0.0326, 0.0395, 0.0434, 0.0526, 0.0578, MAX],
          [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]],
         ["params/weights/params/bias", "simple_value", "", 0.0]],
        [1, True, "summary", ["loss/mse", "simple_value", "", 2.3747],
         ["weights/w_hist", "histo", "", 0.2135, 0.5263, 4.0, 1.2905, 0.4744,
          [0.1996, 0.2196, 0.2415, 0.2657, 0.2923, 0.5178, 0.5695, MAX],
          [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]],
         ["params/weights/params/bias", "simple_value", "", 0.0143]],
        [2, True, "summary", ["loss/mse", "simple_value", "", 1.1575],
         ["weights/w_hist", "histo", "", 0.3603, 0.804, 4.0, 2.0298, 1.1517,
          [0.3536, 0.389, 0.4279, 0.4707, 0.7581, 0.8339, MAX],
          [0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0]],
         ["params/weights/params/bias", "simple_value", "", 0.0142]]]


# -- program 2: images, audio, text and tensors --------------------------------------------------
def test_image_audio_text_and_tensor_summaries_merged_with_a_suffix(tmp_path):
    logdir = str(tmp_path / "viz")
    imgs = tf.placeholder(tf.float32, [None, 8, 8, 1], name="imgs")
    rgb = tf.placeholder(tf.uint8, [None, 4, 6, 3], name="rgb")
    wav = tf.placeholder(tf.float32, [None, 100], name="wav")
    wav2 = tf.placeholder(tf.float32, [None, 50, 2], name="wav2")
    txt = tf.placeholder(tf.string, [], name="txt")
    with tf.name_scope("viz"):
        si = tf.summary.image("inputs", imgs, max_outputs=2)
        sr = tf.summary.image("rgb", rgb, max_outputs=5, family="pics")
        sa = tf.summary.audio("clip", wav, sample_rate=16000, max_outputs=1)
        sa2 = tf.summary.audio("stereo", wav2, 8000)
        st = tf.summary.text("note", txt)
        stt = tf.summary.tensor_summary("tens", tf.reshape(tf.range(6, dtype=tf.float32),
                                                           [2, 3]))
        stt2 = tf.summary.tensor_summary("tens_int", tf.constant([1, 2, 3]),
                                         summary_description="a desc")
    outs = [si, sr, sa, sa2, st, stt, stt2]
    assert [(s.name, s.op.type) for s in outs] == [
        ("viz/inputs:0", "ImageSummary"), ("viz/pics/rgb:0", "ImageSummary"),
        ("viz/clip:0", "AudioSummaryV2"), ("viz/stereo:0", "AudioSummaryV2"),
        ("viz/note:0", "TensorSummaryV2"), ("viz/tens:0", "TensorSummaryV2"),
        ("viz/tens_int:0", "TensorSummaryV2")]
    merged = tf.summary.merge(outs, name="all_viz")
    assert merged.name == "all_viz/all_viz:0"
    rng = np.random.RandomState(1)
    feed = {imgs: rng.rand(3, 8, 8, 1), rgb: rng.randint(0, 255, (2, 4, 6, 3)).astype(np.uint8),
            wav: rng.uniform(-1, 1, (2, 100)), wav2: rng.uniform(-1, 1, (3, 50, 2)),
            txt: "hello **world**"}
    with tf.Session() as sess:
        w = tf.summary.FileWriter(logdir, filename_suffix=".viz")
        out = sess.run(merged, feed)
        w.add_summary(out, 7)
        w.close()
    summ = tf.Summary.FromString(out)
    assert [(v.tag, v.metadata.plugin_data.plugin_name, v.metadata.summary_description)
            for v in summ.value if v.HasField("metadata")] == [
        ("viz/note", "text", ""), ("viz/tens", "", ""), ("viz/tens_int", "", "a desc")]
    np.testing.assert_array_equal(tf.make_ndarray(summ.value[-2].tensor),
                                  [[0., 1., 2.], [3., 4., 5.]])
    assert summ.value[-3].tensor.string_val == [b"hello **world**"]
    path = _only_file(logdir)
    assert path.endswith(".viz")
    assert _events(path) == [
        [0, True, "file_version", "brain.Event:2"],
        [7, True, "summary", ["viz/inputs/image/0", "image", "", 8, 8, 1, True],
         ["viz/inputs/image/1", "image", "", 8, 8, 1, True],
         ["pics/viz/pics/rgb/image/0", "image", "", 4, 6, 3, True],
         ["pics/viz/pics/rgb/image/1", "image", "", 4, 6, 3, True],
         ["viz/clip/audio", "audio", "", 16000.0, 1, 100, "audio/wav"],
         ["viz/stereo/audio/0", "audio", "", 8000.0, 2, 50, "audio/wav"],
         ["viz/stereo/audio/1", "audio", "", 8000.0, 2, 50, "audio/wav"],
         ["viz/stereo/audio/2", "audio", "", 8000.0, 2, 50, "audio/wav"],
         ["viz/note", "tensor", "text", 7, []], ["viz/tens", "tensor", "", 1, [2, 3]],
         ["viz/tens_int", "tensor", "", 3, [3]]]]


# -- program 3: FileWriter records, custom collection, close and reopen ------------------------
def _plain(path):
    out = []
    for e in tf.train.summary_iterator(path):
        k = e.WhichOneof("what")
        extra = None
        if k == "session_log":
            extra = (e.session_log.status, e.session_log.checkpoint_path, e.session_log.msg)
        elif k == "tagged_run_metadata":
            extra = (e.tagged_run_metadata.tag, len(e.tagged_run_metadata.run_metadata) > 0)
        elif k == "summary":
            extra = [(v.tag, v.simple_value) for v in e.summary.value]
        elif k == "file_version":
            extra = e.file_version
        out.append((e.step, k, extra, e.wall_time == 123.0))
    return out


def test_file_writer_session_logs_run_metadata_protos_and_reopen(tmp_path):
    logdir = str(tmp_path / "fw")
    a = tf.Variable(3.0, name="a")
    b = tf.assign_add(a, 1.5, name="inc")
    tf.summary.scalar("a_val", a, collections=["custom"])
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == []
    assert [t.name for t in tf.get_collection("custom")] == ["a_val:0"]
    assert tf.summary.merge_all() is None
    m = tf.summary.merge_all(key="custom")
    assert (m.name, m.op.type) == ("Merge/MergeSummary:0", "MergeSummary")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = tf.summary.FileWriter(logdir, max_queue=2, flush_secs=1000)
        w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), global_step=0)
        for step in range(3):
            md = tf.RunMetadata()
            sv, _ = sess.run([m, b], options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
            w.add_run_metadata(md, f"step{step}", global_step=step)
            w.add_summary(sv, step)
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="manual/acc",
                                                         simple_value=0.75)]), 10)
        w.add_event(tf.Event(step=11, wall_time=123.0, summary=tf.Summary(
            value=[tf.Summary.Value(tag="ev", simple_value=2)])))
        w.add_session_log(tf.SessionLog(status=tf.SessionLog.CHECKPOINT,
                                        checkpoint_path="/x/model.ckpt", msg="ck"), 12)
        w.close()
        with pytest.warns(UserWarning, match="closed FileWriter"):
            w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="after_close",
                                                             simple_value=1.0)]), 13)
        w.reopen()
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="reopened",
                                                         simple_value=1.0)]), 14)
        w.close()
    files = sorted(glob.glob(os.path.join(logdir, "*")))
    assert _plain(files[0]) == [
        (0, "file_version", "brain.Event:2", False), (0, "session_log", (1, "", ""), False),
        (0, "tagged_run_metadata", ("step0", True), False),
        (0, "summary", [("a_val", 4.5)], False),
        (1, "tagged_run_metadata", ("step1", True), False),
        (1, "summary", [("a_val", 6.0)], False),
        (2, "tagged_run_metadata", ("step2", True), False),
        (2, "summary", [("a_val", 7.5)], False),
        (10, "summary", [("manual/acc", 0.75)], False), (11, "summary", [("ev", 2.0)], True),
        (12, "session_log", (3, "/x/model.ckpt", "ck"), False)]
    # TensorFlow (same second) truncates the first file and keeps only this one.
    assert _plain(files[-1]) == [(0, "file_version", "brain.Event:2", False),
                                 (14, "summary", [("reopened", 1.0)], False)]


# -- program 4: tags, families and towers --------------------------------------------------------
def test_summary_tags_of_repeated_illegal_and_family_names():
    x = tf.placeholder(tf.float32, [None], name="x")
    s1 = tf.summary.scalar("loss", tf.reduce_mean(x))
    s2 = tf.summary.scalar("loss", tf.reduce_max(x))
    s3 = tf.summary.scalar("bad name!?", tf.reduce_min(x))
    h = tf.summary.histogram("h", x)
    with tf.name_scope("tower_0"):
        s5 = tf.summary.scalar("loss", tf.reduce_sum(x))
        s6 = tf.summary.scalar("loss", tf.reduce_sum(x), family="fam")
        s7 = tf.summary.scalar("loss", tf.reduce_sum(x), family="fam")
    assert [t.name for t in [s1, s2, s3, h, s5, s6, s7]] == [
        "loss:0", "loss_1:0", "bad_name__:0", "h:0", "tower_0/loss:0", "tower_0/fam/loss:0",
        "tower_0/fam/loss_1:0"]
    dup = tf.summary.merge([s1, s2])
    with tf.Session() as sess:
        got = [[(v.tag, v.simple_value) for v in tf.Summary.FromString(
            sess.run(t, {x: [1., 2., 3.]})).value] for t in [s1, s2, s3, s5, s6, s7]]
        assert got == [[("loss", 2.0)], [("loss_1", 3.0)], [("bad_name__", 1.0)],
                       [("tower_0/loss", 6.0)], [("fam/tower_0/fam/loss", 6.0)],
                       [("fam/tower_0/fam/loss_1", 6.0)]]
        assert sess.run(dup, {x: [1., 2.]}) == (
            b"\n\x0b\n\x04loss\x15\x00\x00\xc0?\n\r\n\x06loss_1\x15\x00\x00\x00@")
        empty = tf.Summary.FromString(sess.run(h, {x: []})).value[0].histo
        assert (empty.min, empty.max, empty.num, list(empty.bucket_limit),
                list(empty.bucket)) == (MAX, -MAX, 0.0, [MAX], [0.0])
    with pytest.raises(ValueError):
        tf.summary.merge([])
    with pytest.raises(TypeError, match="DataType string not in list of allowed values"):
        tf.summary.scalar("s", "abc")


def test_hand_built_protos_serialize_as_tensorflow():
    s = tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.5),
                          tf.Summary.Value(tag="lr", simple_value=1e-3)])
    assert (len(s.value), s.value[1].tag, round(s.value[1].simple_value, 6)) == (2, "lr", 0.001)
    v = s.value.add()
    v.tag = "third"
    v.simple_value = 3
    assert str(s).count("tag") == 3 and len(s.SerializeToString()) == 37
    assert s.SerializeToString().hex() == (
        "0a0a0a03616363150000003f0a090a026c72156f12833a0a0c0a0574686972641500004040")
    d = tf.summary.SummaryDescription(type_hint="image")
    assert (d.type_hint, d.SerializeToString()) == ("image", b"\n\x05image")
    hp = tf.HistogramProto(min=0, max=1, num=2, sum=1, sum_squares=1, bucket_limit=[0.5, 1.0],
                           bucket=[1, 1])
    assert tf.Summary(value=[tf.Summary.Value(tag="hand_h", histo=hp)]).SerializeToString(
    ).hex() == ("0a520a0668616e645f682a4811000000000000f03f19000000000000004021000000000000f0"
                "3f29000000000000f03f3210000000000000e03f000000000000f03f3a10000000000000f03f0"
                "00000000000f03f")
    img = tf.Summary.Image(height=2, width=3, colorspace=1, encoded_image_string=b"xx")
    assert tf.Summary(value=[tf.Summary.Value(tag="im", image=img)]).SerializeToString(
    ).hex() == "0a100a02696d220a08021003180122027878"
    ev = tf.Event(step=3, wall_time=1.5, summary=s)
    assert ev.SerializeToString().hex() == (
        "09000000000000f83f10032a250a0a0a03616363150000003f0a090a026c72156f12833a0a0c0a0574"
        "686972641500004040")


def test_file_writer_cache_shares_one_writer_with_the_graph(tmp_path):
    logdir = str(tmp_path / "cache")
    tf.constant(1.0, name="c")
    w = tf.summary.FileWriterCache.get(logdir)
    assert w is tf.summary.FileWriterCache.get(logdir) and type(w).__name__ == "FileWriter"
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.5)]), 5)
    w.flush()
    tf.summary.FileWriterCache.clear()
    assert [(e.step, e.WhichOneof("what")) for e in tf.train.summary_iterator(
        _only_file(logdir))] == [(0, "file_version"), (0, "graph_def"),
                                 (0, "meta_graph_def"), (5, "summary")]


# -- program 5: mnist_with_summaries under MonitoredTrainingSession -----------------------------
def _variable_summaries(var):
    with tf.name_scope("summaries"):
        mean = tf.reduce_mean(var)
        tf.summary.scalar("mean", mean)
        with tf.name_scope("stddev"):
            stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
        tf.summary.scalar("stddev", stddev)
        tf.summary.scalar("max", tf.reduce_max(var))
        tf.summary.scalar("min", tf.reduce_min(var))
        tf.summary.histogram("histogram", var)


def _nn_layer(inp, input_dim, output_dim, layer_name, act=tf.nn.relu):
    with tf.name_scope(layer_name):
        with tf.name_scope("weights"):
            weights = tf.Variable(tf.truncated_normal([input_dim, output_dim], stddev=0.1,
                                                      seed=3))
            _variable_summaries(weights)
        with tf.name_scope("biases"):
            biases = tf.Variable(tf.constant(0.1, shape=[output_dim]))
            _variable_summaries(biases)
        with tf.name_scope("Wx_plus_b"):
            pre = tf.matmul(inp, weights) + biases
            tf.summary.histogram("pre_activations", pre)
        out = act(pre, name="activation")
        tf.summary.histogram("activations", out)
        return out


def test_mnist_with_summaries_tutorial_and_summary_saver_hook(tmp_path):
    logdir = str(tmp_path / "mnist")
    tf.set_random_seed(5)
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, 6], name="x-input")
        y_ = tf.placeholder(tf.int64, [None], name="y-input")
    y = _nn_layer(_nn_layer(x, 6, 5, "layer1"), 5, 3, "layer2", act=tf.identity)
    with tf.name_scope("cross_entropy"):
        xent = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
    tf.summary.scalar("cross_entropy", xent)
    gs = tf.train.get_or_create_global_step()
    with tf.name_scope("train"):
        train_step = tf.train.AdamOptimizer(0.01).minimize(xent, global_step=gs)
    names = sorted(t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES))
    assert len(names) == 25 and names[:4] == [
        "cross_entropy_1:0", "layer1/Wx_plus_b/pre_activations:0", "layer1/activations:0",
        "layer1/biases/summaries/histogram:0"]
    assert "layer1/weights/summaries/stddev_1:0" in names
    assert tf.summary.merge_all(scope="layer2").op.inputs[0].name == (
        "layer2/weights/summaries/mean_1:0")
    assert len(tf.summary.merge_all(scope="layer1").op.inputs) == 12
    rng = np.random.RandomState(0)
    X, Y = rng.randn(20, 6).astype(np.float32), rng.randint(0, 3, 20)
    hook = tf.train.SummarySaverHook(save_steps=2, output_dir=logdir,
                                     summary_op=tf.summary.merge_all())
    with tf.train.MonitoredTrainingSession(hooks=[hook], save_summaries_steps=None,
                                           save_checkpoint_secs=None) as sess:
        for _ in range(5):
            _, loss = sess.run([train_step, xent], {x: X, y_: Y})
    assert round(float(loss), 5) == 1.05974
    got = []
    for e in tf.train.summary_iterator(_only_file(logdir)):
        k = e.WhichOneof("what")
        if k == "summary":
            got.append((e.step, len(e.summary.value), [
                (v.tag, round(v.simple_value, 4)) if v.WhichOneof("value") == "simple_value"
                else (v.tag, v.histo.num, len(v.histo.bucket)) for v in e.summary.value][:5]))
        else:
            got.append((e.step, k, e.session_log.status if k == "session_log" else None))
    assert got == [
        (0, "file_version", None), (0, "graph_def", None), (0, "meta_graph_def", None),
        (1, "session_log", 1),
        (1, 25, [("layer1/weights/summaries/mean_1", 0.0172),
                 ("layer1/weights/summaries/stddev_1", 0.0903),
                 ("layer1/weights/summaries/max_1", 0.1964),
                 ("layer1/weights/summaries/min_1", -0.176),
                 ("layer1/weights/summaries/histogram", 30.0, 40)]),
        (3, 25, [("layer1/weights/summaries/mean_1", 0.0181),
                 ("layer1/weights/summaries/stddev_1", 0.0964),
                 ("layer1/weights/summaries/max_1", 0.1831),
                 ("layer1/weights/summaries/min_1", -0.196),
                 ("layer1/weights/summaries/histogram", 30.0, 37)]),
        (5, 25, [("layer1/weights/summaries/mean_1", 0.0187),
                 ("layer1/weights/summaries/stddev_1", 0.1041),
                 ("layer1/weights/summaries/max_1", 0.2031),
                 ("layer1/weights/summaries/min_1", -0.2161),
                 ("layer1/weights/summaries/histogram", 30.0, 39)])]


# -- program 6: tf.contrib.summary (TF 1.x) -----------------------------------------------------
def test_contrib_summary_recording_modes_and_all_summary_ops(tmp_path):
    cs = tf.contrib.summary
    logdir = str(tmp_path / "v2")
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.5))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    writer = cs.create_file_writer(logdir, flush_millis=10000, filename_suffix=".v2")
    with writer.as_default(), cs.always_record_summaries():
        with tf.name_scope("metrics"):
            s1 = cs.scalar("loss", loss)
            s2 = cs.histogram("w", w, family="weights")
    with writer.as_default(), cs.record_summaries_every_n_global_steps(2):
        s3 = cs.scalar("sparse_loss", loss)
    with writer.as_default(), cs.never_record_summaries():
        s4 = cs.scalar("never", loss)
    s5 = cs.scalar("no_writer", loss)
    assert [(s.name, s.op.type, s.dtype) for s in [s1, s2, s3, s4]] == [
        ("metrics/loss/Const:0", "Const", tf.bool),
        ("metrics/weights/w/Const:0", "Const", tf.bool), ("Merge:0", "Merge", tf.bool),
        ("Const_3:0", "Const", tf.bool)]
    assert (s5.name, s5.type) == ("NoOp", "NoOp")
    assert [o.name for o in cs.all_summary_ops()] == [
        "metrics/loss/Const:0", "metrics/weights/w/Const:0", "Merge:0", "Const_3:0"]
    init_ops = cs.summary_writer_initializer_op()
    assert [(o.name, o.type) for o in init_ops] == [
        ("CreateSummaryFileWriter", "CreateSummaryFileWriter")]
    X = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    recorded = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_ops)
        for _ in range(4):
            recorded.append([bool(r) for r in sess.run(cs.all_summary_ops(), {x: X})])
            sess.run(train, {x: X})
        sess.run(writer.flush())
    assert recorded == [[True, True, True, False], [True, True, False, False],
                        [True, True, True, False], [True, True, False, False]]
    files = sorted(glob.glob(os.path.join(logdir, "*")))
    assert len(files) == 1 and files[0].endswith(".v2")
    got = []
    for e in tf.train.summary_iterator(files[0]):
        if e.WhichOneof("what") == "summary":
            v = e.summary.value[0]
            val = (round(v.simple_value, 4) if v.WhichOneof("value") == "simple_value"
                   else (v.histo.num, round(v.histo.sum, 4), len(v.histo.bucket)))
            got.append((e.step, v.tag, val))
        else:
            assert e.file_version == "brain.Event:2"
    # Within a step the records' order is not fixed in TensorFlow.
    assert sorted(got) == sorted([
        (0, "weights/metrics/weights/w", (3.0, 1.5, 3)), (0, "sparse_loss", 0.2812),
        (0, "metrics/loss", 0.2812), (1, "metrics/loss", 0.2739),
        (1, "weights/metrics/weights/w", (3.0, 1.5375, 4)), (2, "metrics/loss", 0.2682),
        (2, "weights/metrics/weights/w", (3.0, 1.5686, 4)), (2, "sparse_loss", 0.2682),
        (3, "metrics/loss", 0.2637), (3, "weights/metrics/weights/w", (3.0, 1.5944, 4))])


# -- program 7: text tables, merged merges, graph events ------------------------------------------
def test_text_tables_merged_merges_collections_and_graph_events(tmp_path):
    logdir = str(tmp_path / "g")
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(2.0, name="a")
        b = tf.multiply(a, 3.0, name="b")
        t1 = tf.summary.text("words", tf.constant(["alpha", "beta"]))
        t2 = tf.summary.text("table", tf.constant([["a", "b"], ["c", "d"]]))
        with pytest.raises(ValueError, match="string"):
            tf.summary.text("bad", tf.constant(3))
        ts = tf.summary.tensor_summary("ts", b, family="fam", collections=["mine"])
        m1 = tf.summary.merge([t1, t2], collections=["merged_coll"], name="texts")
        m2 = tf.summary.merge([m1, ts])
        assert (m1.name, m2.name) == ("texts/texts:0", "Merge/MergeSummary:0")
        assert [t.name for t in tf.get_collection("merged_coll")] == ["texts/texts:0"]
        assert [t.name for t in tf.get_collection("mine")] == ["fam/ts:0"]
        assert tf.summary.merge_all(key="nothing") is None
        with tf.Session() as sess:
            pb = tf.Summary.FromString(sess.run(m2))
    assert [(v.tag, v.metadata.plugin_data.plugin_name, v.tensor.dtype,
             [d.size for d in v.tensor.tensor_shape.dim], list(v.tensor.string_val),
             v.tensor.tensor_content) for v in pb.value] == [
        ("words", "text", 7, [2], [b"alpha", b"beta"], b""),
        ("table", "text", 7, [2, 2], [b"a", b"b", b"c", b"d"], b""),
        ("fam/fam/ts", "", 1, [], [], b"\x00\x00\xc0@")]
    w = tf.summary.FileWriter(logdir, graph=g, filename_suffix="_g")
    with pytest.raises(ValueError, match="only graph, or graph_def"):
        w.add_graph(g, graph_def=g.as_graph_def())
    w.add_graph(g, global_step=4)
    w.add_graph(None, graph_def=g.as_graph_def(), global_step=5)
    w.add_meta_graph(tf.train.export_meta_graph(graph=g), global_step=6)
    w.close()
    path = _only_file(logdir)
    assert path.endswith("_g")
    nodes = ["a", "b/y", "b", "Const", "words/tag", "words/serialized_summary_metadata",
             "words", "Const_1", "table/tag", "table/serialized_summary_metadata", "table",
             "Const_2", "fam/ts/tag", "fam/ts/serialized_summary_metadata", "fam/ts",
             "texts/texts", "Merge/MergeSummary"]
    got = []
    for e in tf.train.summary_iterator(path):
        k = e.WhichOneof("what")
        if k == "graph_def":
            gd = tf.GraphDef.FromString(e.graph_def)
            assert [n.name for n in gd.node] == nodes
            got.append((e.step, k, "_output_shapes" in gd.node[0].attr))
        elif k == "meta_graph_def":
            mg = tf.MetaGraphDef.FromString(e.meta_graph_def)
            assert [n.name for n in mg.graph_def.node] == nodes
            got.append((e.step, k, sorted(mg.collection_def.keys())))
        else:
            got.append((e.step, k))
    assert got == [(0, "file_version"), (0, "graph_def", True), (0, "meta_graph_def", []),
                   (4, "graph_def", True), (5, "graph_def", False),
                   (6, "meta_graph_def", ["merged_coll", "mine", "summaries"])]


# -- program 8: the default histogram buckets ------------------------------------------------------
def test_default_histogram_buckets_of_mixed_integer_and_constant_tensors():
    rng = np.random.RandomState(3)
    vals = {
        "mixed": np.array([-3.5, -1e-13, 0.0, 0.0, 1e-13, 2e-12, 0.5, 1.0, 1.1, 7.25, 1e21],
                          np.float32),
        "normal": rng.randn(50).astype(np.float64),
        "ints": np.array([0, 1, 2, 3, 100, -5], np.int64),
        "u8": np.array([0, 255, 17], np.uint8),
        "const": np.full(5, 0.3, np.float32),
    }
    sums = {k: tf.summary.histogram(k, tf.constant(v)) for k, v in vals.items()}
    got = {}
    with tf.Session() as sess:
        for k, s in sums.items():
            h = tf.Summary.FromString(sess.run(s)).value[0].histo
            got[k] = (h.min, h.max, h.num, round(h.sum, 6), round(h.sum_squares, 4),
                      [float(f"{x:.6g}") for x in h.bucket_limit], list(h.bucket))
    assert got["mixed"] == (
        -3.5, 1.0000000200408773e21, 11.0, 1.0000000200408773e21, 1.0000000400817551e42,
        [-3.83157, -3.48324, -1e-12, 0.0, 1e-12, 1.94872e-12, 2.14359e-12, 0.470692, 0.517762,
         0.917246, 1.00897, 1.10987, 6.78785, 7.46664, 9.92078e19, 1.79769e308],
        [0.0, 1.0, 0.0, 1.0, 3.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    assert got["ints"] == (
        -5.0, 100.0, 6.0, 101.0, 10039.0,
        [-5.09981, -4.63619, 0.0, 1e-12, 0.917246, 1.00897, 1.9662, 2.16282, 2.87871, 3.16658,
         97.8876, 107.676, 1.79769e308],
        [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    assert got["u8"] == (0.0, 255.0, 3.0, 272.0, 65314.0,
                         [0.0, 1e-12, 16.0054, 17.6059, 253.895, 279.285, 1.79769e308],
                         [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    assert got["const"] == (0.30000001192092896, 0.30000001192092896, 5.0, 1.5, 0.45,
                            [0.292263, 0.321489, 1.79769e308], [0.0, 5.0, 0.0])
    normal = got["normal"]
    assert normal[:5] == (-2.4190831731786697, 1.9761107831263025, 50.0, -14.696341, 54.1663)
    assert len(normal[5]) == 60 and normal[5][:4] == [-2.61701, -2.3791, -2.16282, -1.9662]
    assert normal[6][:12] == [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 2.0, 0.0, 2.0, 1.0, 3.0, 1.0]
    assert sum(normal[6]) == 50.0 and normal[6][-4:] == [1.0, 1.0, 1.0, 0.0]


# -- focused tests of the fixed classes ----------------------------------------------------------
def _run_error(sess, t):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(t)
    return info.value.message


def test_summary_shape_checks_are_left_to_run_time():
    # TensorFlow builds these summaries (scalar string outputs) and fails when they run.
    ts = [tf.summary.image("im", tf.zeros([2, 3])),
          tf.summary.image("im2", tf.zeros([1, 4, 4, 2])),
          tf.summary.audio("au", tf.zeros([2, 3, 4, 5]), 8000),
          tf.summary.scalar("c", tf.zeros([2])),
          tf.summary.scalar("c2", tf.zeros([])[None])]
    assert [(t.name, t.shape.as_list()) for t in ts] == [
        ("im:0", []), ("im2:0", []), ("au:0", []), ("c:0", []), ("c2:0", [])]
    with tf.Session() as sess:
        msgs = [_run_error(sess, t) for t in ts]
    assert "Tensor must be 4-D with last dim 1, 3, or 4, not [2,3]" in msgs[0]
    assert "Tensor must be 4-D with last dim 1, 3, or 4, not [1,4,4,2]" in msgs[1]
    assert "Tensor must be 3-D or 2-D, got: [2,3,4,5]" in msgs[2]
    assert "tags and values are not the same shape: [] != [2] (tag 'c')" in msgs[3]
    assert "tags and values are not the same shape: [] != [1] (tag 'c2')" in msgs[4]


def test_histogram_names_the_first_non_finite_value():
    h = tf.summary.histogram("h", tf.constant([1., np.inf, np.nan]))
    h2 = tf.summary.histogram("h2", tf.constant([np.nan, np.inf]))
    with tf.Session() as sess:
        assert "Infinity in Histogram for: h" in _run_error(sess, h)
        assert "Nan in summary histogram for: h2" in _run_error(sess, h2)


def test_tensor_summary_values_carry_an_empty_metadata_field():
    t = tf.summary.tensor_summary("t", tf.constant([1.]))
    with tf.Session() as sess:
        out = sess.run(t)
    assert out.hex() == "0a150a0174420e080112041202080122040000803f4a00"  # TensorFlow's
    assert tf.Summary.FromString(out).value[0].HasField("metadata")


def test_a_closed_file_writer_warns_until_reopened(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path))
    w.close()
    for call in (lambda: w.add_summary(tf.Summary(), 1), lambda: w.flush(),
                 lambda: w.add_event(tf.Event(step=2)),
                 lambda: w.add_session_log(tf.SessionLog(status=tf.SessionLog.START))):
        with pytest.warns(UserWarning, match="Attempting to use a closed FileWriter"):
            call()
    w.reopen()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w.add_summary(tf.Summary(), 3)
        w.flush()
    w.close()
    w.close()  # closing twice is quiet, as in TensorFlow


def test_add_graph_writes_a_given_graph_def_as_it_is(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="a")
    w = tf.summary.FileWriter(str(tmp_path))
    w.add_graph(None, graph_def=g.as_graph_def(), global_step=1)
    w.add_graph(g, global_step=2)
    with pytest.raises(TypeError, match="meta_graph_def must be type MetaGraphDef, saw type: "
                                        "<class 'str'>"):
        w.add_meta_graph("junk")
    w.close()
    graphs = [(e.step, "_output_shapes" in tf.GraphDef.FromString(e.graph_def).node[0].attr)
              for e in tf.train.summary_iterator(_only_file(str(tmp_path)))
              if e.WhichOneof("what") == "graph_def"]
    assert graphs == [(1, False), (2, True)]


def test_summary_iterator_raises_not_found_and_data_loss(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path / "logs"))
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    w.close()
    data = open(_only_file(str(tmp_path / "logs")), "rb").read()
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        list(tf.train.summary_iterator(str(tmp_path / "nope")))
    (tmp_path / "trunc").write_bytes(data[:30])
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.train.summary_iterator(str(tmp_path / "trunc")))
    (tmp_path / "short").write_bytes(data[:5])  # a partial header: the end, for TensorFlow
    assert list(tf.train.summary_iterator(str(tmp_path / "short"))) == []
    bad = bytearray(data)
    bad[20] ^= 0xFF
    (tmp_path / "corrupt").write_bytes(bytes(bad))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 12"):
        list(tf.train.summary_iterator(str(tmp_path / "corrupt")))
    bad = bytearray(data)
    bad[9] ^= 0xFF
    (tmp_path / "header").write_bytes(bytes(bad))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 0"):
        list(tf.train.summary_iterator(str(tmp_path / "header")))
    assert tf.compat.v1.train.summary_iterator is tf.train.summary_iterator
    (tmp_path / "empty").write_bytes(b"")
    assert list(tf.train.summary_iterator(str(tmp_path / "empty"))) == []


# -- program 9: tags under reused variable scopes, cond branches and devices ---------------------
def test_summary_tags_under_reused_scopes_cond_branches_and_devices():
    def model(x, reuse):
        with tf.variable_scope("model", reuse=reuse):
            w = tf.get_variable("w", [3, 2], initializer=tf.ones_initializer())
            return tf.summary.scalar("out_mean", tf.reduce_mean(tf.matmul(x, w)))

    xa = tf.placeholder(tf.float32, [None, 3])
    xb = tf.placeholder(tf.float32, [None, 3])
    sa, sb = model(xa, False), model(xb, True)
    s_slash = tf.summary.scalar("loss/train", tf.constant(1.0))
    s_lead = tf.summary.scalar("/lead", tf.constant(2.0))
    s_sp = tf.summary.histogram("my hist", tf.constant([1.0]), family="a b")
    pred = tf.placeholder(tf.bool, [])
    cs = tf.cond(pred, lambda: tf.summary.scalar("in_true", tf.constant(1.0)),
                 lambda: tf.summary.scalar("in_false", tf.constant(0.0)))
    with tf.device("/cpu:0"):
        sd = tf.summary.scalar("on_cpu", tf.constant(3.0))
    m1, m2 = tf.summary.merge_all(), tf.summary.merge_all()
    assert [t.name for t in (sa, sb, s_slash, s_lead, s_sp, cs, sd, m1, m2)] == [
        "model/out_mean:0", "model_1/out_mean:0", "loss/train:0", "lead:0", "a_b/my_hist:0",
        "cond/Merge:0", "on_cpu:0", "Merge/MergeSummary:0", "Merge_1/MergeSummary:0"]
    assert sd.device == "/device:CPU:0"
    assert [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)] == [
        "model/out_mean:0", "model_1/out_mean:0", "loss/train:0", "lead:0", "a_b/my_hist:0",
        "cond/in_true:0", "cond/in_false:0", "on_cpu:0"]
    feed = {xa: np.ones((1, 3)), xb: np.ones((1, 3))}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tags = [[v.tag for v in tf.Summary.FromString(sess.run(t, feed)).value]
                for t in (sa, sb, s_slash, s_lead, s_sp)]
        tags += [[v.tag for v in tf.Summary.FromString(sess.run(cs, {pred: p})).value]
                 for p in (True, False)]
        assert tags == [["model/out_mean"], ["model_1/out_mean"], ["loss/train"], ["lead"],
                        ["a_b/a_b/my_hist"], ["cond/in_true"], ["cond/in_false"]]
        # merge_all fetches both cond branches: the untaken one is dead (TF: an error)
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(m1, {**feed, pred: True})


# -- program 10: an Estimator's train and eval event files ---------------------------------------
def test_estimator_train_and_eval_event_files(tmp_path):
    md = str(tmp_path / "model")

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        pred = tf.matmul(features["x"], w)
        loss = tf.losses.mean_squared_error(labels, pred)
        tf.summary.scalar("my_loss", loss)
        tf.summary.histogram("w_hist", w)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "mae": tf.metrics.mean_absolute_error(labels, pred)})
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    X = np.array([[1., 2.], [3., 4.], [5., 6.], [7., 8.]], np.float32)
    Y = np.array([[1.], [2.], [3.], [4.]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(2).repeat()

    cfg = tf.estimator.RunConfig(model_dir=md, save_summary_steps=2, log_step_count_steps=2,
                                 save_checkpoints_steps=None, save_checkpoints_secs=None,
                                 tf_random_seed=1)
    est = tf.estimator.Estimator(model_fn, config=cfg)
    est.train(input_fn, steps=4)
    est.evaluate(input_fn, steps=2)

    def records(d):
        out = []
        for e in tf.train.summary_iterator(_only_file(d)):
            k = e.WhichOneof("what")
            if k == "summary":
                out.append((e.step, sorted(
                    (v.tag, v.WhichOneof("value"), round(v.simple_value, 4)
                     if v.WhichOneof("value") == "simple_value" and "sec" not in v.tag
                     else None) for v in e.summary.value)))
            else:
                out.append((e.step, k, e.session_log.status if k == "session_log" else ""))
        return out

    head = [(0, "file_version", ""), (0, "graph_def", ""), (0, "meta_graph_def", "")]
    assert records(md) == [
        *head, (1, "session_log", 1),
        (1, [("loss", "simple_value", 2.5), ("my_loss", "simple_value", 2.5),
             ("w_hist", "histo", None)]),
        (3, [("global_step/sec", "simple_value", None)]),
        (3, [("loss", "simple_value", 2785.2644), ("my_loss", "simple_value", 2785.2644),
             ("w_hist", "histo", None)])]
    assert records(os.path.join(md, "eval")) == [
        *head, (0, [("loss", "simple_value", 7.5), ("mae", "simple_value", 2.5)])]


# -- program 11: contrib.summary images, audio, generic tensors, import_event, initialize -------
def test_contrib_summary_image_audio_generic_import_event_and_initialize(tmp_path):
    cs = tf.contrib.summary
    logdir = str(tmp_path / "v2b")
    gs = tf.train.get_or_create_global_step()
    inc = tf.assign_add(gs, 1)
    writer = cs.create_file_writer(logdir, max_queue=5, name="my_writer")
    with writer.as_default(), cs.always_record_summaries():
        img = cs.image("pic", tf.zeros([2, 4, 4, 3]), max_images=1)
        aud = cs.audio("snd", tf.zeros([1, 20]), 8000, 1)
        gen = cs.generic("gen", tf.constant([1.5, 2.5]), metadata=None)
        sc_step = cs.scalar("explicit_step", 3.0, step=42)
        ev = cs.import_event(tf.constant(tf.Event(step=7, summary=tf.Summary(value=[
            tf.Summary.Value(tag="imp", simple_value=1.0)])).SerializeToString()))
    assert [o.name for o in [img, aud, gen, sc_step]] == [
        "pic/Const_1:0", "snd/Const:0", "gen/Const_1:0", "explicit_step/Const_1:0"]
    assert (ev.name, ev.type) == ("ImportEvent", "ImportEvent")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(RuntimeError, match=r"No default tf\.contrib\.summary"):
            cs.initialize(graph=tf.get_default_graph(), session=sess)
        with writer.as_default():
            cs.initialize(graph=tf.get_default_graph(), session=sess)
        sess.run([img, aud, gen, sc_step, ev])
        sess.run(inc)
        sess.run(cs.flush())
    got = []
    for e in tf.train.summary_iterator(_only_file(logdir)):
        k = e.WhichOneof("what")
        if k != "summary":
            got.append((e.step, k))
            continue
        v = e.summary.value[0]
        kind = v.WhichOneof("value")
        extra = ((v.tensor.dtype, [d.size for d in v.tensor.tensor_shape.dim])
                 if kind == "tensor" else (v.image.height, v.image.width) if kind == "image"
                 else (v.audio.length_frames,) if kind == "audio" else v.simple_value)
        got.append((e.step, [x.tag for x in e.summary.value], kind, extra))
    assert got[:2] == [(0, "file_version"), (0, "graph_def")]
    # one Session.run: TensorFlow writes these in no fixed order
    assert sorted(got[2:], key=repr) == sorted([
        (0, ["snd/audio"], "audio", (20,)), (0, ["gen"], "tensor", (1, [2])),
        (42, ["explicit_step"], "simple_value", 3.0), (7, ["imp"], "simple_value", 1.0),
        (0, ["pic/image"], "image", (4, 4))], key=repr)
