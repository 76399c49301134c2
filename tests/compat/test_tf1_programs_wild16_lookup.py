"""TF1 lookup-table programs, sweep 16 (area ``lookup``), run under TensorFlow 2.15 and
flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): a bag-of-words classifier over a vocabulary file
(``tf.contrib.lookup.index_table_from_file`` with OOV buckets on ``string_split`` tokens,
embedding, a few SGD steps); ``TextFileInitializer`` tables over a CSV with column
indices, a delimiter, ``LINE_NUMBER``/``WHOLE_LINE`` and the run-time errors (table not
initialized, duplicate keys, missing file, short file, too few columns); a word counter
on a ``MutableHashTable`` (insert/lookup/export/remove/size) saved and restored through
a default ``tf.train.Saver``; a ``MutableHashTable`` of vector values and a
``MutableDenseHashTable``; a seq2seq input pipeline with source/target vocabulary tables
and ``index_to_string_table_from_file`` inside ``tf.data`` maps; an Estimator whose
input_fn builds an ``index_table_from_tensor`` table; ``IdTableWithHashBuckets`` with
the strong and legacy hashers, ``StaticVocabularyTable`` over int64 keys looked up as
int32, ``index_table_from_tensor`` on a SparseTensor and the helpers' argument errors;
vocabulary feature columns in ``input_layer``; a sparse lookup and a table inside a
dataset map driven by a ``MonitoredTrainingSession``; table and op names under ``name``
arguments, with a vocabulary path fed through a placeholder.

Classes of discrepancy found and fixed (one focused test each below):

* Mutable tables were named after their op's full name, so their ops doubled the
  variable scope (``counts/counts/word_counts_lookup_table_find``); TensorFlow names a
  table after the last part of its op name.
* Mutable tables were not checkpointed: TensorFlow adds each table (``checkpoint=True``)
  to ``SAVEABLE_OBJECTS`` at construction (exporting it then, so a later ``export()`` is
  ``..._export_values_1``), and a default Saver writes ``<name>-keys``/``<name>-values``
  and restores them with ``LookupTableImportV2``; the table ops share by node name.
* ``MutableHashTable`` refused a non-scalar ``default_value``; TensorFlow builds a
  ``MutableHashTableOfTensorsV2`` with that ``value_shape``.
* Static shapes: ``LookupTableExportV2`` gave ``(?,)`` outputs and ``LookupTableInsertV2``
  rejected mismatched keys/values while building; TensorFlow leaves the exports unknown
  and reports the mismatch when the insert runs (InvalidArgumentError).
* Two table ops of one ``shared_name`` with other key/value dtypes silently shared
  one table; TensorFlow's table op fails ("Conflicting key/value dtypes string->int64
  with string-float for table vocab").
* ``HashTableV2`` ran for any key/value dtypes; TensorFlow's kernel exists for string
  keys (string, int64, int32, float, double, bool values), int64 keys (all but bool) and
  int32 keys (string, int32, float, double): other pairs (int32 -> bool, int32 -> int64)
  fail when run with "No OpKernel was registered to support Op 'HashTableV2'"
  (InvalidArgumentError).
* Error messages: reading a table before its initializer ran, a duplicate key with
  another value, and looking up a dense table's ``empty_key``/``deleted_key`` (which was
  not an error at all) now carry TensorFlow's words.

Left as is (TensorFlow's values in the tests or here): vocabulary feature columns are
one ``VocabLookup`` op in flowgraph (no ``table_initializer`` entries, no "Table not
initialized" error; TensorFlow lists ``input_layer/color_indicator/color_lookup/
hash_table/table_init/InitializeTableFromTextFileV2`` and raises FailedPreconditionError
before ``tables_initializer`` runs), values agree; ``MutableDenseHashTable.export``
returns TensorFlow's whole bucket array there ((8, 1) keys for 8 buckets, empty slots
included), only the entries here; TensorFlow accepts float keys in
``KeyValueTensorInitializer`` until the table op runs (no kernel), flowgraph raises a
TypeError while building; TensorFlow's class names ``StaticHashTableV1``/
``StaticVocabularyTableV1`` for the TF1 aliases. TensorFlow's placer fails every run of
a session whose graph holds a table op without a kernel; flowgraph fails the runs that
use it. ``make_one_shot_iterator`` over a dataset whose map looks up a table:
TensorFlow raises ValueError "Cannot capture a stateful node (name:hash_table,
type:HashTableV2) by value." (use an initializable iterator); flowgraph runs it (its
dataset functions fill their own copy of the table). TensorFlow gives a table filled from a
file the shared name ``hash_table_<file>[_<vocab_size>]_<key>_<value>`` (tables of one file
and columns are one table in a session, one initializer fills both, another dtype fails
"Conflicting key/value dtypes string->int64 with string-float for table
hash_table_/.../map.csv_0_2"); flowgraph keeps them apart, as its SavedModels must not
hold the source file's absolute path (tests/saved_model/test_assets.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf

lk = tf.contrib.lookup


def _write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def _err(fn):
    try:
        fn()
    except Exception as e:  # (the tests compare the type and the message)
        return type(e).__name__, str(e)
    return None, None


# -- bag of words over a vocabulary file ---------------------------------------------------
def test_bag_of_words_classifier_over_a_vocabulary_file(tmp_path):
    vocab = _write(tmp_path / "vocab.txt", ["<pad>", "the", "cat", "sat", "on", "mat", "dog"])
    tf.set_random_seed(1)
    sentences = tf.placeholder(tf.string, [None], name="sentences")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    with tf.variable_scope("text"):
        table = lk.index_table_from_file(vocab, num_oov_buckets=3)
        ids = table.lookup(tf.string_split(sentences))
        dense = tf.sparse_tensor_to_dense(ids, default_value=0)
        emb = tf.get_variable("emb", [10, 4])
        e = tf.nn.embedding_lookup(emb, dense)
        mask = tf.cast(tf.not_equal(dense, 0), tf.float32)
        pooled = tf.reduce_sum(e * mask[..., None], 1) / tf.maximum(
            tf.reduce_sum(mask, 1, keepdims=True), 1.0)
        logits = tf.layers.dense(pooled, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    assert (type(table).__name__, table.name) == ("IdTableWithHashBuckets", "hash_table")
    assert (ids.values.name, ids.values.shape.as_list(), dense.shape.as_list()) == (
        "text/hash_table_Lookup/SelectV2:0", [None], [None, None])
    assert [o.name for o in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)] == [
        "text/string_to_index/hash_table/table_init/InitializeTableFromTextFileV2"]
    assert [t.name for t in tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)] == [
        "text/string_to_index/hash_table/asset_path:0"]
    names = sorted(o.name for o in tf.get_default_graph().get_operations()
                   if "hash_table" in o.name or "string_to_index" in o.name)
    assert names == [
        "text/hash_table_Lookup/Add", "text/hash_table_Lookup/NotEqual",
        "text/hash_table_Lookup/SelectV2", "text/hash_table_Lookup/hash_bucket",
        "text/hash_table_Lookup/hash_table_Lookup/LookupTableFindV2",
        "text/hash_table_Lookup/hash_table_Size/LookupTableSizeV2",
        "text/string_to_index/hash_table/Const", "text/string_to_index/hash_table/asset_path",
        "text/string_to_index/hash_table/hash_table",
        "text/string_to_index/hash_table/table_init/InitializeTableFromTextFileV2"]
    feed = {sentences: ["the cat sat", "the dog sat on the mat", "zebra cat"],
            labels: [0, 1, 0]}
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        assert s.run(dense, feed).tolist() == [[1, 2, 3, 0, 0, 0], [1, 6, 3, 4, 1, 5],
                                               [9, 2, 0, 0, 0, 0]]
        assert s.run(table.size()) == 10
        for _ in range(5):
            _, value = s.run([train, loss], feed)
    assert np.round(value, 5) == pytest.approx(0.55794, abs=1e-5)


# -- text-file tables and their run-time errors --------------------------------------------
def test_text_file_tables_with_columns_and_delimiter(tmp_path):
    path = _write(tmp_path / "map.csv", ["apple,3,0.5", "banana,7,1.5", "cherry,11,2.5"])
    t = lk.HashTable(tf.lookup.TextFileInitializer(path, tf.string, 0, tf.int64, 1,
                                                   delimiter=","), -1)
    t2 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        path, tf.string, 0, tf.float32, 2, delimiter=",", name="prices"), -1.0,
        name="price_table")
    t3 = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        path, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string,
        tf.lookup.TextFileIndex.WHOLE_LINE), "?")
    assert (t.name, t.resource_handle.op.type, t.initializer.name) == (
        "hash_table", "HashTableV2", "text_file_init/InitializeTableFromTextFileV2")
    assert (t2.name, t2.initializer.name) == ("price_table",
                                              "prices/InitializeTableFromTextFileV2")
    q = tf.constant(["banana", "kiwi", "apple"])
    a, b = t.lookup(q), t2.lookup(q)
    c = t3.lookup(tf.constant([[0, 2], [5, 1]], tf.int64))
    assert (a.name, a.shape.as_list(), b.name, b.dtype, c.shape.as_list(), c.name) == (
        "hash_table_Lookup/LookupTableFindV2:0", [3], "price_table_Lookup/LookupTableFindV2:0",
        tf.float32, [2, 2], "hash_table_1_Lookup/LookupTableFindV2:0")
    kind, msg = _err(lambda: t.lookup(tf.constant([1, 2], tf.int64)))
    assert kind == "TypeError" and "Dtype of argument `keys` must be <dtype: 'string'>" in msg
    kind, msg = _err(lambda: tf.lookup.TextFileInitializer(path, tf.string, 0, tf.float32, -1))
    assert (kind, msg) == ("ValueError", "`value_dtype` must be int64 for `value_index` -1, "
                                         "received: <dtype: 'float32'>")
    with tf.Session() as s:
        s.run([t.initializer, t2.initializer, t3.initializer])
        va, vb, vc = s.run([a, b, c])
        assert va.tolist() == [7, -1, 3] and vb.tolist() == [1.5, -1.0, 0.5]
        assert vc.tolist() == [[b"apple,3,0.5", b"cherry,11,2.5"], [b"?", b"banana,7,1.5"]]
        assert s.run([t.size(), t3.size()]) == [3, 3]


def test_table_initializer_errors_when_run(tmp_path):
    path = _write(tmp_path / "map.csv", ["apple,3,0.5", "banana,7,1.5", "cherry,11,2.5"])
    init = tf.lookup.TextFileInitializer
    dup2 = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b", "a"], [1, 2, 1]), -1, name="dup2")
    missing = tf.lookup.StaticHashTable(
        init(str(tmp_path / "nope.txt"), tf.string, -2, tf.int64, -1), -1)
    short = tf.lookup.StaticHashTable(init(path, tf.string, -2, tf.int64, -1, vocab_size=5),
                                      -1)
    cols = tf.lookup.StaticHashTable(init(path, tf.string, 0, tf.int64, 5, delimiter=","), -1)
    notint = tf.lookup.StaticHashTable(init(path, tf.string, 0, tf.int64, 2, delimiter=",",
                                            vocab_size=3), -1)
    with tf.Session() as s:
        s.run(dup2.initializer)  # the same value twice is fine
        assert s.run(dup2.size()) == 2
        for table, kind in [(missing, "NotFoundError"), (short, "InvalidArgumentError"),
                            (cols, "InvalidArgumentError"), (notint, "InvalidArgumentError")]:
            assert _err(lambda t=table: s.run(t.initializer))[0] == kind


# -- mutable tables ------------------------------------------------------------------------
def test_word_counter_on_a_mutable_hash_table_saved_and_restored(tmp_path):
    with tf.variable_scope("counts"):
        table = lk.MutableHashTable(tf.string, tf.int64, default_value=0, name="word_counts")
        words = tf.placeholder(tf.string, [None], name="words")
        uniq, _, cnt = tf.unique_with_counts(words)
        old = table.lookup(uniq)
        upd = table.insert(uniq, old + tf.cast(cnt, tf.int64))
        keys, vals = table.export()
        rm = table.remove(tf.constant(["the"]))
        sz = table.size()
        tf.get_variable("w", [2], initializer=tf.ones_initializer())
    ftab = lk.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
    fins = ftab.insert(tf.constant([3, 5], tf.int64), tf.constant([0.25, 0.5]))
    assert (table.name, table.resource_handle.op.name, ftab.name) == (
        "word_counts", "counts/word_counts", "MutableHashTable")
    assert (old.name, upd.name, keys.name, rm.name, sz.name) == (
        "counts/word_counts_lookup_table_find/LookupTableFindV2:0",
        "counts/word_counts_lookup_table_insert/LookupTableInsertV2",
        "counts/word_counts_lookup_table_export_values_1/LookupTableExportV2:0",
        "counts/word_counts_lookup_table_remove/LookupTableRemoveV2",
        "counts/word_counts_Size/LookupTableSizeV2:0")
    assert (old.shape.as_list(), keys.shape.ndims, vals.shape.ndims) == ([None], None, None)
    assert len(tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)) == 2
    assert [v.name for v in tf.global_variables()] == ["counts/w:0"]
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(upd, {words: ["the", "cat", "the", "dog"]})
        s.run(upd, {words: ["the", "cat", "fish"]})
        s.run(fins)
        k, v = s.run([keys, vals])
        order = np.argsort(k)
        assert k[order].tolist() == [b"cat", b"dog", b"fish", b"the"]
        assert v[order].tolist() == [2, 1, 1, 3]
        assert s.run(sz) == 4
        s.run(rm)
        assert s.run(sz) == 3
        assert s.run(table.lookup(tf.constant(["the", "cat"]))).tolist() == [0, 2]
        path = saver.save(s, str(tmp_path / "model.ckpt"), global_step=7)
    assert os.path.basename(path) == "model.ckpt-7"
    assert sorted(tf.train.list_variables(path)) == [
        ("MutableHashTable-keys", [2]), ("MutableHashTable-values", [2]), ("counts/w", [2]),
        ("word_counts-keys", [3]), ("word_counts-values", [3])]
    with tf.Session() as s:
        saver.restore(s, path)
        assert s.run(sz) == 3
        assert s.run(table.lookup(tf.constant(["cat", "dog", "the"]))).tolist() == [2, 1, 0]
        assert s.run(ftab.lookup(tf.constant([5, 6], tf.int64))).tolist() == [0.5, -1.0]


def test_mutable_table_is_named_after_its_op_and_shared_by_node_name():
    with tf.variable_scope("outer"):
        a = lk.MutableHashTable(tf.string, tf.int64, 0, name="t")
        b = lk.MutableHashTable(tf.string, tf.int64, 0, name="t", checkpoint=False)
    assert (a.name, b.name) == ("t", "t_1")
    assert a.size().name == "t_Size/LookupTableSizeV2:0"
    assert b.lookup(tf.constant(["x"])).name == "t_1_lookup_table_find/LookupTableFindV2:0"
    assert a.resource_handle.op.get_attr("use_node_name_sharing") is True
    assert b.resource_handle.op.get_attr("use_node_name_sharing") is False
    # only the checkpointed table is a saveable (and exports when built)
    saveables = tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
    assert [s.name for s in saveables] == ["t"]
    assert [spec.name for spec in saveables[0].specs] == ["t-keys", "t-values"]
    # (its export at construction was in the scope "outer")
    assert a.export()[0].name == "t_lookup_table_export_values/LookupTableExportV2:0"


def test_mutable_hash_table_of_vectors_and_a_dense_table():
    m = lk.MutableHashTable(tf.string, tf.float32, [0.0, 0.0], name="vecs")
    assert m.resource_handle.op.type == "MutableHashTableOfTensorsV2"
    assert [d.size for d in m.resource_handle.op.get_attr("value_shape").dim] == [2]
    looked = m.lookup(tf.constant([["a", "b"]]))
    assert (looked.shape.as_list(), looked.name) == ([1, 2, 2],
                                                     "vecs_lookup_table_find/LookupTableFindV2:0")
    ins = m.insert(tf.constant(["a", "b"]), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    dn = lk.MutableDenseHashTable(tf.int64, tf.int64, -1, 0, -1, initial_num_buckets=8,
                                  name="dense")
    op = dn.resource_handle.op
    assert (dn.name, op.get_attr("initial_num_buckets"), op.get_attr("use_node_name_sharing"),
            [x.name for x in op.inputs]) == ("dense", 8, True, ["empty_key:0", "deleted_key:0"])
    assert sorted(s.name for s in tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)) == [
        "dense", "vecs"]
    with tf.Session() as s:
        s.run(ins)
        assert s.run(looked).tolist() == [[[1.0, 2.0], [3.0, 4.0]]] and s.run(m.size()) == 2
        s.run(dn.insert(tf.constant([5, 7], tf.int64), tf.constant([50, 70], tf.int64)))
        assert s.run(dn.lookup(tf.constant([7, 8], tf.int64))).tolist() == [70, -1]


def test_export_shapes_are_unknown_and_insert_checks_shapes_when_run():
    static = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
    mutable = lk.MutableHashTable(tf.string, tf.int64, 0, name="m")
    for table in (static, mutable):
        keys, values = table.export()
        assert (keys.shape.ndims, values.shape.ndims) == (None, None)
    bad = mutable.insert(tf.constant(["a", "b"]), tf.constant([1], tf.int64))  # builds
    with tf.Session() as s:
        kind, msg = _err(lambda: s.run(bad))
    assert kind == "InvalidArgumentError"
    kind, msg = _err(lambda: mutable.insert(tf.constant(["a"]), tf.constant([1.0])))
    assert kind == "ValueError" and "requested dtype int64" in msg


def test_dense_table_rejects_its_reserved_keys_in_lookups():
    dn = lk.MutableDenseHashTable(tf.int64, tf.int64, -1, 0, -1, name="dense")
    with tf.Session() as s:
        for key, which in ((0, "empty_key"), (-1, "deleted_key")):
            kind, msg = _err(lambda k=key: s.run(dn.lookup(tf.constant([k], tf.int64))))
            assert kind == "InvalidArgumentError"
            assert f"Using the {which} as a table key is not allowed" in msg


def test_uninitialized_and_duplicate_key_errors_carry_tensorflows_words():
    uninit = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["z"], [9]), -1)
    dup = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b", "a"],
                                                                        [1, 2, 3]), -1)
    with tf.Session() as s:
        kind, msg = _err(lambda: s.run(uninit.lookup(tf.constant(["z"]))))
        assert kind == "FailedPreconditionError" and "Table not initialized." in msg
        assert s.run(uninit.size()) == 0  # (TensorFlow: 0, no error)
        kind, msg = _err(lambda: s.run(dup.initializer))
        assert kind == "FailedPreconditionError"
        assert ("HashTable has different value for same key. Key b'a' has 1 and trying to "
                "add value 3") in msg


def test_two_table_ops_of_one_shared_name_with_other_dtypes_conflict():
    a = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.float32,
                               shared_name="vocab")
    b = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="vocab")
    imp = tf.raw_ops.LookupTableImportV2(table_handle=a, keys=tf.constant(["x"]),
                                         values=tf.constant([0.5]))
    with tf.Session() as s:
        s.run(imp)
        assert s.run(tf.raw_ops.LookupTableSizeV2(table_handle=a)) == 1
        kind, msg = _err(lambda: s.run(b))
    assert kind == "InvalidArgumentError"
    assert "Conflicting key/value dtypes string->int64 with string-float for table vocab" in msg


def test_key_value_dtypes_without_a_tensorflow_kernel_fail_when_run():
    flags = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1, 2, 3], tf.int32), tf.constant([True, False, True])), False,
        name="flags")
    ok = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([10, 20], tf.int64), tf.constant([0.5, 2.0], tf.float64)), -1.0)
    assert (flags.key_dtype, flags.value_dtype) == (tf.int32, tf.bool)  # builds, as in TF
    with tf.Session() as s:
        s.run(ok.initializer)
        assert s.run(ok.lookup(tf.constant([20, 30], tf.int64))).tolist() == [2.0, -1.0]
        kind, msg = _err(lambda: s.run(flags.initializer))
    assert kind == "InvalidArgumentError"
    assert "No OpKernel was registered to support Op 'HashTableV2'" in msg


def test_sparse_lookup_and_monitored_session_with_a_table_in_a_dataset(tmp_path):
    tf.set_random_seed(2)
    step = tf.train.get_or_create_global_step()
    t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([1, 2, 3], tf.int32), tf.constant([1, 0, 1], tf.int32)), 0, name="flags")
    t2 = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([10, 20], tf.int64), tf.constant([0.5, 2.0], tf.float64)), -1.0)
    r = t.lookup(tf.SparseTensor([[0, 1], [2, 0]], tf.constant([3, 9]), [3, 2]))
    assert (r.values.name, r.values.dtype, r.dense_shape.name) == (
        "flags_Lookup/LookupTableFindV2:0", tf.int32, "SparseTensor/dense_shape:0")
    ds = tf.data.Dataset.range(5).map(lambda x: (x, t2.lookup(x * 10)))
    it = tf.data.make_initializable_iterator(ds)
    x, y = it.get_next()
    assert (x.dtype, y.dtype, y.shape.as_list(), y.name) == (tf.int64, tf.float64, [],
                                                              "IteratorGetNext:1")
    w = tf.get_variable("w", [], tf.float64, initializer=tf.zeros_initializer())
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w - y),
                                                           global_step=step)
    scaffold = tf.train.Scaffold(local_init_op=tf.group(
        tf.local_variables_initializer(), tf.tables_initializer(), it.initializer))
    vals = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ck"),
                                           scaffold=scaffold, save_summaries_steps=None,
                                           save_checkpoint_secs=None) as s:
        assert s.run(r).values.tolist() == [1, 0]
        while not s.should_stop():
            _, a, b, v = s.run([train, x, y, w])
            vals.append((int(a), float(b), round(float(v), 5)))
    assert vals == [(0, -1.0, -0.2), (1, 0.5, -0.06), (2, 2.0, 0.352), (3, -1.0, 0.0816),
                    (4, -1.0, -0.13472)]


# -- tables in input pipelines --------------------------------------------------------------
def test_seq2seq_vocabulary_tables_inside_dataset_maps(tmp_path):
    src = _write(tmp_path / "src.txt", ["<unk>", "ich", "bin", "ein", "berliner"])
    tgt = _write(tmp_path / "tgt.txt", ["<unk>", "i", "am", "a", "donut"])
    src_table = lk.index_table_from_file(src, default_value=0)
    tgt_table = lk.index_table_from_file(tgt, default_value=0)
    rev = lk.index_to_string_table_from_file(tgt, default_value="<unk>")
    assert (src_table.name, rev.name, rev.resource_handle.op.name) == (
        "hash_table", "hash_table", "index_to_string/hash_table")
    ds = tf.data.Dataset.from_tensor_slices((
        ["ich bin ein berliner", "ich bin", "ein pfannkuchen"],
        ["i am a donut", "i am", "a pancake"]))
    ds = ds.map(lambda s, t: (tf.string_split([s]).values, tf.string_split([t]).values))
    ds = ds.map(lambda s, t: (src_table.lookup(s), tgt_table.lookup(t)))
    ds = ds.map(lambda s, t: (s, t, tf.size(s)))
    ds = ds.padded_batch(2, padded_shapes=([None], [None], []))
    assert [sh.as_list() for sh in tf.data.get_output_shapes(ds)] == [[None, None],
                                                                     [None, None], [None]]
    it = tf.data.make_initializable_iterator(ds)
    s_ids, t_ids, n = it.get_next()
    words = rev.lookup(t_ids)
    assert (s_ids.dtype, words.name, words.shape.as_list()) == (
        tf.int64, "hash_table_Lookup/LookupTableFindV2:0", [None, None])
    with tf.Session() as sess:
        sess.run([tf.tables_initializer(), it.initializer])
        a, b, c, w = sess.run([s_ids, t_ids, n, words])
        assert (a.tolist(), b.tolist(), c.tolist()) == (
            [[1, 2, 3, 4], [1, 2, 0, 0]], [[1, 2, 3, 4], [1, 2, 0, 0]], [4, 2])
        assert w.tolist() == [[b"i", b"am", b"a", b"donut"], [b"i", b"am", b"<unk>", b"<unk>"]]
        a, b, c, w = sess.run([s_ids, t_ids, n, words])
        assert (a.tolist(), c.tolist(), w.tolist()) == ([[3, 0]], [2], [[b"a", b"<unk>"]])


def test_estimator_input_fn_with_a_vocabulary_table(tmp_path):
    def input_fn():
        table = lk.index_table_from_tensor(tf.constant(["x", "y", "z"]), num_oov_buckets=2)
        ds = tf.data.Dataset.from_tensor_slices({"tok": ["x", "z", "q", "y"],
                                                 "label": [0, 1, 1, 0]})
        return ds.map(lambda f: ({"ids": table.lookup(f["tok"])}, f["label"])).batch(2)

    def model_fn(features, labels, mode):
        e = tf.get_variable("e", [5, 1], initializer=tf.zeros_initializer())
        logit = tf.reshape(tf.nn.embedding_lookup(e, features["ids"]), [-1])
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"ids": features["ids"],
                                                                 "logit": logit})
        loss = tf.losses.sigmoid_cross_entropy(labels, logit)
        step = tf.train.GradientDescentOptimizer(1.0).minimize(loss,
                                                              tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=step)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"),
                                 config=tf.estimator.RunConfig(tf_random_seed=1))
    est.train(input_fn, steps=2)
    preds = [(int(p["ids"]), round(float(p["logit"]), 5)) for p in est.predict(input_fn)]
    assert preds == [(0, -0.25), (2, 0.25), (4, 0.25), (1, -0.25)]
    assert round(float(est.evaluate(input_fn, steps=1)["loss"]), 5) == 0.57594


# -- id tables with hash buckets -------------------------------------------------------------
def test_id_tables_with_hashers_int_keys_and_argument_errors(tmp_path):
    v = _write(tmp_path / "v.tsv", ["10\tten", "20\ttwenty", "30\tthirty", "40\tforty"])
    words = tf.constant([["ten", "forty", "nine"], ["thirty", "eleven", "ten"]])
    t1 = lk.index_table_from_file(v, num_oov_buckets=2, key_column_index=1,
                                  value_column_index=0, vocab_size=3, name="by_word")
    t2 = lk.index_table_from_file(v, key_dtype=tf.int64, key_column_index=0, default_value=-7)
    t3 = lk.IdTableWithHashBuckets(None, 5, hasher_spec=lk.StrongHashSpec([11, 22]))
    t4 = lk.IdTableWithHashBuckets(None, 5, hasher_spec=lk.HasherSpec("legacy", None),
                                   name="legacy")
    t5 = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([7, 8, 9], tf.int64), tf.constant([0, 1, 2], tf.int64)), 3,
        lookup_key_dtype=tf.int32)
    t6 = lk.index_table_from_tensor(tf.constant([5, 6], tf.int64), num_oov_buckets=1,
                                    dtype=tf.int32)
    assert [(t.name, t.key_dtype, t.value_dtype) for t in (t1, t2, t3, t4, t5, t6)] == [
        ("hash_table", tf.string, tf.int64), ("hash_table", tf.int64, tf.int64),
        ("hash_bucket", tf.string, tf.int64), ("legacy", tf.string, tf.int64),
        ("hash_table", tf.int32, tf.int64), ("hash_table", tf.int32, tf.int64)]
    r1, r3, r4 = t1.lookup(words), t3.lookup(words), t4.lookup(words)
    r2 = t2.lookup(tf.constant([40, 50, 10], tf.int64))
    r5 = t5.lookup(tf.constant([9, 100, 7]))
    r6 = t6.lookup(tf.SparseTensor([[0, 0], [1, 2]], tf.constant([6, 77]), [2, 3]))
    assert [r1.name, r2.name, r3.name, r4.name, r5.name, r6.values.name] == [
        "hash_table_Lookup/SelectV2:0", "hash_table_Lookup_1/LookupTableFindV2:0",
        "hash_bucket_Lookup/hash_bucket:0", "legacy_Lookup/hash_bucket:0",
        "hash_table_Lookup_2/SelectV2:0", "hash_table_Lookup_3/SelectV2:0"]
    assert [o.name for o in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)] == [
        "by_word/hash_table/table_init/InitializeTableFromTextFileV2",
        "string_to_index/hash_table/table_init/InitializeTableFromTextFileV2",
        "key_value_init/LookupTableImportV2",
        "string_to_index_1/hash_table/table_init/LookupTableImportV2"]
    assert (t3.initializer.name, t3.initializer.type) == ("init/NoOp", "NoOp")
    errors = [
        (lambda: lk.index_table_from_tensor(["a"], num_oov_buckets=-1),
         "`num_oov_buckets` must be greater or equal than 0, got -1."),
        (lambda: lk.index_table_from_tensor(["a"], dtype=tf.int64),
         "Invalid `dtype`: Expected integer, got <dtype: 'string'>."),
        (lambda: lk.index_table_from_file(None),
         "`vocabulary_file` must be specified and must not be empty."),
        (lambda: lk.IdTableWithHashBuckets(None, 0),
         "`oov_buckets` must be > 0 if no `table` is supplied."),
        (lambda: tf.lookup.StaticVocabularyTable(None, 0),
         "`num_oov_buckets` must be > 0; use StaticHashTable."),
        (lambda: lk.index_to_string_table_from_tensor(None),
         "`vocabulary_list` argument must be specified.")]
    for fn, message in errors:
        assert _err(fn) == ("ValueError", message)
    with tf.Session() as s:
        s.run(tf.tables_initializer())
        assert s.run(r1).tolist() == [[10, 3, 4], [30, 3, 10]]
        assert s.run(r2).tolist() == [3, -7, 0]
        assert s.run(r3).tolist() == [[3, 3, 3], [0, 3, 3]]
        assert s.run(r4).tolist() == [[3, 4, 1], [4, 4, 3]]
        assert s.run(r5).tolist() == [2, 3, 0]
        assert s.run(r6).values.tolist() == [1, 2]
        assert s.run([t1.size(), t2.size(), t3.size(), t5.size(), t6.size()]) == [5, 4, 5, 6,
                                                                                   3]


def test_table_names_with_name_arguments_and_a_fed_vocabulary_path(tmp_path):
    vocab = _write(tmp_path / "v.txt", ["a", "b", "c"])
    fname = tf.placeholder(tf.string, [], name="vocab_path")
    t = lk.index_table_from_file(fname, num_oov_buckets=1, name="dyn")
    assert (t.name, tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS), t.initializer.name) == (
        "hash_table", [], "dyn/hash_table/table_init/InitializeTableFromTextFileV2")
    ids = t.lookup(tf.constant(["c", "q"]), name="my_lookup")
    h = lk.HashTable(lk.KeyValueTensorInitializer(["x"], [1]), -1)
    r, sz = h.lookup(tf.constant(["x", "y"]), name="find"), h.size(name="sz")
    rev = lk.index_to_string_table_from_tensor(tf.constant(["a", "b"]), name="rev")
    vs = tf.lookup.StaticVocabularyTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1), 2, name="voc")
    vids, vsize = vs.lookup(tf.constant(["b", "zz"])), vs.size()
    assert [ids.name, h.initializer.name, r.name, sz.name] == [
        "my_lookup/SelectV2:0", "key_value_init/LookupTableImportV2", "find/LookupTableFindV2:0",
        "sz/LookupTableSizeV2:0"]
    assert (rev.name, rev.resource_handle.op.name,
            rev.lookup(tf.constant([0, 5], tf.int64)).name) == (
        "hash_table", "rev/hash_table", "hash_table_Lookup/LookupTableFindV2:0")
    assert (vs.name, vs.resource_handle.op.name, vids.name, vsize.name) == (
        "voc", "hash_table_1", "voc_Lookup/SelectV2:0", "voc_Size/add:0")
    with tf.Session() as s:
        s.run(tf.tables_initializer(), {fname: vocab})
        assert s.run(ids).tolist() == [2, 3] and s.run(r).tolist() == [1, -1]
        assert s.run(sz) == 1 and s.run(vids).tolist() == [1, 3] and s.run(vsize) == 5


# -- vocabulary feature columns -------------------------------------------------------------
def test_vocabulary_feature_columns_in_input_layer(tmp_path):
    vocab = _write(tmp_path / "colors.txt", ["red", "green", "blue"])
    tf.set_random_seed(5)
    color = tf.feature_column.categorical_column_with_vocabulary_file("color", vocab,
                                                                      num_oov_buckets=1)
    size = tf.feature_column.categorical_column_with_vocabulary_list("size", ["S", "M", "L"],
                                                                     default_value=0)
    cols = [tf.feature_column.indicator_column(color),
            tf.feature_column.embedding_column(size, 2)]
    feats = {"color": tf.placeholder(tf.string, [None, 1]),
             "size": tf.placeholder(tf.string, [None, 1])}
    net = tf.feature_column.input_layer(feats, cols)
    assert net.shape.as_list() == [None, 6]
    feed = {feats["color"]: [["blue"], ["pink"]], feats["size"]: [["L"], ["XL"]]}
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        np.testing.assert_allclose(np.round(s.run(net, feed), 5), [
            [0.0, 0.0, 1.0, 0.0, 0.16693, -0.60666],
            [0.0, 0.0, 0.0, 1.0, -1.2119, -0.47992]], atol=1e-5)
