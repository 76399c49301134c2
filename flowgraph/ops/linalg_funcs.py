"""Matrix functions and pseudo-inverses: `tf.linalg.sqrtm` (op ``MatrixSquareRoot``,
also `tf.matrix_square_root`), `tf.linalg.logm` (op ``MatrixLogarithm``), `pinv`,
`matrix_rank` and `normalize`.

The square root's gradient solves the Sylvester equation ``S^H X + X S^H = G`` (``S``
the root, ``G`` the incoming gradient) as one linear system in ``n^2`` unknowns, a
Kronecker sum, so it is meant for the small matrices these functions usually see. As in
TensorFlow, `logm` takes complex matrices only and has no gradient; `pinv` is TensorFlow's
graph and differentiates through the SVD (valid where the rank does not change).

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.linalg.sqrtm([[4.0, 0.0], [0.0, 9.0]])).round(4).tolist()
[[2.0, 0.0], [0.0, 3.0]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.array_join_ops import concat
from flowgraph.ops.array_shape_ops import expand_dims, reshape, shape
from flowgraph.ops.linalg_basic import adjoint, eye
from flowgraph.ops.linalg_norm import norm as _norm
from flowgraph.ops.linalg_ops import matrix_solve, svd
from flowgraph.ops.math_ops import cast, conj, matmul, truediv
from flowgraph.ops.math_ops import multiply as _multiply
from flowgraph.ops.math_reduce import reduce_max, reduce_sum
from flowgraph.ops.op_util import make_tensor

__all__ = ["logm", "matrix_rank", "matrix_square_root", "normalize", "pinv", "sqrtm"]

_SQRT_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.complex64,
               _dtypes.complex128)


def _square_shape(fn):
    def shape_fn(op, x: TensorShape):
        if x.ndims is not None:
            if x.ndims < 2:
                raise op.shape_error(f"Shape must be at least rank 2 but is rank {x.ndims}: "
                                     f"{fn} needs a matrix or a batch of matrices")
            if not x.dims[-1].is_compatible_with(x.dims[-2]):
                raise op.shape_error(f"Dimensions must be equal, but are {x.dims[-2]} and "
                                     f"{x.dims[-1]}: {fn} needs square matrices")
        return [x]
    return shape_fn


register_op("MatrixSquareRoot", cost="expensive")(_square_shape("tf.linalg.sqrtm"))
register_op("MatrixLogarithm", cost="expensive")(_square_shape("tf.linalg.logm"))
# No gradient registered for MatrixLogarithm: tf.gradients raises LookupError, as in TensorFlow.


def _kron(a, b, n):
    """``kron(a, b)`` for ``[..., n, n]`` matrices (``[..., n*n, n*n]``)."""
    outer = _multiply(expand_dims(expand_dims(a, -1), -3), expand_dims(expand_dims(b, -3), -2))
    return reshape(outer, concat([shape(outer)[:-4], [n * n, n * n]], 0))


@register_gradient("MatrixSquareRoot")
def _sqrtm_grad(op, grad):
    root = op.outputs[0]
    n = root.shape[-1].value
    if n is None:
        raise NotImplementedError(
            f"op '{op.name}' (MatrixSquareRoot): the gradient needs the matrix size known "
            f"when the graph is built, got shape {root.shape}")
    ident = eye(n, dtype=root.dtype.base_dtype)
    # Row-major vec: vec(A X B) = kron(A, B^T) vec(X).
    system = _kron(adjoint(root), ident, n) + _kron(ident, conj(root), n)
    flat = reshape(grad, concat([shape(grad)[:-2], [n * n, 1]], 0))
    return [reshape(matrix_solve(system, flat), shape(grad))]


def sqrtm(input, name=None):
    """The principal square root ``S`` (``S @ S = input``) of each square matrix.

    A real matrix without a real square root (a negative real eigenvalue) gives NaN, as in
    TensorFlow.

    Parameters
    ----------
    input : Tensor
        ``[..., n, n]``, float16/32/64 or complex64/128.
    name : str, optional

    Example
    -------
    >>> import flowgraph as tf
    >>> r = tf.linalg.sqrtm([[4.0, 1.0], [1.0, 3.0]])
    >>> tf.Session().run(r).astype(float).round(4).tolist()
    [[1.9816, 0.2708], [0.2708, 1.7107]]
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype not in _SQRT_TYPES:
        raise TypeError(f"Value passed to parameter 'input' of tf.linalg.sqrtm has DataType "
                        f"{x.dtype.base_dtype.name} not in list of allowed values: float64, "
                        "float32, float16, complex64, complex128")
    return make_tensor("MatrixSquareRoot", [x], name=name or "MatrixSquareRoot")


matrix_square_root = sqrtm


def logm(input, name=None):
    """The principal matrix logarithm of each square complex matrix (the inverse of
    `tf.linalg.expm`). Like TensorFlow, it takes complex64/complex128 only: cast real
    matrices with ``tf.cast(x, tf.complex64)``. Not differentiable.

    Example
    -------
    >>> import flowgraph as tf
    >>> import numpy as np
    >>> x = tf.constant(np.diag([1.0, np.e]).astype(np.complex64))
    >>> tf.Session().run(tf.linalg.logm(x)).real.round(4).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype not in (_dtypes.complex64, _dtypes.complex128):
        raise TypeError(f"Value passed to parameter 'input' has DataType "
                        f"{x.dtype.base_dtype.name} not in list of allowed values: complex64, "
                        "complex128 (tf.linalg.logm; cast the matrix to a complex type)")
    return make_tensor("MatrixLogarithm", [x], name=name or "MatrixLogarithm")


def _float_matrix(a, fn):
    a = convert_to_tensor(a, name="a")
    if not (a.dtype.is_floating or a.dtype.is_complex):
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw "
                        f"{a.dtype.base_dtype.name}); {fn} needs floating or complex "
                        "matrices")
    if a.shape.ndims is not None and a.shape.ndims < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions (saw: "
                         f"{a.shape.ndims}); {fn} needs a matrix or a batch of matrices")
    return a


def _eps(dtype) -> float:
    return float(np.finfo(dtype.real_dtype.as_numpy_dtype).eps)


def _max_dim(a):
    """``max(m, n)`` of `a`'s matrices: a float where known statically, else a tensor of
    `a`'s real dtype."""
    m, n = a.shape[-2].value, a.shape[-1].value
    if m is not None and n is not None:
        return float(max(m, n))
    return cast(reduce_max(shape(a)[-2:]), a.dtype.real_dtype)


def _times(x, y):
    """``x * y`` for floats (a float) or tensors (a tensor)."""
    if isinstance(x, float) and isinstance(y, float):
        return x * y
    return _multiply(x, y)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each matrix of `a` (``[..., m, n]`` ->
    ``[..., n, m]``), through its SVD: singular values at most ``rcond * max(s)`` count as
    zero (default ``rcond``: ``10 * max(m, n) * eps``).

    TensorFlow's graph (``pinv/MatMul`` is the result), differentiated through ``Svd``.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.linalg.pinv([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> tf.Session().run(p).round(4).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.5, 0.0]]
    """
    del validate_args
    with name_scope(name, "pinv", [a, rcond]):
        a = _float_matrix(a, "tf.linalg.pinv")
        if rcond is None:
            rcond = _times(10.0 * _eps(a.dtype), _max_dim(a))  # a float or a tensor
        rcond = convert_to_tensor(rcond, dtype=a.dtype.real_dtype, name="rcond")
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = rcond * reduce_max(s, axis=-1)
        # a singular value under the cutoff becomes inf, so 1 / s is 0 and not NaN
        s = where_v2(s > expand_dims(cutoff, -1), s,
                     np.array(np.inf, a.dtype.real_dtype.as_numpy_dtype))
        s = expand_dims(s, -2)
        if a.dtype.is_complex:
            s = cast(s, a.dtype.base_dtype)
        out = matmul(v / s, u, adjoint_b=True)
        if a.shape.ndims is not None:
            out.set_shape(a.shape[:-2].concatenate([a.shape[-1], a.shape[-2]]))
        return out


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The rank of each matrix: the number of singular values above `tol` (default
    ``max(m, n) * eps * max(s)``). Returns int32 ``[...]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> int(tf.Session().run(tf.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    del validate_args
    with name_scope(name, "matrix_rank", [a, tol]):
        a = _float_matrix(a, "tf.linalg.matrix_rank")
        s = svd(a, compute_uv=False)
        if tol is None:
            tol = _multiply(_times(_eps(a.dtype), _max_dim(a)),
                            reduce_max(s, -1, keepdims=True))
        else:
            tol = convert_to_tensor(tol, dtype=s.dtype.base_dtype, name="tol")
        return reduce_sum(cast(s > tol, _dtypes.int32), -1)


def normalize(tensor, ord="euclidean", axis=None, name=None):
    """``(tensor / norm, norm)`` with ``norm = tf.norm(tensor, ord, axis,
    keepdims=True)``: the tensor scaled to unit norm, and the norm it had.

    Example
    -------
    >>> import flowgraph as tf
    >>> unit, n = tf.linalg.normalize([3.0, 4.0])
    >>> [v.tolist() for v in tf.Session().run([unit, n])]
    [[0.6000000238418579, 0.800000011920929], [5.0]]
    """
    with name_scope(name, "normalize", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        norm = _norm(tensor, ord, axis, keepdims=True)
        norm = cast(norm, tensor.dtype.base_dtype)
        return truediv(tensor, norm), norm
