"""``tf.RaggedTensor`` and ``tf.ragged`` (`flowgraph.ops.ragged_tensor`).

Every expected value below is what TensorFlow 2.15 (tf.compat.v1, a graph) printed for
the same calls with the tf-oracle.
"""

import numpy as np
import pytest

import flowgraph as tf


def _run(*fetches):
    with tf.Session() as sess:
        return sess.run(list(fetches))


def test_constant_shapes_and_fetched_values():
    with tf.Graph().as_default():
        rt = tf.ragged.constant([[1, 2], [3], []])
        nested = tf.ragged.constant([[[1.0], [2.0, 3.0]], [[4.0]]])
        inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
        assert (rt.dtype, rt.shape.as_list(), rt.ragged_rank) == (tf.int32, [3, None], 1)
        assert rt.row_splits.dtype == tf.int64
        assert (nested.shape.as_list(), nested.ragged_rank) == ([2, None, None], 2)
        assert nested.values.shape.as_list() == [3, None]
        assert (inner.shape.as_list(), inner.values.shape.as_list()) == ([2, None, 2], [3, 2])
        v, n = _run(rt, nested)
    assert isinstance(v, tf.ragged.RaggedTensorValue)
    assert v.to_list() == [[1, 2], [3], []]
    assert v.values.tolist() == [1, 2, 3] and v.row_splits.tolist() == [0, 2, 3, 3]
    assert n.to_list() == [[[1.0], [2.0, 3.0]], [[4.0]]]


def test_to_tensor_and_to_sparse():
    with tf.Graph().as_default():
        rt = tf.ragged.constant([[1, 2], [3], []])
        nested = tf.ragged.constant([[[1.0], [2.0, 3.0]], [[4.0]]])
        inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
        a, b, c, d, sp = _run(rt.to_tensor(), rt.to_tensor(default_value=-1),
                              nested.to_tensor(), inner.to_tensor(), rt.to_sparse())
    assert a.tolist() == [[1, 2], [3, 0], [0, 0]]
    assert b.tolist() == [[1, 2], [3, -1], [-1, -1]]
    assert c.tolist() == [[[1.0, 0.0], [2.0, 3.0]], [[4.0, 0.0], [0.0, 0.0]]]
    assert d.tolist() == [[[1, 2], [3, 4]], [[5, 6], [0, 0]]]
    assert sp.indices.tolist() == [[0, 0], [0, 1], [1, 0]]
    assert sp.values.tolist() == [1, 2, 3] and sp.dense_shape.tolist() == [3, 2]


def test_factories_and_row_partition_helpers():
    with tf.Graph().as_default():
        rt = tf.ragged.constant([[1, 2], [3], []])
        rl = tf.RaggedTensor.from_row_lengths([1.0, 2.0, 3.0], row_lengths=[2, 0, 1])
        vr = tf.RaggedTensor.from_value_rowids([1, 2, 3], value_rowids=[0, 0, 2], nrows=4)
        ft = tf.RaggedTensor.from_tensor([[1, 2, 0], [3, 0, 0]], padding=0)
        out = _run(rl, vr, rt.nrows(), rt.row_lengths(), rt.value_rowids(),
                   tf.ragged.map_flat_values(tf.multiply, rt, 10),
                   tf.ragged.row_splits_to_segment_ids([0, 2, 2, 5]),
                   tf.ragged.segment_ids_to_row_splits([0, 0, 2]), ft)
    assert out[0].to_list() == [[1.0, 2.0], [], [3.0]]
    assert out[1].to_list() == [[1, 2], [], [3], []]
    assert out[2] == 3 and out[3].tolist() == [2, 1, 0] and out[4].tolist() == [0, 0, 1]
    assert out[5].to_list() == [[10, 20], [30], []]
    assert out[6].tolist() == [0, 0, 2, 2, 2] and out[7].tolist() == [0, 2, 2, 3]
    assert out[8].to_list() == [[1, 2], [3]]
    with pytest.raises(ValueError, match="constructor is private"):
        tf.RaggedTensor(rt.values, rt.row_splits)


def test_gradient_flows_through_to_tensor_to_the_flat_values():
    rng = np.random.RandomState(0)
    w0 = rng.randn(3, 2)
    with tf.Graph().as_default():
        flat = tf.placeholder(tf.float64, [4])
        rt = tf.RaggedTensor.from_row_splits(flat, [0, 2, 3, 4])
        w = tf.constant(w0)
        y = tf.reduce_sum(tf.square(rt.to_tensor()) * w)
        (g,) = tf.gradients(y, flat)
        assert isinstance(g, tf.IndexedSlices)  # as TensorFlow's RaggedTensorToTensor grad
        x0 = np.array([1.0, -2.0, 0.5, 3.0])
        with tf.Session() as sess:
            grad = sess.run(tf.convert_to_tensor(g), {flat: x0})
    dense_w = np.array([w0[0, 0], w0[0, 1], w0[1, 0], w0[2, 0]])
    np.testing.assert_allclose(grad, 2 * x0 * dense_w, rtol=1e-12)
