"""The common concrete operators: `FullMatrix`, `Diag`, `Identity`, `ScaledIdentity`
(see `linear_operator.py` for the base class and `LowerTriangular`, re-exported here).

Example
-------
>>> import flowgraph as tf
>>> tf.linalg.LinearOperatorIdentity(3).shape.as_list()
[3, 3]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.linalg.linear_operator import LinearOperator, LinearOperatorLowerTriangular
from flowgraph.linalg.linear_operator_checks import (
    assert_no_entries_with_modulus_zero,
    assert_zero_imag_part,
)
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.array_shape_ops import expand_dims, ones, ones_like, zeros, zeros_like
from flowgraph.ops.check_ops import assert_equal, assert_positive
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_basic import eye
from flowgraph.ops.linalg_diag_ops import matrix_diag
from flowgraph.ops.math_ops import abs, conj, equal, log, multiply, reciprocal, sqrt, truediv
from flowgraph.ops.math_reduce import reduce_max, reduce_min, reduce_prod, reduce_sum
from flowgraph.ops.spectral_ops import imag, real

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

    @property
    def matrix(self):
        """The dense matrix tensor."""
        return self._matrix

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
                 is_positive_definite=None, is_square=None, name="LinearOperatorDiag"):
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

    # TensorFlow's arithmetic: operators (ops ``mul``, ``truediv``), a solve multiplying
    # by the reciprocal
    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        return expand_dims(self._scaled(adjoint), -1) * x

    def _matvec(self, x, adjoint):
        return self._scaled(adjoint) * x

    def _solve(self, rhs, adjoint):
        return rhs * expand_dims(1. / self._scaled(adjoint), -1)

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

    def _linop_cholesky(self):
        return LinearOperatorDiag(sqrt(self._diag), is_non_singular=True,
                                  is_self_adjoint=True, is_positive_definite=True,
                                  is_square=True)

    def _eigvals(self):
        return self._diag

    def _cond(self):
        magnitude = abs(self._diag)
        return truediv(reduce_max(magnitude, -1), reduce_min(magnitude, -1))

    def _assert_non_singular(self):
        return assert_no_entries_with_modulus_zero(
            self._diag, message="Singular operator:  Diagonal contained zero values.")

    def _assert_positive_definite(self):
        if self.dtype.is_complex:
            message = ("Diagonal operator had diagonal entries with non-positive real part, "
                       "thus was not positive definite.")
        else:
            message = ("Real diagonal operator had non-positive diagonal entries, thus was "
                       "not positive definite.")
        return assert_positive(real(self._diag), message=message)

    def _assert_self_adjoint(self):
        return assert_zero_imag_part(
            self._diag, message="This diagonal operator contained non-zero imaginary "
            "values.   Thus it was not self-adjoint.")


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
        if not self._multiplier.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
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
        return x * scale  # TensorFlow's ``mul``

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

    def _linop_cholesky(self):
        return LinearOperatorScaledIdentity(self._num_rows, sqrt(self._multiplier),
                                            is_non_singular=True, is_self_adjoint=True,
                                            is_positive_definite=True, is_square=True)

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        # 1 for a nonzero multiplier, NaN for the zero matrix.
        return where_v2(equal(self._multiplier, 0), constant(np.nan, self.dtype),
                        constant(1, self.dtype))

    def _assert_non_singular(self):
        return assert_positive(abs(self._multiplier), message="LinearOperator was singular")

    def _assert_positive_definite(self):
        return assert_positive(real(self._multiplier),
                               message="LinearOperator was not positive definite.")

    def _assert_self_adjoint(self):
        imaginary = imag(self._multiplier)
        return assert_equal(zeros_like(imaginary), imaginary,
                            message="LinearOperator was not self-adjoint")


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
        for hint, words in ((is_self_adjoint, "self adjoint"),
                            (is_non_singular, "non-singular"),
                            (is_positive_definite, "positive-definite"),
                            (is_square, "square")):
            if not hint:  # (TensorFlow's messages, in its order)
                raise ValueError(f"An identity operator is always {words}.")
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

    def _linop_cholesky(self):
        return LinearOperatorIdentity(self._num_rows, batch_shape=self._batch or None,
                                      dtype=self.dtype)

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return ones(self._batch, dtype=self.dtype)

    def _assert_non_singular(self):
        return no_op("assert_non_singular")

    def _assert_positive_definite(self):
        return no_op("assert_positive_definite")

    def _assert_self_adjoint(self):
        return no_op("assert_self_adjoint")
