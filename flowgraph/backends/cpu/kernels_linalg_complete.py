"""CPU kernels for the LU, matrix-function and tridiagonal ops
(`flowgraph/ops/linalg_lu.py`, `linalg_funcs.py`, `linalg_tridiag.py`): SciPy's LAPACK
wrappers, one matrix of the batch at a time.

As TensorFlow's CPU kernels do, ``Lu`` of a singular matrix is an InvalidArgumentError,
while ``MatrixSquareRoot`` of a real matrix without a real square root and
``TridiagonalSolve`` of a singular system return NaN instead of failing.
"""

from __future__ import annotations

import warnings

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.scipy_lazy import scipy_linalg
from flowgraph.framework import errors


def _fail(op, what, fix):
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {what}; {fix}")


def _matrices(x):
    """`x` ([..., m, n]) viewed as a stack of matrices, and the batch shape."""
    return x.reshape((-1, *x.shape[-2:])), x.shape[:-2]


@cpu_kernel("Lu")
def lu(x, *, output_idx_type, op):
    n = x.shape[-1]
    stack, batch = _matrices(x)
    packed = np.empty_like(stack)
    perms = np.empty((stack.shape[0], n), np.dtype(output_idx_type.as_numpy_dtype))
    for i, m in enumerate(stack):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy warns on an exactly singular factor
            factor, piv = scipy_linalg().lu_factor(m, check_finite=False)
        if np.any(np.diagonal(factor) == 0):
            raise _fail(op, "Input is not invertible", "the LU factorization needs "
                        "non-singular matrices")
        perm = np.arange(n)
        for row, swap in enumerate(piv):  # LAPACK's row swaps, applied in order
            perm[[row, swap]] = perm[[swap, row]]
        packed[i], perms[i] = factor, perm
    return [packed.reshape(x.shape), perms.reshape((*batch, n))]


def _each_matrix(x, fn):
    """`fn` applied to each matrix of `x` ([..., n, n]) with SciPy's warnings silenced (a
    singular matrix's result says so itself), in `x`'s shape and dtype."""
    if x.size == 0:
        return np.array(x, copy=True)
    stack, _ = _matrices(x)
    out = np.empty_like(stack)
    for i, m in enumerate(stack):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[i] = fn(m)
    return out.reshape(x.shape)


def _real_or_complex_sqrtm(m):
    root = scipy_linalg().sqrtm(m.astype(np.complex128 if m.dtype.kind == "c" else np.float64))
    if m.dtype.kind != "c":
        # A real matrix with no real square root (a negative eigenvalue) gives NaN.
        if np.iscomplexobj(root) and np.any(np.abs(root.imag) > 1e-6 * max(
                1.0, float(np.abs(root).max()))):
            root = np.full(m.shape, np.nan)
        root = np.real(root)
    return root


@cpu_kernel("MatrixSquareRoot", fresh=True)
def matrix_square_root(x):
    return _each_matrix(x, _real_or_complex_sqrtm)


@cpu_kernel("MatrixLogarithm", fresh=True)
def matrix_logarithm(x):
    return _each_matrix(x, lambda m: scipy_linalg().logm(m.astype(np.complex128)))


@cpu_kernel("TridiagonalSolve", fresh=True)
def tridiagonal_solve(diagonals, rhs, *, partial_pivoting, perturb_singular):
    del partial_pivoting  # LAPACK's banded solver always pivots
    shape = np.broadcast_shapes(diagonals.shape[:-2], rhs.shape[:-2])
    out = np.empty((*shape, *rhs.shape[-2:]), rhs.dtype)
    if out.size == 0:
        return out
    diags = np.broadcast_to(diagonals, (*shape, *diagonals.shape[-2:]))
    rhss = np.broadcast_to(rhs, out.shape)
    for idx in np.ndindex(shape):
        sup, main, sub = diags[idx]
        band = np.zeros((3, main.shape[0]), np.result_type(diagonals.dtype, np.float64))
        band[0, 1:] = sup[:-1]
        band[1] = main
        band[2, :-1] = sub[1:]
        if perturb_singular:
            tiny = np.finfo(np.float32 if diagonals.dtype in (np.float32, np.complex64)
                            else np.float64).eps
            band[1] = np.where(band[1] == 0, tiny, band[1])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[idx] = scipy_linalg().solve_banded((1, 1), band, rhss[idx],
                                                     check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            out[idx] = np.nan
    return out


@cpu_kernel("TridiagonalMatMul", fresh=True)
def tridiagonal_matmul(superdiag, maindiag, subdiag, rhs):
    sup = np.swapaxes(superdiag, -1, -2)  # [..., M, 1]: one coefficient per row
    main = np.swapaxes(maindiag, -1, -2)
    sub = np.swapaxes(subdiag, -1, -2)
    out = main * rhs
    out[..., :-1, :] += sup[..., :-1, :] * rhs[..., 1:, :]
    out[..., 1:, :] += sub[..., 1:, :] * rhs[..., :-1, :]
    return out.astype(rhs.dtype, copy=False)
