"""Tridiagonal matrices: `tf.linalg.tridiagonal_solve` (op ``TridiagonalSolve``),
`tf.linalg.tridiagonal_matmul` (op ``TridiagonalMatMul``) and
`tf.linalg.eigh_tridiagonal`.

A tridiagonal ``[M, M]`` matrix is given by its three diagonals. The "compact" format is
``[..., 3, M]``: the superdiagonal (its last element unused), the main diagonal and the
subdiagonal (its first element unused); "sequence" is the three ``[..., M]`` tensors;
"matrix" the dense ``[..., M, M]`` matrix, whose other entries are ignored.

Both ops differentiate with respect to the diagonals and the right-hand side; the
gradients are themselves tridiagonal solves and products. `eigh_tridiagonal` builds the
dense Hermitian matrix and calls the dense eigensolver.

Example
-------
>>> import flowgraph as tf
>>> d = [[1.0, 1.0, 0.0], [4.0, 4.0, 4.0], [0.0, 1.0, 1.0]]
>>> tf.Session().run(tf.linalg.tridiagonal_matmul(d, [[1.0], [1.0], [1.0]])).tolist()
[[5.0], [6.0], [5.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_index_ops import boolean_mask
from flowgraph.ops.array_join_ops import concat, pad, stack, unstack
from flowgraph.ops.array_shape_ops import expand_dims, squeeze, zeros_like
from flowgraph.ops.linalg_basic import matrix_transpose
from flowgraph.ops.linalg_diag_ops import matrix_diag, matrix_diag_part
from flowgraph.ops.linalg_ops import self_adjoint_eig, self_adjoint_eigvals
from flowgraph.ops.math_ops import conj, logical_and, multiply
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import make_tensor

__all__ = ["eigh_tridiagonal", "tridiagonal_matmul", "tridiagonal_solve"]

_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.complex64, _dtypes.complex128)


def _batch(op, a: TensorShape, b: TensorShape) -> list | None:
    """The broadcast batch dimensions of two ``[..., r, c]`` shapes (None: unknown rank)."""
    if a.ndims is None or b.ndims is None:
        return None
    out = []
    for i in range(max(a.ndims, b.ndims) - 2, 0, -1):
        da = a.dims[-2 - i] if i <= a.ndims - 2 else None
        db = b.dims[-2 - i] if i <= b.ndims - 2 else None
        if da is None or (da.value == 1 and db is not None):
            out.append(db)
        elif db is None or db.value == 1 or db.is_compatible_with(da):
            out.append(da if da.value is not None else db)
        else:
            raise op.shape_error(f"the batch dimensions of {a} and {b} do not broadcast")
    return out


@register_op("TridiagonalSolve", attrs={"partial_pivoting": True, "perturb_singular": False},
             cost="expensive")
def _solve_shape(op, diagonals, rhs):
    if diagonals.ndims is not None:
        if diagonals.ndims < 2 or diagonals.dims[-2].value not in (None, 3):
            raise op.shape_error(f"diagonals must be [..., 3, M], got shape {diagonals}")
    if rhs.ndims is not None and rhs.ndims < 2:
        raise op.shape_error(f"rhs must be [..., M, K], got shape {rhs}")
    batch = _batch(op, diagonals, rhs)
    if batch is None:
        return [TensorShape(None)]
    m = diagonals.dims[-1]
    if not m.is_compatible_with(rhs.dims[-2]):
        raise op.shape_error(f"the diagonals' length {m} differs from the rhs rows "
                             f"{rhs.dims[-2]}")
    return [TensorShape([*batch, m if m.value is not None else rhs.dims[-2], rhs.dims[-1]])]


@register_op("TridiagonalMatMul", cost="expensive")
def _matmul_shape(op, superdiag, maindiag, subdiag, rhs):
    for what, d in (("superdiag", superdiag), ("maindiag", maindiag), ("subdiag", subdiag)):
        if d.ndims is not None and (d.ndims < 2 or d.dims[-2].value not in (None, 1)):
            raise op.shape_error(f"{what} must be [..., 1, M], got shape {d}")
    if rhs.ndims is not None and rhs.ndims < 2:
        raise op.shape_error(f"rhs must be [..., M, N], got shape {rhs}")
    return [rhs]


def adjoint_diagonals(diagonals):
    """The compact diagonals of the adjoint matrix (``[..., 3, M]``)."""
    sup, main, sub = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    new_sup = concat([sub[..., 1:], zeros_like(sub[..., :1])], -1)
    new_sub = concat([zeros_like(sup[..., :1]), sup[..., :-1]], -1)
    return conj(stack([new_sup, main, new_sub], -2))


def _shift_up(x):
    """Row i of the result is row i+1 of `x` (the last row zero), over axis -2."""
    return concat([x[..., 1:, :], zeros_like(x[..., :1, :])], -2)


def _shift_down(x):
    return concat([zeros_like(x[..., :1, :]), x[..., :-1, :]], -2)


@register_gradient("TridiagonalSolve")
def _solve_grad(op, grad):
    diagonals = op.inputs[0]
    x = op.outputs[0]
    grad_rhs = make_tensor("TridiagonalSolve", [adjoint_diagonals(diagonals), grad],
                           dict(op.attrs))
    xc = conj(x)
    # grad_A = -grad_rhs x^H, kept on the three diagonals.
    sup = -reduce_sum(multiply(grad_rhs, _shift_up(xc)), -1)
    main = -reduce_sum(multiply(grad_rhs, xc), -1)
    sub = -reduce_sum(multiply(grad_rhs, _shift_down(xc)), -1)
    grad_diag = stack([sup, main, sub], -2)
    return [_reduce_to(grad_diag, diagonals), _reduce_to(grad_rhs, op.inputs[1])]


def _reduce_to(grad, like):
    """Sum `grad` over the leading batch axes that broadcasting added to `like`."""
    g, w = grad.shape.ndims, like.shape.ndims
    if g is not None and w is not None and g > w:
        grad = reduce_sum(grad, list(range(g - w)))
    return grad


@register_gradient("TridiagonalMatMul")
def _matmul_grad(op, grad):
    superdiag, maindiag, subdiag, rhs = op.inputs
    compact = concat([superdiag, maindiag, subdiag], -2)
    adj = adjoint_diagonals(compact)
    grad_rhs = make_tensor("TridiagonalMatMul",
                           [adj[..., 0:1, :], adj[..., 1:2, :], adj[..., 2:3, :], grad])
    rc = conj(rhs)
    g_sup = expand_dims(reduce_sum(multiply(grad, _shift_up(rc)), -1), -2)
    g_main = expand_dims(reduce_sum(multiply(grad, rc), -1), -2)
    g_sub = expand_dims(reduce_sum(multiply(grad, _shift_down(rc)), -1), -2)
    return [g_sup, g_main, g_sub, grad_rhs]


# -- wrappers -------------------------------------------------------------------------------

def compact_diagonals(diagonals, diagonals_format, fn):
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals, name="diagonals")
        if d.shape.ndims is not None and (d.shape.ndims < 2 or d.shape[-2].value not in
                                          (None, 3)):
            raise ValueError(f"Expected 3 diagonals got {d.shape[-2] if d.shape.ndims else 0}"
                             f" ({fn}: compact diagonals are [..., 3, M], got shape "
                             f"{d.shape})")
        return d
    if diagonals_format == "sequence":
        if not isinstance(diagonals, list | tuple) or len(diagonals) != 3:
            raise ValueError(f"Expected diagonals to be a sequence of length 3 ({fn}: "
                             "superdiagonal, main diagonal, subdiagonal)")
        parts = [convert_to_tensor(d, name="diagonals") for d in diagonals]
        return stack(parts, -2)
    if diagonals_format == "matrix":
        m = convert_to_tensor(diagonals, name="diagonals")
        if m.shape.ndims is not None and m.shape.ndims < 2:
            raise ValueError(f"{fn}: diagonals in 'matrix' format must be [..., M, M], got "
                             f"shape {m.shape}")
        main = matrix_diag_part(m)
        sup = matrix_diag_part(m[..., :-1, 1:])
        sub = matrix_diag_part(m[..., 1:, :-1])
        sup = concat([sup, zeros_like(main[..., :1])], -1)
        sub = concat([zeros_like(main[..., :1]), sub], -1)
        return stack([sup, main, sub], -2)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format} ({fn} takes "
                     "'compact', 'sequence' or 'matrix')")


def _check_dtype(d, fn):
    if d.dtype.base_dtype not in _TYPES:
        raise TypeError(f"{fn}: the diagonals must be float32, float64, complex64 or "
                        f"complex128, got {d.dtype.base_dtype.name}")


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """Solve ``A @ x = rhs`` for a tridiagonal ``A`` given by its diagonals.

    Parameters
    ----------
    diagonals : Tensor or tuple
        In `diagonals_format`: "compact" ``[..., 3, M]``, "sequence" (three ``[..., M]``)
        or "matrix" ``[..., M, M]``.
    rhs : Tensor
        ``[..., M, K]`` or ``[..., M]`` (``[..., K, M]`` with `transpose_rhs`).
    transpose_rhs, conjugate_rhs : bool
        Transpose / conjugate `rhs` first.
    partial_pivoting, perturb_singular : bool
        TensorFlow's attributes; the CPU kernel always pivots, and `perturb_singular`
        replaces zero pivots by a tiny number. A singular system gives NaN.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = [[1.0, 1.0, 0.0], [4.0, 4.0, 4.0], [0.0, 1.0, 1.0]]
    >>> tf.Session().run(tf.linalg.tridiagonal_solve(d, [[5.0], [6.0], [5.0]])).tolist()
    [[1.0], [1.0], [1.0]]
    """
    fn = "tf.linalg.tridiagonal_solve"
    d = compact_diagonals(diagonals, diagonals_format, fn)
    _check_dtype(d, fn)
    b = convert_to_tensor(rhs, name="rhs", dtype=d.dtype.base_dtype)
    attrs = {"partial_pivoting": bool(partial_pivoting),
             "perturb_singular": bool(perturb_singular)}
    if (not transpose_rhs and b.shape.ndims is not None and d.shape.ndims is not None
            and b.shape.ndims == d.shape.ndims - 1):  # a vector right-hand side
        b = conj(b) if conjugate_rhs else b
        x = make_tensor("TridiagonalSolve", [d, expand_dims(b, -1)], attrs,
                        name=name or "TridiagonalSolve")
        return squeeze(x, [-1])
    if transpose_rhs:
        b = matrix_transpose(b)
    if conjugate_rhs:
        b = conj(b)
    return make_tensor("TridiagonalSolve", [d, b], attrs, name=name or "TridiagonalSolve")


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The product ``A @ rhs`` of a tridiagonal ``A`` (given by its diagonals, as in
    `tridiagonal_solve`) and ``rhs`` ``[..., M, N]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = ([2.0, 0.0], [1.0, 1.0], [0.0, 3.0])
    >>> tf.Session().run(tf.linalg.tridiagonal_matmul(d, [[1.0], [1.0]], "sequence")).tolist()
    [[3.0], [4.0]]
    """
    fn = "tf.linalg.tridiagonal_matmul"
    d = compact_diagonals(diagonals, diagonals_format, fn)
    _check_dtype(d, fn)
    b = convert_to_tensor(rhs, name="rhs", dtype=d.dtype.base_dtype)
    sup, main, sub = (expand_dims(t, -2) for t in unstack(d, 3, -2))
    return make_tensor("TridiagonalMatMul", [sup, main, sub, b],
                       name=name or "TridiagonalMatMul")


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None,
                     tol=None, name=None):
    """Eigenvalues (ascending) and, with ``eigvals_only=False``, eigenvectors (columns)
    of the Hermitian tridiagonal matrix with diagonal `alpha` ``[n]`` and subdiagonal
    `beta` ``[n-1]`` (the superdiagonal is ``conj(beta)``).

    `select`: "a" all; "v" those in ``(lo, hi]`` for ``select_range=(lo, hi)``; "i" those
    with index ``lo..hi`` (inclusive). `tol` is accepted for TensorFlow's signature (the
    dense solver is exact to working precision).

    Example
    -------
    >>> import flowgraph as tf
    >>> e = tf.linalg.eigh_tridiagonal([2.0, 2.0], [1.0])
    >>> tf.Session().run(e).round(4).tolist()
    [1.0, 3.0]
    """
    del tol
    with name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        alpha = convert_to_tensor(alpha, name="alpha")
        beta = convert_to_tensor(beta, name="beta", dtype=alpha.dtype.base_dtype)
        if alpha.shape.ndims not in (None, 1) or beta.shape.ndims not in (None, 1):
            raise ValueError(f"tf.linalg.eigh_tridiagonal: alpha and beta must be vectors, "
                             f"got shapes {alpha.shape} and {beta.shape}")
        if select not in ("a", "v", "i"):
            raise ValueError(f"tf.linalg.eigh_tridiagonal: select must be 'a', 'v' or 'i', "
                             f"got {select!r}")
        if select != "a" and select_range is None:
            raise ValueError("tf.linalg.eigh_tridiagonal: select='v' and 'i' need "
                             "select_range=(lo, hi)")
        # the dense solver reads the lower triangle: alpha on the diagonal, beta below it
        lower = matrix_diag(alpha) + pad(matrix_diag(beta), [[1, 0], [0, 1]])
        if eigvals_only:
            e = self_adjoint_eigvals(lower)
            v = None
        else:
            e, v = self_adjoint_eig(lower)
        if select == "i":
            lo, hi = int(select_range[0]), int(select_range[1])
            e = e[lo:hi + 1]
            v = None if v is None else v[:, lo:hi + 1]
        elif select == "v":
            lo = convert_to_tensor(select_range[0], dtype=e.dtype.base_dtype, name="lo")
            hi = convert_to_tensor(select_range[1], dtype=e.dtype.base_dtype, name="hi")
            keep = logical_and(e > lo, e <= hi)
            v = None if v is None else matrix_transpose(boolean_mask(matrix_transpose(v),
                                                                     keep))
            e = boolean_mask(e, keep)
        return e if eigvals_only else (e, v)
