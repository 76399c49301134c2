"""CPU kernels for elementwise math, casts and matrix products (NumPy, SciPy).

Every kernel returns an `np.ndarray` of exactly the dtype its op declares (0-d results
included) and never writes to its inputs. Floating-point warnings are silenced, as
TensorFlow computes inf/nan without complaint; integer division by zero is an error,
as in TensorFlow. SciPy (`erf`, `sigmoid`) is imported on first use only.
"""

from __future__ import annotations

import functools

import numpy as np

from flowgraph.backends.cpu import cpu_kernel, kernel_pool
from flowgraph.backends.cpu.blas_threads import products_split
from flowgraph.framework.errors import InternalError, InvalidArgumentError, UnimplementedError

try:  # recycled output arrays (Cython); fresh ones otherwise
    from flowgraph.backends.cpu._buffers import empty as _empty
except ImportError:  # pragma: no cover - extension not built yet
    _empty = None


def _quiet(fn):
    """Wrap a NumPy function: an ndarray result, no floating-point warnings.

    `np.errstate` costs about a microsecond, so only floating inputs pay for it.
    """

    def kernel(*args):
        if args[0].dtype.kind in "fc":
            with np.errstate(all="ignore"):
                return np.asarray(fn(*args))
        return np.asarray(fn(*args))

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


@functools.cache
def _special():
    import scipy.special

    return scipy.special


# Dtypes TensorFlow's ops accept but its CPU kernels do not: such a graph builds and its
# run fails with "no kernel" (InvalidArgumentError), as in TensorFlow.
_F = (np.float16, np.float32, np.float64)
_FC = (*_F, np.complex64, np.complex128)
_REAL = (*_F, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
         np.uint64)

# -- unary --------------------------------------------------------------------------------
cpu_kernel("Reciprocal", dtypes=_FC)(np.reciprocal)
cpu_kernel("Round", dtypes=_REAL)(np.round)
for _op, _fn in {
    "Square": np.square, "Sqrt": np.sqrt, "Exp": np.exp,
    "Expm1": np.expm1, "Log": np.log, "Log1p": np.log1p, "Tanh": np.tanh, "Sin": np.sin,
    "Cos": np.cos, "Tan": np.tan, "ComplexAbs": np.abs,
}.items():
    cpu_kernel(_op)(_fn)  # the executor silences floating-point warnings per step
for _op, _fn in {
    "Neg": np.negative, "Sign": np.sign, "Floor": np.floor, "Ceil": np.ceil,
    "IsNan": np.isnan, "IsInf": np.isinf, "IsFinite": np.isfinite,
    "LogicalNot": np.logical_not, "Abs": np.abs, "Conj": np.conj,
}.items():
    cpu_kernel(_op)(_fn)


@cpu_kernel("Rsqrt")
@_quiet
def rsqrt(x):
    return np.reciprocal(np.sqrt(x))


@cpu_kernel("Sigmoid")
def sigmoid(x):
    if x.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return np.asarray(1 / (1 + np.exp(-x)))
    return np.asarray(_special().expit(x), dtype=x.dtype)


@cpu_kernel("Erf")
def erf(x):
    return np.asarray(_special().erf(x), dtype=x.dtype)


# -- binary -------------------------------------------------------------------------------
# Plain ufuncs (the executor silences floating-point warnings once per step; on 0-d inputs
# they return NumPy scalars, which the executor passes on). np.add also concatenates
# string tensors (object arrays of bytes).
for _op, _fn in {
    "Add": np.add, "AddV2": np.add, "Sub": np.subtract, "Mul": np.multiply,
    "Pow": np.power,
}.items():
    cpu_kernel(_op)(_fn)
cpu_kernel("RealDiv", dtypes=_FC)(np.true_divide)
for _op, _fn in {
    "Maximum": np.maximum, "Minimum": np.minimum, "Equal": np.equal,
    "NotEqual": np.not_equal, "Less": np.less, "LessEqual": np.less_equal,
    "Greater": np.greater, "GreaterEqual": np.greater_equal, "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or,
}.items():
    cpu_kernel(_op)(_fn)


@cpu_kernel("DivNoNan")
def div_no_nan(x, y):
    q = np.true_divide(x, y)
    zero = np.equal(y, 0)
    return np.where(zero, q.dtype.type(0), q) if np.any(zero) else q


@cpu_kernel("SquaredDifference")
@_quiet
def squared_difference(x, y):
    d = np.subtract(x, y)
    return d * np.conj(d) if d.dtype.kind == "c" else np.square(d)


def _check_divisor(y, error=InvalidArgumentError):
    if y.dtype.kind in "iu" and not np.all(y):
        raise error(None, None, "Integer division by zero")


@cpu_kernel("FloorDiv", dtypes=_REAL)
@_quiet
def floor_div(x, y):
    _check_divisor(y)
    if x.dtype.kind == "f":
        return np.floor(np.true_divide(x, y))
    return np.floor_divide(x, y)


@cpu_kernel("FloorMod")
@_quiet
def floor_mod(x, y):
    _check_divisor(y)
    return np.mod(x, y)


@cpu_kernel("TruncateDiv", dtypes=_REAL)
@_quiet
def truncate_div(x, y):
    _check_divisor(y, InternalError)  # TensorFlow's truncating kernels report INTERNAL
    if x.dtype.kind == "f":
        return np.trunc(np.true_divide(x, y))
    return np.floor_divide(np.subtract(x, np.fmod(x, y)), y)


@cpu_kernel("TruncateMod", dtypes=(np.float32, np.float64, np.int32, np.int64))
@_quiet
def truncate_mod(x, y):
    _check_divisor(y, InternalError)  # TensorFlow's truncating kernels report INTERNAL
    return np.fmod(x, y)


# -- casts --------------------------------------------------------------------------------
@cpu_kernel("Cast")
def cast(x, *, DstT):
    dst = np.dtype(DstT.as_numpy_dtype)
    if (x.dtype.kind in "OSU") != (dst.kind in "OSU"):  # TensorFlow builds it, fails to run it
        raise UnimplementedError(
            None, None, f"Cast {x.dtype.name if x.dtype.kind not in 'OSU' else 'string'} to "
            f"{DstT.name} is not supported; use tf.strings.to_number / tf.as_string")
    if x.dtype == np.float16 and dst == np.uint16:
        # TensorFlow's half -> uint16 conversion gives 0 for negatives and infinities
        x = np.where((x < 0) | ~np.isfinite(x), x.dtype.type(0), x)
    if x.dtype.kind == "c" and dst.kind != "c":
        x = x.real
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dst)


# -- matrix products ----------------------------------------------------------------------
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _adjoint(x, adjoint: bool):
    if not adjoint:
        return x
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if x.dtype.kind == "c" else x


def _check_matrices(a, b, ta: bool, tb: bool, rank2: bool):
    if rank2 and (a.ndim != 2 or b.ndim != 2):
        raise ValueError(f"In[0] and In[1] must be matrices: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)}")
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"In[0] and In[1] must have rank >= 2: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)}")
    k1 = a.shape[-2] if ta else a.shape[-1]
    k2 = b.shape[-1] if tb else b.shape[-2]
    if k1 != k2:
        raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
                         f"{list(b.shape)} (inner dimensions {k1} vs {k2})")


def _blas_operand(x: np.ndarray) -> np.ndarray:
    """`x` if BLAS can read it in place (one unit stride), else a C-contiguous copy."""
    if x.flags.c_contiguous or x.flags.f_contiguous:
        return x
    return np.ascontiguousarray(x)


def matmul_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[...] = a @ b`` for 2-D float matrices (transposed views welcome); returns `out`.

    Every matrix product of the CPU backend goes through NumPy's matmul, so the process
    has one BLAS and one BLAS thread pool: a second OpenBLAS copy (SciPy's) would spin
    its idle workers on the cores NumPy's workers need, halving both (measured on the MLP
    benchmark). NumPy's matmul releases the GIL and passes transposed views to BLAS as
    transpose flags, without copying.

    >>> import numpy as np
    >>> matmul_into(np.ones((2, 3)), np.ones((4, 3)).T, np.empty((2, 4)))[0, 0]
    3.0
    """
    a, b = _blas_operand(a), _blas_operand(b)
    if products_split() and _split_matmul(a, b, out):
        return out
    return np.matmul(a, b, out=out)


# A product split across the kernel threads (`blas_threads.products_split`: other
# processes keep the cores busy) has at least this many floating-point operations, and
# parts of at least `_SPLIT_ROWS` rows, about four per thread so that a thread that gets
# less of its core runs fewer of them.
_SPLIT_MIN_FLOPS = 16e6
_SPLIT_ROWS = 16


def _split_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
    """``out[...] = a @ b`` in row blocks claimed by the kernel threads, each on the one
    BLAS thread the step runs with; False (nothing done) for a small product or one
    kernel thread. Not bitwise the unsplit product: OpenBLAS's sums already change with
    its thread count and a call's row count; both stay within a float32 product's error
    bound (tests/backends/test_matmul_split.py)."""
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    if 2.0 * m * k * n < _SPLIT_MIN_FLOPS or m < 2 * _SPLIT_ROWS:
        return False
    parts = max(2, min(4 * kernel_pool.threads(), m // _SPLIT_ROWS))
    bounds = [m * i // parts for i in range(parts + 1)]

    def part(i: int) -> None:
        lo, hi = bounds[i], bounds[i + 1]
        np.matmul(a[lo:hi], b, out=out[lo:hi])

    return kernel_pool.claim_items(parts, part)


@cpu_kernel("MatMul", fresh=True)
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    _check_matrices(a, b, transpose_a, transpose_b, rank2=True)
    x = a.T if transpose_a else a
    y = b.T if transpose_b else b
    if _empty is not None and a.dtype in _BLAS_DTYPES and a.dtype == b.dtype:
        return matmul_into(x, y, _empty((x.shape[0], y.shape[1]), a.dtype))
    return np.asarray(np.matmul(x, y))


def _batch_matmul(a, b, adj_x, adj_y, broadcast: bool):
    _check_matrices(a, b, adj_x, adj_y, rank2=False)
    if not broadcast and a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"In[0] and In[1] must have the same batch dimensions: "
                         f"{list(a.shape)} vs {list(b.shape)}")
    if a.ndim == 2 and b.ndim == 2:
        return matmul(_adjoint(a, adj_x), _adjoint(b, adj_y))
    try:
        return np.asarray(np.matmul(_adjoint(a, adj_x), _adjoint(b, adj_y)))
    except ValueError as e:
        raise ValueError(f"In[0] and In[1] batch dimensions do not broadcast: "
                         f"{list(a.shape)} vs {list(b.shape)} ({e})") from None


@cpu_kernel("BatchMatMulV2")
def batch_matmul_v2(a, b, *, adj_x=False, adj_y=False):
    return _batch_matmul(a, b, adj_x, adj_y, broadcast=True)


@cpu_kernel("BatchMatMul")
def batch_matmul(a, b, *, adj_x=False, adj_y=False):
    return _batch_matmul(a, b, adj_x, adj_y, broadcast=False)


@cpu_kernel("Tensordot")
def tensordot(a, b, *, axes):
    if isinstance(axes, int):
        if axes > a.ndim or axes > b.ndim:
            raise ValueError(f"tensordot: axes={axes} exceeds the rank of a {list(a.shape)} "
                             f"or b {list(b.shape)}")
    else:
        axes = (list(axes[0]), list(axes[1]))
    try:
        return np.asarray(np.tensordot(a, b, axes=axes))
    except (ValueError, IndexError) as e:
        raise ValueError(f"tensordot of a {list(a.shape)} and b {list(b.shape)} over axes "
                         f"{axes}: {e}") from None


@cpu_kernel("Einsum")
def einsum(*inputs, equation):
    return np.asarray(np.einsum(equation, *inputs, optimize=len(inputs) > 1))
