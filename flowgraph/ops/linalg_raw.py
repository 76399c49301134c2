"""Linear-algebra op types TensorFlow graphs hold beside the ones of `linalg_ops`:
``MatrixSolveLs``, ``SelfAdjointEig`` (the V1 packed form), ``Eig``,
``BandedTriangularSolve``, ``CholeskyGrad``, ``BatchMatMulV3`` (inputs of two types, an
output type of its own), ``SparseMatMul``, and the ``Batch*`` names graphs written before
TensorFlow 0.7 (GraphDef versions below 11-15) use for the batched ops, which run the
current ops' kernels.

As in TensorFlow, ``SelfAdjointEig``, ``CholeskyGrad`` and the ``Batch*`` names have no
gradient; the others do. Kernels: `flowgraph/backends/cpu/kernels_linalg_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> band = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])   # main diagonal, subdiagonal
>>> x = tf.raw_ops.BandedTriangularSolve(matrix=band, rhs=tf.ones([3, 1]))
>>> [round(v, 4) for v in tf.Session().run(x).ravel().tolist()]
[1.0, -2.0, 4.3333]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import get_op_def, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape, broadcast_shape
from flowgraph.ops import array_shape_ops as _a
from flowgraph.ops import linalg_diag_ops, linalg_ops, spectral_ops
from flowgraph.ops import math_ops as _m
from flowgraph.ops.array_join_ops import stack
from flowgraph.ops.broadcast_grad import broadcast_gradient_args
from flowgraph.ops.linalg_diag_v3 import matrix_diag_part, matrix_set_diag
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["banded_triangular_solve", "eig", "eigvals"]

# -- the Batch* names of TensorFlow 0.6 ------------------------------------------------------
BATCH_ALIASES = {
    "BatchCholesky": "Cholesky", "BatchCholeskyGrad": "CholeskyGrad",
    "BatchMatrixBandPart": "MatrixBandPart", "BatchMatrixDeterminant": "MatrixDeterminant",
    "BatchMatrixDiag": "MatrixDiag", "BatchMatrixDiagPart": "MatrixDiagPart",
    "BatchMatrixInverse": "MatrixInverse", "BatchMatrixSetDiag": "MatrixSetDiag",
    "BatchMatrixSolve": "MatrixSolve", "BatchMatrixSolveLs": "MatrixSolveLs",
    "BatchMatrixTriangularSolve": "MatrixTriangularSolve",
    "BatchSelfAdjointEig": "SelfAdjointEig", "BatchSelfAdjointEigV2": "SelfAdjointEigV2",
    "BatchSvd": "Svd", "BatchFFT": "FFT", "BatchFFT2D": "FFT2D", "BatchFFT3D": "FFT3D",
    "BatchIFFT": "IFFT", "BatchIFFT2D": "IFFT2D", "BatchIFFT3D": "IFFT3D",
}


def _matrix(op, x, what="input"):
    if x.ndims is not None and x.ndims < 2:
        raise op.shape_error(f"{what} must be a matrix or a batch of matrices (rank >= 2), "
                             f"got shape {x}")


def _square(op, x, what="input"):
    _matrix(op, x, what)
    if x.ndims is not None and not x.dims[-1].is_compatible_with(x.dims[-2]):
        raise op.shape_error(f"{what} must be square in its last two dimensions, got {x}")


@register_op("CholeskyGrad", cost="expensive")
def _cholesky_grad_shape(op, l, grad):  # noqa: E741
    _square(op, l, "l")
    if not l.is_compatible_with(grad):
        raise op.shape_error(f"l {l} and grad {grad} must have the same shape")
    return [l.merge_with(grad)]


@register_op("SelfAdjointEig", cost="expensive")
def _self_adjoint_eig_shape(op, x):
    _square(op, x)
    if x.ndims is None:
        return [TensorShape(None)]
    n = x.dims[-1].merge_with(x.dims[-2])
    return [TensorShape([*x.dims[:-2], n + 1 if n.value is not None else None, n])]


@register_op("MatrixSolveLs", attrs={"fast": True}, cost="expensive")
def _solve_ls_shape(op, matrix, rhs, l2_regularizer):
    _matrix(op, matrix, "matrix")
    _matrix(op, rhs, "rhs")
    if l2_regularizer.ndims not in (None, 0):
        raise op.shape_error(f"l2_regularizer must be a scalar, got shape {l2_regularizer}")
    if matrix.ndims is None or rhs.ndims is None:
        return [TensorShape(None)]
    if not matrix.dims[-2].is_compatible_with(rhs.dims[-2]):
        raise op.shape_error(f"matrix {matrix} and rhs {rhs}: the number of rows differs")
    if matrix.ndims != rhs.ndims or not matrix[:-2].is_compatible_with(rhs[:-2]):
        raise op.shape_error(f"matrix {matrix} and rhs {rhs} must have the same batch "
                             "dimensions")
    return [matrix[:-2].merge_with(rhs[:-2]).concatenate([matrix.dims[-1], rhs.dims[-1]])]


def _tout(op):
    return [_dtypes.as_dtype(op.attrs["Tout"])] * 2


@register_op("Eig", attrs={"compute_v": True, "Tout": None}, num_outputs=2, dtype_fn=_tout,
             cost="expensive")
def _eig_shape(op, x):
    _square(op, x)
    if x.ndims is None:
        return [TensorShape(None), TensorShape(None) if op.attrs["compute_v"]
                else TensorShape([0])]
    n = x.dims[-1].merge_with(x.dims[-2])
    v = TensorShape([*x.dims[:-2], n, n]) if op.attrs["compute_v"] else TensorShape([0])
    return [TensorShape([*x.dims[:-2], n]), v]


@register_op("BandedTriangularSolve", attrs={"lower": True, "adjoint": False},
             cost="expensive")
def _banded_shape(op, matrix, rhs):
    _matrix(op, matrix, "matrix")
    _matrix(op, rhs, "rhs")
    if matrix.ndims is None or rhs.ndims is None:
        return [TensorShape(None)]
    if not matrix.dims[-1].is_compatible_with(rhs.dims[-2]):
        raise op.shape_error(f"matrix {matrix} holds bands of {matrix.dims[-1]} entries but "
                             f"rhs {rhs} has {rhs.dims[-2]} rows")
    try:
        batch = broadcast_shape(matrix[:-2], rhs[:-2])
    except ValueError:
        raise op.shape_error(f"batch dimensions {matrix[:-2]} and {rhs[:-2]} are not "
                             "broadcastable") from None
    return [batch.concatenate(rhs[-2:])]


@register_op("BatchMatMulV3", attrs={"adj_x": False, "adj_y": False, "Ta": None, "Tb": None,
                                     "Tout": None},
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["Tout"])], cost="blas")
def _batch_matmul_v3_shape(op, x, y):
    return get_op_def("BatchMatMulV2").shape_fn(op, x, y)


def _sparse_matmul_dtype(op):
    # TensorFlow's inputs are float32/bfloat16 and its output float32; flowgraph also
    # multiplies two float64 matrices in float64.
    both64 = all(t.dtype.base_dtype == _dtypes.float64 for t in op.inputs)
    return [_dtypes.float64 if both64 else _dtypes.float32]


@register_op("SparseMatMul", attrs={"transpose_a": False, "transpose_b": False,
                                    "a_is_sparse": False, "b_is_sparse": False,
                                    "Ta": _dtypes.float32, "Tb": _dtypes.float32},
             dtype_fn=_sparse_matmul_dtype, cost="blas")
def _sparse_matmul_shape(op, a, b):
    return get_op_def("MatMul").shape_fn(op, a, b)


for _alias, _current in BATCH_ALIASES.items():
    _d = get_op_def(_current)
    register_op(_alias, attrs=dict(_d.attrs), num_outputs=_d.num_outputs,
                dtype_fn=_d.dtype_fn, cost=_d.cost)(_d.shape_fn)


# -- wrappers --------------------------------------------------------------------------------

def eig(tensor, name=None):
    """The eigenvalues and right eigenvectors (columns, unit norm) of each square matrix,
    complex even for a real input (complex64 for float32, complex128 for float64).

    Example
    -------
    >>> import flowgraph as tf
    >>> e, v = tf.linalg.eig(tf.constant([[2.0, 1.0], [0.0, 3.0]]))
    >>> tf.Session().run(e).tolist()
    [(2+0j), (3+0j)]
    """
    x = convert_to_tensor(tensor, name="tensor")
    tout = _complex_of(x)
    op = make_op("Eig", [x], {"compute_v": True, "Tout": tout}, name=name or "Eig")
    return op.outputs[0], op.outputs[1]


def eigvals(tensor, name=None):
    """The eigenvalues of each square matrix (see `eig`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.eigvals([[0.0, 1.0], [1.0, 0.0]])).real.tolist()
    [1.0, -1.0]
    """
    x = convert_to_tensor(tensor, name="tensor")
    op = make_op("Eig", [x], {"compute_v": False, "Tout": _complex_of(x)},
                 name=name or "Eig")
    return op.outputs[0]


def _complex_of(x):
    dt = x.dtype.base_dtype
    if dt in (_dtypes.complex64, _dtypes.complex128):
        return dt
    return _dtypes.complex128 if dt == _dtypes.float64 else _dtypes.complex64


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """Solve ``A x = rhs`` (or ``adjoint(A) x = rhs``) for a triangular band matrix ``A``
    given compactly: for ``lower``, row 0 of `bands` ``[..., K + 1, M]`` is the main
    diagonal and row ``k`` the ``k``-th subdiagonal, right-aligned; for an upper band, row
    ``K`` is the main diagonal and row ``K - k`` the ``k``-th superdiagonal, left-aligned.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.linalg.banded_triangular_solve([[2.0, 4.0]], [[2.0], [8.0]])
    >>> tf.Session().run(x).ravel().tolist()
    [1.0, 2.0]
    """
    b = convert_to_tensor(bands, name="bands")
    r = convert_to_tensor(rhs, dtype=b.dtype.base_dtype, name="rhs")
    return make_tensor("BandedTriangularSolve", [b, r], {"lower": lower, "adjoint": adjoint},
                       name=name or "BandedTriangularSolve")


# -- gradients -------------------------------------------------------------------------------

@register_gradient("MatrixSolveLs")
def _solve_ls_grad(op, grad):
    if not op.attrs["fast"]:
        raise ValueError("Gradient not defined for fast=False (MatrixSolveLs: only the "
                         "normal-equations path of fast=True is differentiable)")
    a, b = op.inputs[0], op.inputs[1]
    x = op.outputs[0]
    dtype = a.dtype.base_dtype
    lam = _m.cast(op.inputs[2], dtype)
    m, n = (a.shape[-2].value, a.shape[-1].value) if a.shape.ndims else (None, None)

    def gramian(first):
        g = _m.matmul(a, a, adjoint_a=first, adjoint_b=not first)
        return matrix_set_diag(g, matrix_diag_part(g) + lam)

    def over():
        z = linalg_ops.matrix_solve(gramian(True), grad)
        sym = _m.matmul(x, z, adjoint_b=True) + _m.matmul(z, x, adjoint_b=True)
        grad_a = -_m.matmul(a, sym) + _m.matmul(b, z, adjoint_b=True)
        return grad_a, _m.matmul(a, z)

    def under():
        chol = gramian(False)
        grad_b = linalg_ops.matrix_solve(chol, _m.matmul(a, grad))
        tmp = linalg_ops.matrix_solve(chol, b)
        a1 = -_m.matmul(grad_b, _m.matmul(tmp, a, adjoint_a=True))
        a2 = _m.matmul(tmp, grad - _m.matmul(a, grad_b, adjoint_a=True), adjoint_b=True)
        return a1 + a2, grad_b

    if m is not None and n is not None:
        grad_a, grad_b = over() if m >= n else under()
        return [grad_a, grad_b, None]
    from flowgraph.ops.control_flow_cond import cond

    shape = _a.shape(a)
    grad_a, grad_b = cond(_m.greater_equal(shape[-2], shape[-1]), over, under)
    return [grad_a, grad_b, None]


@register_gradient("Eig")
def _eig_grad(op, grad_e, grad_v):
    e = op.outputs[0]
    x = op.inputs[0]
    if grad_e is None:
        grad_e = _a.zeros_like(e)
    if op.attrs["compute_v"] and grad_v is not None:
        v = op.outputs[1]
        diff = _a.expand_dims(e, -2) - _a.expand_dims(e, -1)
        safe = matrix_set_diag(diff, _a.ones_like(e))
        f = _m.conj(matrix_set_diag(_m.reciprocal(safe), _a.zeros_like(e)))
        vgv = _m.matmul(v, grad_v, adjoint_a=True)
        mid = linalg_diag_ops.matrix_diag(grad_e)
        real_diag = linalg_diag_ops.matrix_diag(matrix_diag_part(
            _m.cast(spectral_ops.real(vgv), vgv.dtype.base_dtype)))
        mid = mid + f * (vgv - _m.matmul(_m.matmul(v, v, adjoint_a=True), real_diag))
    else:
        v = op.outputs[1] if op.attrs["compute_v"] else \
            make_op("Eig", [x], {"compute_v": True, "Tout": op.attrs["Tout"]}).outputs[1]
        mid = linalg_diag_ops.matrix_diag(grad_e)
    # adjoint(v) @ grad_a = mid @ adjoint(v)
    grad_a = linalg_ops.matrix_solve(v, _m.matmul(mid, v, adjoint_b=True), adjoint=True)
    if x.dtype.base_dtype.is_complex:
        return [grad_a]
    return [spectral_ops.real(grad_a)]


@register_gradient("BandedTriangularSolve")
def _banded_grad(op, grad):
    a = op.inputs[0]
    c = op.outputs[0]
    adj, lower = op.attrs["adjoint"], op.attrs["lower"]
    grad_b = banded_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    grad_a = -_m.matmul(c, grad_b, adjoint_b=True) if adj else \
        -_m.matmul(grad_b, c, adjoint_b=True)
    bands = _a.shape(a)[-2] - 1
    k = stack([-bands, 0]) if lower else stack([0, bands])
    grad_a = matrix_diag_part(grad_a, k=k, align="LEFT_RIGHT")
    return _unbroadcast_batch(a, grad_a) + _unbroadcast_batch(op.inputs[1], grad_b)


def _unbroadcast_batch(x, g):
    """`g` summed over the batch dimensions `x` was broadcast along (as one list)."""
    if x.shape.is_fully_defined() and g.shape.is_fully_defined() and \
            x.shape.as_list() == g.shape.as_list():
        return [g]
    from flowgraph.ops.math_reduce import reduce_sum

    gx, _ = broadcast_gradient_args(_a.shape(x)[:-2], _a.shape(g)[:-2])
    return [_a.reshape(reduce_sum(g, gx), _a.shape(x))]


@register_gradient("BatchMatMulV3")
def _batch_matmul_v3_grad(op, grad):
    gx, gy = get_op_def("BatchMatMulV2").gradient(op, grad)
    x, y = op.inputs
    return [_m.cast(gx, x.dtype.base_dtype), _m.cast(gy, y.dtype.base_dtype)]


@register_gradient("SparseMatMul")
def _sparse_matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    out = grad.dtype.base_dtype
    af, bf = _m.cast(a, out), _m.cast(b, out)
    mm = _m.matmul
    if not ta and not tb:
        ga, gb = mm(grad, bf, transpose_b=True), mm(af, grad, transpose_a=True)
    elif not ta and tb:
        ga, gb = mm(grad, bf), mm(grad, af, transpose_a=True)
    elif ta and not tb:
        ga, gb = mm(bf, grad, transpose_b=True), mm(af, grad)
    else:
        ga, gb = mm(bf, grad, transpose_a=True, transpose_b=True), \
            mm(grad, af, transpose_a=True, transpose_b=True)
    return [_m.cast(ga, a.dtype.base_dtype), _m.cast(gb, b.dtype.base_dtype)]

