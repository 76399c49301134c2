"""The parsing, regex, summary and py-function op types of the raw-op gap fill
(`flowgraph/ops/parsing_v2_ops.py`, `string_extra_ops.py`, `summary_ops.py`,
`script_ops.py`): values and errors against TensorFlow 2.15's (expected values are
TensorFlow's, from the tf-oracle), the op types TensorFlow's public functions emit, a
GraphDef TensorFlow wrote with all of them and a TensorFlow-exported canned estimator
served through its parsing receiver (tests/data/tf_formats/raw_parse/make_fixture.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from tests.framework.example_support import serialized_example

R = tf.raw_ops
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_parse")


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


_example = serialized_example


E1 = _example(a=[1.0, 2.0], b=[3, 4, 5], r=[7, 8], c=[b"x", b"y"])
E2 = _example(b=[6], c=[b"z"])


def _v2(serialized, **kw):
    args = dict(names=[], sparse_keys=["b"], dense_keys=["a", "d"], ragged_keys=["r", "c"],
                dense_defaults=[np.array([0.0, 0.0], np.float32), np.array("pad", object)],
                num_sparse=1, sparse_types=[tf.int64],
                ragged_value_types=[tf.int64, tf.string],
                ragged_split_types=[tf.int32, tf.int64], dense_shapes=[[2], [None]])
    args.update(kw)
    return R.ParseExampleV2(serialized=serialized, **args)


# -- values, as TensorFlow computes them --------------------------------------------------
def test_parse_example_v2_sparse_dense_sequence_and_ragged_outputs():
    with tf.Graph().as_default():
        out = _v2([E1, E2])
        assert [len(g) for g in out] == [1, 1, 1, 2, 2, 2]  # TF's grouped result
        assert out.dense_values[1].shape.as_list() == [2, None]
        v = _run(out)
    np.testing.assert_array_equal(v.sparse_indices[0], [[0, 0], [0, 1], [0, 2], [1, 0]])
    np.testing.assert_array_equal(v.sparse_values[0], [3, 4, 5, 6])
    np.testing.assert_array_equal(v.sparse_shapes[0], [2, 3])
    np.testing.assert_array_equal(v.dense_values[0], [[1.0, 2.0], [0.0, 0.0]])
    assert v.dense_values[1].shape == (2, 0)
    np.testing.assert_array_equal(v.ragged_values[0], [7, 8])
    assert v.ragged_values[1].tolist() == [b"x", b"y", b"z"]
    assert v.ragged_row_splits[0].dtype == np.int32 and v.ragged_row_splits[1].dtype == np.int64
    np.testing.assert_array_equal(v.ragged_row_splits[0], [0, 2, 2])
    np.testing.assert_array_equal(v.ragged_row_splits[1], [0, 2, 3])


def test_parse_example_v2_of_one_example_has_no_batch_dimension_and_no_row_splits():
    with tf.Graph().as_default():
        v = _run(_v2(E1))
    np.testing.assert_array_equal(v.sparse_indices[0], [[0], [1], [2]])
    np.testing.assert_array_equal(v.sparse_shapes[0], [3])
    np.testing.assert_array_equal(v.dense_values[0], [1.0, 2.0])
    assert v.ragged_values[1].tolist() == [b"x", b"y"]
    assert v.ragged_row_splits[0].shape == (0,) and v.ragged_row_splits[1].shape == (0,)


def test_parse_example_v2_of_an_empty_batch():
    with tf.Graph().as_default():
        v = _run(_v2(np.zeros([0], object), ragged_keys=["r"], ragged_value_types=[tf.int64],
                     ragged_split_types=[tf.int32], dense_keys=["a"], dense_shapes=[[2]],
                     dense_defaults=[np.array([1.0, 2.0], np.float32)]))
    assert v.sparse_indices[0].shape == (0, 2) and v.dense_values[0].shape == (0, 2)
    np.testing.assert_array_equal(v.sparse_shapes[0], [0, 0])
    np.testing.assert_array_equal(v.ragged_row_splits[0], [0])


def test_parse_single_example_reads_its_keys_from_attributes():
    with tf.Graph().as_default():
        v = _run(R.ParseSingleExample(
            serialized=E1, dense_defaults=[np.array([9.0, 9.0], np.float32)], num_sparse=1,
            sparse_keys=["b"], dense_keys=["a"], sparse_types=[tf.int64], dense_shapes=[[2]]))
    np.testing.assert_array_equal(v.sparse_indices[0], [[0], [1], [2]])
    np.testing.assert_array_equal(v.sparse_values[0], [3, 4, 5])
    np.testing.assert_array_equal(v.sparse_shapes[0], [3])
    np.testing.assert_array_equal(v.dense_values[0], [1.0, 2.0])


@pytest.mark.parametrize("build, message", [
    (lambda: R.ParseExampleV2(serialized=[E1, E2], names=[], sparse_keys=[], dense_keys=["a"],
                              ragged_keys=[], dense_defaults=[np.array([], np.float32)],
                              num_sparse=0, sparse_types=[], ragged_value_types=[],
                              ragged_split_types=[], dense_shapes=[[2]]),
     "Name: <unknown>, Feature: a (data type: float) is required but could not be found."),
    (lambda: R.ParseExampleV2(serialized=[E1, E2], names=[], sparse_keys=["a"], dense_keys=[],
                              ragged_keys=[], dense_defaults=[], num_sparse=1,
                              sparse_types=[tf.int64], ragged_value_types=[],
                              ragged_split_types=[], dense_shapes=[]),
     "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Expected type: int64, "
     "Actual type: float"),
])
def test_bad_input_raises_tensorflows_error(build, message):
    with tf.Graph().as_default():
        out = build()
        with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
            _run(out)


# -- the op types TensorFlow's public functions emit --------------------------------------
def _types(fn) -> list[str]:
    with tf.Graph().as_default() as g:
        fn()
    return [op.type for op in g.get_operations()]


FEATURES = {"a": tf.io.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0]),
            "b": tf.io.VarLenFeature(tf.int64),
            "c": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True)}


def test_parse_example_builds_parse_example_v2_with_tensorflows_inputs_and_names():
    # TensorFlow 2.15 (tf.compat.v1): ParseExample/ParseExampleV2 with its key vectors as
    # constants under the op's name, the default of "a" reshaped, an empty one for "c".
    with tf.Graph().as_default() as g:
        out = tf.io.parse_example(tf.placeholder(tf.string, [None]), FEATURES)
    op = out["a"].op
    assert [o.type for o in g.get_operations() if o.type != "Const"] == \
        ["Placeholder", "Reshape", "ParseExampleV2"]
    assert op.name == "ParseExample/ParseExampleV2"
    assert [t.name for t in op.inputs] == [
        "Placeholder:0", "ParseExample/ParseExampleV2/names:0",
        "ParseExample/ParseExampleV2/sparse_keys:0", "ParseExample/ParseExampleV2/dense_keys:0",
        "ParseExample/ParseExampleV2/ragged_keys:0", "ParseExample/Reshape:0",
        "ParseExample/Const:0"]
    assert sorted(op.node_def.attr) == ["Tdense", "dense_shapes", "num_sparse",
                                        "ragged_split_types", "ragged_value_types",
                                        "sparse_types"]
    assert [(t.dtype.name, t.shape.as_list()) for t in op.outputs] == [
        ("int64", [None, 2]), ("int64", [None]), ("int64", [2]), ("float32", [None, 2]),
        ("string", [None, None])]


def test_single_and_sequence_parsers_build_tensorflows_op_types():
    with tf.Graph().as_default():
        out = tf.io.parse_single_example(tf.placeholder(tf.string, []), FEATURES)
        assert out["a"].op.name == "ParseSingleExample/ParseExample/ParseExampleV2"
        assert out["b"].indices.shape.as_list() == [None, 1]
        _, seq = tf.io.parse_single_sequence_example(
            tf.placeholder(tf.string, []), {"n": tf.io.FixedLenFeature([], tf.int64)},
            {"t": tf.io.FixedLenSequenceFeature([2], tf.float32)})
        assert seq["t"].op.name == \
            "ParseSingleSequenceExample/ParseSequenceExample/ParseSequenceExampleV2"
        assert len(seq["t"].op.inputs) == 10 and seq["t"].shape.as_list() == [None, 2]
        _, seq, lengths = tf.io.parse_sequence_example(
            tf.placeholder(tf.string, [None]),
            sequence_features={"t": tf.io.FixedLenSequenceFeature([2], tf.float32,
                                                                  allow_missing=True),
                               "u": tf.io.VarLenFeature(tf.int64)})
        assert seq["t"].op.name == "ParseSequenceExample/ParseSequenceExample/" \
            "ParseSequenceExampleV2"
        assert seq["u"].indices.shape.as_list() == [None, 3]
        assert lengths["t"].shape.as_list() == [None]


def test_regex_functions_pick_the_static_or_the_tensor_op_as_tensorflow_does():
    with tf.Graph().as_default():
        words = ["a1b22", "x"]
        r1 = tf.strings.regex_replace(words, tf.constant("[0-9]+"), "#", replace_global=False)
        r2 = tf.strings.regex_replace(["a1b22"], "[0-9]+", tf.constant("<\\0>"))
        m1 = tf.strings.regex_full_match(["ab", "a1"], tf.constant("[a-z]+"))
        m2 = tf.strings.regex_full_match(["ab", "a1"], "[a-z]+")
        s = tf.strings.regex_replace(words, "[0-9]", "")
        assert [t.op.type for t in (r1, r2, m1, m2, s)] == [
            "RegexReplace", "RegexReplace", "RegexFullMatch", "StaticRegexFullMatch",
            "StaticRegexReplace"]
        assert [t.name for t in r1.op.inputs] == ["RegexReplace/input:0", "Const:0",
                                                  "RegexReplace/rewrite:0"]
        assert [t.name for t in m2.op.inputs] == ["StaticRegexFullMatch/input:0"]
        v = _run([r1, r2, m1, m2])
        bad = tf.strings.regex_full_match(["a"], tf.constant("("))
        with pytest.raises(tf.errors.InvalidArgumentError, match="invalid pattern"):
            _run(bad)
    assert v[0].tolist() == [b"a#b22", b"x"] and v[1].tolist() == [b"a<1>b<22>"]
    assert v[2].tolist() == [True, False] and v[3].tolist() == [True, False]


def test_tensor_summary_v1_names_its_value_after_the_op():
    with tf.Graph().as_default():
        s = R.TensorSummary(tensor=tf.constant([[1.5, 2.0]]), description="d",
                            display_name="dn")
        summary = tf.Summary.FromString(_run(s))
    (value,) = summary.value
    assert value.node_name == "TensorSummary" and not value.tag
    assert not value.HasField("metadata")  # as TensorFlow's: description is not written
    np.testing.assert_array_equal(tf.make_ndarray(value.tensor), [[1.5, 2.0]])


def test_py_function_builds_eager_py_func():
    with tf.Graph().as_default():
        y = tf.py_function(lambda x: x.numpy() * 2, [tf.constant([1.0, 2.0])], tf.float32)
        assert (y.op.type, y.op.name) == ("EagerPyFunc", "EagerPyFunc")
        assert sorted(y.op.node_def.attr) == ["Tin", "Tout", "is_async", "token"]
        np.testing.assert_array_equal(_run(y), [2.0, 4.0])


def test_an_imported_eager_py_func_is_refused_naming_the_node():
    with tf.Graph().as_default() as g:
        tf.py_function(lambda x: x, [tf.constant(1.0)], tf.float32, name="f")
    with tf.Graph().as_default(), pytest.raises(ValueError, match=r"'f' \(EagerPyFunc\)"):
        tf.import_graph_def(g.as_graph_def(), name="")


# -- a graph TensorFlow wrote ---------------------------------------------------------------
def _unpack(arrays, name: str) -> np.ndarray:
    data, lengths = arrays[name + ".bytes"].tobytes(), arrays[name + ".lengths"]
    ends = np.cumsum(lengths)
    return np.array([data[e - n:e] for n, e in zip(lengths, ends)], dtype=object)


def test_tensorflow_graph_with_every_op_gives_tensorflows_values():
    expected = dict(np.load(os.path.join(DATA, "expected.npz")))
    with open(os.path.join(DATA, "graph.pb"), "rb") as fh:
        graph_def = tf.GraphDef.FromString(fh.read())
    names = [k for k in expected if not k.startswith("feed.")]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        types = {op.type for op in g.get_operations()}
        out = _run({k: f"{k}:0" for k in names}, {"ser:0": _unpack(expected, "feed.ser"),
                                                 "seqs:0": _unpack(expected, "feed.seqs")})
    assert {"ParseExampleV2", "ParseSingleExample", "ParseSequenceExampleV2",
            "ParseSequenceExample", "ParseSingleSequenceExample", "RegexReplace",
            "RegexFullMatch", "StaticRegexFullMatch", "TensorSummary"} <= types
    for key in names:
        value = np.asarray(out[key])
        value = value.astype(bytes) if value.dtype == object else value
        assert value.dtype == expected[key].dtype, key
        np.testing.assert_array_equal(value, expected[key], err_msg=key)


_SERVE = """
import sys
import numpy as np
import flowgraph as tf
data = sys.argv[1]
arrays = dict(np.load(data + "/predictions.npz"))
raw, lengths = arrays["examples.bytes"].tobytes(), arrays["examples.lengths"]
ends = np.cumsum(lengths)
examples = np.array([raw[e - n:e] for n, e in zip(lengths, ends)], dtype=object)
with tf.Session(graph=tf.Graph()) as sess:
    meta = tf.saved_model.loader.load(sess, ["serve"], data + "/linear_classifier")
    sig = meta.signature_def["predict"]
    got = sess.run({k: v.name for k, v in sig.outputs.items()},
                   {sig.inputs["examples"].name: examples})
    assert "ParseExampleV2" in {op.type for op in sess.graph.get_operations()}
predictor = tf.contrib.predictor.from_saved_model(data + "/linear_classifier",
                                                  signature_def_key="predict")
again = predictor({"examples": examples})
for out in (got, again):
    for key in ("probabilities", "logits"):
        np.testing.assert_allclose(out[key], arrays[key], rtol=1e-5, atol=1e-6)
    for key in ("class_ids", "all_class_ids"):
        np.testing.assert_array_equal(out[key], arrays[key])
    np.testing.assert_array_equal(np.asarray(out["classes"]).astype(bytes), arrays["classes"])
print("served", np.round(got["probabilities"], 4).tolist())
"""


def test_tensorflow_exported_linear_classifier_serves_through_its_parsing_receiver():
    # A fresh process: the SavedModel alone must bring every op type it needs.
    done = subprocess.run([sys.executable, "-c", _SERVE, DATA], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "served" in done.stdout
