"""`tf.linalg.LinearOperator` and the common concrete operators: `FullMatrix`, `Diag`,
`LowerTriangular`, `Identity`, `ScaledIdentity`.

An operator stands for a (batch of) ``[M, N]`` matrices without necessarily building
them: `matmul`, `solve` and the determinants use the structure (a diagonal scales rows, a
triangular matrix solves by substitution) and fall back on the dense matrix otherwise.
Everything is built from ordinary ops, so gradients flow to the parameters.
"""

from __future__ import annotations

import contextlib

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_shape_ops import expand_dims, ones, ones_like, shape, zeros
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_basic import eye
from flowgraph.ops.linalg_diag_ops import matrix_band_part, matrix_diag, matrix_diag_part
from flowgraph.ops.linalg_ops import (
    matrix_determinant,
    matrix_solve,
    matrix_triangular_solve,
    slogdet,
)
from flowgraph.ops.math_ops import abs, add, conj, log, matmul, multiply, truediv
from flowgraph.ops.math_reduce import reduce_prod, reduce_sum

__all__ = ["LinearOperator", "LinearOperatorDiag", "LinearOperatorFullMatrix",
           "LinearOperatorIdentity", "LinearOperatorLowerTriangular",
           "LinearOperatorScaledIdentity"]


class LinearOperator:
    """The base class: subclasses give `_shape`, `_to_dense` and whichever of `_matmul`,
    `_solve`, `_determinant`, `_log_abs_determinant`, `_diag_part` their structure makes
    cheap.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorDiag([1., 2.])
    >>> op.shape.as_list(), op.is_square
    ([2, 2], True)
    """

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if is_positive_definite and is_non_singular is False:
            raise ValueError("A positive definite matrix is always non-singular.")
        self._dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = True if is_positive_definite else is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set = is_square
        self._name = name or type(self).__name__

    # -- properties --------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def graph_parents(self) -> list:
        return list(self._graph_parents)

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        if self._is_square_set is not None:
            return self._is_square_set
        dims = self.shape
        if dims.ndims is None or dims[-1].value is None or dims[-2].value is None:
            return None
        return dims[-1].value == dims[-2].value

    @property
    def shape(self) -> TensorShape:
        return self._shape()

    @property
    def batch_shape(self) -> TensorShape:
        return self.shape[:-2]

    @property
    def tensor_rank(self):
        return self.shape.ndims

    @property
    def domain_dimension(self):
        return self.shape[-1]

    @property
    def range_dimension(self):
        return self.shape[-2]

    def shape_tensor(self, name: str = "shape_tensor"):
        """The shape as a 1-D int32 tensor."""
        with self._scope(name):
            if self.shape.is_fully_defined():
                return constant(self.shape.as_list(), _dtypes.int32)
            return shape(self.to_dense())

    def batch_shape_tensor(self, name: str = "batch_shape_tensor"):
        with self._scope(name):
            return self.shape_tensor()[:-2]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor"):
        with self._scope(name):
            return self.shape_tensor()[-1]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor"):
        with self._scope(name):
            return self.shape_tensor()[-2]

    @contextlib.contextmanager
    def _scope(self, method: str, values=None):
        with name_scope(self.name), name_scope(method, values=values) as scope:
            yield scope

    # -- methods -----------------------------------------------------------------------
    def to_dense(self, name: str = "to_dense"):
        """The operator as a dense ``[..., M, N]`` tensor."""
        with self._scope(name):
            return self._to_dense()

    def matmul(self, x, adjoint: bool = False, adjoint_arg: bool = False,
               name: str = "matmul"):
        """``op @ x`` (``op^H`` with `adjoint`, ``x^H`` with `adjoint_arg`)."""
        with self._scope(name, [x]):
            x = convert_to_tensor(x, name="x", dtype=self.dtype)
            return self._matmul(x, adjoint, adjoint_arg)

    def matvec(self, x, adjoint: bool = False, name: str = "matvec"):
        """``op @ x`` for a vector (batch) `x`."""
        with self._scope(name, [x]):
            x = convert_to_tensor(x, name="x", dtype=self.dtype)
            return self._matmul(expand_dims(x, -1), adjoint, False)[..., 0]

    def solve(self, rhs, adjoint: bool = False, adjoint_arg: bool = False,
              name: str = "solve"):
        """``X`` with ``op @ X = rhs``."""
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        with self._scope(name, [rhs]):
            rhs = convert_to_tensor(rhs, name="rhs", dtype=self.dtype)
            if adjoint_arg:
                rhs = _adjoint(rhs)
            return self._solve(rhs, adjoint)

    def solvevec(self, rhs, adjoint: bool = False, name: str = "solve"):
        """`solve` for a vector (batch) right-hand side."""
        with self._scope(name, [rhs]):
            rhs = convert_to_tensor(rhs, name="rhs", dtype=self.dtype)
            return self._solve(expand_dims(rhs, -1), adjoint)[..., 0]

    def determinant(self, name: str = "det"):
        """The determinant of each matrix of the batch."""
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")
        with self._scope(name):
            return self._determinant()

    def log_abs_determinant(self, name: str = "log_abs_det"):
        """``log |det|`` of each matrix of the batch."""
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")
        with self._scope(name):
            return self._log_abs_determinant()

    def diag_part(self, name: str = "diag_part"):
        """The diagonal of each matrix."""
        with self._scope(name):
            return self._diag_part()

    def trace(self, name: str = "trace"):
        """The sum of the diagonal of each matrix."""
        with self._scope(name):
            return reduce_sum(self._diag_part(), -1)

    def add_to_tensor(self, x, name: str = "add_to_tensor"):
        """``x + op`` as a dense tensor."""
        with self._scope(name, [x]):
            return add(convert_to_tensor(x, name="x", dtype=self.dtype), self._to_dense())

    # -- dense fallbacks ------------------------------------------------------------------
    def _matmul(self, x, adjoint, adjoint_arg):
        return matmul(self._to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint):
        return matrix_solve(self._to_dense(), rhs, adjoint=adjoint)

    def _determinant(self):
        return matrix_determinant(self._to_dense())

    def _log_abs_determinant(self):
        return slogdet(self._to_dense())[1]

    def _diag_part(self):
        return matrix_diag_part(self._to_dense())

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} '{self.name}' shape={self.shape} "
                f"dtype={getattr(self.dtype, 'name', None)}>")


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
