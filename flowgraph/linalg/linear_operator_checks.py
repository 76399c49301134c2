"""The members every `tf.linalg.LinearOperator` shares beyond products and solves: its
spectrum (`eigvals`, `cond`, `cholesky`), the runtime checks of its hints
(`assert_non_singular`, `assert_positive_definite`, `assert_self_adjoint`), its rank as a
tensor, and the `tf.Module` side: the constructor's `parameters` and the variables found
through them.

`OperatorChecks` holds the dense defaults; an operator whose structure makes one cheap
(a diagonal's eigenvalues are its diagonal) overrides the underscored method, as
`LinearOperator` subclasses do for `_matmul`. The asserts are graph ops that raise
`InvalidArgumentError` when run on an operator that breaks the property (or at build time
when the values are constants, as every `tf.debugging.assert_*`).

Example
-------
>>> import flowgraph as tf
>>> op = tf.linalg.LinearOperatorFullMatrix([[4., 1.], [1., 3.]], is_self_adjoint=True,
...                                         is_positive_definite=True)
>>> type(op.cholesky()).__name__, op.parameters["is_square"]
('LinearOperatorLowerTriangular', None)
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.ops.array_shape_ops import size
from flowgraph.ops.check_ops import assert_equal, assert_less, assert_positive
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_diag_ops import matrix_diag_part
from flowgraph.ops.linalg_ops import cholesky, self_adjoint_eigvals, svd
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import cast, maximum, truediv
from flowgraph.ops.math_reduce import reduce_max, reduce_min
from flowgraph.ops.module import Module
from flowgraph.ops.spectral_ops import imag

__all__ = ["OperatorChecks", "assert_no_entries_with_modulus_zero", "assert_zero_imag_part"]


def assert_no_entries_with_modulus_zero(x, message):
    """An assert op: every entry of `x` has a nonzero modulus."""
    x = convert_to_tensor(x, name="x")
    return assert_less(constant(0, x.dtype.real_dtype), _abs(x), message=message,
                       name="assert_no_entries_with_modulus_zero")


def assert_zero_imag_part(x, message):
    """An assert op: `x` has no imaginary part (a no-op for a real `x`)."""
    x = convert_to_tensor(x, name="x")
    if not x.dtype.is_complex:
        return no_op(name="assert_zero_imag_part")
    return assert_equal(constant(0, x.dtype.real_dtype), imag(x), message=message,
                        name="assert_zero_imag_part")


class OperatorChecks(Module):
    """The shared members of `LinearOperator` (see the module's docstring)."""

    def __init_subclass__(cls, **kwargs):
        # Each subclass's constructor records its arguments, defaults included, as
        # `parameters` (the outermost constructor wins when one calls another).
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return
        signature = inspect.signature(init)

        @functools.wraps(init)
        def recording_init(self, *args, **kw):
            if "_parameters" not in self.__dict__:
                bound = signature.bind(self, *args, **kw)
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                arguments.pop(next(iter(signature.parameters)))
                self._parameters = arguments
            init(self, *args, **kw)

        cls.__init__ = recording_init

    @property
    def parameters(self) -> dict:
        """The arguments the operator was built with (as given, defaults included)."""
        return dict(self.__dict__.get("_parameters", {}))

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor"):
        """The tensor rank (batch rank + 2) as an int32 scalar tensor."""
        with self._scope(name):
            if self.tensor_rank is not None:
                return constant(self.tensor_rank, _dtypes.int32)
            return size(self.shape_tensor())

    # -- spectrum ------------------------------------------------------------------------
    def _can_use_cholesky(self) -> bool:
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def cholesky(self, name: str = "cholesky"):
        """The lower-triangular Cholesky factor ``L`` (``A = L L^H``) as an operator; a
        ValueError unless the operator is hinted self-adjoint and positive definite."""
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive "
                             "definite self adjoint matrix.")
        with self._scope(name):
            return self._linop_cholesky()

    def eigvals(self, name: str = "eigvals"):
        """The eigenvalues ``[..., N]``; NotImplementedError unless the operator is hinted
        self-adjoint."""
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        with self._scope(name):
            return self._eigvals()

    def _eigvals(self):
        return self_adjoint_eigvals(self.to_dense())

    def cond(self, name: str = "cond"):
        """The condition number (largest over smallest singular value) of each matrix, in
        the operator's real dtype."""
        with self._scope(name):
            return self._cond()

    def _cond(self):
        if self.is_self_adjoint:
            values = _abs(self._eigvals())
        else:
            values = svd(self.to_dense(), compute_uv=False)
        return truediv(reduce_max(values, axis=-1), reduce_min(values, axis=-1))

    # -- asserts -------------------------------------------------------------------------
    def assert_non_singular(self, name: str = "assert_non_singular"):
        """An op that fails (InvalidArgumentError) when run if the operator is singular:
        a condition number of ``1 / (max(100, M, N) * eps)`` or more."""
        with self._scope(name):
            return self._assert_non_singular()

    def _assert_non_singular(self):
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        values = svd(self.to_dense(), compute_uv=False)
        condition = truediv(reduce_max(values, axis=-1), reduce_min(values, axis=-1))
        return assert_less(condition, self._max_condition_number_to_be_non_singular(),
                           message="Singular matrix up to precision epsilon.")

    def _max_condition_number_to_be_non_singular(self):
        eps = float(np.finfo(self.dtype.real_dtype.as_numpy_dtype).eps)
        dims = [self.range_dimension.value, self.domain_dimension.value]
        if None not in dims:
            return constant(1.0 / (max(100.0, *dims) * eps), self.dtype.real_dtype)
        real = self.dtype.real_dtype
        largest = maximum(reduce_max(cast(self.shape_tensor()[-2:], real)), 100.0)
        return truediv(constant(1.0 / eps, real), largest)

    def assert_positive_definite(self, name: str = "assert_positive_definite"):
        """An op that fails when run if the operator is not positive definite (by
        default: its Cholesky factor's diagonal is not positive, so the operator must be
        hinted self-adjoint)."""
        with self._scope(name):
            return self._assert_positive_definite()

    def _assert_positive_definite(self):
        if self.is_self_adjoint:
            return assert_positive(matrix_diag_part(cholesky(self.to_dense())),
                                   message="Matrix was not positive definite.")
        raise NotImplementedError("assert_positive_definite is not implemented.")

    def assert_self_adjoint(self, name: str = "assert_self_adjoint"):
        """An op that fails when run if the operator differs from its adjoint."""
        with self._scope(name):
            return self._assert_self_adjoint()

    def _assert_self_adjoint(self):
        dense = self.to_dense()
        return assert_equal(dense, _adjoint(dense),
                            message="Matrix was not equal to its adjoint.")
