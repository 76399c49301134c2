"""as_graph_def / import_graph_def: JSON round trips, input_map, return_elements, errors."""

import json
import pathlib

import numpy as np
import pytest

import flowgraph as tf


def _build():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.name_scope("blk"):
            c = tf.constant([[1.0, 2.0]], name="c")
            y = tf.add(x, c, name="y")
        with tf.control_dependencies([y]):
            z = tf.identity(x, name="z")
        with tf.device("/cpu:0"):
            w = tf.matmul(y, tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3)),
                          name="w")
        with tf.colocate_with(w):
            s = tf.constant(["a", "bc"], name="s")
        u = tf.placeholder(tf.float32, None, name="u")
        u.set_shape([4])
    return g, (x, y, z, w, s, u)


def _round_trip(gd):
    return json.loads(json.dumps(gd))


def test_graph_def_is_json_and_has_no_pickle():
    g, _ = _build()
    text = json.dumps(g.as_graph_def())
    assert '"node"' in text
    src = pathlib.Path(tf.__file__).parent / "framework" / "serialization.py"
    assert "pickle" not in src.read_text().replace("never pickle", "")


def test_import_rebuilds_equivalent_graph():
    g, _ = _build()
    gd = _round_trip(g.as_graph_def())
    g2 = tf.Graph()
    with g2.as_default():
        assert tf.import_graph_def(gd, name="imp") is None
    ops1 = g.get_operations()
    ops2 = g2.get_operations()
    assert [f"imp/{o.name}" for o in ops1] == [o.name for o in ops2]
    for a, b in zip(ops1, ops2):
        assert a.type == b.type
        assert a.device == b.device
        assert [f"imp/{c.name}" for c in a.control_inputs] == [c.name for c in b.control_inputs]
        assert [f"imp/{t.name}" for t in a.inputs] == [t.name for t in b.inputs]
        assert [t.shape.as_list() if t.shape.ndims is not None else None for t in a.outputs] \
            == [t.shape.as_list() if t.shape.ndims is not None else None for t in b.outputs]
        assert [t.dtype for t in a.outputs] == [t.dtype for t in b.outputs]
        assert sorted(a.attrs) == sorted(b.attrs)
        for key, value in a.attrs.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(value, b.attrs[key])
            else:
                assert value == b.attrs[key]
    s2 = g2.get_operation_by_name("imp/s")
    assert s2.colocation_groups() == [b"loc:@imp/w"]
    assert g2.get_tensor_by_name("imp/u:0").shape.as_list() == [4]  # set_shape kept


def test_imported_graph_runs_the_same():
    g, (x, y, z, w, s, _) = _build()
    feed = np.array([[1.0, 1.0], [2.0, 3.0]], np.float32)
    with tf.Session(graph=g) as sess:
        want = sess.run([y, z, w, s], feed_dict={x: feed})
    g2 = tf.Graph()
    with g2.as_default():
        outs = tf.import_graph_def(_round_trip(g.as_graph_def()),
                                   return_elements=["blk/y:0", "z:0", "w:0", "s:0"],
                                   name="net")
    with tf.Session(graph=g2) as sess:
        got = sess.run(outs, feed_dict={"net/x:0": feed})
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_default_prefix_is_unique():
    g, _ = _build()
    gd = g.as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(gd)
        tf.import_graph_def(gd)
    names = [o.name for o in g2.get_operations()]
    assert "import/x" in names and "import_1/x" in names


def test_empty_prefix_keeps_names_and_uniquifies_collisions():
    g, _ = _build()
    gd = g.as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(gd, name="")
        tf.import_graph_def(gd, name="")
        y1 = g2.get_tensor_by_name("blk/y_1:0")
    names = [o.name for o in g2.get_operations()]
    assert names[: len(gd["node"])] == [n["name"] for n in gd["node"]]
    assert "x_1" in names
    assert [t.name for t in y1.op.inputs] == ["x_1:0", "blk/c_1:0"]


def test_import_under_name_scope():
    g, _ = _build()
    with tf.name_scope("outer"):
        tf.import_graph_def(g.as_graph_def(), name="in")
    assert "outer/in/x" in tf.get_default_graph()


def test_return_elements():
    g, _ = _build()
    gd = g.as_graph_def()
    y, z_op, x_op = tf.import_graph_def(gd, return_elements=["blk/y:0", "z", "x"], name="r")
    assert y.name == "r/blk/y:0"
    assert isinstance(z_op, tf.Operation) and z_op.name == "r/z"
    assert x_op.type == "Placeholder"
    with pytest.raises(ValueError, match="Requested return tensor 'nope:0' not found"):
        tf.import_graph_def(gd, return_elements=["nope:0"], name="r2")
    with pytest.raises(ValueError, match="Requested return node 'nope' not found"):
        tf.import_graph_def(gd, return_elements=["nope"], name="r3")
    with pytest.raises(ValueError, match="Invalid return output 3"):
        tf.import_graph_def(gd, return_elements=["x:3"], name="r4")


def test_input_map(sess):
    g, _ = _build()
    gd = g.as_graph_def()
    xin = tf.constant([[5.0, 5.0]], name="xin")
    (y,) = tf.import_graph_def(gd, input_map={"x:0": xin}, return_elements=["blk/y:0"],
                               name="m")
    assert y.shape.as_list() == [1, 2]  # inferred from the mapped input
    assert sorted(o.name for o in xin.consumers()) == ["m/blk/y", "m/z"]
    np.testing.assert_array_equal(sess.run(y), [[6.0, 7.0]])
    (y2,) = tf.import_graph_def(gd, input_map={"x": xin}, return_elements=["blk/y:0"],
                                name="m2")
    np.testing.assert_array_equal(sess.run(y2), [[6.0, 7.0]])
    ctrl = tf.no_op(name="ctrl")
    tf.import_graph_def(gd, input_map={"^blk/y": ctrl}, name="m3")
    assert [c.name for c in tf.get_default_graph().get_operation_by_name("m3/z")
            .control_inputs] == ["ctrl"]


def test_input_map_errors():
    g, _ = _build()
    gd = g.as_graph_def()
    xin = tf.constant([[5.0, 5.0]])
    with pytest.raises(ValueError, match=r"not found in graph_def: \[nope:0\]"):
        tf.import_graph_def(gd, input_map={"nope:0": xin}, name="a")
    with pytest.raises(ValueError, match="incompatible with expected float\\."):
        tf.import_graph_def(gd, input_map={"x:0": tf.constant([[1, 2]])}, name="b")
    with pytest.raises(ValueError, match="Incompatible shapes"):
        tf.import_graph_def(gd, input_map={"x:0": tf.constant([1.0, 2.0, 3.0])}, name="c")
    with pytest.raises(ValueError, match="incompatible with expected"):
        tf.import_graph_def(gd, input_map={"x:0": 3}, name="d")


def _node(name, op="NoOp", inputs=(), attr=None):
    return {"name": name, "op": op, "input": list(inputs), "attr": attr or {}}


@pytest.mark.parametrize(("gd", "match"), [
    ({"a": 1}, "needs a 'node' list"),
    ({"node": [3]}, "is not a dict"),
    ({"node": [{"name": "a"}]}, "string 'name' and 'op'"),
    ({"node": [_node("a"), _node("a")]}, "two nodes named 'a'"),
    ({"node": [_node("a", inputs=["b:0"])]}, "missing from the graph def"),
    ({"node": [_node("a", inputs=["^b"])]}, "missing from the graph def"),
    ({"node": [_node("a", inputs=["b:x"]), _node("b")]}, "malformed tensor name"),
    ({"node": [_node("a", op="NoSuchOp")]}, "unknown op type"),
    ({"node": [_node("a", op="Identity", inputs=["b:0"]),
               _node("b", op="Identity", inputs=["a:0"])]}, "cycle"),
    ({"node": [_node("a", op="Const", attr={"value": {"weird": 1}})]}, "malformed attribute"),
    ({"node": [{"name": "a", "op": "NoOp", "input": "b"}]}, "'input' must be a list"),
    ({"node": [{"name": "a", "op": "NoOp", "attr": []}]}, "'attr' must be a dict"),
])
def test_malformed_graph_defs(gd, match):
    with pytest.raises(ValueError, match=match):
        tf.import_graph_def(gd)


def test_non_dict_graph_def_is_type_error():
    with pytest.raises(TypeError, match="graph def dict"):
        tf.import_graph_def("x")


def test_object_arrays_are_rejected():
    gd = {"node": [_node("a", op="Const", attr={
        "value": {"array": "", "dtype": "|O", "shape": [0]}, "dtype": {"dtype": "float32"}})]}
    with pytest.raises(ValueError):
        tf.import_graph_def(gd)


def test_variables_round_trip(sess):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        inc = v.assign_add([1.0, 1.0])
    g2 = tf.Graph()
    with g2.as_default():
        init, inc2 = tf.import_graph_def(g.as_graph_def(), return_elements=["v/Assign", inc.name],
                                         name="")
    with tf.Session(graph=g2) as s:
        s.run(init)
        np.testing.assert_array_equal(s.run(inc2), [2.0, 3.0])
    assert g2.get_operation_by_name("v/read").colocation_groups() == [b"loc:@v"]
