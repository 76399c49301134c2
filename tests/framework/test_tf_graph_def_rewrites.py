"""flowgraph ops written as TensorFlow's in GraphDefs: ``ParseExample``
(`tf_formats.parse_example`), ``ClassIdToString`` and ``L2Normalize``
(`tf_formats.op_rewrites`); attributes no AttrValue field holds (`tf_formats.graph_def`'s
JSON fallback).

``L2Normalize`` (oracle-checked): TensorFlow 2.15 loads a flowgraph TensorFlow-format
export of ``l2_normalize(x, axis=1)`` and ``l2_normalize(x)`` and returns flowgraph's
values for x = [[3, 4, 0], [0, 0, 0]] ([[0.6, 0.8, 0], [0, 0, 0]] both).

``VocabLookup`` (oracle-checked): TensorFlow 2.15 loads a flowgraph TensorFlow-format
export of the four lookups of `test_vocab_lookup_is_written_as_stateless_tensorflow_ops`
and returns the values asserted there, which are also what its own
``StaticVocabularyTable`` gives for the OOV cases; a canned DNNClassifier with a
``categorical_column_with_vocabulary_list`` and a label vocabulary, exported with a
parsing receiver, serves TensorFlow's classify signature with flowgraph's scores (6e-8).

The fixture tests/data/tf_formats/parse_example_saved_model was written once by
TensorFlow 2.15's tf.compat.v1 ``simple_save`` with the tf-oracle: ``ParseExampleV2``
of x (FixedLenFeature [2] float32), k (FixedLenFeature [] int64, default 7) and s
(VarLenFeature string) into ``y = x @ [[1], [2]] + k`` and ``n = shape(s.values)``;
for the Example below TensorFlow returns y [[14.]] and n [2].

The other way, TensorFlow 2.15 loads a flowgraph ``simple_save(format="tensorflow")`` of
``parse_example(ser, FEATURES)`` (its ``ParseExampleV2``, the
sequence feature as a -1 first dimension) and returns, for BATCH, what flowgraph does:
dense [[1, 2], [3, 4]], with_default [7, 5], seq [[1, 2, 3], [4, -1, -1]], words values
[b'a', b'b'] at indices [[0, 0], [0, 1]] (oracle-checked).
"""

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.graph_def import (
    attr_value,
    graph_def_from_dict,
    graph_def_to_dict,
)

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats",
                       "parse_example_saved_model")


def _example(**features) -> bytes:
    feature = {}
    for key, value in features.items():
        if isinstance(value[0], bytes):
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        elif isinstance(value[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
        else:
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_tensorflows_parse_example_v2_saved_model_gives_tensorflows_outputs():
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], FIXTURE)
        sig = meta.signature_def["serving_default"]
        out = sess.run({k: v.name for k, v in sig.outputs.items()},
                       {sig.inputs["ex"].name: [_example(x=[1.0, 3.0], s=[b"a", b"b"])]})
    np.testing.assert_array_equal(out["y"], [[14.0]])
    np.testing.assert_array_equal(out["n"], [2])


FEATURES = {
    "dense": tf.io.FixedLenFeature([2], tf.float32),
    "with_default": tf.io.FixedLenFeature([], tf.int64, default_value=7),
    "words": tf.io.VarLenFeature(tf.string),
    "seq": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1),
}
BATCH = [_example(dense=[1.0, 2.0], words=[b"a", b"b"], seq=[1, 2, 3]),
         _example(dense=[3.0, 4.0], with_default=[5], seq=[4])]


def _parse(graph_def=None):
    """Parse BATCH in a graph built here, or imported from `graph_def`."""
    with tf.Graph().as_default() as g:
        if graph_def is None:
            ser = tf.placeholder(tf.string, [None], name="ser")
            out = tf.io.parse_example(ser, FEATURES)
            names = {k: (v.indices.name if isinstance(v, tf.SparseTensor) else v.name)
                     for k, v in out.items()}
            names["words_values"] = out["words"].values.name
        else:
            tf.import_graph_def(graph_def, name="")
            names = graph_def["fetch"]
        with tf.Session(graph=g) as sess:
            values = sess.run(names, {"ser:0": BATCH})
        return values, names, g


def test_flowgraph_parse_example_round_trips_through_tensorflows_form():
    expected, names, g = _parse()
    message = graph_def_from_dict(g.as_graph_def())
    node = next(n for n in message.node if n.op == "ParseExampleV2")
    assert sorted(node.attr) == ["Tdense", "dense_shapes", "num_sparse", "ragged_split_types",
                                 "ragged_value_types", "sparse_types"]
    assert [[d.size for d in s.dim] for s in node.attr["dense_shapes"].list.shape] == \
        [[2], [-1], []]  # the sequence feature: a variable first dimension
    assert len(node.input) == 5 + 3  # serialized, names, 3 key vectors, defaults
    back = graph_def_to_dict(message)
    back["fetch"] = names
    values, _, _ = _parse(back)
    for key in expected:
        np.testing.assert_array_equal(values[key], expected[key], err_msg=key)
    np.testing.assert_array_equal(expected["with_default"], [7, 5])
    np.testing.assert_array_equal(expected["seq"], [[1, 2, 3], [4, -1, -1]])


def test_parse_example_v2_keys_may_come_from_any_tensor():
    # ParseExampleV2 reads its keys when it runs (as TensorFlow's does), so an imported
    # graph whose keys are fed works.
    with tf.Graph().as_default() as g:
        ser = tf.placeholder(tf.string, [None], name="ser")
        tf.io.parse_example(ser, {"a": tf.io.FixedLenFeature([1], tf.float32)})
    message = graph_def_from_dict(g.as_graph_def())
    node = next(n for n in message.node if n.op == "ParseExampleV2")
    keys = next(n for n in message.node if n.name == node.input[3])
    keys.op = "Placeholder"
    keys.attr.pop("value")
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def_to_dict(message), name="")
        with tf.Session() as sess:
            out = sess.run(node.name + ":0", {"ser:0": [_example(b=[2.5])],
                                              keys.name + ":0": ["b"]})
    np.testing.assert_array_equal(out, [[2.5]])


def test_a_v1_parse_example_whose_keys_are_not_constants_is_refused_naming_the_node():
    from flowgraph.framework.serialization import encode_attr
    from flowgraph.framework.tf_formats.parse_example import parse_example_to_tf

    attrs = dict(sparse_keys=[], sparse_types=[], dense_keys=["a"], dense_types=[tf.float32],
                 dense_shapes=[tf.TensorShape([1])], dense_defaults=[None],
                 dense_is_sequence=[False])
    nodes = parse_example_to_tf({"name": "pe", "op": "ParseExample", "input": ["ser:0"],
                                 "attr": {k: encode_attr(v) for k, v in attrs.items()}})
    message = graph_def_from_dict({"node": []})
    ser = message.node.add(name="ser", op="Placeholder")
    ser.attr["dtype"].type = 7
    message.node.extend(nodes)
    keys = next(n for n in message.node if n.name == nodes[-1].input[2])
    keys.op = "Placeholder"
    with pytest.raises(ValueError, match=r"ParseExample.*not a constant"):
        graph_def_to_dict(message)


def test_attributes_without_an_attrvalue_form_survive_a_graph_def_round_trip():
    from flowgraph.framework.tf_formats.graph_def import _attr_proto

    for value in ([[1, 2], [3]], [None, np.array([1.5, 2.0], np.float32)], {"k": [1, 2]}):
        back = attr_value(_attr_proto(value))
        assert repr(back) == repr(value)


def _through_tensorflows_form(graph, fetches, feed):
    message = graph_def_from_dict(graph.as_graph_def())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def_to_dict(message), name="")
        with tf.Session(graph=g) as sess:
            return message, sess.run(fetches, feed)


def test_l2_normalize_and_class_id_to_string_are_written_as_tensorflow_ops():
    from flowgraph.estimators.head.vocab_ops import class_id_to_string

    xs = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, -2.0, 2.0]], np.float32)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        tf.nn.l2_normalize(x, axis=1, name="rows")
        tf.nn.l2_normalize(x, epsilon=0.5, name="all")
        ids = tf.constant([2, 0], tf.int64, name="ids")
        tf.identity(class_id_to_string(ids, None), name="plain")
        tf.identity(class_id_to_string(ids, ["a", "b", "c"]), name="named")
        with tf.Session() as sess:
            expected = sess.run(["rows:0", "all:0", "plain:0", "named:0"], {x: xs})
    message, got = _through_tensorflows_form(g, ["rows:0", "all:0", "plain:0", "named:0"],
                                             {"x:0": xs})
    ops = {n.op for n in message.node}
    assert not ops & {"L2Normalize", "ClassIdToString"}
    assert {"Rsqrt", "AsString", "GatherV2"} <= ops
    for e, v in zip(expected, got):
        np.testing.assert_array_equal(e, v) if e.dtype == object else \
            np.testing.assert_allclose(e, v, rtol=1e-6)
    assert got[3].tolist() == [b"c", b"a"] and got[2].tolist() == [b"2", b"0"]


def test_vocab_lookup_is_written_as_stateless_tensorflow_ops():
    from flowgraph.ops.string_hash_ops import vocab_lookup

    strings = np.array([b"a", b"zz", b"c", b"qq", b"b"], dtype=object)
    ints = np.array([5, 7, 9, 123, -4], np.int64)
    with tf.Graph().as_default() as g:
        s = tf.placeholder(tf.string, [None], name="s")
        i = tf.placeholder(tf.int64, [None], name="i")
        for name, t in {"s_default": vocab_lookup(s, ["a", "b", "c"], default_value=-7),
                        "s_oov": vocab_lookup(s, ["a", "b", "c"], num_oov_buckets=3),
                        "i_oov": vocab_lookup(i, [5, 9], num_oov_buckets=4),
                        "i_default": vocab_lookup(i, [5, 9])}.items():
            tf.identity(t, name=name)
    fetches = ["s_default:0", "s_oov:0", "i_oov:0", "i_default:0"]
    message, got = _through_tensorflows_form(g, fetches, {"s:0": strings, "i:0": ints})
    assert "VocabLookup" not in {n.op for n in message.node}
    assert [v.tolist() for v in got] == [[0, -7, 2, -7, 1], [0, 4, 2, 3, 1], [0, 2, 1, 5, 4],
                                         [0, -1, 1, -1, -1]]
