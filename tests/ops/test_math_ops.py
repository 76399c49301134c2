"""Elementwise math, casts, clipping, matrix products and Tensor operators (math_ops.py)."""

from __future__ import annotations

import doctest
import subprocess
import sys

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import flowgraph as tf
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.ops import math_ops

RNG = np.random.default_rng(7)


def _values(dtype, shape=(2, 3), positive=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = 1 if positive or dtype.kind == "u" else -9
        return RNG.integers(lo, 10, shape).astype(dtype)
    x = RNG.uniform(0.1 if positive else -2.0, 2.0, shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.uniform(0.1 if positive else -2.0, 2.0, shape)
    return x.astype(dtype)


# -- unary ops: NumPy reference, dtype -----------------------------------------------------
UNARY = [  # function, reference, dtypes, positive inputs only
    (tf.negative, np.negative, ["float32", "int32", "int64", "complex64"], False),
    (tf.sign, np.sign, ["float64", "int32"], False),
    (tf.reciprocal, np.reciprocal, ["float32", "float64"], True),
    (tf.square, np.square, ["float32", "int32", "uint8", "complex128"], False),
    (tf.sqrt, np.sqrt, ["float32", "float64", "complex64"], True),
    (tf.rsqrt, lambda x: 1 / np.sqrt(x), ["float32", "float64"], True),
    (tf.exp, np.exp, ["float16", "float32", "float64", "complex64"], False),
    (tf.expm1, np.expm1, ["float32", "float64"], False),
    (tf.log, np.log, ["float32", "float64"], True),
    (tf.log1p, np.log1p, ["float32", "float64"], True),
    (tf.tanh, np.tanh, ["float32", "float64"], False),
    (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), ["float16", "float32", "float64",
                                                  "complex64"], False),
    (tf.sin, np.sin, ["float32", "float64"], False),
    (tf.cos, np.cos, ["float32", "float64"], False),
    (tf.tan, np.tan, ["float32", "float64"], False),
    (tf.erf, scipy.special.erf, ["float16", "float32", "float64"], False),
    (tf.floor, np.floor, ["float32", "float64"], False),
    (tf.ceil, np.ceil, ["float32", "float64"], False),
    (tf.round, np.round, ["float32", "float64", "int32"], False),
    (tf.abs, np.abs, ["float32", "int8", "int64", "complex64", "complex128"], False),
    (tf.is_nan, np.isnan, ["float32", "float64"], False),
    (tf.is_inf, np.isinf, ["float32"], False),
    (tf.is_finite, np.isfinite, ["float64"], False),
    (tf.logical_not, np.logical_not, ["bool"], False),
    (tf.conj, np.conj, ["complex64", "float32"], False),
]


@pytest.mark.parametrize(("fn", "ref", "dtypes", "positive"), UNARY,
                         ids=[u[0].__name__ for u in UNARY])
def test_unary_matches_numpy(sess, fn, ref, dtypes, positive):
    for dt in dtypes:
        x = _values(dt, (2, 3), positive)
        if dt.startswith("float"):
            x.flat[0] = np.nan if fn in (tf.is_nan, tf.is_finite) else x.flat[0]
            x.flat[1] = np.inf if fn is tf.is_inf else x.flat[1]
        out = fn(tf.constant(x))
        want = np.asarray(ref(x))
        if np.dtype(dt).kind in "f" and want.dtype != x.dtype and want.dtype != bool:
            want = want.astype(x.dtype)
        got = sess.run(out)
        assert got.dtype == want.dtype, (fn.__name__, dt)
        assert out.dtype.as_numpy_dtype == want.dtype
        tol = 1e-2 if dt == "float16" else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_round_is_half_to_even(sess):
    got = sess.run(tf.round([0.5, 1.5, 2.5, -0.5, -1.5]))
    np.testing.assert_array_equal(got, [0.0, 2.0, 2.0, -0.0, -2.0])


def test_round_of_integers_is_identity():
    x = tf.placeholder(tf.int32, [2])
    assert tf.round(x) is x


def test_abs_of_complex_is_real():
    out = tf.abs(tf.placeholder(tf.complex128, [None, 3]))
    assert out.dtype == tf.float64 and out.op.type == "ComplexAbs"
    assert out.shape.as_list() == [None, 3]


def test_unary_shapes_are_preserved():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    for fn in (tf.exp, tf.sqrt, tf.sigmoid, tf.is_nan, tf.abs, tf.negative):
        assert fn(x).shape.as_list() == [None, 3, 5]
    assert tf.exp(tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.is_nan(x).dtype == tf.bool


@pytest.mark.parametrize(("fn", "dtype"), [
    (tf.exp, tf.int32), (tf.sqrt, tf.int64), (tf.erf, tf.complex64), (tf.floor, tf.int32),
    (tf.is_nan, tf.int32), (tf.negative, tf.uint8), (tf.logical_not, tf.int32),
    (tf.sign, tf.bool), (tf.reciprocal, tf.uint8),
])
def test_unary_rejects_dtype(fn, dtype):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        fn(tf.placeholder(dtype, [2]))


# -- binary ops ---------------------------------------------------------------------------
def _ref_truncdiv(x, y):
    return np.trunc(x / y).astype(x.dtype) if x.dtype.kind == "f" else (x - np.fmod(x, y)) // y


BINARY = [  # function, reference, dtypes, nonzero divisor
    (tf.add, np.add, ["float32", "int32", "int64", "uint8", "complex64"], False),
    (tf.subtract, np.subtract, ["float64", "int16"], False),
    (tf.multiply, np.multiply, ["float32", "int32", "complex128"], False),
    (tf.realdiv, np.true_divide, ["float32", "float64"], True),
    (tf.floor_div, lambda x, y: np.floor(x / y).astype(x.dtype) if x.dtype.kind == "f"
     else np.floor_divide(x, y), ["float32", "int32", "int64"], True),
    (tf.floormod, np.mod, ["float32", "int32"], True),
    (tf.truncatediv, _ref_truncdiv, ["int32", "int64", "float64"], True),
    (tf.truncatemod, np.fmod, ["int32", "float32"], True),
    (tf.pow, np.power, ["float32", "float64"], False),
    (tf.maximum, np.maximum, ["float32", "int64", "uint8"], False),
    (tf.minimum, np.minimum, ["float64", "int32"], False),
    (tf.squared_difference, lambda x, y: np.square(x - y), ["float32", "int32"], False),
    (tf.equal, np.equal, ["float32", "int32", "bool"], False),
    (tf.not_equal, np.not_equal, ["int64", "bool"], False),
    (tf.less, np.less, ["float32", "int32"], False),
    (tf.less_equal, np.less_equal, ["float64"], False),
    (tf.greater, np.greater, ["int32"], False),
    (tf.greater_equal, np.greater_equal, ["float32"], False),
    (tf.logical_and, np.logical_and, ["bool"], False),
    (tf.logical_or, np.logical_or, ["bool"], False),
    (tf.logical_xor, np.logical_xor, ["bool"], False),
]


@pytest.mark.parametrize(("fn", "ref", "dtypes", "nonzero"), BINARY,
                         ids=[b[0].__name__ for b in BINARY])
def test_binary_matches_numpy_with_broadcasting(sess, fn, ref, dtypes, nonzero):
    for dt in dtypes:
        x = _values(dt, (2, 3))
        y = _values(dt, (3,), positive=nonzero)
        if fn is tf.pow and dt.startswith("float"):
            x = np.abs(x) + 0.5
        got = sess.run(fn(tf.constant(x), tf.constant(y)))
        want = np.asarray(ref(x, y))
        assert got.dtype == want.dtype, (fn.__name__, dt)
        assert got.shape == (2, 3)
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_squared_difference_complex(sess):
    x, y = np.array([1 + 2j, 3j], np.complex64), np.array([2 + 0j], np.complex64)
    got = sess.run(tf.squared_difference(x, y))
    np.testing.assert_allclose(got, (x - y) * np.conj(x - y))


def test_string_add_and_equal(sess):
    s = tf.constant(["ab", "c"])
    joined, same = sess.run([tf.add(s, "!"), tf.equal(s, "c")])
    assert list(joined) == [b"ab!", b"c!"]
    assert same.tolist() == [False, True]


def test_maximum_minimum_propagate_nan(sess):
    x = tf.constant([np.nan, 1.0])
    hi, lo = sess.run([tf.maximum(x, 0.0), tf.minimum(x, 0.0)])
    assert np.isnan(hi[0]) and np.isnan(lo[0]) and hi[1] == 1.0 and lo[1] == 0.0


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_binary_broadcasting_property(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4,
                                                         max_side=4))
    x = data.draw(hnp.arrays(np.float64, shapes.input_shapes[0],
                             elements=st.floats(-100, 100)))
    y = data.draw(hnp.arrays(np.float64, shapes.input_shapes[1],
                             elements=st.floats(0.5, 100)))
    g = tf.Graph()
    with g.as_default():
        px, py = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
        partial_x = tf.placeholder(tf.float64, [None] * len(shapes.input_shapes[0]))
        static = tf.add(partial_x, tf.constant(y))
        outs = [tf.add(px, py), tf.subtract(px, py), tf.multiply(px, py),
                tf.truediv(px, py), tf.maximum(px, py), tf.less(px, py),
                tf.floormod(px, py), tf.squared_difference(px, py)]
    refs = [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.less, np.mod,
            lambda a, b: np.square(a - b)]
    with tf.Session(graph=g) as s:
        got = s.run(outs, {px: x, py: y})
        assert s.run(static, {partial_x: x}).shape == shapes.result_shape
    for value, ref in zip(got, refs):
        np.testing.assert_allclose(value, ref(x, y), rtol=1e-12)
        assert value.shape == shapes.result_shape
    # static shape: compatible with the result; y's dims > 1 are known statically
    assert static.shape.is_compatible_with(shapes.result_shape)
    for d, sy in zip(static.shape.as_list()[::-1], y.shape[::-1]):
        assert d == sy if sy != 1 else d in (None, 1)


def test_binary_shape_inference_partial():
    x = tf.placeholder(tf.float32, [None, 1, 5])
    y = tf.placeholder(tf.float32, [4, None])
    assert tf.add(x, y).shape.as_list() == [None, 4, 5]
    assert tf.less(x, y).shape.as_list() == [None, 4, 5]
    assert tf.add(x, tf.placeholder(tf.float32)).shape.ndims is None
    with pytest.raises(ValueError, match=r"op 'Add_2' \(AddV2\).*cannot be broadcast"):
        tf.add(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [4]))


def test_binary_dtype_mismatch_names_op():
    i, f = tf.placeholder(tf.int32, [2]), tf.placeholder(tf.float32, [2])
    with pytest.raises(TypeError, match="'AddV2'"):
        tf.add(i, f)
    with pytest.raises(TypeError, match="'Maximum'"):
        tf.maximum(f, i)
    with pytest.raises(TypeError, match="'AddV2'"):
        tf.add(i, 1.5)
    with pytest.raises(TypeError, match=r"'AddV2'.*bool"):
        tf.add(tf.constant([True]), tf.constant([False]))
    with pytest.raises(TypeError, match="'Less'"):
        tf.less(tf.constant([True]), True)
    with pytest.raises(TypeError, match="'LogicalAnd'"):
        tf.logical_and(tf.constant([1]), 1)


# -- division family ----------------------------------------------------------------------
@pytest.mark.parametrize(("dtype", "want"), [
    (tf.int8, tf.float32), (tf.uint8, tf.float32), (tf.int16, tf.float32),
    (tf.int32, tf.float64), (tf.int64, tf.float64), (tf.float16, tf.float16),
    (tf.float32, tf.float32), (tf.complex64, tf.complex64),
])
def test_truediv_result_dtype(sess, dtype, want):
    x = [7, 5] if dtype.is_unsigned else [7, -7]
    q = tf.truediv(tf.constant(x, dtype), tf.constant([2, 2], dtype))
    assert q.dtype == want and q.op.type == "RealDiv" and q.op.name == "truediv"
    got = sess.run(q)
    assert got.dtype == want.as_numpy_dtype
    np.testing.assert_allclose(got.real, np.divide(x, 2))


def test_truediv_rejects_bool():
    with pytest.raises(TypeError, match="truediv"):
        tf.truediv(tf.constant([True]), True)


def test_division_semantics_of_negatives(sess):
    x = tf.constant([7, -7, 7, -7])
    y = tf.constant([3, 3, -3, -3])
    got = sess.run({"div": tf.div(x, y), "floordiv": tf.floordiv(x, y),
                    "floormod": tf.floormod(x, y), "mod": tf.mod(x, y),
                    "truncatediv": tf.truncatediv(x, y), "truncatemod": tf.truncatemod(x, y),
                    "divide": tf.divide(x, y)})
    assert got["div"].tolist() == [2, -3, -3, 2]
    assert got["floordiv"].tolist() == [2, -3, -3, 2]
    assert got["floormod"].tolist() == [1, 2, -2, -1]
    assert got["mod"].tolist() == [1, 2, -2, -1]
    assert got["truncatediv"].tolist() == [2, -2, -2, 2]
    assert got["truncatemod"].tolist() == [1, -1, 1, -1]
    np.testing.assert_allclose(got["divide"], [7 / 3, -7 / 3, -7 / 3, 7 / 3])
    assert got["div"].dtype == np.int32 and got["divide"].dtype == np.float64
    fx = tf.constant([7.0, -7.0])
    assert sess.run(tf.div(fx, 2.0)).tolist() == [3.5, -3.5]
    assert sess.run(tf.floordiv(fx, 2.0)).tolist() == [3.0, -4.0]
    assert sess.run(tf.floormod(fx, -3.0)).tolist() == [-2.0, -1.0]


def test_division_op_names():
    x = tf.placeholder(tf.int32, [2])
    assert tf.div(x, 2).op.name == "div" and tf.div(x, 2).op.type == "FloorDiv"
    assert tf.floordiv(x, 2).op.name == "floordiv"
    assert [t.op.type for t in tf.truediv(x, 2).op.inputs] == ["Cast", "Cast"]


@pytest.mark.parametrize("fn, error", [
    (tf.floordiv, InvalidArgumentError), (tf.floormod, InvalidArgumentError),
    (tf.truncatediv, tf.errors.InternalError), (tf.truncatemod, tf.errors.InternalError)])
def test_integer_division_by_zero_is_invalid_argument(sess, fn, error):
    # TF 2.15's truncating kernels report INTERNAL (checked with the oracle)
    y = tf.placeholder(tf.int32, [2])
    with pytest.raises(error, match="Integer division by zero"):
        sess.run(fn(tf.constant([1, 2]), y), {y: [1, 0]})


def test_float_division_by_zero_is_inf_without_warning(sess):
    with np.errstate(all="raise"):
        got = sess.run(tf.truediv(tf.constant([1.0, -1.0, 0.0]), 0.0))
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


def test_integer_pow_negative_exponent_fails(sess):
    with pytest.raises(InvalidArgumentError, match="negative integer powers"):
        sess.run(tf.pow(tf.constant([2, 3]), tf.constant([2, -1])))


# -- cast and clipping --------------------------------------------------------------------
def test_cast_values_and_dtype(sess):
    x = tf.constant([1.7, -1.7, 0.0, 2.5])
    got = sess.run({"i": tf.cast(x, tf.int32), "b": tf.cast(x, tf.bool),
                    "u": tf.cast(tf.constant([3, 255]), tf.uint8),
                    "c": tf.cast(tf.constant([1 + 2j]), tf.float32),
                    "f": tf.cast(tf.constant([True, False]), tf.float64)})
    assert got["i"].tolist() == [1, -1, 0, 2] and got["i"].dtype == np.int32
    assert got["b"].tolist() == [True, True, False, True]
    assert got["u"].dtype == np.uint8 and got["u"].tolist() == [3, 255]
    assert got["c"].tolist() == [1.0] and got["c"].dtype == np.float32
    assert got["f"].tolist() == [1.0, 0.0]


def test_cast_nan_to_int_matches_tf(sess):
    assert sess.run(tf.cast(tf.constant([np.nan]), tf.int32)).tolist() == [-2**31]


def test_cast_graph_structure():
    x = tf.placeholder(tf.float32, [None, 3])
    c = tf.cast(x, "int64")
    assert c.op.type == "Cast" and c.op.name == "Cast" and c.dtype == tf.int64
    assert tf.cast(x, tf.float32) is x
    assert c.op.get_attr("SrcT") == tf.float32 and c.op.get_attr("DstT") == tf.int64
    assert c.shape.as_list() == [None, 3]
    s = tf.cast(tf.constant(["1"]), tf.float32)  # TF builds it; its kernel refuses
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float32"):
        tf.Session().run(s)


def test_to_helpers(sess):
    x = tf.constant([1.9, -1.9])
    with pytest.warns(DeprecationWarning, match="tf.cast"):
        outs = [tf.to_float(tf.constant([1])), tf.to_double(x), tf.to_int32(x),
                tf.to_int64(x)]
    assert [o.dtype for o in outs] == [tf.float32, tf.float64, tf.int32, tf.int64]
    assert outs[0].op.name == "ToFloat" and outs[2].op.name == "ToInt32"
    got = sess.run(outs)
    assert got[2].tolist() == [1, -1] and got[3].tolist() == [1, -1]


def test_clip_by_value(sess):
    x = tf.constant([[1, 5, 9], [-3, 4, 12]])
    out = tf.clip_by_value(x, 2, 6)
    assert out.op.name == "clip_by_value" and out.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(out), np.clip([[1, 5, 9], [-3, 4, 12]], 2, 6))
    lo = tf.constant([0.0, 1.0, 2.0])
    got = sess.run(tf.clip_by_value(tf.constant([[-1.0, 0.5, 3.0]]), lo, 2.5))
    np.testing.assert_allclose(got, [[0.0, 1.0, 2.5]])
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.clip_by_value(p, 0.0, 1.0).shape.as_list() == [None, 3]
    with pytest.raises(TypeError, match=r"Maximum|Minimum"):
        tf.clip_by_value(x, 2.5, 6)
    with pytest.raises(ValueError, match="clip_by_value"):
        tf.clip_by_value(tf.placeholder(tf.float32, [3]), tf.zeros([2, 3]), 1.0)


# -- matmul -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64",
                                   "float16"])
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True),
                                        (True, True)])
def test_matmul_2d(sess, dtype, ta, tb):
    a = _values(dtype, (3, 2) if ta else (2, 3))
    b = _values(dtype, (4, 3) if tb else (3, 4))
    out = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
    assert out.op.type == "MatMul" and out.shape.as_list() == [2, 4]
    got = sess.run(out)
    want = (a.T if ta else a) @ (b.T if tb else b)
    assert got.dtype == want.dtype
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_matmul_adjoint_conjugates(sess):
    a = _values("complex128", (3, 2))
    b = _values("complex128", (4, 3))
    got = sess.run(tf.matmul(a, b, adjoint_a=True, adjoint_b=True))
    np.testing.assert_allclose(got, a.conj().T @ b.conj().T)
    got_t = sess.run(tf.matmul(a, b, transpose_a=True, transpose_b=True))
    np.testing.assert_allclose(got_t, a.T @ b.T)
    r = _values("float32", (3, 2))
    assert sess.run(tf.matmul(r, r, adjoint_a=True)).shape == (2, 2)
    with pytest.raises(ValueError, match="transpose_a and adjoint_a"):
        tf.matmul(a, b, transpose_a=True, adjoint_a=True)


def test_matmul_runs_numpy_blas_on_views_without_copies(sess, monkeypatch):
    from flowgraph.backends.cpu import kernels_math

    calls = []
    real = kernels_math.matmul_into

    def spy(a, b, out):
        calls.append((a.flags.c_contiguous, b.flags.f_contiguous, out.dtype))
        return real(a, b, out)

    monkeypatch.setattr(kernels_math, "matmul_into", spy)
    a = tf.placeholder(tf.float64, [None, 3])
    w = _values("float64", (5, 3))
    out = tf.matmul(a, tf.constant(w), transpose_b=True)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(sess.run(out, {a: x}), x @ w.T)
    # the transposed operand reaches BLAS as a view (F-contiguous), not a copy
    assert calls == [(True, True, np.dtype(np.float64))]


def test_matmul_strided_operands(sess):
    big = _values("float32", (6, 8))
    a = tf.strided_slice(tf.constant(big), [0, 0], [6, 8], [2, 2])  # neither C nor F order
    w = _values("float32", (4, 3))
    np.testing.assert_allclose(sess.run(tf.matmul(a, tf.constant(w))), big[::2, ::2] @ w,
                               rtol=1e-5)


def test_matmul_batched_broadcasting(sess):
    a = _values("float32", (5, 1, 2, 3))
    b = _values("float32", (7, 3, 4))
    out = tf.matmul(a, b)
    assert out.op.type == "BatchMatMulV2" and out.shape.as_list() == [5, 7, 2, 4]
    np.testing.assert_allclose(sess.run(out), np.matmul(a, b), rtol=1e-5)
    c = _values("complex64", (6, 3, 2))
    d = _values("complex64", (6, 4, 3))
    got = sess.run(tf.matmul(c, d, adjoint_a=True, adjoint_b=True))
    want = np.matmul(np.conj(np.swapaxes(c, -1, -2)), np.conj(np.swapaxes(d, -1, -2)))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got = sess.run(tf.matmul(c, d, transpose_a=True, transpose_b=True))
    np.testing.assert_allclose(got, np.matmul(np.swapaxes(c, -1, -2), np.swapaxes(d, -1, -2)),
                               rtol=1e-5)


def test_matmul_shape_inference_partial():
    f = tf.float32
    assert tf.matmul(tf.placeholder(f, [None, 3]), tf.placeholder(f, [3, None])
                     ).shape.as_list() == [None, None]
    assert tf.matmul(tf.placeholder(f, [None, 2, 3]), tf.placeholder(f, [3, 4])
                     ).shape.as_list() == [None, 2, 4]
    assert tf.matmul(tf.placeholder(f, [6, 3, 2]), tf.placeholder(f, [6, 5, 3]),
                     transpose_a=True, adjoint_b=True).shape.as_list() == [6, 2, 5]
    unknown = tf.matmul(tf.placeholder(f), tf.placeholder(f, [3, 4]))
    assert unknown.op.type == "BatchMatMulV2" and unknown.shape.ndims is None


def test_matmul_errors(sess):
    f = tf.float32
    with pytest.raises(ValueError, match=r"'MatMul' \(MatMul\).*inner dimensions differ"):
        tf.matmul(tf.placeholder(f, [2, 3]), tf.placeholder(f, [4, 5]))
    with pytest.raises(ValueError, match="rank-2"):
        tf.matmul(tf.placeholder(f, [3]), tf.placeholder(f, [3, 4]))
    with pytest.raises(ValueError, match="batch dimensions"):
        tf.matmul(tf.placeholder(f, [5, 2, 3]), tf.placeholder(f, [7, 3, 4]))
    with pytest.raises(TypeError, match="MatMul"):
        tf.matmul(tf.placeholder(f, [2, 3]), tf.placeholder(tf.float64, [3, 4]))
    with pytest.raises(TypeError, match="MatMul"):
        tf.matmul(tf.placeholder(tf.bool, [2, 3]), tf.placeholder(tf.bool, [3, 4]))
    a, b = tf.placeholder(f, [None, None]), tf.placeholder(f, [None, None])
    with pytest.raises(InvalidArgumentError, match="Matrix size-incompatible"):
        sess.run(tf.matmul(a, b), {a: np.ones((2, 3)), b: np.ones((4, 5))})


# -- tensordot, einsum --------------------------------------------------------------------
def test_tensordot_values_and_shapes(sess):
    a, b, c = _values("float64", (2, 3, 4)), _values("float64", (4, 5)), \
        _values("float64", (4, 3, 5))
    outs = {"int": tf.tensordot(a, b, 1), "pair": tf.tensordot(a, c, [[1, 2], [1, 0]]),
            "zero": tf.tensordot(a, b, 0), "neg": tf.tensordot(a, c, [[-1], [0]]),
            "flat": tf.tensordot(a, c, [2, 0])}
    assert outs["int"].shape.as_list() == [2, 3, 5]
    assert outs["pair"].shape.as_list() == [2, 5]
    assert outs["zero"].shape.as_list() == [2, 3, 4, 4, 5]
    got = sess.run(outs)
    np.testing.assert_allclose(got["int"], np.tensordot(a, b, 1))
    np.testing.assert_allclose(got["pair"], np.tensordot(a, c, [[1, 2], [1, 0]]))
    np.testing.assert_allclose(got["zero"], np.tensordot(a, b, 0))
    np.testing.assert_allclose(got["neg"], np.tensordot(a, c, [[2], [0]]))
    np.testing.assert_allclose(got["flat"], np.tensordot(a, c, [[2], [0]]))
    # TensorFlow's graph: reshapes around one MatMul (tests/compat/test_graph_layout_tf215_2.py)
    assert outs["pair"].op.type == "MatMul" and outs["int"].op.type == "Reshape"
    fused = math_ops.fused_tensordot(a, c, [[1, 2], [1, 0]])  # flowgraph's one-op form
    assert fused.op.get_attr("axes") == [[1, 2], [1, 0]]
    np.testing.assert_allclose(sess.run(fused), np.tensordot(a, c, [[1, 2], [1, 0]]))


def test_tensordot_partial_shapes_and_errors():
    f = tf.float32
    out = tf.tensordot(tf.placeholder(f, [None, 3, 4]), tf.placeholder(f, [4, None]), 1)
    assert out.shape.as_list() == [None, 3, None]
    assert tf.tensordot(tf.placeholder(f), tf.placeholder(f, [4, 5]), 1).shape.ndims is None
    with pytest.raises(ValueError, match="inner dimensions differ"):
        tf.tensordot(tf.placeholder(f, [2, 3]), tf.placeholder(f, [4, 5]), 1)
    with pytest.raises(ValueError, match="contracted dimensions differ"):
        math_ops.fused_tensordot(tf.placeholder(f, [2, 3]), tf.placeholder(f, [4, 5]), 1)
    with pytest.raises(ValueError, match="different number"):
        tf.tensordot(tf.placeholder(f, [2, 3]), tf.placeholder(f, [3, 5]), [[1], [0, 1]])
    with pytest.raises(ValueError, match="axes"):
        tf.tensordot(tf.placeholder(f, [2, 3]), tf.placeholder(f, [3, 5]), 3)
    with pytest.raises(TypeError, match="Tensordot"):
        tf.tensordot(tf.placeholder(f, [2, 3]), tf.placeholder(tf.int32, [3, 5]), 1)


@pytest.mark.parametrize(("eq", "shapes"), [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ba", [(2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("b i j , b j k -> b i k", [(5, 2, 3), (5, 3, 4)]),
])
def test_einsum_matches_numpy(sess, eq, shapes):
    arrays = [_values("float64", s) for s in shapes]
    out = tf.einsum(eq, *arrays)
    want = np.einsum(eq.replace(" ", ""), *arrays)
    assert out.op.type == "Einsum" and out.shape.as_list() == list(want.shape)
    got = sess.run(out)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_einsum_shape_inference_partial():
    f = tf.float32
    assert tf.einsum("bij,bjk->bik", tf.placeholder(f, [None, 2, 3]),
                     tf.placeholder(f, [7, 3, None])).shape.as_list() == [7, 2, None]
    assert tf.einsum("...ij,...jk->...ik", tf.placeholder(f, [None, 2, 3]),
                     tf.placeholder(f, [7, 3, 4])).shape.as_list() == [7, 2, 4]
    assert tf.einsum("ij,jk->ik", tf.placeholder(f), tf.placeholder(f, [3, 4])
                     ).shape.as_list() == [None, 4]
    assert tf.einsum("...ij->...", tf.placeholder(f)).shape.ndims is None


def test_einsum_errors():
    f = tf.float32
    with pytest.raises(ValueError, match="Dimensions must be equal for label 'j'"):
        tf.einsum("ij,jk->ik", tf.placeholder(f, [2, 3]), tf.placeholder(f, [4, 5]))
    with pytest.raises(ValueError, match="expecting 2"):
        tf.einsum("ij,jk->ik", tf.placeholder(f, [2, 3]))
    with pytest.raises(ValueError, match="rank"):
        tf.einsum("ijk->i", tf.placeholder(f, [2, 3]))
    with pytest.raises(ValueError, match="does not appear"):
        tf.einsum("ij->iz", tf.placeholder(f, [2, 3]))
    with pytest.raises(TypeError, match="Einsum"):
        tf.einsum("ij,jk->ik", tf.placeholder(f, [2, 3]), tf.placeholder(tf.int32, [3, 4]))


def test_expensive_cost_hints():
    from flowgraph.framework.registry import OpCost, get_op_def

    for op in ("MatMul", "BatchMatMulV2", "BatchMatMul", "Einsum", "Tensordot", "Conv2D",
               "Conv2DBackpropInput", "Conv2DBackpropFilter"):
        assert get_op_def(op).cost is OpCost.BLAS  # expensive, parallel inside (BLAS threads)
    for op in ("GatherV2", "DepthwiseConv2dNative", "ApplyAdam"):
        assert get_op_def(op).cost is OpCost.EXPENSIVE
    for op in ("Add", "AddV2", "Exp", "Cast", "Less", "FloorMod"):
        assert get_op_def(op).cost is OpCost.CHEAP


def test_non_differentiable_ops_are_declared():
    from flowgraph.framework.registry import get_op_def

    for op in ("Equal", "Less", "LogicalAnd", "IsNan", "FloorDiv"):
        assert get_op_def(op).differentiable is False


# -- Tensor operators ---------------------------------------------------------------------
def test_operators_values_and_names(sess):
    i = tf.constant([7, -7])
    f = tf.constant([2.0, 3.0])
    b = tf.constant([True, False])
    outs = {
        "add": i + 1, "radd": 1 + i, "sub": i - 1, "rsub": 1 - i, "mul": i * 2,
        "rmul": 2 * i, "truediv": i / 2, "rtruediv": 14 / i, "floordiv": i // 2,
        "rfloordiv": 15 // i, "mod": i % 3, "rmod": 15 % i, "pow": f ** 2, "rpow": 2 ** f,
        "neg": -i, "abs": abs(i), "lt": i < 0, "le": i <= 7, "gt": i > 0, "ge": i >= -7,
        "rlt": 0 > i, "and": b & True, "or": b | False, "xor": b ^ True, "rand": True & b,
        "invert": ~b, "matmul": tf.ones([2, 3]) @ tf.ones([3, 4]),
        "rmatmul": np.ones((2, 3), np.float32) @ tf.ones([3, 4]),
        "np_radd": np.array([1, 2], np.int32) + i,
    }
    got = sess.run(outs)
    assert got["add"].tolist() == [8, -6] and got["radd"].tolist() == [8, -6]
    assert got["sub"].tolist() == [6, -8] and got["rsub"].tolist() == [-6, 8]
    assert got["mul"].tolist() == [14, -14] and got["rmul"].tolist() == [14, -14]
    assert got["truediv"].tolist() == [3.5, -3.5] and got["truediv"].dtype == np.float64
    assert got["rtruediv"].tolist() == [2.0, -2.0]
    assert got["floordiv"].tolist() == [3, -4] and got["rfloordiv"].tolist() == [2, -3]
    assert got["mod"].tolist() == [1, 2] and got["rmod"].tolist() == [1, -6]
    assert got["pow"].tolist() == [4.0, 9.0] and got["rpow"].tolist() == [4.0, 8.0]
    assert got["neg"].tolist() == [-7, 7] and got["abs"].tolist() == [7, 7]
    assert got["lt"].tolist() == [False, True] and got["le"].tolist() == [True, True]
    assert got["gt"].tolist() == [True, False] and got["ge"].tolist() == [True, True]
    assert got["rlt"].tolist() == [False, True]
    assert got["and"].tolist() == [True, False] and got["or"].tolist() == [True, False]
    assert got["xor"].tolist() == [False, True] and got["rand"].tolist() == [True, False]
    assert got["invert"].tolist() == [False, True]
    assert got["matmul"].shape == (2, 4) and got["rmatmul"].shape == (2, 4)
    assert got["np_radd"].tolist() == [8, -5]
    names = {k: v.op.name for k, v in outs.items()}
    assert names["add"] == "add" and names["sub"] == "sub" and names["mul"] == "mul"
    assert names["truediv"] == "truediv" and names["floordiv"] == "floordiv"
    assert names["mod"] == "mod" and names["pow"] == "pow" and names["matmul"] == "matmul"
    assert outs["truediv"].op.type == "RealDiv" and outs["mod"].op.type == "FloorMod"
    assert outs["neg"].op.type == "Neg" and outs["lt"].op.type == "Less"


def test_operators_keep_identity_equality():
    x = tf.constant([1])
    y = tf.constant([1])
    assert (x == x) is True and (x == y) is False and (x != y) is True
    assert {x: 1}[x] == 1


def test_operator_errors():
    i = tf.constant([1, 2])
    with pytest.raises(TypeError, match="LogicalNot"):
        _ = ~i
    with pytest.raises(TypeError, match="LogicalAnd"):
        _ = i & 1
    with pytest.raises(TypeError, match="'AddV2'"):
        _ = i + 1.5
    with pytest.raises(TypeError):
        _ = i + object()


def test_operator_defers_to_operands_with_reflected_method():
    class Other:
        def __radd__(self, other):
            return "handled"

    assert tf.constant([1]) + Other() == "handled"


# -- namespaces, import hygiene, docstrings -----------------------------------------------
def test_namespaces():
    assert tf.math.floormod is tf.floormod and tf.math.mod is tf.mod
    assert tf.math.reduce_sum is tf.reduce_sum and tf.math.erf is tf.erf
    assert tf.linalg.matmul is tf.matmul and tf.linalg.einsum is tf.einsum
    assert tf.linalg.tensordot is tf.tensordot
    for name in math_ops.__all__:
        assert hasattr(tf, name), name


def test_scipy_not_imported_by_import_flowgraph():
    code = ("import sys, flowgraph as tf; tf.erf(tf.constant([1.0])); "
            "tf.matmul(tf.ones([2, 3]), tf.ones([3, 2])); "
            "assert 'scipy' not in sys.modules, 'scipy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_docstring_examples():
    result = doctest.testmod(math_ops, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 40


def test_div_no_nan(sess):
    x = np.array([[1.0, -2.0, 0.0], [np.inf, 3.0, np.nan]])
    y = np.array([0.0, 4.0, 0.0])
    got = sess.run(tf.div_no_nan(x, y))  # broadcasting, 0 wherever y == 0 (inf, nan too)
    want = np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y))
    np.testing.assert_array_equal(got, want)
    assert tf.math.divide_no_nan is tf.div_no_nan
    assert sess.run(tf.div_no_nan(np.float32(3), np.float32(0))) == 0
    q = tf.div_no_nan(tf.constant([1, 2]), tf.constant([1, 0]))  # ints divide as float64
    assert q.dtype == tf.float64 and sess.run(q).tolist() == [1.0, 0.0]
    a, b = tf.constant([1.0, 2.0]), tf.constant([0.0, 4.0])
    ga, gb = sess.run(tf.gradients(tf.div_no_nan(a, b), [a, b]))
    np.testing.assert_allclose(ga, [0.0, 0.25])   # no inf/nan from the zero denominator
    np.testing.assert_allclose(gb, [0.0, -0.125])
