"""Operators made of other operators: `BlockDiag`, `BlockLowerTriangular`, `Kronecker`
and `LowRankUpdate` (``B + U D V^H``); the product, `Composition`, lives beside the base
class, whose `matmul` of two operators returns one.

Products and solves work block by block (or through the Woodbury identity for a
low-rank update), so a block-diagonal operator of diagonal blocks never forms its dense
matrix; `to_dense` builds it when asked. The block sizes must be known when the graph is
built.

Example
-------
>>> import flowgraph as tf
>>> a = tf.linalg.LinearOperatorDiag([1., 2.])
>>> b = tf.linalg.LinearOperatorDiag([3.])
>>> tf.Session().run(tf.linalg.LinearOperatorBlockDiag([a, b]).matvec([1., 1., 1.])).tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import functools
import operator

from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import Dimension
from flowgraph.linalg.linear_operator import (
    LinearOperator,
    auto_set_hints,
    check_operators,
    composite_shape,
    init_from_operators,
)
from flowgraph.linalg.linear_operator_basic import LinearOperatorDiag, LinearOperatorIdentity
from flowgraph.ops.array_join_ops import concat, pad, split
from flowgraph.ops.array_shape_ops import expand_dims, reshape, shape
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_basic import eye
from flowgraph.ops.linalg_diag_ops import matrix_diag
from flowgraph.ops.linalg_ops import matrix_determinant, matrix_solve, slogdet
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import add, conj, log, matmul, multiply, subtract
from flowgraph.ops.math_reduce import reduce_prod, reduce_sum

__all__ = ["LinearOperatorBlockDiag", "LinearOperatorBlockLowerTriangular",
           "LinearOperatorKronecker", "LinearOperatorLowRankUpdate"]


def _static(dim: Dimension, what: str) -> int:
    if dim.value is None:
        raise ValueError(f"{what} must be known when the graph is built")
    return dim.value


def _place(dense, left: int, right: int, axis: int):
    """`dense` padded with `left`/`right` zero columns (axis -1) or rows (axis -2)."""
    rank = dense.shape.ndims
    pads = [[0, 0]] * rank
    pads[rank + axis] = [left, right]
    return pad(dense, pads)


class LinearOperatorBlockDiag(LinearOperator):
    """A block-diagonal operator ``diag(A_0, ..., A_k)`` of square operators.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorBlockDiag([tf.linalg.LinearOperatorDiag([2.]),
    ...                                         tf.linalg.LinearOperatorDiag([3.])])
    >>> float(tf.Session().run(op.determinant()))
    6.0
    """

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        self._operators = check_operators(operators, "LinearOperatorBlockDiag")
        if is_square is False:
            raise ValueError("A block diagonal operator is always square.")
        for op in self._operators:
            if op.is_square is False:
                raise ValueError(f"LinearOperatorBlockDiag needs square blocks; operator "
                                 f"'{op.name}' has shape {op.shape}")
        is_non_singular, is_self_adjoint, is_positive_definite = auto_set_hints(
            self._operators, is_non_singular, is_self_adjoint, is_positive_definite,
            "The direct sum")
        init_from_operators(self, self._operators, is_non_singular, is_self_adjoint,
                            is_positive_definite, True, name, "_ds_")

    @property
    def operators(self) -> list:
        return list(self._operators)

    def _sizes(self):
        return [_static(op.domain_dimension, f"the size of block '{op.name}'")
                for op in self._operators]

    def _shape(self):
        dims = [op.domain_dimension.value for op in self._operators]
        n = None if None in dims else sum(dims)
        return composite_shape(self._operators, n, n)

    def _blockwise(self, x, fn):
        parts = split(x, self._sizes(), axis=-2)
        return concat([fn(op, p) for op, p in zip(self._operators, parts)], -2)

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        return self._blockwise(x, lambda op, p: op.matmul(p, adjoint=adjoint))

    def _solve(self, rhs, adjoint):
        return self._blockwise(rhs, lambda op, p: op.solve(p, adjoint=adjoint))

    def _determinant(self):
        return functools.reduce(operator.mul, [op.determinant() for op in self._operators])

    def _log_abs_determinant(self):
        return functools.reduce(operator.add,
                                [op.log_abs_determinant() for op in self._operators])

    def _diag_part(self):
        return concat([op.diag_part() for op in self._operators], -1)

    def _to_dense(self):
        sizes = self._sizes()
        total, rows, start = sum(sizes), [], 0
        for op, n in zip(self._operators, sizes):
            rows.append(_place(op.to_dense(), start, total - start - n, -1))
            start += n
        return concat(rows, -2)

    def _inverse_operator(self):
        return LinearOperatorBlockDiag([op.inverse() for op in self._operators],
                                       name=self.name + "_inv")

    def _adjoint_operator(self):
        return LinearOperatorBlockDiag([op.adjoint() for op in self._operators],
                                       name=self.name + "_adjoint")

    def _linop_cholesky(self):
        return LinearOperatorBlockDiag([op.cholesky() for op in self._operators],
                                       is_non_singular=True, is_square=True)

    def _eigvals(self):
        if not all(op.is_square for op in self._operators):
            raise NotImplementedError("`eigvals` not implemented for an operator whose "
                                      "blocks are not square.")
        return _concat_eigvals(self._operators)

    def _assert_non_singular(self):
        return group(*[op.assert_non_singular() for op in self._operators])

    def _assert_self_adjoint(self):
        return group(*[op.assert_self_adjoint() for op in self._operators])

    def _assert_positive_definite(self):
        return group(*[op.assert_positive_definite() for op in self._operators])

class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular operator: row ``i`` of `operators` holds the ``i + 1``
    blocks ``A_i0 .. A_ii`` on and left of the (square) diagonal block.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.linalg.LinearOperatorDiag
    >>> op = tf.linalg.LinearOperatorBlockLowerTriangular(
    ...     [[d([1.])], [tf.linalg.LinearOperatorFullMatrix([[2.]]), d([4.])]])
    >>> tf.Session().run(op.to_dense()).tolist()
    [[1.0, 0.0], [2.0, 4.0]]
    """

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorBlockLowerTriangular"):
        rows = [list(row) for row in operators]
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(f"LinearOperatorBlockLowerTriangular: row {i} of operators "
                                 f"must hold {i + 1} operators (the blocks on and left of "
                                 f"the diagonal), got {len(row)}")
        self._rows = rows
        flat = check_operators([op for row in rows for op in row],
                                "LinearOperatorBlockLowerTriangular")
        for row in rows:
            if row[-1].is_square is False:
                raise ValueError(f"the diagonal block '{row[-1].name}' must be square")
        init_from_operators(self, flat, is_non_singular, is_self_adjoint,
                            is_positive_definite, is_square, name)

    @property
    def operators(self) -> list:
        return [list(row) for row in self._rows]

    def _sizes(self):
        return [_static(row[-1].domain_dimension, f"the size of block '{row[-1].name}'")
                for row in self._rows]

    def _shape(self):
        dims = [row[-1].domain_dimension.value for row in self._rows]
        n = None if None in dims else sum(dims)
        return composite_shape([op for row in self._rows for op in row], n, n)

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        parts = split(x, self._sizes(), axis=-2)
        k = len(self._rows)
        out = []
        for i in range(k):
            if adjoint:  # column i of the adjoint: the blocks below and on the diagonal
                terms = [self._rows[r][i].matmul(parts[r], adjoint=True) for r in range(i, k)]
            else:
                terms = [op.matmul(parts[j]) for j, op in enumerate(self._rows[i])]
            out.append(functools.reduce(add, terms))
        return concat(out, -2)

    def _solve(self, rhs, adjoint):
        parts = split(rhs, self._sizes(), axis=-2)
        k = len(self._rows)
        solved = [None] * k
        order = range(k - 1, -1, -1) if adjoint else range(k)
        for i in order:
            b = parts[i]
            if adjoint:
                for r in range(i + 1, k):
                    b = subtract(b, self._rows[r][i].matmul(solved[r], adjoint=True))
            else:
                for j in range(i):
                    b = subtract(b, self._rows[i][j].matmul(solved[j]))
            solved[i] = self._rows[i][i].solve(b, adjoint=adjoint)
        return concat(solved, -2)

    def _determinant(self):
        return functools.reduce(operator.mul, [row[-1].determinant() for row in self._rows])

    def _log_abs_determinant(self):
        return functools.reduce(operator.add,
                                [row[-1].log_abs_determinant() for row in self._rows])

    def _to_dense(self):
        sizes = self._sizes()
        total = sum(sizes)
        rows = []
        for i, row in enumerate(self._rows):
            dense = concat([op.to_dense() for op in row], -1) if len(row) > 1 else \
                row[0].to_dense()
            used = sum(sizes[:i + 1])
            rows.append(_place(dense, 0, total - used, -1))
        return concat(rows, -2)

    def _eigvals(self):
        return _concat_eigvals([row[-1] for row in self._rows])

    def _assert_non_singular(self):
        return group(*[row[-1].assert_non_singular() for row in self._rows])



def _kron(a, b):
    """``kron(a, b)`` for ``[..., m, n]`` and ``[..., p, q]`` with static m, n, p, q."""
    m, n = _static(a.shape[-2], "Kronecker factor rows"), _static(a.shape[-1], "columns")
    p, q = _static(b.shape[-2], "Kronecker factor rows"), _static(b.shape[-1], "columns")
    outer = multiply(expand_dims(expand_dims(a, -1), -3), expand_dims(expand_dims(b, -3), -2))
    return reshape(outer, concat([shape(outer)[:-4], [m * p, n * q]], 0))


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product ``A_0 ⊗ A_1 ⊗ ... ⊗ A_k`` of operators.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = tf.linalg.LinearOperatorDiag([1., 2.])
    >>> b = tf.linalg.LinearOperatorDiag([3., 4.])
    >>> tf.Session().run(tf.linalg.LinearOperatorKronecker([a, b]).diag_part()).tolist()
    [3.0, 4.0, 6.0, 8.0]
    """

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self._operators = check_operators(operators, "LinearOperatorKronecker")
        is_non_singular, is_self_adjoint, is_positive_definite = auto_set_hints(
            self._operators, is_non_singular, is_self_adjoint, is_positive_definite,
            "The Kronecker product", "positive-definite", name_hint=True)
        init_from_operators(self, self._operators, is_non_singular, is_self_adjoint,
                            is_positive_definite, is_square, name, "_x_")

    @property
    def operators(self) -> list:
        return list(self._operators)

    def _shape(self):
        rows = [op.range_dimension.value for op in self._operators]
        cols = [op.domain_dimension.value for op in self._operators]
        return composite_shape(self._operators,
                               None if None in rows else int(reduce_prod_py(rows)),
                               None if None in cols else int(reduce_prod_py(cols)))

    def _to_dense(self):
        return functools.reduce(_kron, [op.to_dense() for op in self._operators])

    def _sizes(self):
        return [_static(op.domain_dimension, f"the size of factor '{op.name}'")
                for op in self._operators]

    def _determinant(self):
        total = reduce_prod_py(self._sizes())
        return functools.reduce(multiply, [op.determinant() ** (total // n) for op, n in
                                           zip(self._operators, self._sizes())])

    def _log_abs_determinant(self):
        total = reduce_prod_py(self._sizes())
        return functools.reduce(add, [op.log_abs_determinant() * float(total // n) for op, n
                                      in zip(self._operators, self._sizes())])

    def _inverse_operator(self):
        return LinearOperatorKronecker([op.inverse() for op in self._operators],
                                       name=self.name + "_inv")

    def _adjoint_operator(self):
        return LinearOperatorKronecker([op.adjoint() for op in self._operators],
                                       name=self.name + "_adjoint")

    def _linop_cholesky(self):
        return LinearOperatorKronecker([op.cholesky() for op in self._operators],
                                       is_non_singular=True, is_square=True)

    def _eigvals(self):
        # every product of one eigenvalue per factor, the first factor's varying slowest
        product = self._operators[0].eigvals()
        for op in self._operators[1:]:
            product = multiply(expand_dims(product, -1), expand_dims(op.eigvals(), -2))
            product = reshape(product, concat([shape(product)[:-2], [-1]], 0))
        product.set_shape(self.shape[:-1])
        return product

    def _check_square_factors(self):
        if not all(op.is_square for op in self._operators):
            raise errors.InvalidArgumentError(
                None, None, "All Kronecker factors must be square for the product to be "
                "invertible. Expected hint `is_square` to be True for every operator in "
                "argument `operators`.")

    def _assert_non_singular(self):
        self._check_square_factors()
        return group(*[op.assert_non_singular() for op in self._operators])

    def _assert_self_adjoint(self):
        self._check_square_factors()
        return group(*[op.assert_self_adjoint() for op in self._operators])



def reduce_prod_py(values) -> int:
    """The product of Python integers."""
    return functools.reduce(lambda a, b: a * b, values, 1)


class LinearOperatorLowRankUpdate(LinearOperator):
    """``A = B + U diag(d) V^H`` for an operator ``B`` (`base_operator`), ``U`` and ``V``
    ``[..., M, K]`` (``V = U`` by default) and ``d`` ``[..., K]`` (ones by default).

    Solves use the Woodbury identity and determinants the matrix determinant lemma, so
    only ``K x K`` systems are solved densely besides `B`'s own solves.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorLowRankUpdate(tf.linalg.LinearOperatorDiag([1., 2.]),
    ...                                            [[1.], [1.]])
    >>> tf.Session().run(op.to_dense()).tolist()
    [[2.0, 1.0], [1.0, 3.0]]
    """

    def __init__(self, base_operator, u, diag_update=None, v=None,
                 is_diag_update_positive=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowRankUpdate"):
        dtype = base_operator.dtype
        with name_scope(name, values=[u, diag_update, v]):
            self._u = convert_to_tensor(u, name="u", dtype=dtype)
            self._v = None if v is None else convert_to_tensor(v, name="v", dtype=dtype)
            self._diag = None if diag_update is None else convert_to_tensor(
                diag_update, name="diag_update", dtype=dtype)
        if diag_update is None:
            is_diag_update_positive = True if is_diag_update_positive is None else \
                is_diag_update_positive
        symmetric = v is None and is_diag_update_positive
        if is_self_adjoint is None and symmetric and base_operator.is_self_adjoint:
            is_self_adjoint = True
        if (is_positive_definite is None and symmetric
                and base_operator.is_positive_definite):
            is_positive_definite = True
        self._base = base_operator
        self._is_diag_update_positive = is_diag_update_positive
        params = [t for t in (self._u, self._v, self._diag) if t is not None]
        super().__init__(dtype, [*base_operator.graph_parents, *params], is_non_singular,
                         is_self_adjoint, is_positive_definite, is_square, name)

    @property
    def base_operator(self) -> LinearOperator:
        return self._base

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._u if self._v is None else self._v

    @property
    def diag_update(self):
        return self._diag

    @property
    def is_diag_update_positive(self):
        return self._is_diag_update_positive

    def _shape(self):
        return self._base.shape

    def _scaled(self, x, conjugate=False):
        """``diag(d) @ x`` (``diag(conj(d))`` with `conjugate`)."""
        if self._diag is None:
            return x
        d = conj(self._diag) if conjugate and self.dtype.is_complex else self._diag
        return multiply(expand_dims(d, -1), x)

    def _factors(self, adjoint):
        """``(left, right, conjugate)``: the update is ``left diag right^H``."""
        return (self.v, self._u, True) if adjoint else (self._u, self.v, False)

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        left, right, conjugate = self._factors(adjoint)
        update = matmul(left, self._scaled(matmul(right, x, adjoint_a=True), conjugate))
        return add(self._base.matmul(x, adjoint=adjoint), update)

    def _capacitance(self, adjoint):
        """``C = diag(d)^-1 + right^H B^-1 left`` (``K x K``)."""
        left, right, conjugate = self._factors(adjoint)
        inner = matmul(right, self._base.solve(left, adjoint=adjoint), adjoint_a=True)
        if self._diag is None:
            k = _static(self._u.shape[-1], "the rank K of the update (u's last dimension)")
            return add(inner, eye(k, dtype=self.dtype))
        d = conj(self._diag) if conjugate and self.dtype.is_complex else self._diag
        return add(inner, matrix_diag(1 / d))

    def _solve(self, rhs, adjoint):
        left, right, _ = self._factors(adjoint)
        base_solve = self._base.solve(rhs, adjoint=adjoint)
        small = matrix_solve(self._capacitance(adjoint), matmul(right, base_solve,
                                                                 adjoint_a=True))
        return subtract(base_solve, self._base.solve(matmul(left, small), adjoint=adjoint))

    def _determinant(self):
        det = multiply(self._base.determinant(), matrix_determinant(self._capacitance(False)))
        if self._diag is not None:
            det = multiply(det, reduce_prod(self._diag, -1))
        return det

    def _log_abs_determinant(self):
        lad = add(self._base.log_abs_determinant(), slogdet(self._capacitance(False))[1])
        if self._diag is not None:
            lad = add(lad, reduce_sum(log(_abs(self._diag)), -1))
        return lad

    def _to_dense(self):
        update = matmul(self._u, self._scaled(_adjoint(self.v)))
        return add(self._base.to_dense(), update)

    @property
    def diag_operator(self) -> LinearOperator:
        """``diag(d)`` as an operator: a `LinearOperatorDiag`, or the identity of `K`
        rows when no `diag_update` was given."""
        if self._diag is not None:
            return LinearOperatorDiag(self._diag,
                                      is_positive_definite=self._is_diag_update_positive)
        rank = self._u.shape[-1].value
        if rank is None:
            raise ValueError("diag_operator needs the static rank K of u (its last "
                             f"dimension); u has shape {self._u.shape}")
        return LinearOperatorIdentity(rank, dtype=self.dtype)

    def _assert_self_adjoint(self):
        if self._v is None and self._diag is None:
            return self._base.assert_self_adjoint()
        return super()._assert_self_adjoint()


def _concat_eigvals(operators):
    """The eigenvalues of the diagonal blocks, concatenated along the last axis."""
    values = [op.eigvals() for op in operators]
    return concat(values, -1)
