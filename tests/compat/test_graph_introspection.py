"""Graph introspection as TF 1.x freeze / inspect / visualize scripts do it: ``op.node_def``,
``graph.as_graph_def().node``, the text format, ``google.protobuf.text_format`` on
flowgraph's messages, ``op.get_attr`` types. The expected values were printed by
TensorFlow 2.15 (``tf.compat.v1``) running the same code (/tmp/s13/wild/G01..G10)."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.serialization import graph_to_dict
from flowgraph.framework.tf_formats.graph_def import GraphDefDict

text_format = pytest.importorskip("google.protobuf.text_format")


def _conv_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        m = tf.matmul(x, w, name="mm")
        c = tf.constant(2.5, name="c")
        y = tf.add(m, c, name="y")
        img = tf.placeholder(tf.float32, [1, 4, 4, 1], name="img")
        k = tf.constant(np.ones((2, 2, 1, 1), np.float32), name="k")
        conv = tf.nn.conv2d(img, k, strides=[1, 1, 1, 1], padding="SAME", name="conv")
        with tf.control_dependencies([y]):
            z = tf.identity(conv, name="z")
    return g, x, m, c, conv, z


def test_op_node_def_is_tensorflows_message():
    _, x, m, c, conv, z = _conv_graph()
    nd = m.op.node_def
    assert type(nd).__name__ == "NodeDef"
    assert (nd.name, nd.op, list(nd.input), nd.device) == ("mm", "MatMul", ["x", "w"], "")
    assert nd.attr["T"].type == 1 and nd.attr["transpose_a"].b is False
    cd = conv.op.node_def
    assert cd.attr["padding"].s == b"SAME"
    assert list(cd.attr["strides"].list.i) == [1, 1, 1, 1]
    assert sorted(cd.attr) == ["T", "data_format", "dilations", "explicit_paddings",
                               "padding", "strides", "use_cudnn_on_gpu"]
    shape = x.op.node_def.attr["shape"].shape
    assert [d.size for d in shape.dim] == [-1, 3]
    assert c.op.node_def.attr["value"].tensor.float_val[0] == 2.5
    assert list(z.op.node_def.input) == ["conv", "^y"]


def test_str_of_node_def_and_op_is_the_text_format():
    _, _, m, c, _, z = _conv_graph()
    text = str(m.op.node_def)
    assert text.startswith('name: "mm"\nop: "MatMul"\ninput: "x"\ninput: "w"\nattr {\n')
    assert 'key: "T"\n  value {\n    type: DT_FLOAT\n  }' in text
    assert str(m.op) == text  # print(op) shows its NodeDef
    assert "float_val: 2.5\n" in str(c.op.node_def)
    assert 'input: "^y"\n' in str(z.op)
    assert str(tf.NodeDef(name="z", op="NoOp")) == 'name: "z"\nop: "NoOp"\n'
    assert str(tf.AttrValue(s=b"VALID")) == 's: "VALID"\n'
    assert str(tf.AttrValue(list=tf.AttrValue.ListValue(i=[1, 2]))) == \
        "list {\n  i: 1\n  i: 2\n}\n"
    with tf.Graph().as_default():
        two = tf.constant(2.0, name="two")
    assert "float_val: 2\n" in str(two.op.node_def)  # C++'s shortest form, as TF prints


def test_get_attr_types():
    _, _, m, c, conv, _ = _conv_graph()
    assert conv.op.get_attr("padding") == b"SAME"
    assert conv.op.get_attr("data_format") == b"NHWC"
    assert conv.op.get_attr("T") == tf.float32
    assert conv.op.get_attr("strides") == [1, 1, 1, 1]
    assert m.op.get_attr("transpose_a") is False
    with pytest.raises(ValueError, match="no attr named 'nope'"):
        c.op.get_attr("nope")
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[], [2]], shared_name="qq")
        ck = tf.check_numerics(tf.constant(1.0), "oops")
    assert q.queue_ref.op.get_attr("shared_name") == b"qq"
    assert q.queue_ref.op.get_attr("component_types") == [tf.float32, tf.int32]
    assert q.queue_ref.op.get_attr("capacity") == 3
    assert ck.op.get_attr("message") == b"oops"
    assert ck.op.node_def.attr["message"].s == b"oops"


def test_graph_api():
    g = tf.Graph()
    assert g.seed is None
    with g.as_default():
        tf.set_random_seed(7)
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.name_scope("s1"):
            assert g.get_name_scope() == "s1"
            a = tf.add(x, 1.0, name="a")
            assert g.unique_name("a") == "s1/a_1"
            assert g.unique_name("a", mark_as_used=False) == "s1/a_2"
        tf.Variable(1.0, name="v")
        tf.add_to_collection("mine", a)
        b = tf.multiply(a, 2.0, name="b")
        tf.identity(a, name="c")
    assert g.seed == 7 and g.version > 0
    assert sorted(g.get_all_collection_keys()) == ["mine", "trainable_variables", "variables"]
    assert [o.name for o in g.get_operations()] == [
        "x", "s1/a/y", "s1/a", "v/initial_value", "v", "v/Assign", "v/read", "b/y", "b", "c"]
    assert sorted(o.name for o in a.consumers()) == ["b", "c"]
    assert [t.name for t in a.op.values()] == ["s1/a:0"]
    assert b.op._input_types == [tf.float32, tf.float32]
    assert b.op._output_types == [1]  # TensorFlow gives DataType enums here
    assert (g.building_function, g.finalized) == (False, False)
    g.finalize()
    assert g.finalized


def test_graph_def_nodes_text_and_bytes():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.identity(x * 2.0, name="y")
    gd = g.as_graph_def()
    assert len(gd.node) == 4
    assert [n.name for n in gd.node] == ["x", "mul/y", "mul", "y"]
    assert [list(n.input) for n in gd.node] == [[], [], ["x", "mul/y"], ["mul"]]
    assert type(gd.node[0]).__name__ == "NodeDef" and gd.versions.producer > 0
    assert str(gd).startswith('node {\n  name: "x"\n  op: "Placeholder"\n')
    assert repr(gd) == str(gd)
    assert gd.HasField("versions") and gd.ByteSize() == len(gd.SerializeToString())
    gd4 = tf.GraphDef()
    gd4.ParseFromString(gd.SerializeToString())
    assert [n.name for n in gd4.node] == ["x", "mul/y", "mul", "y"]
    assert sorted(gd4.node[1].attr) == ["dtype", "value"]
    gd4.node[0].device = "/cpu:0"
    n = gd4.node.add()
    n.name, n.op = "extra", "NoOp"
    assert (gd4.node[0].device, len(gd4.node)) == ("/cpu:0", 5)


def test_protobuf_text_format_reads_and_writes_flowgraph_messages():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.identity(x * 2.0, name="y")
    gd = g.as_graph_def()
    txt = text_format.MessageToString(gd)
    assert txt.startswith('node {\n  name: "x"\n  op: "Placeholder"\n  attr {\n'
                          '    key: "dtype"\n    value {\n      type: DT_FLOAT\n')
    merged = tf.GraphDef()
    text_format.Merge(txt, merged)
    parsed = text_format.Parse(txt, tf.GraphDef())
    assert [n.name for n in merged.node] == ["x", "mul/y", "mul", "y"]
    assert [n.op for n in parsed.node] == ["Placeholder", "Const", "Mul", "Identity"]
    assert parsed == merged and parsed.versions.producer == gd.versions.producer
    assert text_format.MessageToString(parsed) == txt
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(parsed, name="")
    assert [o.name for o in g2.get_operations()] == ["x", "mul/y", "mul", "y"]
    nd = tf.NodeDef()
    text_format.Merge('name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } '
                      'attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape '
                      '{ dim { size: 2 } } int_val: 3 int_val: 4 } } }', nd)
    assert (nd.name, nd.attr["dtype"].type, list(nd.attr["value"].tensor.int_val)) == \
        ("c", 3, [3, 4])
    with tf.Graph().as_default():
        gd3 = tf.GraphDef()
        gd3.node.extend([nd])
        c, = tf.import_graph_def(gd3, return_elements=["c:0"], name="p")
        with tf.Session() as sess:
            assert sess.run(c).tolist() == [3, 4]


def test_editing_a_graph_def_like_transform_scripts():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(np.ones((3, 2), np.float32), name="w")
        tf.nn.relu(tf.matmul(x, w, name="mm"), name="y")
    out = tf.GraphDef()
    for n in g.as_graph_def().node:
        m = out.node.add()
        m.CopyFrom(n)
        if n.op == "Relu":
            m.op = "Relu6"
    m = out.node.add()
    m.name, m.op = "extra", "Identity"
    m.input.append("y")
    m.attr["T"].type = tf.float32.as_datatype_enum  # a missing map key reads as a new value
    assert sorted(out.node[-1].attr) == ["T"]
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(out, name="")
        assert [o.type for o in g2.get_operations()] == [
            "Placeholder", "Const", "MatMul", "Relu6", "Identity"]
        with tf.Session() as sess:
            assert sess.run("extra:0", {"x:0": [[1.0, 2.0, 4.0]]}).tolist() == [[6.0, 6.0]]
    back = text_format.Parse(text_format.MessageToString(out), tf.GraphDef())
    assert back.SerializeToString() == out.SerializeToString()


def test_freeze_script():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="input")
        w = tf.Variable([[1.0], [2.0]], name="w")
        tf.identity(tf.matmul(x, w), name="output")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["output"])
    assert [(n.name, n.op) for n in frozen.node] == [
        ("input", "Placeholder"), ("w", "Const"), ("w/read", "Identity"),
        ("MatMul", "MatMul"), ("output", "Identity")]
    assert [list(n.input) for n in frozen.node] == [
        [], [], ["w"], ["input", "w/read"], ["MatMul"]]
    wn = frozen.node[1]
    assert wn.attr["dtype"].type == 1
    assert tf.make_ndarray(wn.attr["value"].tensor).tolist() == [[1.0], [2.0]]
    assert text_format.MessageToString(frozen).split("\n")[:2] == ["node {", '  name: "input"']


def test_colocation_devices_and_output_shapes():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [4, 3], name="x")
        v = tf.Variable(tf.zeros([3]), name="v")
        with tf.colocate_with(v.op):
            r = tf.identity(v, name="r")
        y = tf.add(x, r, name="y")
        with tf.control_dependencies([y.op]):
            n = tf.no_op(name="n")
    gd = g.as_graph_def()
    assert [(nd.name, list(nd.attr["_class"].list.s)) for nd in gd.node
            if "_class" in nd.attr] == [("v/Assign", [b"loc:@v"]), ("v/read", [b"loc:@v"]),
                                        ("r", [b"loc:@v"])]
    assert [(nd.name, nd.device) for nd in gd.node if nd.device] == [("x", "/device:CPU:0")]
    assert r.op.get_attr("_class") == [b"loc:@v"]
    assert str(n.node_def) == 'name: "n"\nop: "NoOp"\ninput: "^y"\n'
    shaped = GraphDefDict(graph_to_dict(g), add_shapes=True)  # as_graph_def(add_shapes=True)
    assert [(nd.name, [[d.size for d in s.dim] for s in nd.attr["_output_shapes"].list.shape])
            for nd in shaped.node if nd.name in ("x", "y", "r")] == [
        ("x", [[4, 3]]), ("r", [[3]]), ("y", [[4, 3]])]
    # every node with outputs; TensorFlow gives an op without outputs (NoOp) none
    assert [nd.name for nd in shaped.node if "_output_shapes" not in nd.attr] == ["n"]


def test_imported_graph_and_string_constants():
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.int32, [2], name="a")
        tf.reduce_sum(a * 3, name="b")
        s = tf.constant(["ab", "c"], name="s")
    assert list(s.op.node_def.attr["value"].tensor.string_val) == [b"ab", b"c"]
    assert s.op.node_def.attr["dtype"].type == 7
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(g.as_graph_def(), name="imp")
    op = g2.get_operation_by_name("imp/b")
    assert list(op.node_def.input) == ["imp/mul", "imp/Const"]
    assert sorted(op.node_def.attr) == ["T", "Tidx", "keep_dims"]
    assert (op.get_attr("keep_dims"), op.get_attr("Tidx"), op.get_attr("T")) == \
        (False, tf.int32, tf.int32)
    assert str(tf.GraphDef()) == "" and tf.GraphDef().SerializeToString() == b""


def test_text_format_without_the_protobuf_engine(monkeypatch):
    with tf.Graph().as_default():
        y = tf.identity(tf.placeholder(tf.float32, [2], name="x"), name="y")
    with_engine = str(y.op)
    monkeypatch.setenv("FLOWGRAPH_PROTOBUF", "0")  # the hand codec only
    assert str(y.op) == with_engine == (
        'name: "y"\nop: "Identity"\ninput: "x"\nattr {\n  key: "T"\n  value {\n'
        '    type: DT_FLOAT\n  }\n}\n')
    assert [f.name for f, _ in y.op.node_def.ListFields()] == ["name", "op", "input", "attr"]
