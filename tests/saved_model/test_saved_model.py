"""SavedModelBuilder / loader / signature utils / the NumPy predictor."""

from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.framework.tf_formats.meta_graph_messages import SavedModelProto
from flowgraph.saved_model import signature_def_utils as sdu
from flowgraph.saved_model.predictor import shape_of

W = np.arange(6, dtype=np.float32).reshape(3, 2) / 10.0
B = np.array([0.5, -0.25], np.float32)


def _build_linear(w=W, b=B):
    """x [None, 3] -> y = x·w + b [None, 2]; returns (x, y, vars)."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    wv = tf.Variable(w, name="w")
    bv = tf.Variable(b, name="b")
    y = tf.add(tf.matmul(x, wv), bv, name="y")
    return x, y


def _export_linear(export_dir, w=W, b=B, **kwargs):
    with tf.Graph().as_default():
        x, y = _build_linear(w, b)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = sm.builder.SavedModelBuilder(export_dir)
            builder.add_meta_graph_and_variables(
                sess, [sm.tag_constants.SERVING],
                signature_def_map={"serving_default": sm.predict_signature_def({"x": x},
                                                                               {"y": y})},
                **kwargs)
            return builder.save()


@pytest.fixture
def linear_dir(tmp_path):
    d = str(tmp_path / "export" / "1")
    _export_linear(d)
    return d


# -- builder ------------------------------------------------------------------------------------
def test_builder_writes_tensorflow_format_by_default(tmp_path):
    d = str(tmp_path / "m")
    path = _export_linear(d)
    assert path == os.fsencode(os.path.join(d, "saved_model.pb"))
    assert sorted(os.listdir(d)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(d, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    assert os.listdir(tmp_path) == ["m"]


def test_builder_writes_json_variables_and_returns_bytes_path(tmp_path):
    d = str(tmp_path / "m")
    with sm.export_format("flowgraph"):
        path = _export_linear(d)
    assert path == os.fsencode(os.path.join(d, "saved_model.json"))
    assert sorted(os.listdir(d)) == ["saved_model.json", "variables"]
    # the variables checkpoint in TensorFlow's layout, as tf.train.Saver writes it
    assert sorted(os.listdir(os.path.join(d, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    doc = json.loads(open(os.path.join(d, "saved_model.json")).read())
    assert doc["format"] == "flowgraph.saved_model"
    assert doc["meta_graphs"][0]["tags"] == ["serve"]
    # nothing is left behind in the parent directory (staging was renamed into place)
    assert os.listdir(tmp_path) == ["m"]


def test_builder_refuses_non_empty_directory(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "junk").write_text("x")
    with pytest.raises(AssertionError, match="not empty"):
        sm.builder.SavedModelBuilder(str(tmp_path / "m"))


def test_builder_accepts_existing_empty_directory(tmp_path):
    (tmp_path / "m").mkdir()
    _export_linear(str(tmp_path / "m"))
    assert sm.maybe_saved_model_directory(str(tmp_path / "m"))


def test_builder_call_order_errors(tmp_path, sess):
    x, y = _build_linear()
    sess.run(tf.global_variables_initializer())
    b = sm.builder.SavedModelBuilder(str(tmp_path / "m"))
    with pytest.raises(AssertionError, match="add_meta_graph_and_variables"):
        b.add_meta_graph(["serve"])
    b.add_meta_graph_and_variables(sess, ["train"])
    with pytest.raises(AssertionError, match="already been saved"):
        b.add_meta_graph_and_variables(sess, ["serve"])
    b.add_meta_graph(["serve"], signature_def_map={
        "serving_default": sm.predict_signature_def({"x": x}, {"y": y})})
    b.save(as_text=True)
    with pytest.raises(AssertionError, match="already saved"):
        b.save()
    text = open(tmp_path / "m" / "saved_model.pbtxt").read()  # as_text: text format
    assert 'tags: "train"' in text and 'tags: "serve"' in text
    for tags in (["train"], ["serve"]):
        with tf.Graph().as_default(), tf.Session() as s2:
            mg = sm.loader.load(s2, tags, str(tmp_path / "m"))
            assert mg.meta_info_def.tags == tags


def test_builder_validates_arguments(tmp_path, sess):
    x, y = _build_linear()
    sess.run(tf.global_variables_initializer())
    b = sm.builder.SavedModelBuilder(str(tmp_path / "m"))
    with pytest.raises(TypeError, match="SignatureDef"):
        b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"k": {"x": x}})
    with pytest.raises(TypeError, match="main_op"):
        b.add_meta_graph_and_variables(sess, ["serve"], main_op="init")
    with tf.Graph().as_default():
        other = tf.placeholder(tf.float32, [2], name="other")
    with pytest.raises(ValueError, match="not in the session's graph"):
        b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
            "k": sm.predict_signature_def({"o": other}, {"y": y})})


# -- loader -------------------------------------------------------------------------------------
def test_load_restores_variables_and_returns_signatures(linear_dir):
    xv = np.random.default_rng(0).random((4, 3)).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        mg = sm.loader.load(sess, [sm.tag_constants.SERVING], linear_dir)
        sig = mg.signature_def[sm.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == sm.signature_constants.PREDICT_METHOD_NAME
        info = sig.inputs["x"]
        assert info.name == "x:0"
        assert info.dtype == tf.float32.as_datatype_enum
        assert tf.as_dtype(info.dtype) == tf.float32
        assert [d.size for d in info.tensor_shape.dim] == [-1, 3]
        assert not info.tensor_shape.unknown_rank
        assert shape_of(info).as_list() == [None, 3]  # tf.TensorShape(info.tensor_shape)
        assert sig.outputs["y"].name == "y:0"
        got = sess.run(sig.outputs["y"].name, {info.name: xv})
        np.testing.assert_allclose(got, xv @ W + B, rtol=1e-6)
        # variables come back as Python Variables in their collections
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["b", "w"]
        assert sorted(v.op.name for v in tf.trainable_variables()) == ["b", "w"]


def test_load_with_import_scope(linear_dir):
    with tf.Graph().as_default() as g, tf.Session() as sess:
        tf.constant(1.0, name="x")  # would clash without a scope
        with pytest.raises(ValueError, match="import_scope"):
            sm.loader.load(sess, ["serve"], linear_dir)
        mg = sm.loader.load(sess, ["serve"], linear_dir, import_scope="net")
        sig = mg.signature_def["serving_default"]
        y = g.get_tensor_by_name("net/" + sig.outputs["y"].name)
        x = g.get_tensor_by_name("net/" + sig.inputs["x"].name)
        np.testing.assert_allclose(sess.run(y, {x: np.ones((1, 3))}), np.ones((1, 3)) @ W + B,
                                   rtol=1e-6)


def test_load_errors(tmp_path, linear_dir):
    with tf.Session() as sess:
        with pytest.raises(RuntimeError, match=r"tags 'train' could not be found in SavedModel, "
                           r"with available tags '\[\{'serve'\}\]'"):
            sm.loader.load(sess, ["train"], linear_dir)
        with pytest.raises(OSError, match="does not exist"):
            sm.loader.load(sess, ["serve"], str(tmp_path / "nothing"))
    assert not sm.loader.maybe_saved_model_directory(str(tmp_path))
    assert sm.loader.maybe_saved_model_directory(linear_dir)


def test_assets_are_copied_and_fed_to_main_op(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    with tf.Graph().as_default():
        x, y = _build_linear()
        asset = tf.constant(str(vocab), name="asset_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        seen = tf.Variable(b"", collections=[tf.GraphKeys.LOCAL_VARIABLES], name="seen")
        main_op = tf.group(tf.assign(seen, asset))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sm.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y},
                           legacy_init_op=main_op)
    assert (tmp_path / "m" / "assets" / "vocab.txt").read_text() == "a\nb\n"
    vocab.unlink()  # the export must not depend on the original file
    with tf.Graph().as_default() as g, tf.Session() as sess:
        sm.load(sess, ["serve"], str(tmp_path / "m"))
        got = sess.run(g.get_tensor_by_name("seen:0"))
        assert got == os.path.abspath(tmp_path / "m" / "assets" / "vocab.txt").encode()


def test_strip_default_attrs_and_clear_devices_round_trip(tmp_path):
    d = str(tmp_path / "m")
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x, y = _build_linear()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            b = sm.builder.SavedModelBuilder(d)
            b.add_meta_graph_and_variables(
                sess, ["serve"], clear_devices=True, strip_default_attrs=True,
                signature_def_map={"serving_default": sm.predict_signature_def({"x": x},
                                                                               {"y": y})})
            b.save()
    with open(os.path.join(d, "saved_model.pb"), "rb") as f:
        proto = SavedModelProto.FromString(f.read())
    nodes = {n.name: n for n in proto.meta_graphs[0].graph_def.node}
    assert all(n.device == "" for n in nodes.values())
    assert "transpose_a" not in nodes["MatMul"].attr
    model = sm.load(d)
    np.testing.assert_allclose(model(np.ones((2, 3)))["y"], np.ones((2, 3)) @ W + B, rtol=1e-6)
    model.close()


# -- signature utils ----------------------------------------------------------------------------
def test_signature_def_utils():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    ex = tf.placeholder(tf.string, [None], name="ex")
    scores = tf.zeros([4, 2], name="scores")
    classes = tf.constant([["a", "b"]] * 4, name="classes")
    ints = tf.zeros([4], tf.int32)
    with pytest.raises(ValueError, match="`inputs` cannot be None or empty"):
        sm.predict_signature_def({}, {"y": x})
    with pytest.raises(ValueError, match="`outputs` cannot be None or empty"):
        sm.predict_signature_def({"x": x}, None)
    with pytest.raises(ValueError, match="`examples` cannot be None"):
        sm.classification_signature_def(None, classes, scores)
    with pytest.raises(ValueError, match="input tensors must be of type string"):
        sm.classification_signature_def(x, classes, scores)
    with pytest.raises(ValueError, match="both be None"):
        sm.classification_signature_def(ex, None, None)
    with pytest.raises(ValueError, match="classes must be a string"):
        sm.classification_signature_def(ex, ints, None)
    with pytest.raises(ValueError, match="scores must be a float32"):
        sm.classification_signature_def(ex, None, ints)
    with pytest.raises(ValueError, match="predictions must be a float32"):
        sm.regression_signature_def(ex, ints)
    c = sm.classification_signature_def(ex, classes, scores)
    assert c.method_name == "tensorflow/serving/classify"
    assert set(c.inputs) == {"inputs"} and set(c.outputs) == {"classes", "scores"}
    r = sm.regression_signature_def(ex, tf.zeros([4]))
    assert r.method_name == "tensorflow/serving/regress" and set(r.outputs) == {"outputs"}
    p = sm.predict_signature_def({"x": x}, {"y": x})
    for sig in (c, r, p):
        assert sm.is_valid_signature(sig)
    assert not sm.is_valid_signature(None)
    assert not sm.is_valid_signature(sm.build_signature_def({}, {}, "unknown/method"))
    bad = sm.build_signature_def({"inputs": sm.utils.build_tensor_info(x)}, c.outputs,
                                 sm.CLASSIFY_METHOD_NAME)
    assert not sm.is_valid_signature(bad)
    info = sm.utils.build_tensor_info(x)
    assert sdu.get_tensor_from_tensor_info(info) is x
    unknown = sm.build_tensor_info(tf.placeholder(tf.float32, None))
    assert unknown.tensor_shape.unknown_rank and unknown.tensor_shape.dim == []


def test_constants_match_tensorflow():
    assert sm.tag_constants.SERVING == "serve" and sm.tag_constants.TRAINING == "train"
    assert sm.tag_constants.GPU == "gpu" and sm.tag_constants.TPU == "tpu"
    sc = sm.signature_constants
    assert sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert (sc.PREDICT_INPUTS, sc.PREDICT_OUTPUTS) == ("inputs", "outputs")
    assert (sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES) == ("classes", "scores")
    assert sc.REGRESS_METHOD_NAME == "tensorflow/serving/regress"


# -- the NumPy predictor ------------------------------------------------------------------------
def test_predictor_calling_conventions(linear_dir):
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = xv @ W + B
    with sm.load(linear_dir) as model:
        fn = model.signatures["serving_default"]
        for out in (fn(x=xv), fn({"x": xv}), fn(xv), model(x=xv.tolist())):
            assert set(out) == {"y"}
            assert out["y"].dtype == np.float32
            np.testing.assert_allclose(out["y"], want, rtol=1e-6)
        with pytest.raises(TypeError, match=r"unknown input\(s\) \['z'\]"):
            fn(x=xv, z=xv)
        with pytest.raises(TypeError, match="missing input"):
            fn()
        with pytest.raises(ValueError, match=r"shape \[2, 2\].*\[None, 3\]"):
            fn(x=np.ones((2, 2)))
        with pytest.raises(ValueError, match="expects float32"):
            fn(x=[["a", "b", "c"]])
        with pytest.raises(KeyError, match="has no signature 'nope'"):
            model.signatures["nope"]
    with pytest.raises(RuntimeError, match="closed"):
        fn(x=xv)


def test_predictor_rejects_lossy_integer_conversion(tmp_path):
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32, [None], name="ids")
        out = tf.multiply(ids, 2, name="out")
        with tf.Session() as sess:
            sm.simple_save(sess, str(tmp_path / "m"), {"ids": ids}, {"out": out})
    with sm.load(str(tmp_path / "m")) as model:
        assert model(ids=[1, 2, 3])["out"].tolist() == [2, 4, 6]
        with pytest.raises(ValueError, match="expects int32"):
            model(ids=[1.5])


def test_predictor_is_thread_safe(linear_dir):
    rng = np.random.default_rng(1)
    inputs = [rng.random((3, 3)).astype(np.float32) for _ in range(64)]
    bad = []
    with sm.load(linear_dir) as model:

        def work(k):
            for xv in inputs[k::8]:
                got = model(x=xv)["y"]
                if not np.allclose(got, xv @ W + B, rtol=1e-5):
                    bad.append(k)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert bad == []


def test_saved_model_load_dispatches_on_first_argument(linear_dir):
    with tf.Graph().as_default(), tf.Session() as sess:
        mg = sm.load(sess, ["serve"], linear_dir)
        assert "serving_default" in mg.signature_def
    model = sm.load(linear_dir, tags=["serve"])
    assert isinstance(model, sm.LoadedModel)
    assert list(model.signatures) == ["serving_default"]
    model.close()


def test_string_inputs_and_outputs(tmp_path):
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None], name="s")
        out = tf.identity(s, name="out")
        with tf.Session() as sess:
            sm.simple_save(sess, str(tmp_path / "m"), {"s": s}, {"out": out})
    with sm.load(str(tmp_path / "m")) as model:
        assert model(s=["ab", b"c"])["out"].tolist() == [b"ab", b"c"]
