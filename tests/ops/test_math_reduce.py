"""Reductions, arg-reductions, scans, add_n/accumulate_n and bincount (math_reduce.py)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import scipy.special
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.ops import math_reduce

RNG = np.random.default_rng(11)
X = RNG.uniform(-3, 3, (2, 3, 5))
XI = RNG.integers(-9, 10, (2, 3, 5)).astype(np.int32)
XB = RNG.random((2, 3, 5)) > 0.4

REDUCTIONS = [  # function, NumPy reference, input
    (tf.reduce_sum, np.sum, X), (tf.reduce_sum, np.sum, XI),
    (tf.reduce_mean, np.mean, X), (tf.reduce_prod, np.prod, X),
    (tf.reduce_prod, np.prod, XI), (tf.reduce_max, np.max, X), (tf.reduce_max, np.max, XI),
    (tf.reduce_min, np.min, X.astype(np.float32)), (tf.reduce_min, np.min, XI),
    (tf.reduce_any, np.any, XB), (tf.reduce_all, np.all, XB),
    (tf.reduce_logsumexp, scipy.special.logsumexp, X),
]
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], (1, 2), []]  # [1, 1]: an error in TF (below)


@pytest.mark.parametrize(("fn", "ref", "x"), REDUCTIONS,
                         ids=[f"{r[0].__name__}-{r[2].dtype}" for r in REDUCTIONS])
def test_reductions_match_numpy(sess, fn, ref, x):
    outs, wants = [], []
    for axis in AXES:
        ax = None if axis is None else tuple(sorted({a % 3 for a in np.reshape(axis, -1)}))
        for keep in (False, True):
            outs.append(fn(x, axis, keepdims=keep))
            wants.append(np.asarray(ref(x, axis=ax, keepdims=keep)))
    for out, got, want in zip(outs, sess.run(outs), wants):
        assert got.dtype == x.dtype, (out.name, got.dtype)
        assert got.shape == want.shape and out.shape.as_list() == list(want.shape)
        np.testing.assert_allclose(got, want.astype(x.dtype), rtol=1e-6)


def test_small_int_sums_stay_in_dtype(sess):
    x = np.array([100, 100, 100], np.int8)
    got = sess.run(tf.reduce_sum(x))
    assert got.dtype == np.int8 and got == np.int8(44)  # wraps like TensorFlow
    assert sess.run(tf.reduce_sum(np.ones(5, np.float16))).dtype == np.float16


def test_integer_mean_truncates_toward_zero(sess):
    got = sess.run([tf.reduce_mean([1, 2, 2]), tf.reduce_mean([-1, -2, -2]),
                    tf.reduce_mean([[7, 8], [-7, -8]], 1)])
    assert got[0] == 1 and got[1] == -1 and got[0].dtype == np.int32
    assert got[2].tolist() == [7, -7]


def test_empty_reductions_give_tf_identities(sess):
    f, i = tf.zeros([0], tf.float32), tf.constant(np.zeros(0, np.int32))
    got = sess.run({"max_f": tf.reduce_max(f), "max_i": tf.reduce_max(i),
                    "min_i": tf.reduce_min(i), "prod": tf.reduce_prod(tf.zeros([0, 3]), 0),
                    "mean_f": tf.reduce_mean(f), "mean_i": tf.reduce_mean(i),
                    "sum": tf.reduce_sum(f), "any": tf.reduce_any(tf.zeros([0], tf.bool)),
                    "all": tf.reduce_all(tf.zeros([0], tf.bool))})
    assert got["max_f"] == -np.inf and got["max_i"] == np.iinfo(np.int32).min
    assert got["min_i"] == np.iinfo(np.int32).max
    assert got["prod"].tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(got["mean_f"]) and got["mean_i"] == 0 and got["sum"] == 0
    assert not got["any"] and got["all"]


def test_reduction_aliases_and_names():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    out = tf.reduce_sum(x, reduction_indices=[0], keep_dims=True)
    assert out.shape.as_list() == [1, 3, 5]
    assert out.op.name == "Sum" and out.op.inputs[1].op.name == "Sum/reduction_indices"
    assert tf.reduce_mean(x, name="avg").op.name == "avg"
    assert tf.reduce_max(x, 1).op.type == "Max"
    assert tf.reduce_sum(x, 1, False, None, None, None).shape.as_list() == [None, 5]
    with pytest.raises(ValueError, match="both 'axis' and 'reduction_indices'"):
        tf.reduce_sum(x, axis=1, reduction_indices=1)
    with pytest.raises(ValueError, match="both 'keepdims' and 'keep_dims'"):
        tf.reduce_sum(x, keepdims=True, keep_dims=True)


def test_reduction_shape_inference_partial():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    unknown = tf.placeholder(tf.float32)
    axis = tf.placeholder(tf.int32, [2])
    assert tf.reduce_sum(x, -1).shape.as_list() == [None, 3]
    assert tf.reduce_sum(x, [0, 2], keepdims=True).shape.as_list() == [1, 3, 1]
    assert tf.reduce_sum(x).shape.as_list() == []
    assert tf.reduce_sum(x, axis).shape.ndims is None
    assert tf.reduce_sum(x, axis, keepdims=True).shape.as_list() == [None, None, None]
    assert tf.reduce_sum(unknown).shape.as_list() == []
    assert tf.reduce_sum(unknown, keepdims=True).shape.ndims is None
    assert tf.reduce_sum(unknown, 1).shape.ndims is None
    assert tf.reduce_logsumexp(x, 1).shape.as_list() == [None, 5]
    assert tf.reduce_logsumexp(x, 1, keepdims=True).shape.as_list() == [None, 1, 5]


def test_reduction_dynamic_axes_and_unknown_rank(sess):
    x = tf.placeholder(tf.float64)
    axis = tf.placeholder(tf.int64, [None])
    total, part, lse = tf.reduce_sum(x), tf.reduce_max(x, axis), tf.reduce_logsumexp(x)
    got = sess.run([total, part, lse], {x: X, axis: [2, -3]})
    np.testing.assert_allclose(got[0], X.sum())
    np.testing.assert_allclose(got[1], X.max(axis=(0, 2)))
    np.testing.assert_allclose(got[2], scipy.special.logsumexp(X))


def test_reduction_errors(sess):
    x = tf.placeholder(tf.float32, [None, 3, 5])
    with pytest.raises(ValueError, match=r"'Sum' \(Sum\).*Invalid reduction dimension 3"):
        tf.reduce_sum(x, 3)
    with pytest.raises(TypeError, match=r"'reduction_indices' of op 'Sum'"):
        tf.reduce_sum(x, 1.0)
    with pytest.raises(TypeError, match="'Sum'"):
        tf.reduce_sum(tf.constant([True]))
    with pytest.raises(TypeError, match="'Any'"):
        tf.reduce_any(tf.constant([1]))
    with pytest.raises(TypeError, match="'Max'"):
        tf.reduce_max(tf.constant([1j]))
    with pytest.raises(TypeError, match="ReduceLogSumExp"):
        tf.reduce_logsumexp(tf.constant([1]))
    axis = tf.placeholder(tf.int32, [])
    with pytest.raises(InvalidArgumentError, match="Invalid reduction dimension 4"):
        sess.run(tf.reduce_sum(x, axis), {x: np.ones((2, 3, 5)), axis: 4})


def test_logsumexp_is_stable(sess):
    x = np.array([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf],
                  [np.inf, 0.0]], np.float32)
    got = sess.run(tf.reduce_logsumexp(x, 1))
    np.testing.assert_allclose(got[:2], [1000 + np.log(2), -1000 + np.log(2)], rtol=1e-6)
    assert got[2] == -np.inf and got[3] == np.inf and got.dtype == np.float32


# -- argmax / argmin ----------------------------------------------------------------------
def test_argmax_argmin_values_and_dtypes(sess):
    x = np.array([[1, 5, 2], [7, 0, 1]], np.int32)
    outs = [tf.argmax(x, 1), tf.argmax(x, dimension=0), tf.argmax(x), tf.argmin(x, -1),
            tf.argmin(x, 1, output_type=tf.int32), tf.argmax(tf.constant([[True, False]]), 1),
            tf.argmax(X, 2)]
    got = sess.run(outs)
    assert got[0].tolist() == [1, 0] and got[0].dtype == np.int64
    assert got[1].tolist() == [1, 0, 0] and got[2].tolist() == [1, 0, 0]
    assert got[3].tolist() == [0, 1] and got[4].dtype == np.int32
    assert got[5].tolist() == [0]
    np.testing.assert_array_equal(got[6], np.argmax(X, 2))
    assert outs[0].op.type == "ArgMax" and outs[0].op.name == "ArgMax"


def test_argmax_shape_inference_and_errors(sess):
    x = tf.placeholder(tf.float32, [None, 3, 5])
    assert tf.argmax(x, 1).shape.as_list() == [None, 5]
    assert tf.argmin(x, -1).shape.as_list() == [None, 3]
    assert tf.argmax(x, tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
    assert tf.argmax(tf.placeholder(tf.float32), 1).shape.ndims is None
    with pytest.raises(ValueError, match=r"\(ArgMax\).*must be in the range"):
        tf.argmax(x, 3)
    with pytest.raises(ValueError, match="both 'axis' and 'dimension'"):
        tf.argmax(x, axis=1, dimension=1)
    with pytest.raises(TypeError, match="output_type"):
        tf.argmax(x, 1, output_type=tf.float32)
    with pytest.raises(TypeError, match="'ArgMin'"):
        tf.argmin(tf.constant(["a"]), 0)
    empty = tf.placeholder(tf.float32, [None])
    with pytest.raises(InvalidArgumentError, match="empty"):
        sess.run(tf.argmax(empty, 0), {empty: np.zeros(0)})


# -- cumsum / cumprod ---------------------------------------------------------------------
def _ref_scan(fn, identity, x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = fn(x, axis=axis).astype(x.dtype)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], identity), out[:-1]])
        out = np.moveaxis(out, 0, axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize(("fn", "ref", "identity"), [(tf.cumsum, np.cumsum, 0),
                                                     (tf.cumprod, np.cumprod, 1)])
def test_scans_match_reference(sess, fn, ref, identity):
    outs, wants = [], []
    for x in (X, XI, XI.astype(np.int8)):
        for axis in (0, 1, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    outs.append(fn(x, axis, exclusive=exclusive, reverse=reverse))
                    wants.append(_ref_scan(ref, identity, x, axis, exclusive, reverse))
    for got, want in zip(sess.run(outs), wants):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_scan_tf_examples_and_shapes(sess):
    got = sess.run([tf.cumsum([1, 2, 3], exclusive=True, reverse=True),
                    tf.cumprod([1, 2, 3], exclusive=True),
                    tf.cumsum(tf.zeros([0, 3]), 0, exclusive=True)])
    assert got[0].tolist() == [5, 3, 0] and got[1].tolist() == [1, 1, 2]
    assert got[2].shape == (0, 3)
    x = tf.placeholder(tf.float32, [None, 3])
    axis = tf.placeholder(tf.int32, [])
    assert tf.cumsum(x, 1).shape.as_list() == [None, 3]
    dynamic = tf.cumsum(x, axis, reverse=True)
    assert dynamic.shape.as_list() == [None, 3] and dynamic.op.get_attr("reverse") is True
    np.testing.assert_allclose(sess.run(dynamic, {x: X[0, :, :3], axis: 1}),
                               np.flip(np.cumsum(np.flip(X[0, :, :3], 1), 1), 1), rtol=1e-6)


def test_duplicate_reduction_axes_fail_at_run(sess):
    # TF 2.15: "Invalid reduction arguments: Axes contains duplicate dimension: 1"
    with pytest.raises(InvalidArgumentError, match="duplicate dimension: 1"):
        sess.run(tf.reduce_max(tf.ones([2, 3]), [1, -1]))


def test_scan_errors(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(InvalidArgumentError, match="scan axis"):  # at run, as in TF
        sess.run(tf.cumsum(x, 2), {x: np.ones((2, 3))})
    with pytest.raises(TypeError, match="'Cumprod'"):
        tf.cumprod(tf.constant([True]))
    with pytest.raises(TypeError, match="'Cumsum'"):
        tf.cumsum(x, 1.0)
    axis = tf.placeholder(tf.int32, [])
    with pytest.raises(InvalidArgumentError, match="axis 5"):
        sess.run(tf.cumsum(x, axis), {x: np.ones((2, 3)), axis: 5})


# -- add_n / accumulate_n -----------------------------------------------------------------
def test_add_n(sess):
    xs = [RNG.integers(-5, 5, (2, 3)).astype(np.int32) for _ in range(4)]
    out = tf.add_n(xs)
    assert out.op.type == "AddN" and out.op.get_attr("N") == 4
    got = sess.run(out)
    np.testing.assert_array_equal(got, sum(xs))
    assert got.dtype == np.int32
    one = tf.constant(xs[0])
    assert tf.add_n([one]) is one
    assert tf.add_n([one], name="single").op.name == "single"
    assert sess.run(tf.add_n([1.5, 2.0])) == np.float32(3.5)


def test_add_n_shapes_and_errors(sess):
    f = tf.float32
    out = tf.add_n([tf.placeholder(f, [None, 3]), tf.placeholder(f, [2, None])])
    assert out.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match=r"\(AddN\).*same shape"):
        tf.add_n([tf.placeholder(f, [2, 3]), tf.placeholder(f, [3, 3])])
    with pytest.raises(TypeError, match="don't all match"):
        tf.add_n([tf.placeholder(f, [2]), tf.placeholder(tf.float64, [2])])
    with pytest.raises(ValueError, match="at least one"):
        tf.add_n([])
    with pytest.raises(TypeError, match="'AddN'"):
        tf.add_n([tf.constant([True]), tf.constant([False])])
    a, b = tf.placeholder(f), tf.placeholder(f)
    with pytest.raises(InvalidArgumentError, match="same shape"):
        sess.run(tf.add_n([a, b]), {a: np.ones((2, 3)), b: np.ones(3)})


def test_accumulate_n(sess):
    xs = [np.full((2, 3), float(i), np.float32) for i in range(3)]
    out = tf.accumulate_n(xs, shape=[2, 3], tensor_dtype=tf.float32)
    np.testing.assert_allclose(sess.run(out), np.full((2, 3), 3.0))
    with pytest.raises(ValueError, match="shape"):
        tf.accumulate_n(xs, shape=[3, 2])
    with pytest.raises(TypeError, match="tensor_dtype"):
        tf.accumulate_n(xs, tensor_dtype=tf.int32)


# -- bincount -----------------------------------------------------------------------------
def test_bincount_values(sess):
    got = sess.run({"plain": tf.bincount([1, 1, 3], minlength=6),
                    "maxlength": tf.bincount([1, 1, 3, 7], maxlength=3),
                    "weights": tf.bincount([1, 1, 3], weights=[0.5, 1.0, 2.0]),
                    "w64": tf.bincount([1, 1, 3], weights=np.array([0.5, 1.0, 2.0])),
                    "empty": tf.bincount(tf.zeros([0], tf.int32)),
                    "dtype": tf.bincount([[2, 0], [2, 2]], dtype=tf.float32),
                    "int64": tf.bincount(np.array([0, 2], np.int64))})
    assert got["plain"].tolist() == [0, 2, 0, 1, 0, 0] and got["plain"].dtype == np.int32
    assert got["maxlength"].tolist() == [0, 2, 0]
    assert got["weights"].tolist() == [0.0, 1.5, 0.0, 2.0]
    assert got["weights"].dtype == np.float32 and got["w64"].dtype == np.float64
    assert got["empty"].shape == (0,)
    assert got["dtype"].tolist() == [1.0, 0.0, 3.0] and got["dtype"].dtype == np.float32
    assert got["int64"].tolist() == [1, 0, 1]


def test_bincount_shapes_and_errors(sess):
    assert tf.bincount([1, 1, 3], minlength=6).shape.as_list() == [6]  # folded statically
    arr = tf.placeholder(tf.int32, [None, 4])
    out = tf.bincount(arr, minlength=3)
    assert out.shape.as_list() == [None] and out.op.type == "DenseBincount"
    assert out.name == "bincount_1/DenseBincount:0"  # as TF 2.15 names it
    with pytest.raises(TypeError, match="'Bincount'"):
        tf.bincount(tf.placeholder(tf.float32, [None]))
    with pytest.raises(ValueError, match="weights"):
        tf.bincount(tf.placeholder(tf.int32, [3]), weights=tf.placeholder(tf.float32, [4]))
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        sess.run(out, {arr: [[1, -1, 2, 0]]})


def test_non_differentiable_declared():
    from flowgraph.framework.registry import get_op_def

    for op in ("ArgMax", "ArgMin", "Any", "All"):
        assert get_op_def(op).differentiable is False
    # TensorFlow registers no gradient for Bincount: LookupError, not None
    assert get_op_def("Bincount").differentiable is not False


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_docstring_examples():
    result = doctest.testmod(math_reduce, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 15


_UNKNOWN_RANK_CASES = [  # (input shape, axis): the placeholder's rank is unknown
    ((), None), ((), []), ((4,), None), ((4,), 0), ((4,), [-1]),
    ((2, 3, 2), None), ((2, 3, 2), [0, 2]), ((2, 3, 2), -1), ((2, 3, 2), [1]),
]


@pytest.mark.parametrize("fn", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max,
                                tf.reduce_prod], ids=lambda f: f.__name__)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape,axis", _UNKNOWN_RANK_CASES)
def test_reduction_gradient_unknown_rank(fn, shape, axis, keepdims):
    # Issue 15: the gradient of a reduction over a rank-0 input whose rank is only known
    # at run time divided by zero (the FloorMod normalising the axes by the rank).
    x = np.random.RandomState(3).uniform(0.5, 2.0, size=shape)
    check_gradient(lambda t: fn(t * t, axis=axis, keepdims=keepdims), [x], shapes="rank")


def test_linear_regression_with_scalar_placeholders_trains(sess):
    x, y = tf.placeholder(tf.float32), tf.placeholder(tf.float32)  # rank unknown
    w, b = tf.Variable(0.5), tf.Variable(0.1)
    loss = tf.reduce_mean(tf.square(y - (w * x + b)))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: 2.0, y: 3.0})
    # d loss/dw = -2 x (y - w x - b) = -2 * 2 * 1.9; d loss/db = -2 * 1.9
    np.testing.assert_allclose(sess.run([w, b]), [0.5 + 0.1 * 7.6, 0.1 + 0.1 * 3.8],
                               rtol=1e-6)
