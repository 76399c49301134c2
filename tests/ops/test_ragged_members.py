"""tf.RaggedTensor members TF1 graph programs use: the other factories, uniform row
lengths, bounding_shape, merge_dims, nested partitions, with_row_splits_dtype, and the
eager-only members' errors (expected values printed by TF 2.15's compat.v1)."""

import numpy as np
import pytest

import flowgraph as tf

R = tf.RaggedTensor


def _run(*fetches):
    with tf.Session() as sess:
        out = sess.run(list(fetches))
    return [v.to_list() if hasattr(v, "to_list") else v.tolist() for v in out]


def _nested():
    """[[[[0, 1]], [[2, 3], [4, 5]]], [], [[[6, 7], [8, 9], [10, 11]]]], shape (3, ?, ?, 2)."""
    return R.from_nested_row_lengths(tf.reshape(tf.range(12.0), [6, 2]),
                                     [[2, 0, 1], [1, 2, 3]])


def test_row_starts_limits_and_nested_factories():
    with tf.Graph().as_default():
        starts = R.from_row_starts([1, 2, 3, 4, 5], [0, 2, 2, 4])
        starts32 = R.from_row_starts([1, 2, 3, 4, 5], tf.constant([0, 2, 2, 4], tf.int32))
        limits = R.from_row_limits([1, 2, 3, 4, 5], [2, 2, 4, 5])
        lengths = R.from_nested_row_lengths([1, 2, 3, 4, 5, 6], [[2, 0, 1], [1, 2, 3]])
        rowids = R.from_nested_value_rowids([1, 2, 3, 4, 5, 6],
                                            [[0, 0, 2], [0, 1, 1, 2, 2, 2]])
        rowids4 = R.from_nested_value_rowids([1, 2, 3, 4, 5, 6],
                                             [[0, 0, 2], [0, 1, 1, 2, 2, 2]],
                                             nested_nrows=[4, 3])
        assert starts.shape.as_list() == [4, None] and starts.row_splits.dtype == tf.int64
        assert starts32.row_splits.dtype == tf.int32
        assert lengths.shape.as_list() == [3, None, None]
        assert rowids4.shape.as_list() == [4, None, None]
        assert _run(starts, starts32, limits) == [[[1, 2], [], [3, 4], [5]]] * 3
        assert _run(lengths, rowids, rowids4) == [
            [[[1], [2, 3]], [], [[4, 5, 6]]], [[[1], [2, 3]], [], [[4, 5, 6]]],
            [[[1], [2, 3]], [], [[4, 5, 6]], []]]
        with pytest.raises(ValueError, match="must have the same length as argument "
                                             "`nested_value_rowids`"):
            R.from_nested_value_rowids([1, 2], [[0], [0, 0]], nested_nrows=[1])
        with pytest.raises(ValueError, match="row_starts must have dtype int32 or int64"):
            R.from_row_starts([1, 2], [0.0])
        with pytest.raises(ValueError, match=r"Shape \(1, 1\) must have rank 1"):
            R.from_row_starts([1, 2], [[0]])
        with pytest.raises(ValueError, match="row_splits must have dtype int32 or int64"):
            R.from_row_splits([1, 2], [0.0, 2.0])


def test_uniform_row_length():
    with tf.Graph().as_default():
        u = R.from_uniform_row_length([1, 2, 3, 4, 5, 6], 3)
        assert u.shape.as_list() == [2, 3]
        assert u.uniform_row_length.dtype == tf.int64 and u.uniform_row_length.shape == []
        assert R.from_row_splits([1, 2], [0, 1, 2]).uniform_row_length is None
        empty = R.from_uniform_row_length(tf.zeros([0]), 0, nrows=3)
        assert empty.shape.as_list() == [3, 0]
        inner = R.from_uniform_row_length(R.from_row_splits([1, 2, 3, 4, 5, 6],
                                                            [0, 1, 3, 6, 6]), 2)
        assert inner.shape.as_list() == [2, 2, None]
        dense = R.from_uniform_row_length(tf.reshape(tf.range(12), [6, 2]), 3)
        assert dense.shape.as_list() == [2, 3, 2]
        assert dense.with_values(tf.zeros([6, 2])).shape.as_list() == [2, 3, 2]
        assert dense.with_row_splits_dtype(tf.int32).uniform_row_length.dtype == tf.int32
        assert R.from_uniform_row_length(
            tf.placeholder(tf.int32, [None]), 2).shape.as_list() == [None, 2]
        assert _run(u, u.uniform_row_length, u.row_splits, empty, inner,
                    inner.bounding_shape(), dense.bounding_shape(), dense.row_lengths()) == [
            [[1, 2, 3], [4, 5, 6]], 3, [0, 3, 6], [[], [], []],
            [[[1], [2, 3]], [[4, 5, 6], []]], [2, 2, 3], [2, 3, 2], [3, 3]]
        with pytest.raises(ValueError, match="uniform_row_length=2 times nrows=3 must "
                                             "equal nvals=4"):
            R.from_uniform_row_length([1, 2, 3, 4], 2, nrows=3)
        with pytest.raises(ValueError, match="uniform_row_length=0 times nrows=0"):
            R.from_uniform_row_length([1, 2, 3, 4], 0)
        with pytest.raises(ValueError, match=r"Shape \(1,\) must have rank 0"):
            R.from_uniform_row_length([1, 2], [2])
        bad = R.from_uniform_row_length([1, 2, 3, 4, 5], 2)  # checked when run, as TF
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"\[uniform_row_length\] \[2\] \[times nrows\] \[2\] "
                                 r"\[must equal nvals\] \[5\]"):
            _run(bad)


def test_from_sparse():
    with tf.Graph().as_default():
        st = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 2.0, 3.0], [4, 5])
        rt, rt32 = R.from_sparse(st), R.from_sparse(st, row_splits_dtype=tf.int32)
        assert rt.shape.as_list() == [4, None] and rt32.row_splits.dtype == tf.int32
        assert _run(rt, rt32) == [[[1.0, 2.0], [], [3.0], []]] * 2
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="SparseTensor is not right-ragged"):
            _run(R.from_sparse(tf.SparseTensor([[0, 0], [0, 2], [2, 1]], [1.0, 2.0, 3.0],
                                               [4, 5])))
        with pytest.raises(ValueError, match=r"rank\(st_input\) must be 2"):
            R.from_sparse(tf.SparseTensor([[0, 0, 0]], [1.0], [2, 2, 2]))
        with pytest.raises(TypeError, match="`st_input` must be of type SparseTensor"):
            R.from_sparse(tf.constant([1]))


def test_bounding_shape_and_nested_partitions():
    with tf.Graph().as_default():
        rt = _nested()
        assert rt.shape.as_list() == [3, None, None, 2]
        assert rt.bounding_shape().dtype == tf.int64
        assert rt.bounding_shape(axis=1).shape == []
        lengths, rowids = rt.nested_row_lengths(), rt.nested_value_rowids()
        assert type(lengths) is tuple and len(rowids) == 2
        empty = R.from_row_splits(tf.zeros([0]), [0])
        assert _run(rt.bounding_shape(), rt.bounding_shape(axis=1),
                    rt.bounding_shape(axis=[0, 2]), rt.bounding_shape(out_type=tf.int32),
                    empty.bounding_shape(), *lengths, *rowids) == [
            [3, 2, 3, 2], 2, [3, 3], [3, 2, 3, 2], [0, 0], [2, 0, 1], [1, 2, 3],
            [0, 0, 2], [0, 1, 1, 2, 2, 2]]
        assert rt.bounding_shape(out_type=tf.int32).dtype == tf.int32


def test_merge_dims():
    with tf.Graph().as_default():
        rt = _nested()
        cases = {(0, 1): [[[0.0, 1.0]], [[2.0, 3.0], [4.0, 5.0]],
                          [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]],
                 (1, 2): [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [],
                          [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]],
                 (-3, -2): [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [],
                            [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]],
                 (0, 2): np.arange(12.0).reshape(6, 2).tolist(),
                 (0, 3): np.arange(12.0).tolist(),
                 (2, 3): [[[0.0, 1.0], [2.0, 3.0, 4.0, 5.0]], [],
                          [[6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]]}
        shapes = {(0, 1): [3, None, 2], (1, 2): [3, None, 2], (-3, -2): [3, None, 2],
                  (0, 2): [6, 2], (0, 3): [12], (2, 3): [3, None, None]}
        merged = {axes: rt.merge_dims(*axes) for axes in cases}
        for axes, m in merged.items():
            assert m.shape.as_list() == shapes[axes], axes
        assert dict(zip(cases, _run(*merged.values()), strict=True)) == cases
        assert rt.merge_dims(1, 1) is rt
        flat = tf.constant(np.arange(12.0).reshape(6, 2))
        weights = tf.constant(np.arange(12.0) + 1)
        grad = tf.gradients(tf.reduce_sum(rt.with_flat_values(flat).merge_dims(0, 3) * weights),
                            [flat])[0]
        assert _run(grad) == [np.arange(1.0, 13.0).reshape(6, 2).tolist()]
        assert isinstance(rt.merge_dims(0, 2), tf.Tensor)
        uniform = R.from_uniform_row_length(tf.reshape(tf.range(12), [6, 2]), 3)
        assert uniform.merge_dims(1, 2).uniform_row_length is None
        assert uniform.merge_dims(0, 1).shape.as_list() == [6, 2]
        with pytest.raises(ValueError, match=r"Expected outer_axis \(2\) to be less than or "
                                             r"equal to inner_axis \(1\)"):
            rt.merge_dims(2, 1)
        with pytest.raises(ValueError, match="inner_axis=4 out of bounds: expected "
                                             "-4<=inner_axis<4"):
            rt.merge_dims(0, 4)


def test_with_row_splits_dtype_consumers_and_eager_only_members():
    with tf.Graph().as_default():
        rt = _nested()
        r32 = rt.with_row_splits_dtype(tf.int32)
        assert [s.dtype for s in r32.nested_row_splits] == [tf.int32, tf.int32]
        assert r32.shape.as_list() == [3, None, None, 2]
        assert rt.with_row_splits_dtype(tf.int64) is rt
        assert _run(r32) == _run(rt)
        with pytest.raises(ValueError, match=r"Argument `row_splits` dtype must be int32 or "
                                             r"int64\. Received <dtype: 'float32'>"):
            rt.with_row_splits_dtype(tf.float32)
        box = rt.bounding_shape()
        assert box.op.inputs and any(op.name.startswith("RaggedBoundingBox")
                                     for op in rt.consumers())
        with pytest.raises(ValueError, match="to_list can only be used in eager mode"):
            rt.to_list()
        with pytest.raises(ValueError, match=r"RaggedTensor.numpy\(\) is only supported in "
                                             "eager mode"):
            rt.numpy()
