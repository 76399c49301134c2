"""Values of the scatter, dense linear-algebra and diagonal ops (issue 15 coverage) against
NumPy; their gradients are checked registry-wide (`issue15_cov_cases.py`)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops import linalg_diag_ops, linalg_ops, scatter_ops

R = np.random.RandomState(3)


@pytest.mark.parametrize("module", [linalg_ops, linalg_diag_ops, scatter_ops])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


def test_scatter_row_ops_match_numpy():
    start = R.uniform(1.0, 2.0, size=(4, 3))
    idx = np.array([3, 0, 3])
    upd = R.uniform(1.0, 2.0, size=(3, 3))
    expect = {}
    for kind, ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                        ("div", np.divide), ("min", np.minimum), ("max", np.maximum)]:
        want = start.copy()
        ufunc.at(want, idx, upd)
        expect[kind] = want
    with tf.Graph().as_default():
        results = {}
        for kind in expect:
            v = tf.Variable(start)
            results[kind] = getattr(tf, f"scatter_{kind}")(v, idx, upd)
        got = _run(*results.values())
    for kind, value in zip(results, got):
        np.testing.assert_allclose(value, expect[kind], err_msg=kind)


def test_scatter_update_and_nd_forms():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((2, 3), np.float32))
        w = tf.Variable(np.zeros((2, 3), np.float32))
        up = tf.scatter_update(v, [1], [[1.0, 2.0, 3.0]])
        nd = tf.scatter_nd_add(w, [[0, 2], [0, 2], [1, 0]], [1.0, 2.0, 5.0])
        scalar = tf.scatter_sub(tf.Variable([5, 5, 5]), [0, 2], 1)
        a, b, c = _run(up, nd, scalar)
    np.testing.assert_array_equal(a, [[0, 0, 0], [1, 2, 3]])
    np.testing.assert_array_equal(b, [[0, 0, 3], [5, 0, 0]])
    np.testing.assert_array_equal(c, [4, 5, 4])


def test_scatter_errors_name_the_problem():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        bad = tf.scatter_add(v, [5], [1.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="index 5 is out of range"):
            _run(bad)
        with pytest.raises(ValueError, match="updates have shape"):
            tf.scatter_add(tf.Variable(tf.zeros([3, 2])), [0, 1], tf.zeros([2, 3]))
        with pytest.raises(TypeError, match="not a variable"):
            tf.scatter_update(tf.constant([1.0]), [0], [2.0])


def test_tensor_scatter_and_batch_scatter():
    t = np.arange(8.0).reshape(4, 2)
    with tf.Graph().as_default():
        out = tf.tensor_scatter_nd_update(t, [[1], [3]], [[9.0, 9.0], [7.0, 7.0]])
        same = tf.tensor_scatter_update(t, [[1, 1]], [-1.0])
        v = tf.Variable(np.zeros((2, 3)))
        batched = tf.batch_scatter_update(v, [[2, 0], [1, 1]], [[1.0, 2.0], [3.0, 4.0]])
        a, b, c = _run(out, same, batched)
    want = t.copy()
    want[1], want[3] = 9.0, 7.0
    np.testing.assert_array_equal(a, want)
    assert b[1, 1] == -1.0 and b[0, 0] == 0.0
    np.testing.assert_array_equal(c, [[2.0, 0.0, 1.0], [0.0, 4.0, 0.0]])


def test_decompositions_match_numpy():
    a = R.uniform(-1, 1, size=(2, 4, 4))
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    b = R.uniform(-1, 1, size=(2, 4, 2))
    with tf.Graph().as_default():
        s, u, v = tf.svd(a)
        e, vecs = tf.self_adjoint_eig(spd)
        q, r = tf.qr(a)
        sign, logabs = tf.linalg.slogdet(a)
        got = _run(tf.cholesky(spd), tf.matrix_inverse(a), tf.matrix_determinant(a),
                   tf.matrix_solve(a, b), tf.matrix_triangular_solve(spd, b, lower=False),
                   tf.cholesky_solve(tf.cholesky(spd), b), s, u, v, e, vecs, q, r, sign,
                   logabs, tf.linalg.logdet(spd), tf.trace(a))
    (chol, inv, det, sol, tri, csol, s, u, v, e, vecs, q, r, sign, logabs, logdet,
     trace) = got
    np.testing.assert_allclose(chol, np.linalg.cholesky(spd))
    np.testing.assert_allclose(inv, np.linalg.inv(a))
    np.testing.assert_allclose(det, np.linalg.det(a))
    np.testing.assert_allclose(sol, np.linalg.solve(a, b))
    np.testing.assert_allclose(tri, np.linalg.solve(np.triu(spd), b))
    np.testing.assert_allclose(csol, np.linalg.solve(spd, b))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose(u @ (s[..., None] * np.swapaxes(v, -1, -2)), a, atol=1e-12)
    np.testing.assert_allclose(e, np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(vecs @ (e[..., None] * np.swapaxes(vecs, -1, -2)), spd)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.tril(r, -1), 0.0, atol=1e-12)
    np.testing.assert_allclose(sign * np.exp(logabs), np.linalg.det(a))
    np.testing.assert_allclose(logdet, np.linalg.slogdet(spd)[1])
    np.testing.assert_allclose(trace, np.trace(a, axis1=-2, axis2=-1))


def test_matrix_solve_ls_matches_lstsq():
    a = R.uniform(-1, 1, size=(6, 3))
    b = R.uniform(-1, 1, size=(6, 2))
    wide = a.T
    with tf.Graph().as_default():
        tall, ridge, minimum = _run(tf.matrix_solve_ls(a, b),
                                    tf.linalg.lstsq(a, b, l2_regularizer=0.5),
                                    tf.matrix_solve_ls(wide, b[:3]))
    np.testing.assert_allclose(tall, np.linalg.lstsq(a, b, rcond=None)[0])
    np.testing.assert_allclose(ridge, np.linalg.solve(a.T @ a + 0.5 * np.eye(3), a.T @ b))
    np.testing.assert_allclose(minimum, np.linalg.lstsq(wide, b[:3], rcond=None)[0])


def test_decomposition_errors():
    with tf.Graph().as_default():
        # TensorFlow's CPU kernel: NaN on and below the diagonal, no error.
        (factor,) = _run(tf.cholesky([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 2.0], [2.0, 3.0]]]))
        np.testing.assert_array_equal(factor[0], [[np.nan, 0.0], [np.nan, np.nan]])
        np.testing.assert_allclose(factor[1], [[2.0, 0.0], [1.0, np.sqrt(2.0)]], rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
            _run(tf.matrix_inverse([[1.0, 2.0], [2.0, 4.0]]))
        with pytest.raises(ValueError, match="must be square"):
            tf.matrix_determinant(tf.zeros([2, 3]))
        with pytest.raises(TypeError, match="float32, float64"):
            tf.cholesky([[1, 0], [0, 1]])


def test_diagonal_ops_match_numpy():
    x = R.uniform(-1, 1, size=(2, 3, 4))
    d = R.uniform(-1, 1, size=(2, 3))
    with tf.Graph().as_default():
        got = _run(tf.matrix_band_part(x, 1, 2), tf.matrix_band_part(x, -1, 0),
                   tf.matrix_diag(d), tf.matrix_diag_part(x), tf.matrix_set_diag(x, d),
                   tf.diag(d), tf.diag_part(tf.diag(d)),
                   tf.cross(x[..., :3], x[..., 1:]), tf.linalg.band_part(x, 0, 0))
    band, lower, mdiag, mpart, mset, tdiag, tpart, crossed, diag_only = got
    i, j = np.arange(3)[:, None], np.arange(4)[None, :]
    np.testing.assert_array_equal(band, np.where((i - j <= 1) & (j - i <= 2), x, 0))
    np.testing.assert_array_equal(lower, np.tril(x))
    np.testing.assert_array_equal(mdiag, np.stack([np.diag(r) for r in d]))
    np.testing.assert_array_equal(mpart, np.diagonal(x, axis1=1, axis2=2))
    want = x.copy()
    want[:, np.arange(3), np.arange(3)] = d
    np.testing.assert_array_equal(mset, want)
    np.testing.assert_array_equal(tdiag.reshape(6, 6), np.diag(d.ravel()))
    np.testing.assert_array_equal(tpart, d)
    np.testing.assert_allclose(crossed, np.cross(x[..., :3], x[..., 1:]))
    np.testing.assert_array_equal(diag_only, np.where(i == j, x, 0))


def test_linalg_namespace_aliases():
    assert tf.linalg.inv is tf.matrix_inverse and tf.linalg.det is tf.matrix_determinant
    assert tf.linalg.eigh is tf.self_adjoint_eig and tf.linalg.diag is tf.matrix_diag
    assert tf.linalg.tensor_diag is tf.diag and tf.linalg.set_diag is tf.matrix_set_diag
