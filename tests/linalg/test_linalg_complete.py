"""tf.linalg's LU, matrix-function, pseudo-inverse and tridiagonal functions: values
against NumPy/SciPy and against TensorFlow 2.15's printed values (tf.compat.v1, graph
mode), gradients against finite differences, op names, shapes and errors."""

from __future__ import annotations

import doctest
import pathlib
import sys

import numpy as np
import pytest
import scipy.linalg

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.linalg import experimental
from flowgraph.ops import linalg_funcs, linalg_lu, linalg_tridiag

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from gradient_checker import check_gradient

R = np.random.RandomState(27)
A = np.array([[4., 3., 1.], [6., 3., 2.], [1., 5., 9.]], np.float32)
SPD = np.array([[4., 1.], [1., 3.]], np.float32)


@pytest.mark.parametrize("module", [linalg_lu, linalg_funcs, linalg_tridiag, experimental])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# -- LU ------------------------------------------------------------------------------------

def test_lu_family_matches_tensorflow(sess):
    lu, p = tf.linalg.lu(A)
    assert (lu.name, p.name, p.dtype) == ("Lu:0", "Lu:1", tf.int32)
    x = tf.linalg.lu_solve(lu, p, [[1.], [2.], [3.]])
    assert x.name == "lu_solve/triangular_solve_1/MatrixTriangularSolve:0"
    inv = tf.linalg.lu_matrix_inverse(lu, p)
    rec = tf.linalg.lu_reconstruct(lu, p)
    p64 = tf.linalg.lu(A, output_idx_type=tf.int64)[1]
    got = sess.run({"lu": lu, "p": p, "x": x, "inv": inv, "rec": rec, "p64": p64})
    # TensorFlow 2.15 printed these (rounded to 4 places)
    np.testing.assert_allclose(got["lu"], [[6.0, 3.0, 2.0], [0.1667, 4.5, 8.6667],
                                           [0.6667, 0.2222, -2.2593]], atol=1e-4)
    assert got["p"].tolist() == [1, 2, 0] and got["p64"].dtype == np.int64
    np.testing.assert_allclose(got["x"], [[0.2951], [-0.1967], [0.4098]], atol=1e-4)
    np.testing.assert_allclose(got["inv"], np.linalg.inv(A), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["rec"], A, rtol=1e-6)
    assert got["lu"].dtype == np.float32


def test_lu_batches_against_scipy(sess):
    a = R.normal(size=(2, 3, 4, 4))
    lu, p = tf.linalg.lu(a)
    assert lu.shape.as_list() == [2, 3, 4, 4] and p.shape.as_list() == [2, 3, 4]
    rhs = R.normal(size=(2, 3, 4, 2))
    got_lu, got_p, rec, x = sess.run([lu, p, tf.linalg.lu_reconstruct(lu, p),
                                      tf.linalg.lu_solve(lu, p, rhs)])
    for idx in np.ndindex(2, 3):
        _, low, up = scipy.linalg.lu(a[idx])
        np.testing.assert_allclose(np.tril(got_lu[idx], -1) + np.eye(4), low, atol=1e-10)
        np.testing.assert_allclose(np.triu(got_lu[idx]), up, atol=1e-10)
        np.testing.assert_allclose(a[idx][got_p[idx]], low @ up, atol=1e-10)
    np.testing.assert_allclose(rec, a, atol=1e-10)
    np.testing.assert_allclose(x, np.linalg.solve(a, rhs), atol=1e-9)


def test_lu_errors(sess):
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.linalg.lu(tf.zeros([3]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.linalg.lu(tf.zeros([3, 2]))
    with pytest.raises(TypeError, match="int32 not in list of allowed values"):
        tf.linalg.lu(tf.zeros([2, 2], tf.int32))
    with pytest.raises(errors.InvalidArgumentError, match=r"Lu 'Lu.*not invertible"):
        sess.run(tf.linalg.lu(tf.zeros([2, 2]))[0])


def test_lu_solve_gradient():
    a = R.normal(size=(3, 3)) + 3 * np.eye(3)

    def build(b):  # Lu itself has no gradient: differentiate with respect to rhs
        lu, p = tf.linalg.lu(tf.constant(a))
        return tf.linalg.lu_solve(lu, p, b)
    check_gradient(build, [R.normal(size=(3, 2))])
    # and with respect to the packed factors (the permutation does not depend on them)
    packed = scipy.linalg.lu_factor(a)[0]
    check_gradient(lambda f, b: tf.linalg.lu_solve(f, tf.constant([2, 0, 1]), b),
                   [packed, R.normal(size=(3, 1))])


# -- square root, logarithm -------------------------------------------------------------

def test_sqrtm_and_logm_match_tensorflow(sess):
    sq = tf.linalg.sqrtm(SPD)
    top = tf.matrix_square_root(SPD)
    lm = tf.linalg.logm(SPD.astype(np.complex64))
    assert (sq.name, top.name, lm.name) == ("MatrixSquareRoot:0", "MatrixSquareRoot_1:0",
                                            "MatrixLogarithm:0")
    got = sess.run({"sq": sq, "top": top, "lm": lm,
                    "neg": tf.linalg.sqrtm([[-1., 0.], [0., 4.]])})
    expect = [[1.9816, 0.2708], [0.2708, 1.7107]]  # TensorFlow's values
    np.testing.assert_allclose(got["sq"], expect, atol=1e-4)
    np.testing.assert_allclose(got["top"], expect, atol=1e-4)
    assert got["sq"].dtype == np.float32 and got["lm"].dtype == np.complex64
    np.testing.assert_allclose(got["lm"], [[1.347, 0.2961], [0.2961, 1.0509]], atol=1e-4)
    assert np.isnan(got["neg"]).all()  # no real square root: NaN, as TensorFlow


def test_sqrtm_batches_against_scipy(sess):
    a = R.normal(size=(3, 4, 4))
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    got = sess.run(tf.linalg.sqrtm(spd))
    for i in range(3):
        np.testing.assert_allclose(got[i], scipy.linalg.sqrtm(spd[i]).real, atol=1e-9)
    c = (R.normal(size=(3, 3)) + 1j * R.normal(size=(3, 3))).astype(np.complex128)
    np.testing.assert_allclose(sess.run(tf.linalg.sqrtm(c)), scipy.linalg.sqrtm(c),
                               atol=1e-9)
    np.testing.assert_allclose(sess.run(tf.linalg.logm(c)), scipy.linalg.logm(c), atol=1e-9)


def test_sqrtm_and_logm_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.linalg.sqrtm(tf.zeros([3, 2]))
    with pytest.raises(TypeError, match="not in list of allowed values: complex64"):
        tf.linalg.logm(SPD)


def test_sqrtm_gradient_batched_and_complex():
    def spd(x):
        m = tf.reshape(x, [2, 3, 3])
        return tf.matmul(m, m, transpose_b=True) + 3.0 * tf.eye(3, dtype=m.dtype)
    check_gradient(lambda x: tf.linalg.sqrtm(spd(x)), [R.normal(size=18)])
    c = (R.normal(size=(2, 2)) + 1j * R.normal(size=(2, 2))) * 0.3 + 2 * np.eye(2)
    check_gradient(tf.linalg.sqrtm, [c])


# -- pinv, matrix_rank, normalize -------------------------------------------------------

def test_pinv_rank_normalize_match_tensorflow(sess):
    pv = tf.linalg.pinv(A[:, :2])
    rk = tf.linalg.matrix_rank(A)
    unit, norm = tf.linalg.normalize(A)
    unit1, norm1 = tf.linalg.normalize(A, axis=1, ord=1)
    assert rk.name == "matrix_rank/Sum:0" and rk.dtype == tf.int32
    assert unit.name == "normalize/truediv:0" and norm.shape.as_list() == [1, 1]
    got = sess.run({"pv": pv, "rk": rk, "unit": unit, "norm": norm, "unit1": unit1,
                    "norm1": norm1})
    np.testing.assert_allclose(got["pv"], [[0.0636, 0.1452, -0.1252],
                                           [0.018, -0.0484, 0.2182]], atol=1e-4)
    assert got["rk"] == 3
    np.testing.assert_allclose(got["norm"], [[13.4907]], atol=1e-4)
    np.testing.assert_allclose(got["unit"], A / np.linalg.norm(A), rtol=1e-6)
    np.testing.assert_allclose(got["norm1"], [[8.0], [11.0], [15.0]])
    np.testing.assert_allclose(got["unit1"][0], [0.5, 0.375, 0.125])


def test_pinv_and_rank_against_numpy(sess):
    a = R.normal(size=(2, 5, 3))
    low_rank = a[..., :1] @ np.ones((1, 3))
    got = sess.run({"pinv": tf.linalg.pinv(a), "low": tf.linalg.pinv(low_rank),
                    "rank": tf.linalg.matrix_rank(low_rank),
                    "rank_tol": tf.linalg.matrix_rank(a, tol=100.0)})
    np.testing.assert_allclose(got["pinv"], np.linalg.pinv(a), atol=1e-10)
    np.testing.assert_allclose(got["low"], np.linalg.pinv(low_rank), atol=1e-10)
    assert got["rank"].tolist() == [1, 1] and got["rank_tol"].tolist() == [0, 0]
    assert tf.linalg.matrix_rank(tf.zeros([5, 3, 2])).shape.as_list() == [5]


def test_pinv_gradient_matches_finite_differences():
    check_gradient(tf.linalg.pinv, [R.normal(size=(4, 3))])
    check_gradient(tf.linalg.pinv, [R.normal(size=(2, 4))])
    check_gradient(lambda x: tf.linalg.normalize(x, axis=-1)[0], [R.normal(size=(2, 3))])


def test_pinv_rejects_integers():
    with pytest.raises(TypeError, match="must have `float`-like `dtype` \\(saw int32\\)"):
        tf.linalg.pinv(tf.zeros([2, 2], tf.int32))


# -- tridiagonal --------------------------------------------------------------------------

D = np.array([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]], np.float32)  # singular: NaN
WELL = np.array([[2., 1., 0.], [5., 6., 7.], [0., 1., 2.]], np.float32)


def _dense(compact):
    sup, main, sub = compact[..., 0, :], compact[..., 1, :], compact[..., 2, :]
    n = main.shape[-1]
    out = np.zeros((*main.shape[:-1], n, n), compact.dtype)
    idx = np.arange(n)
    out[..., idx, idx] = main
    out[..., idx[:-1], idx[1:]] = sup[..., :-1]
    out[..., idx[1:], idx[:-1]] = sub[..., 1:]
    return out


def test_tridiagonal_match_tensorflow(sess):
    b = tf.constant([[1.], [2.], [3.]])
    ts = tf.linalg.tridiagonal_solve(D, b)
    tm = tf.linalg.tridiagonal_matmul(D, b)
    assert (ts.name, tm.name) == ("TridiagonalSolve:0", "TridiagonalMatMul:0")
    got = sess.run({"ts": ts, "tm": tm})
    np.testing.assert_allclose(got["tm"], [[6.0], [24.0], [36.0]])  # TensorFlow's values
    assert np.isnan(got["ts"]).all()  # a singular system gives NaN, as in TensorFlow
    shapes = [tf.linalg.tridiagonal_solve(tf.zeros([5, 3, 4]), tf.zeros([5, 4, 2])).shape,
              tf.linalg.tridiagonal_matmul(tf.zeros([5, 3, 4]), tf.zeros([5, 4, 2])).shape]
    assert [s.as_list() for s in shapes] == [[5, 4, 2], [5, 4, 2]]


def test_tridiagonal_formats_and_options_against_numpy(sess):
    dense = _dense(WELL)
    rhs = R.normal(size=(3, 2)).astype(np.float32)
    seq = (WELL[0], WELL[1], WELL[2])
    results = sess.run({
        "compact": tf.linalg.tridiagonal_solve(WELL, rhs),
        "sequence": tf.linalg.tridiagonal_solve(seq, rhs, diagonals_format="sequence"),
        "matrix": tf.linalg.tridiagonal_solve(dense, rhs, diagonals_format="matrix"),
        "transposed": tf.linalg.tridiagonal_solve(WELL, rhs.T, transpose_rhs=True),
        "vector": tf.linalg.tridiagonal_solve(WELL, rhs[:, 0]),
        "matmul_seq": tf.linalg.tridiagonal_matmul(seq, rhs, diagonals_format="sequence"),
        "matmul_matrix": tf.linalg.tridiagonal_matmul(dense, rhs, diagonals_format="matrix"),
    })
    want = np.linalg.solve(dense, rhs)
    for key in ("compact", "sequence", "matrix", "transposed"):
        np.testing.assert_allclose(results[key], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results["vector"], want[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results["matmul_seq"], dense @ rhs, rtol=1e-6)
    np.testing.assert_allclose(results["matmul_matrix"], dense @ rhs, rtol=1e-6)


def test_tridiagonal_batches_and_complex(sess):
    d = R.normal(size=(2, 3, 5)) + 1j * R.normal(size=(2, 3, 5))
    d[:, 1] += 6.0
    rhs = R.normal(size=(2, 5, 3)) + 1j * R.normal(size=(2, 5, 3))
    x, y = sess.run([tf.linalg.tridiagonal_solve(d, rhs, conjugate_rhs=True),
                     tf.linalg.tridiagonal_matmul(d, rhs)])
    np.testing.assert_allclose(x, np.linalg.solve(_dense(d), np.conj(rhs)), atol=1e-10)
    np.testing.assert_allclose(y, _dense(d) @ rhs, atol=1e-10)


def test_tridiagonal_gradients_complex():
    def dominant(d):
        return d + tf.constant(np.array([[0.0] * 3, [5.0] * 3, [0.0] * 3]), d.dtype)
    d = (R.normal(size=(3, 3)) + 1j * R.normal(size=(3, 3))) * 0.5
    b = R.normal(size=(3, 2)) + 1j * R.normal(size=(3, 2))
    check_gradient(lambda d, b: tf.linalg.tridiagonal_solve(dominant(d), b), [d, b],
                   max_full=4)
    check_gradient(lambda d, b: tf.linalg.tridiagonal_matmul(d, b), [d, b], max_full=4)


def test_tridiagonal_errors():
    with pytest.raises(ValueError, match="Expected 3 diagonals got 4"):
        tf.linalg.tridiagonal_solve(tf.zeros([4, 3]), tf.zeros([3, 1]))
    with pytest.raises(ValueError, match="Unrecognized diagonals_format: foo"):
        tf.linalg.tridiagonal_solve(tf.zeros([3, 3]), tf.zeros([3, 1]),
                                    diagonals_format="foo")
    with pytest.raises(ValueError, match="sequence of length 3"):
        tf.linalg.tridiagonal_solve([tf.zeros([3])], tf.zeros([3, 1]),
                                    diagonals_format="sequence")
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        tf.linalg.tridiagonal_matmul(tf.zeros([3, 3], tf.int32), tf.zeros([3, 1], tf.int32))


def test_eigh_tridiagonal_matches_tensorflow(sess):
    alpha, beta = tf.constant([1., 2., 3.]), tf.constant([0.5, 0.25])
    ev = tf.linalg.eigh_tridiagonal(alpha, beta)
    ev2, vec = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    evi = tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 2])
    evv, vecv = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False, select="v",
                                           select_range=[1.5, 10.])
    got = sess.run({"ev": ev, "ev2": ev2, "vec": vec, "evi": evi, "evv": evv, "vecv": vecv})
    expect = [0.7887, 2.1452, 3.0661]  # TensorFlow's values
    np.testing.assert_allclose(got["ev"], expect, atol=1e-4)
    np.testing.assert_allclose(got["ev2"], expect, atol=1e-4)
    np.testing.assert_allclose(got["evi"], expect[1:], atol=1e-4)
    np.testing.assert_allclose(got["evv"], expect[1:], atol=1e-4)
    tf_vec = np.array([[-0.9202, 0.3865, 0.0618], [0.3889, 0.8852, 0.2552],
                       [-0.044, -0.2589, 0.9649]])
    signs = np.sign(np.sum(got["vec"] * tf_vec, axis=0))  # eigenvectors up to sign
    np.testing.assert_allclose(got["vec"] * signs, tf_vec, atol=1e-4)
    assert got["vecv"].shape == (3, 2)


def test_eigh_tridiagonal_complex_against_numpy(sess):
    alpha = R.normal(size=4)
    beta = R.normal(size=3) + 1j * R.normal(size=3)
    dense = np.diag(alpha).astype(complex) + np.diag(beta, -1) + np.diag(np.conj(beta), 1)
    got = sess.run(tf.linalg.eigh_tridiagonal(alpha.astype(complex), beta))
    np.testing.assert_allclose(got, np.linalg.eigvalsh(dense), atol=1e-10)
    with pytest.raises(ValueError, match="select_range"):
        tf.linalg.eigh_tridiagonal(alpha, beta.real, select="v")


# -- conjugate gradient ----------------------------------------------------------------------

def test_conjugate_gradient_solves_spd_systems(sess):
    a = R.normal(size=(2, 6, 6))
    spd = a @ np.swapaxes(a, -1, -2) + 6 * np.eye(6)
    rhs = R.normal(size=(2, 6))
    op = tf.linalg.LinearOperatorFullMatrix(spd, is_self_adjoint=True,
                                            is_positive_definite=True)
    state = tf.linalg.experimental.conjugate_gradient(op, rhs, tol=1e-10, max_iter=50)
    pre = tf.linalg.LinearOperatorDiag(1.0 / np.diagonal(spd, axis1=-2, axis2=-1))
    pstate = tf.linalg.experimental.conjugate_gradient(op, rhs, preconditioner=pre,
                                                       tol=1e-10, max_iter=50)
    got = sess.run({"x": state.x, "i": state.i, "px": pstate.x})
    want = np.linalg.solve(spd, rhs[..., None])[..., 0]
    np.testing.assert_allclose(got["x"], want, atol=1e-8)
    np.testing.assert_allclose(got["px"], want, atol=1e-8)
    assert 1 <= got["i"] <= 50
    with pytest.raises(ValueError, match="self-adjoint, positive definite"):
        tf.linalg.experimental.conjugate_gradient(tf.linalg.LinearOperatorFullMatrix(spd),
                                                  rhs)


def test_gradients_and_cg_state_match_tensorflow(sess):
    """TensorFlow 2.15 printed these values for the same graph (rounded to 4 places)."""
    rng = np.random.RandomState(0)
    a = rng.normal(size=(4, 3)).astype(np.float32)
    x = tf.constant(a)
    w = tf.constant(rng.normal(size=(3, 4)).astype(np.float32))
    s = tf.constant((a[:3] @ a[:3].T + 3 * np.eye(3)).astype(np.float32))
    w3 = tf.constant(rng.normal(size=(3, 3)).astype(np.float32))
    d = tf.constant([[1., 2., 0.], [5., 6., 7.], [0., 1., 2.]])
    b = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    sol = tf.linalg.tridiagonal_solve(d, b)
    prod = tf.linalg.tridiagonal_matmul(d, b)
    spd = tf.linalg.LinearOperatorFullMatrix(s, is_self_adjoint=True,
                                             is_positive_definite=True)
    cg = tf.linalg.experimental.conjugate_gradient(spd, tf.constant([1., 2., 3.]), max_iter=2)
    vector = tf.linalg.tridiagonal_solve(d, tf.constant([1., 2., 3.]))
    assert vector.name == "Squeeze:0" and type(cg).__name__ == "CGState"
    got = sess.run({
        "pinv": tf.gradients(tf.reduce_sum(tf.linalg.pinv(x) * w), x)[0],
        "sqrtm": tf.gradients(tf.reduce_sum(tf.linalg.sqrtm(s) * w3), s)[0],
        "ts": tf.gradients(tf.reduce_sum(sol * sol), [d, b]),
        "tm": tf.gradients(tf.reduce_sum(prod * prod), [d, b]),
        "cg": cg, "vector": vector})
    np.testing.assert_allclose(got["pinv"][0], [-0.1344, 0.3118, -0.0595], atol=2e-4)
    np.testing.assert_allclose(got["pinv"][2], [0.6546, -1.2736, -0.5049], atol=2e-4)
    np.testing.assert_allclose(got["sqrtm"], [[0.4857, -0.3148, -0.0189],
                                              [-0.1173, 0.2413, 0.2818],
                                              [0.0168, 0.0863, -0.2605]], atol=2e-4)
    np.testing.assert_allclose(got["ts"][0], [[-0.0596, -0.0352, 0.0],
                                              [-0.0491, -0.016, -0.2692],
                                              [0.0, -0.0128, -0.121]], atol=2e-4)
    np.testing.assert_allclose(got["ts"][1], [[0.0552, 0.1251], [0.0192, 0.0305],
                                              [0.1772, 0.2068]], atol=2e-4)
    np.testing.assert_allclose(got["tm"][0], [[160, 746, 0], [72, 478, 1010], [0, 210, 646]])
    np.testing.assert_allclose(got["tm"][1], [[138, 216], [528, 684], [690, 852]])
    assert got["cg"].i == 2
    np.testing.assert_allclose(got["cg"].x, [-0.0192, 0.0416, 0.7512], atol=2e-4)
    np.testing.assert_allclose(got["cg"].gamma, 0.0323, atol=2e-4)
    np.testing.assert_allclose(got["vector"], [0.1639, 0.1803, 0.377], atol=2e-4)


@pytest.mark.parametrize("static", [[None, 3, 3], [None, None, None], None])
def test_lu_functions_with_unknown_shapes(sess, static):
    a = R.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    ph = tf.placeholder(tf.float64, static)
    lu, p = tf.linalg.lu(ph)
    got = sess.run({"inv": tf.linalg.lu_matrix_inverse(lu, p),
                    "rec": tf.linalg.lu_reconstruct(lu, p),
                    "sol": tf.linalg.lu_solve(lu, p, tf.ones_like(ph)[..., :1]),
                    "pinv": tf.linalg.pinv(ph), "rank": tf.linalg.matrix_rank(ph)}, {ph: a})
    np.testing.assert_allclose(got["inv"], np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(got["rec"], a, atol=1e-12)
    np.testing.assert_allclose(got["sol"], np.linalg.solve(a, np.ones((2, 3, 1))), atol=1e-12)
    np.testing.assert_allclose(got["pinv"], np.linalg.inv(a), atol=1e-12)
    assert got["rank"].tolist() == [3, 3]


def test_batched_lu_solve_gradient():
    a = R.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    packed = np.stack([scipy.linalg.lu_factor(m)[0] for m in a])
    perm = np.array([[2, 0, 1], [1, 2, 0]], np.int32)
    check_gradient(lambda f, b: tf.linalg.lu_solve(f, tf.constant(perm), b),
                   [packed, R.normal(size=(2, 3, 2))])


def test_lu_and_logm_have_no_gradient_as_in_tensorflow():
    a = tf.constant(np.eye(3) + 0.1, tf.float32)
    lu, _ = tf.linalg.lu(a)
    with pytest.raises(LookupError, match="Lu"):
        tf.gradients(lu, a)
    c = tf.constant(np.eye(2) + 0.2, tf.complex64)
    log = tf.linalg.logm(c)
    with pytest.raises(LookupError, match="MatrixLogarithm"):
        tf.gradients(log, c, grad_ys=tf.ones_like(log))
