"""TF1 NLP programs, sweep 10 (area ``nlp``), run under TensorFlow 2.15 and flowgraph with
the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): dennybritz's text CNN (embedding on the CPU, conv2d over
``[batch, len, emb, 1]``, max_pool, concat, dropout, l2 loss, Adam with gradient
summaries); tensorflow/nmt's input pipeline (``TextLineDataset`` zipped, ``string_split``,
vocabulary tables from files, ``<s>``/``</s>`` ids, bucketing by ``group_by_window`` with
``padded_batch`` and padding values, an index-to-string table for the output); a
BERT/tensor2tensor-style encoder (``tf.layers.dense`` multi-head attention with
reshape/transpose, a sequence-mask bias, sinusoidal positions, layer norm written out,
gelu, einsum logits tied to the embedding, a warmup schedule, clipped Adam); a char-RNN
(partitioned embedding with ``max_norm``, GRUs in ``MultiRNNCell`` with
``DropoutWrapper``/``ResidualWrapper``, ``dynamic_rnn`` with lengths, masked loss,
centered RMSProp, ``multinomial`` sampling, weighted bag-of-words
``embedding_lookup_sparse``); and text cleaning with the string ops.

Classes of discrepancy found and fixed (one test each below):

* Lookup tables were laid out in TF1.x's old way: the table, its default value and its
  initializer in a scope of the table, the lookup op itself named ``hash_table_Lookup``,
  OOV buckets as ``Equal``/``Select``. TensorFlow 2.15 makes the table op where the table
  is made, names the table after its op, and puts every lookup in a fresh
  ``<table>_Lookup`` scope (``hash_table_Lookup/LookupTableFindV2``; with buckets
  ``hash_bucket``, ``Add``, ``NotEqual``, ``SelectV2``), sizes in ``<table>_Size``;
  ``index_table_from_*`` build ``string_to_index/hash_table/...``. Id tables now reject
  keys of another dtype (TensorFlow's TypeError) instead of casting; ``hasher_spec`` was
  ignored (now ``FastHashSpec``, legacy and ``StrongHashSpec`` hash as TensorFlow);
  ``IdTableWithHashBuckets``, ``StaticVocabularyTable(None, n)`` and contrib's
  ``string_to_index``/``index_to_string`` were missing; a table's ``size()`` inside a
  ``Dataset.map`` function failed; ``TextFileInitializer`` refused whole lines as integer
  values and checked its arguments with messages of its own (now TensorFlow's checks).
* String ops named as TensorFlow's generated wrappers name them: ``Substr``,
  ``StringJoin`` and ``UnsortedSegmentJoin`` are one op named by the scope (constants
  inside it), ``reduce_join`` opens a ``ReduceJoin`` scope (all axes, last first, as one
  constant), ``string_split``'s delimiter is an unnamed constant.
* ``embedding_lookup_sparse`` with weights and the ``mean``/``sqrtn`` combiners gave NaN
  for rows without ids (TensorFlow divides with ``div_no_nan``); its result is named after
  its scope; a partitioned ``embedding_lookup`` with ``max_norm`` clips after putting the
  rows back together (``embedding_lookup/clip_by_norm``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture
def files(tmp_path):
    (tmp_path / "vocab.src").write_text("<unk>\n<s>\n</s>\na\nb\nc\nd\n")
    (tmp_path / "vocab.tgt").write_text("<unk>\n<s>\n</s>\nx\ny\nz\n")
    (tmp_path / "train.src").write_text("a b c\nd a\n\nb b b b b c\na\nc d a b\nq a\n")
    (tmp_path / "train.tgt").write_text("x y\nz\nx\ny y y\nx z x z\nz\ny q\n")
    (tmp_path / "v.txt").write_text("a\nb\nc\n")
    return tmp_path


def _ops(graph, skip=("Const",)):
    return [(o.name, o.type) for o in graph.get_operations() if o.type not in skip]


# -- text CNN ---------------------------------------------------------------------------
def test_text_cnn_trains_and_writes_gradient_summaries_as_tensorflow():
    tf.set_random_seed(1)
    seq_len, num_classes, vocab, emb, nf = 7, 2, 20, 4, 3
    input_x = tf.placeholder(tf.int32, [None, seq_len], name="input_x")
    input_y = tf.placeholder(tf.float32, [None, num_classes], name="input_y")
    keep = tf.placeholder(tf.float32, name="dropout_keep_prob")
    l2_loss = tf.constant(0.0)
    with tf.device("/cpu:0"), tf.name_scope("embedding"):
        w = tf.Variable(tf.random_uniform([vocab, emb], -1.0, 1.0), name="W")
        chars = tf.nn.embedding_lookup(w, input_x)
        expanded = tf.expand_dims(chars, -1)
    pooled = []
    for fs in (2, 3):
        with tf.name_scope(f"conv-maxpool-{fs}"):
            wc = tf.Variable(tf.truncated_normal([fs, emb, 1, nf], stddev=0.1), name="W")
            b = tf.Variable(tf.constant(0.1, shape=[nf]), name="b")
            conv = tf.nn.conv2d(expanded, wc, strides=[1, 1, 1, 1], padding="VALID",
                                name="conv")
            h = tf.nn.relu(tf.nn.bias_add(conv, b), name="relu")
            pooled.append(tf.nn.max_pool(h, ksize=[1, seq_len - fs + 1, 1, 1],
                                         strides=[1, 1, 1, 1], padding="VALID", name="pool"))
    h_pool = tf.concat(pooled, 3)
    flat = tf.reshape(h_pool, [-1, 2 * nf])
    with tf.name_scope("dropout"):
        drop = tf.nn.dropout(flat, keep)
    with tf.name_scope("output"):
        wo = tf.get_variable("W", shape=[2 * nf, num_classes],
                             initializer=tf.glorot_uniform_initializer())
        bo = tf.Variable(tf.constant(0.1, shape=[num_classes]), name="b")
        l2_loss += tf.nn.l2_loss(wo)
        l2_loss += tf.nn.l2_loss(bo)
        scores = tf.nn.xw_plus_b(drop, wo, bo, name="scores")
        predictions = tf.argmax(scores, 1, name="predictions")
    with tf.name_scope("loss"):
        losses = tf.nn.softmax_cross_entropy_with_logits(logits=scores, labels=input_y)
        loss = tf.reduce_mean(losses) + 0.1 * l2_loss
    with tf.name_scope("accuracy"):
        correct = tf.equal(predictions, tf.argmax(input_y, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, "float"), name="accuracy")
    global_step = tf.Variable(0, name="global_step", trainable=False)
    optimizer = tf.train.AdamOptimizer(1e-3)
    grads_and_vars = optimizer.compute_gradients(loss)
    train_op = optimizer.apply_gradients(grads_and_vars, global_step=global_step)
    summaries = []
    for g, v in grads_and_vars:
        summaries.append(tf.summary.histogram(f"{v.name}/grad/hist", g))
        summaries.append(tf.summary.scalar(f"{v.name}/grad/sparsity", tf.nn.zero_fraction(g)))
    merged = tf.summary.merge([tf.summary.scalar("loss", loss),
                               tf.summary.scalar("accuracy", accuracy),
                               tf.summary.merge(summaries)])
    assert [s.name for s in summaries[:2]] == ["embedding/W_0/grad/hist:0",
                                               "embedding/W_0/grad/sparsity:0"]
    assert [g.name for g, _ in grads_and_vars][:2] == [
        "gradients/embedding/embedding_lookup_grad/Reshape:0",
        "gradients/conv-maxpool-2/conv_grad/tuple/control_dependency_1:0"]
    assert isinstance(grads_and_vars[0][0], tf.IndexedSlices)
    assert (chars.name, h_pool.shape.as_list(), losses.name, loss.name, l2_loss.name) == (
        "embedding/embedding_lookup/Identity:0", [None, 1, 1, 6],
        "loss/softmax_cross_entropy_with_logits_sg/Reshape_2:0", "loss/add:0",
        "output/add_1:0")
    rng = np.random.RandomState(0)
    xb, yb = rng.randint(0, vocab, (5, seq_len)), np.eye(2)[rng.randint(0, 2, 5)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [sess.run([train_op, global_step, loss, accuracy, merged],
                        {input_x: xb, input_y: yb, keep: 1.0})[1:] for _ in range(4)]
        final = sess.run(scores, {input_x: xb, keep: 1.0})
    assert [g[0] for g in got] == [1, 2, 3, 4]
    np.testing.assert_allclose([g[1] for g in got], [0.71871, 0.71336, 0.7081, 0.70292],
                               atol=1e-5)
    assert [g[2] for g in got] == [pytest.approx(0.8)] * 4
    np.testing.assert_allclose(final, [[0.0875, 0.5493], [0.1226, 0.5517], [-0.0281, 0.408],
                                       [0.0563, 0.578], [-0.0093, 0.6291]], atol=1e-4)
    event = tf.Summary()
    event.ParseFromString(got[-1][3])
    assert len(event.value) == 16
    assert [v.tag for v in event.value][:4] == ["loss_1", "accuracy_1",
                                                "embedding/W_0/grad/hist",
                                                "embedding/W_0/grad/sparsity"]


# -- tensorflow/nmt input pipeline --------------------------------------------------------
def test_nmt_input_pipeline_with_vocabulary_tables_and_buckets(files):
    d = str(files)
    src_table = tf.contrib.lookup.index_table_from_file(d + "/vocab.src", default_value=0)
    tgt_table = tf.contrib.lookup.index_table_from_file(d + "/vocab.tgt", default_value=0)
    rev = tf.contrib.lookup.index_to_string_table_from_file(d + "/vocab.tgt",
                                                            default_value="<unk>")
    src_eos_id = tf.cast(src_table.lookup(tf.constant("</s>")), tf.int32)
    tgt_sos_id = tf.cast(tgt_table.lookup(tf.constant("<s>")), tf.int32)
    tgt_eos_id = tf.cast(tgt_table.lookup(tf.constant("</s>")), tf.int32)
    assert src_eos_id.op.inputs[0].name == "hash_table_Lookup/LookupTableFindV2:0"
    ds = tf.data.Dataset.zip((tf.data.TextLineDataset(d + "/train.src"),
                              tf.data.TextLineDataset(d + "/train.tgt")))
    ds = ds.shard(1, 0).shuffle(100, seed=3, reshuffle_each_iteration=True)
    ds = ds.map(lambda s, t: (tf.string_split([s]).values, tf.string_split([t]).values),
                num_parallel_calls=2).prefetch(4)
    ds = ds.filter(lambda s, t: tf.logical_and(tf.size(s) > 0, tf.size(t) > 0))
    ds = ds.map(lambda s, t: (s[:4], t[:3]))
    ds = ds.map(lambda s, t: (tf.cast(src_table.lookup(s), tf.int32),
                              tf.cast(tgt_table.lookup(t), tf.int32)))
    ds = ds.map(lambda s, t: (s, tf.concat(([tgt_sos_id], t), 0),
                              tf.concat((t, [tgt_eos_id]), 0)))
    ds = ds.map(lambda s, ti, to: (s, ti, to, tf.size(s), tf.size(ti)))

    def key_func(unused_1, unused_2, unused_3, src_len, tgt_len):
        bucket_id = tf.maximum(src_len // 2, tgt_len // 2)
        return tf.cast(tf.minimum(3, bucket_id), tf.int64)

    def reduce_func(unused_key, window):
        return window.padded_batch(
            2, padded_shapes=(tf.TensorShape([None]), tf.TensorShape([None]),
                              tf.TensorShape([None]), tf.TensorShape([]), tf.TensorShape([])),
            padding_values=(src_eos_id, tgt_eos_id, tgt_eos_id, 0, 0))

    batched = ds.apply(tf.data.experimental.group_by_window(key_func, reduce_func, 2))
    it = batched.make_initializable_iterator()
    nxt = it.get_next()
    words = rev.lookup(tf.cast(nxt[2], tf.int64))
    assert words.name == "hash_table_Lookup_3/LookupTableFindV2:0"
    assert words.shape.as_list() == [None, None]
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        epochs = []
        for _ in range(2):
            sess.run(it.initializer)
            out = []
            while True:
                try:
                    out.append([v.tolist() for v in sess.run([*nxt, words])])
                except tf.errors.OutOfRangeError:
                    break
            epochs.append(out)
    assert epochs[0] == epochs[1] == [
        [[[5, 6, 3, 4], [3, 2, 2, 2]], [[1, 5, 2, 2], [1, 3, 5, 3]],
         [[5, 2, 2, 2], [3, 5, 3, 2]], [4, 1], [2, 4],
         [[b"z", b"</s>", b"</s>", b"</s>"], [b"x", b"z", b"x", b"</s>"]]],
        [[[6, 3, 2], [3, 4, 5]], [[1, 5, 2], [1, 3, 4]], [[5, 2, 2], [3, 4, 2]], [2, 3],
         [2, 3], [[b"z", b"</s>", b"</s>"], [b"x", b"y", b"</s>"]]],
        [[[0, 3]], [[1, 4, 0]], [[4, 0, 2]], [2], [3], [[b"y", b"<unk>", b"</s>"]]],
        [[[4, 4, 4, 4]], [[1, 4, 4, 4]], [[4, 4, 4, 2]], [4], [4],
         [[b"y", b"y", b"y", b"</s>"]]]]


# -- lookup tables ------------------------------------------------------------------------
def _graph_of(fn):
    with tf.Graph().as_default() as g:
        result = fn()
    return g, result


def test_lookup_tables_are_laid_out_as_tensorflow(files):
    vocab = str(files / "v.txt")
    g, r = _graph_of(lambda: tf.contrib.lookup.index_table_from_file(vocab).lookup(
        tf.constant(["a", "z"])))
    assert _ops(g, ()) == [
        ("string_to_index/hash_table/asset_path", "Const"),
        ("string_to_index/hash_table/Const", "Const"),
        ("string_to_index/hash_table/hash_table", "HashTableV2"),
        ("string_to_index/hash_table/table_init/InitializeTableFromTextFileV2",
         "InitializeTableFromTextFileV2"),
        ("Const", "Const"), ("hash_table_Lookup/LookupTableFindV2", "LookupTableFindV2")]
    assert [t.name for t in g.get_collection(tf.GraphKeys.ASSET_FILEPATHS)] == [
        "string_to_index/hash_table/asset_path:0"]
    assert r.shape.as_list() == [2]

    g, r = _graph_of(lambda: tf.contrib.lookup.index_table_from_file(
        vocab, key_dtype=tf.int32, num_oov_buckets=1, name="ints").lookup(
            tf.constant([1, 2])))
    assert _ops(g)[2:] == [
        ("Cast", "Cast"), ("hash_table_Lookup/AsString", "AsString"),
        ("hash_table_Lookup/hash_bucket", "StringToHashBucketFast"),
        ("hash_table_Lookup/hash_table_Lookup/LookupTableFindV2", "LookupTableFindV2"),
        ("hash_table_Lookup/hash_table_Size/LookupTableSizeV2", "LookupTableSizeV2"),
        ("hash_table_Lookup/Add", "AddV2"), ("hash_table_Lookup/NotEqual", "NotEqual"),
        ("hash_table_Lookup/SelectV2", "SelectV2")]
    assert _ops(g)[0][0] == "ints/hash_table/hash_table"

    g, r = _graph_of(lambda: tf.contrib.lookup.index_to_string_table_from_tensor(
        ["x", "y"]).lookup(tf.constant([1, 7], tf.int64)))
    assert _ops(g) == [
        ("index_to_string/range", "Range"), ("index_to_string/Cast", "Cast"),
        ("index_to_string/hash_table", "HashTableV2"),
        ("index_to_string/table_init/LookupTableImportV2", "LookupTableImportV2"),
        ("hash_table_Lookup/LookupTableFindV2", "LookupTableFindV2")]

    def named():
        with tf.name_scope("outer"):
            t = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1, name="vocab")
        return t, [t.lookup(tf.constant(["a"])), t.size(), t.lookup(tf.constant(["b"]))]

    g, (t, r) = _graph_of(named)
    assert t.name == "vocab"
    assert [x.name for x in r] == ["vocab_Lookup/LookupTableFindV2:0",
                                   "vocab_Size/LookupTableSizeV2:0",
                                   "vocab_Lookup_1/LookupTableFindV2:0"]
    assert _ops(g, ())[:5] == [("outer/keys", "Const"), ("outer/values", "Const"),
                               ("outer/Const", "Const"), ("outer/vocab", "HashTableV2"),
                               ("outer/key_value_init/LookupTableImportV2",
                                "LookupTableImportV2")]

    def vocabulary():
        t = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
            vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), num_oov_buckets=3)
        second = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a"], tf.constant([0], tf.int64)), 2)
        sparse = second.lookup(tf.SparseTensor([[0, 0], [1, 2]], ["a", "q"], [2, 3]))
        return [t.lookup(tf.constant(["a", "zz"])), t.size(), sparse.values, second.name]

    g, r = _graph_of(vocabulary)
    assert [x.name for x in r[:3]] == ["hash_table_Lookup/SelectV2:0", "hash_table_Size/add:0",
                                       "hash_table_1_Lookup/SelectV2:0"]
    assert r[3] == "hash_table_1"
    with g.as_default(), tf.Session() as sess:
        sess.run(tf.tables_initializer())
        assert sess.run(r[2]).tolist() == [0, 2]
        assert sess.run(r[1]) == 6

    g, r = _graph_of(lambda: (lambda t: [t.lookup(tf.constant(["a", "zz"])), t.size()])(
        tf.lookup.StaticVocabularyTable(None, num_oov_buckets=3)))
    assert [x.name for x in r] == ["hash_bucket_Lookup/hash_bucket:0", "hash_bucket_Size/add:0"]


def test_lookup_table_errors_are_tensorflows():
    t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1)
    with pytest.raises(TypeError, match=r"Dtype of argument `keys` must be <dtype: 'string'>, "
                                        r"received: <dtype: 'int32'>"):
        t.lookup(tf.constant([1]))
    with pytest.raises(TypeError, match=r"Invalid `value_dtype`, expected <dtype: 'int64'> but "
                                        r"got <dtype: 'int32'>\."):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), 2)
    with pytest.raises(ValueError, match=r"`num_oov_buckets` must be > 0; use StaticHashTable\."):
        tf.lookup.StaticVocabularyTable(None, 0)
    with pytest.raises(ValueError, match=r"`vocabulary_list` must be specified\."):
        tf.contrib.lookup.index_table_from_tensor(None)


def test_id_tables_take_their_key_dtype_and_hash_with_the_hasher_spec():
    lookup = tf.contrib.lookup
    ints = lookup.index_table_from_tensor([7, 9], dtype=tf.int32)
    with pytest.raises(TypeError, match="must be <dtype: 'int64'>, received: <dtype: 'int32'>"):
        ints.lookup(tf.constant([9, 8], tf.int32))
    found = ints.lookup(tf.constant([9, 8], tf.int64))
    ints2 = lookup.index_table_from_tensor([7, 9], dtype=tf.int32, num_oov_buckets=2)
    with pytest.raises(TypeError, match="must be <dtype: 'int32'>, received: <dtype: 'int64'>"):
        ints2.lookup(tf.constant([9, 8], tf.int64))
    bucketed = ints2.lookup(tf.constant([9, 8], tf.int32))
    words = tf.constant(["a", "x", "y", "zz"])
    strong = lookup.index_table_from_tensor(["a", "b"], num_oov_buckets=3,
                                            hasher_spec=lookup.StrongHashSpec([3, 4]))
    legacy = lookup.index_table_from_tensor(["a", "b"], num_oov_buckets=3,
                                            hasher_spec=lookup.HasherSpec("legacy", None))
    none = lookup.IdTableWithHashBuckets(None, 7)
    fetches = [found, bucketed, strong.lookup(words), legacy.lookup(words),
               none.lookup(tf.constant(["a", "x"])), none.size(), strong.size()]
    assert (none.name, strong.name) == ("hash_bucket", "hash_table")
    assert fetches[4].name == "hash_bucket_Lookup/hash_bucket:0"
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got = sess.run(fetches)
    assert [g.tolist() for g in got[:5]] == [[1, -1], [1, 3], [0, 4, 3, 2], [0, 3, 3, 4],
                                            [5, 1]]
    assert got[5:] == [7, 5]
    with pytest.raises(ValueError, match="`key` must have size 2"):
        lookup.StrongHashSpec([1])


def test_tables_and_their_sizes_inside_dataset_functions(files):
    vocab = str(files / "v.txt")
    t1 = tf.lookup.StaticVocabularyTable(
        tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1), 4)
    t2 = tf.contrib.lookup.index_table_from_file(vocab, num_oov_buckets=2)
    t3 = tf.contrib.lookup.index_table_from_tensor(tf.constant(["b", "c"]))
    ds = tf.data.Dataset.from_tensor_slices(["a q", "c b zz"]).map(
        lambda s: tf.string_split([s]).values).map(
        lambda w: (t1.lookup(w), t2.lookup(w), t3.lookup(w), t1.size(), t3.size()))
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run([tf.tables_initializer(), it.initializer])
        first, second = sess.run(nxt), sess.run(nxt)
    assert [np.asarray(v).tolist() for v in first] == [[0, 4], [0, 4], [-1, -1], 7, 2]
    assert [np.asarray(v).tolist() for v in second] == [[2, 1, 5], [2, 1, 3], [1, 0, -1], 7, 2]


# -- string ops ---------------------------------------------------------------------------
def test_string_ops_are_named_as_tensorflows_wrappers_name_them():
    cases = [
        (lambda: tf.reduce_join([["a", "b"], ["c", "d"]]), "ReduceJoin/ReduceJoin:0", [],
         ["ReduceJoin/Const", "ReduceJoin/Const_1", "ReduceJoin/ReduceJoin"], b"abcd"),
        (lambda: tf.reduce_join([["a", "b"], ["c", "d"]], axis=[0], keep_dims=True,
                                name="x"), "ReduceJoin/x:0", [1, 2],
         ["ReduceJoin/Const", "ReduceJoin/x/reduction_indices", "ReduceJoin/x"],
         [[b"ac", b"bd"]]),
        (lambda: tf.string_split(["a b", "c"]).values, "StringSplit/StringSplit:1", [None],
         ["StringSplit/Const", "StringSplit/Const_1", "StringSplit/StringSplit"],
         [b"a", b"b", b"c"]),
        (lambda: tf.strings.join(["a", "b"]), "StringJoin:0", [],
         ["StringJoin/inputs_0", "StringJoin/inputs_1", "StringJoin"], b"ab"),
        (lambda: tf.substr(["abc"], [1], [1]), "Substr:0", [1],
         ["Substr/input", "Substr/pos", "Substr/len", "Substr"], [b"b"]),
        (lambda: tf.strings.unsorted_segment_join(["a", "b", "c"], [0, 1, 0], 2),
         "UnsortedSegmentJoin:0", [2],
         ["UnsortedSegmentJoin/inputs", "UnsortedSegmentJoin/segment_ids",
          "UnsortedSegmentJoin/num_segments", "UnsortedSegmentJoin"], [b"ac", b"b"]),
    ]
    for fn, name, shape, ops, value in cases:
        with tf.Graph().as_default() as g:
            r = fn()
            assert (r.name, r.shape.as_list()) == (name, shape)
            assert [o.name for o in g.get_operations()] == ops
            with tf.Session() as sess:
                assert np.asarray(sess.run(r)).tolist() == value
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [3])
        assert tf.strings.join([x, x], separator=" ").name == "StringJoin:0"
        assert tf.substr(x, 0, 1, name="ss").name == "ss:0"


def test_text_cleaning_with_string_ops_matches_tensorflow():
    lines = tf.constant(["Hello,  World! ", "the quick  brown", "", "A-b c"])
    sp = tf.string_split(lines)
    fetches = [
        tf.strings.split(lines, sep=" "),
        tf.strings.lower(lines), tf.regex_replace(lines, r"[^A-Za-z ]", ""),
        tf.strings.regex_replace(lines, "  +", " ", replace_global=True),
        tf.strings.strip(lines),
        tf.reduce_join(tf.string_split([lines[1]]).values, separator="|"),
        tf.strings.length(lines), tf.substr(lines, 0, 3),
        tf.sparse_tensor_to_dense(sp, default_value="<pad>"),
        tf.string_to_hash_bucket_fast(sp.values, 50),
        tf.string_to_hash_bucket_strong(sp.values, 50, key=[1, 2]),
        tf.string_to_hash_bucket(sp.values, 50)]
    assert (sp.indices.name, sp.values.shape.as_list()) == ("StringSplit/StringSplit:0", [None])
    with tf.Session() as sess:
        got = sess.run(fetches)
    assert got[0].values.tolist() == [b"Hello,", b"", b"World!", b"", b"the", b"quick", b"",
                                      b"brown", b"", b"A-b", b"c"]
    assert got[0].dense_shape.tolist() == [4, 4]
    assert got[1].tolist() == [b"hello,  world! ", b"the quick  brown", b"", b"a-b c"]
    assert got[2].tolist() == [b"Hello  World ", b"the quick  brown", b"", b"Ab c"]
    assert got[3].tolist() == [b"Hello, World! ", b"the quick brown", b"", b"A-b c"]
    assert got[4].tolist() == [b"Hello,  World!", b"the quick  brown", b"", b"A-b c"]
    assert got[5] == b"the|quick|brown"
    assert got[6].tolist() == [15, 16, 0, 5]
    assert got[7].tolist() == [b"Hel", b"the", b"", b"A-b"]
    assert got[8].tolist() == [[b"Hello,", b"World!", b"<pad>"], [b"the", b"quick", b"brown"],
                               [b"<pad>"] * 3, [b"A-b", b"c", b"<pad>"]]
    assert got[9].tolist() == [0, 40, 4, 26, 13, 36, 22]
    assert got[10].tolist() == [1, 30, 32, 37, 24, 37, 49]
    assert got[11].tolist() == [3, 30, 35, 38, 21, 8, 47]


# -- transformer encoder ------------------------------------------------------------------
def test_transformer_encoder_with_masked_multi_head_attention_trains_as_tensorflow():
    tf.set_random_seed(3)
    n_vocab, hidden, heads, ff = 11, 8, 2, 16
    ids = tf.placeholder(tf.int32, [None, None], name="ids")
    lens = tf.placeholder(tf.int32, [None], name="lens")
    is_training = tf.placeholder_with_default(False, [], name="is_training")

    def gelu(x):
        return x * 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))

    def layer_norm(x, name):
        with tf.variable_scope(name):
            mean, var = tf.nn.moments(x, axes=[-1], keep_dims=True)
            g = tf.get_variable("gamma", [hidden], initializer=tf.ones_initializer())
            b = tf.get_variable("beta", [hidden], initializer=tf.zeros_initializer())
            return g * (x - mean) * tf.rsqrt(var + 1e-6) + b

    def positions(length, depth):
        pos = tf.cast(tf.range(length), tf.float32)
        half = depth // 2
        inc = math.log(10000.0) / (tf.cast(half, tf.float32) - 1)
        inv = tf.exp(tf.cast(tf.range(half), tf.float32) * -inc)
        scaled = tf.expand_dims(pos, 1) * tf.expand_dims(inv, 0)
        signal = tf.concat([tf.sin(scaled), tf.cos(scaled)], axis=1)
        signal = tf.pad(signal, [[0, 0], [0, tf.mod(depth, 2)]])
        return tf.reshape(signal, [1, length, depth])

    def split_heads(x):
        s = tf.shape(x)
        return tf.transpose(tf.reshape(x, [s[0], s[1], heads, hidden // heads]), [0, 2, 1, 3])

    def attention(x, mask, name):
        with tf.variable_scope(name):
            q = tf.layers.dense(x, hidden, use_bias=False, name="q",
                                kernel_initializer=tf.truncated_normal_initializer(stddev=0.02))
            k = tf.layers.dense(x, hidden, use_bias=False, name="k")
            v = tf.layers.dense(x, hidden, use_bias=False, name="v")
            q, k, v = split_heads(q), split_heads(k), split_heads(v)
            q *= (hidden // heads) ** -0.5
            logits = tf.matmul(q, k, transpose_b=True)
            logits += ((1.0 - tf.cast(mask, tf.float32)) * -1e9)[:, tf.newaxis, tf.newaxis, :]
            w = tf.nn.softmax(logits, name="attention_weights")
            w = tf.layers.dropout(w, rate=0.1, training=is_training)
            o = tf.transpose(tf.matmul(w, v), [0, 2, 1, 3])
            s = tf.shape(o)
            return tf.layers.dense(tf.reshape(o, [s[0], s[1], hidden]), hidden,
                                   name="output_transform"), w

    with tf.variable_scope("encoder"):
        emb = tf.get_variable("embedding", [n_vocab, hidden],
                              initializer=tf.random_normal_initializer(0.0, hidden ** -0.5))
        x = tf.gather(emb, ids) * hidden ** 0.5
        x += positions(tf.shape(ids)[1], hidden)
        mask = tf.sequence_mask(lens, tf.shape(ids)[1])
        for i in range(2):
            with tf.variable_scope(f"layer_{i}"):
                y, w = attention(layer_norm(x, "ln1"), mask, "self_attention")
                x += y
                h = tf.layers.dense(layer_norm(x, "ln2"), ff, activation=gelu, name="ffn1")
                x += tf.layers.dense(h, hidden, name="ffn2")
        x = layer_norm(x, "final_ln")
        logits = tf.einsum("btd,vd->btv", x, emb)
    labels = tf.concat([ids[:, 1:], tf.zeros_like(ids[:, :1])], axis=1)
    weights = tf.cast(mask, tf.float32)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    loss = tf.reduce_sum(xent * weights) / tf.reduce_sum(weights)
    step = tf.train.get_or_create_global_step()
    t = tf.cast(step + 1, tf.float32)
    lr = 0.01 * tf.minimum(1.0, t / 4.0) * tf.rsqrt(tf.maximum(t, 4.0))
    tvars = tf.trainable_variables()
    grads, gnorm = tf.clip_by_global_norm(tf.gradients(loss, tvars), 1.0)
    train = tf.train.AdamOptimizer(lr, beta1=0.9, beta2=0.98, epsilon=1e-9).apply_gradients(
        zip(grads, tvars), global_step=step)
    assert len(tvars) == 29
    assert [v.name for v in tvars][3:5] == ["encoder/layer_0/self_attention/q/kernel:0",
                                            "encoder/layer_0/self_attention/k/kernel:0"]
    assert (w.shape.as_list(), w.name, logits.name, logits.shape.as_list()) == (
        [None, 2, None, None], "encoder/layer_1/self_attention/dropout/cond/Merge:0",
        "encoder/einsum/Einsum:0", [None, None, 11])
    feed = {ids: np.random.RandomState(0).randint(1, n_vocab, (2, 5)), lens: [5, 3]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [sess.run([train, loss, gnorm], feed)[1:] for _ in range(3)]
        weights_row = sess.run(w, feed)[1, 0]
    np.testing.assert_allclose(got, [[2.7689757, 2.2287462], [2.7099018, 2.274172],
                                     [2.5886745, 2.3384016]], rtol=2e-6)
    np.testing.assert_allclose(weights_row[:2], [[0.3166, 0.3364, 0.3471, 0.0, 0.0],
                                                 [0.3254, 0.3334, 0.3412, 0.0, 0.0]],
                               atol=1e-4)


# -- char-RNN and bag-of-words embeddings ---------------------------------------------------
def test_char_rnn_with_wrapped_grus_partitioned_embedding_and_sampling():
    tf.set_random_seed(11)
    n_vocab, n_emb, n_hidden, steps, batch = 9, 4, 6, 5, 3
    x = tf.placeholder(tf.int32, [batch, steps])
    y = tf.placeholder(tf.int32, [batch, steps])
    emb = tf.get_variable("emb", [n_vocab, n_emb], partitioner=tf.fixed_size_partitioner(2))
    inp = tf.nn.embedding_lookup(emb, x, partition_strategy="div", max_norm=1.0)
    cells = []
    for i in range(2):
        c = tf.nn.rnn_cell.GRUCell(n_hidden, kernel_initializer=tf.orthogonal_initializer(),
                                   name=f"gru{i}")
        c = tf.nn.rnn_cell.DropoutWrapper(c, output_keep_prob=1.0, seed=5)
        cells.append(tf.nn.rnn_cell.ResidualWrapper(c) if i else c)
    cell = tf.nn.rnn_cell.MultiRNNCell(cells)
    outs, final = tf.nn.dynamic_rnn(cell, inp, initial_state=cell.zero_state(batch, tf.float32),
                                    sequence_length=[5, 3, 4])
    logits = tf.layers.dense(tf.reshape(outs, [-1, n_hidden]), n_vocab, name="softmax")
    mask = tf.reshape(tf.sequence_mask([5, 3, 4], steps, dtype=tf.float32), [-1])
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(y, [-1]),
                                                          logits=logits)
    loss = tf.reduce_sum(xent * mask) / tf.reduce_sum(mask)
    sp_ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 8], tf.int64), [3, 2])
    sp_w = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [2.0, 1.0, 0.5], [3, 2])
    bag = tf.nn.embedding_lookup_sparse(emb, sp_ids, sp_w, combiner="sqrtn",
                                        partition_strategy="div")
    safe = tf.nn.safe_embedding_lookup_sparse(emb, sp_ids, sp_w, combiner="mean", default_id=0,
                                              partition_strategy="div")
    opt = tf.train.RMSPropOptimizer(0.01, decay=0.95, momentum=0.1, centered=True)
    gv = opt.compute_gradients(loss)
    train = opt.apply_gradients([(g if isinstance(g, tf.IndexedSlices)
                                  else tf.clip_by_norm(g, 1.0), v) for g, v in gv])
    sample = tf.multinomial(tf.reshape(logits, [batch, steps, n_vocab])[:, -1] / 0.7, 2,
                            seed=4, output_dtype=tf.int32)
    assert (inp.name, bag.name, bag.shape.as_list(), safe.shape.as_list()) == (
        "embedding_lookup/clip_by_norm:0", "embedding_lookup_sparse:0", [None, 4], [3, 4])
    assert [type(g).__name__ for g, _ in gv][:3] == ["IndexedSlices", "IndexedSlices", "Tensor"]
    assert [v.name for v in tf.trainable_variables()][:3] == [
        "emb/part_0:0", "emb/part_1:0", "rnn/multi_rnn_cell/cell_0/gru0/gates/kernel:0"]
    rng = np.random.RandomState(1)
    feed = {x: rng.randint(0, n_vocab, (batch, steps)), y: rng.randint(0, n_vocab, (batch, steps))}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(inp, feed)[0, :2]
        losses = [sess.run([train, loss], feed)[1] for _ in range(3)]
        bags = sess.run([bag, safe])
        drawn = sess.run(sample, feed)
        state = sess.run(final, feed)[1]
    np.testing.assert_allclose(first, [[0.1669, -0.3785, 0.1566, 0.3185],
                                       [0.1285, 0.0923, 0.1186, 0.3196]], atol=1e-4)
    np.testing.assert_allclose(losses, [2.1928904, 2.1913426, 2.1896074], rtol=1e-6)
    np.testing.assert_allclose(bags[0], [[0.3001, -0.3161, -0.5409, 0.2266], [0.0] * 4,
                                         [0.1286, 0.0927, 0.1185, 0.3199]], atol=1e-4)
    np.testing.assert_allclose(bags[1], [[0.2237, -0.2356, -0.4031, 0.1689],
                                         [0.3766, 0.5418, -0.5408, -0.1456],
                                         [0.1286, 0.0927, 0.1185, 0.3199]], atol=1e-4)
    assert drawn.tolist() == [[3, 1], [0, 4], [0, 7]]
    np.testing.assert_allclose(state, [[0.0567, 0.0475, 0.0314, 0.0934, 0.0193, -0.0181],
                                       [0.0059, -0.0114, 0.0199, 0.0507, 0.009, 0.0506],
                                       [-0.0619, 0.0302, -0.0702, -0.0195, 0.0212, 0.0047]],
                               atol=1e-4)


def test_weighted_embedding_lookup_sparse_gives_zeros_for_rows_without_ids():
    sp_ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 8], tf.int64), [3, 2])
    sp_w = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [2.0, 1.0, 0.5], [3, 2])
    table = np.arange(36, dtype=np.float32).reshape(9, 4) / 10
    parts = [tf.constant(table[:5]), tf.constant(table[5:])]
    mean = tf.nn.embedding_lookup_sparse(tf.constant(table), sp_ids, sp_w, combiner="mean")
    sqrtn = tf.nn.embedding_lookup_sparse(parts, sp_ids, sp_w, combiner="sqrtn",
                                          partition_strategy="div")
    plain = tf.nn.embedding_lookup_sparse(parts, sp_ids, None, combiner="sum",
                                          partition_strategy="div")
    named = tf.nn.embedding_lookup_sparse(tf.constant(table), sp_ids, sp_w, name="bag")
    clipped = tf.nn.embedding_lookup(parts, [1, 7], max_norm=0.5)
    assert [t.name for t in (mean, sqrtn, plain, named)] == [
        "embedding_lookup_sparse:0", "embedding_lookup_sparse_1:0",
        "embedding_lookup_sparse_2:0", "bag:0"]
    assert clipped.name == "embedding_lookup/clip_by_norm:0"
    with tf.Session() as sess:
        got = sess.run([mean, sqrtn, plain, clipped])
    np.testing.assert_allclose(got[0], [[0.6667, 0.7667, 0.8667, 0.9667], [0.0] * 4,
                                        [3.2, 3.3, 3.4, 3.5]], atol=1e-4)
    np.testing.assert_allclose(got[1], [[0.8944, 1.0286, 1.1628, 1.2969], [0.0] * 4,
                                        [3.2, 3.3, 3.4, 3.5]], atol=1e-4)
    np.testing.assert_allclose(got[2], [[1.6, 1.8, 2.0, 2.2], [0.0] * 4,
                                        [3.2, 3.3, 3.4, 3.5]], atol=1e-5)
    np.testing.assert_allclose(got[3], [[0.2322, 0.2439, 0.2555, 0.2671],
                                        [0.2387, 0.2461, 0.2536, 0.261]], atol=1e-4)


def test_text_file_initializer_checks_and_integer_lines_as_tensorflow(tmp_path):
    path = str(tmp_path / "n.txt")
    (tmp_path / "n.txt").write_text("10\n20\n")
    init = tf.lookup.TextFileInitializer
    bad = [
        (lambda: init(path, tf.int32, -1, tf.int64, 0),
         r"`key_dtype` must be int64 if `key_index` is -1, received: <dtype: 'int32'>"),
        (lambda: init(path, tf.string, -2, tf.int32, -1),
         r"`value_dtype` must be int64 for `value_index` -1, received: <dtype: 'int32'>"),
        (lambda: init(path, tf.float32, -2, tf.int64, -1),
         r"`key_dtype` should be either integer or string for `key_index` -2, received: "
         r"<dtype: 'float32'>"),
        (lambda: init("", tf.string, -2, tf.int64, -1),
         r"`filename` argument required for tf.lookup.TextFileInitializer"),
        (lambda: init(path, tf.string, -3, tf.int64, -1), r"`key_index` should be >= -2, "
                                                          r"received: -3\."),
        (lambda: init(path, tf.string, -2, tf.int64, -1, vocab_size=0),
         r"`vocab_size` should be > 0, received: 0"),
    ]
    for make, message in bad:
        with pytest.raises(ValueError, match=message):
            make()
    # whole lines as int64 values, and line numbers shifted by value_index_offset
    by_line = tf.lookup.StaticHashTable(init(path, tf.int64, -1, tf.int64, -2), -1)
    by_value = tf.lookup.StaticHashTable(init(path, tf.int64, -2, tf.int64, -1,
                                              value_index_offset=5), -1)
    # TF1's one-call helpers over index tables
    ids = tf.contrib.lookup.string_to_index(tf.constant(["b", "zz"]), ["a", "b"])
    words = tf.contrib.lookup.index_to_string(tf.constant([1, 5], tf.int64), ["a", "b"])
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        assert sess.run(by_line.lookup(tf.constant([0, 1, 2], tf.int64))).tolist() == [10, 20, -1]
        assert sess.run(by_value.lookup(tf.constant([10, 20, 3], tf.int64))).tolist() == [5, 6, -1]
        assert sess.run(ids).tolist() == [1, -1]
        assert sess.run(words).tolist() == [b"b", b"UNK"]
