"""TF1 programs "from the wild", round 3 (input pipelines, summaries, files): the
classes of discrepancy a third fidelity sweep found and fixed.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Covered: the queue summaries
of `tf.train.batch` & co. and of the input producers, the events `FileWriter` writes for
a graph, `fused_batch_norm`'s dtypes, `cholesky` of a matrix that is not positive
definite, `tf.linalg.expm`, ``tf.contrib.distributions``; `Dataset.window`,
`group_by_window`, `bucket_by_sequence_length`, `scan`, `take_while`, `unique`,
`ignore_errors`, `choose_from_datasets`, the default `interleave` cycle length;
`SparseFeature`; `tf.gfile` (`MkDir`, `Walk`, `GFile.write`), `decode_raw`'s types;
`confusion_matrix`'s checks; `tf.signal` (framing, STFT, real FFTs, DCT, mel, windows)
and the Unicode string ops.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import flowgraph as tf

D = tf.data.Dataset


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _elements(ds, n=50):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        try:
            for _ in range(n):
                out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            pass
    return out


def _lists(ds):
    def conv(v):
        if isinstance(v, tuple):
            return tuple(conv(x) for x in v)
        return np.asarray(v).tolist()
    return [conv(e) for e in _elements(ds)]


# -- queue summaries -------------------------------------------------------------------------
def test_batching_and_input_producers_add_tensorflow_queue_summaries():
    x = tf.constant([1.0, 2.0])
    tf.train.batch([x], batch_size=4, enqueue_many=True)
    tf.train.shuffle_batch([x], batch_size=4, capacity=20, min_after_dequeue=5,
                           enqueue_many=True)
    tf.train.batch_join([[x]], batch_size=3, enqueue_many=True)
    tf.train.shuffle_batch_join([[x]], batch_size=3, capacity=30, min_after_dequeue=2,
                                enqueue_many=True)
    tf.train.string_input_producer(["a", "b"])
    tf.train.range_input_producer(10)
    tf.train.slice_input_producer([tf.constant([1, 2, 3])])
    tf.train.input_producer(tf.constant([1, 2]))  # no summary_name: no summary
    tf.train.maybe_batch([x], tf.constant(True), batch_size=2)
    got = [(s.op.type, s.name) for s in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    assert got == [
        ("ScalarSummary", "batch/fraction_of_32_full:0"),
        ("ScalarSummary", "shuffle_batch/fraction_over_5_of_15_full:0"),
        ("ScalarSummary", "batch_join/fraction_of_32_full:0"),
        ("ScalarSummary", "shuffle_batch_join/fraction_over_2_of_28_full:0"),
        ("ScalarSummary", "input_producer/fraction_of_32_full:0"),
        ("ScalarSummary", "input_producer_1/fraction_of_32_full:0"),
        ("ScalarSummary", "input_producer_2/input_producer/fraction_of_32_full:0"),
        ("ScalarSummary", "batch_1/fraction_of_32_full:0"),
    ]
    queues = [q.queue.name for q in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)]
    assert queues[4:] == ["input_producer", "input_producer_1",
                          "input_producer_2/input_producer", "input_producer_3/FIFOQueueV2",
                          "batch_1/fifo_queue"]


def test_queue_summary_values():
    x = tf.constant([1.0, 2.0])
    tf.train.batch([x], batch_size=1, capacity=8, enqueue_many=True)
    summary = tf.get_collection(tf.GraphKeys.SUMMARIES)[0]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        value = tf.Summary.FromString(sess.run(summary)).value[0]
        coord.request_stop()
        coord.join(threads)
    assert value.tag == "batch/fraction_of_8_full"
    assert 0.0 <= value.simple_value <= 1.0


# -- FileWriter events -----------------------------------------------------------------------
def _event_kinds(logdir):
    out = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.*"))):
        for e in tf.train.summary_iterator(path):
            out.append((e.WhichOneof("what"), e.step))
    return out


def test_filewriter_writes_a_meta_graph_event_after_a_constructor_graph(tmp_path):
    g = tf.get_default_graph()
    tf.summary.scalar("s", tf.constant(1.0, name="x"))
    for i, kwargs in enumerate([{"graph": g}, {"graph_def": g.as_graph_def()}]):
        logdir = str(tmp_path / str(i))
        tf.summary.FileWriter(logdir, **kwargs).close()
        assert _event_kinds(logdir) == [("file_version", 0), ("graph_def", 0),
                                        ("meta_graph_def", 0)]
    logdir = str(tmp_path / "add")
    w = tf.summary.FileWriter(logdir)
    w.add_graph(g, global_step=3)
    w.add_meta_graph(tf.train.export_meta_graph(), global_step=5)
    w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 2)
    w.add_run_metadata(tf.RunMetadata(), "step1", 9)
    w.close()
    assert _event_kinds(logdir) == [("file_version", 0), ("graph_def", 3),
                                    ("meta_graph_def", 5), ("session_log", 2),
                                    ("tagged_run_metadata", 9)]
    with pytest.raises(ValueError, match="no oneof named"):
        tf.Event().WhichOneof("nope")


# -- leftovers of round 2 --------------------------------------------------------------------
def test_fused_batch_norm_rejects_float64_as_tensorflow():
    with pytest.raises(TypeError, match="'x' has DataType float64 not in list of allowed "
                                        "values: float16, bfloat16, float32"):
        tf.nn.fused_batch_norm(tf.ones([2, 2, 2, 3], tf.float64), tf.ones([3], tf.float64),
                               tf.zeros([3], tf.float64))
    with pytest.raises(TypeError, match="'scale' has DataType float64 not in list of "
                                        "allowed values: bfloat16, float32"):
        tf.nn.fused_batch_norm(tf.ones([2, 2, 2, 3]), tf.ones([3], tf.float64),
                               tf.zeros([3], tf.float64))


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan():
    p = tf.placeholder(tf.float32, None)
    c = tf.linalg.cholesky(p)
    nan = np.nan
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(c, {p: [[1.0, 2.0], [2.0, 1.0]]}),
                                      [[nan, 0.0], [nan, nan]])
        got = sess.run(c, {p: [[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]]})
        np.testing.assert_allclose(got[0], [[2.0, 0.0], [1.0, 1.4142135]], rtol=1e-6)
        np.testing.assert_array_equal(got[1], [[nan, 0.0], [nan, nan]])
        np.testing.assert_array_equal(sess.run(c, {p: [[0.0]]}), [[nan]])


def test_expm_values_gradient_and_errors():
    a = tf.constant([[0.1, 0.2], [0.3, 0.4]])
    e, g = _run([tf.linalg.expm(tf.constant([[0.0, 1.0], [-1.0, 0.0]])),
                 tf.gradients(tf.reduce_sum(tf.linalg.expm(a)), a)[0]])
    np.testing.assert_allclose(e, [[0.5403, 0.8415], [-0.8415, 0.5403]], atol=1e-4)
    np.testing.assert_allclose(g, [[1.4513, 1.7246], [1.5837, 1.8742]], atol=1e-4)
    b = _run(tf.linalg.expm(tf.constant(np.arange(8.0).reshape(2, 2, 2) / 10)))
    np.testing.assert_allclose(b, [[[1.0111, 0.117], [0.234, 1.3621]],
                                   [[1.7461, 0.914], [1.0968, 2.2945]]], atol=1e-4)
    assert tf.linalg.expm(tf.placeholder(tf.float32, [None, 3, 3])).shape.as_list() == \
        [None, 3, 3]
    with pytest.raises(ValueError, match="does not support matrices of type <dtype: 'int32'>"):
        tf.linalg.expm(tf.constant([[1]]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 1"):
        tf.linalg.expm(tf.constant([[1.0, 2.0]]))


def test_contrib_distributions_is_the_distributions_module():
    # (a superset since session 21: the same classes plus the multivariate normals,
    # TransformedDistribution and bijectors of TF 1.x's contrib)
    assert all(getattr(tf.contrib.distributions, n) is getattr(tf.distributions, n)
               for n in tf.distributions.__all__)
    assert type(tf.contrib.distributions.Normal(0.0, 1.0)).__name__ == "Normal"


# -- tf.data ---------------------------------------------------------------------------------
def test_window_then_flat_map_batch():
    assert _lists(D.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3))) == \
        [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert _lists(D.range(7).window(3, shift=1, stride=2, drop_remainder=True)
                  .flat_map(lambda w: w.batch(3))) == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    pairs = D.zip((D.range(5), D.range(5))).window(2).flat_map(
        lambda a, b: D.zip((a.batch(2), b.map(lambda x: x * 10).batch(2))))
    assert _lists(pairs) == [([0, 1], [0, 10]), ([2, 3], [20, 30]), ([4], [40])]


def test_group_by_window_and_bucket_by_sequence_length():
    gbw = D.range(10).apply(tf.data.experimental.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(3), window_size=3))
    assert _lists(gbw) == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    seqs = [[1], [1, 2], [1, 2, 3], [1, 2, 3, 4], [1], [5, 6]]
    ds = D.from_generator(lambda: iter(seqs), tf.int32, [None])
    buckets = ds.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [2, 4], [2, 2, 2]))
    assert _lists(buckets) == [[[1, 2, 0], [1, 2, 3]], [[1], [1]], [[5, 6]], [[1, 2, 3, 4]]]


def test_experimental_transformations():
    ex = tf.data.experimental
    assert _lists(D.range(5).apply(ex.scan(np.int64(0), lambda s, x: (s + x, s * 10)))) == \
        [0, 0, 10, 30, 60]
    choice = D.from_tensor_slices(np.array([0, 1, 1, 0], np.int64))
    chosen = ex.choose_from_datasets([D.from_tensors("a").repeat(),
                                      D.from_tensors("b").repeat()], choice)
    assert _lists(chosen) == [b"a", b"b", b"b", b"a"]
    failing = D.from_tensor_slices([1.0, 0.0, 2.0]).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "inf"))
    assert _lists(failing.apply(ex.ignore_errors())) == [1.0, 0.5]
    assert _lists(D.range(10).apply(ex.take_while(lambda x: x < 3))) == [0, 1, 2]
    assert _lists(D.from_tensor_slices([1, 2, 1, 3, 2]).apply(ex.unique())) == [1, 2, 3]
    sparse = _elements(D.from_tensor_slices([[1, 0], [0, 2]]).apply(
        ex.dense_to_sparse_batch(2, [3])))[0]
    assert sparse.indices.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert sparse.values.tolist() == [1, 0, 0, 2] and sparse.dense_shape.tolist() == [2, 3]


def test_dataset_reduce_and_scan_take_the_element_packed():
    pairs = D.from_tensor_slices(([1, 2], [3.0, 4.0]))
    total = pairs.reduce((0, 0.0), lambda st, e: (st[0] + e[0], st[1] + e[1]))
    assert total[0].name == "ReduceDataset:0" and total[0].shape.as_list() == []
    assert _run(total) == (3, 7.0)
    assert _run(D.range(0).reduce(np.int64(7), lambda a, x: a + x)) == 7
    assert _run(D.range(5).reduce(np.int64(0), lambda a, x: a + x)) == 10
    with pytest.raises(TypeError):  # the element is one argument, as in TensorFlow
        pairs.reduce(0, lambda st, a, b: st + a)
    scanned = pairs.apply(tf.data.experimental.scan(0, lambda st, e: (st + e[0], e[1])))
    assert _lists(scanned) == [3.0, 4.0]


def test_interleave_default_cycle_length_is_the_core_count():
    cores = len(os.sched_getaffinity(0))
    got = _lists(D.range(1, 4).interleave(lambda x: D.range(x * 10, x * 10 + 2)))
    want = _lists(D.range(1, 4).interleave(lambda x: D.range(x * 10, x * 10 + 2),
                                           cycle_length=cores))
    assert got == want
    if cores == 2:  # the oracle's machine
        assert got == [10, 20, 11, 21, 30, 31]


# -- parsing ---------------------------------------------------------------------------------
def _example(**feats):
    def feature(v):
        if isinstance(v[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        if isinstance(v[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(
        feature={k: feature(v) for k, v in feats.items()})).SerializeToString()


def test_sparse_feature_in_parse_single_example_and_parse_example():
    s1 = _example(a=[1, 2, 3], idx=[0, 3], val=[9.0, 8.0])
    s2 = _example(a=[4], idx=[1], val=[7.0])
    one = tf.parse_single_example(s1, {
        "a": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
        "sp": tf.SparseFeature(index_key="idx", value_key="val", dtype=tf.float32, size=5)})
    assert sorted(one) == ["a", "sp"]
    batch = tf.parse_example([s1, s2], {
        "a": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1),
        "sp": tf.io.SparseFeature(["idx"], "val", tf.float32, [5])})
    one, batch = _run([one, batch])
    assert one["sp"].indices.tolist() == [[0], [3]]
    assert one["sp"].values.tolist() == [9.0, 8.0]
    assert one["sp"].dense_shape.tolist() == [5]
    assert batch["a"].tolist() == [[1, 2, 3], [4, -1, -1]]
    assert batch["sp"].indices.tolist() == [[0, 0], [0, 3], [1, 1]]
    assert batch["sp"].values.tolist() == [9.0, 8.0, 7.0]
    assert batch["sp"].dense_shape.tolist() == [2, 5]


# -- files -----------------------------------------------------------------------------------
def test_gfile_mkdir_walk_and_write_as_tensorflow(tmp_path):
    d = str(tmp_path)
    tf.gfile.MkDir(d)  # exists: no error in TF 2.15
    os.makedirs(os.path.join(d, "a", "b"))
    top_down = [os.path.relpath(r, d) for r, _, _ in tf.gfile.Walk(d)]
    bottom_up = [os.path.relpath(r, d) for r, _, _ in tf.gfile.Walk(d, in_order=False)]
    assert top_down == [".", "a", os.path.join("a", "b")]
    assert bottom_up == [os.path.join("a", "b"), "a", "."]
    assert list(tf.gfile.Walk(os.path.join(d, "nope"))) == []
    with tf.gfile.GFile(os.path.join(d, "f.txt"), "w") as f:
        assert f.write("abc") is None


def test_decode_raw_output_types():
    b = tf.constant([b"\x01\x00\x02\x00", b"\xff\xff\x00\x01"])
    assert _run(tf.decode_raw(b, tf.int16, little_endian=False)).tolist() == \
        [[256, 512], [-1, 1]]
    assert tf.io.decode_raw(b, tf.bool).dtype == tf.bool
    with pytest.raises(TypeError, match="'out_type' has DataType string not in list"):
        tf.io.decode_raw(b, tf.string)


# -- math ------------------------------------------------------------------------------------
def test_confusion_matrix_checks_class_ids():
    with pytest.raises(tf.errors.InvalidArgumentError, match="`labels` contains negative"):
        _run(tf.math.confusion_matrix([0, -1], [1, 1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="`labels` out of bound"):
        _run(tf.math.confusion_matrix([0, 5], [1, 1], num_classes=3))
    assert _run(tf.confusion_matrix([0, 1], [1, 1], num_classes=3, weights=[2.0, 3.0],
                                    dtype=tf.float32)).tolist() == \
        [[0.0, 2.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0]]


# -- tf.signal -------------------------------------------------------------------------------
def test_signal_frame_and_overlap_and_add():
    sig = tf.constant(np.arange(10, dtype=np.float32))
    framed, padded, axis0, ola = _run([
        tf.signal.frame(sig, 4, 3), tf.signal.frame(sig, 4, 3, pad_end=True, pad_value=-1),
        tf.signal.frame(tf.reshape(sig, [5, 2]), 2, 2, axis=0),
        tf.signal.overlap_and_add(tf.ones([3, 4]), 2)])
    assert framed.tolist() == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
    assert padded.tolist()[-1] == [9, -1, -1, -1] and padded.shape == (4, 4)
    assert axis0.tolist() == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    assert ola.tolist() == [1, 1, 2, 2, 2, 2, 1, 1]
    p = tf.placeholder(tf.float32, [3, 100])
    assert tf.signal.frame(p, 16, 8).shape.as_list() == [3, 11, 16]
    assert tf.signal.frame(p, 16, 8, pad_end=True).shape.as_list() == [3, 13, 16]


def test_signal_windows_follow_tensorflows_periodic_rule():
    h5, h5s, hm4, h3 = _run([tf.signal.hann_window(5), tf.signal.hann_window(5, False),
                             tf.signal.hamming_window(4),
                             tf.signal.hann_window(3, dtype=tf.float64)])
    np.testing.assert_allclose(h5, [0.0, 0.5, 1.0, 0.5, 0.0], atol=1e-6)
    np.testing.assert_allclose(h5s, [0.0, 0.5, 1.0, 0.5, 0.0], atol=1e-6)
    np.testing.assert_allclose(hm4, [0.08, 0.54, 1.0, 0.54], atol=1e-6)
    np.testing.assert_allclose(h3, [0.0, 1.0, 0.0], atol=1e-12)


def test_stft_and_real_ffts():
    x = tf.constant(np.sin(np.arange(32) * 0.3).astype(np.float32))
    spec = tf.signal.stft(x, 8, 4)
    assert spec.dtype == tf.complex64
    mag, back, irf, rf2 = _run([tf.abs(spec), tf.signal.inverse_stft(spec, 8, 4),
                                tf.signal.irfft(tf.signal.rfft(tf.constant([1., 2., 3., 4.]))),
                                tf.signal.rfft2d(tf.reshape(tf.range(6.0), [2, 3]))])
    assert mag.shape == (7, 5)
    np.testing.assert_allclose(mag[0], [3.391, 1.9273, 0.1909, 0.0282, 0.0116], atol=1e-3)
    np.testing.assert_allclose(back[:6], [0.0, 0.0063, 0.1412, 0.5707, 0.932, 0.7481],
                               atol=1e-3)
    np.testing.assert_allclose(irf, [1.0, 2.0, 3.0, 4.0], atol=1e-5)
    np.testing.assert_allclose(rf2, [[15.0, -3.0 + 1.7321j], [-9.0, 0.0]], atol=1e-3)
    p = tf.placeholder(tf.float32, [2, 100])
    assert tf.signal.stft(p, 16, 8).shape.as_list() == [2, 11, 9]
    assert tf.signal.stft(p, 16, 8, fft_length=32, pad_end=True).shape.as_list() == \
        [2, 13, 17]
    assert tf.signal.irfft(tf.placeholder(tf.complex64, [3, 6])).shape.as_list() == [3, 10]


def test_dct_mel_and_fftshift():
    v = tf.constant([1.0, 2.0, 3.0, 4.0])
    dct, ortho, idct, mfcc, mel, shift = _run([
        tf.signal.dct(v), tf.signal.dct(v, norm="ortho"), tf.signal.idct(v, type=2),
        tf.signal.mfccs_from_log_mel_spectrograms(tf.ones([2, 4])),
        tf.signal.linear_to_mel_weight_matrix(4, 5, 8000, 20.0, 4000.0),
        tf.signal.fftshift(tf.range(5))])
    np.testing.assert_allclose(dct, [20.0, -6.3086, 0.0, -0.4483], atol=1e-3)
    np.testing.assert_allclose(ortho, [5.0, -2.2304, 0.0, -0.1585], atol=1e-3)
    np.testing.assert_allclose(idct, [11.9996, -9.1029, 2.6177, -1.5143], atol=1e-3)
    np.testing.assert_allclose(mfcc[0], [2.8284, 0.0, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(mel, [[0, 0, 0, 0], [0, 0.7103, 0.2897, 0],
                                     [0, 0, 0.4773, 0.5227], [0, 0, 0, 0.6376],
                                     [0, 0, 0, 0]], atol=1e-4)
    assert shift.tolist() == [3, 4, 0, 1, 2]


# -- Unicode strings -------------------------------------------------------------------------
def test_unicode_decode_split_encode_transcode():
    u = tf.constant(["héllo", "wörld!", ""])
    dec, split, scalar, enc, trans, bsplit = _run([
        tf.strings.unicode_decode(u, "UTF-8"), tf.strings.unicode_split(u, "UTF-8"),
        tf.strings.unicode_split(tf.constant("añb"), "UTF-8"),
        tf.strings.unicode_encode(tf.constant([104, 233]), "UTF-8"),
        tf.strings.unicode_transcode(tf.constant(["héllo"]), "UTF-8", "UTF-16-BE"),
        tf.strings.bytes_split(tf.constant(["ab", "c"]))])
    assert dec.to_list() == [[104, 233, 108, 108, 111], [119, 246, 114, 108, 100, 33], []]
    assert split.to_list() == [[b"h", b"\xc3\xa9", b"l", b"l", b"o"],
                               [b"w", b"\xc3\xb6", b"r", b"l", b"d", b"!"], []]
    assert scalar.tolist() == [b"a", b"\xc3\xb1", b"b"]
    assert enc == b"h\xc3\xa9"
    assert trans.tolist() == [b"\x00h\x00\xe9\x00l\x00l\x00o"]
    assert bsplit.to_list() == [[b"a", b"b"], [b"c"]]
    cps, offs = _run(tf.strings.unicode_decode_with_offsets(tf.constant(["añb"]), "UTF-8"))
    assert cps.to_list() == [[97, 241, 98]] and offs.to_list() == [[0, 1, 3]]


def test_unicode_decode_error_policies():
    bad = tf.constant([b"a\xffb"])
    rep, ign = _run([tf.strings.unicode_decode(bad, "UTF-8"),
                     tf.strings.unicode_decode(bad, "UTF-8", errors="ignore")])
    assert rep.to_list() == [[97, 65533, 98]]
    assert ign.to_list() == [[97, 98]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="invalid UTF-8"):
        _run(tf.strings.unicode_decode(bad, "UTF-8", errors="strict"))
    # any ICU encoding decodes (TensorFlow: [97, 255, 98]); an unknown one fails at run
    assert _run(tf.strings.unicode_decode(bad, "LATIN-1")).to_list() == [[97, 255, 98]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="converter"):
        _run(tf.strings.unicode_decode(bad, "LATIN-9X"))
