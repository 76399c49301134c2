"""CPU kernels for the band-of-diagonals ops (`flowgraph/ops/linalg_diag_v3.py`) and the
linear-algebra op types of `flowgraph/ops/linalg_raw.py`.

The diagonal ops work on index grids: for an ``m x n`` matrix, entry ``(i, j)`` lies on
diagonal ``d = j - i``, row ``upper - d`` of the packed band, at position
``offset(d) + min(i, j)``, where ``offset`` is 0 for a left-aligned diagonal and
``max_diag_len - len(d)`` for a right-aligned one. One gather over the batch does the work.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.ops.linalg_diag_v3 import diag_matrix_size


def _fail(op, what, fix=""):
    return errors.InvalidArgumentError(
        None, None, f"{op.type} '{op.name}': {what}" + (f"; {fix}" if fix else ""))


def _band(op, k):
    flat = [int(v) for v in np.asarray(k).ravel()]
    if not 1 <= len(flat) <= 2:
        raise _fail(op, f"k must be a scalar or a pair [lower, upper], got {len(flat)} values")
    if flat[0] > flat[-1]:
        raise _fail(op, f"k = [{flat[0]}, {flat[-1]}]: lower must be at most upper")
    return flat[0], flat[-1]


def _align(align) -> tuple[bool, bool]:
    """(superdiagonals left-aligned, subdiagonals left-aligned)."""
    if isinstance(align, bytes):
        align = align.decode()
    sup, _, sub = str(align).partition("_")
    return sup == "LEFT", sub == "LEFT"


def _offset(d, rows, cols, max_len, align):
    """Where diagonal(s) `d` start in a packed row of `max_len` entries."""
    left_sup, left_sub = _align(align)
    length = np.minimum(rows + np.minimum(0, d), cols - np.maximum(0, d))
    left = ((d >= 0) & left_sup) | ((d <= 0) & left_sub)
    return np.where(left, 0, max_len - length), length


def _grid(rows, cols, lower, upper, max_len, align):
    """For each ``(i, j)``: inside the band, the packed row and position of its entry."""
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    d = j - i
    inside = (d >= lower) & (d <= upper)
    offset, _ = _offset(d, rows, cols, max_len, align)
    row = np.clip(upper - d, 0, upper - lower)
    pos = np.clip(offset + np.minimum(i, j), 0, max(max_len - 1, 0))
    return inside, row, pos


def _packed(diagonal, single):
    return diagonal[..., None, :] if single else diagonal


def _matrix_diag(diagonal, k, num_rows, num_cols, padding_value, align, op):
    lower, upper = _band(op, k)
    single = lower == upper
    need = 1 if single else 2
    if diagonal.ndim < need:
        raise _fail(op, f"diagonal must have rank >= {need} for k = [{lower}, {upper}], got "
                    f"shape {list(diagonal.shape)}")
    if not single and diagonal.shape[-2] != upper - lower + 1:
        raise _fail(op, f"diagonal of shape {list(diagonal.shape)} holds "
                    f"{diagonal.shape[-2]} diagonals but k = [{lower}, {upper}] names "
                    f"{upper - lower + 1}")
    max_len = diagonal.shape[-1]
    rows, cols, min_rows, min_cols = diag_matrix_size(max_len, lower, upper, int(num_rows),
                                                      int(num_cols))
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise _fail(op, f"{rows} x {cols} matrices cannot hold diagonals of length "
                    f"{max_len} for k = [{lower}, {upper}]: they need {min_rows} rows or "
                    f"{min_cols} columns (and at least that many of each)",
                    "pass num_rows = num_cols = -1 to size them to fit")
    batch = diagonal.shape[:-need]
    pad = np.asarray(padding_value, diagonal.dtype)
    if max_len == 0 or rows == 0 or cols == 0:
        return np.full((*batch, rows, cols), pad, diagonal.dtype)
    inside, row, pos = _grid(rows, cols, lower, upper, max_len, align)
    return np.where(inside, _packed(diagonal, single)[..., row, pos], pad)


def _matrix_diag_part(x, k, padding_value, align, op):
    lower, upper = _band(op, k)
    rows, cols = x.shape[-2:]
    if not (lower > -rows or lower == 0) or not (upper < cols or upper == 0):
        raise _fail(op, f"k = [{lower}, {upper}] is out of bounds for {rows} x {cols} "
                    "matrices", f"diagonal indices must lie in ({-rows}, {cols})")
    max_len = max(0, min(rows + min(upper, 0), cols - max(lower, 0)))
    d = upper - np.arange(upper - lower + 1)[:, None]
    offset, length = _offset(d, rows, cols, max_len, align)
    n = np.arange(max_len)[None, :] - offset
    valid = (n >= 0) & (n < length)
    pad = np.asarray(padding_value, x.dtype)
    shape = (*x.shape[:-2], *d.shape[:1], max_len)
    if x.size == 0 or max_len == 0:
        out = np.full(shape, pad, x.dtype)
    else:
        i = np.clip(n + np.maximum(-d, 0), 0, rows - 1)
        j = np.clip(n + np.maximum(d, 0), 0, cols - 1)
        out = np.where(valid, x[..., i, j], pad)
    return out[..., 0, :] if lower == upper else out


def _matrix_set_diag(x, diagonal, k, align, op):
    lower, upper = _band(op, k)
    rows, cols = x.shape[-2:]
    if not (lower > -rows or lower == 0) or not (upper < cols or upper == 0):
        raise _fail(op, f"k = [{lower}, {upper}] is out of bounds for {rows} x {cols} "
                    "matrices", f"diagonal indices must lie in ({-rows}, {cols})")
    single = lower == upper
    max_len = max(0, min(rows + min(upper, 0), cols - max(lower, 0)))
    want = (*x.shape[:-2], *([] if single else [upper - lower + 1]), max_len)
    if diagonal.shape != want:
        raise _fail(op, f"diagonal has shape {list(diagonal.shape)} but input of shape "
                    f"{list(x.shape)} with k = [{lower}, {upper}] needs {list(want)}")
    if x.size == 0:
        return np.array(x, copy=True)
    inside, row, pos = _grid(rows, cols, lower, upper, max_len, align)
    return np.where(inside, _packed(diagonal, single)[..., row, pos], x).astype(x.dtype,
                                                                             copy=False)


@cpu_kernel("MatrixDiagV2", fresh=True)
def matrix_diag_v2(diagonal, k, num_rows, num_cols, padding_value, *, op):
    return _matrix_diag(diagonal, k, num_rows, num_cols, padding_value, "LEFT_LEFT", op)


@cpu_kernel("MatrixDiagV3", fresh=True)
def matrix_diag_v3(diagonal, k, num_rows, num_cols, padding_value, *, align, op):
    return _matrix_diag(diagonal, k, num_rows, num_cols, padding_value, align, op)


@cpu_kernel("MatrixDiagPartV2", fresh=True)
def matrix_diag_part_v2(x, k, padding_value, *, op):
    return _matrix_diag_part(x, k, padding_value, "LEFT_LEFT", op)


@cpu_kernel("MatrixDiagPartV3", fresh=True)
def matrix_diag_part_v3(x, k, padding_value, *, align, op):
    return _matrix_diag_part(x, k, padding_value, align, op)


@cpu_kernel("MatrixSetDiagV2", fresh=True)
def matrix_set_diag_v2(x, diagonal, k, *, op):
    return _matrix_set_diag(x, diagonal, k, "LEFT_LEFT", op)


@cpu_kernel("MatrixSetDiagV3", fresh=True)
def matrix_set_diag_v3(x, diagonal, k, *, align, op):
    return _matrix_set_diag(x, diagonal, k, align, op)


# -- linear algebra (flowgraph/ops/linalg_raw.py) --------------------------------------------

@cpu_kernel("CholeskyGrad", fresh=True)
def cholesky_grad(l, grad):  # noqa: E741
    """The gradient of ``A`` for ``L = cholesky(A)`` given ``grad`` of ``L`` (both read
    lower-triangular): ``sym(L^-H phi(L^H grad) L^-1)``, ``phi`` the lower triangle with
    its diagonal halved."""
    if l.size == 0:
        return np.zeros(l.shape, l.dtype)
    low = np.tril(l)
    middle = np.swapaxes(low, -1, -2).conj() @ np.tril(grad)
    middle = np.tril(middle) - 0.5 * np.tril(np.triu(middle))
    solve = _triangular()
    right = np.swapaxes(solve(low, np.swapaxes(middle, -1, -2).conj(), lower=True,
                              adjoint=True), -1, -2).conj()           # middle @ L^-1
    out = solve(low, right, lower=True, adjoint=True)                 # L^-H @ right
    return (0.5 * (out + np.swapaxes(out, -1, -2).conj())).astype(l.dtype, copy=False)


def _triangular():
    from flowgraph.backends.cpu.kernels_linalg import matrix_triangular_solve

    return matrix_triangular_solve


@cpu_kernel("SelfAdjointEig", fresh=True)
def self_adjoint_eig_v1(x):
    """The V1 packed form: row 0 the eigenvalues (ascending), rows 1.. the eigenvectors
    (as columns)."""
    n = x.shape[-1]
    out = np.empty((*x.shape[:-2], n + 1, n), x.dtype)
    if x.size == 0:
        return out
    e, v = np.linalg.eigh(x, UPLO="L")
    out[..., 0, :] = e
    out[..., 1:, :] = v
    return out


@cpu_kernel("MatrixSolveLs", fresh=True)
def matrix_solve_ls(matrix, rhs, l2_regularizer, *, fast, op):
    m, n = matrix.shape[-2:]
    out_shape = (*matrix.shape[:-2], n, rhs.shape[-1])
    if matrix.size == 0 or rhs.size == 0:
        return np.zeros(out_shape, rhs.dtype)
    if not fast:  # minimum-norm least squares (the regularizer is not used)
        pinv = np.linalg.pinv(matrix)
        return (pinv @ rhs).astype(rhs.dtype, copy=False)
    lam = float(l2_regularizer)
    adj = np.swapaxes(matrix, -1, -2).conj()
    try:
        if m >= n:
            gram = adj @ matrix + lam * np.eye(n, dtype=matrix.dtype)
            chol = np.linalg.cholesky(gram)
            return _cho_solve(chol, adj @ rhs).astype(rhs.dtype, copy=False)
        gram = matrix @ adj + lam * np.eye(m, dtype=matrix.dtype)
        chol = np.linalg.cholesky(gram)
        return (adj @ _cho_solve(chol, rhs)).astype(rhs.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise _fail(op, "Input matrix was rank deficient or ill-conditioned",
                    "pass l2_regularizer > 0 or fast=False") from None


def _cho_solve(chol, b):
    solve = _triangular()
    y = solve(chol, b, lower=True, adjoint=False)
    return solve(chol, y, lower=True, adjoint=True)


@cpu_kernel("Eig", fresh=True)
def eig(x, *, compute_v, Tout):
    out = np.dtype(Tout.as_numpy_dtype)
    if x.size == 0:
        return [np.zeros((*x.shape[:-1],), out),
                np.zeros((*x.shape,) if compute_v else (0,), out)]
    if not compute_v:
        return [np.linalg.eigvals(x).astype(out), np.zeros((0,), out)]
    e, v = np.linalg.eig(x)
    return [e.astype(out), v.astype(out)]


@cpu_kernel("BandedTriangularSolve", fresh=True)
def banded_triangular_solve(matrix, rhs, *, lower, adjoint, op):
    bands, m = matrix.shape[-2:]
    if rhs.shape[-2] != m:
        raise _fail(op, f"matrix holds bands of {m} entries but rhs has {rhs.shape[-2]} rows")
    k = [-(bands - 1), 0] if lower else [0, bands - 1]
    if bands > m and m > 0:
        matrix = matrix[..., :m, :] if lower else matrix[..., bands - m:, :]
        k = [-(m - 1), 0] if lower else [0, m - 1]
    dense = _matrix_diag(matrix, np.asarray(k), m, m, 0, "LEFT_RIGHT", op)
    return _triangular()(dense, rhs, lower=lower, adjoint=adjoint)


@cpu_kernel("BatchMatMulV3", fresh=True)
def batch_matmul_v3(x, y, *, adj_x, adj_y, Tout, Ta=None, Tb=None):
    out = np.dtype(Tout.as_numpy_dtype)
    if adj_x:
        x = np.swapaxes(x, -1, -2).conj()
    if adj_y:
        y = np.swapaxes(y, -1, -2).conj()
    if out.kind in "iu":
        return np.matmul(x.astype(np.int64), y.astype(np.int64)).astype(out)
    return np.matmul(x.astype(out, copy=False), y.astype(out, copy=False))


@cpu_kernel("SparseMatMul", fresh=True)
def sparse_matmul(a, b, *, transpose_a, transpose_b, a_is_sparse=False, b_is_sparse=False,
                  Ta=None, Tb=None):
    out = np.float64 if a.dtype == b.dtype == np.float64 else np.float32
    a = np.asarray(a, out)
    b = np.asarray(b, out)
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


def _alias_kernels():
    """The Batch* op types run the kernels of their current names."""
    from flowgraph.backends.cpu import backend, kernels_linalg
    from flowgraph.backends.cpu.kernels_spectral import _fft as fft_kernel
    from flowgraph.ops.linalg_raw import BATCH_ALIASES

    kernels = {name: getattr(kernels_linalg, fn) for name, fn in (
        ("Cholesky", "cholesky"), ("MatrixBandPart", "matrix_band_part"),
        ("MatrixDeterminant", "matrix_determinant"), ("MatrixDiag", "matrix_diag"),
        ("MatrixDiagPart", "matrix_diag_part"), ("MatrixInverse", "matrix_inverse"),
        ("MatrixSetDiag", "matrix_set_diag"), ("MatrixSolve", "matrix_solve"),
        ("MatrixTriangularSolve", "matrix_triangular_solve"),
        ("SelfAdjointEigV2", "self_adjoint_eig"), ("Svd", "svd"))}
    kernels.update({"CholeskyGrad": cholesky_grad, "MatrixSolveLs": matrix_solve_ls,
                    "SelfAdjointEig": self_adjoint_eig_v1})
    ffts = {"FFT": (np.fft.fftn, 1), "FFT2D": (np.fft.fftn, 2), "FFT3D": (np.fft.fftn, 3),
            "IFFT": (np.fft.ifftn, 1), "IFFT2D": (np.fft.ifftn, 2), "IFFT3D": (np.fft.ifftn, 3)}
    for alias, current in BATCH_ALIASES.items():
        fn = kernels[current] if current in kernels else fft_kernel(*ffts[current])
        backend.register_kernel(alias, fn, fresh=current not in ("Svd", "SelfAdjointEigV2"))


_alias_kernels()
