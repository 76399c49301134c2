# cython: language_level=3, boundscheck=False, wraparound=False
"""Row-major matrix products on SciPy's BLAS (sgemm/dgemm), without the GIL.

State it keeps
--------------
None: every call validates its operands, allocates (or checks) the output and makes one
BLAS call with the GIL released, so concurrent MatMul kernels overlap on the cores.

The trick
---------
BLAS is column-major; NumPy arrays here are row-major (C order). A row-major ``M x N``
buffer read column-major is the ``N x M`` transpose, so the row-major product
``C = op(A) . op(B)`` is the column-major product ``C^T = op(B)^T . op(A)^T``: pass `B`
first, `A` second, swap `M` and `N`, and keep each operand's transpose flag. No operand
is copied when it is C-contiguous; a Fortran-contiguous operand is passed as its
(C-contiguous) transpose with the flag flipped; anything else is copied once::

    row-major view            what BLAS is told (column-major)
    C[M,N] = A[M,K] B[K,N]    gemm('N', 'N', m=N, n=M, k=K, B, ldb=N, A, lda=K, C, ldc=N)
    C[M,N] = A[K,M]^T B[K,N]  gemm('N', 'T', m=N, n=M, k=K, B, ldb=N, A, lda=M, C, ldc=N)

Invariants
----------
* Inputs are never written; `gemm` returns a C-contiguous array that nobody else
  references (new, or recycled by `_buffers.empty`).
* Dimensions beyond the 32-bit BLAS integer range fall back to `numpy.matmul`.
* Errors (ranks, dtypes, inner dimensions) are raised before the GIL is released.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._blas import gemm
>>> gemm(np.ones((2, 3)), np.ones((4, 3)), False, True).shape
(2, 4)
"""

cimport numpy as cnp
from cython cimport floating
from scipy.linalg.cython_blas cimport dgemm, sgemm

import numpy as np

try:  # outputs are recycled once unreferenced (no page faults per step); see _buffers.pyx
    from flowgraph.backends.cpu._buffers import empty as _empty
except ImportError:  # pragma: no cover - extension not built yet
    def _empty(shape, dtype):
        return np.empty(shape, dtype)

cnp.import_array()

cdef Py_ssize_t _BLAS_INT_MAX = 2147483647


cdef void _gemm(floating* a, floating* b, floating* c, int m, int n, int k,
                bint trans_a, bint trans_b, int lda, int ldb,
                floating alpha, floating beta) noexcept nogil:
    """Row-major ``c[m, n] = alpha * op(a) . op(b) + beta * c`` via column-major BLAS."""
    cdef char trans_x = b"T" if trans_b else b"N"
    cdef char trans_y = b"T" if trans_a else b"N"
    cdef int ldc = n if n > 1 else 1
    if floating is float:
        sgemm(&trans_x, &trans_y, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc)
    else:
        dgemm(&trans_x, &trans_y, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc)


def _operand(x, which):
    """(C-contiguous aligned 2-D array, flipped): `flipped` means the array is ``x.T``."""
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"gemm: input {which} must be a matrix (rank 2), got shape "
                         f"{x.shape}")
    if x.dtype.kind != "f" or x.dtype.itemsize not in (4, 8):
        raise TypeError(f"gemm: input {which} must be float32 or float64, got {x.dtype}")
    if x.flags.c_contiguous and x.flags.aligned and x.dtype.isnative:
        return x, False
    if x.flags.f_contiguous and x.flags.aligned and x.dtype.isnative:
        return x.T, True
    return np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("=")), False


def _plan(a, b, bint transpose_a, bint transpose_b):
    """Validate operands; return (a, b, trans_a, trans_b, m, n, k) for the BLAS call."""
    a2, flip_a = _operand(a, "a")
    b2, flip_b = _operand(b, "b")
    if a2.dtype != b2.dtype:
        raise TypeError(f"gemm: inputs must have one dtype, got {a2.dtype} and {b2.dtype}")
    cdef bint ta = transpose_a != flip_a
    cdef bint tb = transpose_b != flip_b
    m, k = (a2.shape[1], a2.shape[0]) if ta else (a2.shape[0], a2.shape[1])
    k2, n = (b2.shape[1], b2.shape[0]) if tb else (b2.shape[0], b2.shape[1])
    if k != k2:
        shape_a = np.shape(a)
        shape_b = np.shape(b)
        raise ValueError(
            f"Matrix size-incompatible: In[0]: {list(shape_a)}, In[1]: {list(shape_b)} "
            f"(transpose_a={bool(transpose_a)}, transpose_b={bool(transpose_b)}): inner "
            f"dimensions differ ({k} vs {k2})"
        )
    return a2, b2, ta, tb, m, n, k


cdef _run(cnp.ndarray a, cnp.ndarray b, cnp.ndarray out, bint ta, bint tb,
          Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, double alpha, double beta):
    cdef int im = <int>m
    cdef int in_ = <int>n
    cdef int ik = <int>k
    cdef int lda = <int>max(1, a.shape[1])
    cdef int ldb = <int>max(1, b.shape[1])
    cdef float* fa
    cdef float* fb
    cdef float* fc
    cdef double* da
    cdef double* db
    cdef double* dc
    if a.dtype == np.float32:
        fa = <float*>cnp.PyArray_DATA(a)
        fb = <float*>cnp.PyArray_DATA(b)
        fc = <float*>cnp.PyArray_DATA(out)
        with nogil:
            _gemm(fa, fb, fc, im, in_, ik, ta, tb, lda, ldb, <float>alpha, <float>beta)
    else:
        da = <double*>cnp.PyArray_DATA(a)
        db = <double*>cnp.PyArray_DATA(b)
        dc = <double*>cnp.PyArray_DATA(out)
        with nogil:
            _gemm(da, db, dc, im, in_, ik, ta, tb, lda, ldb, alpha, beta)


def _fits_blas(m, n, k, a, b):
    return max(m, n, k, a.shape[1], b.shape[1]) <= _BLAS_INT_MAX


def gemm(a, b, bint transpose_a=False, bint transpose_b=False):
    """``op(a) @ op(b)`` for 2-D float32/float64 arrays, as a new C-contiguous array.

    `op` transposes when the flag is set. Runs one BLAS call with the GIL released.

    Example
    -------
    >>> import numpy as np
    >>> gemm(np.ones((3, 2), np.float32), np.ones((3, 4), np.float32), True).shape
    (2, 4)
    """
    a2, b2, ta, tb, m, n, k = _plan(a, b, transpose_a, transpose_b)
    out = _empty((m, n), a2.dtype)
    if m == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    if not _fits_blas(m, n, k, a2, b2):
        return np.ascontiguousarray(np.matmul(a2.T if ta else a2, b2.T if tb else b2))
    _run(a2, b2, out, ta, tb, m, n, k, 1.0, 0.0)
    return out


def gemm_into(a, b, out, bint transpose_a=False, bint transpose_b=False,
              double alpha=1.0, double beta=0.0):
    """``out[...] = alpha * op(a) @ op(b) + beta * out``; returns `out`.

    `out` must be a writeable C-contiguous array of the result's shape and the inputs'
    dtype that shares no memory with `a` or `b`.

    Example
    -------
    >>> import numpy as np
    >>> out = np.empty((2, 4))
    >>> float(gemm_into(np.ones((2, 3)), np.ones((3, 4)), out)[0, 0])
    3.0
    """
    a2, b2, ta, tb, m, n, k = _plan(a, b, transpose_a, transpose_b)
    if not isinstance(out, np.ndarray) or out.dtype != a2.dtype or \
            tuple(out.shape) != (m, n):
        got = (f"{out.dtype} {tuple(out.shape)}" if isinstance(out, np.ndarray)
               else type(out).__name__)
        raise ValueError(f"gemm_into: out must be a {a2.dtype} array of shape {(m, n)}, "
                         f"got {got}")
    if not (out.flags.c_contiguous and out.flags.writeable and out.flags.aligned
            and out.dtype.isnative):
        raise ValueError("gemm_into: out must be writeable, aligned and C-contiguous")
    if np.may_share_memory(out, a2) or np.may_share_memory(out, b2):
        raise ValueError("gemm_into: out must not share memory with the inputs")
    if m == 0 or n == 0:
        return out
    if k == 0 or not _fits_blas(m, n, k, a2, b2):
        prod = (np.matmul(a2.T if ta else a2, b2.T if tb else b2) if k
                else np.zeros((m, n), a2.dtype))
        if beta == 0.0:
            np.multiply(prod, alpha, out=out, casting="unsafe")
        else:
            out *= beta
            out += alpha * prod
        return out
    _run(a2, b2, out, ta, tb, m, n, k, alpha, beta)
    return out
