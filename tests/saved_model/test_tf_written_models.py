"""SavedModels and graphs written by TensorFlow 2.15 load and run under flowgraph.

The fixtures under tests/data/tf_formats/tf215_models were written by TensorFlow 2.15
(`tensorflow.compat.v1`, the tf-oracle); every expected value below is what TensorFlow
printed for the same inputs:

- ``linear_classifier_vocab_file``: ``LinearClassifier`` over
  ``categorical_column_with_vocabulary_list("s", [a, b, c])`` and
  ``categorical_column_with_vocabulary_file("f", vocab (a, b, c), num_oov_buckets=1)``,
  3 steps, exported with ``build_parsing_serving_input_receiver_fn`` (its table reads an
  asset that TF1's builder lists in the ``saved_model_assets`` collection);
- ``dnn_regressor_embedding_raw``: ``DNNRegressor([3])`` over ``numeric_column("x")``,
  ``indicator_column(s)`` and ``embedding_column(f, 2)``, exported with
  ``build_raw_serving_input_receiver_fn``;
- ``bn`` (``tf.layers.batch_normalization``, unfused and fused: ``FusedBatchNormV3``),
  ``while_loop``, ``lstm`` (``dynamic_rnn`` of an ``LSTMCell(5)``), ``ta_loop`` (a
  ``tf.while_loop`` writing a ``TensorArray``), ``text`` (``string_split``, a
  ``StaticVocabularyTable``, ``tf.strings.*``): ``simple_save`` exports;
- ``unknown_op``: a ``SavedModelBuilder`` export of ``z = x * 2`` under tags ``serve``
  and, with ``y = DenseBincount(x)`` (an op flowgraph lacks) too, ``counts``;
- ``string_ops.pb``: a GraphDef of string ops and a ``tf.print``;
- ``sparse_segment_grads.pb``: ``tf.gradients`` of ``tf.sparse.segment_{sum,mean,sqrt_n}``
  (``SparseSegment*Grad`` ops), with its input and TensorFlow's gradients in the .npz.
"""

from __future__ import annotations

import base64
import os
import shutil

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.serialization import graph_to_dict
from flowgraph.framework.tf_formats.graph_def import graph_def_from_dict, graph_def_to_dict
from flowgraph.saved_model.format import SavedModelFormatError
from flowgraph.saved_model.tf_saved_model import read_tf_saved_model

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats",
                        "tf215_models")


def _fixture(name: str) -> str:
    return os.path.join(FIXTURES, name)


def _run_signature(path: str, feeds: dict, key: str = "serving_default") -> dict:
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        sig = meta.signature_def[key]
        fetches = {k: v.name for k, v in sig.outputs.items()}
        return sess.run(fetches, {sig.inputs[k].name: v for k, v in feeds.items()})


def _example(**features) -> bytes:
    feature = {k: tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode()]))
               for k, v in features.items()}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


# -- canned estimators: vocabulary tables over assets, LookupTableFindV2's Tout ------------
LINEAR_EXAMPLES = [dict(s="a", f="a"), dict(s="b", f="z"), dict(s="d", f="c"),
                   dict(s="c", f="b")]
LINEAR_SCORES = [[0.58248, 0.41752], [0.39542, 0.60458], [0.39468, 0.60532],
                 [0.57594, 0.42406]]


def test_tf1_builder_assets_collection_is_read():
    mg = read_tf_saved_model(_fixture("linear_classifier_vocab_file")).meta_graphs[0]
    assert [a.filename for a in mg.asset_file_def] == ["fixtures_vocab.txt"]
    assert mg.asset_file_def[0].tensor_info.name.endswith("hash_table/asset_path:0")


def test_linear_classifier_with_vocabulary_file_matches_tensorflow(tmp_path):
    # A copy elsewhere: the table must read the export's own assets/ copy.
    path = shutil.copytree(_fixture("linear_classifier_vocab_file"), tmp_path / "m")
    serialized = np.array([_example(**e) for e in LINEAR_EXAMPLES], dtype=object)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(path))
        sig, pred = meta.signature_def["serving_default"], meta.signature_def["predict"]
        scores, classes, probs, ids = sess.run(
            [sig.outputs["scores"].name, sig.outputs["classes"].name,
             pred.outputs["probabilities"].name, pred.outputs["class_ids"].name],
            {sig.inputs["inputs"].name: serialized})
    np.testing.assert_allclose(scores, LINEAR_SCORES, atol=1e-5)
    assert classes.tolist() == [[b"0", b"1"]] * 4
    np.testing.assert_allclose(probs, LINEAR_SCORES, atol=1e-5)
    assert ids.ravel().tolist() == [0, 1, 1, 0]


def test_dnn_regressor_with_embedded_vocabulary_file_matches_tensorflow():
    out = _run_signature(_fixture("dnn_regressor_embedding_raw"), {
        "x": np.array([0.5, 3.0], np.float32), "s": np.array([b"a", b"q"], dtype=object),
        "f": np.array([b"c", b"zz"], dtype=object)}, "predict")
    np.testing.assert_allclose(out["predictions"], [[0.4362], [0.8132]], atol=1e-4)


def test_lookup_table_find_reads_tout_and_writes_no_value_dtype():
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        ["a", "b"], [1, 2], key_dtype=tf.string, value_dtype=tf.int64), -1)
    table.lookup(tf.constant(["b", "z"]), name="find")
    message = graph_def_from_dict(graph_to_dict(tf.get_default_graph()))
    node = next(n for n in message.node if n.name == "find/LookupTableFindV2")
    assert sorted(node.attr) == ["Tin", "Tout"]  # TensorFlow's attributes only
    back = next(n for n in graph_def_to_dict(message)["node"]
                if n["name"] == "find/LookupTableFindV2")
    assert back["attr"]["value_dtype"] == {"dtype": "int64"}
    with tf.Graph().as_default() as g:
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            sess.run(next(o for o in g.get_operations() if o.type == "LookupTableImportV2"))
            assert sess.run(g.get_tensor_by_name("find/LookupTableFindV2:0")).tolist() == [2, -1]


# -- simple_save graphs ----------------------------------------------------------------------
def test_batch_norm_fused_and_unfused_match_tensorflow():
    x = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 2.0]], np.float32)
    out = _run_signature(_fixture("bn"), {"x": x})
    expected = x / np.sqrt(1.0 + 1e-3)  # fresh statistics: mean 0, variance 1
    np.testing.assert_allclose(out["y"], expected, atol=1e-5)
    np.testing.assert_allclose(out["y2"], expected.reshape(2, 1, 1, 3), atol=1e-5)


def _fused_batch_norm_graph(x, training: bool, data_format: str, factor: float = 1.0,
                            dtype: str = "float32"):
    from flowgraph.framework.serialization import encode_attr

    c = x.shape[-1] if data_format == "NHWC" else x.shape[1]
    rng = np.random.RandomState(3)
    params = {"scale": rng.rand(c) + 0.5, "offset": rng.rand(c), "mean": rng.rand(c),
              "variance": rng.rand(c) + 0.5}
    nodes = [{"name": "x", "op": "Placeholder", "input": [],
              "attr": {"dtype": {"dtype": dtype}}}]
    for k, v in params.items():
        v = v.astype(np.float32)
        params[k] = v
        nodes.append({"name": k, "op": "Const", "input": [],
                      "attr": {"value": encode_attr(v), "dtype": {"dtype": "float32"}}})
    nodes.append({"name": "bn", "op": "FusedBatchNormV3",
                  "input": ["x:0", "scale:0", "offset:0", "mean:0", "variance:0"],
                  "attr": {"T": {"dtype": dtype}, "U": {"dtype": "float32"},
                           "epsilon": 0.001, "data_format": data_format,
                           "is_training": training, "exponential_avg_factor": factor}})
    nodes.append({"name": "batch_var", "op": "Identity", "input": ["bn:2"],
                  "attr": {"T": {"dtype": "float32"}}})
    return graph_def_from_dict({"node": nodes}), params


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("training,factor", [(False, 1.0), (True, 1.0), (True, 0.25)])
def test_tensorflow_fused_batch_norm_is_computed(data_format, training, factor):
    x = np.random.RandomState(0).randn(2, 3, 2, 4).astype(np.float32)
    message, p = _fused_batch_norm_graph(x, training, data_format, factor)
    axes = (0, 1, 2) if data_format == "NHWC" else (0, 2, 3)
    shape = (1, 1, 1, -1) if data_format == "NHWC" else (1, -1, 1, 1)
    if training:
        mean, var = x.mean(axes), x.var(axes)
        n = x.size / mean.size
        var_out = (1 - factor) * p["variance"] + factor * var * n / (n - 1)
    else:
        mean, var, var_out = p["mean"], p["variance"], p["variance"]
    want = ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-3)
            * p["scale"].reshape(shape) + p["offset"].reshape(shape))
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            y, v = sess.run(["bn:0", "batch_var:0"], {"x:0": x})
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(v, var_out, rtol=1e-4, atol=1e-5)


def test_tensorflow_fused_batch_norm_of_half_precision():
    x = np.random.RandomState(1).randn(2, 2, 2, 3).astype(np.float16)
    message, p = _fused_batch_norm_graph(x, False, "NHWC", dtype="float16")
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            y = sess.run("bn:0", {"x:0": x})
    assert y.dtype == np.float16
    want = (x.astype(np.float32) - p["mean"]) / np.sqrt(p["variance"] + 1e-3) * \
        p["scale"] + p["offset"]
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_while_loop_saved_model_matches_tensorflow():
    out = _run_signature(_fixture("while_loop"), {"x": np.array([1., 2., 3.], np.float32)})
    np.testing.assert_allclose(out["y"], [41.5625, 56.75, 71.9375], rtol=1e-6)


def test_dynamic_rnn_lstm_saved_model_matches_tensorflow():
    x = np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 24.0
    out = _run_signature(_fixture("lstm"), {"x": x})
    np.testing.assert_allclose(out["h"], [
        [-0.02673, 0.02018, 0.08279, 0.00698, 0.01746],
        [-0.05761, 0.08569, 0.23381, 0.02817, 0.0298]], atol=2e-5)
    np.testing.assert_allclose(out["out"][:, -1], out["h"], atol=1e-6)


def test_tensor_array_loop_saved_model_matches_tensorflow():
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 4.0
    out = _run_signature(_fixture("ta_loop"), {"x": x})
    np.testing.assert_allclose(out["y"], [0.0, 3.0, 10.5, 22.5], rtol=1e-6)


def test_text_preprocessing_saved_model_matches_tensorflow():
    out = _run_signature(_fixture("text"), {"s": np.array([b"The cat", b"sat the mat"],
                                                          dtype=object)})
    assert out["ids"].tolist() == [3, 1, 2, 0, 3]
    assert out["sp_idx"].tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]]
    assert out["n"].tolist() == [7, 11]
    assert out["hb"].tolist() == [0, 3]
    assert out["sub"].tolist() == [b"The", b"sat"]
    assert out["rep"].tolist() == [b"the cot", b"sot the mot"]
    assert out["joined"] == b"the|cat|sat|the|mat"
    np.testing.assert_allclose(out["num"], [1.5, 2.0])


def test_signature_needing_a_missing_op_is_refused_by_name(tmp_path):
    # The fixture's `counts` tag set needs DenseBincount, which flowgraph has; renaming the
    # op type to one of the same length (the protobuf's lengths stay valid) makes it an
    # op nobody knows.
    path = str(tmp_path / "renamed")
    shutil.copytree(_fixture("unknown_op"), path)
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        data = f.read()
    assert data.count(b"DenseBincount") >= 1
    with open(os.path.join(path, "saved_model.pb"), "wb") as f:
        f.write(data.replace(b"DenseBincount", b"NoSuchOpXyzzy"))
    with tf.Session(graph=tf.Graph()) as sess:
        with pytest.raises(SavedModelFormatError, match=r"signature 'serving_default' "
                                                        r"output 'y' .*: NoSuchOpXyzzy"):
            tf.saved_model.loader.load(sess, ["counts"], path)
    # the other tag set, which does not need it, loads and runs
    out = _run_signature(path, {"x": np.array([1, 3], np.int32)})
    assert out["z"].tolist() == [2, 6]


# -- a GraphDef of string ops and tf.print ----------------------------------------------------
STRING_OPS = {
    "RegexFullMatch:0": [True, False, False], "StaticRegexFullMatch:0": [True, False, False],
    "Fingerprint:0": [[216, 142, 125, 181, 58, 148, 207, 209],
                      [111, 154, 220, 24, 167, 165, 228, 128],
                      [96, 217, 187, 187, 210, 84, 243, 233]],
    "ReduceJoin/ReduceJoin:0": [b"cat+ cot +dog"],
    "ReduceJoin_1/ReduceJoin:0": [b"cat", b" cot ", b"dog"],
    "StringFormat:0": b"v=[3 5 3]", "StringToHashBucketStrong:0": [2, 0, 2],
    "UnicodeDecode/UnicodeDecode:1": [99, 97, 116, 32, 99, 111, 116, 32, 100, 111, 103],
}


def test_string_ops_and_print_graph_matches_tensorflow(capfd):
    with open(_fixture("string_ops.pb"), "rb") as f:
        message = tf.GraphDef.FromString(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            names = sorted(STRING_OPS)
            values = sess.run([*names, "Identity:0"], {"s:0": ["cat", " cot ", "dog"]})
    for name, value in zip(names, values):
        assert np.asarray(value).tolist() == STRING_OPS[name], name
    assert 'hello ["cat" " cot " "dog"]' in capfd.readouterr().err


# -- served by `flowgraph serve` in a fresh process -------------------------------------------
def _served(model_dir, name: str, requests: list) -> list:
    """Start ``flowgraph serve`` on `model_dir`, POST each (verb, body), return replies."""
    import http.client
    import json
    import re
    import subprocess
    import sys
    import threading

    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowgraph", "serve", "--model_dir", str(model_dir),
         "--host", "127.0.0.1", "--port", "0", "--model_name", name],
        cwd=root, env=env, stderr=subprocess.PIPE, text=True)
    try:
        log = []
        for line in proc.stderr:
            log.append(line)
            found = re.search(r"at http://127\.0\.0\.1:(\d+)", line)
            if found:
                break
        assert found, "".join(log)
        # keep draining its log, so that the server never blocks on a full pipe
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        replies = []
        for verb, body in requests:
            conn = http.client.HTTPConnection("127.0.0.1", int(found.group(1)), timeout=30)
            conn.request("POST", f"/v1/models/{name}:{verb}", body=json.dumps(body),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            replies.append((resp.status, json.loads(resp.read().decode())))
            conn.close()
        return replies
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.slow
def test_tf_written_estimator_exports_serve_over_rest(tmp_path):
    linear = tmp_path / "linear"
    shutil.copytree(_fixture("linear_classifier_vocab_file"), linear / "1")
    (status, classify), (status3, regress), (status2, predict) = _served(linear, "linear", [
        ("classify", {"examples": LINEAR_EXAMPLES}),
        ("regress", {"signature_name": "regression", "examples": LINEAR_EXAMPLES}),
        ("predict", {"signature_name": "predict", "instances": [
            {"b64": base64.b64encode(_example(**e)).decode()}
            for e in LINEAR_EXAMPLES]})])
    assert status == status2 == status3 == 200, (classify, predict, regress)
    # a binary classifier's regression signature gives the probability of class 1
    np.testing.assert_allclose(regress["result"], [p for _, p in LINEAR_SCORES], atol=1e-5)
    np.testing.assert_allclose([[s for _, s in row] for row in classify["result"]],
                               LINEAR_SCORES, atol=1e-5)
    np.testing.assert_allclose([r["probabilities"] for r in predict["predictions"]],
                               LINEAR_SCORES, atol=1e-5)
    dnn = tmp_path / "dnn"
    shutil.copytree(_fixture("dnn_regressor_embedding_raw"), dnn / "1")
    [(status, body)] = _served(dnn, "dnn", [("predict", {"signature_name": "predict",
                                                         "instances": [
        {"x": 0.5, "s": "a", "f": "c"}, {"x": 3.0, "s": "q", "f": "zz"}]})])
    assert status == 200, body
    np.testing.assert_allclose(body["predictions"], [[0.4362], [0.8132]], atol=1e-4)


def test_print_and_regex_are_written_in_tensorflow_layout_and_read_back(capfd):
    s = tf.placeholder(tf.string, [None], name="s")
    n = tf.placeholder(tf.int32, [], name="n")
    match = tf.strings.regex_full_match(s, "c.t", name="m")
    printed = tf.print("hello {}", s, "n=", n, summarize=2, name="p")
    with tf.control_dependencies([printed]):
        tf.identity(match, name="out")
    message = graph_def_from_dict(graph_to_dict(tf.get_default_graph()))
    nodes = {x.name: x for x in message.node}
    # TensorFlow 2.15 imports this graph def and prints `hello {} ["cat" "dog"] n= 3`
    assert nodes["m"].op == "StaticRegexFullMatch" and sorted(nodes["m"].attr) == ["pattern"]
    assert nodes["p/format"].op == "StringFormat"
    assert sorted(nodes["p"].attr) == ["end", "output_stream"]
    assert list(nodes["p"].input) == ["p/format"]
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            assert sess.run("out:0", {"s:0": ["cat", "dog"], "n:0": 3}).tolist() == [True,
                                                                                   False]
    assert 'hello {} ["cat" "dog"] n= 3' in capfd.readouterr().err


def test_attribute_stripped_at_tensorflow_default_is_filled_in():
    # strip_default_attrs (estimator exports) leaves out ComplexAbs's Tout=float32
    from flowgraph.framework.event_format import AttrValue, NodeDef

    message = tf.GraphDef()
    message.node.extend([
        NodeDef(name="x", op="Placeholder", attr={"dtype": AttrValue(type=8)}),
        NodeDef(name="a", op="ComplexAbs", input=["x"], attr={"T": AttrValue(type=8)})])
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            out = sess.run("a:0", {"x:0": np.array([3 + 4j], np.complex64)})
    assert out.dtype == np.float32 and out.tolist() == [5.0]


def test_sparse_segment_gradients_written_by_tensorflow_are_computed():
    expected = np.load(_fixture("sparse_segment_grads.npz"))
    with open(_fixture("sparse_segment_grads.pb"), "rb") as f:
        message = tf.GraphDef.FromString(f.read())
    assert {"SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"} <= {n.op for n in message.node}
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            for kind in ("sum", "mean", "sqrtn"):
                got = sess.run(f"g_{kind}:0", {"d:0": expected["d"]})
                np.testing.assert_allclose(got, expected[kind], atol=1e-6, err_msg=kind)
