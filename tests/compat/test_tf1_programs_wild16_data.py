"""TF1 input-pipeline programs, sweep 16 (area ``data``, second pass), run under TensorFlow
2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2017-2019 style): a seq2seq pipeline (``from_generator`` with dict elements
and ``args``, ``padded_batch`` with dict shapes, padding values and ``drop_remainder``,
``get_output_shapes``/``types``/``classes``) feeding an embedding model; sharded text
files through ``interleave``/``parallel_interleave``, ``window`` + ``flat_map``,
``reduce``, ``unbatch``, ``cache`` in memory and to a file, ``shard``, ``skip``/``take``/
``concatenate``/``zip``; a classifier trained through an initializable iterator over fed
placeholders, a reinitializable and a feedable iterator; ``CsvDataset``/
``make_csv_dataset`` (header, ``select_cols``, defaults, ``na_value``, bad rows and
``ignore_errors``); seeded shuffles (graph seeds, ``reshuffle_each_iteration``, a seed
fed from a placeholder), ``shuffle_and_repeat``, ``sample_from_datasets``/
``choose_from_datasets``, ``map_and_batch``, ``scan``, ``enumerate_dataset``; NMT-style
``group_by_window`` and ``bucket_by_sequence_length``; TFRecords of three compressions
read through one ``TFRecordDataset`` whose ``compression_type`` is fed, with Adam, a
Saver and summaries, plus cache lockfiles; ``concatenate``/``zip``/``window`` of dicts;
a ``from_generator`` whose ``args`` are fed (re-run at each initialization) and one whose
generator raises.

Left as is: flowgraph keeps datasets out of the graph, so ``iterator.initializer``
reads the iterator and the captured tensors (TensorFlow: ``BatchDatasetV2:0``,
``IteratorV2:0``). TensorFlow 2.15 treats an unknown ``compression_type`` ("LZ4") as
none (after logging an error); flowgraph raises a ValueError naming the allowed ones.
TensorFlow's ``bucket_by_sequence_length`` fails on an int64 length whose boundaries fit
int32 (a ``LessEqual`` dtype clash); flowgraph accepts it. TensorFlow's caching iterator
finishes the cache file one element early (its injected prefetch reads ahead) and writes
a ``tempstate`` file while it runs; flowgraph writes the cache at the end of the epoch.
A function error is its element's alone in TensorFlow whatever follows the ``map``
(``batch``, ``prefetch``, ``filter``, ``repeat``, a parallel ``map``: the next call goes
on); flowgraph's pipelines are Python generators, which an exception finishes, so only a
sequential ``map`` read by the iterator (or by ``ignore_errors``) goes on, and the others
end (``OutOfRangeError``) after the error.

Classes of discrepancy found and fixed (one focused test each below):

* ``padded_batch`` converted a Python padding value to the component's dtype (so 1.5
  padded an int64 component); TensorFlow converts it on its own (int -> int32, float ->
  float32) and raises TypeError "Invalid `padding_values` ..." on a mismatch. One
  non-nested padding value now pads every component, a padded shape of another rank
  gets TensorFlow's "not compatible" ValueError, and padding to a smaller size than an
  element is TensorFlow's ``DataLossError``.
* ``shuffle(seed=<placeholder>)`` was refused; the fed seed is now folded as TensorFlow
  folds it (with the graph seed, or 87654321 without), at each initialization.
* An error in a sequential ``map`` function ended the iterator; as in TensorFlow it is
  that element's alone, and the next ``get_next`` goes on (see above for the rest).
* A dataset function returning a tensor of the outer graph as it is (``lambda x: (c,
  x)``, a ``map`` inside ``group_by_window``'s ``reduce_func`` returning its key) was
  refused; it is captured, as TensorFlow does.
* ``TFRecordDataset`` ignored a fed ``compression_type`` (read the default of a
  ``placeholder_with_default``); it is read when the iterator is initialized.
* ``cache(filename)``: a second iterator writing the same cache while the first still
  does gets TensorFlow's ``AlreadyExistsError`` (the ``<filename>_0.lockfile``), and the
  lockfile goes when the writer ends.
* An exception raised by a ``from_generator`` generator was an InternalError; it is
  mapped as TensorFlow's py_func maps it (ValueError/TypeError -> InvalidArgumentError,
  anything else -> UnknownError; the mapping now lives in ``ops/script_ops.py`` for both).
* ``shard`` with ``num_shards <= 0`` or an index out of range raised ValueError when
  built; TensorFlow fails when the iterator starts (InvalidArgumentError, its words).
* A string handle that no ``string_handle()`` made is TensorFlow's InvalidArgumentError
  (was NotFoundError); a one-shot iterator over a placeholder says TensorFlow's "Cannot
  capture a placeholder (name:..., type:Placeholder) by value"; ``group_by_window`` and
  ``bucket_by_sequence_length`` argument errors and ``concatenate`` of unlike datasets
  ("Incompatible dataset elements") use TensorFlow's messages.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf


def _drain(t, n=60, feed=None, init=None, errors_as_text=False):
    out = []
    with tf.Session() as s:
        if init is not None:
            s.run(init, feed)
        try:
            for _ in range(n):
                out.append(s.run(t, feed))
        except tf.errors.OutOfRangeError:
            pass
        except tf.errors.OpError as e:
            if not errors_as_text:
                raise
            out.append(type(e).__name__)
    return out


def _lists(values):
    return [np.asarray(v).tolist() for v in values]


# -- programs ---------------------------------------------------------------------------------
def test_seq2seq_from_generator_dicts_padded_batch_and_embedding_model():
    def gen(n):
        rng = np.random.RandomState(0)
        for i in range(int(n)):
            length = rng.randint(1, 6)
            yield {"tokens": np.arange(length, dtype=np.int64) + i, "label": i % 3}, float(length)

    ds = tf.data.Dataset.from_generator(
        gen, ({"tokens": tf.int64, "label": tf.int32}, tf.float32),
        ({"tokens": tf.TensorShape([None]), "label": tf.TensorShape([])}, tf.TensorShape([])),
        args=(7,))
    assert ds.output_types == ({"tokens": tf.int64, "label": tf.int32}, tf.float32)
    pb = ds.padded_batch(3, padded_shapes=({"tokens": [None], "label": []}, []),
                         padding_values=({"tokens": tf.constant(-1, tf.int64), "label": 0}, 0.0))
    assert pb.output_shapes[0]["tokens"].as_list() == [None, None]
    pb2 = ds.padded_batch(3, padded_shapes=({"tokens": [8], "label": []}, []),
                          drop_remainder=True)
    shapes = tf.data.get_output_shapes(pb2)
    assert shapes[0]["tokens"].as_list() == [3, 8] and shapes[1].as_list() == [3]
    assert tf.data.get_output_types(pb2) == ({"tokens": tf.int64, "label": tf.int32}, tf.float32)
    assert tf.data.get_output_classes(pb2)[1] is tf.Tensor
    feats, length = pb.make_one_shot_iterator().get_next()
    assert (feats["tokens"].name, feats["label"].name, length.name) == (
        "IteratorGetNext:1", "IteratorGetNext:0", "IteratorGetNext:2")
    with tf.variable_scope("model"):
        emb = tf.get_variable("emb", [20, 4], initializer=tf.random_normal_initializer(seed=1))
        x = tf.nn.embedding_lookup(emb, tf.maximum(feats["tokens"], 0))
        mask = tf.cast(tf.not_equal(feats["tokens"], -1), tf.float32)
        pooled = tf.reduce_sum(x * mask[..., None], 1) / length[:, None]
    assert emb.name == "model/emb:0" and pooled.shape.as_list() == [None, 4]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        f, ln, p = s.run([feats, length, pooled])
        assert f["tokens"].tolist() == [[0, 1, 2, 3, 4], [1, -1, -1, -1, -1], [2, 3, 4, 5, -1]]
        assert f["label"].tolist() == [0, 1, 2] and ln.tolist() == [5.0, 1.0, 4.0]
        np.testing.assert_allclose(p[0], [0.3367, 0.5124, 0.1308, -0.9565], atol=1e-4)
        f, ln, _ = s.run([feats, length, pooled])
        assert f["tokens"].tolist() == [[3, 4, 5, 6], [4, 5, 6, 7], [5, 6, -1, -1]]
        f, ln, p = s.run([feats, length, pooled])
        assert f["tokens"].tolist() == [[6, 7, 8, 9]]
        np.testing.assert_allclose(p[0], [-0.0217, -0.6138, 0.2075, -0.6792], atol=1e-4)
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(length)
    first = _drain(pb2.make_one_shot_iterator().get_next(), 1)[0]
    assert first[0]["tokens"].tolist() == [[0, 1, 2, 3, 4, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0],
                                           [2, 3, 4, 5, 0, 0, 0, 0]]


def test_text_shards_interleave_window_reduce_unbatch_and_caches(tmp_path):
    files = []
    for i in range(3):
        p = tmp_path / f"part-{i}.txt"
        p.write_text("".join(f"{i},{j}\n" for j in range(4)))
        files.append(str(p))
    fds = tf.data.Dataset.from_tensor_slices(files)
    lines = fds.interleave(lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=2,
                           block_length=2)
    parsed = lines.map(lambda ln: tf.string_to_number(tf.string_split([ln], ",").values,
                                                      tf.int32))
    assert parsed.output_shapes.as_list() == [None]
    assert _lists(_drain(parsed.make_one_shot_iterator().get_next())) == [
        [0, 1], [0, 2], [1, 1], [1, 2], [0, 3], [1, 3], [2, 1], [2, 2], [2, 3]]
    pi = fds.apply(tf.data.experimental.parallel_interleave(
        lambda f: tf.data.TextLineDataset(f), cycle_length=3, block_length=1, sloppy=False))
    assert _drain(pi.make_one_shot_iterator().get_next(), 7) == [
        b"0,0", b"1,0", b"2,0", b"0,1", b"1,1", b"2,1", b"0,2"]
    r = tf.data.Dataset.range(10)
    w = r.window(4, shift=3, stride=1).flat_map(lambda x: x.batch(4))
    w2 = r.window(3, shift=2, stride=2, drop_remainder=True).flat_map(
        lambda x: x.batch(3, drop_remainder=True))
    assert (w.output_shapes.as_list(), w2.output_shapes.as_list()) == ([None], [3])
    assert _lists(_drain(w.make_one_shot_iterator().get_next())) == [
        [0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9], [9]]
    assert _lists(_drain(w2.make_one_shot_iterator().get_next())) == [
        [0, 2, 4], [2, 4, 6], [4, 6, 8]]
    tot = r.reduce(np.int64(0), lambda a, x: a + x)
    st = r.map(lambda x: (x, tf.cast(x, tf.float32) * 0.5)).reduce(
        (np.int64(0), 0.0), lambda a, x: (a[0] + x[0], tf.maximum(a[1], x[1])))
    assert (tot.name, st[0].name, st[1].name) == (
        "ReduceDataset:0", "ReduceDataset_1:0", "ReduceDataset_1:1")
    ub = r.batch(4).map(lambda x: (x, x * 2)).apply(tf.data.experimental.unbatch())
    assert [tuple(int(v) for v in e) for e in _drain(ub.make_one_shot_iterator().get_next())][
        -2:] == [(8, 16), (9, 18)]
    cache_file = str(tmp_path / "cache")
    cached = r.map(lambda x: x * x).cache(cache_file).shard(3, 1)
    cached_mem = r.cache().skip(2).take(5).concatenate(tf.data.Dataset.range(100, 103))
    z = tf.data.Dataset.zip((r, r.skip(5), tf.data.Dataset.from_tensors([1.0, 2.0]).repeat()))
    assert z.output_types == (tf.int64, tf.int64, tf.float32)
    assert _lists(_drain(cached.make_one_shot_iterator().get_next())) == [1, 16, 49]
    assert _lists(_drain(cached.make_one_shot_iterator().get_next())) == [1, 16, 49]
    assert _lists(_drain(cached_mem.make_one_shot_iterator().get_next())) == [
        2, 3, 4, 5, 6, 100, 101, 102]
    assert [int(e[1]) for e in _drain(z.make_one_shot_iterator().get_next())] == [5, 6, 7, 8, 9]
    assert sorted(os.listdir(tmp_path))[:2] == ["cache.data-00000-of-00001", "cache.index"]
    with tf.Session() as s:
        assert s.run(tot) == 45 and s.run(st) == (45, 4.5)
    with pytest.raises(TypeError, match=r"^Incompatible dataset elements:\n  int64 \(\) vs\. "
                                        r"  float64 \(\)"):
        r.concatenate(tf.data.Dataset.from_tensor_slices(np.array([1.0])))


def test_classifier_over_initializable_reinitializable_and_feedable_iterators():
    tf.set_random_seed(42)
    x_ph = tf.placeholder(tf.float32, [None, 3], name="x_ph")
    y_ph = tf.placeholder(tf.int64, [None], name="y_ph")
    bs = tf.placeholder(tf.int64, [], name="bs")
    it = tf.data.Dataset.from_tensor_slices((x_ph, y_ph)).shuffle(100, seed=3).batch(bs) \
        .make_initializable_iterator()
    assert (it.initializer.name, it.initializer.type) == ("MakeIterator", "MakeIterator")
    xb, yb = it.get_next(name="batch")
    assert (xb.name, yb.name, xb.shape.as_list()) == ("batch:0", "batch:1", [None, 3])
    with tf.variable_scope("clf"):
        w = tf.get_variable("w", [3, 2], initializer=tf.glorot_uniform_initializer(seed=0))
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=yb, logits=tf.matmul(xb, w) + b))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    X = np.random.RandomState(0).randn(10, 3).astype(np.float32)
    Y = (X[:, 0] > 0).astype(np.int64)
    losses = []
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            s.run(xb)
        for _ in range(3):
            s.run(it.initializer, {x_ph: X, y_ph: Y, bs: 4})
            ys = []
            try:
                while True:
                    l_, yv, _ = s.run([loss, yb, train])
                    ys.append(yv.tolist())
            except tf.errors.OutOfRangeError:
                pass
            assert ys == [[1, 1, 1, 1], [1, 1, 0, 1], [1, 1]]
            losses.append(round(float(l_), 5))
        np.testing.assert_allclose(s.run(w), [[0.10025, 1.54677], [0.07971, -0.04518],
                                              [0.5763, -0.20736]], atol=1e-5)
    assert losses == pytest.approx([0.14203, 0.07011, 0.04586], abs=1e-5)
    tr = tf.data.Dataset.range(6).map(lambda v: tf.cast(v, tf.float32)).batch(2)
    va = tf.data.Dataset.range(3).map(lambda v: tf.cast(v, tf.float32) * 10).batch(2)
    rit = tf.data.Iterator.from_structure(tr.output_types, tr.output_shapes)
    tr_init, va_init = rit.make_initializer(tr, name="train_init"), rit.make_initializer(va)
    assert (tr_init.name, va_init.name) == ("train_init", "make_initializer")
    nxt = rit.get_next()
    with tf.Session() as s:
        s.run(tr_init)
        assert _lists([s.run(nxt), s.run(nxt)]) == [[0.0, 1.0], [2.0, 3.0]]
        s.run(va_init)
        assert _lists([s.run(nxt), s.run(nxt)]) == [[0.0, 10.0], [20.0]]
    handle = tf.placeholder(tf.string, shape=[], name="handle")
    fnext = tf.data.Iterator.from_string_handle(handle, tr.output_types,
                                                tr.output_shapes).get_next()
    t_it, v_it = tr.repeat().make_one_shot_iterator(), va.make_initializable_iterator()
    th, vh = t_it.string_handle(), v_it.string_handle()
    assert (fnext.name, th.name, vh.name, v_it.initializer.name) == (
        "IteratorGetNext_1:0", "IteratorToStringHandle_3:0", "IteratorToStringHandle_4:0",
        "MakeIterator_1")
    with tf.Session() as s:
        thv, vhv = s.run([th, vh])
        assert _lists([s.run(fnext, {handle: thv}) for _ in range(4)]) == [
            [0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [0.0, 1.0]]
        s.run(v_it.initializer)
        assert _lists([s.run(fnext, {handle: vhv}), s.run(fnext, {handle: thv})]) == [
            [0.0, 10.0], [2.0, 3.0]]


def test_csv_datasets_header_select_cols_defaults_and_bad_rows(tmp_path):
    p = str(tmp_path / "train.csv")
    with open(p, "w") as f:
        f.write("age,income,city,label\n25,50000.5,paris,1\n32,,berlin,0\nNA,72000,NA,1\n"
                "41,61000.25,\"new york\",0\n19,12000,rome,1\n")
    cds = tf.data.experimental.CsvDataset(
        p, [tf.constant([0], tf.int32), [0.0], tf.string, tf.constant([], tf.int64)],
        header=True, na_value="NA")
    assert cds.output_types == (tf.int32, tf.float32, tf.string, tf.int64)
    got = _drain(cds.make_one_shot_iterator().get_next(), errors_as_text=True)
    assert got[:2] == [(25, 50000.5, b"paris", 1), (32, 0.0, b"berlin", 0)]
    assert got[2] == "InvalidArgumentError"
    cds2 = tf.data.experimental.CsvDataset(p, [[0], [0.0], [""], [0]], header=True,
                                           na_value="NA")
    assert _drain(cds2.make_one_shot_iterator().get_next())[2:] == [
        (0, 72000.0, b"", 1), (41, 61000.25, b"new york", 0), (19, 12000.0, b"rome", 1)]
    cds3 = tf.data.experimental.CsvDataset(p, [[-1], [0]], header=True, select_cols=[0, 3],
                                           na_value="NA")
    assert _drain(cds3.make_one_shot_iterator().get_next()) == [
        (25, 1), (32, 0), (-1, 1), (41, 0), (19, 1)]
    mk = tf.data.experimental.make_csv_dataset(p, batch_size=2, label_name="label",
                                               shuffle=False, num_epochs=1, na_value="NA",
                                               column_defaults=[0, 0.0, "", 0])
    f, lab = mk.make_one_shot_iterator().get_next()
    assert (lab.name, f["city"].name) == ("IteratorGetNext_3:3", "IteratorGetNext_3:1")
    batches = _drain((f, lab))
    assert [b[0]["age"].tolist() for b in batches] == [[25, 32], [0, 41], [19]]
    assert batches[1][0]["city"].tolist() == [b"", b"new york"]
    mk2 = tf.data.experimental.make_csv_dataset(
        p, batch_size=3, select_columns=["age", "label"], shuffle=True, shuffle_seed=7,
        num_epochs=2, na_value="NA", column_defaults=[-1, 0])
    assert [b["age"].tolist() for b in _drain(mk2.make_one_shot_iterator().get_next())] == [
        [-1, 19, 25], [41, 32, 19], [41, 32, 25], [-1]]
    with pytest.raises(ValueError, match="`label_name` provided must be one of the columns"):
        tf.data.experimental.make_csv_dataset(p, batch_size=2, label_name="target")
    p2 = str(tmp_path / "bad.csv")
    with open(p2, "w") as fh:
        fh.write("1,2\n3,4,5\n6,x\n")
    bad = tf.data.experimental.CsvDataset(p2, [[0], [0]])
    assert _drain(bad.make_one_shot_iterator().get_next(), errors_as_text=True) == [
        (1, 2), "InvalidArgumentError"]
    assert _drain(bad.apply(tf.data.experimental.ignore_errors())
                  .make_one_shot_iterator().get_next()) == [(1, 2)]


def test_seeded_shuffles_sampling_map_and_batch_scan_and_enumerate():
    tf.set_random_seed(1234)
    a = tf.data.Dataset.range(8).shuffle(8).repeat(2)
    b = tf.data.Dataset.range(8).shuffle(4, reshuffle_each_iteration=False).repeat(2)
    c = tf.data.Dataset.range(8).repeat(2).shuffle(5, seed=9)
    d = tf.data.Dataset.range(10).apply(tf.data.experimental.shuffle_and_repeat(6, count=2))
    noise = tf.data.Dataset.range(4).map(lambda x: tf.random_uniform([2]))
    e = tf.data.experimental.sample_from_datasets(
        [tf.data.Dataset.from_tensors(0).repeat(), tf.data.Dataset.from_tensors(1).repeat(),
         tf.data.Dataset.from_tensors(2).repeat(3)], weights=[0.2, 0.3, 0.5])
    f = tf.data.experimental.choose_from_datasets(
        [tf.data.Dataset.range(0, 5), tf.data.Dataset.range(10, 15)],
        tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0, 1, 0], tf.int64)))
    rnd = tf.random_normal([2], name="after")
    got = [_lists(_drain(ds.make_one_shot_iterator().get_next(), 16))
           for ds in (a, b, c, d, e, f)]
    assert got == [
        [1, 4, 5, 2, 7, 3, 6, 0, 1, 4, 2, 7, 5, 6, 3, 0],
        [0, 2, 5, 6, 7, 1, 4, 3, 0, 2, 5, 6, 7, 1, 4, 3],
        [2, 4, 3, 7, 6, 0, 5, 2, 3, 5, 6, 4, 1, 0, 1, 7],
        [3, 6, 0, 2, 7, 5, 1, 9, 8, 4, 0, 2, 5, 1, 6, 9],
        [2, 2, 2, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1],
        [0, 10, 11, 1, 12, 2]]
    np.testing.assert_allclose(_drain(noise.make_one_shot_iterator().get_next())[3],
                               [0.7022817, 0.6277946], atol=1e-6)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(rnd), [0.4632, 1.49795], atol=1e-5)
    mb = tf.data.Dataset.range(7).apply(tf.data.experimental.map_and_batch(
        lambda x: x * 2, 3, drop_remainder=True, num_parallel_calls=2))
    assert mb.output_shapes.as_list() == [3]
    assert _lists(_drain(mb.make_one_shot_iterator().get_next())) == [[0, 2, 4], [6, 8, 10]]
    sc = tf.data.Dataset.range(1, 6).apply(
        tf.data.experimental.scan(np.int64(0), lambda st, x: (st + x, (st, x * st))))
    assert [tuple(int(v) for v in t) for t in _drain(sc.make_one_shot_iterator().get_next())] \
        == [(0, 0), (1, 2), (3, 9), (6, 24), (10, 50)]
    en = tf.data.Dataset.from_tensor_slices(["a", "b", "c"]).apply(
        tf.data.experimental.enumerate_dataset(start=5))
    assert en.output_types == (tf.int64, tf.string)
    assert _drain(en.make_one_shot_iterator().get_next()) == [(5, b"a"), (6, b"b"), (7, b"c")]


def test_nmt_group_by_window_and_bucket_by_sequence_length():
    lens = [3, 1, 7, 2, 5, 4, 6, 2, 8, 1, 3]
    src = tf.data.Dataset.from_tensor_slices(tf.constant(lens, tf.int32)).map(
        lambda n: (tf.range(n) + 1, n))

    def key_func(x, n):
        return tf.cast(tf.minimum(n // 3, 2), tf.int64)

    gw = src.apply(tf.data.experimental.group_by_window(
        key_func, lambda key, w: w.padded_batch(2, padded_shapes=([None], []),
                                                padding_values=(0, 0)), window_size=2))
    assert [s.as_list() for s in gw.output_shapes] == [[None, None], [None]]
    assert [n.tolist() for _, n in _drain(gw.make_one_shot_iterator().get_next())] == [
        [1, 2], [3, 5], [7, 6], [2, 1], [4, 3], [8]]
    bb = src.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda x, n: n, bucket_boundaries=[3, 6], bucket_batch_sizes=[2, 2, 1]))
    got = _drain(bb.make_one_shot_iterator().get_next())
    assert [n.tolist() for _, n in got] == [[7], [1, 2], [3, 5], [6], [8], [2, 1], [4, 3]]
    assert got[2][0].tolist() == [[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]]
    bb2 = src.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda x, n: n, [3, 6], [2, 2, 2], padded_shapes=([None], []),
        padding_values=(-1, 0), pad_to_bucket_boundary=True))
    got = _drain(bb2.make_one_shot_iterator().get_next(), errors_as_text=True)
    assert [g[0].tolist() for g in got[:2]] == [[[1, -1], [1, 2]],
                                                [[1, 2, 3, -1, -1], [1, 2, 3, 4, 5]]]
    assert got[2] == "InvalidArgumentError"
    bb3 = src.filter(lambda x, n: n < 6).apply(tf.data.experimental.bucket_by_sequence_length(
        lambda x, n: n, [3, 6], [2, 2, 2], pad_to_bucket_boundary=True, drop_remainder=True))
    assert [g[0].shape for g in _drain(bb3.make_one_shot_iterator().get_next())] == [
        (2, 2), (2, 5), (2, 2), (2, 5)]
    dsd = tf.data.Dataset.from_tensor_slices({"len": tf.constant(lens, tf.int64)}).map(
        lambda d: {"ids": tf.ones([d["len"]], tf.int64), "len": d["len"]})
    bbd = dsd.apply(tf.data.experimental.bucket_by_sequence_length(lambda d: d["len"], [4],
                                                                   [3, 2]))
    assert [(d["ids"].shape, d["len"].tolist())
            for d in _drain(bbd.make_one_shot_iterator().get_next())] == [
        ((3, 3), [3, 1, 2]), ((2, 7), [7, 5]), ((2, 6), [4, 6]), ((3, 3), [2, 1, 3]),
        ((1, 8), [8])]


def test_tfrecord_compressions_through_one_fed_dataset_with_adam_saver_and_summaries(tmp_path):
    paths = {}
    for comp in ["", "GZIP", "ZLIB"]:
        p = str(tmp_path / f"data_{comp or 'none'}.tfrecord")
        opts = tf.python_io.TFRecordOptions(
            getattr(tf.python_io.TFRecordCompressionType, comp or "NONE"))
        with tf.python_io.TFRecordWriter(p, options=opts) as w:
            for i in range(5):
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, i * 1.5])),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}))
                w.write(ex.SerializeToString())
        paths[comp] = p
    fn_ph = tf.placeholder(tf.string, [None], name="filenames")
    comp_ph = tf.placeholder_with_default("", [], name="comp")

    def parse(rec):
        f = tf.parse_single_example(rec, {"x": tf.FixedLenFeature([2], tf.float32),
                                          "y": tf.FixedLenFeature([], tf.int64)})
        return f["x"], f["y"]

    ds = tf.data.TFRecordDataset(fn_ph, compression_type=comp_ph).map(parse).cache().batch(2)
    it = ds.make_initializable_iterator()
    x, y = it.get_next()
    with tf.variable_scope("lin"):
        w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer(0.1))
    loss = tf.reduce_mean(tf.square(tf.squeeze(tf.matmul(x, w), 1) - tf.cast(y, tf.float32)))
    gs = tf.train.get_or_create_global_step()
    step = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)
    tf.summary.scalar("loss", loss)
    assert tf.summary.merge_all() is not None
    saver = tf.train.Saver()
    want = {"GZIP": [0.32, 0.34, 1.49722], "ZLIB": [0.34884, 0.34539, 0.00032],
            "": [0.55954, 0.83899, 0.1182]}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for comp in ["GZIP", "ZLIB", ""]:
            s.run(it.initializer, {fn_ph: [paths[comp]], comp_ph: comp})
            ls = []
            try:
                while True:
                    ls.append(s.run([loss, step])[0])
            except tf.errors.OutOfRangeError:
                pass
            np.testing.assert_allclose(ls, want[comp], atol=1e-5)
        np.testing.assert_allclose(s.run(w), [[-0.02789], [-0.02789]], atol=1e-5)
        assert os.path.basename(saver.save(s, str(tmp_path / "model"), global_step=gs)) == \
            "model-9"
        s.run(it.initializer, {fn_ph: [paths["GZIP"]], comp_ph: ""})
        with pytest.raises(tf.errors.DataLossError):
            s.run(x)
        s.run(it.initializer, {fn_ph: [str(tmp_path / "missing.tfrecord")]})
        with pytest.raises(tf.errors.NotFoundError):
            s.run(x)
    two = tf.data.TFRecordDataset([paths["GZIP"]] * 2, "GZIP", num_parallel_reads=2).map(
        lambda r: tf.parse_single_example(r, {"y": tf.FixedLenFeature([], tf.int64)})["y"])
    assert _lists(_drain(two.make_one_shot_iterator().get_next())) == [
        0, 0, 1, 1, 0, 0, 1, 1, 0, 0]


def test_concatenate_zip_and_window_of_dicts_interleave_and_unbatch():
    a = tf.data.Dataset.from_tensor_slices(np.zeros([4, 3], np.float32))
    b = tf.data.Dataset.from_tensor_slices(np.zeros([2, 5], np.float32))
    assert a.concatenate(b).output_shapes.as_list() == [None]
    assert _lists(_drain(tf.data.Dataset.range(5).take(-1).make_one_shot_iterator()
                         .get_next())) == [0, 1, 2, 3, 4]
    assert _drain(tf.data.Dataset.range(5).skip(-1).make_one_shot_iterator().get_next()) == []
    z = tf.data.Dataset.zip({"a": tf.data.Dataset.range(3), "b": (
        tf.data.Dataset.range(3, 6), tf.data.Dataset.from_tensors("s").repeat())})
    assert z.output_types == {"a": tf.int64, "b": (tf.int64, tf.string)}
    assert _drain(z.make_one_shot_iterator().get_next())[-1] == {"a": 2, "b": (5, b"s")}
    w = tf.data.Dataset.from_tensor_slices({"x": np.arange(6), "y": np.arange(6) * 10}).window(
        4, 2, drop_remainder=True)
    wf = w.flat_map(lambda d: tf.data.Dataset.zip((d["x"].batch(4), d["y"].batch(4))))
    assert [tuple(v.tolist() for v in e) for e in _drain(wf.make_one_shot_iterator()
                                                         .get_next())] == [
        ([0, 1, 2, 3], [0, 10, 20, 30]), ([2, 3, 4, 5], [20, 30, 40, 50])]
    il = tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2,
        num_parallel_calls=2)
    assert _lists(_drain(il.make_one_shot_iterator().get_next())) == [1, 2, 2, 3, 3, 3]
    assert _lists(_drain(tf.data.Dataset.range(2, 10, 3).make_one_shot_iterator()
                         .get_next())) == [2, 5, 8]
    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op"):
        tf.data.Dataset.range(4).reduce(tf.constant(0, tf.int32), lambda s, x: s + x)
    ub = tf.data.Dataset.from_tensors(np.zeros([0, 2])).unbatch()
    assert ub.output_shapes.as_list() == [2]
    assert _drain(ub.make_one_shot_iterator().get_next()) == []
    with pytest.raises(ValueError, match="scalar components"):
        tf.data.Dataset.range(3).unbatch()



def test_from_generator_args_from_placeholders_rerun_per_initialization():
    calls = []

    def gen(n, scale):
        calls.append((int(n), float(scale)))
        for i in range(int(n)):
            yield {"x": np.full([2], i * scale, np.float32), "id": str(i).encode()}

    n_ph = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.from_generator(gen, {"x": tf.float32, "id": tf.string},
                                        args=(n_ph, tf.constant(0.5)))
    assert ds.output_shapes["x"].ndims is None
    ds2 = tf.data.Dataset.from_generator(gen, {"x": tf.float32, "id": tf.string},
                                         {"x": [None], "id": []}, args=(3, 2.0))
    assert ds2.output_shapes["x"].as_list() == [None]
    it = ds.batch(2).make_initializable_iterator()
    el = it.get_next()
    assert (el["x"].name, el["id"].name, el["x"].shape.ndims) == (
        "IteratorGetNext:1", "IteratorGetNext:0", None)
    got = {}
    with tf.Session() as s:
        for n in (3, 1):
            s.run(it.initializer, {n_ph: n})
            got[n] = []
            try:
                while True:
                    v = s.run(el)
                    got[n].append((v["x"].tolist(), v["id"].tolist()))
            except tf.errors.OutOfRangeError:
                pass
    assert got == {3: [([[0.0, 0.0], [0.5, 0.5]], [b"0", b"1"]), ([[1.0, 1.0]], [b"2"])],
                   1: [([[0.0, 0.0]], [b"0"])]}
    assert calls == [(3, 0.5), (1, 0.5)]
    with pytest.raises(TypeError, match="must be"):
        tf.data.Dataset.from_generator([1, 2], tf.int32)

# -- focused tests of the fixed classes -------------------------------------------------------
def test_padded_batch_padding_values_are_converted_and_checked_as_tensorflow():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(2, 6)).map(lambda x: tf.range(x))
    for value, got in [(1.5, "float32"), (tf.constant(1, tf.int32), "int32"), ("a", "string"),
                       (0, "int32")]:
        with pytest.raises(TypeError, match=f"`padding_values` values type <dtype: '{got}'> "
                                            "does not match type <dtype: 'int64'>"):
            ds.padded_batch(3, padded_shapes=[None], padding_values=value)
    with pytest.raises(ValueError, match=r"The padded shape \(\?, \?\) is not compatible "
                                         r"with the shape \(\?,\)"):
        ds.padded_batch(3, padded_shapes=[None, None])
    # one value pads every component
    pairs = ds.map(lambda x: (x, x * 10)).padded_batch(
        2, padded_shapes=([None], [None]), padding_values=np.int64(-1))
    first = _drain(pairs.make_one_shot_iterator().get_next(), 1)[0]
    assert _lists(first) == [[[0, 1, -1], [0, 1, 2]], [[0, 10, -1], [0, 10, 20]]]


def test_padded_batch_to_a_smaller_size_is_data_loss():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(2, 6)).map(lambda x: tf.range(x))
    nxt = ds.padded_batch(3, padded_shapes=[2]).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        with pytest.raises(tf.errors.DataLossError,
                           match="Attempted to pad to a smaller size than the input element"):
            s.run(nxt)


def test_shuffle_seed_fed_from_a_placeholder_gives_tensorflow_orders():
    want = {
        (None, 0): [4, 0, 6, 5, 3, 1, 7, 2, 7, 6, 2, 1, 0, 3, 5, 4],
        (None, 2**31 + 4): [5, 6, 7, 2, 0, 3, 4, 1, 4, 3, 5, 1, 7, 0, 6, 2],
        (0, 0): [2, 3, 1, 7, 5, 0, 4, 6, 6, 1, 0, 4, 3, 2, 7, 5],
        (7, 5): [4, 7, 3, 2, 0, 1, 5, 6, 7, 0, 4, 2, 5, 3, 1, 6],
    }
    for gseed in (None, 0, 7):
        with tf.Graph().as_default():
            if gseed is not None:
                tf.set_random_seed(gseed)
            ph = tf.placeholder(tf.int64, [])
            it = tf.data.Dataset.range(8).shuffle(8, seed=ph).repeat(2) \
                .make_initializable_iterator()
            nx = it.get_next()
            with tf.Session() as s:
                for (g, seed), order in want.items():
                    if g == gseed:
                        s.run(it.initializer, {ph: seed})
                        assert [int(s.run(nx)) for _ in range(16)] == order
    with tf.Graph().as_default():
        tf.set_random_seed(1234)
        ph = tf.placeholder(tf.int64, [])
        it = tf.data.Dataset.range(6).shuffle(6, seed=ph).make_initializable_iterator()
        nx = it.get_next()
        with tf.Session() as s:
            orders = []
            for seed in (1, 2, 1):
                s.run(it.initializer, {ph: seed})
                orders.append([int(s.run(nx)) for _ in range(6)])
    assert orders == [[0, 4, 5, 1, 3, 2], [3, 5, 1, 0, 2, 4], [0, 4, 5, 1, 3, 2]]


def test_map_function_error_belongs_to_its_element_and_the_iterator_goes_on():
    ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(
        lambda x: tf.check_numerics(1.0 / x, "bad"))
    nx = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(nx) == 1.0
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(nx)
        assert s.run(nx) == 0.5
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nx)
    ie = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0, -1.0]).map(
        lambda x: tf.check_numerics(1.0 / x, "bad")).apply(tf.data.experimental.ignore_errors())
    assert _lists(_drain(ie.make_one_shot_iterator().get_next())) == [1.0, 0.5, -1.0]


def test_dataset_functions_may_return_outer_tensors_as_they_are():
    c = tf.constant(7, tf.int32)
    d = tf.data.Dataset.range(3).map(lambda x: (c, x))
    assert d.output_types == (tf.int32, tf.int64) and d.output_shapes[0].as_list() == []
    d2 = tf.data.Dataset.range(2).flat_map(
        lambda x: tf.data.Dataset.range(3).map(lambda y: (x, y)))
    d4 = tf.data.Dataset.range(2).map(lambda x: {"a": x, "c": c})
    assert _drain(d.make_one_shot_iterator().get_next()) == [(7, 0), (7, 1), (7, 2)]
    assert _drain(d2.make_one_shot_iterator().get_next()) == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert _drain(d4.make_one_shot_iterator().get_next()) == [{"a": 0, "c": 7},
                                                              {"a": 1, "c": 7}]
    # a map inside group_by_window's reduce_func returning the window's key
    src = tf.data.Dataset.range(6)
    gw = src.apply(tf.data.experimental.group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(3).map(lambda v: (k, tf.reduce_max(v))),
        window_size=3))
    assert _drain(gw.make_one_shot_iterator().get_next()) == [(0, 4), (1, 5)]


def test_tfrecord_compression_type_fed_when_the_iterator_starts(tmp_path):
    paths = {}
    for comp in ("GZIP", "ZLIB"):
        paths[comp] = str(tmp_path / f"{comp}.tfrecord")
        with tf.python_io.TFRecordWriter(paths[comp], options=tf.python_io.TFRecordOptions(
                comp)) as w:
            for rec in (b"a", b"bc"):
                w.write(rec)
    fn = tf.placeholder(tf.string, [])
    comp_ph = tf.placeholder(tf.string, [])
    it = tf.data.TFRecordDataset(fn, compression_type=comp_ph).make_initializable_iterator()
    nx = it.get_next()
    with tf.Session() as s:
        for comp in ("GZIP", "ZLIB"):
            s.run(it.initializer, {fn: paths[comp], comp_ph: comp})
            assert [s.run(nx), s.run(nx)] == [b"a", b"bc"]
        s.run(it.initializer, {fn: paths["GZIP"], comp_ph: "ZLIB"})
        with pytest.raises(tf.errors.DataLossError):
            s.run(nx)


def test_cache_file_being_written_is_locked_against_a_second_writer(tmp_path):
    cf = str(tmp_path / "c")
    cds = tf.data.Dataset.range(5).cache(cf)
    n1 = cds.make_one_shot_iterator().get_next()
    n2 = cds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(n1) == 0
        assert "c_0.lockfile" in os.listdir(tmp_path)  # (TF also has a tempstate file)
        with pytest.raises(tf.errors.AlreadyExistsError,
                           match=r"concurrent caching iterator running - cache lockfile "
                                 r"already exists \('.*c_0.lockfile'\)"):
            s.run(n2)
        assert [s.run(n1) for _ in range(4)] == [1, 2, 3, 4]
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(n1)
    assert sorted(os.listdir(tmp_path)) == ["c.data-00000-of-00001", "c.index"]
    assert _lists(_drain(tf.data.Dataset.range(3).cache(cf).make_one_shot_iterator()
                         .get_next())) == [0, 1, 2, 3, 4]


def test_shard_arguments_are_checked_when_the_iterator_starts():
    for n, i, msg in [(3, 3, r"Index must be between 0 and 2 \(currently index = 3\)"),
                      (0, 0, r"Number of shards must be greater than zero \(currently "
                             r"num_shards = 0\)"),
                      (2, -1, r"Index must be between 0 and 1 \(currently index = -1\)")]:
        nx = tf.data.Dataset.range(5).shard(n, i).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                s.run(nx)


def test_iterator_and_grouping_errors_use_tensorflow_classes_and_messages():
    x_ph = tf.placeholder(tf.float32, [None, 3], name="x_ph")
    with pytest.raises(ValueError, match=r"Cannot capture a placeholder \(name:x_ph, "
                                         r"type:Placeholder\) by value"):
        tf.data.Dataset.from_tensors(x_ph).make_one_shot_iterator()
    ds = tf.data.Dataset.range(3)
    handle = tf.placeholder(tf.string, [])
    nxt = tf.data.Iterator.from_string_handle(handle, ds.output_types,
                                              ds.output_shapes).get_next()
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(nxt, {handle: b"garbage"})
    src = tf.data.Dataset.range(5).map(lambda x: (x, x))
    with pytest.raises(ValueError, match=r"^`len\(bucket_batch_sizes\)` must equal "
                                         r"`len\(bucket_boundaries\) \+ 1` but "
                                         r"`len\(bucket_batch_sizes\)=2` and "
                                         r"`len\(bucket_boundaries\)=2`\.$"):
        src.apply(tf.data.experimental.bucket_by_sequence_length(lambda x, n: n, [3, 6],
                                                                 [2, 2]))
    with pytest.raises(ValueError, match=r"^Either the `window_size` argument or the "
                                         r"`window_size_func` argument must be specified"):
        src.apply(tf.data.experimental.group_by_window(lambda x, n: n, lambda k, w: w))


def test_generator_exceptions_become_tensorflow_errors_by_kind():
    def failing(exc):
        def gen():
            yield 1
            raise exc
        return gen

    for exc, cls in [(RuntimeError("disk gone"), tf.errors.UnknownError),
                     (ValueError("bad value"), tf.errors.InvalidArgumentError),
                     (KeyError("k"), tf.errors.UnknownError)]:
        nx = tf.data.Dataset.from_generator(failing(exc), tf.int32, tf.TensorShape([])) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as s:
            assert s.run(nx) == 1
            with pytest.raises(cls, match=type(exc).__name__):
                s.run(nx)
            with pytest.raises(tf.errors.OutOfRangeError):
                s.run(nx)
