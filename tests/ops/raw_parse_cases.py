"""Registry-wide cases for the parsing, regex, summary and py-function op types of the
raw-op gap fill (`flowgraph/ops/parsing_v2_ops.py`, `string_extra_ops.py`,
`summary_ops.py`, `script_ops.py`): `CONTRACT_CASES` are contract-only ``(inputs, build,
options)`` cases (none of these ops has a gradient, as in TensorFlow), in the format of
`misc_names_cases`."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op
from tests.framework.example_support import serialized_example

_VD = {"value_dependent": True}
R = tf.raw_ops


_example = serialized_example


def _sequence(n: int, steps) -> bytes:
    se = tf.train.SequenceExample()
    se.context.feature["n"].int64_list.value.append(n)
    se.context.feature["m"].bytes_list.value.extend([b"c"] * n)
    for t in steps:
        se.feature_lists.feature_list["t"].feature.add().float_list.value.extend(t)
        se.feature_lists.feature_list["u"].feature.add().int64_list.value.extend([n] * n)
    return se.SerializeToString()


_EXAMPLES = np.array([_example(a=[1.0, 2.0], b=[3, 4]), _example(a=[0.5, 1.5], b=[5])], object)
_SEQUENCES = np.array([_sequence(2, [[1.0, 2.0], [3.0, 4.0]]), _sequence(1, [[5.0, 6.0]])],
                      object)
_WORDS = np.array([b"a1b22", b"cat", b"x9"], object)
_SEQ_ATTRS = dict(Ncontext_sparse=1, Ncontext_dense=1, Nfeature_list_sparse=1,
                  Nfeature_list_dense=1, context_sparse_types=[tf.string],
                  feature_list_dense_types=[tf.float32], context_dense_shapes=[[]],
                  feature_list_sparse_types=[tf.int64], feature_list_dense_shapes=[[2]])


def _legacy_parse_example(s):
    # flowgraph's attribute-keyed ParseExample, which a TensorFlow 1.x graph's
    # ParseExample (keys as inputs) is read into
    return make_op("ParseExample", [s], {
        "sparse_keys": ["b"], "sparse_types": [tf.int64], "dense_keys": ["a"],
        "dense_types": [tf.float32], "dense_shapes": [tf.TensorShape([2])],
        "dense_defaults": [None], "dense_is_sequence": [False]}).outputs


CONTRACT_CASES = {
    "ParseExample": [([_EXAMPLES], _legacy_parse_example, _VD)],
    "ParseExampleV2": [([_EXAMPLES], lambda s: tf.io.parse_example(s, {
        "a": tf.io.FixedLenFeature([2], tf.float32), "b": tf.io.RaggedFeature(tf.int64),
        "c": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)})["a"], _VD)],
    "ParseSingleExample": [([_EXAMPLES[0]], lambda s: R.ParseSingleExample(
        serialized=s, dense_defaults=[tf.constant([0.0, 0.0])], num_sparse=1,
        sparse_keys=["b"], dense_keys=["a"], sparse_types=[tf.int64],
        dense_shapes=[[2]]).dense_values[0], _VD)],
    "ParseSequenceExample": [([_SEQUENCES], lambda s: R.ParseSequenceExample(
        serialized=s, debug_name=tf.constant([], tf.string),
        context_dense_defaults=[tf.constant([], tf.int64)],
        feature_list_dense_missing_assumed_empty=[], context_sparse_keys=["m"],
        context_dense_keys=["n"], feature_list_sparse_keys=["u"],
        feature_list_dense_keys=["t"], **_SEQ_ATTRS).feature_list_dense_values[0], _VD)],
    "ParseSequenceExampleV2": [([_SEQUENCES], lambda s: tf.io.parse_sequence_example(
        s, {"n": tf.io.FixedLenFeature([], tf.int64), "m": tf.io.RaggedFeature(tf.string)},
        {"t": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
         "u": tf.io.RaggedFeature(tf.int64)})[1]["t"], _VD)],
    "ParseSingleSequenceExample": [([_SEQUENCES[1]], lambda s: R.ParseSingleSequenceExample(
        serialized=s, feature_list_dense_missing_assumed_empty=tf.constant([], tf.string),
        context_sparse_keys=[tf.constant("m")], context_dense_keys=[tf.constant("n")],
        feature_list_sparse_keys=[tf.constant("u")], feature_list_dense_keys=[tf.constant("t")],
        context_dense_defaults=[tf.constant([], tf.int64)], debug_name="",
        **{k: v for k, v in _SEQ_ATTRS.items() if not k.startswith("N")}
    ).feature_list_dense_values[0], _VD)],
    "RegexReplace": [([_WORDS], lambda s: tf.strings.regex_replace(
        s, tf.constant("[0-9]+"), tf.constant("#")), {})],
    "RegexFullMatch": [([_WORDS], lambda s: tf.strings.regex_full_match(
        s, tf.constant("[a-z]+")), {})],
    "TensorSummary": [([np.arange(6.0).reshape(2, 3)], lambda x: R.TensorSummary(
        tensor=x, description="", labels=[], display_name=""), {})],
    "EagerPyFunc": [([np.arange(6.0).reshape(2, 3)], lambda x: tf.py_function(
        lambda a: a.numpy() * 2, [x], x.dtype), _VD)],
}
VALUE_DEPENDENT: set[str] = set()
GRADIENT_CASES: dict = {}
