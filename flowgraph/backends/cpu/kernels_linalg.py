"""CPU kernels for the dense linear-algebra ops (`flowgraph/ops/linalg_ops.py`) and the
diagonal/band ops (`flowgraph/ops/linalg_diag_ops.py`): NumPy's batched LAPACK wrappers
on the last two axes; SciPy for the triangular solve.

A matrix LAPACK cannot invert or solve (singular) is an InvalidArgumentError naming the
op, as in TensorFlow; a Cholesky factor of a matrix that is not positive definite is NaN
on and below its diagonal, as TensorFlow's CPU kernel returns it.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.eigen_symmetric import match_eigen_signs
from flowgraph.backends.cpu.scipy_lazy import scipy_linalg
from flowgraph.framework import errors


def _fail(op, what, fix):
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {what}; {fix}")


def _lower(x):
    """The Hermitian matrix whose lower triangle is `x`'s (the part these ops read)."""
    low = np.tril(x)
    return low + np.conj(np.swapaxes(np.tril(x, -1), -1, -2))


@cpu_kernel("Cholesky", fresh=True)
def cholesky(x):
    if x.size == 0:
        return np.array(x, copy=True)
    sym = _lower(x)
    try:
        return np.linalg.cholesky(sym).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        pass
    # As TensorFlow's CPU kernel: a matrix that is not positive definite is no error; its
    # factor is NaN on and below the diagonal (0 above), the other matrices factor as usual.
    flat = sym.reshape((-1, *sym.shape[-2:]))
    out = np.zeros(flat.shape, x.dtype)
    failed = np.tril(np.full(sym.shape[-2:], np.nan, x.dtype))
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = failed
    return out.reshape(x.shape)


@cpu_kernel("MatrixInverse", fresh=True)
def matrix_inverse(x, *, adjoint, op):
    a = np.conj(np.swapaxes(x, -1, -2)) if adjoint else x
    if a.size == 0:
        return np.array(a, copy=True)
    try:
        return np.linalg.inv(a).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise _fail(op, "Input is not invertible", "the matrix is singular") from None


@cpu_kernel("MatrixDeterminant", fresh=True)
def matrix_determinant(x):
    return np.asarray(np.linalg.det(x), dtype=x.dtype)


@cpu_kernel("LogMatrixDeterminant")
def log_matrix_determinant(x):
    sign, logdet = np.linalg.slogdet(x)
    return [np.asarray(sign, dtype=x.dtype),
            np.asarray(logdet, dtype=np.real(np.zeros((), x.dtype)).dtype)]


@cpu_kernel("MatrixSolve", fresh=True)
def matrix_solve(a, b, *, adjoint, op):
    if adjoint:
        a = np.conj(np.swapaxes(a, -1, -2))
    if b.size == 0 or a.size == 0:
        return np.zeros(b.shape, b.dtype)
    try:
        return np.linalg.solve(a, b).astype(b.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise _fail(op, "Input matrix is not invertible", "the matrix is singular; "
                    "use tf.matrix_solve_ls for a least-squares solution") from None


@cpu_kernel("MatrixTriangularSolve", fresh=True)
def matrix_triangular_solve(a, b, *, lower, adjoint):
    out = np.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], b.dtype)
    a_b = np.broadcast_to(a, out.shape[:-2] + a.shape[-2:])
    b_b = np.broadcast_to(b, out.shape)
    trans = 2 if adjoint else 0
    for idx in np.ndindex(out.shape[:-2]):
        with np.errstate(all="ignore"):
            out[idx] = scipy_linalg().solve_triangular(a_b[idx], b_b[idx], trans=trans,
                                                     lower=lower, check_finite=False)
    return out


@cpu_kernel("Qr")
def qr(x, *, full_matrices):
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)]


@cpu_kernel("Svd")
def svd(x, *, compute_uv, full_matrices):
    real = np.real(np.zeros((), x.dtype)).dtype
    if not compute_uv:
        s = np.linalg.svd(x, compute_uv=False)
        return [s.astype(real, copy=False), np.zeros([0], x.dtype), np.zeros([0], x.dtype)]
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    v = np.conj(np.swapaxes(vh, -1, -2))
    return [s.astype(real, copy=False), u.astype(x.dtype, copy=False),
            np.ascontiguousarray(v, dtype=x.dtype)]


@cpu_kernel("SelfAdjointEigV2")
def self_adjoint_eig(x, *, compute_v):
    # the eigenvalues in the input's dtype, as TensorFlow's op def says
    if not compute_v:
        return [np.linalg.eigvalsh(x, UPLO="L").astype(x.dtype, copy=False),
                np.zeros([0], x.dtype)]
    e, v = np.linalg.eigh(x, UPLO="L")
    v = match_eigen_signs(x, v)  # the signs of TensorFlow's (Eigen's) vectors
    return [e.astype(x.dtype, copy=False), v.astype(x.dtype, copy=False)]


# -- diagonals and bands -------------------------------------------------------------------

@cpu_kernel("MatrixBandPart", fresh=True)
def matrix_band_part(x, num_lower, num_upper, *, op):
    m, n = x.shape[-2:]
    lo, up = int(num_lower), int(num_upper)
    if lo > m or up > n:
        raise _fail(op, f"num_lower ({lo}) must be at most the number of rows ({m}) and "
                    f"num_upper ({up}) at most the number of columns ({n})",
                    "pass -1 to keep a whole triangle")
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = np.ones((m, n), bool)
    if lo >= 0:
        keep &= (i - j) <= lo
    if up >= 0:
        keep &= (j - i) <= up
    return np.where(keep, x, np.zeros((), x.dtype))


@cpu_kernel("MatrixDiag", fresh=True)
def matrix_diag(d):
    n = d.shape[-1]
    out = np.zeros((*d.shape, n), d.dtype)
    idx = np.arange(n)
    out[..., idx, idx] = d
    return out


@cpu_kernel("MatrixDiagPart", fresh=True)
def matrix_diag_part(x):
    return np.ascontiguousarray(np.diagonal(x, axis1=-2, axis2=-1))


@cpu_kernel("MatrixSetDiag", fresh=True)
def matrix_set_diag(x, d):
    out = np.array(x, copy=True)
    k = min(x.shape[-2:])
    idx = np.arange(k)
    out[..., idx, idx] = d
    return out


@cpu_kernel("Diag", fresh=True)
def diag(d):
    n = d.size
    out = np.zeros((n, n), d.dtype)
    out[np.arange(n), np.arange(n)] = d.ravel()
    return out.reshape(d.shape + d.shape)


@cpu_kernel("DiagPart", fresh=True)
def diag_part(x, *, op):
    k = x.ndim // 2
    if x.shape[:k] != x.shape[k:]:
        raise _fail(op, f"input of shape {list(x.shape)}: the first half of the dimensions "
                    "must equal the second half", "pass a tensor of shape s + s")
    n = int(np.prod(x.shape[:k], dtype=np.int64))
    flat = x.reshape(n, n)
    return np.ascontiguousarray(np.diagonal(flat)).reshape(x.shape[:k])


@cpu_kernel("Cross", fresh=True)
def cross(a, b):
    return np.cross(a, b).astype(a.dtype, copy=False)


@cpu_kernel("MatrixExponential", fresh=True)
def matrix_exponential(x):
    if x.size == 0:
        return np.array(x, copy=True)
    work = np.float32 if x.dtype == np.float16 else x.dtype  # SciPy has no half precision
    return np.asarray(scipy_linalg().expm(x.astype(work, copy=False)), dtype=x.dtype)
