"""Graphs written by TensorFlow 2.15 that need the set-operation, bincount, n-gram and
special-function kernels run under flowgraph, with TensorFlow's printed values.

Fixtures in tests/data/tf_formats/tf215_models (written by the tf-oracle):

- ``linear_classifier_eval``: ``LinearClassifier([numeric_column("x", (2,))])``, 3 steps,
  ``experimental_export_all_saved_models`` with an ``eval`` tag set (inputs parsed with
  ``classifier_parse_example_spec``) and a ``serve`` one. Its metrics check weight
  shapes with ``DenseToDenseSetOperation``;
- ``unknown_op``: tag set ``counts`` computes ``DenseBincount(x, size=5)``;
- ``misc_ops.pb``: a GraphDef of ``StringNGrams``, ``UnicodeScript``,
  ``UnsortedSegmentJoin``, ``DenseCountSparseOutput``, ``RaggedCountSparseOutput``,
  ``DenseBincount``, ``RaggedBincount``, ``SparseBincount``, ``DenseToDenseSetOperation``,
  ``DenseToSparseSetOperation``, ``BesselK1e``, ``FresnelSin``, ``Spence`` and
  ``SobolSample``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats",
                        "tf215_models")


def _example(x, y) -> bytes:
    feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
               "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[y]))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


EXAMPLES = [([0.1, 0.2], 0), ([1.0, -1.0], 1), ([0.5, 0.5], 1), ([-0.3, 0.9], 0)]
# TensorFlow 2.15, the same export and examples (update ops once, then the values).
EVAL_VALUES = {
    "loss": 2.20865, "metrics/accuracy/value": 0.75,
    "metrics/accuracy_baseline/value": 0.5, "metrics/average_loss/value": 0.55216,
    "metrics/label/mean/value": 0.5, "metrics/precision/value": 1.0,
    "metrics/prediction/mean/value": 0.50698, "metrics/recall/value": 0.5,
    "predictions/logits": [[-0.07913], [0.77324], [-0.0333], [-0.52456]],
    "predictions/class_ids": [[0], [1], [0], [0]],
}
# AUC's update runs ExpandDims with a 1-element axis vector (TF accepts one).
AUC_VALUES = {"metrics/auc/value": 1.0, "metrics/auc_precision_recall/value": 1.0}


def test_canned_estimator_eval_tag_set_loads_and_matches_tensorflow():
    path = os.path.join(FIXTURES, "linear_classifier_eval")
    serialized = np.array([_example(x, y) for x, y in EXAMPLES], dtype=object)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["eval"], path)
        sig = meta.signature_def["eval"]
        types = {op.type for op in sess.graph.get_operations()}
        assert "DenseToDenseSetOperation" in types
        feed = {sig.inputs["examples"].name: serialized}
        sess.run(tf.local_variables_initializer())
        updates = {k: v.name for k, v in sig.outputs.items()
                   if k.endswith("update_op")}
        sess.run(updates, feed)
        expected_values = {**EVAL_VALUES, **AUC_VALUES}
        out = sess.run({k: sig.outputs[k].name for k in expected_values}, feed)
    for key, expected in expected_values.items():
        np.testing.assert_allclose(out[key], expected, rtol=1e-4, atol=1e-5, err_msg=key)


def test_dense_bincount_tag_set_runs():
    path = os.path.join(FIXTURES, "unknown_op")
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["counts"], path)
        sig = meta.signature_def["serving_default"]
        fetches = {k: v.name for k, v in sig.outputs.items()}
        a = sess.run(fetches, {sig.inputs["x"].name: np.array([1, 3], np.int32)})
        b = sess.run(fetches, {sig.inputs["x"].name: np.array([0, 0, 2, 1], np.int32)})
    assert a["y"].tolist() == [0, 1, 0, 1, 0] and a["y"].dtype == np.int32
    assert b["y"].tolist() == [2, 1, 1, 0, 0]
    assert b["z"].tolist() == [0, 0, 4, 2]


MISC = {
    "ng_values": [b"the", b"cat", b"sat", b"< the", b"the cat", b"cat sat", b"sat >", b"a",
                  b"dog", b"< a", b"a dog", b"dog >", b"sat", b"< sat", b"sat >"],
    "ng_splits": [0, 7, 12, 15],
    "script": [25, 8, 17, -1, 1],
    "usj": [b"a dog", b"the cat sat|sat"],
    "bc_i": [[0, 1], [0, 2], [1, 0], [1, 1], [1, 3]],
    "bc_v": [1, 2, 1, 1, 1],
    "bc_s": [2, 4],
    "mbc": [1, 2, 2, 1],
    "rbc_i": [[0, 1], [1, 0], [1, 2], [2, 1], [2, 3]],
    "rbc_v": [1, 1, 1, 1, 1],
    "rbin": [[0.0, 1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0, 0.0]],
    "sbin": [[0, 1, 1, 0], [0, 1, 0, 1]],
    "inter": [[1, 2], [1, 0]],
    "diff_shape": [2, 1],
    "special": [3.37798, 2.07441, 0.37198],
    "sobol_pts": [[0.25, 0.75, 0.75], [0.375, 0.375, 0.625], [0.875, 0.875, 0.125],
                  [0.625, 0.125, 0.875]],
}


def test_graph_def_of_misc_ops_runs_as_in_tensorflow():
    with open(os.path.join(FIXTURES, "misc_ops.pb"), "rb") as f:
        message = tf.GraphDef.FromString(f.read())
    feeds = {"s:0": ["the cat sat", "a dog", "sat"], "cp:0": [65, 0x416, 0x4E2D, -1, 0x300],
             "v:0": [[1, 2, 2], [0, 3, 1]], "x:0": [0.5, 1.0, 2.5]}
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            names = sorted(MISC)
            values = sess.run([n + ":0" for n in names], feeds)
    for name, value in zip(names, values):
        value = np.asarray(value)
        if value.dtype.kind == "f":
            np.testing.assert_allclose(value, MISC[name], rtol=1e-4, atol=1e-5, err_msg=name)
        else:
            assert value.tolist() == MISC[name], name


@pytest.mark.parametrize("operation, expected", [
    ("a-b", [[2], [0]]), ("b-a", [[9], [7]]), ("intersection", [[1, 0], [1, 3]]),
    ("union", [[1, 2, 9, 0], [0, 1, 3, 7]])])
def test_dense_set_operation_kernel(operation, expected):
    # DenseToDenseSetOperation built directly (tf.sets builds the sparse form); the
    # result is each row's set, ascending, padded with 0 to the longest.
    from flowgraph.ops.op_util import make_op

    a = tf.constant([[1, 2, 2], [0, 3, 1]])
    b = tf.constant([[1, 9, 1], [3, 1, 7]])
    op = make_op("DenseToDenseSetOperation", [a, b], {"set_operation": operation.encode()})
    with tf.Session() as sess:
        got = sess.run(tf.sparse.to_dense(tf.SparseTensor(*op.outputs)))
    assert got.tolist() == expected
