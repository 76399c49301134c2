"""SavedModels keep their resource variables: ``tf.saved_model.loader.load`` of
TensorFlow's ``saved_model.pb`` or of flowgraph's ``saved_model.json``, and ``flowgraph
serve``, give the graph its ``VarHandleOp``/``ReadVariableOp`` ops and `ResourceVariable`
objects, as TensorFlow 2.15 (``tf.compat.v1``) does; an optimizer built after loading
keeps training them.

The TensorFlow-written fixture is tests/data/tf_formats/resource_meta/saved_model
(``make_fixture.py`` there). Loading it under TensorFlow (the tf-oracle) gave the types,
op types, predictions and losses asserted here; TensorFlow loading flowgraph's export is
checked by running it (skipped without the oracle's TensorFlow).
"""

import json
import os
import subprocess

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.serving import ModelServer

TF_FORMATS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats")
DATA = os.path.join(TF_FORMATS, "resource_meta", "saved_model")
TF_PYTHON = os.environ.get("TF_ORACLE_PYTHON", "/tmp/tf-oracle-venv/bin/python")
X = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
IDS = np.array([1, 3], np.int32)
T = np.array([[1, 0], [0, 1]], np.float32)
# TensorFlow 2.15 on the fixture: predictions, the loss after one GradientDescent(0.1)
# step built after loading, then after two Adam(0.01) steps.
TF_Y = [[0.8345261812210083, 0.2578570246696472], [0.2985563278198242, 0.5347630977630615]]
TF_LOSS_AFTER_GD = 0.06904247403144836
TF_LOSS_AFTER_ADAM = 0.044393


def _check_resource_graph(graph):
    # TF: [('ResourceVariable', 'model/w:0', 'float32', 'VarHandleOp'), ... b, emb,
    #      ('RefVariable', 'global_step:0', 'int64_ref', 'VariableV2')]
    got = [(type(v).__name__, v.name, v.dtype.name, v.op.type) for v in tf.global_variables()]
    assert got == [("ResourceVariable", "model/w:0", "float32", "VarHandleOp"),
                   ("ResourceVariable", "model/b:0", "float32", "VarHandleOp"),
                   ("ResourceVariable", "model/emb:0", "float32", "VarHandleOp"),
                   ("Variable", "global_step:0", "int64_ref", "VariableV2")]
    assert [v.name for v in tf.trainable_variables()] == ["model/w:0", "model/b:0",
                                                         "model/emb:0"]
    ops = {o.type for o in graph.get_operations()}
    assert {"VarHandleOp", "ReadVariableOp", "ResourceGather"} <= ops


def test_tensorflow_saved_model_loads_with_resource_variables_and_keeps_training():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], DATA)
        _check_resource_graph(g)
        feed = {"x:0": X, "ids:0": IDS, "t:0": T}
        np.testing.assert_allclose(sess.run("y:0", feed), TF_Y, rtol=1e-6)
        loss = g.get_tensor_by_name("loss:0")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        ops = {o.type for o in g.get_operations()}
        assert {"ResourceApplyGradientDescent", "ResourceScatterAdd"} <= ops
        assert "ApplyGradientDescent" not in ops
        sess.run(train, feed)
        np.testing.assert_allclose(sess.run(loss, feed), TF_LOSS_AFTER_GD, rtol=1e-6)
        adam = tf.train.AdamOptimizer(0.01).minimize(loss, name="adam")
        sess.run(tf.variables_initializer(
            [v for v in tf.global_variables() if "Adam" in v.name or "beta" in v.name]))
        for _ in range(2):
            sess.run(adam, feed)
        np.testing.assert_allclose(sess.run(loss, feed), TF_LOSS_AFTER_ADAM, atol=1e-6)


def _export(export_dir, format=None):
    """A model with resource variables (one gathered), exported in `format`."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        ids = tf.placeholder(tf.int32, [None], name="ids")
        w = tf.get_variable("w", initializer=[[1.0], [2.0]], use_resource=True)
        emb = tf.get_variable("emb", initializer=[[0.5], [-1.0], [2.0]], use_resource=True)
        y = tf.add(tf.matmul(x, w), tf.gather(emb, ids), name="y")
        tf.reduce_sum(tf.square(y - 1.0), name="loss")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            b = tf.saved_model.builder.SavedModelBuilder(export_dir, format=format)
            b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "serving_default": tf.saved_model.predict_signature_def(
                    {"x": x, "ids": ids}, {"y": y})})
            b.save()


FEED_X = [[1.0, 1.0], [2.0, -1.0]]
FEED_IDS = [2, 0]
# y = x @ [[1], [2]] + emb[ids]; the loss sum((y - 1)^2) after one GD(0.1) step.
Y = [[5.0], [0.5]]


def _expected_after_step():
    x, ids = np.array(FEED_X), np.array(FEED_IDS)
    w, emb = np.array([[1.0], [2.0]]), np.array([[0.5], [-1.0], [2.0]])
    r = 2 * (x @ w + emb[ids] - 1.0)
    w = w - 0.1 * x.T @ r
    np.add.at(emb, ids, -0.1 * r)
    return float(np.sum((x @ w + emb[ids] - 1.0) ** 2))


@pytest.mark.parametrize("format", ["tensorflow", "flowgraph"])
def test_flowgraph_export_loads_with_resource_variables(tmp_path, format):
    d = str(tmp_path / "m")
    _export(d, format)
    assert os.path.isfile(os.path.join(d, "saved_model.json" if format == "flowgraph"
                                       else "saved_model.pb"))
    with tf.Graph().as_default() as g, tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], d)
        assert [(type(v).__name__, v.name, v.dtype.name, v.op.type)
                for v in tf.global_variables()] == [
            ("ResourceVariable", "w:0", "float32", "VarHandleOp"),
            ("ResourceVariable", "emb:0", "float32", "VarHandleOp")]
        assert "VariableV2" not in {o.type for o in g.get_operations()}
        feed = {"x:0": FEED_X, "ids:0": FEED_IDS}
        np.testing.assert_allclose(sess.run("y:0", feed), Y)
        loss = g.get_tensor_by_name("loss:0")
        sess.run(tf.train.GradientDescentOptimizer(0.1).minimize(loss), feed)
        np.testing.assert_allclose(sess.run(loss, feed), _expected_after_step(), rtol=1e-6)


def test_flowgraph_serve_serves_a_tensorflow_export_with_resource_variables(tmp_path):
    import http.client
    import shutil

    base = tmp_path / "export"
    shutil.copytree(DATA, base / "1")
    server = ModelServer(str(base), model_name="res", port=0, poll_interval=0.1,
                         server="dev").start()
    try:
        host, port = server.url[len("http://"):].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        body = json.dumps({"inputs": {"x": X.tolist(), "ids": IDS.tolist()}}).encode()
        conn.request("POST", "/v1/models/res:predict", body=body,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        payload = json.loads(resp.read().decode())
        conn.close()
    finally:
        server.stop()
    assert resp.status == 200, payload
    np.testing.assert_allclose(payload["outputs"], TF_Y, rtol=1e-6)


_TF_LOADS = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
with tf.Graph().as_default() as g, tf.Session() as s:
    tf.saved_model.loader.load(s, ["serve"], sys.argv[1])
    out = {"vars": [(type(v).__name__, v.name, v.dtype.name, v.op.type)
                    for v in tf.global_variables()]}
    feed = {"x:0": FEED_X, "ids:0": FEED_IDS}
    out["y"] = s.run("y:0", feed).tolist()
    loss = g.get_tensor_by_name("loss:0")
    s.run(tf.train.GradientDescentOptimizer(0.1).minimize(loss), feed)
    out["loss"] = float(s.run(loss, feed))
print("RESULT" + json.dumps(out))
""".replace("FEED_X", repr(FEED_X)).replace("FEED_IDS", repr(FEED_IDS))


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(TF_PYTHON), reason="no TensorFlow (tf-oracle venv)")
def test_tensorflow_loads_flowgraphs_export_with_resource_variables(tmp_path):
    d = str(tmp_path / "m")
    _export(d)
    proc = subprocess.run([TF_PYTHON, "-c", _TF_LOADS, d], capture_output=True, text=True,
                          timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert lines, proc.stderr[-3000:]
    out = json.loads(lines[0][len("RESULT"):])
    assert [tuple(v) for v in out["vars"]] == [
        ("ResourceVariable", "w:0", "float32", "VarHandleOp"),
        ("ResourceVariable", "emb:0", "float32", "VarHandleOp")]
    np.testing.assert_allclose(out["y"], Y)
    np.testing.assert_allclose(out["loss"], _expected_after_step(), rtol=1e-6)


OPS_DATA = os.path.join(TF_FORMATS, "resource_ops_saved_model", "saved_model")


def test_tensorflow_export_with_slice_assign_and_scatter_nd_keeps_them():
    """tests/data/tf_formats/resource_ops_saved_model (``make_fixture.py`` there): TF's
    loader printed every value below."""
    with tf.Graph().as_default() as g, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], OPS_DATA)
        assert [(type(v).__name__, v.name, v.dtype.name, v.op.type)
                for v in tf.global_variables()] == [
            ("ResourceVariable", "w:0", "float32", "VarHandleOp")]
        assert sorted({o.type for o in g.get_operations()} & {
            "VarHandleOp", "VariableV2", "ResourceStridedSliceAssign",
            "ResourceScatterNdAdd"}) == ["ResourceScatterNdAdd", "ResourceStridedSliceAssign",
                                         "VarHandleOp"]
        x = [[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]
        serve, update = meta.signature_def["serving_default"], meta.signature_def["update"]
        y = serve.outputs["y"].name
        assert sess.run(y, {serve.inputs["x"].name: x}).tolist() == [[-4.0, -4.0],
                                                                     [8.0, 11.5]]
        assigned, added = sess.run(
            [update.outputs["assigned"].name, update.outputs["added"].name],
            {update.inputs["row"].name: [7.0, -7.0], update.inputs["delta"].name: 0.5})
        assert assigned.tolist() == [[0.0, 1.0], [7.0, -7.0], [4.0, 5.0]]
        assert added.tolist() == [[0.5, 1.0], [7.0, -7.0], [4.0, 5.5]]
        assert sess.run(y, {serve.inputs["x"].name: x}).tolist() == [[-3.5, -4.5],
                                                                     [18.25, -8.0]]


def test_graph_def_and_meta_graph_keep_the_new_resource_ops():
    # TF: both imports keep VarHandleOp, ResourceStridedSliceAssign, ResourceScatterNdAdd
    # and run them to [[5, 6], [3, 14]]; import_meta_graph rebuilds a ResourceVariable.
    with tf.Graph().as_default() as g:
        v = tf.get_variable("v", initializer=[[1.0, 2.0], [3.0, 4.0]], use_resource=True)
        v[0].assign([5.0, 6.0])
        nd = tf.scatter_nd_add(v, [[1, 1]], [10.0])
        graph_def, meta = g.as_graph_def(), tf.train.export_meta_graph()
    kept = {"VarHandleOp", "ResourceStridedSliceAssign", "ResourceScatterNdAdd"}
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph_def, name="")
        assert kept <= {o.type for o in g2.get_operations()}
        with tf.Session() as sess:
            sess.run("v/Assign")
            sess.run("strided_slice/_assign")
            sess.run(nd.op.name)
            assert sess.run("v/Read/ReadVariableOp:0").tolist() == [[5.0, 6.0], [3.0, 14.0]]
    with tf.Graph().as_default() as g3:
        tf.train.import_meta_graph(meta)
        assert [(type(x).__name__, x.op.type) for x in tf.global_variables()] == [
            ("ResourceVariable", "VarHandleOp")]
        assert kept <= {o.type for o in g3.get_operations()}
