"""The common concrete operators: `FullMatrix`, `Diag`, `LowerTriangular`, `Identity`,
`ScaledIdentity` (see `linear_operator.py` for the base class).

Example
-------
>>> import flowgraph as tf
>>> tf.linalg.LinearOperatorIdentity(3).shape.as_list()
[3, 3]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.linalg.linear_operator import LinearOperator
from flowgraph.ops.array_shape_ops import expand_dims, ones, ones_like, zeros
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_basic import eye
from flowgraph.ops.linalg_diag_ops import matrix_band_part, matrix_diag, matrix_diag_part
from flowgraph.ops.linalg_ops import matrix_triangular_solve
from flowgraph.ops.math_ops import abs, conj, log, multiply, reciprocal, truediv
from flowgraph.ops.math_reduce import reduce_prod, reduce_sum

__all__ = ["LinearOperatorDiag", "LinearOperatorFullMatrix", "LinearOperatorIdentity",
           "LinearOperatorLowerTriangular", "LinearOperatorScaledIdentity"]


class LinearOperatorFullMatrix(LinearOperator):
    """An operator holding a dense matrix (batch).

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorFullMatrix([[2., 0.], [0., 4.]])
    >>> tf.Session().run(op.solvevec([2., 2.])).tolist()
    [1.0, 0.5]
    """

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorFullMatrix"):
        with name_scope(name, values=[matrix]):
            self._matrix = convert_to_tensor(matrix, name="matrix")
        if self._matrix.shape.ndims is not None and self._matrix.shape.ndims < 2:
            raise ValueError(f"matrix must have rank >= 2, got shape {self._matrix.shape}")
        super().__init__(self._matrix.dtype, [self._matrix], is_non_singular,
                         is_self_adjoint, is_positive_definite, is_square, name)

    def _shape(self):
        return self._matrix.shape

    def _to_dense(self):
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """A diagonal operator from its diagonal ``[..., N]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> float(tf.Session().run(tf.linalg.LinearOperatorDiag([1., 2.]).log_abs_determinant()))
    0.6931471824645996
    """

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name="LinearOperatorDiag"):
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        with name_scope(name, values=[diag]):
            self._diag = convert_to_tensor(diag, name="diag")
        if self._diag.shape.ndims is not None and self._diag.shape.ndims < 1:
            raise ValueError(f"diag must have rank >= 1, got shape {self._diag.shape}")
        if not self._diag.dtype.is_complex and is_self_adjoint is False:
            raise ValueError("A real diagonal operator is always self adjoint.")
        if not self._diag.dtype.is_complex:
            is_self_adjoint = True
        super().__init__(self._diag.dtype, [self._diag], is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name)

    @property
    def diag(self):
        return self._diag

    def _shape(self):
        return self._diag.shape.concatenate(self._diag.shape[-1:])

    def _to_dense(self):
        return matrix_diag(self._diag)

    def _scaled(self, adjoint):
        return conj(self._diag) if adjoint and self._diag.dtype.is_complex else self._diag

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        return multiply(expand_dims(self._scaled(adjoint), -1), x)

    def _solve(self, rhs, adjoint):
        return truediv(rhs, expand_dims(self._scaled(adjoint), -1))

    def _determinant(self):
        return reduce_prod(self._diag, -1)

    def _log_abs_determinant(self):
        return reduce_sum(log(abs(self._diag)), -1)

    def _diag_part(self):
        return self._diag * ones_like(self._diag)

    def _inverse_operator(self):
        return LinearOperatorDiag(reciprocal(self._diag), self.is_non_singular,
                                  self.is_self_adjoint, self.is_positive_definite, True,
                                  self.name + "_inv")

    def _adjoint_operator(self):
        return LinearOperatorDiag(conj(self._diag), self.is_non_singular,
                                  self.is_self_adjoint, self.is_positive_definite, True,
                                  self.name + "_adjoint")


class LinearOperatorLowerTriangular(LinearOperator):
    """A lower-triangular operator (the part of `tril` on and below the diagonal).

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorLowerTriangular([[2., 9.], [1., 1.]])
    >>> tf.Session().run(op.to_dense()).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        with name_scope(name, values=[tril]):
            self._tril = matrix_band_part(convert_to_tensor(tril, name="tril"), -1, 0)
        super().__init__(self._tril.dtype, [self._tril], is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name)

    def _shape(self):
        return self._tril.shape

    def _to_dense(self):
        return self._tril

    def _solve(self, rhs, adjoint):
        return matrix_triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self):
        return reduce_prod(matrix_diag_part(self._tril), -1)

    def _log_abs_determinant(self):
        return reduce_sum(log(abs(matrix_diag_part(self._tril))), -1)


class LinearOperatorScaledIdentity(LinearOperator):
    """``multiplier * I`` of `num_rows` rows (a batch from `multiplier`'s shape).

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorScaledIdentity(2, 3.)
    >>> float(tf.Session().run(op.determinant()))
    9.0
    """

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        if is_square is False:
            raise ValueError("A ScaledIdentity operator is always square.")
        with name_scope(name, values=[num_rows, multiplier]):
            self._num_rows = int(num_rows)
            self._multiplier = convert_to_tensor(multiplier, name="multiplier")
        super().__init__(self._multiplier.dtype, [self._multiplier], is_non_singular,
                         is_self_adjoint, is_positive_definite, True, name)

    @property
    def multiplier(self):
        return self._multiplier

    def _shape(self):
        return self._multiplier.shape.concatenate([self._num_rows, self._num_rows])

    def _scale(self):
        return expand_dims(expand_dims(self._multiplier, -1), -1)

    def _to_dense(self):
        return multiply(self._scale(), eye(self._num_rows, dtype=self.dtype))

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        scale = conj(self._scale()) if adjoint and self.dtype.is_complex else self._scale()
        return multiply(scale, x)

    def _solve(self, rhs, adjoint):
        scale = conj(self._scale()) if adjoint and self.dtype.is_complex else self._scale()
        return truediv(rhs, scale)

    def _determinant(self):
        return self._multiplier ** self._num_rows

    def _log_abs_determinant(self):
        return self._num_rows * log(abs(self._multiplier))

    def _diag_part(self):
        return multiply(expand_dims(self._multiplier, -1), ones([self._num_rows], self.dtype))

    def _inverse_operator(self):
        return LinearOperatorScaledIdentity(self._num_rows, reciprocal(self._multiplier),
                                            self.is_non_singular, self.is_self_adjoint,
                                            self.is_positive_definite, True,
                                            name=self.name + "_inv")


class LinearOperatorIdentity(LinearOperator):
    """The identity of `num_rows` rows (a batch with `batch_shape`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.linalg.LinearOperatorIdentity(2).matvec([3., 4.])).tolist()
    [3.0, 4.0]
    """

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        if not (is_non_singular and is_self_adjoint and is_positive_definite and is_square):
            raise ValueError("An identity operator is always non-singular, self-adjoint, "
                             "positive definite and square.")
        self._num_rows = int(num_rows)
        self._batch = [int(d) for d in (batch_shape or [])]
        super().__init__(dtype or _dtypes.float32, [], True, True, True, True, name)

    def _shape(self):
        return TensorShape([*self._batch, self._num_rows, self._num_rows])

    def _to_dense(self):
        return eye(self._num_rows, batch_shape=self._batch or None, dtype=self.dtype)

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        if not self._batch:
            return x
        return x + zeros([*self._batch, 1, 1], dtype=self.dtype)

    def _solve(self, rhs, adjoint):
        return self._matmul(rhs, adjoint, False)

    def _determinant(self):
        return ones(self._batch, dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(self._batch, dtype=self.dtype)

    def _diag_part(self):
        return ones([*self._batch, self._num_rows], dtype=self.dtype)

    def _inverse_operator(self):
        return self
