"""`tf.linalg.LinearOperator`, the base of every operator, and the two wrappers its
`adjoint()` and `inverse()` return, `LinearOperatorAdjoint` and `LinearOperatorInversion`,
the product `LinearOperatorComposition` that `matmul` of two operators returns, and
`LinearOperatorLowerTriangular`, the type of a dense operator's `cholesky()` (the other
concrete operators live in `linear_operator_basic.py`, `linear_operator_blocks.py` and
`linear_operator_structured.py`; the spectrum, asserts and `parameters` in
`linear_operator_checks.py`).

An operator stands for a (batch of) ``[M, N]`` matrices without necessarily building
them: `matmul`, `solve` and the determinants use the structure (a diagonal scales rows, a
triangular matrix solves by substitution) and fall back on the dense matrix otherwise.
Everything is built from ordinary ops, so gradients flow to the parameters.
"""

from __future__ import annotations

import contextlib
import functools
import operator

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.linalg.linear_operator_checks import (
    OperatorChecks,
    assert_no_entries_with_modulus_zero,
)
from flowgraph.ops.array_shape_ops import expand_dims, shape, squeeze
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_diag_ops import matrix_band_part, matrix_diag_part
from flowgraph.ops.linalg_ops import (
    cholesky,
    cholesky_solve,
    matrix_determinant,
    matrix_inverse,
    matrix_solve,
    matrix_triangular_solve,
    slogdet,
)
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import (
    add,
    conj,
    exp,
    log,
    matmul,
    negative,
    sign,
    truediv,
)
from flowgraph.ops.math_reduce import reduce_prod, reduce_sum

__all__ = ["LinearOperator", "LinearOperatorAdjoint", "LinearOperatorComposition",
           "LinearOperatorInversion", "LinearOperatorLowerTriangular"]


class LinearOperator(OperatorChecks):
    """The base class: subclasses give `_shape`, `_to_dense` and whichever of `_matmul`,
    `_solve`, `_determinant`, `_log_abs_determinant`, `_diag_part` their structure makes
    cheap. The spectrum, the asserts and `parameters` come from `OperatorChecks`
    (`linear_operator_checks.py`); an operator is a `tf.Module`.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorDiag([1., 2.])
    >>> op.shape.as_list(), op.is_square
    ([2, 2], True)
    """

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None, parameters=None):
        if is_positive_definite and is_non_singular is False:
            raise ValueError("A positive definite matrix is always non-singular.")
        if is_self_adjoint and is_square is False:
            raise ValueError("A self-adjoint matrix is always square.")
        if is_non_singular and is_square is False:
            raise ValueError("A non-singular matrix is always square.")
        self._dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = True if is_positive_definite else is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set = is_square
        self._name = name or type(self).__name__
        self._scope_name = self._name  # tf.Module's `name_scope`
        if parameters is not None:
            self._parameters = dict(parameters)

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
        # As TensorFlow's operators: the operator's name, entered as it is (not made
        # unique) under the current scope, then the method's: "op/det", "op/det_1".
        current = get_default_graph().get_name_scope()
        full = f"{current}/{self.name}/" if current else f"{self.name}/"
        with name_scope(full), name_scope(method, values=values) as scope:
            yield scope

    # -- methods -----------------------------------------------------------------------
    def to_dense(self, name: str = "to_dense"):
        """The operator as a dense ``[..., M, N]`` tensor."""
        with self._scope(name):
            return self._to_dense()

    def matmul(self, x, adjoint: bool = False, adjoint_arg: bool = False,
               name: str = "matmul"):
        """``op @ x`` (``op^H`` with `adjoint`, ``x^H`` with `adjoint_arg`); for an
        operator `x`, the product as a `LinearOperatorComposition`."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            with self._scope(name):
                return LinearOperatorComposition([left, right])
        with self._scope(name, [x]):
            x = convert_to_tensor(x, name="x", dtype=self.dtype)
            return self._matmul(x, adjoint, adjoint_arg)

    def matvec(self, x, adjoint: bool = False, name: str = "matvec"):
        """``op @ x`` for a vector (batch) `x`."""
        with self._scope(name, [x]):
            x = convert_to_tensor(x, name="x", dtype=self.dtype)
            return self._matvec(x, adjoint)

    def solve(self, rhs, adjoint: bool = False, adjoint_arg: bool = False,
              name: str = "solve"):
        """``X`` with ``op @ X = rhs``; for an operator `rhs`, ``op^-1 @ rhs`` as a
        `LinearOperatorComposition`."""
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        if isinstance(rhs, LinearOperator):
            left = self.inverse().adjoint() if adjoint else self.inverse()
            right = rhs.adjoint() if adjoint_arg else rhs
            with self._scope(name):
                return LinearOperatorComposition([left, right])
        with self._scope(name, [rhs]):
            rhs = convert_to_tensor(rhs, name="rhs", dtype=self.dtype)
            if adjoint_arg:
                rhs = _adjoint(rhs)
            return self._solve(rhs, adjoint)

    def solvevec(self, rhs, adjoint: bool = False, name: str = "solve"):
        """`solve` for a vector (batch) right-hand side."""
        with self._scope(name, [rhs]):
            rhs = convert_to_tensor(rhs, name="rhs", dtype=self.dtype)
            return squeeze(self._solve(expand_dims(rhs, -1), adjoint), [-1])

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

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The adjoint (conjugate transpose) as an operator: `self` when the operator is
        known to be self-adjoint."""
        if self.is_self_adjoint is True:
            return self
        with self._scope(name):
            return self._adjoint_operator()

    @property
    def H(self) -> LinearOperator:
        """`adjoint()`."""
        return self.adjoint()

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The inverse as an operator (ValueError for an operator known to be non-square
        or singular)."""
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non "
                             "square matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular "
                             "matrix.")
        with self._scope(name):
            return self._inverse_operator()

    def _adjoint_operator(self) -> LinearOperator:
        return LinearOperatorAdjoint(self, self.is_non_singular, self.is_self_adjoint,
                                     self.is_positive_definite, self.is_square)

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True,
                                             is_self_adjoint=False, is_square=True)

    def _inverse_operator(self) -> LinearOperator:
        return LinearOperatorInversion(self, self.is_non_singular, self.is_self_adjoint,
                                       self.is_positive_definite, self.is_square)

    # -- dense fallbacks ------------------------------------------------------------------
    def _can_use_cholesky(self) -> bool:
        """Hinted self-adjoint and positive definite: the fallbacks factor the dense
        matrix by Cholesky, as TensorFlow's do (so gradients are symmetric too)."""
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _matmul(self, x, adjoint, adjoint_arg):
        return matmul(self._to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _matvec(self, x, adjoint):
        return squeeze(self._matmul(expand_dims(x, -1), adjoint, False), [-1])

    def _solve(self, rhs, adjoint):
        if self._can_use_cholesky():
            return cholesky_solve(cholesky(self._to_dense()), rhs)
        return matrix_solve(self._to_dense(), rhs, adjoint=adjoint)

    def _determinant(self):
        if self._can_use_cholesky():
            return exp(self.log_abs_determinant())
        return matrix_determinant(self._to_dense())

    def _log_abs_determinant(self):
        if self._can_use_cholesky():
            diag = matrix_diag_part(cholesky(self._to_dense()))
            return 2 * reduce_sum(log(diag), axis=[-1])
        return slogdet(self._to_dense())[1]

    def _diag_part(self):
        return matrix_diag_part(self._to_dense())

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} '{self.name}' shape={self.shape} "
                f"dtype={getattr(self.dtype, 'name', None)}>")


def _merge_hint(mine, theirs, what):
    """A hint of a wrapper: the operator's, unless the caller contradicts it."""
    if mine is not None and theirs is not None and mine != theirs:
        raise ValueError(f"An operator is {what} if and only if its adjoint (or inverse) "
                         f"is {what}: got {mine} for the wrapper and {theirs} for the "
                         "operator.")
    return theirs if mine is None else mine


def _init_wrapper(self, operator, is_non_singular, is_self_adjoint, is_positive_definite,
                  is_square, name) -> None:
    """`LinearOperator.__init__` of `self`, a wrapper of `operator` (its adjoint or
    inverse): the operator's dtype, graph parents and hints, which the caller's may
    repeat but not contradict."""
    self._operator = operator
    LinearOperator.__init__(
        self, operator.dtype, operator.graph_parents,
        _merge_hint(is_non_singular, operator.is_non_singular, "non-singular"),
        _merge_hint(is_self_adjoint, operator.is_self_adjoint, "self-adjoint"),
        _merge_hint(is_positive_definite, operator.is_positive_definite,
                    "positive definite"),
        _merge_hint(is_square, operator.is_square, "square"), name)


class _WrappedChecks:
    """`cond` and the assertions of an operator that wraps `self._operator` (its adjoint
    and its inverse share them with it)."""

    def _cond(self):
        return self._operator.cond()

    def _assert_non_singular(self):
        return self._operator.assert_non_singular()

    def _assert_positive_definite(self):
        return self._operator.assert_positive_definite()

    def _assert_self_adjoint(self):
        return self._operator.assert_self_adjoint()


class LinearOperatorAdjoint(_WrappedChecks, LinearOperator):
    """The adjoint ``A^H`` of an operator ``A``, without forming it: products and solves
    ask `A` for its adjoint ones.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorFullMatrix([[1., 2.], [3., 4.]])
    >>> tf.Session().run(tf.linalg.LinearOperatorAdjoint(op).to_dense()).tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        _init_wrapper(self, operator, is_non_singular, is_self_adjoint, is_positive_definite,
                      is_square, name or operator.name + "_adjoint")

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _shape(self):
        s = self._operator.shape
        if s.ndims is None:
            return s
        return s[:-2].concatenate([s[-1], s[-2]])

    def _matmul(self, x, adjoint, adjoint_arg):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint):
        return self._operator.solve(rhs, adjoint=not adjoint)

    def _determinant(self):
        det = self._operator.determinant()
        return conj(det) if self.dtype.is_complex else det

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _to_dense(self):
        return _adjoint(self._operator.to_dense())

    def _diag_part(self):
        return conj(self._operator.diag_part())

    def _adjoint_operator(self):
        return self._operator

    def _eigvals(self):
        values = self._operator.eigvals()
        return values if self._operator.is_self_adjoint else conj(values)



class LinearOperatorInversion(_WrappedChecks, LinearOperator):
    """The inverse ``A^-1`` of a square, non-singular operator ``A``, without forming it:
    its products are `A`'s solves and its solves `A`'s products.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorFullMatrix([[2., 0.], [0., 4.]])
    >>> tf.Session().run(tf.linalg.LinearOperatorInversion(op).matvec([1., 1.])).tolist()
    [0.5, 0.25]
    """

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"operator '{operator.name}' is flagged singular "
                             "(is_non_singular=False): it has no inverse")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"operator '{operator.name}' is not square: it has no inverse")
        _init_wrapper(self, operator, is_non_singular, is_self_adjoint, is_positive_definite,
                      is_square, name or operator.name + "_inv")

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _shape(self):
        return self._operator.shape

    def _matmul(self, x, adjoint, adjoint_arg):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint):
        return self._operator.matmul(rhs, adjoint=adjoint)

    def _determinant(self):
        return truediv(1.0, self._operator.determinant())

    def _log_abs_determinant(self):
        return negative(self._operator.log_abs_determinant())

    def _to_dense(self):
        return matrix_inverse(self._operator.to_dense())

    def _inverse_operator(self):
        return self._operator

    def _eigvals(self):
        return truediv(1.0, self._operator.eigvals())



def check_operators(operators, what):
    operators = list(operators)
    if not operators:
        raise ValueError(f"Expected a non-empty list of operators. Found: {operators} "
                         f"({what})")
    dtypes = {op.dtype for op in operators}
    if len(dtypes) > 1:
        raise TypeError(f"Expected all operators to have the same dtype ({what}), found "
                        f"{sorted(d.name for d in dtypes)}")
    return operators


def init_from_operators(self, operators, is_non_singular, is_self_adjoint,
                        is_positive_definite, is_square, name, sep=None) -> None:
    """`LinearOperator.__init__` of `self`, an operator made of `operators` (a list
    `check_operators` accepted): their dtype and all their graph parents; without a
    `name`, theirs joined by `sep` (with no `sep`, the class's name)."""
    if sep is not None:
        name = name or sep.join(op.name for op in operators)
    LinearOperator.__init__(self, operators[0].dtype,
                            [p for op in operators for p in op.graph_parents],
                            is_non_singular, is_self_adjoint, is_positive_definite,
                            is_square, name)


def _is_adjoint_pair(x, y) -> bool:
    """Whether `x` and `y` are each other's adjoints by identity, not by entries."""
    if x is y and x.is_self_adjoint is not None:
        return bool(x.is_self_adjoint)
    return any(isinstance(a, LinearOperatorAdjoint) and a.operator is b
               for a, b in ((x, y), (y, x)))


def _is_aat_form(operators) -> bool:
    """``(A1 @ ... @ Ak) @ (Ak^H @ ... @ A1^H)``, as TensorFlow recognizes it."""
    operators = list(operators)
    if len(operators) % 2:
        return False
    return all(_is_adjoint_pair(operators[i], operators[-1 - i])
               for i in range(len(operators) // 2))


def auto_set_hints(operators, is_non_singular, is_self_adjoint, is_positive_definite,
                   what: str, pd_words: str = "positive definite", name_hint: bool = False):
    """TensorFlow's hints for a direct sum or Kronecker product: each property all
    the factors share, the result has (a contrary hint raises `what`'s message, with
    `name_hint`, followed by the argument's name as the Kronecker product's says)."""
    rules = (("non-singular", "is_non_singular", is_non_singular),
             ("self-adjoint", "is_self_adjoint", is_self_adjoint),
             (pd_words, "is_positive_definite", is_positive_definite))
    out = []
    for words, attr, hint in rules:
        if all(getattr(op, attr) for op in operators):
            if hint is False:
                extra = (f" Expected argument `{attr}` to be True. Received: False."
                         if name_hint else "")
                raise ValueError(f"{what} of {words} operators is always {words}.{extra}")
            hint = True
        out.append(hint)
    return out


def batch_shape_of(operators) -> TensorShape:
    """The broadcast of the operators' static batch shapes (unknown where one is)."""
    shapes = [op.batch_shape for op in operators]
    if any(s.ndims is None for s in shapes):
        return TensorShape(None)
    rank = max(s.ndims for s in shapes)
    out = []
    for i in range(rank):
        dims = [s.dims[i - rank + s.ndims] for s in shapes if i - rank + s.ndims >= 0]
        known = {d.value for d in dims if d.value not in (None, 1)}
        if len(known) > 1:
            raise ValueError(f"the operators' batch shapes {[str(s) for s in shapes]} do "
                             "not broadcast")
        if known:
            out.append(known.pop())
        else:
            out.append(None if any(d.value is None for d in dims) else 1)
    return TensorShape(out)


def composite_shape(operators, rows, cols) -> TensorShape:
    """The static shape of an operator made of `operators`: their broadcast batch shape,
    then ``[rows, cols]`` (an unknown shape where a batch shape is unknown)."""
    batch = batch_shape_of(operators)
    if batch.ndims is None:
        return TensorShape(None)
    return batch.concatenate([rows, cols])


def _is_adjoint_pair(x, y) -> bool:
    """Whether `y` is `x`'s adjoint, by identity (not by entries)."""
    if x is y:
        return bool(x.is_self_adjoint)
    return x.H is y or y.H is x


class LinearOperatorComposition(LinearOperator):
    """The product ``A_0 @ A_1 @ ... @ A_k`` of operators, applied right to left.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = tf.linalg.LinearOperatorFullMatrix([[1., 2.], [3., 4.]])
    >>> tf.Session().run(tf.linalg.LinearOperatorComposition([a, a]).to_dense()).tolist()
    [[7.0, 10.0], [15.0, 22.0]]
    """

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._operators = check_operators(operators, "LinearOperatorComposition")
        ops = self._operators
        # TensorFlow's hints: non-singular factors; A @ A^H (self-adjoint, square, and
        # positive definite when non-singular) or one self-adjoint factor.
        if all(op.is_non_singular for op in ops):
            if is_non_singular is False:
                raise ValueError("The composition of non-singular operators is always "
                                 "non-singular.")
            is_non_singular = True
        aat = _is_aat_form(ops)
        if (len(ops) == 1 and ops[0].is_self_adjoint) or aat:
            if is_self_adjoint is False:
                raise ValueError("The composition was determined to be self-adjoint but "
                                 "user provided incorrect `False` hint.")
            is_self_adjoint = True
        if aat:
            if is_square is False:
                raise ValueError("The composition was determined have the form A @ A.H, "
                                 "hence it must be square. The user provided an incorrect "
                                 "`False` hint.")
            is_square = True
        if aat and is_non_singular:
            if is_positive_definite is False:
                raise ValueError("The composition was determined to be non-singular and "
                                 "have the form A @ A.H, hence it must be positive-definite. "
                                 "The user provided an incorrect `False` hint.")
            is_positive_definite = True
        init_from_operators(self, self._operators, is_non_singular, is_self_adjoint,
                            is_positive_definite, is_square, name, "_o_")

    @property
    def operators(self) -> list:
        return list(self._operators)

    def _shape(self):
        return composite_shape(self._operators, self._operators[0].range_dimension,
                               self._operators[-1].domain_dimension)

    def _matmul(self, x, adjoint, adjoint_arg):
        ops = self._operators if adjoint else self._operators[::-1]
        out = ops[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in ops[1:]:
            out = op.matmul(out, adjoint=adjoint)
        return out

    def _solve(self, rhs, adjoint):
        ops = self._operators[::-1] if adjoint else self._operators
        out = rhs
        for op in ops:
            out = op.solve(out, adjoint=adjoint)
        return out

    def _determinant(self):
        # Python operators, so the ops are TensorFlow's ``mul`` and ``add``
        return functools.reduce(operator.mul, [op.determinant() for op in self._operators])

    def _log_abs_determinant(self):
        return functools.reduce(operator.add,
                                [op.log_abs_determinant() for op in self._operators])

    def _linop_cholesky(self):
        # L @ L^H for a lower-triangular L: L itself, its rows scaled to a positive
        # diagonal (any other product: the dense factor).
        left = self._operators[0]
        if not (len(self._operators) == 2 and isinstance(left, LinearOperatorLowerTriangular)
                and _is_adjoint_pair(left, self._operators[1])):
            return super()._linop_cholesky()
        if left.is_positive_definite:
            return left
        signs = expand_dims(sign(left.diag_part()), -2)
        return LinearOperatorLowerTriangular(truediv(left.tril, signs),
                                             is_non_singular=left.is_non_singular,
                                             is_self_adjoint=left.is_self_adjoint,
                                             is_positive_definite=True, is_square=True)

    def _assert_non_singular(self):
        if all(op.is_square for op in self._operators):
            return group(*[op.assert_non_singular() for op in self._operators])
        return super()._assert_non_singular()

    def _to_dense(self):
        out = self._operators[-1].to_dense()
        for op in self._operators[-2::-1]:
            out = op.matmul(out)
        return out


class LinearOperatorLowerTriangular(LinearOperator):
    """A lower-triangular operator (the part of `tril` on and below the diagonal); the
    type of a dense operator's `cholesky()`.

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

    @property
    def tril(self):
        """The lower-triangular matrix (the part of the argument this operator uses)."""
        return self._tril

    def _shape(self):
        return self._tril.shape

    def _to_dense(self):
        return self._tril

    def _solve(self, rhs, adjoint):
        return matrix_triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self):
        return reduce_prod(matrix_diag_part(self._tril), -1)

    def _log_abs_determinant(self):
        return reduce_sum(log(_abs(matrix_diag_part(self._tril))), -1)

    def _eigvals(self):
        return matrix_diag_part(self._tril)

    def _assert_non_singular(self):
        return assert_no_entries_with_modulus_zero(
            matrix_diag_part(self._tril),
            message="Singular operator:  Diagonal contained zero values.")
