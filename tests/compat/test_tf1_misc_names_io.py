"""``tf.estimator.*_parse_example_spec``, ``tf.io.RaggedFeature``, ``tf.data.DatasetSpec``,
``tf.summary.initialize`` and ``tf.lookup.experimental`` against TensorFlow 2.15
(``tf.compat.v1`` graph mode): expected values are what the tf-oracle printed."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors

fc = tf.feature_column


def _spec(d: dict) -> dict:
    return {k: repr(v) for k, v in d.items()}


A = "FixedLenFeature(shape=(2,), dtype=tf.float32, default_value=None)"


def test_classifier_parse_example_spec():
    a = fc.numeric_column("a", shape=(2,))
    b = fc.categorical_column_with_hash_bucket("b", 10)
    assert _spec(tf.estimator.classifier_parse_example_spec([a, b], label_key="y")) == {
        "a": A, "b": "VarLenFeature(dtype=tf.string)",
        "y": "FixedLenFeature(shape=(1,), dtype=tf.int64, default_value=None)"}
    assert _spec(tf.estimator.classifier_parse_example_spec(
        [a], label_key="y", label_dtype=tf.string, label_default="x", weight_column="w")) == {
        "a": A, "w": "FixedLenFeature(shape=(1,), dtype=tf.float32, default_value=None)",
        "y": "FixedLenFeature(shape=(1,), dtype=tf.string, default_value='x')"}
    w64 = fc.numeric_column("w", dtype=tf.float64)
    assert _spec(tf.estimator.classifier_parse_example_spec([a], "y", weight_column=w64))[
        "w"] == "FixedLenFeature(shape=(1,), dtype=tf.float64, default_value=None)"
    assert _spec(tf.estimator.classifier_parse_example_spec([a], "y", label_default=1))[
        "y"] == "FixedLenFeature(shape=(1,), dtype=tf.int64, default_value=1)"


def test_parse_example_spec_key_collisions():
    a = fc.numeric_column("a", shape=(2,))
    with pytest.raises(ValueError, match=r"^label should not be used as feature\. label_key: "
                                         r"a, features: dict_keys\(\['a'\]\)$"):
        tf.estimator.classifier_parse_example_spec([a], label_key="a")
    with pytest.raises(ValueError, match=r"^weight_column should not be used as feature\. "
                                         r"weight_column: y, features: dict_keys\(\['a', 'y'\]\)"):
        tf.estimator.classifier_parse_example_spec([a], label_key="y", weight_column="y")
    with pytest.raises(ValueError, match="weight_column: a, features"):
        tf.estimator.regressor_parse_example_spec([a], label_key="y", weight_column="a")
    with pytest.raises(ValueError, match="label should not be used as feature"):
        tf.estimator.regressor_parse_example_spec([a], label_key="a")


def test_regressor_parse_example_spec():
    a = fc.numeric_column("a", shape=(2,))
    assert _spec(tf.estimator.regressor_parse_example_spec([a], label_key="y")) == {
        "a": A, "y": "FixedLenFeature(shape=(1,), dtype=tf.float32, default_value=None)"}
    assert _spec(tf.estimator.regressor_parse_example_spec(
        [a], label_key="y", label_dimension=3, label_default=0.5, label_dtype=tf.float64))[
        "y"] == "FixedLenFeature(shape=(3,), dtype=tf.float64, default_value=0.5)"
    assert _spec(tf.estimator.regressor_parse_example_spec([a], "y", label_dimension=0))[
        "y"] == "FixedLenFeature(shape=(0,), dtype=tf.float32, default_value=None)"


def _example(**features) -> bytes:
    feature = {}
    for k, v in features.items():
        if v and isinstance(v[0], bytes):
            feature[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        elif v and isinstance(v[0], float):
            feature[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        else:
            feature[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


E1 = _example(v=[1, 2, 3], lens=[2, 1], splits=[0, 2, 3], f=[1.5], w=[b"a", b"b"])
E2 = _example(v=[4], lens=[0, 1], splits=[0, 0, 1], w=[b"c"])
E3 = _example(lens=[], splits=[0])
RF = tf.io.RaggedFeature


def _run(x):
    with tf.Session() as sess:
        v = sess.run(x)
    return v.to_list() if hasattr(v, "to_list") else v.tolist()


def test_ragged_feature_repr_and_checks():
    assert repr(RF(tf.int64)) == ("RaggedFeature(dtype=tf.int64, value_key=None, "
                                  "partitions=(), row_splits_dtype=tf.int32, validate=False)")
    assert repr(RF(tf.int64, value_key="v", partitions=[RF.RowLengths("lens")])) == (
        "RaggedFeature(dtype=tf.int64, value_key='v', partitions=[RowLengths(key='lens')], "
        "row_splits_dtype=tf.int32, validate=False)")
    with pytest.raises(ValueError, match=r"must be int64, float32, or bytes; got tf\.int32"):
        RF(tf.int32)


def test_parse_example_with_ragged_features():
    out = tf.io.parse_example([E1, E2, E3], {"v": RF(tf.int64)})["v"]
    assert isinstance(out, tf.RaggedTensor) and out.shape.as_list() == [3, None]
    assert _run(out) == [[1, 2, 3], [4], []]
    assert _run(tf.io.parse_example([E1, E2], {"x": RF(tf.int64, value_key="v")})["x"]) == [
        [1, 2, 3], [4]]
    assert _run(tf.io.parse_example([E1, E2], {"w": RF(tf.string)})["w"]) == [[b"a", b"b"],
                                                                              [b"c"]]
    assert _run(tf.io.parse_example([E1, E2], {"f": RF(tf.float32)})["f"]) == [[1.5], []]
    for part in (RF.RowLengths("lens"), RF.RowSplits("splits")):
        got = tf.io.parse_example([E1, E2], {"v": RF(tf.int64, partitions=[part])})["v"]
        assert _run(got) == [[[1, 2], [3]], [[], [4]]]
    uni = tf.io.parse_example([_example(v=[1, 2, 3, 4]), _example(v=[5, 6])],
                              {"v": RF(tf.int64, partitions=[RF.UniformRowLength(2)])})["v"]
    assert uni.shape.as_list() == [2, None, 2]
    assert _run(uni) == [[[1, 2], [3, 4]], [[5, 6]]]
    splits = tf.io.parse_example([E1], {"v": RF(tf.int64)})["v"].row_splits
    assert splits.dtype == tf.int32 and _run(splits) == [0, 3]
    mixed = tf.io.parse_example([E1, E2], {"v": RF(tf.int64),
                                           "f": tf.io.VarLenFeature(tf.float32)})
    assert sorted(mixed) == ["f", "v"] and isinstance(mixed["f"], tf.SparseTensor)


def test_parse_single_example_with_ragged_features():
    plain = tf.io.parse_single_example(E1, {"v": RF(tf.int64)})["v"]
    assert isinstance(plain, tf.Tensor) and _run(plain) == [1, 2, 3]
    for part in (RF.RowLengths("lens"), RF.RowSplits("splits")):
        got = tf.io.parse_single_example(E1, {"v": RF(tf.int64, partitions=[part])})["v"]
        assert _run(got) == [[1, 2], [3]]
    assert _run(tf.io.parse_single_example(E3, {"v": RF(tf.int64)})["v"]) == []


def test_dataset_spec():
    ds = tf.data.Dataset.range(3)
    spec = tf.data.DatasetSpec(tf.TensorSpec([], tf.int64))
    assert repr(spec) == ("DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                          "TensorShape([]))")
    assert repr(tf.data.DatasetSpec.from_value(ds)) == repr(spec)
    assert spec == tf.data.DatasetSpec.from_value(ds)
    assert repr(spec.element_spec) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"
    assert repr(tf.data.DatasetSpec({"a": tf.TensorSpec([2], tf.float32)})) == (
        "DatasetSpec({'a': TensorSpec(shape=(2,), dtype=tf.float32, name=None)}, "
        "TensorShape([]))")
    wide = tf.data.DatasetSpec(tf.TensorSpec([None], tf.int64))
    assert wide.is_compatible_with(tf.data.DatasetSpec(tf.TensorSpec([3], tf.int64)))
    assert spec.is_compatible_with(ds) and not wide.is_compatible_with(ds)
    assert issubclass(spec.value_type, tf.data.Dataset)


def test_summary_initialize_without_a_default_writer():
    for kwargs in ({}, {"graph": tf.get_default_graph()}, {"session": None}):
        with pytest.raises(RuntimeError, match=r"No default tf\.contrib\.summary\."
                                               r"SummaryWriter found"):
            tf.summary.initialize(**kwargs)


def test_lookup_experimental_tables():
    assert sorted(n for n in dir(tf.lookup.experimental) if not n.startswith("_")) == [
        "DenseHashTable", "MutableHashTable"]
    g = tf.Graph()
    with g.as_default():
        t = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, default_value=-1.0,
                                                  empty_key=0, deleted_key=-1, name="dh")
        ins = t.insert(tf.constant([1, 2, 5], tf.int64), tf.constant([1.0, 2.0, 5.0]))
        rm = t.remove(tf.constant([2], tf.int64))
        look = t.lookup(tf.constant([1, 2, 5], tf.int64))
        keys, values = t.export()
        m = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
        m_ins = m.insert(tf.constant(["a"]), tf.constant([10], tf.int64))
        m_look = m.lookup(tf.constant(["a", "b"]))
        with tf.Session() as sess:
            sess.run([ins, m_ins])
            sess.run(rm)
            assert sess.run(look).tolist() == [1.0, -1.0, 5.0]
            assert sess.run(t.size()) == 2
            k, v = sess.run([keys, values])
            assert dict(zip(k.tolist(), v.tolist())) == {1: 1.0, 5: 5.0}
            assert sess.run(m_look).tolist() == [10, -1]
    assert (t.name, m.name) == ("dh", "MutableHashTable")
    assert (t.key_dtype, t.value_dtype) == (tf.int64, tf.float32)
    assert [o.type for o in g.get_operations()][:4] == ["Const", "Const", "Const",
                                                        "MutableDenseHashTableV2"]
    assert look.op.name == "dh_lookup_table_find/LookupTableFindV2"


def test_dense_hash_table_reserved_keys_are_errors():
    for empty, deleted, key in ((0, 0, 1), (0, -1, 0), (0, -1, -1)):
        with tf.Graph().as_default():
            t = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1,
                                                      empty_key=empty, deleted_key=deleted)
            ins = t.insert(tf.constant([key], tf.int64), tf.constant([1], tf.int64))
            with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError):
                sess.run(ins)


def test_mutable_hash_table_values_are_numpy_checked():
    with tf.Graph().as_default():
        t = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float64, 0.0)
        rng = np.random.default_rng(2)
        keys = rng.integers(0, 50, 30)
        vals = rng.random(30)
        with tf.Session() as sess:
            sess.run(t.insert(tf.constant(keys), tf.constant(vals)))
            got = sess.run(t.lookup(tf.constant(np.arange(50))))
    ref = dict(zip(keys.tolist(), vals.tolist()))  # the last insert of a key wins
    np.testing.assert_array_equal(got, [ref.get(i, 0.0) for i in range(50)])


@pytest.mark.parametrize("module", [
    "flowgraph.ops.string_ngram_ops", "flowgraph.ops.string_script_ops",
    "flowgraph.ops.string_script_table", "flowgraph.ops.sparse_bincount_ops",
    "flowgraph.ops.lookup_mutable", "flowgraph.ops.parsing_ragged_feature",
    "flowgraph.data.dataset_spec", "flowgraph.summary.summary_initialize",
    "flowgraph.estimators.parse_spec", "flowgraph.math.special", "flowgraph.ops.math_special"])
def test_module_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{module}: {result}"
