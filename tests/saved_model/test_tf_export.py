"""Exporting SavedModels in TensorFlow's format (`flowgraph.saved_model.tf_export`).

Checked with the tf-oracle (TensorFlow 2.15, ``tf.compat.v1.saved_model.loader.load``),
which is not a test dependency; the tests below load the same exports with flowgraph's
TF1-SavedModel loader:

- `simple_save(..., format="tensorflow")` of a dense-tanh-dense-softmax model (the
  one `_export_small` writes): TensorFlow loads it, its ``serving_default`` signature
  has inputs ['x'], outputs ['probs'], method ``tensorflow/serving/predict``, and its
  predictions equal flowgraph's to 6e-8.
- A canned ``DNNClassifier`` (hidden [8, 4], 3 classes, numeric column of shape [4])
  exported by ``export_saved_model`` with ``build_parsing_serving_input_receiver_fn``
  under ``export_format("tensorflow")``: TensorFlow loads it with signatures
  ['classification', 'predict', 'serving_default']; ``predict`` on serialized
  tf.Examples gives the estimator's probabilities to 6e-8, and ``serving_default``
  (``tensorflow/serving/classify``) classes [b'0' b'1' b'2'] with the same scores.
- A canned ``DNNLinearCombinedClassifier`` (wide: vocabulary-list, hash-bucket, crossed
  and bucketized columns; deep: numeric, embedding and indicator columns; the export of
  `test_wide_and_deep_export_uses_only_tensorflow_ops`): TensorFlow loads it and its
  ``predict`` probabilities equal the estimator's to 3e-8 (flowgraph's ``VocabLookup``,
  ``SafeSparseLookup`` and ``SparseCross`` written as TensorFlow's ops).
- The two-tag-set export of `test_two_tag_sets_share_the_variables`: TensorFlow loads
  each tag set and returns [2, 6].
- A TensorFlow 2.15 ``simple_save`` of a graph using ``tf.io.parse_example``
  (``ParseExampleV2``: a dense feature with a default, one without, a VarLenFeature)
  loads in flowgraph with TensorFlow's outputs ({'y': [[14.]], 'n': [2]}).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import (
    AssetFileDefProto,
    SavedModelProto,
    SaverDefProto,
)
from flowgraph.framework.tf_formats.saver_graph import SAVER_OPS
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS
from flowgraph.saved_model import tf_export

TF_OPS = set(OP_DEFS) | SAVER_OPS  # the ops recorded from TensorFlow, and its savers'
XS = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.0, 0.0, 0.0]], np.float32)


def _export_small(export_dir, **kwargs):
    """A small dense model written with simple_save; returns its predictions on XS."""
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        h = tf.layers.dense(x, 5, activation=tf.nn.tanh, name="hidden")
        probs = tf.nn.softmax(tf.layers.dense(h, 2, name="logits"), name="probs")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probs": probs},
                                       **kwargs)
            return sess.run(probs, {x: XS})


def _read_pb(export_dir) -> SavedModelProto:
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        return SavedModelProto.FromString(f.read())


def test_layout_and_messages_are_tensorflows(tmp_path):
    export = str(tmp_path / "1")
    _export_small(export, format="tensorflow")
    assert sorted(os.listdir(export)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    proto = _read_pb(export)
    assert proto.saved_model_schema_version == 1 and len(proto.meta_graphs) == 1
    mg = proto.meta_graphs[0]
    assert list(mg.meta_info_def.tags) == ["serve"]
    sig = mg.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert sig.inputs["x"].name == "x:0" and sig.inputs["x"].dtype == 1
    assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 3]
    sd = mg.saver_def
    assert (sd.version, sd.restore_op_name, sd.filename_tensor_name) == (
        SaverDefProto.V2, "save/restore_all", "save/Const:0")
    ops = {n.op for n in mg.graph_def.node}
    assert {"SaveV2", "RestoreV2", "VariableV2"} <= ops
    assert ops <= TF_OPS, f"ops TensorFlow lacks: {ops - TF_OPS}"
    assert len(mg.collection_def["variables"].bytes_list.value) == 4
    reader = tf.train.NewCheckpointReader(os.path.join(export, "variables", "variables"))
    assert sorted(reader.get_variable_to_shape_map()) == [
        "hidden/bias", "hidden/kernel", "logits/bias", "logits/kernel"]


def test_flowgraph_loads_its_tensorflow_export_in_a_fresh_process(tmp_path):
    export = str(tmp_path / "1")
    expected = _export_small(export, format="tensorflow")
    np.save(tmp_path / "xs.npy", XS)
    script = (
        "import sys, numpy as np, flowgraph as tf\n"
        "with tf.Session(graph=tf.Graph()) as sess:\n"
        "    meta = tf.saved_model.loader.load(sess, ['serve'], sys.argv[1])\n"
        "    sig = meta.signature_def['serving_default']\n"
        "    feed = {sig.inputs['x'].name: np.load(sys.argv[2])}\n"
        "    out = sess.run(sig.outputs['probs'].name, feed)\n"
        "np.save(sys.argv[3], out)\n")
    subprocess.run([sys.executable, "-c", script, export, str(tmp_path / "xs.npy"),
                    str(tmp_path / "out.npy")], check=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected, rtol=1e-6)


def test_the_model_server_serves_a_tensorflow_format_export(tmp_path):
    import http.client
    import json

    from flowgraph.serving import ModelServer

    expected = _export_small(str(tmp_path / "base" / "1"), format="tensorflow")
    server = ModelServer(str(tmp_path / "base"), model_name="m", port=0,
                         poll_interval=0.1, server="dev").start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/v1/models/m:predict",
                     body=json.dumps({"inputs": {"x": XS.tolist()}}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = json.loads(resp.read())
    finally:
        server.stop()
    assert resp.status == 200, body
    np.testing.assert_allclose(body["outputs"], expected, rtol=1e-6)


def test_default_format_switch_and_validation(tmp_path):
    assert tf.saved_model.get_export_format() == "tensorflow"  # TensorFlow's, as TF writes
    with tf.saved_model.export_format("flowgraph"):
        _export_small(str(tmp_path / "a"))
    assert tf.saved_model.get_export_format() == "tensorflow"
    assert os.path.isfile(tmp_path / "a" / "saved_model.json")
    _export_small(str(tmp_path / "b"))
    assert os.path.isfile(tmp_path / "b" / "saved_model.pb")
    assert not os.path.exists(tmp_path / "b" / "saved_model.json")
    with pytest.raises(ValueError, match=r"format must be 'flowgraph'.*got 'tf'"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "c"), format="tf")
    with pytest.raises(ValueError, match="set_export_format"):
        tf.saved_model.set_export_format("onnx")


def test_as_text_writes_saved_model_pbtxt(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "1"),
                                                         format="tensorflow")
            b.add_meta_graph_and_variables(sess, ["serve"])
            path = b.save(as_text=True)
    assert path.endswith(b"saved_model.pbtxt")
    text = (tmp_path / "1" / "saved_model.pbtxt").read_text()
    assert 'tags: "serve"' in text and 'restore_op_name: "save/restore_all"' in text
    with tf.Session(graph=tf.Graph()) as sess:  # flowgraph reads the text form too
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "1"))
        assert sess.run("v:0").tolist() == [1.0, 2.0]


def test_a_failed_save_leaves_no_export_directory(tmp_path, monkeypatch):
    from flowgraph.saved_model import builder as builder_module

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(builder_module, "write_tf_saved_model", broken)
    with pytest.raises(OSError, match="disk full"):
        _export_small(str(tmp_path / "1"), format="tensorflow")
    assert not os.path.exists(tmp_path / "1")


def test_main_op_and_assets_are_recorded_for_tensorflows_loader(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\nc\n")
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(vocab), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        words = tf.placeholder(tf.string, [None], name="words")
        ids = tf.identity(table.lookup(words), name="ids")
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            tf.saved_model.simple_save(sess, str(tmp_path / "1"), {"w": words}, {"ids": ids},
                                       legacy_init_op=tf.tables_initializer(),
                                       format="tensorflow")
    mg = _read_pb(tmp_path / "1").meta_graphs[0]
    # TF1's builder: the assets in the saved_model_assets collection only
    assert list(mg.asset_file_def) == []
    assert [AssetFileDefProto.FromString(i.value).filename for i in
            mg.collection_def["saved_model_assets"].any_list.value] == ["vocab.txt"]
    assert len(mg.collection_def["saved_model_main_op"].node_list.value) == 1
    assert (tmp_path / "1" / "assets" / "vocab.txt").read_text() == "a\nb\nc\n"
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "1"))
        sig = meta.signature_def["serving_default"]
        out = sess.run(sig.outputs["ids"].name, {sig.inputs["w"].name: [b"c", b"z", b"a"]})
    assert out.tolist() == [2, -1, 0]


def test_canned_dnn_classifier_export_loads_with_the_estimators_predictions(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(60, 4).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    cols = [tf.feature_column.numeric_column("x", shape=[4])]
    est = tf.estimator.DNNClassifier(hidden_units=[8, 4], feature_columns=cols,
                                     n_classes=3, model_dir=str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20,
                                                 num_epochs=None, shuffle=True), steps=5)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(cols))
    with tf.saved_model.export_format("tensorflow"):
        path = os.fsdecode(est.export_saved_model(str(tmp_path / "export"), receiver))
    assert os.path.isfile(os.path.join(path, "saved_model.pb"))
    expected = np.stack([p["probabilities"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({"x": x[:5]}, shuffle=False))])
    examples = [tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        float_list=tf.train.FloatList(value=row.tolist()))})).SerializeToString()
        for row in x[:5]]
    ops = {n.op for n in _read_pb(path).meta_graphs[0].graph_def.node}
    assert ops <= TF_OPS, f"ops TensorFlow lacks: {ops - TF_OPS}"
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        assert sorted(meta.signature_def) == ["classification", "predict", "serving_default"]
        sig = meta.signature_def["predict"]
        probs = sess.run(sig.outputs["probabilities"].name, {sig.inputs["examples"].name:
                                                             examples})
        cls = meta.signature_def["serving_default"]
        classes = sess.run(cls.outputs["classes"].name, {cls.inputs["inputs"].name: examples})
    np.testing.assert_allclose(probs, expected, rtol=1e-5, atol=1e-7)
    assert classes[0].tolist() == [b"0", b"1", b"2"]


def test_tf_export_module_is_the_one_documented():
    assert tf.saved_model.export_format is tf_export.export_format


def test_ops_tensorflow_lacks_are_named_in_a_warning(tmp_path, caplog):
    # (TF 1.x's contrib had this op; TF 2.15 has none of that name)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.bool, [None, 3], name="x")
        y = tf.contrib.image.connected_components(x)
        with tf.Session() as sess, caplog.at_level("WARNING", logger="tensorflow"):
            # the default format: exported anyway (never silently in flowgraph's format)
            tf.saved_model.simple_save(sess, str(tmp_path / "1"), {"x": x}, {"y": y})
    warnings = [r for r in caplog.records if "TensorFlow has no op" in r.getMessage()]
    assert len(warnings) == 1
    assert ("TensorFlow has no op ImageConnectedComponents (node "
            "'connected_components/ImageConnectedComponents')") in caplog.text
    assert 'format="flowgraph"' in caplog.text
    assert os.path.isfile(tmp_path / "1" / "saved_model.pb")
    model = tf.saved_model.load(str(tmp_path / "1"))  # flowgraph loads it
    got = model.signatures["serving_default"](x=[[True, False, True]])["y"]
    assert got.tolist() == [[1, 0, 2]]
    model.close()


def test_wide_and_deep_export_uses_only_tensorflow_ops(tmp_path):
    rng = np.random.RandomState(0)
    n = rng.randn(40).astype(np.float32)
    c = np.array([["x", "y", "z"][i % 3] for i in range(40)])
    h = np.array([f"h{i % 7}" for i in range(40)])
    fc = tf.feature_column
    cat = fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"])
    hashed = fc.categorical_column_with_hash_bucket("h", 10)
    deep = [fc.numeric_column("n"), fc.embedding_column(hashed, 3), fc.indicator_column(cat)]
    wide = [cat, hashed, fc.crossed_column(["c", "h"], 20),
            fc.bucketized_column(fc.numeric_column("n"), [-1.0, 0.0, 1.0])]
    est = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[4],
        model_dir=str(tmp_path / "model"))
    features = {"n": n, "c": c, "h": h}
    est.train(tf.estimator.inputs.numpy_input_fn(features, (n > 0).astype(np.int64),
                                                 batch_size=20, num_epochs=None,
                                                 shuffle=True), steps=3)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        fc.make_parse_example_spec(wide + deep))
    with tf.saved_model.export_format("tensorflow"):
        path = os.fsdecode(est.export_saved_model(str(tmp_path / "export"), receiver))
    ops = {node.op for node in _read_pb(path).meta_graphs[0].graph_def.node}
    assert ops <= TF_OPS, f"ops TensorFlow lacks: {ops - TF_OPS}"
    expected = np.stack([p["probabilities"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({k: v[:4] for k, v in features.items()},
                                           shuffle=False))])
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "n": tf.train.Feature(float_list=tf.train.FloatList(value=[float(a)])),
        "c": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b.encode()])),
        "h": tf.train.Feature(bytes_list=tf.train.BytesList(value=[e.encode()]))}))
        .SerializeToString() for a, b, e in zip(n[:4], c[:4], h[:4])]
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        sig = meta.signature_def["predict"]
        probs = sess.run(sig.outputs["probabilities"].name,
                         {sig.inputs["examples"].name: examples})
    np.testing.assert_allclose(probs, expected, rtol=1e-5, atol=1e-7)


def test_two_tag_sets_share_the_variables(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        v = tf.Variable([2.0], name="v")
        y = tf.multiply(x, v, name="y")
        with tf.Session() as sess:
            sess.run(v.initializer)
            b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "1"),
                                                         format="tensorflow")
            sig = tf.saved_model.predict_signature_def({"x": x}, {"y": y})
            b.add_meta_graph_and_variables(sess, ["serve"],
                                           signature_def_map={"serving_default": sig})
            b.add_meta_graph(["serve", "gpu"], signature_def_map={"gpu": sig})
            b.save()
    proto = _read_pb(tmp_path / "1")
    assert [list(m.meta_info_def.tags) for m in proto.meta_graphs] == [["serve"],
                                                                      ["serve", "gpu"]]
    for tags, key in ((["serve"], "serving_default"), (["serve", "gpu"], "gpu")):
        with tf.Session(graph=tf.Graph()) as sess:
            meta = tf.saved_model.loader.load(sess, tags, str(tmp_path / "1"))
            sig = meta.signature_def[key]
            out = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [1.0, 3.0]})
            assert out.tolist() == [2.0, 6.0]


def test_estimator_export_format_keyword_and_tf1_export_savedmodel(tmp_path):
    """`export_saved_model(format="flowgraph")` picks the format per call, and TF 1.x's
    older `export_savedmodel` exports in the process-wide default (TensorFlow's)."""
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    cols = [tf.feature_column.numeric_column("x", shape=[2])]
    est = tf.estimator.LinearRegressor(feature_columns=cols, model_dir=str(tmp_path / "m"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, x.sum(1), batch_size=3,
                                                 num_epochs=None, shuffle=False), steps=3)
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2], name="x")})
    fg_path = os.fsdecode(est.export_saved_model(str(tmp_path / "fg"), receiver,
                                                 format="flowgraph"))
    old_path = os.fsdecode(est.export_savedmodel(str(tmp_path / "tf"), receiver))
    assert os.path.isfile(os.path.join(fg_path, "saved_model.json"))
    assert not os.path.exists(os.path.join(fg_path, "saved_model.pb"))
    assert os.path.isfile(os.path.join(old_path, "saved_model.pb"))
    expected = np.stack([p["predictions"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({"x": x}, shuffle=False))])
    for path in (fg_path, old_path):
        with tf.Session(graph=tf.Graph()) as sess:
            meta = tf.saved_model.loader.load(sess, ["serve"], path)
            sig = meta.signature_def["predict"]  # raw float input: no regression signature
            out = sess.run(sig.outputs["predictions"].name, {sig.inputs["x"].name: x})
        np.testing.assert_allclose(np.asarray(out).reshape(expected.shape), expected,
                                   rtol=1e-6)


def test_local_variables_are_not_saved_and_the_main_op_sets_them(tmp_path):
    """As TensorFlow: the variables bundle holds what the saver saves (no local
    variables); loading restores those and the main op initializes the rest."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 1], name="x")
        w = tf.Variable([[2.0]], name="w")
        seen = tf.Variable(0.0, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="seen")
        with tf.Session() as sess:
            sess.run(w.initializer)
            tf.saved_model.simple_save(sess, str(tmp_path / "1"), {"x": x},
                                       {"y": tf.matmul(x, w)},
                                       legacy_init_op=tf.group(tf.assign(seen, 7.0)))
    assert tf.train.list_variables(str(tmp_path / "1" / "variables" / "variables")) == [
        ("w", [1, 1])]
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "1"))
        assert sess.run(["w:0", "seen:0"]) == [[[2.0]], 7.0]


def test_main_op_missing_from_the_graph_is_a_format_error(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, str(tmp_path / "1"), {"x": x}, {"y": x * 2.0},
                                       legacy_init_op=tf.no_op(name="init"))
    path = tmp_path / "1" / "saved_model.pb"
    proto = SavedModelProto.FromString(path.read_bytes())
    proto.meta_graphs[0].collection_def["saved_model_main_op"].node_list.value[:] = ["nope"]
    path.write_bytes(proto.SerializeToString())
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.saved_model.SavedModelFormatError, match="main op 'nope'"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "1"))
