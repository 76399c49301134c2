"""flowgraph's TensorFlow messages against the official ``protobuf`` package.

flowgraph encodes TensorFlow's formats with its own small wire codec
(`flowgraph.framework.event_format`, `tf_formats.meta_graph_messages`), so it needs no
protobuf at run time. TensorBoard ships TensorFlow's compiled ``.proto`` modules
(``tensorboard.compat.proto``); where it is installed these tests parse flowgraph's
bytes with them and require the official encoding of what they read to be the same
bytes, and the DataType numbers to be TensorFlow's. Map fields (a node's ``attr``) are
compared entry by entry: flowgraph writes a node's attributes in TensorFlow's (C++)
sorted order, ``"T"`` before ``"Tidx"``, where the Python protobuf's deterministic order
puts the longer key first.
"""

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import SavedModelProto

types_pb2 = pytest.importorskip("tensorboard.compat.proto.types_pb2")
graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
meta_graph_pb2 = pytest.importorskip("tensorboard.compat.proto.meta_graph_pb2")

# flowgraph's dtype name -> TensorFlow's DataType name where they differ
_PROTO_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def _without_nodes(message, official: bool) -> bytes:
    if official:
        copy = type(message)()
        copy.CopyFrom(message)
        del copy.node[:]
        return copy.SerializeToString(deterministic=True)
    copy = type(message).FromString(message.SerializeToString())
    copy.ClearField("node")
    return copy.SerializeToString()


def _assert_same_graph(ours, official):
    """`ours` (flowgraph's GraphDef message) reads as `official` (protobuf's) did."""
    assert len(ours.node) == len(official.node)
    for mine, theirs in zip(ours.node, official.node):
        assert (mine.name, mine.op, list(mine.input), mine.device or "") == \
            (theirs.name, theirs.op, list(theirs.input), theirs.device)
        assert list(mine.attr) == sorted(theirs.attr), mine.name  # C++ map order
        for key, value in theirs.attr.items():
            assert value.SerializeToString(deterministic=True) == \
                mine.attr[key].SerializeToString(), (mine.name, key)
    assert _without_nodes(ours, False) == _without_nodes(official, True)


def test_every_dtype_enum_is_tensorflows_datatype():
    seen = 0
    for d in {tf.as_dtype(e) for e in range(1, 131) if _is_dtype(e)}:
        base = d.base_dtype.name
        proto = _PROTO_NAMES.get(base, f"DT_{base.upper()}")
        if d.is_ref_dtype:
            proto += "_REF"
        assert types_pb2.DataType.Value(proto) == d.as_datatype_enum, d
        seen += 1
    # 23 types, tf.dtypes.experimental's float8/int4/uint4, and their reference variants
    assert seen == 54
    for name in ("qint8", "quint8", "qint16", "quint16", "qint32", "bfloat16", "resource",
                 "variant"):
        assert getattr(tf, name).as_datatype_enum == types_pb2.DataType.Value(
            f"DT_{name.upper()}")


def _is_dtype(enum: int) -> bool:
    try:
        tf.as_dtype(enum)
    except TypeError:
        return False
    return True


def test_tensorflow_format_saved_model_meta_graphs_are_official_bytes(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    col = tf.feature_column.categorical_column_with_vocabulary_file("w", str(vocab),
                                                                    num_oov_buckets=1)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        words = tf.placeholder(tf.string, [None], name="w")
        dense = tf.feature_column.input_layer({"w": words},
                                              [tf.feature_column.indicator_column(col)])
        y = tf.tensordot(x, tf.Variable(np.ones((3, 3), np.float32)), 1, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, str(tmp_path / "1"), {"x": x, "w": words},
                                       {"y": y, "dense": dense}, format="tensorflow")
    with open(os.path.join(tmp_path / "1", "saved_model.pb"), "rb") as f:
        ours = SavedModelProto.FromString(f.read())
    for mg in ours.meta_graphs:
        official = meta_graph_pb2.MetaGraphDef.FromString(mg.SerializeToString())
        _assert_same_graph(mg.graph_def, official.graph_def)
        assert {n.op for n in official.graph_def.node} >= {"HashTableV2", "MatMul"}
        # The rest (signatures, collections, assets, SaverDef): every field read as a
        # known one, and as many bytes written back (map entries may come in another order)
        official.ClearField("graph_def")
        before = official.SerializeToString(deterministic=True)
        official.DiscardUnknownFields()
        assert official.SerializeToString(deterministic=True) == before
        rest = type(mg).FromString(mg.SerializeToString())
        rest.ClearField("graph_def")
        assert len(before) == len(rest.SerializeToString())
        assert official.saver_def.restore_op_name == mg.saver_def.restore_op_name
        assert dict(official.signature_def["serving_default"].inputs)["w"].name == "w:0"
        (item,) = official.collection_def["saved_model_assets"].any_list.value
        assert item.type_url == "type.googleapis.com/tensorflow.AssetFileDef"
        assert list(official.asset_file_def) == []  # TF1's builder: the collection only


def test_written_graph_def_is_official_bytes(tmp_path):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.nn.softmax(tf.matmul(x, tf.constant([[1.0], [2.0]])) + 1.0, name="y")
        path = tf.train.write_graph(g.as_graph_def(), str(tmp_path), "g.pb", as_text=False)
    with open(path, "rb") as f:
        data = f.read()
    official = graph_pb2.GraphDef.FromString(data)
    _assert_same_graph(tf.GraphDef.FromString(data), official)
    assert [n.op for n in official.node][-1] == "Softmax"
