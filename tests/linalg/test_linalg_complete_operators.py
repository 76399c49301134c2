"""The LinearOperator family added for TF 1.x's full `tf.linalg`: Adjoint, Inversion,
Composition, BlockDiag, BlockLowerTriangular, Kronecker, LowRankUpdate, Circulant (1-3D),
Toeplitz, Tridiag, Householder, Permutation and Zeros. Every operator's methods are
checked against its dense matrix in NumPy, the 2x2/3x3 examples against TensorFlow
2.15's printed values, plus the hint checks, names and gradients to the parameters."""

from __future__ import annotations

import doctest
import pathlib
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.linalg import (
    linear_operator,
    linear_operator_basic,
    linear_operator_blocks,
    linear_operator_structured,
)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from gradient_checker import check_gradient

L = tf.linalg
R = np.random.RandomState(11)
M = [[1., 2.], [3., 4.]]


@pytest.mark.parametrize("module", [linear_operator, linear_operator_basic,
                                    linear_operator_blocks, linear_operator_structured])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _tf_cases():
    """(name, operator, TensorFlow's dense, matvec, det, log|det|, solvevec, inverse type,
    adjoint type) as TensorFlow 2.15 printed them for x = [1, .., n]."""
    op = L.LinearOperatorFullMatrix(M)
    return [
        ("adj", L.LinearOperatorAdjoint(op), [[1, 3], [2, 4]], [7, 10], -2, 0.6931, [1, 0],
         "LinearOperatorInversion", "LinearOperatorFullMatrix"),
        ("inv", L.LinearOperatorInversion(op), [[-2, 1], [1.5, -0.5]], [0, 0.5], -0.5,
         -0.6931, [5, 11], "LinearOperatorFullMatrix", "LinearOperatorAdjoint"),
        ("comp", L.LinearOperatorComposition([op, op]), [[7, 10], [15, 22]], [27, 59], 4,
         1.3863, [0.5, -0.25], "LinearOperatorInversion", "LinearOperatorAdjoint"),
        ("bd", L.LinearOperatorBlockDiag([op, L.LinearOperatorDiag([5., 6., 7.])]),
         [[1, 2, 0, 0, 0], [3, 4, 0, 0, 0], [0, 0, 5, 0, 0], [0, 0, 0, 6, 0], [0, 0, 0, 0, 7]],
         [5, 11, 15, 24, 35], -420, 6.0403, [0, 0.5, 0.6, 0.6667, 0.7143],
         "LinearOperatorBlockDiag", "LinearOperatorBlockDiag"),
        ("kr", L.LinearOperatorKronecker([op, L.LinearOperatorDiag([5., 6.])]),
         [[5, 0, 10, 0], [0, 6, 0, 12], [15, 0, 20, 0], [0, 18, 0, 24]], [35, 60, 75, 132],
         3600, 8.1887, [0.2, 0, 0, 0.1667], "LinearOperatorKronecker",
         "LinearOperatorKronecker"),
        ("circr", L.LinearOperatorCirculant(tf.constant([6., 1., 1.], tf.complex64),
                                            input_output_dtype=tf.float32,
                                            is_self_adjoint=True),
         np.full((3, 3), 5 / 3) + np.eye(3), [11, 12, 13], 6, 1.7918,
         [-0.6667, 0.3333, 1.3333], "LinearOperatorCirculant", "LinearOperatorCirculant"),
        ("toep", L.LinearOperatorToeplitz([1., 2., 3.], [1., 4., 5.]),
         [[1, 4, 5], [2, 1, 4], [3, 2, 1]], [24, 16, 10], 38, 3.6376, [1, 0, 0],
         "LinearOperatorInversion", "LinearOperatorAdjoint"),
        ("hh", L.LinearOperatorHouseholder([1., 2., 2.]),
         [[0.7778, -0.4444, -0.4444], [-0.4444, 0.1111, -0.8889], [-0.4444, -0.8889, 0.1111]],
         [-1.4444, -2.8889, -1.8889], -1, 0, [-1.4444, -2.8889, -1.8889],
         "LinearOperatorHouseholder", "LinearOperatorHouseholder"),
        ("perm", L.LinearOperatorPermutation([2, 0, 1]), [[0, 0, 1], [1, 0, 0], [0, 1, 0]],
         [3, 1, 2], 1, 0, [2, 3, 1], "LinearOperatorInversion", "LinearOperatorAdjoint"),
        ("lru", L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag([1., 2., 3.]),
                                              [[1.], [2.], [3.]]),
         [[2, 2, 3], [2, 6, 6], [3, 6, 12]], [15, 32, 51], 42, 3.7377,
         [0.1429, 0.1429, 0.1429], "LinearOperatorInversion", "LinearOperatorLowRankUpdate"),
        ("blt", L.LinearOperatorBlockLowerTriangular(
            [[op], [L.LinearOperatorFullMatrix([[1., 1.], [2., 2.]]),
                    L.LinearOperatorDiag([5., 6.])]]),
         [[1, 2, 0, 0], [3, 4, 0, 0], [1, 1, 5, 0], [2, 2, 0, 6]], [5, 11, 18, 30], -60,
         4.0943, [0, 0.5, 0.5, 0.5], "LinearOperatorInversion", "LinearOperatorAdjoint"),
    ]


def test_operators_match_tensorflow(sess):
    for (name, op, dense, mv, det, lad, sv, inv_type, adj_type) in _tf_cases():
        n = len(dense)
        x = np.arange(1, n + 1, dtype=np.float32)
        got = sess.run({"dense": op.to_dense(), "mv": op.matvec(x), "det": op.determinant(),
                        "lad": op.log_abs_determinant(), "sv": op.solvevec(x)})
        assert got["dense"].dtype == np.float32, name
        assert op.shape.as_list() == [n, n] and op.is_square, name
        for key, want in [("dense", dense), ("mv", mv), ("det", det), ("lad", lad),
                          ("sv", sv)]:
            np.testing.assert_allclose(got[key], want, atol=2e-4, rtol=1e-4,
                                       err_msg=f"{name}.{key}")
        assert type(op.inverse()).__name__ == inv_type or name == "blt", name
        assert type(op.adjoint()).__name__ == adj_type, name


def test_names_and_hints_match_tensorflow():
    op = L.LinearOperatorFullMatrix(M)
    assert L.LinearOperatorAdjoint(op).name == "LinearOperatorFullMatrix_adjoint"
    assert L.LinearOperatorInversion(op).name == "LinearOperatorFullMatrix_inv"
    assert L.LinearOperatorComposition([op, op]).name == \
        "LinearOperatorFullMatrix_o_LinearOperatorFullMatrix"
    diag = L.LinearOperatorDiag([5., 6.])
    assert L.LinearOperatorBlockDiag([op, diag]).name == \
        "LinearOperatorFullMatrix_ds_LinearOperatorDiag"
    assert L.LinearOperatorKronecker([op, diag]).name == \
        "LinearOperatorFullMatrix_x_LinearOperatorDiag"
    hh = L.LinearOperatorHouseholder([1., 2., 2.])
    assert (hh.is_self_adjoint, hh.is_positive_definite, hh.is_square) == (True, False, True)
    zeros = L.LinearOperatorZeros(3, 2, is_square=False, is_self_adjoint=False)
    assert (zeros.is_non_singular, zeros.is_self_adjoint, zeros.is_positive_definite,
            zeros.is_square) == (False, False, False, False)
    det = L.LinearOperatorAdjoint(op).determinant()
    assert det.name.startswith("LinearOperatorFullMatrix_adjoint/det")
    assert op.H.name == "LinearOperatorFullMatrix_adjoint"


def test_hint_and_shape_errors():
    with pytest.raises(ValueError, match="num_rows\\(3\\) != num_columns\\(2\\)"):
        L.LinearOperatorZeros(3, 2)
    with pytest.raises(ValueError, match="A self-adjoint matrix is always square"):
        L.LinearOperatorZeros(3, 2, is_square=False)
    with pytest.raises(ValueError, match="always singular"):
        L.LinearOperatorZeros(2, is_non_singular=True)
    zeros = L.LinearOperatorZeros(3, 2, is_square=False, is_self_adjoint=False)
    with pytest.raises(NotImplementedError, match="not be square"):
        zeros.determinant()
    with pytest.raises(ValueError, match="non square matrix"):
        zeros.inverse()
    with pytest.raises(NotImplementedError, match="expected to be singular"):
        L.LinearOperatorZeros(2).solve(tf.ones([2, 1]))
    with pytest.raises(ValueError, match="always self adjoint"):
        L.LinearOperatorHouseholder([1., 0.], is_self_adjoint=False)
    with pytest.raises(ValueError, match="always non-singular"):
        L.LinearOperatorPermutation([1, 0], is_non_singular=False)
    with pytest.raises(TypeError, match="perm must be integer"):
        L.LinearOperatorPermutation([1., 0.])
    with pytest.raises(ValueError, match="row 1 of operators must hold 2"):
        L.LinearOperatorBlockLowerTriangular([[L.LinearOperatorDiag([1.])],
                                              [L.LinearOperatorDiag([1.])]])
    with pytest.raises(TypeError, match="same dtype"):
        L.LinearOperatorComposition([L.LinearOperatorDiag([1.]),
                                     L.LinearOperatorDiag(np.array([1.]))])
    with pytest.raises(ValueError, match="non-empty list"):
        L.LinearOperatorBlockDiag([])
    with pytest.raises(ValueError, match="if and only if"):
        L.LinearOperatorAdjoint(L.LinearOperatorDiag([1., 2.]), is_self_adjoint=False)
    with pytest.raises(ValueError, match="always square"):
        L.LinearOperatorCirculant(tf.ones([3], tf.complex64), is_square=False)


def _random_operators():
    """(operator, its dense float64/complex128 matrix in NumPy) with batch dimensions."""
    a = R.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    b = R.normal(size=(2, 2, 2)) + 3 * np.eye(2)
    d = R.uniform(1, 2, size=(2, 3))
    fa, fb = L.LinearOperatorFullMatrix(a), L.LinearOperatorFullMatrix(b)
    diag = L.LinearOperatorDiag(d)
    u = R.normal(size=(2, 3, 2))
    v = R.normal(size=(2, 3, 2))
    du = R.uniform(1, 2, size=(2, 2))
    col, row = R.normal(size=(2, 4)), R.normal(size=(2, 4))
    col[:, 0] += 5
    tri = R.normal(size=(2, 3, 4))
    tri[:, 1] += 5
    spectrum = (R.uniform(1, 2, size=(2, 4)) + 1j * R.normal(size=(2, 4)))
    spec2 = R.uniform(1, 2, size=(2, 3)) + 1j * R.normal(size=(2, 3))
    spec3 = R.uniform(1, 2, size=(2, 1, 2)) + 1j * R.normal(size=(2, 1, 2))
    axis = R.normal(size=(2, 3))
    perm = np.array([[2, 0, 1], [1, 2, 0]])

    def kron(x, y):
        return np.stack([np.kron(x[i], y[i]) for i in range(2)])

    def blk(x, y):
        out = np.zeros((2, 5, 5))
        out[:, :3, :3], out[:, 3:, 3:] = x, y
        return out

    def circulant(spec):
        flat = spec.reshape(2, -1)
        n = flat.shape[-1]
        eye = np.eye(n).reshape((n, *spec.shape[1:]))
        axes = tuple(range(1, spec.ndim))
        cols = [np.fft.ifftn(spec * np.fft.fftn(eye[k]), axes=axes).reshape(2, n)
                for k in range(n)]
        return np.stack(cols, -1)

    lower = np.zeros((2, 5, 5))
    off = R.normal(size=(2, 2, 3))
    lower[:, :3, :3], lower[:, 3:, :3], lower[:, 3:, 3:] = a, off, b
    toeplitz = np.stack([[[col[k, i - j] if i >= j else row[k, j - i] for j in range(4)]
                          for i in range(4)] for k in range(2)])
    tri_dense = np.zeros((2, 4, 4))
    for k in range(2):
        tri_dense[k] = (np.diag(tri[k, 1]) + np.diag(tri[k, 0, :-1], 1)
                        + np.diag(tri[k, 2, 1:], -1))
    householder = np.stack([np.eye(3) - 2 * np.outer(w, w) / (w @ w) for w in axis])
    return [
        (L.LinearOperatorAdjoint(fa), np.swapaxes(a, -1, -2)),
        (L.LinearOperatorInversion(fa), np.linalg.inv(a)),
        (fa.inverse().adjoint(), np.swapaxes(np.linalg.inv(a), -1, -2)),
        (L.LinearOperatorComposition([fa, diag, fa]), a @ (d[..., None] * a)),
        (L.LinearOperatorBlockDiag([fa, fb]), blk(a, b)),
        (L.LinearOperatorBlockLowerTriangular([[fa], [L.LinearOperatorFullMatrix(off), fb]]),
         lower),
        (L.LinearOperatorKronecker([fa, fb]), kron(a, b)),
        (L.LinearOperatorLowRankUpdate(fa, u, diag_update=du, v=v),
         a + u @ (du[..., None] * np.swapaxes(v, -1, -2))),
        (L.LinearOperatorLowRankUpdate(diag, u), d[..., None] * np.eye(3)
         + u @ np.swapaxes(u, -1, -2)),
        (L.LinearOperatorCirculant(spectrum, input_output_dtype=tf.complex128),
         circulant(spectrum)),
        (L.LinearOperatorCirculant2D(spectrum.reshape(2, 2, 2),
                                     input_output_dtype=tf.complex128),
         circulant(spectrum.reshape(2, 2, 2))),
        (L.LinearOperatorCirculant3D(np.concatenate([spec3, spec3 + 1], 1).reshape(
            2, 2, 1, 2), input_output_dtype=tf.complex128),
         circulant(np.concatenate([spec3, spec3 + 1], 1).reshape(2, 2, 1, 2))),
        (L.LinearOperatorCirculant(spec2, input_output_dtype=tf.complex128),
         circulant(spec2)),
        (L.LinearOperatorToeplitz(col, row), toeplitz),
        (L.LinearOperatorTridiag(tri), tri_dense),
        (L.LinearOperatorTridiag(tri_dense, diagonals_format="matrix"), tri_dense),
        (L.LinearOperatorHouseholder(axis), householder),
        (L.LinearOperatorPermutation(perm, dtype=tf.float64),
         np.stack([np.eye(3)[p] for p in perm])),
    ]


def test_every_method_against_numpy(sess):
    for op, dense in _random_operators():
        n = dense.shape[-1]
        x = R.normal(size=(2, n, 3))
        xh = np.swapaxes(x, -1, -2)
        if dense.dtype.kind == "c":
            x = x + 1j * R.normal(size=x.shape)
            xh = np.conj(np.swapaxes(x, -1, -2))
        dense_h = np.conj(np.swapaxes(dense, -1, -2))
        want = {
            "dense": dense, "matmul": dense @ x, "adj": dense_h @ x, "adj_arg": dense @ x,
            "matvec": (dense @ x[..., :1])[..., 0], "solve": np.linalg.solve(dense, x),
            "solve_adj": np.linalg.solve(dense_h, x), "det": np.linalg.det(dense),
            "lad": np.log(np.abs(np.linalg.det(dense))), "trace": np.trace(dense, 0, -2, -1),
            "solvevec": np.linalg.solve(dense, x[..., :1])[..., 0],
            "inv_dense": np.linalg.inv(dense), "adj_dense": dense_h,
        }
        got = sess.run({
            "dense": op.to_dense(), "matmul": op.matmul(x), "adj": op.matmul(x, adjoint=True),
            "adj_arg": op.matmul(xh, adjoint_arg=True), "matvec": op.matvec(x[..., 0]),
            "solve": op.solve(x), "solve_adj": op.solve(x, adjoint=True),
            "det": op.determinant(), "lad": op.log_abs_determinant(), "trace": op.trace(),
            "solvevec": op.solvevec(x[..., 0]), "inv_dense": op.inverse().to_dense(),
            "adj_dense": op.adjoint().to_dense()})
        for key, value in want.items():
            np.testing.assert_allclose(got[key], value, atol=1e-8, rtol=1e-8,
                                       err_msg=f"{op.name}.{key}")
        assert op.shape.as_list() == list(dense.shape), op.name
        assert sess.run(op.shape_tensor()).tolist() == list(dense.shape), op.name
        assert op.batch_shape.as_list() == [2], op.name


def test_zeros_operator(sess):
    op = L.LinearOperatorZeros(3, 2, batch_shape=[2], is_square=False,
                               is_self_adjoint=False)
    x = np.ones((2, 2, 4), np.float32)
    got = sess.run({"mm": op.matmul(x), "dense": op.to_dense(), "diag": op.diag_part(),
                    "adj": op.matmul(np.ones((2, 3, 1), np.float32), adjoint=True)})
    assert got["mm"].shape == (2, 3, 4) and not got["mm"].any()
    assert got["dense"].shape == (2, 3, 2) and got["adj"].shape == (2, 2, 1)
    assert got["diag"].shape == (2, 2)
    square = L.LinearOperatorZeros(2)
    det, lad = sess.run([square.determinant(), square.log_abs_determinant()])
    assert det == 0 and lad == -np.inf
    assert square.add_to_tensor(tf.ones([2, 2])).shape.as_list() == [2, 2]


def test_circulant_real_io_and_kernel(sess):
    spectrum = tf.constant([6., 1., 1.], tf.complex64)
    op = L.LinearOperatorCirculant(spectrum, input_output_dtype=tf.float32)
    kernel, dense = sess.run([op.convolution_kernel(), op.to_dense()])
    assert kernel.dtype == np.float32 and dense.dtype == np.float32
    np.testing.assert_allclose(kernel, dense[:, 0], atol=1e-6)
    assert op.block_depth == 1 and op.block_shape.as_list() == [3]


def test_gradients_reach_the_parameters():
    def build(col, row, u):
        toeplitz = L.LinearOperatorToeplitz(col + tf.constant([4.0, 0, 0], col.dtype), row)
        update = L.LinearOperatorLowRankUpdate(toeplitz, tf.reshape(u, [3, 1]))
        return update.solvevec(tf.ones([3], col.dtype)) + update.log_abs_determinant()
    check_gradient(build, [R.normal(size=3), R.normal(size=3), R.normal(size=3)])

    def build_hh(v, x):
        return L.LinearOperatorHouseholder(v).matvec(x)
    check_gradient(build_hh, [R.normal(size=3), R.normal(size=3)])

    def build_tri(d):
        op = L.LinearOperatorTridiag(tf.reshape(d, [3, 3]) + tf.constant(
            [[0.0] * 3, [4.0] * 3, [0.0] * 3], d.dtype))
        return op.solvevec(tf.ones([3], d.dtype))
    check_gradient(build_tri, [R.normal(size=9)])


def test_operator_products_and_solves_of_operators(sess):
    a = L.LinearOperatorFullMatrix([[2., 1.], [0., 3.]])
    d = L.LinearOperatorDiag([1., 4.])
    prod = a.matmul(d)
    adj = a.matmul(d, adjoint=True, adjoint_arg=True)
    quotient = a.solve(d)
    assert isinstance(prod, L.LinearOperatorComposition)
    dense_a, dense_d = np.array([[2., 1.], [0., 3.]]), np.diag([1., 4.])
    got = sess.run([prod.to_dense(), adj.to_dense(), quotient.to_dense()])
    np.testing.assert_allclose(got[0], dense_a @ dense_d)
    np.testing.assert_allclose(got[1], dense_a.T @ dense_d.T)
    np.testing.assert_allclose(got[2], np.linalg.solve(dense_a, dense_d), rtol=1e-6)
    assert L.LinearOperatorIdentity(2).inverse().name == "LinearOperatorIdentity"
    inv = L.LinearOperatorScaledIdentity(2, 4.).inverse()
    assert isinstance(inv, L.LinearOperatorScaledIdentity)
    assert sess.run(inv.determinant()) == pytest.approx(1 / 16)
    diag_inv = d.inverse()
    assert isinstance(diag_inv, L.LinearOperatorDiag)
    np.testing.assert_allclose(sess.run(diag_inv.diag_part()), [1., 0.25])


def test_complex_operators_against_numpy(sess):
    def c(*shape):
        return R.normal(size=shape) + 1j * R.normal(size=shape)
    a, u, v, d = c(3, 3) + 4 * np.eye(3), c(3, 2), c(3, 2), c(2) + 3
    axis, col, row, tri = c(3), c(3), c(3), c(3, 3)
    col[0] += 5
    tri[1] += 6
    full = L.LinearOperatorFullMatrix(a)
    cases = [
        (L.LinearOperatorAdjoint(full), a.conj().T),
        (L.LinearOperatorLowRankUpdate(full, u, diag_update=d, v=v),
         a + u @ np.diag(d) @ v.conj().T),
        (L.LinearOperatorHouseholder(axis),
         np.eye(3) - 2 * np.outer(axis, axis.conj()) / np.vdot(axis, axis).real),
        (L.LinearOperatorToeplitz(col, row),
         np.array([[col[i - j] if i >= j else row[j - i] for j in range(3)]
                   for i in range(3)])),
        (L.LinearOperatorTridiag(tri),
         np.diag(tri[1]) + np.diag(tri[0, :-1], 1) + np.diag(tri[2, 1:], -1)),
        (L.LinearOperatorKronecker([full, L.LinearOperatorDiag(d)]), np.kron(a, np.diag(d))),
    ]
    for op, dense in cases:
        x = c(dense.shape[-1], 2)
        dense_h = dense.conj().T
        got = sess.run([op.to_dense(), op.matmul(x, adjoint=True), op.solve(x, adjoint=True),
                        op.determinant(), op.adjoint().to_dense()])
        want = [dense, dense_h @ x, np.linalg.solve(dense_h, x), np.linalg.det(dense), dense_h]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9, err_msg=op.name)
