"""TensorFlow's GraphDef: as_graph_def's message view, import of GraphDefs written by
TensorFlow 2.15 (fixtures in tests/data/tf_formats, made once with the tf-oracle),
write_graph and convert_variables_to_constants."""

import json
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.graph_def import tensor_proto, tensor_value
from flowgraph.framework.tf_formats.text_format import message_to_text

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats")
EXPECTED = json.load(open(os.path.join(DATA, "expected.json")))


def _load(name):
    gd = tf.GraphDef()
    with open(os.path.join(DATA, name), "rb") as f:
        gd.ParseFromString(f.read())
    return gd


def _canonical(nodes):
    # Protobuf writes map entries in no fixed order; its deterministic form sorts them.
    return [tf.NodeDef(name=n.name, op=n.op, input=list(n.input), device=n.device or None,
                       attr=dict(sorted(n.attr.items()))).SerializeToString() for n in nodes]


@pytest.mark.parametrize("name", ["simple.pb", "ops.pb", "frozen.pb"])
def test_tensorflow_graph_def_round_trips_byte_for_byte(name):
    tf_graph = _load(name)
    with tf.Graph().as_default() as g:
        tf.import_graph_def(tf_graph, name="")
        ours = g.as_graph_def()
    # Every node, with TensorFlow's type attributes and defaults, is the same bytes.
    assert _canonical(ours.node) == _canonical(tf_graph.node)
    assert tf.GraphDef.FromString(ours.SerializeToString()).versions.producer == 1645


def test_tensorflow_graph_of_common_ops_runs_to_tensorflows_outputs():
    expected = np.load(os.path.join(DATA, "ops_expected.npz"))
    with tf.Graph().as_default():
        out, probs, cls = tf.import_graph_def(
            _load("ops.pb"), return_elements=["out:0", "probs:0", "cls:0"], name="")
        with tf.Session() as sess:
            o, p, c = sess.run([out, probs, cls], {"x:0": expected["x"]})
    np.testing.assert_allclose(o, expected["out"], rtol=2e-6, atol=1e-5)
    np.testing.assert_allclose(p, expected["probs"], rtol=1e-5, atol=1e-6)
    assert c.dtype == np.int64 and c.tolist() == expected["cls"].tolist()


def test_simple_tensorflow_graph_runs():
    with tf.Graph().as_default():
        tf.import_graph_def(_load("simple.pb"), name="")
        with tf.Session() as sess:
            assert sess.run("out:0", {"a:0": [[1.0, 1.0]]}).tolist() == [[5.0, 7.0]]


def test_export_adds_tensorflows_attributes_and_drops_flowgraph_defaults():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 4, 4, 1], name="x")
        pooled = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", name="pool")
        tf.nn.softmax(tf.reshape(pooled, [-1, 4]), name="sm")
        tf.concat([x, x], axis=3, name="cat")
    node = {n.name: n for n in g.as_graph_def().node}
    assert "axis" not in node["sm"].attr and node["sm"].attr["T"].type == 1
    assert "explicit_paddings" in node["pool"].attr
    assert node["cat"].attr["N"].i == 2 and node["cat"].attr["Tidx"].type == 3


def test_as_graph_def_is_json_and_a_message():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.matmul(x, tf.constant([[1.0], [2.0]], name="w"), name="y")
    gd = g.as_graph_def()
    assert json.loads(json.dumps(gd))["node"][2]["input"] == ["x:0", "w:0"]
    node = {n.name: n for n in gd.node}
    assert list(node["y"].input) == ["x", "w"] and node["y"].op == "MatMul"
    assert node["y"].attr["T"].type == tf.float32.as_datatype_enum
    assert node["x"].attr["shape"].shape.dim[0].size == -1
    parsed = tf.GraphDef.FromString(gd.SerializeToString())
    assert [n.name for n in parsed.node] == ["x", "w", "y"]


def test_frozen_tensorflow_graph_imports_and_gives_tensorflows_predictions():
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(_load("frozen.pb"), return_elements=["y:0"], name="tf")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {"tf/x:0": EXPECTED["x"]}),
                                       EXPECTED["y"], rtol=1e-6)


def test_graph_def_with_an_op_flowgraph_lacks_is_refused_by_name():
    graph_def = _load("model.pb")
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")  # TF's saver nodes (SaveV2, ...) included
    for node in graph_def.node:
        if node.op == "SaveV2":
            node.op = "SaveV9"  # an op type no one has
    with tf.Graph().as_default(), pytest.raises(ValueError, match="SaveV9"):
        tf.import_graph_def(graph_def, name="")


def test_freeze_write_and_import(tmp_path):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.variable_scope("dense"):
            w = tf.get_variable("kernel", [3, 2])
            b = tf.get_variable("bias", [2])
        tf.nn.relu(tf.matmul(x, w) + b, name="y")
        with tf.Session() as sess:
            tf.train.Saver([w, b]).restore(sess, os.path.join(DATA, "model", "model.ckpt-7"))
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["y"])
    ops = {n.name: n.op for n in frozen.node}
    assert ops["dense/kernel"] == "Const" and "dense/kernel/Assign" not in ops
    path = tf.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    text = tf.train.write_graph(frozen, str(tmp_path), "frozen.pbtxt")
    assert 'op: "Const"' in open(text).read() and "type: DT_FLOAT" in open(text).read()
    with tf.Graph().as_default():
        gd = tf.GraphDef()
        gd.ParseFromString(open(path, "rb").read())
        (y,) = tf.import_graph_def(gd, return_elements=["y:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {"x:0": EXPECTED["x"]}), EXPECTED["y"],
                                       rtol=1e-6)


def test_extract_sub_graph_and_errors():
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        tf.identity(a, name="b")
        tf.constant(2.0, name="c")
    assert [n["name"] for n in tf.graph_util.extract_sub_graph(g.as_graph_def(), ["b"])
            ["node"]] == ["a", "b"]
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(g.as_graph_def(), ["nope"])


@pytest.mark.parametrize("value", [
    np.float32(1.5), np.arange(6, dtype=np.float64).reshape(2, 3), np.array([3], np.int64),
    np.array([True, False]), np.array([b"a", b"bc"], object), np.float16(0.5),
    np.zeros((0, 2), np.int32)])
def test_tensor_proto_round_trip(value):
    out = tensor_value(tensor_proto(value))
    assert out.dtype == np.asarray(value).dtype and out.shape == np.shape(value)
    assert out.tolist() == np.asarray(value).tolist()


def test_short_val_list_repeats_its_last_element_and_text_escapes():
    proto = tensor_proto(np.float32(2.0))
    proto.tensor_shape.dim.add(size=3)
    assert tensor_value(proto).tolist() == [2.0, 2.0, 2.0]
    text = message_to_text(tf.NodeDef(name='q"\n\x01', op="NoOp"))
    assert text == 'name: "q\\"\\n\\001"\nop: "NoOp"\n'


def test_malformed_graph_def_bytes_are_rejected():
    with pytest.raises(ValueError):
        tf.GraphDef.FromString(b"\x0a\xff\xff\xff")


def test_edited_node_defs_are_what_is_imported_and_written(tmp_path):
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [2], name="x")
            tf.identity(x, name="y")
    gd = g.as_graph_def()
    for node in gd.node:
        node.device = ""
    path = tf.train.write_graph(gd, str(tmp_path), "g.pb", as_text=False)
    assert all(n.device == "" for n in tf.GraphDef.FromString(open(path, "rb").read()).node)
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        assert g2.get_operation_by_name("y").device == ""
        with tf.Session() as sess:
            assert sess.run("y:0", {"x:0": [1.0, 2.0]}).tolist() == [1.0, 2.0]
