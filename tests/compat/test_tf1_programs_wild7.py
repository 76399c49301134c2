"""TF1 programs "from the wild", round 7: generative and representation models (DCGAN,
WGAN-GP, VAEs, autoencoders, word2vec with NCE and sampled softmax) and their input
pipelines (text over `tf.data`, TFRecords, image decoding and augmentation, savers,
summaries), and the classes of discrepancy they found.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Covered: dataset functions that
capture tensors of the outer graph (constants, placeholders fed to the initializer,
variables, a ``tf.cond`` on an outer ``training`` flag); a map function traced once even
when map-then-batch fusion applies; the file readers taking a dataset of file names
(``list_files``); ``padded_batch`` / ``bucket_by_sequence_length`` padding values given as
tensors; ``tf.image.decode_image`` as TF's one ``DecodeImage`` op (any of JPEG, PNG, GIF,
BMP; unknown static rank while GIF animations expand; uint16/float32 scaling);
``random_brightness`` on integer images (through ``adjust_brightness``); the names of
``convert_image_dtype``'s result, of the raw resize ops and of ``resize_images``; the name
of a sharded ``embedding_lookup``'s result; ``SaverDef.keep_checkpoint_every_n_hours``
as a float.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _all(ds, feed=None, n=50):
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initializer, feed)
        for _ in range(n):
            try:
                v = sess.run(nxt)
                out.append([np.asarray(x).tolist() for x in v] if isinstance(v, tuple)
                           else np.asarray(v).tolist())
            except tf.errors.OutOfRangeError:
                break
    return out


# -- dataset functions capture outer tensors (Dataset.map/filter/flat_map, TF1 capture) --
def test_map_captures_a_constant_and_a_placeholder_fed_to_the_initializer():
    mean = tf.constant([1.0, 2.0])
    scale = tf.placeholder(tf.float32, [])
    ds = tf.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32))
    ds = ds.map(lambda x: (x - mean) * scale).batch(2)
    # TF: [[0.0, -2.0], [0.0, -2.0]] for scale 2
    assert _all(ds, {scale: 2.0})[0] == [[0.0, -2.0], [0.0, -2.0]]
    assert _all(ds, {scale: -1.0})[0] == [[0.0, 1.0], [0.0, 1.0]]


def test_map_reads_a_captured_variable_when_the_iterator_is_initialized():
    v = tf.Variable(3.0)
    ds = tf.data.Dataset.from_tensor_slices(np.ones(4, np.float32)).map(lambda x: x * v)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(it.initializer)
        assert sess.run(nxt) == 3.0
        sess.run(v.assign(5.0))
        assert sess.run(nxt) == 3.0  # TF: the value captured at initialization
        sess.run(it.initializer)
        assert sess.run(nxt) == 5.0


def test_captures_through_filter_flat_map_interleave_cond_and_scan():
    c = tf.constant(10, tf.int64)
    thr = tf.placeholder_with_default(tf.constant(2, tf.int64), [])
    r = tf.data.Dataset.range(5)
    # values TF 2.15 printed for each pipeline
    assert _all(r.filter(lambda x: x > thr)) == [3, 4]
    assert _all(r.filter(lambda x: x > thr), {thr: 3}) == [4]
    assert _all(r.flat_map(lambda x: tf.data.Dataset.from_tensors(x * c))) == [0, 10, 20, 30, 40]
    assert _all(r.flat_map(lambda x: tf.data.Dataset.from_tensor_slices(
        tf.stack([x, c])))) == [0, 10, 1, 10, 2, 10, 3, 10, 4, 10]
    assert _all(r.flat_map(lambda x: tf.data.Dataset.range(2).map(
        lambda y: y + x + c))) == [10, 11, 11, 12, 12, 13, 13, 14, 14, 15]
    assert _all(r.flat_map(lambda x: tf.data.Dataset.from_tensors(c))) == [10] * 5
    assert _all(r.interleave(lambda x: tf.data.Dataset.from_tensors(c).repeat(2),
                             cycle_length=2)) == [10] * 10
    training = tf.placeholder(tf.bool, [])
    aug = r.map(lambda x: tf.cond(training, lambda: x * 100, lambda: x))
    assert _all(aug, {training: True}) == [0, 100, 200, 300, 400]
    assert _all(aug, {training: False}) == [0, 1, 2, 3, 4]
    assert _all(r.batch(2).map(lambda x: tf.reduce_sum(x) + c)) == [11, 15, 14]
    assert _all(r.apply(tf.data.experimental.scan(c, lambda s, x: (s + x, s)))) == [
        10, 10, 11, 13, 16]


def test_one_shot_iterator_captures_constants_but_not_placeholders():
    c = tf.constant(10, tf.int64)
    nxt = tf.data.Dataset.range(3).map(lambda x: x + c).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == 10
    p = tf.placeholder(tf.int64, [])
    # TF: ValueError "Cannot capture a placeholder (name:Placeholder, ...) by value."
    with pytest.raises(ValueError, match=r"Cannot capture a placeholder \(name:Placeholder, "):
        tf.data.Dataset.range(3).map(lambda x: x + p).make_one_shot_iterator()


def test_a_resource_variable_capture_is_a_clear_error():
    v = tf.get_variable("v", initializer=3.0, use_resource=True)
    with pytest.raises(ValueError, match="resource 'v:0' of the outer graph"):
        tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) * v)


def test_map_function_is_traced_once_even_when_fused_with_batch(capsys):
    def f(x):
        print("traced", x.shape)
        return x * 2

    ds = tf.data.Dataset.range(6).map(f).batch(4)
    assert ds._fused is not None  # the elementwise map still runs once per batch
    assert capsys.readouterr().out == "traced ()\n"  # TF prints once, the element shape
    assert _all(ds) == [[0, 2, 4, 6], [8, 10]]


# -- file readers over a dataset of file names (TFRecordDataset(list_files(...))) --------
def test_tfrecord_and_text_readers_take_a_dataset_of_file_names(tmp_path):
    for k in range(2):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{k}.tfrecord")) as w:
            for i in range(2):
                w.write(b"r%d%d" % (k, i))
        (tmp_path / f"t{k}.txt").write_text(f"a{k}\nb{k}\n")
    files = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfrecord"), shuffle=False)
    assert _all(tf.data.TFRecordDataset(files)) == [b"r00", b"r01", b"r10", b"r11"]
    lines = tf.data.TextLineDataset(tf.data.Dataset.from_tensor_slices(
        [str(tmp_path / "t1.txt"), str(tmp_path / "t0.txt")]))
    assert lines.output_shapes == tf.TensorShape([])
    assert _all(lines) == [b"a1", b"b1", b"a0", b"b0"]
    # TF's messages for a dataset of something else
    with pytest.raises(TypeError, match=r"must contain `tf.string` elements. Got a dataset "
                                        r"of `tf.int64` elements"):
        tf.data.TFRecordDataset(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match=r"elements of shape \[\] \(i.e. scalars\)"):
        tf.data.TextLineDataset(tf.data.Dataset.from_tensor_slices([["a"]]))


# -- padding values as tensors (padded_batch, bucket_by_sequence_length) ----------------
def test_padded_batch_takes_tensor_padding_values():
    ds = tf.data.Dataset.range(4).map(lambda x: tf.fill([x], x))
    p = tf.placeholder(tf.int64, [])
    # TF: [[9], [1]] then [[2, 2, 9], [3, 3, 3]]
    assert _all(ds.padded_batch(2, [None], padding_values=p), {p: 9}) == [
        [[9], [1]], [[2, 2, 9], [3, 3, 3]]]
    with pytest.raises(TypeError, match=r"values type <dtype: 'int32'> does not match type "
                                        r"<dtype: 'int64'>"):
        ds.padded_batch(2, [None], tf.constant(-1, tf.int32))
    with pytest.raises(ValueError, match=r"should be scalars, but got \(2,\)"):
        ds.padded_batch(2, [None], tf.constant([1, 2], tf.int64))


def test_bucket_by_sequence_length_with_constant_padding_values():
    seqs = [list(range(1, n + 1)) for n in [3, 7, 2, 9, 4, 1]]
    ds = tf.data.Dataset.from_generator(lambda: ((s, len(s)) for s in seqs),
                                        (tf.int64, tf.int32), ([None], []))
    b = ds.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda x, n: n, [4, 8], [2, 2, 2], padded_shapes=([None], []),
        padding_values=(tf.constant(-1, tf.int64), 0)))
    nxt = tf.data.make_one_shot_iterator(b).get_next()
    with tf.Session() as sess:
        first = sess.run(nxt)
    assert first[0].tolist() == [[1, 2, 3], [1, 2, -1]] and first[1].tolist() == [3, 2]


# -- DecodeImage (tf.image.decode_image) --------------------------------------------------
def _image_bytes(fmt, frames=1):
    from PIL import Image

    img = (np.arange(2 * 3 * 3).reshape(2, 3, 3) * 9).astype(np.uint8)
    buf = io.BytesIO()
    if frames > 1:
        Image.fromarray(img).save(buf, fmt, save_all=True,
                                  append_images=[Image.fromarray(255 - img)])
    else:
        Image.fromarray(img).save(buf, fmt)
    return buf.getvalue()


def test_decode_image_is_one_decode_image_op_with_tensorflows_static_shapes():
    s = tf.placeholder(tf.string, [])
    d = tf.image.decode_image(s)
    assert (d.op.type, d.name, d.dtype) == ("DecodeImage", "decode_image/DecodeImage:0",
                                            tf.uint8)
    assert d.shape.ndims is None  # TF: <unknown> (a GIF gives 4-D)
    assert tf.image.decode_image(s, channels=3).shape.ndims is None
    assert tf.image.decode_image(s, expand_animations=False).shape.as_list() == [None] * 3
    assert tf.image.decode_image(s, channels=1, expand_animations=False).shape.as_list() == [
        None, None, 1]
    f64 = tf.image.decode_image(s, dtype=tf.float64)
    assert (f64.op.type, f64.dtype) == ("Mul", tf.float64)  # DecodeImage(uint16), converted


def test_decode_image_values_for_each_format():
    pytest.importorskip("PIL")
    s = tf.placeholder(tf.string, [])
    png, bmp, gif = _image_bytes("PNG"), _image_bytes("BMP"), _image_bytes("GIF", 2)
    with tf.Session() as sess:
        def run(data, **kw):
            return sess.run(tf.image.decode_image(s, **kw), {s: data})

        # TF's shapes and first values
        for data in (png, bmp):
            v = run(data)
            assert v.shape == (2, 3, 3) and v.reshape(-1)[:4].tolist() == [0, 9, 18, 27]
        assert run(png, channels=1).reshape(-1)[:4].tolist() == [7, 34, 61, 88]
        assert run(bmp, channels=4).reshape(-1)[:4].tolist() == [0, 9, 18, 255]
        assert run(gif).shape == (2, 2, 3, 3)
        assert run(gif, expand_animations=False).shape == (2, 3, 3)
        f = run(png, dtype=tf.float32)
        assert f.dtype == np.float32
        np.testing.assert_allclose(f.reshape(-1)[:4], [0.0, 0.0353, 0.0706, 0.1059], atol=1e-4)
        assert run(png, dtype=tf.uint16).reshape(-1)[:4].tolist() == [0, 2313, 4626, 6939]
        assert run(bmp, dtype=tf.uint16).reshape(-1)[:4].tolist() == [0, 2304, 4608, 6912]
        for data, kw, msg in [
                (bmp, {"channels": 1}, "`channels` must be 0, 3 or 4 for BMP, but got 1"),
                (gif, {"channels": 4}, "channels must be 0 or 3 for GIF, got 4"),
                (b"hello world", {}, "Unknown image file format. One of JPEG, PNG, GIF, BMP "
                                     "required.")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                run(data, **kw)


# -- image augmentation and conversion (tf.image) -----------------------------------------
def test_random_brightness_goes_through_adjust_brightness():
    img = tf.constant(np.arange(12).reshape(2, 2, 3).astype(np.uint8) * 20)
    y = tf.image.random_brightness(img, 0.3, seed=1)
    # TF: adjust_brightness/convert_image_1:0 (Cast), uint8
    assert (y.name, y.op.type, y.dtype) == ("adjust_brightness/convert_image_1:0", "Cast",
                                            tf.uint8)
    with tf.Session() as sess:
        base = sess.run(img).astype(int)
        moves = [abs(int(sess.run(y).astype(int)[0, 0, 1]) - base[0, 0, 1])
                 for _ in range(20)]
    assert max(moves) > 2  # the delta is in [0, 1) units: up to 0.3 * 255
    f = tf.image.random_brightness(tf.zeros([2, 2, 3]), 0.3)
    assert (f.name, f.op.type) == ("adjust_brightness_1/Identity:0", "Identity")
    assert tf.image.random_brightness(tf.zeros([5]), 0.1).shape.as_list() == [5]  # any rank
    with pytest.raises(ValueError, match=r"max_delta must be non-negative\."):
        tf.image.random_brightness(img, -1.0)


def test_convert_image_dtype_result_is_named_by_its_scope():
    u8 = tf.constant([[0, 128, 255]], tf.uint8)
    f = tf.constant([[0.0, 0.5, 1.0]])
    cases = [(u8, tf.float32, False, "convert_image:0", "Mul"),
             (u8, tf.uint16, False, "convert_image_1:0", "Mul"),
             (tf.constant([[0, 40000, 65535]], tf.uint16), tf.uint8, False,
              "convert_image_2:0", "Cast"),
             (f, tf.float64, False, "convert_image_3:0", "Cast"),
             (f, tf.uint8, False, "convert_image_4:0", "Cast"),
             (f, tf.uint8, True, "convert_image_5:0", "Cast")]
    with tf.Session() as sess:
        got = []
        for x, dtype, sat, name, op_type in cases:
            y = tf.image.convert_image_dtype(x, dtype, saturate=sat)
            assert (y.name, y.op.type) == (name, op_type)
            got.append(sess.run(y).tolist())
    assert got[2] == [[0, 156, 255]] and got[4] == [[0, 127, 255]]
    with tf.name_scope("prep"):
        assert tf.image.convert_image_dtype(u8, tf.float32, name="to_float").name == \
            "prep/to_float:0"


def test_resize_op_names():
    x4, x3 = tf.zeros([1, 4, 4, 3]), tf.zeros([4, 4, 3])
    rb = tf.image.resize_bilinear(x4, [2, 2])
    # TF: the raw ops take the scope's name; resize_images opens a "resize" scope
    assert (rb.name, rb.op.inputs[1].op.name) == ("ResizeBilinear:0", "ResizeBilinear/size")
    assert tf.image.resize_bilinear(x4, [2, 2], name="rb").name == "rb:0"
    assert tf.image.resize_nearest_neighbor(x4, [8, 8]).name == "ResizeNearestNeighbor:0"
    assert tf.image.resize_bicubic(x4, [2, 2]).name == "ResizeBicubic:0"
    assert tf.image.resize_area(x4, [2, 2]).name == "ResizeArea:0"
    r = tf.image.resize_images(x4, [2, 2])
    assert (r.name, r.op.inputs[1].op.name) == ("resize/ResizeBilinear:0", "resize/size")
    r3 = tf.image.resize_images(x3, [2, 2], method=1)
    assert (r3.name, r3.op.inputs[0].op.name) == ("resize_1/Squeeze:0",
                                                  "resize_1/ResizeNearestNeighbor")
    assert tf.image.resize_images(x4, [4, 4]) is x4  # unchanged size: the images
    assert tf.image.resize_images(x4, [2, 2], name="my").name == "my/ResizeBilinear:0"
    assert tf.image.resize(x4, [2, 2]).name == "resize_3/ResizeBilinear:0"  # TF too


# -- embeddings and savers -----------------------------------------------------------------
def test_sharded_embedding_lookup_result_name():
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
        emb = tf.get_variable("embedding", [20, 6])
    ids = tf.constant([0, 6, 7, 13, 19, 3])
    tf.nn.embedding_lookup(list(emb), ids, partition_strategy="mod")
    div = tf.nn.embedding_lookup(list(emb), ids, partition_strategy="div")
    assert div.name == "embedding_lookup_1/Reshape_1:0"  # TF 2.15
    assert div.shape.as_list() == [6, 6]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        full = np.concatenate(sess.run(list(emb)))
        np.testing.assert_allclose(sess.run(div), full[[0, 6, 7, 13, 19, 3]])


def test_saver_def_keeps_hours_as_a_float():
    w = tf.Variable(1.0)
    saver = tf.train.Saver(max_to_keep=2, keep_checkpoint_every_n_hours=10000)
    # TF: 2 10000.0 False 2
    sd = saver.saver_def
    assert (sd.max_to_keep, repr(sd.keep_checkpoint_every_n_hours), sd.sharded, sd.version) \
        == (2, "10000.0", False, 2)
    assert repr(tf.train.Saver([w], keep_checkpoint_every_n_hours=1)
                .saver_def.keep_checkpoint_every_n_hours) == "1.0"


# -- tf.data.experimental: the rest of TF 1.15's input-pipeline helpers --------------------
def test_get_single_element_counter_enumerate_and_parallel_interleave():
    E = tf.data.experimental
    x = E.get_single_element(tf.data.Dataset.from_tensors((tf.constant([1, 2]), "a")))
    # TF: a tuple of DatasetToSingleElement:0/:1
    assert [t.name for t in x] == ["DatasetToSingleElement:0", "DatasetToSingleElement:1"]
    with tf.Session() as sess:
        v = sess.run(x)
        assert v[0].tolist() == [1, 2] and v[1] == b"a"
        for ds, msg in [(tf.data.Dataset.range(0), "Dataset was empty."),
                        (tf.data.Dataset.range(3), "Dataset had more than one element.")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                sess.run(E.get_single_element(ds))
    assert (E.INFINITE_CARDINALITY, E.UNKNOWN_CARDINALITY) == (-1, -2)
    cnt = E.Counter(start=3, step=2)
    assert (cnt.output_shapes, cnt.output_types) == (tf.TensorShape([]), tf.int64)
    assert _all(cnt, n=3) == [3, 5, 7]
    en = tf.data.Dataset.from_tensor_slices(["a", "b"]).apply(E.enumerate_dataset(start=5))
    assert en.output_types == (tf.int64, tf.string)
    assert _all(en) == [[5, b"a"], [6, b"b"]]
    pi = tf.data.Dataset.range(3).apply(E.parallel_interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2))
    assert _all(pi) == [0, 1, 0, 1, 2, 2]
    pi2 = tf.data.Dataset.range(3).apply(E.parallel_interleave(
        lambda x: tf.data.Dataset.range(x * 10, x * 10 + 3), cycle_length=2, block_length=2))
    assert _all(pi2) == [0, 1, 10, 11, 2, 12, 20, 21, 22]
    assert _all(tf.data.Dataset.range(3).apply(E.prefetch_to_device("/cpu:0"))) == [0, 1, 2]
    assert _all(tf.data.Dataset.range(3).apply(E.copy_to_device("/cpu:0"))) == [0, 1, 2]


def test_sample_from_datasets_draws_until_every_input_is_exhausted():
    E = tf.data.experimental
    sm = E.sample_from_datasets([tf.data.Dataset.from_tensors(0).repeat(50),
                                 tf.data.Dataset.from_tensors(1).repeat(50)],
                                weights=[0.9, 0.1], seed=3)
    assert (sm.output_types, sm.output_shapes) == (tf.int32, tf.TensorShape([]))
    v = _all(sm, n=200)
    assert len(v) == 100 and sum(v) == 50  # TF: all 100 elements, then the end
    assert v[:40].count(0) > 25  # the weights favour the first dataset while both last
    both = E.sample_from_datasets([tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)])
    assert sorted(_all(both)) == [0, 1, 2, 10, 11]


def test_parse_example_dataset_parses_batches_of_examples():
    ex = [tf.train.Example(features=tf.train.Features(feature={
        "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "v": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5] * i))}))
        .SerializeToString() for i in range(1, 4)]
    pe = tf.data.Dataset.from_tensor_slices(ex).batch(2).apply(
        tf.data.experimental.parse_example_dataset({"a": tf.FixedLenFeature([], tf.int64),
                                                    "v": tf.VarLenFeature(tf.float32)}))
    assert pe.output_types == {"a": tf.int64, "v": tf.float32}
    assert pe.output_classes["v"] is tf.SparseTensor
    nxt = pe.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        r = sess.run(nxt)
    assert r["a"].tolist() == [1, 2]
    assert r["v"].indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert r["v"].dense_shape.tolist() == [2, 2]


def _write_csvs(tmp_path):
    (tmp_path / "a.csv").write_text("x,y,z\n1,2.5,foo\n3,,bar\n")
    (tmp_path / "b.csv").write_text("x,y,z\n5,1e3,\n")
    return str(tmp_path / "a.csv"), str(tmp_path / "b.csv")


def test_csv_dataset(tmp_path):
    a, b = _write_csvs(tmp_path)
    E = tf.data.experimental
    c = E.CsvDataset([a, b], [tf.int32, [0.0], ["?"]], header=True)
    assert c.output_types == (tf.int32, tf.float32, tf.string)
    assert c.output_shapes == (tf.TensorShape([]),) * 3
    assert _all(c) == [[1, 2.5, b"foo"], [3, 0.0, b"bar"], [5, 1000.0, b"?"]]
    assert _all(E.CsvDataset(a, [[0], ["?"]], header=True, select_cols=[0, 2])) == [
        [1, b"foo"], [3, b"bar"]]
    required = E.CsvDataset(b, [tf.int32, tf.float32, tf.string], header=True)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Field 2 is required but missing in record"):
        _all(required)


def test_make_csv_dataset_infers_columns_and_batches(tmp_path):
    a, _ = _write_csvs(tmp_path)
    E = tf.data.experimental
    m = E.make_csv_dataset(str(tmp_path / "*.csv"), 2, shuffle=False, num_epochs=1)
    # TF: OrderedDict([('x', tf.int32), ('y', tf.float32), ('z', tf.string)])
    assert list(m.output_types.items()) == [("x", tf.int32), ("y", tf.float32),
                                            ("z", tf.string)]
    assert m.output_shapes["x"].as_list() == [None]
    nxt = m.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first, second = sess.run(nxt), sess.run(nxt)
    assert {k: v.tolist() for k, v in first.items()} == {
        "x": [1, 3], "y": [2.5, 0.0], "z": [b"foo", b"bar"]}
    assert {k: v.tolist() for k, v in second.items()} == {"x": [5], "y": [1000.0], "z": [b""]}
    m2 = E.make_csv_dataset([a], 3, label_name="z", select_columns=["x", "z"],
                            shuffle=False, num_epochs=2)
    assert (list(m2.output_types[0].items()), m2.output_types[1]) == ([("x", tf.int32)],
                                                                      tf.string)
    nxt2 = m2.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        f, lab = sess.run(nxt2)
        assert f["x"].tolist() == [1, 3, 1] and lab.tolist() == [b"foo", b"bar", b"foo"]
    forever = E.make_csv_dataset(str(tmp_path / "b.csv"), 4, shuffle=False)
    assert forever.output_shapes["x"].as_list() == [4]  # num_epochs=None drops the rest
    with pytest.raises(ValueError, match=r"must be one of the columns: \['x', 'y', 'z'\]. "
                                         r"Received: nope\."):
        E.make_csv_dataset(a, 2, label_name="nope")
    with pytest.raises(ValueError, match="No files match `file_pattern`"):
        E.make_csv_dataset(str(tmp_path / "zzz*.csv"), 2)


def test_make_batched_features_dataset(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(5):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "lab": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}))
                .SerializeToString())
    b = tf.data.experimental.make_batched_features_dataset(
        path, 2, {"a": tf.FixedLenFeature([], tf.int64),
                  "lab": tf.FixedLenFeature([], tf.int64)},
        label_key="lab", num_epochs=1, shuffle=False)
    assert b.output_types == ({"a": tf.int64}, tf.int64)
    nxt = b.make_one_shot_iterator().get_next()
    got = []
    with tf.Session() as sess:
        for _ in range(3):
            f, lab = sess.run(nxt)
            got.append((f["a"].tolist(), lab.tolist()))
    assert got == [([0, 1], [0, 1]), ([2, 3], [0, 1]), ([4], [0])]  # TF's batches


def test_cardinality_follows_tensorflows_rules():
    E, R = tf.data.experimental, tf.data.Dataset.range
    p = tf.placeholder(tf.int64, [])
    cases = [  # (dataset, TF 2.15's tf.compat.v1 cardinality)
        (R(10).batch(3), 4), (R(10).batch(3, drop_remainder=True), 3), (R(10).repeat(), -1),
        (R(4).repeat(3), 12), (R(10).filter(lambda x: x > 2), -2),
        (R(7).map(lambda x: x * 2), -2),  # a TF1 map does not preserve cardinality
        (R(7).apply(E.map_and_batch(lambda x: x, 2)), 4),
        (R(7).prefetch(2).cache().shuffle(3), 7), (R(10).take(4), 4),
        (R(3).repeat().take(5), 5), (R(3).take(10), 3), (R(10).skip(4), 6),
        (R(3).skip(10), 0), (tf.data.Dataset.zip((R(3), R(5))), 3),
        (tf.data.Dataset.zip((R(3), R(5).repeat())), 3), (R(3).concatenate(R(4)), 7),
        (R(3).concatenate(R(4).repeat()), -1),
        (tf.data.Dataset.from_tensor_slices(np.zeros((6, 2))), 6),
        (tf.data.Dataset.from_tensor_slices(tf.SparseTensor([[0, 0], [2, 1]], [1, 2],
                                                            [4, 3])), 4),
        (tf.data.Dataset.from_tensors([1, 2]), 1), (R(10).shard(3, 1), 3),
        (R(3).flat_map(lambda x: tf.data.Dataset.from_tensors(x)), -2),
        (R(6).batch(2).apply(E.unbatch()), -2), (R(0).repeat(), 0),
        (tf.data.Dataset.zip((R(3), R(5).filter(lambda x: x > 1))), -2),
        (R(1, 10, 4), 3), (R(10, 0, -3), 4), (R(7).enumerate(), 7), (R(7).window(2), 4),
        (R(7).apply(E.ignore_errors()), -2), (E.Counter(), -1),
        (E.sample_from_datasets([R(2), R(3)]), -2)]
    with tf.Session() as sess:
        got = [int(sess.run(E.cardinality(ds))) for ds, _ in cases]
        assert got == [want for _, want in cases]
        assert sess.run(E.cardinality(R(p).batch(2)), {p: 7}) == 4
    c = E.cardinality(R(3))
    assert (c.op.type, c.dtype, c.shape.as_list()) == ("DatasetCardinality", tf.int64, [])


def test_central_crop_of_an_image_of_unknown_size():
    # Inception-style eval preprocessing on decoded images; TF 2.15's names and values
    x = tf.placeholder(tf.float32, [None, None, 3])
    x4 = tf.placeholder(tf.float32, [2, None, 7, 1])
    img = np.arange(10 * 7 * 3, dtype=np.float32).reshape(10, 7, 3)
    half, most = tf.image.central_crop(x, 0.5), tf.image.central_crop(x, 0.875)
    batch = tf.image.central_crop(x4, 0.6)
    assert (half.name, half.shape.as_list()) == ("central_crop/Slice:0", [None, None, 3])
    assert batch.shape.as_list() == [2, None, 5, 1]
    with tf.Session() as sess:
        a, b = sess.run([half, most], {x: img})
        c = sess.run(batch, {x4: np.zeros((2, 9, 7, 1), np.float32)})
    assert (a.shape, float(a.sum())) == ((6, 5, 3), 9405.0)
    assert (b.shape, float(b.sum())) == ((10, 7, 3), 21945.0)
    assert c.shape == (2, 7, 5, 1)


def test_contrib_lookup_has_tf1s_mutable_tables():
    # TF 1.15's tf.contrib.lookup.MutableHashTable / MutableDenseHashTable
    assert tf.contrib.lookup.MutableHashTable is tf.lookup.experimental.MutableHashTable
    assert tf.contrib.lookup.MutableDenseHashTable is tf.lookup.experimental.DenseHashTable
    mh = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1)
    with tf.Session() as sess:
        sess.run(mh.insert(tf.constant(["x", "y"]), tf.constant([5, 6], tf.int64)))
        assert sess.run(mh.lookup(tf.constant(["y", "q"]))).tolist() == [6, -1]
        assert sess.run(mh.size()) == 2
