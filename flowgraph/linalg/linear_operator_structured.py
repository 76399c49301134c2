"""Structured operators: `Circulant` (and its 2-D and 3-D block forms), `Toeplitz`,
`Tridiag`, `Householder`, `Permutation` and `Zeros`.

A circulant operator is diagonal in the Fourier basis: it is given by its `spectrum`
and applied as ``ifft(spectrum * fft(x))`` (``fft2d``/``fft3d`` for the block forms), so
products, solves and determinants cost FFTs. A tridiagonal operator uses the
``TridiagonalMatMul`` and ``TridiagonalSolve`` ops; a Householder reflection
``I - 2 v v^H / |v|^2`` is applied without forming it.

Example
-------
>>> import flowgraph as tf
>>> op = tf.linalg.LinearOperatorToeplitz(col=[1., 2.], row=[1., 3.])
>>> tf.Session().run(op.to_dense()).tolist()
[[1.0, 3.0], [2.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.linalg.linear_operator import LinearOperator
from flowgraph.linalg.linear_operator_checks import (
    assert_no_entries_with_modulus_zero,
    assert_zero_imag_part,
)
from flowgraph.ops.array_gen_ops import one_hot
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_join_ops import concat, pad, reverse_v2
from flowgraph.ops.array_shape_ops import expand_dims, fill, ones, reshape, shape, zeros
from flowgraph.ops.check_ops import assert_equal, assert_less, assert_positive
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.linalg_basic import adjoint as _adjoint
from flowgraph.ops.linalg_basic import eye, matrix_transpose
from flowgraph.ops.linalg_diag_ops import matrix_diag
from flowgraph.ops.linalg_tridiag import (
    adjoint_diagonals,
    compact_diagonals,
    tridiagonal_matmul,
    tridiagonal_solve,
)
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import (
    cast,
    conj,
    log,
    matmul,
    multiply,
    reciprocal,
    subtract,
    truediv,
)
from flowgraph.ops.math_reduce import reduce_max, reduce_min, reduce_prod, reduce_sum
from flowgraph.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d, imag, real

__all__ = ["LinearOperatorCirculant", "LinearOperatorCirculant2D",
           "LinearOperatorCirculant3D", "LinearOperatorHouseholder",
           "LinearOperatorPermutation", "LinearOperatorToeplitz", "LinearOperatorTridiag",
           "LinearOperatorZeros"]

_FFT = {1: (fft, ifft), 2: (fft2d, ifft2d), 3: (fft3d, ifft3d)}


class _BaseCirculant(LinearOperator):
    """A (block-)circulant operator of block depth 1, 2 or 3 from its spectrum."""

    def __init__(self, spectrum, block_depth, input_output_dtype, is_non_singular,
                 is_self_adjoint, is_positive_definite, is_square, name):
        if is_square is False:
            raise ValueError("A circulant operator is always square.")
        with name_scope(name, values=[spectrum]):
            spec = convert_to_tensor(spectrum, name="spectrum")
            if spec.dtype.base_dtype not in (_dtypes.float16, _dtypes.float32,
                                             _dtypes.float64, _dtypes.complex64,
                                             _dtypes.complex128):
                raise TypeError(f"{type(self).__name__}: spectrum must be floating or "
                                f"complex, got {spec.dtype.base_dtype.name}")
            if not spec.dtype.is_complex:
                complex_type = (_dtypes.complex128 if spec.dtype.base_dtype == _dtypes.float64
                                else _dtypes.complex64)
                spec = cast(spec, complex_type)
        if spec.shape.ndims is not None and spec.shape.ndims < block_depth:
            raise ValueError(f"{type(self).__name__}: spectrum must have rank >= "
                             f"{block_depth}, got shape {spec.shape}")
        self._block_shape = [int(d) if d is not None else None
                             for d in spec.shape.as_list()[-block_depth:]]
        if None in self._block_shape:
            raise ValueError(f"{type(self).__name__}: the spectrum's last {block_depth} "
                             f"dimensions must be known when the graph is built, got shape "
                             f"{spec.shape}")
        self._spectrum = spec
        self._block_depth = block_depth
        super().__init__(_dtypes.as_dtype(input_output_dtype), [spec], is_non_singular,
                         is_self_adjoint, is_positive_definite, True, name)

    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self) -> int:
        return self._block_depth

    def block_shape_tensor(self):
        return constant(self._block_shape, _dtypes.int32)

    @property
    def block_shape(self) -> TensorShape:
        return TensorShape(self._block_shape)

    def _size(self) -> int:
        return int(np.prod(self._block_shape))

    def _shape(self):
        n = self._size()
        return self._spectrum.shape[:-self._block_depth].concatenate([n, n])

    def _to_io(self, x):
        """A complex result in the operator's dtype (the real part for a real dtype)."""
        if self.dtype.is_complex:
            return cast(x, self.dtype)
        return cast(real(x), self.dtype)

    def _apply(self, x, spectrum):
        forward, inverse = _FFT[self._block_depth]
        complex_type = self._spectrum.dtype.base_dtype
        rows = matrix_transpose(cast(x, complex_type))  # [..., R, N]
        blocks = reshape(rows, concat([shape(rows)[:-1], self._block_shape], 0))
        spec = expand_dims(spectrum, -self._block_depth - 1)  # one spectrum for all R columns
        out = inverse(multiply(spec, forward(blocks)))
        # the spectrum's batch may have broadcast x's: flatten the block axes only
        flat = reshape(out, concat([shape(out)[:-self._block_depth], [self._size()]], 0))
        return self._to_io(matrix_transpose(flat))

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        return self._apply(x, conj(self._spectrum) if adjoint else self._spectrum)

    def _solve(self, rhs, adjoint):
        spec = reciprocal(self._spectrum)
        return self._apply(rhs, conj(spec) if adjoint else spec)

    def _axes(self):
        return list(range(-self._block_depth, 0))

    def _determinant(self):
        return self._to_io(reduce_prod(self._spectrum, self._axes()))

    def _log_abs_determinant(self):
        lad = reduce_sum(log(_abs(self._spectrum)), self._axes())
        return cast(lad, self.dtype)

    def _to_dense(self):
        return self._matmul(eye(self._size(), dtype=self.dtype), False, False)

    def _flat_spectrum(self):
        # [..., n1, ..., nd] -> [..., n1 * ... * nd], the eigenvalues in the operator's order
        spec = self._spectrum
        batch = shape(spec)[:-self._block_depth]
        return reshape(spec, concat([batch, [-1]], 0))

    def _eigvals(self):
        return self._flat_spectrum()

    def _cond(self):
        magnitude = _abs(self._flat_spectrum())
        return truediv(reduce_max(magnitude, -1), reduce_min(magnitude, -1))

    def _assert_non_singular(self):
        return assert_no_entries_with_modulus_zero(
            self._spectrum, message="Singular operator:  Spectrum contained zero values.")

    def _assert_positive_definite(self):
        return assert_positive(real(self._spectrum), message="Not positive definite:  Real "
                               "part of spectrum was not all positive.")

    def _assert_self_adjoint(self):
        return assert_zero_imag_part(self._spectrum, message="Not self-adjoint:  The "
                                     "spectrum contained non-zero imaginary part.")

    def assert_hermitian_spectrum(self, name: str = "assert_hermitian_spectrum"):
        """An op that fails when run unless the spectrum is Hermitian (``H[k] ==
        conj(H[-k])``), the condition for a real-valued operator."""
        eps = float(np.finfo(self.dtype.real_dtype.as_numpy_dtype).eps)
        with self._scope(name):
            # a linear accumulation of rounding error over the domain
            tolerance = eps * cast(self.domain_dimension_tensor(), self.dtype.real_dtype)
            return assert_less(_abs(imag(self.convolution_kernel())), tolerance,
                               message="Spectrum was not Hermitian")

    def convolution_kernel(self, name: str = "convolution_kernel"):
        """The first column of the matrix, shaped like the spectrum: the kernel ``h``
        with ``A x = h ⊛ x`` (circular convolution)."""
        with self._scope(name):
            return self._to_io(_FFT[self._block_depth][1](self._spectrum))

    def _with_spectrum(self, spectrum, suffix):
        return type(self)(spectrum, input_output_dtype=self.dtype,
                          is_non_singular=self.is_non_singular,
                          is_self_adjoint=self.is_self_adjoint,
                          is_positive_definite=self.is_positive_definite,
                          name=self.name + suffix)

    def _inverse_operator(self):
        return self._with_spectrum(reciprocal(self._spectrum), "_inv")

    def _adjoint_operator(self):
        return self._with_spectrum(conj(self._spectrum), "_adjoint")


class LinearOperatorCirculant(_BaseCirculant):
    """A circulant ``[N, N]`` operator from its spectrum ``[..., N]`` (the FFT of its
    first column); `input_output_dtype` is the dtype it takes and returns (complex64 by
    default; a real dtype keeps the real part, exact for a Hermitian spectrum).

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorCirculant(tf.constant([3., 0., 0.], tf.complex64),
    ...                                        input_output_dtype=tf.float32)
    >>> tf.Session().run(op.to_dense()).round(4).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    def __init__(self, spectrum, input_output_dtype=_dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant"):
        super().__init__(spectrum, 1, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorCirculant2D(_BaseCirculant):
    """A block-circulant operator with circulant blocks, from a spectrum ``[..., N0, N1]``
    (``fft2d``); the matrix is ``[N0 * N1, N0 * N1]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorCirculant2D(tf.ones([2, 2], tf.complex64))
    >>> op.shape.as_list()
    [4, 4]
    """

    def __init__(self, spectrum, input_output_dtype=_dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant2D"):
        super().__init__(spectrum, 2, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorCirculant3D(_BaseCirculant):
    """The 3-D form of `LinearOperatorCirculant2D`: spectrum ``[..., N0, N1, N2]``
    (``fft3d``), matrix ``[N0 * N1 * N2, N0 * N1 * N2]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorCirculant3D(tf.ones([2, 1, 2], tf.complex64))
    >>> op.shape.as_list()
    [4, 4]
    """

    def __init__(self, spectrum, input_output_dtype=_dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant3D"):
        super().__init__(spectrum, 3, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


class LinearOperatorToeplitz(LinearOperator):
    """A Toeplitz operator (constant along each diagonal) from its first column `col` and
    first row `row` (``[..., N]`` each; ``row[0]`` is ignored, the diagonal is ``col[0]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorToeplitz([1., 2., 3.], [1., 4., 5.])
    >>> tf.Session().run(op.to_dense())[0].tolist()
    [1.0, 4.0, 5.0]
    """

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        if is_square is False:
            raise ValueError("A Toeplitz operator is always square.")
        with name_scope(name, values=[col, row]):
            self._col = convert_to_tensor(col, name="col")
            self._row = convert_to_tensor(row, name="row", dtype=self._col.dtype.base_dtype)
        n = self._col.shape[-1].value if self._col.shape.ndims else None
        if n is None:
            raise ValueError(f"LinearOperatorToeplitz: col must be [..., N] with N known "
                             f"when the graph is built, got shape {self._col.shape}")
        self._n = n
        super().__init__(self._col.dtype, [self._col, self._row], is_non_singular,
                         is_self_adjoint, is_positive_definite, True, name)

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self):
        return self._col.shape.concatenate([self._n])

    def _assert_self_adjoint(self):
        return assert_equal(self._row, self._col, message="row and col are not the same, "
                            "and so this operator is not self-adjoint.")

    def _to_dense(self):
        n = self._n
        # values[k] for k = i - j + n - 1: the reversed row, then the column
        values = concat([reverse_v2(self._row[..., 1:], [-1]), self._col], -1)
        index = np.arange(n)[:, None] - np.arange(n)[None, :] + n - 1
        return gather(values, constant(index.astype(np.int32)), axis=-1)


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal operator from its diagonals, in any of `tf.linalg.tridiagonal_solve`'s
    formats ("compact" ``[..., 3, N]``, "sequence", "matrix").

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorTridiag([[1., 1., 0.], [4., 4., 4.], [0., 1., 1.]])
    >>> tf.Session().run(op.solvevec([5., 6., 5.])).round(4).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, diagonals, diagonals_format="compact", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        if is_square is False:
            raise ValueError("A tridiagonal operator is always square.")
        with name_scope(name, values=[diagonals]):
            self._compact = compact_diagonals(diagonals, diagonals_format,
                                     "LinearOperatorTridiag")
        self._diagonals = diagonals
        self._diagonals_format = diagonals_format
        super().__init__(self._compact.dtype, [self._compact], is_non_singular,
                         is_self_adjoint, is_positive_definite, True, name)

    @property
    def diagonals(self):
        return self._diagonals

    @property
    def diagonals_format(self) -> str:
        return self._diagonals_format

    def _shape(self):
        s = self._compact.shape
        if s.ndims is None:
            return s
        return s[:-2].concatenate([s[-1], s[-1]])

    def _oriented(self, adjoint):
        return adjoint_diagonals(self._compact) if adjoint else self._compact

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        return tridiagonal_matmul(self._oriented(adjoint), x)

    def _solve(self, rhs, adjoint):
        return tridiagonal_solve(self._oriented(adjoint), rhs)

    def _assert_self_adjoint(self):
        if self._diagonals_format == "matrix":
            dense = self._to_dense()
            return assert_equal(dense, _adjoint(dense),
                                message="Matrix was not equal to its adjoint.")
        compact = self._compact
        real_diagonal = assert_zero_imag_part(
            compact[..., 1, :], message="This tridiagonal operator contained non-zero "
            "imaginary values on the diagonal.")
        conjugate = assert_equal(
            conj(compact[..., 2, 1:]), compact[..., 0, :-1],
            message="This tridiagonal operator has non-conjugate subdiagonal and "
            "superdiagonal.")
        return group(real_diagonal, conjugate)

    def _diag_part(self):
        return self._compact[..., 1, :]

    def _to_dense(self):
        d = self._compact
        rank = d.shape.ndims
        if rank is None:
            raise ValueError("LinearOperatorTridiag.to_dense needs diagonals of known rank")
        batch = [[0, 0]] * (rank - 2)
        sup = pad(matrix_diag(d[..., 0, :-1]), [*batch, [0, 1], [1, 0]])
        sub = pad(matrix_diag(d[..., 2, 1:]), [*batch, [1, 0], [0, 1]])
        return matrix_diag(d[..., 1, :]) + sup + sub


class LinearOperatorHouseholder(LinearOperator):
    """The Householder reflection ``I - 2 v v^H / |v|^2`` across the hyperplane
    orthogonal to `reflection_axis` ``v`` ``[..., N]``: self-adjoint, its own inverse,
    determinant -1.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorHouseholder([1., 0.])
    >>> tf.Session().run(op.matvec([3., 4.])).tolist()
    [-3.0, 4.0]
    """

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorHouseholder"):
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        with name_scope(name, values=[reflection_axis]):
            self._axis = convert_to_tensor(reflection_axis, name="reflection_axis")
        super().__init__(self._axis.dtype, [self._axis], is_non_singular, True, False, True,
                         name)

    @property
    def reflection_axis(self):
        return self._axis

    def _shape(self):
        return self._axis.shape.concatenate(self._axis.shape[-1:])

    def _norm_sq(self):
        return reduce_sum(real(multiply(conj(self._axis), self._axis))
                          if self.dtype.is_complex else multiply(self._axis, self._axis), -1)

    def _matmul(self, x, adjoint, adjoint_arg):
        x = _adjoint(x) if adjoint_arg else x
        v = expand_dims(self._axis, -1)                       # [..., N, 1]
        projection = matmul(v, x, adjoint_a=True)             # [..., 1, R]
        scale = cast(2.0 / self._norm_sq(), self.dtype)
        scale = expand_dims(expand_dims(scale, -1), -1)
        return subtract(x, multiply(scale, multiply(v, projection)))

    def _solve(self, rhs, adjoint):
        return self._matmul(rhs, adjoint, False)

    def _determinant(self):
        return -ones(shape(self._axis)[:-1], dtype=self.dtype)

    def _log_abs_determinant(self):
        return zeros(shape(self._axis)[:-1], dtype=self.dtype.real_dtype)

    def _to_dense(self):
        n = self._axis.shape[-1].value
        ident = eye(n if n is not None else shape(self._axis)[-1], dtype=self.dtype)
        return self._matmul(ident, False, False)

    def _eigvals(self):
        # one eigenvalue -1 (the reflected axis), the others 1
        dims = shape(self._axis)
        minus = -ones(concat([dims[:-1], [1]], 0), dtype=self.dtype)
        return concat([minus, ones(concat([dims[:-1], [dims[-1] - 1]], 0),
                                   dtype=self.dtype)], -1)

    def _cond(self):
        return ones(shape(self._axis)[:-1], dtype=self.dtype)

    def _assert_non_singular(self):
        return no_op("assert_non_singular")

    def _assert_positive_definite(self):
        raise errors.InvalidArgumentError(
            None, None, "Householder operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return no_op("assert_self_adjoint")

    def _inverse_operator(self):
        return self

    def _adjoint_operator(self):
        return self


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix ``P`` with ``(P x)[i] = x[perm[i]]``, from an integer
    `perm` ``[..., N]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorPermutation([2, 0, 1])
    >>> tf.Session().run(op.matvec([1., 2., 3.])).tolist()
    [3.0, 1.0, 2.0]
    """

    def __init__(self, perm, dtype=_dtypes.float32, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorPermutation"):
        if is_non_singular is False:
            raise ValueError("A Permutation operator is always non-singular.")
        if is_square is False:
            raise ValueError("A Permutation operator is always square.")
        with name_scope(name, values=[perm]):
            self._perm = convert_to_tensor(perm, name="perm")
        if not self._perm.dtype.is_integer:
            raise TypeError(f"LinearOperatorPermutation: perm must be integer, got "
                            f"{self._perm.dtype.base_dtype.name}")
        super().__init__(dtype, [self._perm], is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name)

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        return self._perm.shape.concatenate(self._perm.shape[-1:])

    def _to_dense(self):
        n = self._perm.shape[-1].value
        return one_hot(self._perm, n if n is not None else shape(self._perm)[-1],
                       dtype=self.dtype)

    def _solve(self, rhs, adjoint):
        return matmul(self._to_dense(), rhs, adjoint_a=not adjoint)

    def _log_abs_determinant(self):
        return zeros(shape(self._perm)[:-1], dtype=self.dtype)

    def _cond(self):
        return ones(shape(self._perm)[:-1], dtype=self.dtype)

    def _assert_non_singular(self):
        return no_op("assert_non_singular")


class LinearOperatorZeros(LinearOperator):
    """The all-zeros ``[num_rows, num_columns]`` operator (a batch with `batch_shape`).

    Example
    -------
    >>> import flowgraph as tf
    >>> op = tf.linalg.LinearOperatorZeros(2)
    >>> tf.Session().run(op.matvec([1., 2.])).tolist()
    [0.0, 0.0]
    """

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        del assert_proper_shapes
        if is_non_singular:
            raise ValueError("A Zeros operator is always singular.")
        if is_positive_definite:
            raise ValueError("A Zeros operator is always not positive definite.")
        rows = int(num_rows)
        cols = rows if num_columns is None else int(num_columns)
        if rows < 0 or cols < 0:
            raise ValueError(f"LinearOperatorZeros: num_rows and num_columns must be "
                             f"non-negative, got {rows} and {cols}")
        if is_square and rows != cols:
            raise ValueError(f"LinearOperatorZeros initialized as is_square=True, but got "
                             f"num_rows({rows}) != num_columns({cols})")
        self._rows, self._cols = rows, cols
        self._batch = [int(d) for d in (batch_shape or [])]
        super().__init__(dtype or _dtypes.float32, [], False, is_self_adjoint, False,
                         is_square, name)

    def _shape(self):
        return TensorShape([*self._batch, self._rows, self._cols])

    def _to_dense(self):
        return zeros([*self._batch, self._rows, self._cols], dtype=self.dtype)

    def _matmul(self, x, adjoint, adjoint_arg):
        return matmul(self._to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _determinant(self):
        return zeros(self._batch, dtype=self.dtype)

    def _log_abs_determinant(self):
        return fill(self._batch, constant(-np.inf, self.dtype.real_dtype))

    def _diag_part(self):
        return zeros([*self._batch, min(self._rows, self._cols)], dtype=self.dtype)

    def _eigvals(self):
        return self._diag_part()

    def _assert_non_singular(self):
        raise errors.InvalidArgumentError(None, None,
                                          "Zero operators are always non-invertible.")

    def _assert_positive_definite(self):
        raise errors.InvalidArgumentError(None, None,
                                          "Zero operators are always non-positive definite.")

    def _assert_self_adjoint(self):
        return no_op("assert_self_adjoint")

    def add_to_tensor(self, x, name: str = "add_to_tensor"):
        """``x + 0``: `x` itself."""
        with self._scope(name, [x]):
            return convert_to_tensor(x, name="x", dtype=self.dtype)

