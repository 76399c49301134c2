"""TF1 programs with ragged tensors, ``tf.sets`` and sparse/dense conversions, sweep 15
(area ``ragged``), run under TensorFlow 2.15 and flowgraph with the tf-oracle;
TensorFlow's printed values are inline.

The programs (TF 1.14/1.15 style, graph mode): ``tf.ragged.constant`` with
``ragged_rank``/``inner_shape``/dtypes and the ``RaggedTensorValue`` a session returns
(components, ``to_list``, repr); the ``RaggedTensor.from_*`` factories with run-time
validation of fed partitions; a bag-of-words classifier over ``tf.strings.split``
(``result_type='RaggedTensor'``), a lookup table through ``map_flat_values`` and ragged
``reduce_mean``/``reduce_sum``/``reduce_max`` in a trained graph; tag-overlap metrics with
``tf.sets`` on dense, sparse and string sets; variable-length ids fed through
``tf.ragged.placeholder`` into mean-pooled embeddings trained with Adam, with ragged
arithmetic, ``boolean_mask``, ``gather``, ``range``, ``concat``, ``stack`` and indexing;
sparse <-> ragged <-> dense round trips next to ``segment_*``, ``sparse.*`` and a Saver;
CSV-like text split into ragged numbers with ragged ``embedding_lookup``, ``relu``,
``strings.length``, ``size`` and reductions over a ragged rank 2 tensor; ragged
``ones_like``/``zeros_like``/``clip_by_value``/``add_n``/``round``.

Left as is: TensorFlow folds constant subgraphs in shape inference (a ragged tensor from
splitting constant strings has a known ``(3, ?)``, the column reduction of a constant
ragged tensor a known ``(3,)``); flowgraph keeps ``(?, ?)``/``(?,)``. The names of the
helper ops of ``row_lengths``/``nrows``/``value_rowids``/``bounding_shape`` and of the
``RowPartitionFrom*`` scopes of TensorFlow 2's row partitions differ (the tensors users
fetch, ``values``/``row_splits`` of constants and the reduction/elementwise results, have
TensorFlow's names). Feeding a plain list to a ragged placeholder is an AttributeError
inside TensorFlow and a TypeError saying what to feed here. ``tf.strings.upper`` and the
other string ops but ``length`` still take dense tensors only, as do ``tf.strings.to_number``
(TensorFlow 1's, a TypeError in both). ``tf.expand_dims``, ``nn.dropout``,
``reduce_std`` and a dense operand of higher rank than a RaggedTensor (TensorFlow
broadcasts it) are not dispatched; a float ``FloorMod`` gives ``0.0`` where TensorFlow
gives ``-0.0``; ``tf.ragged.constant([])`` is a ragged ``(0, ?)`` tensor here, a dense
``(0,)`` one in TensorFlow.

Classes of discrepancy found and fixed (one focused test each below):

* No ragged dispatch: ``tf.reduce_*``, elementwise math (``tf.add``/``multiply``/
  ``maximum``/``equal``/``cast``/``log``/``nn.relu``/``round``/``clip_by_value``/
  ``ones_like``..., the Python operators and comparisons), ``tf.add_n``, ``tf.concat``,
  ``tf.stack``, ``tf.where``, ``tf.size``,
  ``nn.embedding_lookup`` and ``strings.length`` failed on a RaggedTensor (TypeError
  converting it to a tensor, or a silently wrong ``tf.where``), and ``rt[...]`` did not
  exist. A small dispatch registry (``ops/op_dispatch.py``) lets the op functions hand a
  ragged argument to ``ops/ragged_dispatch.py``, which builds TensorFlow's graph:
  ``RaggedReduceSum/UnsortedSegmentSum`` (``Mean`` a ``truediv`` of sums, ``Any``/``All``
  sums/products of ints, so empty rows give False/True), flat-value ops named as the dense
  op (``Add``, ``Mul``, ``Log``), dense operands broadcast over rows, a run-time check
  that two ragged operands share their partitions, ``RaggedWhere`` coordinates.
* ``RaggedTensorValue`` printed its rows and ``RaggedTensor`` its splits' name;
  TensorFlow prints the components (``tf.RaggedTensorValue(values=array(...),
  row_splits=array(...))``, ``str`` is ``<tf.RaggedTensorValue [...]>``), and
  ``tf.ragged.constant`` names its values ``RaggedConstant/values`` (splits ``Const``).
* ``RaggedTensor.from_tensor`` without ``lengths``/``padding`` lost the uniform row
  length (``(3, ?)`` for TensorFlow's ``(3, 3)``) and refused ``ragged_rank > 1``.
* ``validate=True`` factories did not check fed partitions: bad splits, negative lengths
  or unsorted rowids gave silently wrong rows; TensorFlow raises InvalidArgumentError
  (``Arguments to from_row_splits do not form a valid RaggedTensor:zero``...).
* ``tf.sets`` always built ``set_intersection/SparseToSparseSetOperation`` with unknown
  static shapes; TensorFlow builds ``DenseToDenseSetOperation``/
  ``DenseToSparseSetOperation`` (dense first, ``aminusb`` flipped for
  ``difference(sparse, dense)``) without a scope, with shapes ``(?, rank)``/``(rank,)``,
  rank-2 and leading-dimension checks (ValueError) and its dtype TypeErrors.
* ``tf.ragged.constant`` errors for mixed nesting depths and a too large ``ragged_rank``
  carry TensorFlow's messages.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _g():
    return tf.Graph().as_default()


# -- program 1: constants, attributes, RaggedTensorValue ----------------------------------
def test_ragged_constant_attributes_and_fetched_value():
    with _g():
        rt = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
        assert (rt.dtype, str(rt.shape), rt.ragged_rank) == (tf.int32, "(5, ?)", 1)
        assert (rt.values.name, rt.row_splits.name) == ("RaggedConstant/values:0",
                                                         "RaggedConstant/Const:0")
        assert rt.row_splits.dtype == tf.int64 and rt.flat_values.shape.as_list() == [8]
        rt2 = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]], dtype=tf.float32)
        assert [t.name for t in rt2.nested_row_splits] == ["RaggedConstant_1/Const_1:0",
                                                           "RaggedConstant_1/Const:0"]
        assert (str(rt2.shape), rt2.ragged_rank) == ("(2, ?, ?)", 2)
        rt3 = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
        assert (str(rt3.shape), rt3.flat_values.shape.as_list()) == ("(2, ?, 2)", [3, 2])
        rt5 = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], inner_shape=(2,))
        assert str(rt5.shape) == "(2, ?, 2)"
        assert tf.ragged.constant([[1, 2], [3]], row_splits_dtype=tf.int32
                                  ).row_splits.dtype == tf.int32
        assert repr(rt) == (
            'tf.RaggedTensor(values=Tensor("RaggedConstant/values:0", shape=(8,), '
            'dtype=int32), row_splits=Tensor("RaggedConstant/Const:0", shape=(6,), '
            'dtype=int64))')
        with tf.Session() as sess:
            v = sess.run(rt)
            assert type(v).__name__ == "RaggedTensorValue"
            assert repr(v) == ("tf.RaggedTensorValue(values=array([3, 1, 4, 1, 5, 9, 2, 6], "
                               "dtype=int32), row_splits=array([0, 4, 4, 7, 8, 8]))")
            assert v.to_list() == [[3, 1, 4, 1], [], [5, 9, 2], [6], []]
            assert (v.shape, v.ragged_rank, v.dtype) == ((5, None), 1, np.int32)
            rl, nr, vr, bs = sess.run([rt.row_lengths(), rt.nrows(), rt.value_rowids(),
                                       rt.bounding_shape()])
            assert rl.tolist() == [4, 0, 3, 1, 0] and int(nr) == 5
            assert vr.tolist() == [0, 0, 0, 0, 2, 2, 2, 3] and bs.tolist() == [5, 4]
            v2 = sess.run(rt2)
            assert repr(v2) == (
                "tf.RaggedTensorValue(values=tf.RaggedTensorValue(values=array([1., 2., 3., "
                "4., 5., 6.], dtype=float32), row_splits=array([0, 2, 3, 6])), "
                "row_splits=array([0, 2, 3]))")
            assert str(v2) == "<tf.RaggedTensorValue [[[1.0, 2.0], [3.0]], [[4.0, 5.0, 6.0]]]>"
            assert sess.run(rt3).to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
            t = rt.to_tensor(default_value=-1)
            assert sess.run(t).tolist() == [[3, 1, 4, 1], [-1] * 4, [5, 9, 2, -1],
                                            [6, -1, -1, -1], [-1] * 4]
            sp = sess.run(rt.to_sparse())
            assert sp.indices.tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0], [2, 1],
                                           [2, 2], [3, 0]]
            assert sp.dense_shape.tolist() == [5, 4]


def test_ragged_constant_errors_carry_tensorflows_messages():
    with _g():
        with pytest.raises(ValueError, match="all scalar values must have the same nesting"):
            tf.ragged.constant([[1, 2], [[3]]])
        with pytest.raises(ValueError, match=r"max depth smaller than ragged_rank=3"):
            tf.ragged.constant([[1, 2], [3]], ragged_rank=3)
        with pytest.raises(ValueError, match=r"scalar values depth 2, but ragged_rank=2"):
            tf.ragged.constant([[1, 2], [3]], ragged_rank=2)


# -- program 2: factories and validation --------------------------------------------------
def test_factories_from_tensor_uniform_rows_and_ragged_rank_two():
    with _g():
        vals = tf.constant([1., 2., 3., 4., 5., 6.])
        made = [tf.RaggedTensor.from_row_splits(vals, [0, 2, 2, 6]),
                tf.RaggedTensor.from_row_lengths(vals, [2, 0, 4]),
                tf.RaggedTensor.from_value_rowids(vals, [0, 0, 2, 2, 2, 2], nrows=4),
                tf.RaggedTensor.from_row_starts(vals, [0, 2, 2]),
                tf.RaggedTensor.from_row_limits(vals, [2, 2, 6])]
        assert [r.row_splits.name for r in made] == [
            "RaggedFromRowSplits/control_dependency:0",
            "RaggedFromRowLengths/control_dependency:0",
            "RaggedFromValueRowIds/control_dependency:0",
            "RaggedFromRowStarts/control_dependency:0",
            "RaggedFromRowLimits/control_dependency:0"]
        dense = tf.constant([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
        f = tf.RaggedTensor.from_tensor(dense, padding=0)
        g = tf.RaggedTensor.from_tensor(dense, lengths=[1, 0, 2])
        h = tf.RaggedTensor.from_tensor(dense)
        assert [str(x.shape) for x in (f, g, h)] == ["(3, ?)", "(3, ?)", "(3, 3)"]
        assert (g.values.name, h.values.name) == ("RaggedFromTensor_1/boolean_mask/GatherV2:0",
                                                  "RaggedFromTensor_2/Reshape:0")
        sp = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [10, 20, 30], [3, 4])
        i = tf.RaggedTensor.from_sparse(sp)
        j = tf.RaggedTensor.from_nested_row_splits(vals, [[0, 1, 3], [0, 2, 2, 6]])
        k = tf.RaggedTensor.from_nested_row_lengths(vals, [[1, 2], [2, 0, 4]])
        ll = tf.RaggedTensor.from_tensor(tf.reshape(tf.range(24), [2, 3, 4]), ragged_rank=2)
        assert (str(j.shape), str(k.shape), str(ll.shape), ll.ragged_rank) == (
            "(2, ?, ?)", "(2, ?, ?)", "(2, 3, 4)", 2)
        pad3 = tf.RaggedTensor.from_tensor(tf.constant([[[1, 0], [2, 3]], [[0, 0], [4, 0]]]),
                                           padding=0, ragged_rank=2)
        assert str(pad3.shape) == "(2, 2, ?)"
        with tf.Session() as sess:
            for r in made[:2] + made[3:]:
                assert sess.run(r).to_list() == [[1.0, 2.0], [], [3.0, 4.0, 5.0, 6.0]]
            assert sess.run(made[2]).to_list() == [[1.0, 2.0], [], [3.0, 4.0, 5.0, 6.0], []]
            assert sess.run(f).to_list() == [[1, 2], [3], [4, 5, 6]]
            assert sess.run(g).to_list() == [[1], [], [4, 5]]
            assert sess.run(h).to_list() == [[1, 2, 0], [3, 0, 0], [4, 5, 6]]
            assert sess.run(i).to_list() == [[10, 20], [], [30]]
            assert sess.run(j).to_list() == [[[1.0, 2.0]], [[], [3.0, 4.0, 5.0, 6.0]]]
            assert sess.run(k).to_list() == [[[1.0, 2.0]], [[], [3.0, 4.0, 5.0, 6.0]]]
            assert sess.run(ll).to_list() == np.arange(24).reshape(2, 3, 4).tolist()
            assert sess.run(pad3).to_list() == [[[1], [2, 3]], [[], [4]]]
        with pytest.raises(ValueError, match="Specify argument `lengths` or `padding`"):
            tf.RaggedTensor.from_tensor(dense, lengths=[1, 0, 2], padding=0)
        with pytest.raises(ValueError, match="rank of a RaggedTensor must be greater than 1"):
            tf.RaggedTensor.from_tensor(tf.constant([1, 2]))


def test_validated_factories_check_fed_partitions_when_run():
    with _g():
        x = tf.placeholder(tf.float32, [None])
        s = tf.placeholder(tf.int64, [None])
        n = tf.RaggedTensor.from_row_splits(x, s)
        lens = tf.RaggedTensor.from_row_lengths(x, s)
        ids = tf.RaggedTensor.from_value_rowids(x, s)
        ids2 = tf.RaggedTensor.from_value_rowids(x, s, nrows=2)
        unchecked = tf.RaggedTensor.from_row_splits(x, s, validate=False)
        assert str(n.shape) == "(?, ?)"
        with tf.Session() as sess:
            assert sess.run(n, {x: [1, 2, 3], s: [0, 1, 3]}).to_list() == [[1.0], [2.0, 3.0]]
            assert sess.run(ids, {x: [1, 2, 3], s: [0, 0, 2]}).to_list() == [
                [1.0, 2.0], [], [3.0]]
            cases = [(n, [0, 2, 1, 3], "valid RaggedTensor:monotonic"),
                     (n, [1, 3], "valid RaggedTensor:zero"),
                     (n, [0, 2], "_from_row_partition do not form a valid RaggedTensor"),
                     (lens, [1, 1], "_from_row_partition do not form a valid RaggedTensor"),
                     (lens, [-1, 4], "from_row_lengths do not form a valid RowPartition"),
                     (ids, [0, 2, 1], "from_value_rowids do not form a valid RowPartition"),
                     (ids, [-1, 0, 0], "from_value_rowids do not form a valid RowPartition"),
                     (ids2, [0, 1, 2], "from_value_rowids do not form a valid RowPartition")]
            for t, sv, msg in cases:
                with pytest.raises(errors.InvalidArgumentError, match=msg):
                    sess.run(t, {x: [1, 2, 3], s: sv})
            assert sess.run(unchecked, {x: [1, 2, 3], s: [0, 2]}).row_splits.tolist() == [0, 2]
        with pytest.raises(ValueError, match="must have rank 1"):
            tf.RaggedTensor.from_row_splits([1.0, 2.0], [[0, 2]])
        with pytest.raises(ValueError, match="row_splits must have dtype int32 or int64"):
            tf.RaggedTensor.from_row_splits([1.0, 2.0], [0.0, 2.0])


# -- program 3: bag of words over strings.split -------------------------------------------
def test_bag_of_words_over_ragged_tokens_trains_like_tensorflow():
    with _g():
        sents = tf.placeholder(tf.string, [None], name="sentences")
        labels = tf.placeholder(tf.float32, [None], name="labels")
        tokens = tf.strings.split(sents, result_type="RaggedTensor")
        assert (type(tokens).__name__, str(tokens.shape), tokens.values.name) == (
            "RaggedTensor", "(?, ?)", "StringSplit/StringSplit/StringSplitV2:1")
        vocab = tf.constant(["the", "cat", "sat", "on", "mat", "dog"])
        table = tf.contrib.lookup.index_table_from_tensor(vocab, num_oov_buckets=1)
        ids = tf.ragged.map_flat_values(table.lookup, tokens)
        with tf.variable_scope("bow"):
            emb = tf.get_variable("emb", [7, 4],
                                  initializer=tf.random_normal_initializer(seed=3))
            w = tf.get_variable("w", [4, 1], initializer=tf.glorot_uniform_initializer(seed=4))
        vecs = tf.ragged.map_flat_values(tf.nn.embedding_lookup, emb, ids)
        assert str(vecs.shape) == "(?, ?, 4)"
        mean = tf.reduce_mean(vecs, axis=1)
        sm = tf.reduce_sum(vecs, axis=1)
        mx = tf.reduce_max(ids, axis=1)
        assert (mean.name, str(mean.shape)) == ("RaggedReduceMean/truediv:0", "(?, 4)")
        assert (sm.name, mx.name, str(mx.shape)) == (
            "RaggedReduceSum/UnsortedSegmentSum:0", "RaggedReduceMax/UnsortedSegmentMax:0",
            "(?,)")
        logits = tf.squeeze(tf.matmul(mean, w), 1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                      logits=logits))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        feed = {sents: ["the cat sat", "the dog", "on the mat mat"], labels: [1, 0, 1]}
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            assert sess.run(ids, feed).to_list() == [[0, 1, 2], [0, 5], [3, 0, 4, 4]]
            losses = [sess.run([loss, train], feed)[0] for _ in range(3)]
            np.testing.assert_allclose(losses, [0.71754, 0.63123, 0.56197], atol=1e-5)
            np.testing.assert_allclose(sess.run(mean, feed), [
                [0.65192, -0.98425, 0.2118, 0.17508], [0.54593, -0.58542, -0.02088, -1.10281],
                [-0.82946, -0.19956, 0.28549, -0.09531]], atol=2e-5)
            np.testing.assert_allclose(sess.run(sm, feed)[2],
                                       [-3.31786, -0.79824, 1.14198, -0.38123], atol=2e-5)
            assert sess.run(mx, feed).tolist() == [2, 5, 4]
            assert np.round(sess.run(tf.reduce_mean(tf.cast(ids, tf.float32), axis=0), feed),
                            4).tolist() == [1.0, 2.0, 3.0, 4.0]
            assert sess.run(tf.reduce_max(ids, axis=0), feed).tolist() == [3, 5, 4, 4]


# -- focused: reductions and elementwise dispatch -----------------------------------------
def test_ragged_reductions_names_and_values():
    with _g():
        rt = tf.ragged.constant([[1., 2.], [], [3., 4., 5.]])
        ri = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
        outs = {"sum1": tf.reduce_sum(rt, axis=1), "sum0": tf.reduce_sum(rt, axis=0),
                "sumN": tf.reduce_sum(rt), "mean1": tf.reduce_mean(rt, axis=1),
                "mean0": tf.reduce_mean(rt, axis=0), "max1i": tf.reduce_max(ri, axis=1),
                "min1": tf.reduce_min(rt, axis=1), "prod1": tf.reduce_prod(rt, axis=1),
                "any1": tf.reduce_any(rt > 2., axis=1), "all1": tf.reduce_all(rt > 2., axis=1),
                "sumk": tf.reduce_sum(rt, axis=1, keepdims=True),
                "sumneg": tf.reduce_sum(rt, axis=-1),
                "named": tf.reduce_sum(rt, axis=1, name="rowsum")}
        assert {k: v.name for k, v in outs.items()} == {
            "sum1": "RaggedReduceSum/UnsortedSegmentSum:0",
            "sum0": "RaggedReduceSum_1/UnsortedSegmentSum:0", "sumN": "RaggedReduceSum_2:0",
            "mean1": "RaggedReduceMean/truediv:0", "mean0": "RaggedReduceMean_1/truediv:0",
            "max1i": "RaggedReduceMax/UnsortedSegmentMax:0",
            "min1": "RaggedReduceMin/UnsortedSegmentMin:0",
            "prod1": "RaggedReduceProd/UnsortedSegmentProd:0",
            "any1": "RaggedReduceAny/Cast_1:0", "all1": "RaggedReduceAll/Cast_1:0",
            "sumk": "RaggedReduceSum_3/ExpandDims:0",
            "sumneg": "RaggedReduceSum_4/UnsortedSegmentSum:0",
            "named": "rowsum/UnsortedSegmentSum:0"}
        assert str(outs["sum1"].shape) == "(3,)" and str(outs["sumk"].shape) == "(3, 1)"
        nested = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6], [], [7]]])
        r2 = tf.reduce_sum(nested, axis=2)
        assert (type(r2).__name__, str(r2.shape)) == ("RaggedTensor", "(3, ?)")
        with tf.Session() as sess:
            got = sess.run(outs)
            assert got["sum1"].tolist() == [3.0, 0.0, 12.0]
            assert got["sum0"].tolist() == [4.0, 6.0, 5.0] and float(got["sumN"]) == 15.0
            assert np.isnan(got["mean1"][1]) and got["mean1"][[0, 2]].tolist() == [1.5, 4.0]
            assert got["mean0"].tolist() == [2.0, 3.0, 5.0]
            assert got["max1i"].tolist() == [2, -2147483648, 5]
            assert got["min1"].tolist()[::2] == [1.0, 3.0] and got["min1"][1] > 3e38
            assert got["prod1"].tolist() == [2.0, 1.0, 60.0]
            assert got["any1"].tolist() == [False, False, True]
            assert got["all1"].tolist() == [False, True, True]
            assert got["sumk"].tolist() == [[3.0], [0.0], [12.0]]
            assert sess.run(r2).to_list() == [[3, 3], [], [15, 0, 7]]
            assert sess.run(tf.reduce_sum(nested)) == 28
            m = sess.run(tf.reduce_mean(nested, axis=2)).to_list()
            assert m[0] == [1.5, 3.0] and m[2][0] == 5.0 and np.isnan(m[2][1])


def test_ragged_elementwise_ops_and_operators():
    with _g():
        rt = tf.ragged.constant([[1., 2.], [], [3., 4., 5.]])
        ri = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
        outs = {"add1": rt + 1., "radd": 2. * rt, "addrr": rt + rt, "tfadd": tf.add(rt, rt),
                "log": tf.math.log(rt + 1.), "neg": -rt, "cast": tf.cast(ri, tf.float32),
                "eq": tf.equal(ri, 2), "gt": rt > 2., "max": tf.maximum(rt, 2.),
                "sq": tf.square(rt), "mul_dense": rt * tf.constant([[1.], [2.], [3.]]),
                "div": rt / 2.}
        names = {k: v.flat_values.name for k, v in outs.items()}
        assert {k: names[k] for k in ("add1", "radd", "addrr", "tfadd", "neg", "eq", "max",
                                      "sq")} == {
            "add1": "Add:0", "radd": "Mul:0", "addrr": "Add_1:0", "tfadd": "Add_2:0",
            "neg": "Neg:0", "eq": "Equal:0", "max": "Maximum:0", "sq": "Square:0"}
        assert names["log"] == "Log:0"
        assert outs["add1"].row_splits is rt.row_splits
        assert outs["eq"].dtype == tf.bool and outs["cast"].dtype == tf.float32
        assert all(str(v.shape) == "(3, ?)" for v in outs.values())
        with tf.Session() as sess:
            got = {k: v.to_list() for k, v in sess.run(outs).items()}
        assert got["add1"] == [[2.0, 3.0], [], [4.0, 5.0, 6.0]]
        assert got["radd"] == got["addrr"] == got["tfadd"] == [[2.0, 4.0], [], [6.0, 8.0, 10.0]]
        assert got["neg"] == [[-1.0, -2.0], [], [-3.0, -4.0, -5.0]]
        assert got["eq"] == [[False, True], [], [False, False, False]]
        assert got["gt"] == [[False, False], [], [True, True, True]]
        assert got["max"] == [[2.0, 2.0], [], [3.0, 4.0, 5.0]]
        assert got["mul_dense"] == [[1.0, 2.0], [], [9.0, 12.0, 15.0]]
        assert got["div"] == [[0.5, 1.0], [], [1.5, 2.0, 2.5]]
        assert np.allclose(got["log"][2], np.log([4.0, 5.0, 6.0]))


def test_ragged_operands_with_different_partitions_fail_when_run():
    with _g():
        ids = tf.ragged.placeholder(tf.int64, ragged_rank=1, value_shape=[])
        other = tf.ragged.constant([[1], [2, 3], [4], [5]], dtype=tf.int64)
        total = ids + other
        with tf.Session() as sess:
            feed = {ids: tf.ragged.constant_value([[1, 2], [3], [4], [5]], dtype=np.int64)}
            assert sess.run(total, {ids: tf.ragged.constant_value(
                [[1], [2, 3], [4], [5]], dtype=np.int64)}).to_list() == [[2], [4, 6], [8], [10]]
            with pytest.raises(errors.InvalidArgumentError,
                               match="Inputs must have identical ragged splits"):
                sess.run(total, feed)


# -- program 4: tf.sets --------------------------------------------------------------------
def test_sets_on_dense_sparse_and_string_inputs():
    with _g():
        a = tf.constant([[1, 2, 3, 0], [4, 5, 0, 0], [7, 8, 9, 9]], tf.int64)
        b = tf.constant([[2, 3, 4], [5, 6, 7], [1, 1, 1]], tf.int64)
        inter = tf.sets.intersection(a, b)
        uni = tf.sets.union(a, b)
        diff = tf.sets.difference(a, b)
        diff2 = tf.sets.difference(a, b, aminusb=False)
        size = tf.sets.size(inter)
        assert (inter.indices.name, inter.values.name, inter.dense_shape.name) == (
            "DenseToDenseSetOperation:0", "DenseToDenseSetOperation:1",
            "DenseToDenseSetOperation:2")
        assert (str(inter.indices.shape), str(inter.values.shape),
                str(inter.dense_shape.shape)) == ("(?, 2)", "(?,)", "(2,)")
        assert (size.name, size.dtype) == ("SetSize:0", tf.int32)
        assert tf.sets.set_intersection(a, b).values.name == "DenseToDenseSetOperation_4:1"
        assert tf.sets.set_union is tf.sets.union
        sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 2]],
                             tf.constant([3, 9, 5, 8], tf.int64), [3, 3])
        si = tf.sets.intersection(a, sp)
        assert (si.values.name, str(si.dense_shape.shape)) == ("DenseToSparseSetOperation:1",
                                                               "(2,)")
        assert tf.sets.union(sp, sp).values.name == "SparseToSparseSetOperation:1"
        flipped = tf.sets.intersection(sp, a)
        assert flipped.values.name == "DenseToSparseSetOperation_1:1"
        sd = tf.sets.difference(sp, a)
        sstr = tf.sets.intersection(tf.constant([["a", "b"], ["c", "a"]]),
                                    tf.constant([["b", "c"], ["a", "a"]]))
        x = tf.placeholder(tf.int32, [None, 3])
        y = tf.placeholder(tf.int32, [None, 2])
        px = tf.sets.intersection(x, y)
        assert (str(px.dense_shape.shape), str(px.indices.shape)) == ("(2,)", "(?, 2)")
        with tf.Session() as sess:
            def trip(t, feed=None):
                r = sess.run(t, feed)
                return r.indices.tolist(), r.values.tolist(), r.dense_shape.tolist()

            assert trip(inter) == ([[0, 0], [0, 1], [1, 0]], [2, 3, 5], [3, 2])
            assert trip(uni)[1:] == ([0, 1, 2, 3, 4, 0, 4, 5, 6, 7, 1, 7, 8, 9], [3, 5])
            assert trip(diff) == ([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]],
                                  [0, 1, 0, 4, 7, 8, 9], [3, 3])
            assert trip(diff2) == ([[0, 0], [1, 0], [1, 1], [2, 0]], [4, 6, 7, 1], [3, 2])
            assert sess.run(size).tolist() == [2, 1, 0]
            assert sess.run(tf.sets.size(uni)).tolist() == [5, 5, 4]
            assert trip(si) == ([[0, 0], [1, 0], [2, 0]], [3, 5, 8], [3, 1])
            assert trip(flipped) == trip(si)
            assert trip(sd)[:2] == ([[0, 0]], [9])  # sp - a: the flipped b - a
            assert trip(sstr) == ([[0, 0], [1, 0]], [b"b", b"a"], [2, 1])
            assert trip(px, {x: [[1, 2, 3], [4, 4, 5]], y: [[3, 1], [5, 6]]}) == (
                [[0, 0], [0, 1], [1, 0]], [1, 3, 5], [2, 2])
            jac = tf.cast(tf.sets.size(inter), tf.float32) / tf.cast(tf.sets.size(uni),
                                                                      tf.float32)
            np.testing.assert_allclose(sess.run(jac), [0.4, 0.2, 0.0])
            assert sess.run(tf.sparse.to_dense(inter, default_value=-1)).tolist() == [
                [2, 3], [5, -1], [-1, -1]]


def test_sets_argument_errors():
    with _g():
        a = tf.constant([[1, 2, 3]], tf.int64)
        with pytest.raises(TypeError, match="Types don't match, <dtype: 'int64'> vs "
                                            "<dtype: 'float32'>"):
            tf.sets.intersection(a, tf.constant([[1.0]]))
        with pytest.raises(TypeError, match="'a' has invalid dtype"):
            tf.sets.intersection(tf.constant([[1.5]]), tf.constant([[1.5]]))
        with pytest.raises(ValueError, match="at least rank 2 but is rank 1"):
            tf.sets.intersection(tf.constant([1, 2]), tf.constant([1]))
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
            tf.sets.intersection(tf.constant([[1], [2], [3]]), tf.constant([[1, 2]]))


# -- program 5: ragged placeholder, pooled embeddings, structure ops ----------------------
def test_ragged_placeholder_pooled_embeddings_and_structure_ops():
    with _g():
        tf.set_random_seed(42)
        ids = tf.ragged.placeholder(tf.int64, ragged_rank=1, value_shape=[], name="ids")
        assert (str(ids.shape), ids.values.name, ids.row_splits.name) == (
            "(?, ?)", "ids/flat_values:0", "ids/row_splits_0:0")
        y = tf.placeholder(tf.float32, [None], name="y")
        with tf.variable_scope("model"):
            emb = tf.get_variable("emb", [10, 3],
                                  initializer=tf.truncated_normal_initializer(seed=1))
            w = tf.get_variable("w", [3], initializer=tf.ones_initializer())
            b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        vec = tf.ragged.map_flat_values(tf.nn.embedding_lookup, emb, ids)
        pooled = tf.reduce_mean(vec, axis=1)
        lens = tf.cast(ids.row_lengths(), tf.float32)
        logits = tf.reduce_sum(pooled * w, axis=1) + b + 0.1 * lens
        loss = tf.losses.mean_squared_error(y, logits)
        train = tf.train.AdamOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
        scaled = ids * 2 + 1
        masked = tf.ragged.boolean_mask(ids, ids > 3)
        g = tf.gather(ids, [2, 0])
        rng = tf.ragged.range(ids.row_lengths())
        cat0 = tf.concat([ids, g], axis=0)
        cat1 = tf.concat([ids, ids], axis=1)
        stk = tf.stack([ids, ids], axis=0)
        assert [str(t.shape) for t in (masked, g, rng, cat0, cat1, stk)] == [
            "(?, ?)"] * 5 + ["(2, ?, ?)"]
        dense = ids.to_tensor(default_value=-1)
        assert dense.name == "RaggedToTensor/RaggedTensorToTensor:0"
        feed_val = tf.ragged.constant_value([[1, 2, 3], [4], [5, 6], [7]], dtype=np.int64)
        assert repr(feed_val) == ("tf.RaggedTensorValue(values=array([1, 2, 3, 4, 5, 6, 7]), "
                                  "row_splits=array([0, 3, 4, 6, 7]))")
        feed = {ids: feed_val, y: [1.0, 2.0, 0.5, 0.0]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(pooled, feed), [
                [0.14, 0.56318, -0.93564], [1.15317, 0.35523, -1.15831],
                [0.87347, 0.43744, -0.12025], [0.68459, -0.37467, -0.91633]], atol=1e-5)
            losses = [sess.run([loss, train], feed)[0] for _ in range(4)]
            np.testing.assert_allclose(losses, [1.08037, 0.39261, 0.18959, 0.18564],
                                       atol=1e-5)
            np.testing.assert_allclose(sess.run(w), [1.226, 1.27432, 0.7277], atol=1e-5)
            np.testing.assert_allclose(sess.run(emb)[1], [-0.10089, 1.21915, -1.59204],
                                       atol=1e-5)
            got = [sess.run(t, feed).to_list() for t in (scaled, masked, g, rng, cat0, cat1,
                                                          stk)]
            assert got == [
                [[3, 5, 7], [9], [11, 13], [15]], [[], [4], [5, 6], [7]],
                [[5, 6], [1, 2, 3]], [[0, 1, 2], [0], [0, 1], [0]],
                [[1, 2, 3], [4], [5, 6], [7], [5, 6], [1, 2, 3]],
                [[1, 2, 3, 1, 2, 3], [4, 4], [5, 6, 5, 6], [7, 7]],
                [[[1, 2, 3], [4], [5, 6], [7]], [[1, 2, 3], [4], [5, 6], [7]]]]
            assert sess.run(ids[:, :2], feed).to_list() == [[1, 2], [4], [5, 6], [7]]
            assert sess.run(ids[1:3], feed).to_list() == [[4], [5, 6]]
            assert sess.run(ids[1], feed).tolist() == [4]
            assert sess.run(ids[0, 1], feed) == 2
            assert sess.run(ids[:, -1:], feed).to_list() == [[3], [4], [6], [7]]
            with pytest.raises(ValueError, match="Cannot index into an inner ragged dim"):
                ids[:, 0]
            assert sess.run(dense, feed).tolist() == [[1, 2, 3], [4, -1, -1], [5, 6, -1],
                                                      [7, -1, -1]]


# -- program 6: sparse <-> ragged <-> dense -------------------------------------------------
def test_sparse_ragged_dense_round_trips_with_segments_and_saver(tmp_path):
    with _g():
        tf.set_random_seed(7)
        sp = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]],
                             values=[10, 11, 20, 40, 41, 42], dense_shape=[4, 3])
        rt = tf.RaggedTensor.from_sparse(sp)
        back = rt.to_sparse()
        assert (back.indices.name, back.dense_shape.name) == (
            "RaggedToSparse/RaggedTensorToSparse:0", "RaggedToSparse/RaggedTensorToSparse:2")
        dense = tf.sparse.to_dense(sp)
        fd = tf.sparse.from_dense(dense)
        assert (fd.indices.name, fd.values.name, fd.dense_shape.name) == (
            "dense_to_sparse/Where:0", "dense_to_sparse/GatherNd:0", "dense_to_sparse/Shape:0")
        rt2 = tf.RaggedTensor.from_tensor(dense, padding=0)
        seg = tf.math.segment_sum(rt.values, rt.value_rowids())
        useg = tf.math.unsorted_segment_max(rt.values, rt.value_rowids(), rt.nrows())
        assert (seg.name, useg.name) == ("SegmentSum:0", "UnsortedSegmentMax:0")
        with tf.variable_scope("feat"):
            table = tf.get_variable("table", [50, 2],
                                    initializer=tf.random_uniform_initializer(-1, 1, seed=3))
        bag = tf.RaggedTensor.from_row_splits(tf.nn.embedding_lookup(table, rt.values),
                                              rt.row_splits)
        pool = tf.reduce_sum(bag, axis=1)
        sp_pool = tf.nn.embedding_lookup_sparse(table, sp, None, combiner="sum")
        assert (str(pool.shape), str(sp_pool.shape)) == ("(4, 2)", "(?, 2)")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(rt).to_list() == [[10, 11], [20], [], [40, 41, 42]]
            r = sess.run(back)
            assert r.indices.tolist() == [[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]]
            assert r.dense_shape.tolist() == [4, 3]
            assert sess.run(rt2).to_list() == [[10, 11], [20], [], [40, 41, 42]]
            assert sess.run(seg).tolist() == [21, 20, 0, 123]
            assert sess.run(useg).tolist() == [11, 20, -2147483648, 42]
            want = [[-0.01844, 0.15315], [-0.08918, 0.73386], [0.0, 0.0], [0.20233, -1.06164]]
            np.testing.assert_allclose(sess.run(pool), want, atol=1e-5)
            np.testing.assert_allclose(sess.run(sp_pool), want, atol=1e-5)
            path = saver.save(sess, str(tmp_path / "m.ckpt"))
            assert os.path.basename(path) == "m.ckpt"
            assert sorted(os.listdir(tmp_path)) == [
                "checkpoint", "m.ckpt.data-00000-of-00001", "m.ckpt.index", "m.ckpt.meta"]
            assert sess.run(rt.to_tensor(shape=[3, 2])).tolist() == [[10, 11], [20, 0], [0, 0]]
            assert sess.run(rt.bounding_shape()).tolist() == [4, 3]


# -- program 7: text to ragged numbers, ragged string/nn dispatch ---------------------------
def test_text_fields_to_ragged_numbers_with_dispatched_ops():
    with _g():
        lines = tf.placeholder(tf.string, [None], name="lines")
        fields = tf.strings.split(lines, sep=",", result_type="RaggedTensor")
        with pytest.raises(TypeError):
            tf.strings.to_number(fields, out_type=tf.float32)  # TF1's is not dispatched
        nums = tf.ragged.map_flat_values(tf.strings.to_number, fields, out_type=tf.float32)
        lens = tf.strings.length(fields)
        assert (type(lens).__name__, lens.flat_values.name) == ("RaggedTensor",
                                                                 "StringLength:0")
        el = tf.nn.embedding_lookup(tf.constant([[1., 0.], [0., 1.], [2., 2.]]),
                                    tf.ragged.constant([[0, 2], [1], []], dtype=tf.int64))
        assert (str(el.shape), el.flat_values.name) == (
            "(3, ?, 2)", "embedding_lookup_ragged/embedding_lookup/Identity:0")
        soft = tf.nn.relu(nums - 2.)
        assert soft.flat_values.name == "Relu:0"
        mx = tf.reduce_max(nums, axis=1)
        norm = nums / tf.expand_dims(mx, 1)
        sz = tf.size(nums)
        where = tf.where(tf.ragged.constant([[True, False], [], [False, True, True]]))
        assert (where.name, str(where.shape)) == ("RaggedWhere/concat:0", "(?, 2)")
        w3 = tf.where(tf.ragged.constant([[[True, False]], [[False], [True, True]]]))
        sel = tf.where(tf.ragged.constant([[True, False], [], [False, True, True]]),
                       tf.ragged.constant([[1., 2.], [], [3., 4., 5.]]),
                       tf.ragged.constant([[10., 20.], [], [30., 40., 50.]]))
        assert sel.flat_values.name == "RaggedWhere_2/Select:0"
        feed = {lines: ["1.5,2,3", "4", "5", "7,8"]}
        with tf.Session() as sess:
            assert sess.run(nums, feed).to_list() == [[1.5, 2.0, 3.0], [4.0], [5.0],
                                                      [7.0, 8.0]]
            assert sess.run(lens, feed).to_list() == [[3, 1, 1], [1], [1], [1, 1]]
            assert sess.run(el).to_list() == [[[1.0, 0.0], [2.0, 2.0]], [[0.0, 1.0]], []]
            assert sess.run(soft, feed).to_list() == [[0.0, 0.0, 1.0], [2.0], [3.0],
                                                      [5.0, 6.0]]
            assert sess.run(mx, feed).tolist() == [3.0, 4.0, 5.0, 8.0]
            np.testing.assert_allclose(sess.run(norm, feed).flat_values,
                                       [0.5, 0.6667, 1.0, 1.0, 1.0, 0.875, 1.0], atol=1e-4)
            assert sess.run(sz, feed) == 7
            assert sess.run(where).tolist() == [[0, 0], [2, 1], [2, 2]]
            assert sess.run(w3).tolist() == [[0, 0, 0], [1, 1, 0], [1, 1, 1]]
            assert sess.run(sel).to_list() == [[1.0, 20.0], [], [30.0, 4.0, 5.0]]


def test_ragged_concat_and_stack_focused():
    with _g():
        a = tf.ragged.constant([[1, 2], [3]])
        b = tf.ragged.constant([[4], [], [5, 6]])
        c = tf.ragged.constant([[7], [8, 9]])
        dense = tf.constant([[0, 0], [1, 1]])
        with tf.Session() as sess:
            assert sess.run(tf.concat([a, b], 0)).to_list() == [[1, 2], [3], [4], [], [5, 6]]
            assert sess.run(tf.concat([a, c], 1)).to_list() == [[1, 2, 7], [3, 8, 9]]
            assert sess.run(tf.concat([a, dense], 1)).to_list() == [[1, 2, 0, 0], [3, 1, 1]]
            assert sess.run(tf.stack([a, c], 1)).to_list() == [[[1, 2], [7]], [[3], [8, 9]]]
        with pytest.raises(ValueError, match="rank"):
            tf.concat([a, tf.ragged.constant([[[1]]])], 0)


# -- program 8: ragged utilities -----------------------------------------------------------
def test_ragged_like_clip_add_n_and_round():
    with _g():
        rt = tf.ragged.constant([[1., -2., 3.], [], [4., 5.]])
        outs = [tf.ones_like(rt), tf.zeros_like(rt), tf.clip_by_value(rt, 0., 4.),
                tf.add_n([rt, rt]), tf.round(rt), tf.nn.softplus(rt)]
        assert [o.flat_values.name for o in outs] == [
            "ones_like:0", "zeros_like:0", "clip_by_value:0", "RaggedAddN/AddN:0", "Round:0",
            "Softplus:0"]
        with tf.Session() as sess:
            got = [v.to_list() for v in sess.run(outs)]
        assert got[:5] == [[[1.0, 1.0, 1.0], [], [1.0, 1.0]], [[0.0, 0.0, 0.0], [], [0.0, 0.0]],
                           [[1.0, 0.0, 3.0], [], [4.0, 4.0]], [[2.0, -4.0, 6.0], [], [8.0, 10.0]],
                           [[1.0, -2.0, 3.0], [], [4.0, 5.0]]]
        np.testing.assert_allclose(got[5][0], [1.31326, 0.12693, 3.04859], atol=1e-5)
