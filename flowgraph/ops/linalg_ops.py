"""Dense linear algebra on (batches of) square matrices: ``Cholesky``, ``MatrixInverse``,
``MatrixDeterminant``, ``LogMatrixDeterminant``, ``MatrixSolve``,
``MatrixTriangularSolve``, ``Qr``, ``Svd`` and ``SelfAdjointEigV2``, with TensorFlow
1.x's op types, attributes and gradients; `cholesky_solve`, `matrix_solve_ls`,
`logdet` and the ``tf.linalg`` spellings are built from them.

Kernels (``backends/cpu/kernels_linalg.py``) use NumPy's LAPACK bindings on the last two
axes. As in TensorFlow, ``Cholesky`` and ``SelfAdjointEigV2`` read only the lower
triangle of their input, so their gradients are lower-triangular.

Example
-------
>>> import flowgraph as tf
>>> a = tf.constant([[4.0, 2.0], [2.0, 3.0]])
>>> with tf.Session() as sess:
...     print(sess.run(tf.matrix_determinant(a)))
8.0
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops.array_shape_ops import expand_dims, shape, zeros_like
from flowgraph.ops.linalg_basic import adjoint
from flowgraph.ops.linalg_diag_ops import (
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
)
from flowgraph.ops.math_ops import add, log, matmul, multiply, reciprocal, subtract
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["cholesky", "cholesky_solve", "matrix_determinant", "matrix_inverse",
           "matrix_solve", "matrix_solve_ls", "matrix_triangular_solve", "qr",
           "self_adjoint_eig", "self_adjoint_eigvals", "svd"]

_FLOATS = (_dtypes.float32, _dtypes.float64, _dtypes.complex64, _dtypes.complex128)


def _square(op, x, what="input"):
    if x.ndims is None:
        return
    if x.ndims < 2:
        raise op.shape_error(f"{what} must be a matrix or a batch of matrices (rank >= 2), "
                             f"got shape {x}")
    if not x.dims[-1].is_compatible_with(x.dims[-2]):
        raise op.shape_error(f"{what} must be square in its last two dimensions, got shape "
                             f"{x}")


@register_op("Cholesky", cost="expensive")
def _cholesky_shape(op, x):
    _square(op, x)
    return [x]


@register_op("MatrixInverse", attrs={"adjoint": False}, cost="expensive")
def _inverse_shape(op, x):
    _square(op, x)
    return [x]


@register_op("MatrixDeterminant", cost="expensive")
def _det_shape(op, x):
    _square(op, x)
    return [TensorShape(None) if x.ndims is None else TensorShape(x.dims[:-2])]


@register_op("LogMatrixDeterminant", num_outputs=2, cost="expensive",
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  op.inputs[0].dtype.base_dtype.real_dtype])
def _logdet_shape(op, x):
    _square(op, x)
    out = TensorShape(None) if x.ndims is None else TensorShape(x.dims[:-2])
    return [out, out]


def _solve_shape(op, matrix, rhs):
    _square(op, matrix, "matrix")
    if matrix.ndims is not None and rhs.ndims is not None:
        if rhs.ndims != matrix.ndims:
            raise op.shape_error(f"matrix {matrix} and rhs {rhs} must have the same rank")
        if not matrix.dims[-2].is_compatible_with(rhs.dims[-2]):
            raise op.shape_error(f"matrix {matrix} and rhs {rhs}: the number of rows "
                                 f"differs ({matrix.dims[-2]} vs {rhs.dims[-2]})")
        return [TensorShape(matrix.dims[:-1] + rhs.dims[-1:])]
    return [rhs]


register_op("MatrixSolve", attrs={"adjoint": False}, cost="expensive")(_solve_shape)
register_op("MatrixTriangularSolve", attrs={"lower": True, "adjoint": False},
            cost="expensive")(_solve_shape)


@register_op("Qr", attrs={"full_matrices": False}, num_outputs=2, cost="expensive")
def _qr_shape(op, x):
    if x.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    m, n = x.dims[-2], x.dims[-1]
    batch = x.dims[:-2]
    if op.attrs["full_matrices"]:
        return [TensorShape([*batch, m, m]), TensorShape([*batch, m, n])]
    k = Dimension(None) if m.value is None or n.value is None else Dimension(min(m.value,
                                                                                 n.value))
    return [TensorShape([*batch, m, k]), TensorShape([*batch, k, n])]


@register_op("Svd", attrs={"compute_uv": True, "full_matrices": False}, num_outputs=3,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype.real_dtype,
                                  op.inputs[0].dtype.base_dtype, op.inputs[0].dtype.base_dtype],
             cost="expensive")
def _svd_shape(op, x):
    if x.ndims is None:
        return [TensorShape(None)] * 3
    m, n = x.dims[-2], x.dims[-1]
    batch = x.dims[:-2]
    k = Dimension(None) if m.value is None or n.value is None else Dimension(min(m.value,
                                                                                 n.value))
    if not op.attrs["compute_uv"]:
        return [TensorShape([*batch, k]), TensorShape([0]), TensorShape([0])]
    if op.attrs["full_matrices"]:
        return [TensorShape([*batch, k]), TensorShape([*batch, m, m]),
                TensorShape([*batch, n, n])]
    return [TensorShape([*batch, k]), TensorShape([*batch, m, k]), TensorShape([*batch, n, k])]


# As TensorFlow's op def: the eigenvalues have the input's dtype (complex for a
# Hermitian input, with zero imaginary parts).
@register_op("SelfAdjointEigV2", attrs={"compute_v": True}, num_outputs=2,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  op.inputs[0].dtype.base_dtype], cost="expensive")
def _eig_shape(op, x):
    _square(op, x)
    if x.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    e = TensorShape(x.dims[:-1])
    return [e, x if op.attrs["compute_v"] else TensorShape([0])]


def _matrix(x, what, fn):
    x = convert_to_tensor(x, name=what)
    if x.dtype.base_dtype not in _FLOATS:
        raise TypeError(f"tf.{fn}: {what} must be float32, float64, complex64 or "
                        f"complex128, got {x.dtype.base_dtype.name}")
    return x


# -- wrappers -----------------------------------------------------------------------------

def cholesky(input, name=None):
    """The lower-triangular Cholesky factor ``L`` of each symmetric positive-definite
    matrix (``input = L @ adjoint(L)``; only the lower triangle of `input` is read).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.cholesky([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    return make_tensor("Cholesky", [_matrix(input, "input", "cholesky")],
                       name=name or "Cholesky")


def matrix_inverse(input, adjoint=False, name=None):
    """The inverse of each square matrix (of its adjoint when `adjoint`); a singular
    matrix raises InvalidArgumentError when the op runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.matrix_inverse([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return make_tensor("MatrixInverse", [_matrix(input, "input", "matrix_inverse")],
                       {"adjoint": bool(adjoint)}, name=name or "MatrixInverse")


def matrix_determinant(input, name=None):
    """The determinant of each square matrix (shape ``[...]`` for ``[..., n, n]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> float(tf.Session().run(tf.matrix_determinant([[1.0, 2.0], [3.0, 4.0]])))
    -2.0
    """
    return make_tensor("MatrixDeterminant", [_matrix(input, "input", "matrix_determinant")],
                       name=name or "MatrixDeterminant")


LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant",
                                              ["sign", "log_abs_determinant"])
Qr = collections.namedtuple("Qr", ["q", "r"])


def slogdet(input, name=None):
    """``(sign, log|det|)`` of each square matrix, stable where the determinant
    under/overflows.

    Example
    -------
    >>> import flowgraph as tf
    >>> s, l = tf.Session().run(tf.linalg.slogdet([[-2.0, 0.0], [0.0, 3.0]]))
    >>> float(s), round(float(l), 4)
    (-1.0, 1.7918)
    """
    op = make_op("LogMatrixDeterminant", [_matrix(input, "input", "linalg.slogdet")],
                 name=name or "LogMatrixDeterminant")
    return LogMatrixDeterminant(*op.outputs)


def logdet(matrix, name=None):
    """``log(det(matrix))`` of Hermitian positive-definite matrices, through their
    Cholesky factor: ``2 * sum(log(diag(L)))``.

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.linalg.logdet([[4.0, 0.0], [0.0, 1.0]]))), 4)
    1.3863
    """
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        # TensorFlow's names: the result is the scope's ``mul``
        return 2.0 * reduce_sum(log(matrix_diag_part(chol)), -1)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """Solve ``matrix @ x = rhs`` (``adjoint(matrix) @ x = rhs`` when `adjoint`) for each
    square `matrix`; `rhs` is ``[..., n, k]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.matrix_solve([[2.0, 0.0], [0.0, 4.0]], [[2.0], [2.0]])).tolist()
    [[1.0], [0.5]]
    """
    a = _matrix(matrix, "matrix", "matrix_solve")
    b = convert_to_tensor(rhs, dtype=a.dtype.base_dtype, name="rhs")
    return make_tensor("MatrixSolve", [a, b], {"adjoint": bool(adjoint)},
                       name=name or "MatrixSolve")


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solve ``matrix @ x = rhs`` by substitution, reading only the lower (or, with
    ``lower=False``, upper) triangle of `matrix`.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = [[2.0, 0.0], [1.0, 1.0]]
    >>> tf.Session().run(tf.matrix_triangular_solve(a, [[2.0], [3.0]])).tolist()
    [[1.0], [2.0]]
    """
    with name_scope(name, "triangular_solve", [matrix, rhs]):  # TensorFlow's wrapper scope
        return _triangular_solve_op(matrix, rhs, lower, adjoint)


def _triangular_solve_op(matrix, rhs, lower, adjoint, name=None):
    """The bare ``MatrixTriangularSolve`` op (`cholesky_solve` builds it unscoped)."""
    a = _matrix(matrix, "matrix", "matrix_triangular_solve")
    b = convert_to_tensor(rhs, dtype=a.dtype.base_dtype, name="rhs")
    return make_tensor("MatrixTriangularSolve", [a, b],
                       {"lower": bool(lower), "adjoint": bool(adjoint)},
                       name=name or "MatrixTriangularSolve")


def cholesky_solve(chol, rhs, name=None):
    """Solve ``A @ x = rhs`` given ``chol = tf.cholesky(A)``: two triangular solves.

    Example
    -------
    >>> import flowgraph as tf
    >>> chol = tf.cholesky([[4.0, 2.0], [2.0, 2.0]])
    >>> tf.Session().run(tf.cholesky_solve(chol, [[6.0], [4.0]])).tolist()
    [[1.0], [1.0]]
    """
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        # TensorFlow's names: the result is the scope's ``MatrixTriangularSolve_1``
        y = _triangular_solve_op(chol, rhs, lower=True, adjoint=False)
        return _triangular_solve_op(chol, y, lower=True, adjoint=True)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solutions of ``matrix @ x = rhs`` with an optional ridge term
    ``l2_regularizer * ||x||^2``, through the normal equations (TensorFlow's ``fast``
    path), built as TensorFlow builds them: the Cholesky factor of the regularized Gram
    matrix and `cholesky_solve`. For ``m >= n`` it solves ``(A^H A + l2 I) x = A^H b``;
    for ``m < n`` the minimum-norm ``x = A^H (A A^H + l2 I)^-1 b``; with matrix
    dimensions unknown when the graph is built, a ``tf.cond`` picks one at run time.
    ``fast=False``, or a large batch of small matrices (TensorFlow's cache-size rule),
    emits one ``MatrixSolveLs`` op instead.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> x = tf.matrix_solve_ls(a, [[1.0], [1.0], [2.0]])
    >>> [round(v, 4) for v in tf.Session().run(x).ravel().tolist()]
    [1.0, 1.0]
    """
    a = _matrix(matrix, "matrix", "matrix_solve_ls")
    if a.dtype.base_dtype == _dtypes.complex128 and (
            isinstance(l2_regularizer, Tensor) or l2_regularizer != 0):
        raise NotImplementedError("matrix_solve_ls is currently disabled for complex128 "
                                  "and l2_regularizer != 0 due to poor accuracy.")
    if not _solve_ls_in_parts(fast, a):
        b = convert_to_tensor(rhs, dtype=a.dtype.base_dtype, name="rhs")
        lam = convert_to_tensor(l2_regularizer, dtype=_dtypes.float64, name="l2_regularizer")
        return make_tensor("MatrixSolveLs", [a, b, lam], {"fast": bool(fast)},
                           name=name or "MatrixSolveLs")
    with name_scope(name, "matrix_solve_ls", [a, rhs, l2_regularizer]):
        b = convert_to_tensor(rhs, dtype=a.dtype.base_dtype, name="rhs")
        m, n = a.shape[-2].value, a.shape[-1].value
        if m is not None and n is not None:
            return _solve_ls(a, b, l2_regularizer, over=m >= n)
        from flowgraph.ops.control_flow_cond import cond
        from flowgraph.ops.math_ops import greater_equal

        dims = shape(a)[-2:]
        return cond(greater_equal(dims[-2], dims[-1]),
                    lambda: _solve_ls(a, b, l2_regularizer, over=True),
                    lambda: _solve_ls(a, b, l2_regularizer, over=False))


def _solve_ls_in_parts(fast, a) -> bool:
    """TensorFlow's choice: the normal equations built of ops unless ``fast=False`` or
    the batch is large (past an L2 cache guess) and holds more matrices than the smaller
    matrix dimension; then the ``MatrixSolveLs`` kernel."""
    if fast is False:
        return False
    full = a.shape
    if not full.is_fully_defined():
        return True
    size = full.num_elements() * a.dtype.base_dtype.size
    batch = full[:-2].num_elements()
    return not (size > 256000 and batch > min(full.as_list()[-2:]))


def _solve_ls(a, b, l2_regularizer, over):
    """``(A^H A + l2 I)^-1 A^H b`` (`over`) or ``A^H (A A^H + l2 I)^-1 b``, by the
    Cholesky factor of the regularized Gram matrix, named as TensorFlow names them."""
    from flowgraph.ops.linalg_basic import eye

    gram = matmul(a, a, adjoint_a=over, adjoint_b=not over)
    if isinstance(l2_regularizer, Tensor) or l2_regularizer != 0:
        dims = shape(a)
        batch, small = dims[:-2], dims[-1 if over else -2]
        ident = eye(small, batch_shape=batch, dtype=a.dtype.base_dtype)
        known = a.shape[-1 if over else -2]
        ident.set_shape(a.shape[:-2].concatenate([known, known]))
        gram += l2_regularizer * ident
    chol = cholesky(gram)
    if over:
        return cholesky_solve(chol, matmul(a, b, adjoint_a=True))
    return matmul(a, cholesky_solve(chol, b), adjoint_a=True)


def qr(input, full_matrices=False, name=None):
    """The QR decomposition ``input = q @ r`` of each matrix: `q` has orthonormal
    columns, `r` is upper triangular. Returns ``(q, r)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> q, r = tf.qr([[3.0, 1.0], [4.0, 2.0]])
    >>> [round(abs(v), 4) for v in tf.Session().run(r).ravel().tolist()]
    [5.0, 2.2, 0.0, 0.4]
    """
    op = make_op("Qr", [_matrix(input, "input", "qr")],
                 {"full_matrices": bool(full_matrices)}, name=name or "Qr")
    return Qr(*op.outputs)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values `s` (descending) of each matrix and, when `compute_uv`, `u` and
    `v` with ``tensor = u @ diag(s) @ adjoint(v)``. Returns `s`, or ``(s, u, v)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.svd([[3.0, 0.0], [0.0, -4.0]], compute_uv=False)
    >>> tf.Session().run(s).tolist()
    [4.0, 3.0]
    """
    op = make_op("Svd", [_matrix(tensor, "tensor", "svd")],
                 {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices)},
                 name=name or "Svd")
    if compute_uv:
        return op.outputs[0], op.outputs[1], op.outputs[2]
    return op.outputs[0]


def self_adjoint_eig(tensor, name=None):
    """Eigenvalues (ascending) and eigenvectors (columns) of each self-adjoint matrix,
    reading its lower triangle. Returns ``(e, v)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> e, v = tf.self_adjoint_eig([[2.0, 1.0], [1.0, 2.0]])
    >>> tf.Session().run(e).round(4).tolist()
    [1.0, 3.0]
    """
    op = make_op("SelfAdjointEigV2", [_matrix(tensor, "tensor", "self_adjoint_eig")],
                 {"compute_v": True}, name=name or "SelfAdjointEigV2")
    return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of each self-adjoint matrix.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.self_adjoint_eigvals([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    op = make_op("SelfAdjointEigV2", [_matrix(tensor, "tensor", "self_adjoint_eigvals")],
                 {"compute_v": False}, name=name or "SelfAdjointEigV2")
    return op.outputs[0]


# -- gradients ----------------------------------------------------------------------------

def _lower_symmetric(grad_a):
    """The gradient for an op that reads only the lower triangle of a symmetric input."""
    g = matrix_band_part(add(grad_a, adjoint(grad_a)), -1, 0)
    return matrix_set_diag(g, multiply(0.5, matrix_diag_part(g)))


@register_gradient("Cholesky")
def _cholesky_grad(op, grad):
    # grad_a = sym(L^-H phi(L^H grad) L^-1), phi: the lower triangle, diagonal halved.
    chol = op.outputs[0]
    middle = matmul(chol, grad, adjoint_a=True)
    middle = matrix_set_diag(middle, multiply(0.5, matrix_diag_part(middle)))
    middle = matrix_band_part(middle, -1, 0)
    right = _solve_right(middle, chol)  # middle @ L^-1
    grad_a = adjoint(_solve_right(adjoint(right), chol))  # L^-H @ right
    return [multiply(0.5, add(grad_a, adjoint(grad_a)))]


def _solve_right(x, chol):
    """``x @ chol^-1`` for a lower-triangular `chol`."""
    return adjoint(matrix_triangular_solve(chol, adjoint(x), lower=True, adjoint=True))


@register_gradient("MatrixInverse")
def _inverse_grad(op, grad):
    inv = op.outputs[0]
    if op.attrs["adjoint"]:
        return [-matmul(inv, matmul(grad, inv, adjoint_a=True))]
    return [-matmul(inv, matmul(grad, inv, adjoint_b=True), adjoint_a=True)]


@register_gradient("MatrixDeterminant")
def _det_grad(op, grad):
    a = op.inputs[0]
    det = op.outputs[0]
    scale = expand_dims(expand_dims(multiply(grad, det), -1), -1)
    return [multiply(scale, matrix_inverse(a, adjoint=True))]


@register_gradient("LogMatrixDeterminant")
def _logdet_grad(op, grad_sign, grad_log):
    del grad_sign  # the sign is piecewise constant
    a = op.inputs[0]
    scale = expand_dims(expand_dims(grad_log, -1), -1)
    return [multiply(scale, matrix_inverse(a, adjoint=True))]


@register_gradient("MatrixSolve")
def _solve_grad(op, grad):
    a = op.inputs[0]
    x = op.outputs[0]
    adj = op.attrs["adjoint"]
    grad_b = matrix_solve(a, grad, adjoint=not adj)
    grad_a = -matmul(x, grad_b, adjoint_b=True) if adj else -matmul(grad_b, x, adjoint_b=True)
    return [grad_a, grad_b]


@register_gradient("MatrixTriangularSolve")
def _triangular_solve_grad(op, grad):
    a = op.inputs[0]
    x = op.outputs[0]
    adj, lower = op.attrs["adjoint"], op.attrs["lower"]
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    grad_a = -matmul(x, grad_b, adjoint_b=True) if adj else -matmul(grad_b, x, adjoint_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    return [grad_a, grad_b]


@register_gradient("SelfAdjointEigV2")
def _eig_grad(op, grad_e, grad_v):
    e, v = op.outputs
    if not op.attrs["compute_v"]:
        e, v = self_adjoint_eig(op.inputs[0])
    if grad_e is None:
        grad_e = zeros_like(e)
    middle = matrix_diag(grad_e)
    if op.attrs["compute_v"] and grad_v is not None:
        diff = subtract(expand_dims(e, -2), expand_dims(e, -1))
        safe = matrix_set_diag(diff, zeros_like(e) + 1.0)
        f = matrix_set_diag(reciprocal(safe), zeros_like(e))
        middle = add(middle, multiply(f, matmul(v, grad_v, adjoint_a=True)))
    grad_a = matmul(v, matmul(middle, v, adjoint_b=True))
    return [_lower_symmetric(grad_a)]


def _safe_reciprocal(x, epsilon=1e-20):
    return multiply(x, reciprocal(add(multiply(x, x), epsilon)))


@register_gradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    if grad_s is None:
        grad_s = zeros_like(op.outputs[0])
    if not op.attrs["compute_uv"]:
        _, u, v = svd(a, compute_uv=True)
        return [matmul(u, matmul(matrix_diag(grad_s), v, adjoint_b=True))]
    # TensorFlow's rule (Townsend's derivation), for a real matrix of known size
    m, n = a.shape[-2].value, a.shape[-1].value
    if m is None or n is None or a.dtype.is_complex:
        raise NotImplementedError(
            f"op '{op.name}' (Svd): the gradient through u and v needs a real input whose "
            f"last two dimensions are known; got {a.shape} {a.dtype.name}")
    s, u, v = op.outputs
    grad_u = zeros_like(u) if grad_u is None else grad_u
    grad_v = zeros_like(v) if grad_v is None else grad_v
    use_adjoint = m > n
    if use_adjoint:  # differentiate a^T = v s u^T and transpose at the end
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    full = op.attrs["full_matrices"]
    if full and abs(m - n) > 1:
        raise NotImplementedError(
            f"op '{op.name}' (Svd): the gradient with full_matrices=True needs |m - n| <= 1, "
            f"as in TensorFlow; got shape {a.shape}")
    s_mat = matrix_diag(s)
    s_sq = multiply(s, s)
    f = matrix_set_diag(_safe_reciprocal(subtract(expand_dims(s_sq, -2),
                                                  expand_dims(s_sq, -1))), zeros_like(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = multiply(f, matmul(u, grad_u, adjoint_a=True))
    f_v = multiply(f, matmul(v1, grad_v1, adjoint_a=True))
    inner = add(add(matrix_diag(grad_s), matmul(add(f_u, adjoint(f_u)), s_mat)),
                matmul(s_mat, add(f_v, adjoint(f_v))))
    grad_a = matmul(u, matmul(inner, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(grad_v1)
        rest = subtract(gv1t, matmul(matmul(gv1t, v1), v1, adjoint_b=True))
        if full:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            rest = subtract(rest, matmul(matmul(v1, grad_v2, adjoint_a=True), v2,
                                         adjoint_b=True))
        grad_a = add(grad_a, matmul(matmul(u, matrix_diag(_safe_reciprocal(s))), rest))
    return [adjoint(grad_a) if use_adjoint else grad_a]


@register_gradient("Qr")
def _qr_grad(op, grad_q, grad_r):
    a = op.inputs[0]
    q, r = op.outputs
    m, n = a.shape[-2].value, a.shape[-1].value
    if m is None or n is None or m < n or op.attrs["full_matrices"]:
        raise NotImplementedError(
            f"op '{op.name}' (Qr): the gradient needs a known shape [..., m, n] with "
            f"m >= n and full_matrices=False; got shape {a.shape}, full_matrices="
            f"{op.attrs['full_matrices']}")
    dq = zeros_like(q) if grad_q is None else grad_q
    dr = zeros_like(r) if grad_r is None else grad_r
    qdq = matmul(q, dq, adjoint_a=True)
    rdr = matmul(r, dr, adjoint_b=True)
    tril = matrix_band_part(add(subtract(qdq, adjoint(qdq)), subtract(rdr, adjoint(rdr))),
                            -1, 0)

    def times_r_inv_h(x):  # x @ r^-H
        return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))

    grad_a = matmul(q, add(dr, times_r_inv_h(tril)))
    grad_b = times_r_inv_h(subtract(dq, matmul(q, qdq)))
    return [add(grad_a, grad_b)]
