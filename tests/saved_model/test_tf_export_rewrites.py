"""flowgraph-only ops in a SavedModel for TensorFlow: ``Tensordot`` lowered to
Transpose/Reshape/MatMul (`tf_formats.op_rewrites_tensordot`) and vocabulary-file
lookups written as hash tables over assets (`saved_model.tf_export_tables`).

Checked with the tf-oracle (TensorFlow 2.15, ``tf.compat.v1.saved_model.loader.load``),
not a test dependency:

- the export of `_export_tensordot` (axes ``[[1, 2], [1, 0]]``, ``1`` and ``0``, a batch
  dimension unknown): TensorFlow loads it and its three outputs equal flowgraph's
  exactly (max |diff| 0.0);
- the export of `test_vocabulary_file_lookups_become_tables_over_assets` (indicator
  columns, no main op of its own): TensorFlow loads it and its output equals
  flowgraph's exactly, OOV buckets included;
- a ``DNNLinearCombinedClassifier`` over ``categorical_column_with_vocabulary_file``
  columns (strings with 2 OOV buckets, int64 codes with none; linear, embedding and
  indicator uses) exported by ``export_saved_model`` under ``export_format("tensorflow")``
  as `test_estimator_with_vocabulary_files_exports_tensorflow_ops` does: TensorFlow
  loads it (assets fed to the table initializers by its loader through the main op)
  and ``predict`` gives the estimator's probabilities to 9e-8; ``serving_default``
  classes [b'0', b'1'].
"""

import os

import numpy as np

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import AssetFileDefProto, SavedModelProto
from flowgraph.framework.tf_formats.saver_graph import SAVER_OPS
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS
from flowgraph.ops.math_ops import fused_tensordot

TF_OPS = set(OP_DEFS) | SAVER_OPS


def _meta_graph(export_dir):
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        return SavedModelProto.FromString(f.read()).meta_graphs[0]


def _load_and_run(export_dir, signature, feeds):
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(export_dir))
        sig = meta.signature_def[signature]
        fd = {sig.inputs[k].name: v for k, v in feeds.items()}
        return {k: sess.run(info.name, fd) for k, info in sig.outputs.items()}


def _export_tensordot(export_dir, x_value):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
        w = tf.Variable(np.arange(24, dtype=np.float32).reshape(4, 3, 2) / 10, name="w")
        # the one-op form (tf.tensordot itself builds TensorFlow's ops already)
        y = fused_tensordot(x, w, [[1, 2], [1, 0]], name="dot")
        z = fused_tensordot(y, tf.constant([[1.0, 2.0], [3.0, 4.0]]), 1, name="dot2")
        o = fused_tensordot(z, tf.constant([2.0, 3.0]), 0, name="outer")
        assert {y.op.type, z.op.type, o.op.type} == {"Tensordot"}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, str(export_dir), {"x": x},
                                       {"y": y, "z": z, "o": o}, format="tensorflow")
            return sess.run({"y": y, "z": z, "o": o}, {x: x_value})


def test_tensordot_is_written_as_tensorflow_ops(tmp_path):
    x = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    expected = _export_tensordot(tmp_path / "1", x)
    ops = {n.op for n in _meta_graph(tmp_path / "1").graph_def.node}
    assert "Tensordot" not in ops and {"Transpose", "MatMul", "Reshape"} <= ops
    assert ops <= TF_OPS, f"ops TensorFlow lacks: {ops - TF_OPS}"
    got = _load_and_run(tmp_path / "1", "serving_default", {"x": x})
    for key in ("y", "z", "o"):
        np.testing.assert_array_equal(got[key], expected[key])
    # and for a batch of another size: the shapes are read at run time
    x5 = np.random.RandomState(1).randn(5, 3, 4).astype(np.float32)
    w = np.arange(24, dtype=np.float32).reshape(4, 3, 2) / 10
    got5 = _load_and_run(tmp_path / "1", "serving_default", {"x": x5})
    np.testing.assert_allclose(got5["y"], np.tensordot(x5, w, [[1, 2], [1, 0]]), rtol=1e-5)
    assert got5["o"].shape == (5, 2, 2)


def _vocabulary_files(tmp_path):
    colors, codes = tmp_path / "colors.txt", tmp_path / "codes.txt"
    colors.write_text("red\ngreen\nblue\n")
    codes.write_text("10\n20\n30\n40\n")
    fc = tf.feature_column
    return (fc.categorical_column_with_vocabulary_file("color", str(colors),
                                                       num_oov_buckets=2),
            fc.categorical_column_with_vocabulary_file("code", str(codes), dtype=tf.int64))


def test_vocabulary_file_lookups_become_tables_over_assets(tmp_path):
    color, code = _vocabulary_files(tmp_path)
    fc = tf.feature_column
    colors = np.array([b"red", b"pink", b"blue", b"green", b"teal"], dtype=object)
    codes = np.array([10, 99, 40, 20, 30], np.int64)
    with tf.Graph().as_default():
        features = {"color": tf.placeholder(tf.string, [None], name="color"),
                    "code": tf.placeholder(tf.int64, [None], name="code")}
        dense = fc.input_layer(features, [fc.indicator_column(color),
                                          fc.indicator_column(code)])
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            expected = sess.run(dense, {features["color"]: colors, features["code"]: codes})
            tf.saved_model.simple_save(sess, str(tmp_path / "1"), features, {"dense": dense},
                                       format="tensorflow")
    mg = _meta_graph(tmp_path / "1")
    ops = {n.op for n in mg.graph_def.node}
    assert "VocabLookup" not in ops and {"HashTableV2", "InitializeTableFromTextFileV2",
                                         "LookupTableFindV2"} <= ops
    assert ops <= TF_OPS, f"ops TensorFlow lacks: {ops - TF_OPS}"
    assert list(mg.asset_file_def) == []  # TF1's builder: the collection only
    assert sorted(AssetFileDefProto.FromString(i.value).filename for i in
                  mg.collection_def["saved_model_assets"].any_list.value) == \
        ["codes.txt", "colors.txt"]
    (main_op,) = mg.collection_def["saved_model_main_op"].node_list.value
    inits = [i for n in mg.graph_def.node if n.name == main_op for i in n.input]
    assert len(inits) == 2 and all(i.endswith("/table_init") for i in inits)
    got = _load_and_run(tmp_path / "1", "serving_default", {"color": colors, "code": codes})
    np.testing.assert_array_equal(got["dense"], expected)
    # columns by name: code (4 ids; 99 is unknown: no id), color (3 ids + 2 OOV buckets)
    assert expected[1, :4].sum() == 0 and expected[1, 4:7].sum() == 0
    assert expected[1, 7:].sum() == 1 and expected[:, :7].sum() == 7  # 4 codes, 3 colors


def test_estimator_with_vocabulary_files_exports_tensorflow_ops(tmp_path):
    color, code = _vocabulary_files(tmp_path)
    fc = tf.feature_column
    rng = np.random.RandomState(0)
    n = rng.randn(40).astype(np.float32)
    features = {"n": n,
                "color": np.array([["red", "green", "blue", "pink"][i % 4] for i in range(40)]),
                "code": np.array([[10, 20, 30, 40, 99][i % 5] for i in range(40)], np.int64)}
    wide = [color, code]
    deep = [fc.numeric_column("n"), fc.embedding_column(color, 3), fc.indicator_column(code)]
    est = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[4],
        model_dir=str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn(features, (n > 0).astype(np.int64),
                                                 batch_size=20, num_epochs=None,
                                                 shuffle=True), steps=3)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        fc.make_parse_example_spec(wide + deep))
    with tf.saved_model.export_format("tensorflow"):
        path = os.fsdecode(est.export_saved_model(str(tmp_path / "export"), receiver))
    ops = {node.op for node in _meta_graph(path).graph_def.node}
    assert ops <= TF_OPS, f"ops TensorFlow lacks: {ops - TF_OPS}"
    k = 8
    expected = np.stack([p["probabilities"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({a: v[:k] for a, v in features.items()},
                                           shuffle=False))])
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "n": tf.train.Feature(float_list=tf.train.FloatList(value=[float(a)])),
        "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b.encode()])),
        "code": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(c)]))}))
        .SerializeToString()
        for a, b, c in zip(n[:k], features["color"][:k], features["code"][:k])]
    got = _load_and_run(path, "predict", {"examples": examples})
    np.testing.assert_allclose(got["probabilities"], expected, rtol=1e-5, atol=1e-7)
