"""LU factorization: `tf.linalg.lu` (op ``Lu``) and the functions built on its packed
result: `lu_solve`, `lu_matrix_inverse` and `lu_reconstruct`.

``Lu`` returns ``lower_upper`` (the unit-lower factor ``L`` below the diagonal, ``U`` on
and above it) and ``perm`` with ``input[..., perm, :] = L @ U``. As in TensorFlow, ``Lu``
has no gradient; `lu_solve` is made of gathers and triangular solves, so it differentiates
with respect to both the factorization and the right-hand side.

Example
-------
>>> import flowgraph as tf
>>> lu, p = tf.linalg.lu([[4.0, 3.0], [6.0, 3.0]])
>>> tf.Session().run(p).tolist()
[1, 0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_gen_ops import invert_permutation, one_hot
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_shape_ops import ones_like, shape, zeros_like
from flowgraph.ops.linalg_basic import eye
from flowgraph.ops.linalg_diag_ops import matrix_band_part, matrix_diag_part, matrix_set_diag
from flowgraph.ops.linalg_ops import matrix_triangular_solve
from flowgraph.ops.math_ops import matmul
from flowgraph.ops.op_util import make_op

__all__ = ["lu", "lu_matrix_inverse", "lu_reconstruct", "lu_solve"]

_LU_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.complex64,
             _dtypes.complex128)


@register_op("Lu", attrs={"output_idx_type": _dtypes.int32}, num_outputs=2,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  _dtypes.as_dtype(op.attrs["output_idx_type"])],
             cost="expensive")
def _lu_shape(op, x: TensorShape):
    if x.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    if x.ndims < 2:
        raise op.shape_error(f"Shape must be at least rank 2 but is rank {x.ndims}")
    if not x.dims[-1].is_compatible_with(x.dims[-2]):
        raise op.shape_error(f"Dimensions must be equal, but are {x.dims[-2]} and "
                             f"{x.dims[-1]}: tf.linalg.lu needs square matrices")
    n = x.dims[-1] if x.dims[-1].value is not None else x.dims[-2]
    return [TensorShape([*x.dims[:-2], n, n]), TensorShape([*x.dims[:-2], n])]


# No gradient registered for Lu: tf.gradients raises LookupError, as in TensorFlow.


def lu(input, output_idx_type=_dtypes.int32, name=None):
    """The LU factorization with partial pivoting of each square matrix of `input`.

    Returns ``(lu, p)``: `lu` packs the unit-lower-triangular ``L`` (strictly below the
    diagonal) and the upper-triangular ``U``; `p` is the row permutation, so that
    ``tf.gather(input, p, axis=-2) == L @ U``. A singular matrix raises
    InvalidArgumentError when the op runs.

    Parameters
    ----------
    input : Tensor
        ``[..., n, n]``, float16/32/64 or complex64/128.
    output_idx_type : tf.int32 or tf.int64
        The dtype of `p`.
    name : str, optional

    Example
    -------
    >>> import flowgraph as tf
    >>> lu, p = tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.Session().run(lu).astype(float).round(4).tolist()
    [[3.0, 4.0], [0.3333, 0.6667]]
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype not in _LU_TYPES:
        raise TypeError(f"Value passed to parameter 'input' of tf.linalg.lu has DataType "
                        f"{x.dtype.base_dtype.name} not in list of allowed values: float64, "
                        "float32, float16, complex64, complex128")
    idx = _dtypes.as_dtype(output_idx_type)
    if idx not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"tf.linalg.lu: output_idx_type must be int32 or int64, got {idx}")
    op = make_op("Lu", [x], {"output_idx_type": idx}, name=name or "Lu")
    return op.outputs[0], op.outputs[1]


def _unit_lower(lower_upper):
    lower = matrix_band_part(lower_upper, -1, 0)
    return matrix_set_diag(lower, ones_like(matrix_diag_part(lower_upper)))


def _permutation_matrix(perm, dtype):
    """``P`` with ``P[..., i, perm[i]] = 1``, so that ``P @ x == x[..., perm, :]``."""
    n = perm.shape[-1].value if perm.shape.ndims else None
    return one_hot(perm, n if n is not None else shape(perm)[-1], dtype=dtype)


def _gather_rows(x, perm):
    """``x[..., perm, :]``: a gather for one permutation, else a product with the
    permutation matrices (a batch of permutations, or one of unknown rank)."""
    if perm.shape.ndims == 1:
        return gather(x, perm, axis=-2)
    return matmul(_permutation_matrix(perm, x.dtype.base_dtype), x)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """Solve ``A @ x = rhs`` for each matrix, given ``lower_upper, perm = tf.linalg.lu(A)``.

    Differentiable with respect to `lower_upper` and `rhs`. `validate_args` is accepted
    for TensorFlow's signature (the shapes are checked while the graph is built).

    Example
    -------
    >>> import flowgraph as tf
    >>> lu, p = tf.linalg.lu([[2.0, 1.0], [4.0, 1.0]])
    >>> tf.Session().run(tf.linalg.lu_solve(lu, p, [[3.0], [5.0]])).round(4).tolist()
    [[1.0], [1.0]]
    """
    del validate_args
    with name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        rhs = convert_to_tensor(rhs, name="rhs", dtype=lower_upper.dtype.base_dtype)
        if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
            raise ValueError(f"tf.linalg.lu_solve: rhs must be a matrix [..., n, k] (rank "
                             f">= 2), got shape {rhs.shape}; add a last axis for a vector")
        permuted = _gather_rows(rhs, perm)
        lower = _unit_lower(lower_upper)
        # tf.linalg.triangular_solve opens its own `triangular_solve` scope
        y = matrix_triangular_solve(lower, permuted, lower=True)
        return matrix_triangular_solve(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of each matrix ``A`` given ``lower_upper, perm = tf.linalg.lu(A)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> lu, p = tf.linalg.lu([[2.0, 0.0], [0.0, 4.0]])
    >>> tf.Session().run(tf.linalg.lu_matrix_inverse(lu, p)).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    with name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        dims = lower_upper.shape
        if dims.ndims is not None and dims[-1].value is not None:
            batch = dims[:-2]
            ident = eye(dims[-1].value, dtype=lower_upper.dtype.base_dtype,
                        batch_shape=batch.as_list() if batch.is_fully_defined() and
                        batch.ndims else None)
        else:
            ident = eye(shape(lower_upper)[-1], dtype=lower_upper.dtype.base_dtype)
        if ident.shape.ndims is None or ident.shape.ndims != dims.ndims:
            ident = ident + zeros_like(lower_upper)  # broadcast over an unknown batch
        return lu_solve(lower_upper, perm, ident, validate_args=validate_args)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix ``A`` whose factorization is ``lower_upper, perm`` (the inverse of
    `tf.linalg.lu`).

    Example
    -------
    >>> import flowgraph as tf
    >>> lu, p = tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.Session().run(tf.linalg.lu_reconstruct(lu, p)).round(4).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    del validate_args
    with name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        product = matmul(_unit_lower(lower_upper), matrix_band_part(lower_upper, 0, -1))
        if perm.shape.ndims == 1:
            return gather(product, invert_permutation(perm), axis=-2)
        return matmul(_permutation_matrix(perm, product.dtype.base_dtype), product,
                      transpose_a=True)

