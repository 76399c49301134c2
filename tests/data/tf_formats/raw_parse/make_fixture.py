"""Writes the fixtures of tests/ops/test_raw_parse.py with real TensorFlow 2.15 (run once:
``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``).

``graph.pb`` / ``expected.npz``: a TF1-mode graph of the Example-parsing, regex and
summary op types built through TensorFlow's public API where it emits them
(`tf.io.parse_example` -> ``ParseExampleV2`` with sparse, dense, sequence and ragged
features; `tf.io.parse_sequence_example` and `parse_single_sequence_example` ->
``ParseSequenceExampleV2``; `tf.strings.regex_replace` / `regex_full_match` with tensor
and Python-string patterns) and through `tf.raw_ops` for the TF 1.x op types
(``ParseSingleExample``, ``ParseSequenceExample``, ``ParseSingleSequenceExample``,
``TensorSummary``). ``expected.npz`` holds the fed values (``feed.ser`` and
``feed.seqs``, each as ``.bytes`` and ``.lengths``: npz drops a byte string's trailing
NULs) and TensorFlow's fetched values keyed by fetch name.

``linear_classifier/``: a `tf.estimator.LinearClassifier` (numeric, vocabulary and
hashed features; 5 training steps from zero weights) exported with
`build_parsing_serving_input_receiver_fn`, plus ``predictions.npz``: the serialized
Examples fed (``examples.bytes`` / ``.lengths``) and TensorFlow's predict-signature
outputs for them.
"""

import os
import shutil
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
R = tf.raw_ops


def _plain(value):
    """An npz-storable array (strings as bytes, never object arrays)."""
    value = np.asarray(value)
    return value.astype(bytes) if value.dtype == object else value


def _packed(name, items):
    """Byte strings as npz arrays that keep trailing NULs: ``name.bytes`` (uint8, all of
    them joined) and ``name.lengths``."""
    return {f"{name}.bytes": np.frombuffer(b"".join(items), np.uint8),
            f"{name}.lengths": np.array([len(x) for x in items], np.int64)}


def example(**kw):
    f = {}
    for k, v in kw.items():
        if isinstance(v[0], float):
            f[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        elif isinstance(v[0], int):
            f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
        else:
            f[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def seq_example(n, steps, words):
    se = tf.train.SequenceExample()
    se.context.feature["n"].int64_list.value.append(n)
    se.context.feature["m"].bytes_list.value.extend([b"c%d" % i for i in range(n)])
    for t in steps:
        se.feature_lists.feature_list["t"].feature.add().float_list.value.extend(t)
    for w in words:
        se.feature_lists.feature_list["u"].feature.add().int64_list.value.extend(w)
    return se.SerializeToString()


EXAMPLES = np.array([example(a=[1.0, 2.0], b=[3, 4, 5], s=[b"x", b"y"], r=[7, 8], l=[1, 1]),
                     example(b=[6], s=[b"z"], a=[0.5, -1.0], q=[2.5, 3.5, 4.5], l=[0])],
                    dtype=object)
SEQS = np.array([seq_example(2, [[1., 2.], [3., 4.], [5., 6.]], [[1], [2, 3]]),
                 seq_example(1, [[7., 8.]], [[], [4, 5, 6], [7]])], dtype=object)

g = tf.Graph()
with g.as_default():
    ser = tf.placeholder(tf.string, [None], name="ser")
    seqs = tf.placeholder(tf.string, [None], name="seqs")
    fetch = {}
    p = tf.io.parse_example(ser, {
        "a": tf.io.FixedLenFeature([2], tf.float32),
        "b": tf.io.VarLenFeature(tf.int64),
        "k": tf.io.FixedLenFeature([], tf.int64, default_value=9),
        "q": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True,
                                           default_value=-1.0),
        "s": tf.io.VarLenFeature(tf.string),
        "rag": tf.io.RaggedFeature(tf.int64, value_key="r",
                                   partitions=[tf.io.RaggedFeature.RowLengths("l")]),
    })
    fetch["pe_a"], fetch["pe_k"], fetch["pe_q"] = p["a"], p["k"], p["q"]
    fetch["pe_b_idx"], fetch["pe_b_val"] = tf.identity(p["b"].indices), tf.identity(p["b"].values)
    fetch["pe_b_shape"] = tf.identity(p["b"].dense_shape)
    fetch["pe_s_val"] = tf.identity(p["s"].values)
    fetch["pe_rag_val"] = tf.identity(p["rag"].flat_values)
    fetch["pe_rag_inner"] = tf.identity(p["rag"].values.row_splits)
    fetch["pe_rag_outer"] = tf.identity(p["rag"].row_splits)
    one = tf.io.parse_single_example(ser[0], {"a": tf.io.FixedLenFeature([2], tf.float32),
                                              "s": tf.io.VarLenFeature(tf.string)})
    fetch["pse_a"], fetch["pse_s_idx"] = one["a"], tf.identity(one["s"].indices)
    ctx, sq, ln = tf.io.parse_sequence_example(
        seqs, {"n": tf.io.FixedLenFeature([], tf.int64),
               "rm": tf.io.RaggedFeature(tf.string, value_key="m")},
        {"t": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
         "u": tf.io.RaggedFeature(tf.int64)})
    fetch["pq_n"] = ctx["n"]
    fetch["pq_rm_val"] = tf.identity(ctx["rm"].values)
    fetch["pq_rm_splits"] = tf.identity(ctx["rm"].row_splits)
    fetch["pq_t"], fetch["pq_t_len"] = sq["t"], ln["t"]
    fetch["pq_u_val"] = tf.identity(sq["u"].flat_values)
    fetch["pq_u_inner"] = tf.identity(sq["u"].values.row_splits)
    fetch["pq_u_outer"] = tf.identity(sq["u"].row_splits)
    _, sv, _ = tf.io.parse_sequence_example(seqs, sequence_features={
        "u": tf.io.VarLenFeature(tf.int64)}, name="sparse_lists")
    fetch["pq_u_idx"], fetch["pq_u_shape"] = tf.identity(sv["u"].indices), tf.identity(
        sv["u"].dense_shape)
    c1, s1 = tf.io.parse_single_sequence_example(
        seqs[1], {"n": tf.io.FixedLenFeature([], tf.int64)},
        {"t": tf.io.FixedLenSequenceFeature([2], tf.float32),
         "u": tf.io.VarLenFeature(tf.int64)})
    fetch["pss_n"], fetch["pss_t"] = c1["n"], s1["t"]
    fetch["pss_u_idx"] = tf.identity(s1["u"].indices)
    # TF 1.x op types (what old graphs hold)
    v1 = R.ParseSingleExample(serialized=ser[1], dense_defaults=[
        tf.constant([0.0, 0.0]), tf.constant(7, tf.int64)], num_sparse=1, sparse_keys=["b"],
        dense_keys=["a", "k"], sparse_types=[tf.int64], dense_shapes=[[2], []])
    fetch["v1_single_b_val"] = tf.identity(v1.sparse_values[0])
    fetch["v1_single_a"], fetch["v1_single_k"] = (tf.identity(v1.dense_values[0]),
                                                  tf.identity(v1.dense_values[1]))
    v1s = R.ParseSequenceExample(
        serialized=seqs, debug_name=tf.constant([], tf.string),
        context_dense_defaults=[tf.constant([], tf.int64)],
        feature_list_dense_missing_assumed_empty=[], context_sparse_keys=["m"],
        context_dense_keys=["n"], feature_list_sparse_keys=["u"],
        feature_list_dense_keys=["t"], Ncontext_sparse=1, Ncontext_dense=1,
        Nfeature_list_sparse=1, Nfeature_list_dense=1, context_sparse_types=[tf.string],
        feature_list_dense_types=[tf.float32], context_dense_shapes=[[]],
        feature_list_sparse_types=[tf.int64], feature_list_dense_shapes=[[2]])
    fetch["v1_seq_m_val"] = tf.identity(v1s.context_sparse_values[0])
    fetch["v1_seq_n"] = tf.identity(v1s.context_dense_values[0])
    fetch["v1_seq_u_idx"] = tf.identity(v1s.feature_list_sparse_indices[0])
    fetch["v1_seq_t"] = tf.identity(v1s.feature_list_dense_values[0])
    fetch["v1_seq_t_len"] = tf.identity(v1s.feature_list_dense_lengths[0])
    v1ss = R.ParseSingleSequenceExample(
        serialized=seqs[0], feature_list_dense_missing_assumed_empty=tf.constant(["x"]),
        context_sparse_keys=[], context_dense_keys=[tf.constant("n")],
        feature_list_sparse_keys=[tf.constant("u")],
        feature_list_dense_keys=[tf.constant("t"), tf.constant("x")],
        context_dense_defaults=[tf.constant([], tf.int64)], debug_name="",
        context_sparse_types=[], feature_list_dense_types=[tf.float32, tf.int64],
        context_dense_shapes=[[]], feature_list_sparse_types=[tf.int64],
        feature_list_dense_shapes=[[2], []])
    fetch["v1_sseq_n"] = tf.identity(v1ss.context_dense_values[0])
    fetch["v1_sseq_u_val"] = tf.identity(v1ss.feature_list_sparse_values[0])
    fetch["v1_sseq_t"] = tf.identity(v1ss.feature_list_dense_values[0])
    fetch["v1_sseq_x"] = tf.identity(v1ss.feature_list_dense_values[1])
    # regex and summary ops
    words = tf.constant(["a1b22", "cat", "x9"])
    fetch["regex_replace"] = tf.strings.regex_replace(words, tf.constant("[0-9]+"), "#")
    fetch["regex_replace_first"] = tf.strings.regex_replace(
        words, tf.constant("[a-z]"), tf.constant("<\\0>"), replace_global=False)
    fetch["regex_full_match"] = tf.strings.regex_full_match(words, tf.constant("[a-z]+"))
    fetch["static_full_match"] = tf.strings.regex_full_match(words, "[a-z]+[0-9]+")
    fetch["tensor_summary"] = R.TensorSummary(tensor=tf.constant([[1.5, 2.0]]),
                                              description="d", display_name="dn")
    fetch = {k: tf.identity(v, name=k) for k, v in fetch.items()}
    with tf.Session() as sess:
        values = sess.run(fetch, {ser: EXAMPLES, seqs: SEQS})
    types = sorted({op.type for op in g.get_operations()})
    print([t for t in types if t.startswith(("Parse", "Regex", "Static", "Tensor"))])
with open(os.path.join(out, "graph.pb"), "wb") as fh:
    fh.write(g.as_graph_def().SerializeToString())
np.savez(os.path.join(out, "expected.npz"), **_packed("feed.ser", EXAMPLES),
         **_packed("feed.seqs", SEQS),
         **{k: _plain(v) for k, v in values.items()})

# -- a canned estimator served through a parsing receiver ---------------------------------
model_dir = os.path.join(out, "_train")
shutil.rmtree(model_dir, ignore_errors=True)
columns = [tf.feature_column.numeric_column("x", shape=[2]),
           tf.feature_column.categorical_column_with_vocabulary_list("color",
                                                                     ["red", "green", "blue"]),
           tf.feature_column.categorical_column_with_hash_bucket("tag", 5)]
est = tf.estimator.LinearClassifier(columns, n_classes=3, model_dir=model_dir,
                                    optimizer=tf.train.GradientDescentOptimizer(0.1))
X = np.array([[1.0, 2.0], [0.5, -1.0], [-1.0, 0.0], [2.0, 1.0]], np.float32)
COLORS = np.array([b"red", b"green", b"blue", b"red"])
TAGS = np.array([[b"a", b"b"], [b"c", b""], [b"a", b""], [b"d", b"e"]])
Y = np.array([0, 1, 2, 1], np.int64)


def input_fn():
    ds = tf.data.Dataset.from_tensor_slices(
        ({"x": X, "color": COLORS, "tag": TAGS}, Y)).batch(4).repeat()

    def sparse_tags(features, labels):
        t = features["tag"]
        idx = tf.where(tf.not_equal(t, b""))
        features["tag"] = tf.SparseTensor(idx, tf.gather_nd(t, idx), tf.shape(t, out_type=tf.int64))
        return features, labels
    return ds.map(sparse_tags)


est.train(input_fn, steps=5)
spec = tf.feature_column.make_parse_example_spec(columns)
receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
export_base = os.path.join(out, "_export")
shutil.rmtree(export_base, ignore_errors=True)
path = est.export_saved_model(export_base, receiver).decode()
target = os.path.join(out, "linear_classifier")
shutil.rmtree(target, ignore_errors=True)
shutil.copytree(path, target)
shutil.rmtree(export_base)
shutil.rmtree(model_dir)
served = np.array([example(x=[1.0, 2.0], color=[b"green"], tag=[b"a", b"c"]),
                   example(x=[-0.5, 3.0], color=[b"purple"]),
                   example(color=[b"blue"], x=[0.0, 0.0], tag=[b"d"])], dtype=object)
with tf.Session(graph=tf.Graph()) as sess:
    meta = tf.saved_model.loader.load(sess, ["serve"], target)
    sig = meta.signature_def["predict"]
    outs = sess.run({k: v.name for k, v in sig.outputs.items()},
                    {sig.inputs["examples"].name: served})
    types = sorted({n.op for n in meta.graph_def.node})
    print("serving graph parse ops:", [t for t in types if t.startswith("Parse")])
np.savez(os.path.join(target, "..", "predictions.npz"), **_packed("examples", served),
         **{k: _plain(v) for k, v in outs.items()})
print(sorted(outs))
