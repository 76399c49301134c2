"""Slicing and indexing: slice, strided_slice, Tensor.__getitem__, gather, gather_nd,
scatter_nd, where, boolean_mask."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.framework.registry import OpCost
from flowgraph.ops.array_slicing import strided_slice_numpy

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)


def _ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


# -- __getitem__ -------------------------------------------------------------------------
KEYS = [
    1, -1, (0, 2), (slice(None), 1), (Ellipsis, 2), (Ellipsis, None, 1),
    (slice(None, None, -1),), (slice(2, 0, -1), slice(None, None, 2)),
    (slice(-100, 100),), (1, Ellipsis, slice(1, -1)), (None, 1, None),
    (slice(None), slice(None), slice(3, None, -2)), (Ellipsis,), (slice(5, 1),),
    (slice(1, 2), slice(None), 0, slice(None, None, -3)), (0, 0, 0, 0),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_matches_numpy(sess, key):
    x = tf.constant(X)
    p = _ph([None, 3, None, 5])
    got_c, got_p = sess.run([x[key], p[key]], {p: X})
    want = X[key]
    np.testing.assert_array_equal(got_c, want)
    np.testing.assert_array_equal(got_p, want)
    assert got_c.dtype == np.float32
    assert x[key].shape.as_list() == list(want.shape)
    # partially known input: known dims stay known where NumPy's would not depend on them
    assert p[key].shape.is_compatible_with(want.shape)


def test_getitem_shape_inference_partial():
    p = _ph([None, 3, 4])
    assert p[0].shape.as_list() == [3, 4]
    assert p[:, 1].shape.as_list() == [None, 4]
    assert p[..., None, ::-1, 1].shape.as_list() == [None, 1, 3]
    assert p[1:, tf.newaxis].shape.as_list() == [None, 1, 3, 4]
    assert p[:, 1:3].shape.as_list() == [None, 2, 4]
    u = tf.placeholder(tf.float32)
    assert u[0].shape.ndims is None


def test_getitem_tensor_index(sess):
    x = tf.constant(X[0])
    i = tf.placeholder(tf.int32, [])
    j = tf.constant(1, tf.int64)
    y = x[i]
    assert y.shape.as_list() == [4, 5]
    np.testing.assert_array_equal(sess.run(y, {i: 2}), X[0][2])
    np.testing.assert_array_equal(sess.run(x[j:, ::2]), X[0][1:, ::2])
    np.testing.assert_array_equal(sess.run(x[i, -1], {i: -1}), X[0][-1, -1])
    assert x[tf.constant(1)].shape.as_list() == [4, 5]


def test_getitem_scalar_result_is_ndarray(sess):
    v = sess.run(tf.constant([1, 2, 3])[1])
    assert isinstance(v, np.ndarray | np.generic) and v.dtype == np.int32 and v == 2


@pytest.mark.parametrize("bad", [[1, 2], 1.0, "a", True])
def test_getitem_invalid_index_type(bad):
    with pytest.raises(TypeError, match="Only integers, slices"):
        tf.constant(X)[bad]


def test_getitem_errors_at_graph_construction():
    x = tf.constant(X[0])
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        x[5]
    with pytest.raises(ValueError, match="strides\\[0\\] must be non-zero"):
        x[::0]
    with pytest.raises(ValueError, match="Index out of range using input dim 3"):
        x[1, 1, 1, 1]


def test_getitem_out_of_bounds_at_run_time(sess):
    p = _ph([None, 2])
    with pytest.raises(errors.InvalidArgumentError, match="slice index 5 of dimension 0"):
        sess.run(p[5], {p: np.zeros([3, 2], np.float32)})


# -- strided_slice with masks -----------------------------------------------------------
def test_strided_slice_masks(sess):
    x = tf.constant(X)
    cases = [
        (dict(begin=[1, 0], end=[0, 2], strides=[1, 1], shrink_axis_mask=1), X[1, 0:2]),
        (dict(begin=[0, 0], end=[0, 0], strides=[1, -1], begin_mask=3, end_mask=3),
         X[:, ::-1]),
        (dict(begin=[0, 1], end=[0, 2], strides=[1, 1], ellipsis_mask=1), X[..., 1:2]),
        (dict(begin=[0, 0, 1], end=[0, 0, 2], strides=[1, 1, 1], new_axis_mask=2,
              begin_mask=1, end_mask=1), X[:, None, 1:2]),
        (dict(begin=[0, 2], end=[0, 3], strides=[1, 1], ellipsis_mask=1,
              shrink_axis_mask=2), X[..., 2]),
    ]
    for kwargs, want in cases:
        b, e, s = kwargs.pop("begin"), kwargs.pop("end"), kwargs.pop("strides")
        t = tf.strided_slice(x, b, e, s, **kwargs)
        assert t.op.type == "StridedSlice"
        assert t.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(sess.run(t), want)


def test_strided_slice_default_strides_and_errors():
    x = tf.constant(X)
    assert tf.strided_slice(x, [0, 1], [2, 3]).shape.as_list() == [2, 2, 4, 5]
    with pytest.raises(ValueError, match="only stride 1 allowed on non-range indexing"):
        tf.strided_slice(x, [1], [2], [-1], shrink_axis_mask=1)
    with pytest.raises(ValueError, match="Multiple ellipses"):
        tf.strided_slice(x, [0, 0], [0, 0], [1, 1], ellipsis_mask=3)
    with pytest.raises(ValueError, match="same length"):
        tf.strided_slice(x, [0, 0], [1], [1, 1])


_index = st.one_of(st.none(), st.integers(-7, 7))
_slice = st.builds(slice, _index, _index, st.one_of(st.none(), st.sampled_from([-3, -1, 1, 2])))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_slice, st.integers(-2, 1), st.just(None)), min_size=0, max_size=4),
       st.booleans(), st.integers(0, 4))
def test_strided_slice_numpy_matches_numpy_indexing(items, with_ellipsis, where):
    key = list(items)
    if with_ellipsis:
        key.insert(min(where, len(key)), Ellipsis)
    key = tuple(key)
    try:
        want = X[key]
    except IndexError:
        want = None
    x = tf.constant(X)
    try:
        t = x[key]
    except ValueError:
        assert want is None
        return
    assert want is not None
    assert t.shape.as_list() == list(want.shape)
    b = np.reshape(t.op.inputs[1].op.attrs["value"], -1)
    e = np.reshape(t.op.inputs[2].op.attrs["value"], -1)
    s = np.reshape(t.op.inputs[3].op.attrs["value"], -1)
    masks = {k: t.op.attrs[k] for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                         "new_axis_mask", "shrink_axis_mask")}
    np.testing.assert_array_equal(strided_slice_numpy(X, b, e, s, **masks), want)


def test_strided_slice_of_shape_is_static():
    p = _ph([None, 3, 4])
    s = tf.shape(p)
    # TF 2.15's Python `get_static_value` folds no StridedSlice (shape inference does)
    assert tf.get_static_value(s[1]) is None
    from flowgraph.framework.constant_op import constant_value

    assert constant_value(s[1]) == 3
    assert constant_value(s[0]) is None
    # as TF's shape inference: of a partly known shape only single dimensions are values
    assert constant_value(s[1:]) is None
    # TF 2.15 infers no more than one unknown target entry (s[0] and -1 both count)
    assert tf.reshape(p, tf.stack([s[0], -1])).shape.as_list() == [None, None]
    assert tf.reshape(p, tf.concat([s[:1], [-1]], 0)).shape.as_list() == [None, None]
    assert tf.reshape(p, [s[0], s[1], -1, 2]).shape.as_list() == [None, 3, None, 2]


# -- slice ------------------------------------------------------------------------------
def test_slice(sess):
    x = tf.constant(X[0])
    t = tf.slice(x, [1, 0, 2], [-1, 2, 3])
    assert t.op.type == "Slice" and t.shape.as_list() == [2, 2, 3]
    np.testing.assert_array_equal(sess.run(t), X[0][1:, 0:2, 2:5])
    p = _ph([None, 5])
    assert tf.slice(p, [1, 1], [2, -1]).shape.as_list() == [2, 4]
    assert tf.slice(p, tf.placeholder(tf.int32, [2]), [2, 3]).shape.as_list() == [2, 3]
    assert tf.slice(tf.placeholder(tf.float32), [0, 0], [1, 2]).shape.as_list() == [1, 2]


def test_slice_errors(sess):
    x = tf.constant(X[0])
    beyond = tf.slice(x, [0, 2, 0], [1, 3, 1])  # TF: builds, fails at run
    assert beyond.shape.as_list() == [1, 3, 1]
    with pytest.raises(errors.InvalidArgumentError, match=r"Expected size\[1\] in \[0, 2\]"):
        sess.run(beyond)
    with pytest.raises(ValueError, match="the input rank"):
        tf.slice(x, [0], [1])
    p = _ph([None])
    with pytest.raises(errors.InvalidArgumentError, match="Slice"):
        sess.run(tf.slice(p, [2], [3]), {p: np.zeros(4, np.float32)})


# -- gather -----------------------------------------------------------------------------
def test_gather_values_and_shapes(sess):
    params = X[0]
    idx = np.array([[0, 2], [1, 1], [2, 0]], np.int32)
    for axis in (0, 1, -1):
        t = tf.gather(params, idx, axis=axis)
        want = np.take(params, idx, axis=axis)
        assert t.op.type == "GatherV2" and t.shape.as_list() == list(want.shape)
        got = sess.run(t)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.float32
    p = _ph([None, 4, 5])
    i = tf.placeholder(tf.int64, [None])
    assert tf.gather(p, i, axis=1).shape.as_list() == [None, None, 5]
    assert tf.gather(p, [1, 2]).shape.as_list() == [2, 4, 5]
    assert tf.gather(tf.placeholder(tf.float32), [1]).shape.ndims is None
    assert tf.gather(p, i, axis=tf.placeholder(tf.int32, [])).shape.as_list() == [None] * 3


def test_gather_batch_dims(sess):
    params = np.arange(2 * 3 * 4).reshape(2, 3, 4).astype(np.float64)
    idx = np.array([[0, 3, 1, 1, 2], [2, 2, 0, 3, 1]], np.int32)
    t = tf.gather(params, idx, axis=2, batch_dims=1)
    assert t.shape.as_list() == [2, 3, 5]
    want = np.stack([np.take(params[b], idx[b], axis=1) for b in range(2)])
    np.testing.assert_array_equal(sess.run(t), want)
    t2 = tf.gather(params, idx, batch_dims=-1)  # axis defaults to batch_dims, as in TF
    assert t2.shape.as_list() == [2, 3, 5]
    np.testing.assert_array_equal(sess.run(t2), want)


def test_gather_is_expensive_and_out_of_range_names_op(sess):
    t = tf.gather(tf.constant(X[0, :, 0]), tf.placeholder(tf.int32, [2]), name="my_gather")
    assert t.op.op_def.cost is OpCost.EXPENSIVE
    with pytest.raises(errors.InvalidArgumentError) as ei:
        sess.run(t, {t.op.inputs[1]: [0, 7]})
    assert "indices[1] = 7 is not in [0, 3)" in str(ei.value)
    assert "my_gather" in str(ei.value)
    with pytest.raises(TypeError, match="indices must be int32 or int64"):
        tf.gather(X, [0.5])


def test_gather_nd(sess):
    params = X[0]
    idx = np.array([[[0, 1], [2, 3]], [[1, 0], [0, 0]]], np.int64)
    t = tf.gather_nd(params, idx)
    want = params[idx[..., 0], idx[..., 1]]
    assert t.op.type == "GatherNd" and t.shape.as_list() == [2, 2, 5]
    np.testing.assert_array_equal(sess.run(t), want)
    np.testing.assert_array_equal(sess.run(tf.gather_nd(params, [[1, 2, 3]])),
                                  params[[1], [2], [3]])
    assert tf.gather_nd(_ph([None, 4, 5]), tf.placeholder(tf.int32, [7, 1])).shape.as_list() \
        == [7, 4, 5]
    with pytest.raises(ValueError, match="index depth 4"):
        tf.gather_nd(params, [[0, 0, 0, 0]])
    p = tf.placeholder(tf.int32, [None, 2])
    with pytest.raises(errors.InvalidArgumentError, match="does not index into param shape"):
        sess.run(tf.gather_nd(params, p), {p: [[0, 1], [3, 0]]})


def test_scatter_nd(sess):
    t = tf.scatter_nd([[1], [0], [1]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [3, 2])
    assert t.op.type == "ScatterNd" and t.shape.as_list() == [3, 2] and t.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(t), [[3, 4], [6, 8], [0, 0]])
    t2 = tf.scatter_nd([[0, 1], [2, 0]], tf.constant([7, 9], tf.int64), [3, 2])
    got = sess.run(t2)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[0, 7], [0, 0], [9, 0]])
    s = tf.placeholder(tf.int32, [2])
    assert tf.scatter_nd([[1]], [[1.0, 2.0]], s).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="updates must have shape"):
        tf.scatter_nd([[1]], [1.0, 2.0, 3.0], [3, 2])
    with pytest.raises(errors.InvalidArgumentError, match="does not index into output shape"):
        sess.run(tf.scatter_nd(tf.placeholder_with_default([[4]], [1, 1]), [1], [3]))


# -- where / select ---------------------------------------------------------------------
def test_where_one_arg(sess):
    c = np.array([[True, False, True], [False, False, True]])
    t = tf.where(c)
    assert t.op.type == "Where" and t.dtype == tf.int64 and t.shape.as_list() == [None, 2]
    got = sess.run(t)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argwhere(c))
    assert tf.where(tf.placeholder(tf.bool, [None, 4, 2])).shape.as_list() == [None, 3]
    assert tf.where(tf.placeholder(tf.bool)).shape.as_list() == [None, None]
    np.testing.assert_array_equal(sess.run(tf.where_v2([0, 3, 0, 1])), [[1], [3]])


def test_where_v1_select(sess):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = -x
    c = np.array([True, False, True])
    t = tf.where(c, x, y)
    assert t.op.type == "Select" and t.dtype == tf.float32 and t.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(sess.run(t), np.where(c[:, None], x, y))
    full = x > 2
    np.testing.assert_array_equal(sess.run(tf.where(full, x, y)), np.where(full, x, y))
    np.testing.assert_array_equal(sess.run(tf.where(True, x, y)), x)
    assert tf.where(tf.placeholder(tf.bool, [None]), _ph([None, 2]), _ph([4, None])) \
        .shape.as_list() == [4, 2]
    with pytest.raises(ValueError, match="vector condition must match the first dimension"):
        tf.where([True, False], x, y)
    with pytest.raises(ValueError, match="same shape"):
        tf.where(c, x, y[:2])
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where(c, x)
    cp = tf.placeholder(tf.bool, [None])
    with pytest.raises(errors.InvalidArgumentError, match="size of 'cond'"):
        sess.run(tf.where(cp, x, y), {cp: [True, False]})


def test_where_v2_broadcasts(sess):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    t = tf.where_v2([True, False], x, 10.0)
    assert t.op.type == "SelectV2" and t.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(sess.run(t), np.where([True, False], x, 10.0))
    assert tf.where_v2(tf.placeholder(tf.bool, [None, 1]), _ph([2]), 0.0).shape.as_list() \
        == [None, 2]
    with pytest.raises(ValueError, match="cannot broadcast"):
        tf.where_v2([True, False, True], x, 1.0)


# -- boolean_mask -----------------------------------------------------------------------
def test_boolean_mask(sess):
    x = np.arange(3 * 4 * 5).reshape(3, 4, 5).astype(np.int32)
    m = np.arange(12).reshape(3, 4) % 3 == 0
    t = tf.boolean_mask(x, m)
    assert t.shape.as_list() == [None, 5]
    np.testing.assert_array_equal(sess.run(t), x[m])
    m1 = np.array([True, False, True, True])
    t1 = tf.boolean_mask(x, m1, axis=1)
    assert t1.shape.as_list() == [3, None, 5]
    np.testing.assert_array_equal(sess.run(t1), x[:, m1])
    p = tf.placeholder(tf.int32, [None, 4, 5])
    mp = tf.placeholder(tf.bool, [None, 4])
    tp = tf.boolean_mask(p, mp)
    assert tp.shape.as_list() == [None, 5]
    np.testing.assert_array_equal(sess.run(tp, {p: x, mp: m}), x[m])


def test_boolean_mask_errors():
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(tf.zeros([3, 4]), True)
    with pytest.raises(ValueError, match="incompatible"):
        tf.boolean_mask(tf.zeros([3, 4]), [True, False])
    with pytest.raises(ValueError, match="Number of mask dimensions"):
        tf.boolean_mask(tf.zeros([3, 4]), tf.placeholder(tf.bool))
