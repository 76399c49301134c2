"""Fetching an `IndexedSlices` (an embedding's gradient) gives an `IndexedSlicesValue`
of NumPy arrays, as TensorFlow does; the values below are what TF 2.15 printed for the
same program."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.framework.indexed_slices import IndexedSlices, IndexedSlicesValue


def test_an_embedding_gradient_fetches_as_indexed_slices_value():
    with tf.Graph().as_default():
        emb = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
        ids = tf.constant([2, 0, 2])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids) * 2.0)
        (grad,) = tf.gradients(loss, [emb])
        assert isinstance(grad, IndexedSlices)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(grad)
            (in_list,) = sess.run([grad])
    assert type(value) is IndexedSlicesValue and type(in_list) is IndexedSlicesValue
    assert value._fields == ("values", "indices", "dense_shape")
    np.testing.assert_array_equal(value.values, np.full((3, 3), 2.0, np.float32))
    np.testing.assert_array_equal(value.indices, [2, 0, 2])
    np.testing.assert_array_equal(value.dense_shape, [4, 3])


def test_slices_without_a_dense_shape_fetch_none_for_it():
    with tf.Graph().as_default():
        slices = IndexedSlices(tf.ones([2, 3]), tf.constant([0, 4]))
        with tf.Session() as sess:
            value = sess.run(slices)
    assert value.dense_shape is None and value.indices.tolist() == [0, 4]
    assert value.values.shape == (2, 3)
