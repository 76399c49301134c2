"""SparseTensor / SparseTensorValue / sparse_placeholder: construction, static shapes,
feeding a SparseTensorValue, fetching (via the `_fetch_components` protocol)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.runtime.fetch as fetch_module
from flowgraph.framework.sparse_tensor import (
    SparseTensor,
    SparseTensorValue,
    convert_to_sparse_tensor,
    is_sparse,
)
from flowgraph.ops.array_ops import sparse_placeholder

FETCH_SUPPORTED = "_fetch_components" in inspect.getsource(fetch_module)
needs_fetch = pytest.mark.skipif(
    not FETCH_SUPPORTED,
    reason="fetching a SparseTensor needs the _fetch_components hook in runtime/fetch.py")


def test_parts_dtypes_and_static_shape():
    sp = SparseTensor([[0, 1], [2, 3]], [1.5, 2.5], [3, 5])
    assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
    assert sp.dtype == tf.float32
    assert sp.shape.as_list() == [3, 5] and sp.get_shape().as_list() == [3, 5]
    assert sp.op is sp.values.op and sp.graph is tf.get_default_graph()
    assert "SparseTensor(" in repr(sp)
    strings = SparseTensor([[0]], ["a"], [4])
    assert strings.dtype == tf.string and strings.shape.as_list() == [4]


def test_shape_from_partially_known_dense_shape():
    n = tf.placeholder(tf.int64, [])
    sp = SparseTensor(tf.placeholder(tf.int64, [None, 2]), tf.placeholder(tf.int32, [None]),
                      tf.stack([n, tf.constant(7, tf.int64)]))
    assert sp.shape.as_list() == [None, 7]
    unknown = SparseTensor(tf.placeholder(tf.int64, [None, 3]), [1.0],
                           tf.placeholder(tf.int64, [None]))
    assert unknown.shape.as_list() == [None, None, None]  # rank from the indices


def test_construction_errors():
    with pytest.raises(TypeError, match="int64"):
        SparseTensor(tf.constant([[0]], tf.int32), [1.0], [2])
    with pytest.raises(ValueError, match="rank 2"):
        SparseTensor(tf.constant([0, 1], tf.int64), [1.0, 2.0], [2])
    with pytest.raises(ValueError, match="rank 1"):
        SparseTensor([[0]], [[1.0]], [2])
    with pytest.raises(ValueError, match="2 indices but 3 values"):
        SparseTensor([[0], [1]], [1.0, 2.0, 3.0], [4])


def test_value_helpers():
    v = SparseTensorValue(np.array([[0, 0]]), np.array([3]), np.array([2, 2]))
    assert is_sparse(v) and not is_sparse(np.zeros(2))
    sp = SparseTensor.from_value(v)
    assert isinstance(sp, SparseTensor) and sp.shape.as_list() == [2, 2]
    assert convert_to_sparse_tensor(sp) is sp
    with pytest.raises(TypeError, match="SparseTensor"):
        convert_to_sparse_tensor([1, 2])


def test_sparse_placeholder_feed(sess):
    sp = sparse_placeholder(tf.float32, shape=[None, 5], name="sp")
    assert sp.values.name == "sp/values:0" and sp.indices.name == "sp/indices:0"
    assert sp.dense_shape.name == "sp/shape:0"
    assert sp.shape.as_list() == [None, 5]
    value = SparseTensorValue([[0, 4], [2, 1]], [2.5, -1.0], [3, 5])
    idx, vals, shape = sess.run([sp.indices, sp.values, sp.dense_shape], {sp: value})
    np.testing.assert_array_equal(idx, [[0, 4], [2, 1]])
    assert vals.dtype == np.float32 and idx.dtype == np.int64
    np.testing.assert_array_equal(shape, [3, 5])
    dense = sess.run(_to_dense(sp), {sp: value})
    assert dense.shape == (3, 5) and dense[0, 4] == 2.5 and dense[2, 1] == -1.0
    # a plain (indices, values, shape) tuple feeds too
    vals = sess.run(sp.values, {sp: ([[1, 1]], [7.0], [2, 5])})
    np.testing.assert_array_equal(vals, [7.0])


def _to_dense(sp):
    from flowgraph.ops.sparse_ops import sparse_tensor_to_dense

    return sparse_tensor_to_dense(sp)


def test_sparse_placeholder_unknown_shape(sess):
    sp = sparse_placeholder(tf.int64)
    assert sp.shape.ndims is None
    out = sess.run(sp.dense_shape, {sp: SparseTensorValue(np.zeros((0, 3)), [], [2, 3, 4])})
    np.testing.assert_array_equal(out, [2, 3, 4])


def test_bad_feed_value(sess):
    sp = sparse_placeholder(tf.float32)
    with pytest.raises(TypeError, match="SparseTensorValue"):
        sess.run(sp.values, {sp: 3.0})
    with pytest.raises(TypeError, match="cannot be a SparseTensor"):
        sess.run(sp.values, {sp: SparseTensor([[0]], [1.0], [1])})


def test_fetch_components_protocol():
    sp = SparseTensor([[0, 1]], [4], [2, 2])
    parts, build = sp._fetch_components()
    assert parts == [sp.indices, sp.values, sp.dense_shape]
    v = build([np.array([[0, 1]]), np.array([4]), np.array([2, 2])])
    assert isinstance(v, SparseTensorValue) and v.values.tolist() == [4]


@needs_fetch
def test_fetch_gives_sparse_tensor_value(sess):
    sp = SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 2])
    v = sess.run(sp)
    assert isinstance(v, SparseTensorValue)
    np.testing.assert_array_equal(v.indices, [[0, 1], [2, 0]])
    np.testing.assert_array_equal(v.values, np.array([5.0, 6.0], np.float32))
    np.testing.assert_array_equal(v.dense_shape, [3, 2])
    nested = sess.run({"a": [sp, sp.values]})
    assert isinstance(nested["a"][0], SparseTensorValue)
    ph = sparse_placeholder(tf.float32)
    fed = sess.run(ph, {ph: SparseTensorValue([[0, 0]], [1.0], [2, 2])})
    np.testing.assert_array_equal(fed.values, [1.0])
    assert sp.eval(session=sess).values.tolist() == [5.0, 6.0]
