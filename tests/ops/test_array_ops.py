"""Array ops other than indexing: shape queries and changes, joins and splits, filled and
generated tensors (see test_indexing.py for slicing, gather, where)."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import get_op_def

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


def _unknown(dtype=tf.float32):
    return tf.placeholder(dtype)


# -- placeholders and identity still work ----------------------------------------------------
def test_existing_ops(sess):
    p = tf.placeholder_with_default([1.0, 2.0], shape=[None])
    assert tf.identity(p).shape.as_list() == [None]
    np.testing.assert_array_equal(sess.run(tf.stop_gradient(p)), [1.0, 2.0])
    assert sess.run(tf.shape(p)).tolist() == [2]


# -- shape, shape_n, size, rank ------------------------------------------------------------
def test_shape_queries(sess):
    p = _ph([None, 3, 4])
    s, n, r = tf.shape(p), tf.size(p), tf.rank(p)
    # TF 2.15 folds what the static shape knows: the rank here, not the shape or size
    assert (s.op.type, n.op.type, r.op.type) == ("Shape", "Size", "Const")
    assert tf.rank(_unknown()).op.type == "Rank"
    assert s.shape.as_list() == [3] and n.shape.as_list() == [] and r.shape.as_list() == []
    got = sess.run([s, n, r], {p: np.zeros([2, 3, 4], np.float32)})
    assert got[0].tolist() == [2, 3, 4] and got[0].dtype == np.int32
    assert got[1] == 24 and got[1].dtype == np.int32
    assert got[2] == 3 and got[2].dtype == np.int32
    assert sess.run(tf.size(p, out_type=tf.int64), {p: A}).dtype == np.int64
    assert tf.shape(_unknown()).shape.as_list() == [None]
    a, b = tf.shape_n([p, tf.zeros([5])], out_type=tf.int64)
    assert a.op.type == "ShapeN" and a.op.attrs["N"] == 2 and b.dtype == tf.int64
    ga, gb = sess.run([a, b], {p: A})
    assert ga.tolist() == [2, 3, 4] and gb.tolist() == [5] and ga.dtype == np.int64


def test_shape_constant_evaluators():
    x = tf.zeros([2, 3])
    assert constant_value(tf.shape(x)).tolist() == [2, 3]
    assert constant_value(tf.size(x)) == 6
    assert constant_value(tf.rank(_ph([None, 2]))) == 2
    assert constant_value(tf.shape(_ph([None, 2]))) is None
    assert constant_value(tf.size(_ph([None]))) is None
    assert constant_value(tf.identity(tf.shape(x))).tolist() == [2, 3]
    assert constant_value(tf.shape_n([x])[0]).tolist() == [2, 3]


def test_static_shapes_flow_through_shape_arithmetic():
    y = _ph([None, 3, 4])
    assert tf.zeros(tf.shape(y)).shape.as_list() == [None, 3, 4]
    assert tf.ones(tf.shape(y)[1:]).shape.as_list() == [3, 4]
    x = _ph([None, 3])
    # TF 2.15 infers (?, ?): two unknown target entries (shape(x)[0] and -1)
    assert tf.reshape(x, tf.stack([tf.shape(x)[0], -1])).shape.as_list() == [None, None]
    assert tf.fill(tf.stack([tf.shape(x)[1], 2]), 1.0).shape.as_list() == [3, 2]
    r = tf.range(tf.shape(x)[1])
    assert r.shape.as_list() == [3]
    assert constant_value(tf.stack([1, 2])).tolist() == [1, 2]
    assert constant_value(tf.concat([[1], [2, 3]], 0)).tolist() == [1, 2, 3]
    assert constant_value(tf.reshape([1, 2, 3, 4], [2, 2])).shape == (2, 2)
    assert constant_value(tf.range(2, 8, 2)).tolist() == [2, 4, 6]
    assert constant_value(tf.fill([2], 7)).tolist() == [7, 7]


# -- reshape -------------------------------------------------------------------------------
def test_reshape(sess):
    t = tf.reshape(A, [4, -1])
    assert t.op.type == "Reshape" and t.shape.as_list() == [4, 6]
    got = sess.run(t)
    np.testing.assert_array_equal(got, A.reshape(4, -1))
    assert got.dtype == np.float32
    assert tf.reshape([5], []).shape.as_list() == []
    p = _ph([None, 3, 4])
    assert tf.reshape(p, [-1, 12]).shape.as_list() == [None, 12]
    assert tf.reshape(p, [-1]).shape.as_list() == [None]
    assert tf.reshape(_unknown(), [2, -1]).shape.as_list() == [2, None]
    assert tf.reshape(A, tf.placeholder(tf.int32, [3])).shape.as_list() == [None] * 3
    assert tf.reshape(A, [tf.placeholder(tf.int32, []), 4]).shape.as_list() == [6, 4]
    np.testing.assert_array_equal(
        sess.run(tf.reshape(p, tf.stack([tf.shape(p)[0], -1])), {p: A}), A.reshape(2, 12))


def test_reshape_errors(sess):
    with pytest.raises(ValueError, match=r"24 elements \(shape \(2, 3, 4\)\) to shape "
                                         r"\[5, 5\] \(25 elements\)"):
        tf.reshape(A, [5, 5])
    with pytest.raises(ValueError, match="not divisible by 5"):
        tf.reshape(A, [5, -1])
    two = tf.reshape(A, [-1, -1])  # as TensorFlow: shape (?, ?) at build, an error at run
    assert two.shape.as_list() == [None, None]
    with pytest.raises(errors.InvalidArgumentError, match="Only one input size may be -1"):
        sess.run(two)
    with pytest.raises(ValueError, match="must be a 1-D tensor"):
        tf.reshape(A, 24)
    p = _ph([None, 4])
    with pytest.raises(errors.InvalidArgumentError, match="Input to reshape is a tensor with 12"):
        sess.run(tf.reshape(p, [5, -1]), {p: np.zeros([3, 4], np.float32)})


# -- expand_dims, squeeze ------------------------------------------------------------------
def test_expand_dims(sess):
    for axis in (0, 1, 3, -1, -4):
        t = tf.expand_dims(A, axis)
        want = np.expand_dims(A, axis)
        assert t.op.type == "ExpandDims" and t.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(sess.run(t), want)
    assert tf.expand_dims(_ph([None, 2]), dim=1).shape.as_list() == [None, 1, 2]
    assert tf.expand_dims(_unknown(), 0).shape.ndims is None
    # an axis known only at run time leaves the rank unknown too (TF 2.15)
    assert tf.expand_dims(A, tf.placeholder(tf.int32, [])).shape.ndims is None
    # a one-element axis vector works as in TF; more elements are refused
    v = tf.expand_dims(A, [1])
    assert v.shape.as_list() == list(np.expand_dims(A, 1).shape)
    np.testing.assert_array_equal(sess.run(v), np.expand_dims(A, 1))
    with pytest.raises(ValueError, match="'dim' input must be a tensor with a single value"):
        tf.expand_dims(A, [1, 2])
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="single value"):
        sess.run(tf.expand_dims(A, p), {p: [0, 1]})
    with pytest.raises(ValueError, match=r"dim 4 not in the interval \[-4, 3\]"):
        tf.expand_dims(A, 4)
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(A)
    with pytest.raises(ValueError, match="both"):
        tf.expand_dims(A, 0, dim=0)


def test_squeeze(sess):
    x = np.zeros([1, 2, 1, 3], np.int32)
    t = tf.squeeze(x)
    assert t.op.type == "Squeeze" and t.shape.as_list() == [2, 3]
    assert sess.run(t).dtype == np.int32
    assert tf.squeeze(x, [2]).shape.as_list() == [1, 2, 3]
    assert tf.squeeze(x, -2).shape.as_list() == [1, 2, 3]
    assert tf.squeeze(x, squeeze_dims=[0]).shape.as_list() == [2, 1, 3]
    np.testing.assert_array_equal(sess.run(tf.squeeze(x, [0, 2])), x.reshape(2, 3))
    assert tf.squeeze(_ph([None, 1, 3])).shape.ndims is None
    assert tf.squeeze(_ph([None, 1, 3]), [1]).shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[1\], expected a dimension of "
                                         r"1, got 2"):
        tf.squeeze(x, [1])
    p = _ph([None, 3])
    with pytest.raises(errors.InvalidArgumentError, match="Can not squeeze dim"):
        sess.run(tf.squeeze(p, [0]), {p: np.zeros([2, 3], np.float32)})


# -- transpose -----------------------------------------------------------------------------
def test_transpose(sess):
    t = tf.transpose(A)
    assert t.op.type == "Transpose" and t.shape.as_list() == [4, 3, 2]
    np.testing.assert_array_equal(sess.run(t), A.T)
    t2 = tf.transpose(A, [1, 0, 2])
    np.testing.assert_array_equal(sess.run(t2), A.transpose(1, 0, 2))
    assert tf.transpose(_ph([None, 3]), [1, 0]).shape.as_list() == [3, None]
    u = _unknown()
    tu = tf.transpose(u)
    assert tu.shape.ndims is None
    np.testing.assert_array_equal(sess.run(tu, {u: A}), A.T)
    assert tf.transpose(u, [1, 0]).shape.as_list() == [None, None]
    c = np.array([[1 + 2j, 3j, 1], [2, 1 - 1j, 0]], np.complex64)
    tc = tf.transpose(c, conjugate=True)
    assert tc.op.type == "ConjugateTranspose"
    np.testing.assert_array_equal(sess.run(tc), c.conj().T)
    assert tf.transpose(A[0], conjugate=True).op.type == "Transpose"
    with pytest.raises(ValueError, match="perm has 2 entries but the input has rank 3"):
        tf.transpose(A, [1, 0])
    dup = tf.transpose(A, [0, 0, 1])  # TF: shape (2, 2, 3) at build, an error at run
    assert dup.shape.as_list() == [2, 2, 3]
    with pytest.raises(errors.InvalidArgumentError, match="2 is missing from"):
        sess.run(dup)


# -- concat, stack, unstack, split ---------------------------------------------------------------
def test_concat(sess):
    b = np.ones([2, 5, 4], np.float32)
    t = tf.concat([A, b], 1)
    assert t.op.type == "ConcatV2" and t.op.attrs["N"] == 2 and t.shape.as_list() == [2, 8, 4]
    np.testing.assert_array_equal(sess.run(t), np.concatenate([A, b], 1))
    np.testing.assert_array_equal(sess.run(tf.concat([A, A, A], axis=-1)),
                                  np.concatenate([A] * 3, -1))
    assert tf.concat([A], 0).op.type == "Identity"
    assert tf.concat([_ph([None, 3]), _ph([2, None])], 0).shape.as_list() == [None, 3]
    assert tf.concat([_ph([4, 3]), _ph([2, None])], 0).shape.as_list() == [6, 3]
    assert tf.concat([_unknown(), _ph([2, 3])], 1).shape.as_list() == [2, None]
    assert tf.concat([A, A], tf.placeholder(tf.int32, [])).shape.as_list() == [None] * 3
    t64 = tf.concat([np.array([1], np.int64), [2, 3]], 0)
    assert t64.dtype == tf.int64


def test_concat_errors(sess):
    with pytest.raises(ValueError, match=r"same rank, got ranks \[1, 3\]"):
        tf.concat([A, tf.zeros([3])], 0)
    with pytest.raises(ValueError, match="dimension 2 of all values must match"):
        tf.concat([A, tf.zeros([2, 3, 5])], 0)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        tf.concat([A, A], 3)
    with pytest.raises(TypeError, match="same dtype"):
        tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], 0)
    p = _ph([None, None])
    with pytest.raises(errors.InvalidArgumentError, match="Dimensions of inputs should match"):
        sess.run(tf.concat([p, tf.zeros([1, 2])], 0), {p: np.zeros([1, 3], np.float32)})


def test_stack_unstack(sess):
    t = tf.stack([A, A + 1], axis=1)
    assert t.op.type == "Pack" and t.shape.as_list() == [2, 2, 3, 4]
    np.testing.assert_array_equal(sess.run(t), np.stack([A, A + 1], 1))
    assert tf.stack([A, A], axis=-1).shape.as_list() == [2, 3, 4, 2]
    assert tf.stack([_ph([None, 3]), _ph([2, None])]).shape.as_list() == [2, 2, 3]
    assert tf.stack([tf.shape(A)[0], 5]).dtype == tf.int32
    with pytest.raises(ValueError, match="not compatible"):
        tf.stack([A, tf.zeros([2, 4, 3])])
    with pytest.raises(ValueError, match="axis 5 is out of range"):
        tf.stack([A, A], axis=5)
    parts = tf.unstack(A, axis=1)
    assert len(parts) == 3 and parts[0].op.type == "Unpack" and parts[0].shape.as_list() == [2, 4]
    for got, i in zip(sess.run(parts), range(3)):
        np.testing.assert_array_equal(got, A[:, i])
    assert len(tf.unstack(_ph([None, 5]), axis=-1)) == 5
    assert len(tf.unstack(_ph([None, 5]), num=4)) == 4
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.unstack(_ph([None, 2]))
    with pytest.raises(ValueError, match="num=4 but dimension 0 has size 2"):
        tf.unstack(A, num=4)
    with pytest.raises(TypeError, match="Iterating over a symbolic Tensor"):
        _a, _b = tf.constant([[1, 2], [3, 4]])  # Tensor.__iter__: TypeError, as in TF 2.15


def test_split(sess):
    x = np.arange(7 * 6, dtype=np.int64).reshape(7, 6)
    parts = tf.split(x, 3, axis=1)
    assert [p.op.type for p in parts] == ["Split"] * 3
    assert [p.shape.as_list() for p in parts] == [[7, 2]] * 3
    for got, want in zip(sess.run(parts), np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.int64
    v = tf.split(x, [2, -1, 3])
    assert v[0].op.type == "SplitV" and [p.shape.as_list() for p in v] == [[2, 6], [2, 6],
                                                                             [3, 6]]
    for got, want in zip(sess.run(v), np.split(x, [2, 4])):
        np.testing.assert_array_equal(got, want)
    assert [p.shape.as_list() for p in tf.split(_ph([None, 6]), 3, axis=1)] == [[None, 2]] * 3
    assert [p.shape.as_list() for p in tf.split(_ph([None, 6]), [1, 5])] == [[1, 6], [5, 6]]
    assert [p.shape.as_list() for p in tf.split(_ph([None, 6]), [1, -1])] == [[1, 6],
                                                                              [None, 6]]
    sizes = tf.placeholder(tf.int32, [2])
    assert len(tf.split(x, sizes)) == 2


def test_split_errors(sess):
    x = tf.zeros([7, 2])
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 7"):
        tf.split(x, 3)
    with pytest.raises(ValueError, match="only have one -1"):
        tf.split(x, [-1, -1])
    with pytest.raises(ValueError, match="2 entries but num_split is 3"):
        tf.split(x, [2, 5], num=3)
    with pytest.raises(ValueError, match="must either match input shape"):
        tf.split(x, [2, 4])
    with pytest.raises(ValueError, match="Cannot infer argument `num`"):
        tf.split(x, tf.placeholder(tf.int32, [None]))
    p = _ph([None, 2])
    with pytest.raises(errors.InvalidArgumentError, match="evenly divide"):
        sess.run(tf.split(p, 2), {p: np.zeros([3, 2], np.float32)})


# -- tile, pad, reverse ----------------------------------------------------------------------------
def test_tile(sess):
    t = tf.tile(A, [1, 2, 3])
    assert t.op.type == "Tile" and t.shape.as_list() == [2, 6, 12]
    np.testing.assert_array_equal(sess.run(t), np.tile(A, [1, 2, 3]))
    assert tf.tile(_ph([None, 2]), [3, 2]).shape.as_list() == [None, 4]
    assert tf.tile(_unknown(), [3, 2]).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="multiples has 1 entries but the input has rank 3"):
        tf.tile(A, [2])


@pytest.mark.parametrize("mode", ["CONSTANT", "reflect", "Symmetric"])
def test_pad_modes(sess, mode):
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    p = [[1, 2], [0, 3]]
    t = tf.pad(x, p, mode)
    want = np.pad(x, p, mode={"CONSTANT": "constant", "reflect": "reflect",
                              "Symmetric": "symmetric"}[mode])
    assert t.shape.as_list() == list(want.shape)
    assert t.op.type == ("Pad" if mode == "CONSTANT" else "MirrorPad")
    got = sess.run(t)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float64


def test_pad_constant_values_and_errors(sess):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tf.pad(x, [[1, 0], [2, 1]], constant_values=9)
    assert t.op.type == "PadV2"
    np.testing.assert_array_equal(sess.run(t), np.pad(x, [[1, 0], [2, 1]], constant_values=9))
    assert tf.pad(_ph([None, 3]), [[1, 1], [2, 2]]).shape.as_list() == [None, 7]
    assert tf.pad(A, tf.placeholder(tf.int32, [3, 2])).shape.as_list() == [None] * 3
    with pytest.raises(ValueError, match="paddings has 1 rows but the input has rank 2"):
        tf.pad(x, [[1, 2]])
    with pytest.raises(ValueError, match="mode must be one of"):
        tf.pad(x, [[1, 2], [0, 0]], "WRAP")
    with pytest.raises(errors.InvalidArgumentError, match="REFLECT"):  # at run, as in TF
        sess.run(tf.pad(x, [[2, 0], [0, 0]], "REFLECT"))
    tf.pad(x, [[2, 0], [0, 0]], "SYMMETRIC")
    p = tf.placeholder(tf.int32, [None, 3])
    with pytest.raises(errors.InvalidArgumentError, match="REFLECT"):
        sess.run(tf.pad(p, [[2, 0], [0, 0]], "REFLECT"), {p: x})


def test_reverse(sess):
    t = tf.reverse(A, [0, -1])
    assert t.op.type == "ReverseV2" and t.shape.as_list() == [2, 3, 4]
    np.testing.assert_array_equal(sess.run(t), A[::-1, :, ::-1])
    np.testing.assert_array_equal(sess.run(tf.reverse_v2(A, [1])), A[:, ::-1])
    with pytest.raises(ValueError, match="out of range"):
        tf.reverse(A, [3])
    with pytest.raises(ValueError, match="more than once"):
        tf.reverse(A, [1, -2])


def test_reverse_sequence(sess):
    x = np.arange(15).reshape(3, 5).astype(np.float32)
    t = tf.reverse_sequence(x, [2, 5, 0], seq_axis=1, batch_axis=0)
    want = x.copy()
    for b, n in enumerate([2, 5, 0]):
        want[b, :n] = x[b, :n][::-1]
    np.testing.assert_array_equal(sess.run(t), want)
    t2 = tf.reverse_sequence(x.T, [2, 5, 0], seq_dim=0, batch_dim=1)
    np.testing.assert_array_equal(sess.run(t2), want.T)
    with pytest.raises(ValueError, match="batch dimension"):
        tf.reverse_sequence(x, [1, 2], seq_axis=1, batch_axis=0)


# -- fill, zeros, ones, *_like ---------------------------------------------------------------
def test_fill_zeros_ones(sess):
    f = tf.fill([2, 3], 9)
    assert f.op.type == "Fill" and f.dtype == tf.int32 and f.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(sess.run(f), np.full([2, 3], 9, np.int32))
    z, o = tf.zeros([2, 3]), tf.ones((3, 2), tf.int64)
    assert z.dtype == tf.float32 and o.dtype == tf.int64
    gz, go = sess.run([z, o])
    assert gz.dtype == np.float32 and not gz.any() and go.dtype == np.int64 and go.sum() == 6
    assert tf.zeros(tf.TensorShape([4])).shape.as_list() == [4]
    assert tf.zeros(5).shape.as_list() == [5]
    assert sess.run(tf.ones([2], tf.bool)).tolist() == [True, True]
    assert sess.run(tf.zeros([2], tf.string)).tolist() == [b"", b""]
    d = tf.placeholder(tf.int32, [3])
    assert tf.zeros(d).shape.as_list() == [None] * 3
    assert sess.run(tf.zeros(d), {d: [1, 2, 3]}).shape == (1, 2, 3)
    with pytest.raises(ValueError, match="value must be a scalar"):
        tf.fill([2], [1, 2])
    with pytest.raises(ValueError, match="partially known TensorShape"):
        tf.zeros(tf.TensorShape([None, 2]))


def test_zeros_like_ones_like(sess):
    p = _ph([None, 3])
    z, o = tf.zeros_like(p), tf.ones_like(p)
    assert (z.op.type, o.op.type) == ("ZerosLike", "Fill")  # TF 2.15: Fill(Shape, 1)
    assert z.shape.as_list() == [None, 3] and o.dtype == tf.float32
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    gz, go = sess.run([z, o], {p: x})
    np.testing.assert_array_equal(gz, np.zeros_like(x))
    np.testing.assert_array_equal(go, np.ones_like(x))
    zi = tf.zeros_like(p, dtype=tf.int32)
    oi = tf.ones_like(p, dtype=tf.int64)
    assert zi.dtype == tf.int32 and oi.dtype == tf.int64 and oi.shape.as_list() == [None, 3]
    gzi, goi = sess.run([zi, oi], {p: x})
    assert gzi.dtype == np.int32 and goi.dtype == np.int64 and goi.shape == (2, 3)
    assert tf.ones_like([1, 2]).dtype == tf.int32
    assert tf.zeros_like(A, dtype=tf.bool).shape.as_list() == [2, 3, 4]


# -- range, linspace ---------------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs, dtype, want", [
    ((5,), {}, tf.int32, np.arange(5)),
    ((1.0, 5), {}, tf.float32, np.arange(1.0, 5)),
    ((np.int64(5),), {}, tf.int64, np.arange(5)),
    ((0, 5), {"dtype": tf.float64}, tf.float64, np.arange(5.0)),
    ((10, 2, -3), {}, tf.int32, np.array([10, 7, 4])),
    ((0.5, 2.2, 0.5), {}, tf.float32, np.array([0.5, 1.0, 1.5, 2.0])),
])
def test_range(sess, args, kwargs, dtype, want):
    t = tf.range(*args, **kwargs)
    assert t.op.type == "Range" and t.dtype == dtype and t.shape.as_list() == [len(want)]
    got = sess.run(t)
    assert got.dtype == dtype.as_numpy_dtype
    np.testing.assert_allclose(got, want)


def test_range_inference_and_errors(sess):
    assert tf.range(tf.constant(5, tf.int64)).dtype == tf.int64
    assert tf.range(2, tf.constant(5, tf.int64)).dtype == tf.int64
    assert tf.range(2, tf.constant(5.0, tf.float64)).dtype == tf.float64
    lim = tf.placeholder(tf.int32, [])
    r = tf.range(lim)
    assert r.shape.as_list() == [None]
    assert sess.run(r, {lim: 3}).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(1, 5, 0)
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/1"):
        tf.range(5, 1)
    with pytest.raises(errors.InvalidArgumentError, match="Requires start <= limit"):
        sess.run(tf.range(lim, 1), {lim: 5})
    with pytest.raises(TypeError, match="int32, int64, float32 or float64"):
        tf.range(tf.constant(3, tf.int16))


def test_linspace(sess):
    t = tf.linspace(0.0, 1.0, 5)
    assert t.op.type == "LinSpace" and t.dtype == tf.float32 and t.shape.as_list() == [5]
    got = sess.run(t)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.linspace(0, 1, 5))
    assert tf.lin_space is tf.linspace
    assert sess.run(tf.linspace(2.0, 3.0, 1)).tolist() == [2.0]
    assert tf.linspace(0, 1, 3).dtype == tf.float64
    assert tf.linspace(0.0, 1.0, tf.placeholder(tf.int32, [])).shape.as_list() == [None]
    with pytest.raises(ValueError, match="Requires num > 0"):
        tf.linspace(0.0, 1.0, 0)


# -- one_hot, sequence_mask, unique, invert_permutation -------------------------------------------
def test_one_hot(sess):
    idx = np.array([[0, 2, -1], [3, 1, 0]], np.int32)
    t = tf.one_hot(idx, 3)
    assert t.op.type == "OneHot" and t.dtype == tf.float32 and t.shape.as_list() == [2, 3, 3]
    want = (idx[..., None] == np.arange(3)).astype(np.float32)
    got = sess.run(t)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32
    t0 = tf.one_hot(idx, 3, on_value=5, off_value=-1, axis=0)
    assert t0.dtype == tf.int32 and t0.shape.as_list() == [3, 2, 3]
    np.testing.assert_array_equal(sess.run(t0), np.moveaxis(np.where(want > 0, 5, -1), -1, 0))
    assert tf.one_hot([1], 3, dtype=tf.int64).dtype == tf.int64
    assert tf.one_hot([1], 3, on_value=2.0).dtype == tf.float32
    assert tf.one_hot(_ph([None, 3], tf.int32), 4, axis=1).shape.as_list() == [None, 4, 3]
    assert tf.one_hot([1], tf.placeholder(tf.int32, [])).shape.as_list() == [1, None]
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1, 2], 4, on_value=5, off_value=0.0)
    with pytest.raises(ValueError, match="axis must be -1 or in"):
        tf.one_hot([1, 2], 4, axis=3)


def _has_math(*names):
    from flowgraph.backends.cpu import backend

    return all(backend.find_kernel(n) is not None for n in names)


@pytest.mark.skipif(not _has_math("Less", "Cast", "Max"),
                    reason="needs the Less, Cast and Max kernels of the math family")
def test_sequence_mask(sess):
    t = tf.sequence_mask([1, 3], 4)
    assert t.dtype == tf.bool and t.shape.as_list() == [2, 4]
    np.testing.assert_array_equal(sess.run(t), [[1, 0, 0, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(sess.run(tf.sequence_mask([1, 3])), [[1, 0, 0], [1, 1, 1]])
    f = tf.sequence_mask(tf.placeholder(tf.int32, [None, 2]), 5, dtype=tf.float32)
    assert f.dtype == tf.float32 and f.shape.as_list() == [None, 2, 5]


def test_unique(sess):
    x = np.array([4, 1, 4, 7, 1, 1, 9], np.int64)
    y, idx = tf.unique(x)
    res = tf.unique(x)
    assert type(res).__name__ == "Unique" and res.y.op.type == "Unique"
    assert y.shape.as_list() == [None] and idx.shape.as_list() == [7] and idx.dtype == tf.int32
    gy, gi = sess.run([y, idx])
    np.testing.assert_array_equal(gy, [4, 1, 7, 9])
    np.testing.assert_array_equal(gy[gi], x)
    assert gy.dtype == np.int64 and gi.dtype == np.int32
    assert sess.run(tf.unique(x, out_idx=tf.int64).idx).dtype == np.int64
    s = sess.run(tf.unique(np.array([b"b", b"a", b"b"], object)).y)
    assert s.tolist() == [b"b", b"a"]
    with pytest.raises(ValueError, match="rank 1"):
        tf.unique([[1]])


def test_invert_permutation(sess):
    t = tf.invert_permutation([2, 0, 3, 1])
    assert t.shape.as_list() == [4] and t.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(t), np.argsort([2, 0, 3, 1]))
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(errors.InvalidArgumentError, match="not a valid permutation"):
        sess.run(tf.invert_permutation(p), {p: [0, 0, 1]})


def test_newaxis():
    assert tf.newaxis is None


@pytest.mark.parametrize("op_type", ["Shape", "ShapeN", "Size", "Rank", "ZerosLike",
                                     "OnesLike", "OneHot", "Where", "Range", "LinSpace",
                                     "InvertPermutation"])
def test_non_differentiable(op_type):
    assert get_op_def(op_type).differentiable is False


def test_graph_serialization_roundtrip(sess):
    """Attrs of the new ops survive the JSON graph round trip."""
    from flowgraph.framework.importer import import_graph_def

    tf.concat([tf.split(A, [1, -1], axis=1)[1], tf.zeros([2, 2, 4])], 1, name="out")
    gd = tf.get_default_graph().as_graph_def()
    g2 = tf.Graph()
    with g2.as_default():
        import_graph_def(gd, name="")
        out = g2.get_tensor_by_name("out:0")
        assert out.shape.as_list() == [2, 4, 4]
        with tf.Session(graph=g2) as s2:
            np.testing.assert_array_equal(s2.run(out)[:, :2], A[:, 1:])


def test_range_builds_tensorflows_constants_and_casts():
    # TensorFlow 2.15: each Python argument a constant of its own type, then Casts to
    # the widest (tf-oracle); the values are the same either way
    with tf.Graph().as_default() as g:
        r = tf.range(2, 10.0)
        assert [(o.name, o.type) for o in g.get_operations()] == [
            ("range/start", "Const"), ("range/limit", "Const"), ("range/delta", "Const"),
            ("range/Cast", "Cast"), ("range/Cast_1", "Cast"), ("range", "Range")]
        assert g.get_tensor_by_name("range/start:0").dtype == tf.int32
        assert tf.Session().run(r).tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    with tf.Graph().as_default() as g:
        tf.range(3, dtype=tf.float32)
        assert [o.type for o in g.get_operations()] == ["Const", "Const", "Const", "Range"]
        assert g.get_tensor_by_name("range/start:0").dtype == tf.float32
