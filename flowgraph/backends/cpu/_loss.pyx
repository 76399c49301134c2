# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -fno-math-errno
"""Softmax cross-entropy rows (sparse and dense labels), one pass over memory, nogil.

State it keeps
--------------
None. Each function takes a C-contiguous 2-D float32/float64 `features` array (the
logits) and its labels, writes ``loss[B]`` and ``backprop[B, C]`` with the GIL released
into two new arrays that nobody else references, and never writes to its inputs. The
only scratch is two arrays of `BLOCK_ROWS` entries on the C stack.

The per-row arithmetic
----------------------
Each row ``x`` is shifted by its maximum ``m``, so that every exponent is <= 0 (no
overflow: logits of +-1e4 give finite results, and the dominant class gets a loss of +0,
``log(1) - 0``)::

    x        = [1.0, 3.0, 2.0]                 label = 2
    m        = 3.0
    e        = exp(x - m) = [0.135, 1.0, 0.368]       s = sum(e) = 1.503   (in double)
    loss     = log(s) - (x[label] - m)          = 0.408 + 1.0 = 1.408
    backprop = e / s - onehot(label)            = [0.090, 0.665, -0.755]

One ``exp`` per element and one ``log`` per row; NumPy's version of the same makes ~15
passes and as many temporaries. With dense labels ``y`` the loss is
``sum(y[j] * (log(s) - (x[j] - m)))`` over the classes with ``y[j] != 0`` (a class with
probability 0 contributes 0 even where the log-softmax is -inf, as in TF), and
``backprop = e / s - y``. A NaN or +inf logit, or a row of -inf only, makes its whole row
NaN, as in the NumPy path; a -inf next to finite logits has probability 0.

The one-pass invariant
----------------------
Rows are taken in blocks of about `BLOCK_ITEMS` entries (at least one row, at most
`BLOCK_ROWS` rows), small enough to stay in the L1 cache, so `features` is read from
memory once and `backprop` written once. Within a block::

    rows of x --(max, subtract)--> backprop block = x - m    (per row)
    backprop block --exp-->        backprop block = e        (one flat loop, all rows)
    backprop block --(sum, log, scale, -1 at the label)--> loss, backprop   (per row)

The flat middle loop is the point of the blocks: with 10 classes, per-row loops are too
short to vectorize or to hide the latency of the exp, while one loop over a block of 64
rows (640 entries) is neither. For float32 the exp is `_expf` below (a polynomial GCC
vectorizes, within 2 ulp of the exact value); for float64 it is libm's ``exp``.

Errors
------
Sparse labels are checked against ``[0, C)`` inside ``nogil`` before anything is
written; a bad label makes `sparse_xent` return None, and the caller
(`kernels_nn_loss.py`) raises the error with the same message as its NumPy path.
Arrays of another dtype, rank or layout raise TypeError or ValueError here: the caller
sends those to its NumPy path instead.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._loss import sparse_xent
>>> loss, backprop = sparse_xent(np.array([[0.0, 0.0]]), np.array([1]))
>>> loss, backprop
(array([0.69314718]), array([[ 0.5, -0.5]]))
>>> sparse_xent(np.array([[0.0, 0.0]]), np.array([2])) is None   # label out of range
True
"""

cimport numpy as cnp
from cython cimport floating
from libc.math cimport exp, log
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

cnp.import_array()

ctypedef fused index_t:
    cnp.int32_t
    cnp.int64_t

cdef enum:
    BLOCK_ITEMS = 2048  # entries per block of rows (8 KB of float32): stays in L1
    BLOCK_ROWS = 64     # rows per block, at most (the size of the per-block scratch)


cdef inline float _pow2(int k) noexcept nogil:
    """``2**k`` for ``-126 <= k <= 127``, built from its bits."""
    cdef uint32_t bits = <uint32_t>(k + 127) << 23
    cdef float f
    memcpy(&f, &bits, sizeof(f))
    return f


cdef inline float _expf(float x) noexcept nogil:
    """``exp(x)`` for ``-110 <= x <= 0`` or NaN, within 2 ulp, in a form GCC vectorizes.

    ``x = k ln2 + r`` with k = round(x / ln2) and ``|r| <= ln2 / 2``. Adding 1.5 * 2**23
    rounds ``x / ln2`` to an integer (no libm call, no float-to-int conversion) and leaves
    ``k + 2**22`` in the low mantissa bits of the sum. ``exp(r)`` is its Taylor polynomial
    of degree 7 (truncation error < 6e-9), and ``2**k`` is applied as
    ``2**(k >> 1) * 2**(k - (k >> 1))``, both normal floats, so that results below 2**-126
    round once into the subnormals, as libm's do. A NaN gives a NaN ``r``, hence NaN.
    """
    cdef float shift = 12582912.0
    cdef float t = x * <float>1.4426950408889634 + shift
    cdef float kf = t - shift
    cdef uint32_t bits
    memcpy(&bits, &t, sizeof(bits))
    cdef int k = <int>(bits & 0x7FFFFF) - 0x400000
    cdef int half = k >> 1
    cdef float r = (x - kf * <float>0.693359375) - kf * <float>-2.1219444005469057e-4
    cdef float p = <float>(1 / 5040.0)
    p = p * r + <float>(1 / 720.0)
    p = p * r + <float>(1 / 120.0)
    p = p * r + <float>(1 / 24.0)
    p = p * r + <float>(1 / 6.0)
    p = p * r + <float>0.5
    p = p * r + 1
    p = p * r + 1
    return p * _pow2(half) * _pow2(k - half)


cdef inline floating _row_max(const floating* x, Py_ssize_t c) noexcept nogil:
    """The maximum of the `c` >= 1 entries of a row (four running maxima: no long chain).

    A NaN may be skipped here, but it makes the row's sum of exps NaN, so the whole row
    comes out NaN either way (as in NumPy, where the maximum itself is NaN)."""
    cdef floating m0 = x[0]
    cdef floating m1 = x[0]
    cdef floating m2 = x[0]
    cdef floating m3 = x[0]
    cdef Py_ssize_t j = 1
    while j + 4 <= c:
        m0 = x[j] if x[j] > m0 else m0
        m1 = x[j + 1] if x[j + 1] > m1 else m1
        m2 = x[j + 2] if x[j + 2] > m2 else m2
        m3 = x[j + 3] if x[j + 3] > m3 else m3
        j += 4
    while j < c:
        m0 = x[j] if x[j] > m0 else m0
        j += 1
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


cdef inline double _row_sum(const floating* e, Py_ssize_t c) noexcept nogil:
    """The sum of the `c` entries of a row, in double (four running sums)."""
    cdef double s0 = 0, s1 = 0, s2 = 0, s3 = 0
    cdef Py_ssize_t j = 0
    while j + 4 <= c:
        s0 += e[j]
        s1 += e[j + 1]
        s2 += e[j + 2]
        s3 += e[j + 3]
        j += 4
    while j < c:
        s0 += e[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _exps(floating* z, Py_ssize_t size) noexcept nogil:
    """``z[j] = exp(z[j])`` over a block (one long loop: vectorized for float32)."""
    cdef Py_ssize_t j
    if floating is float:
        for j in range(size):
            z[j] = _expf(z[j])
    else:
        for j in range(size):
            z[j] = exp(z[j])


cdef void _softmax_block(const floating* x, floating* e, floating* maxes, double* sums,
                         Py_ssize_t rows, Py_ssize_t c) noexcept nogil:
    """For `rows` rows of `c` >= 1 columns: ``maxes[r]`` = row maximum,
    ``e = exp(x - maxes[r])`` and ``sums[r]`` = its row sum."""
    cdef Py_ssize_t r, j
    cdef floating m, v
    cdef const floating* row
    cdef floating* out
    for r in range(rows):
        row = x + r * c
        out = e + r * c
        m = _row_max(row, c)
        maxes[r] = m
        if floating is float:
            for j in range(c):  # exp(-110) is 0 in float32; -inf becomes -110
                v = row[j] - m
                out[j] = -110 if -110 > v else v
        else:
            for j in range(c):
                out[j] = row[j] - m
    _exps(e, rows * c)
    for r in range(rows):
        sums[r] = _row_sum(e + r * c, c)


cdef inline Py_ssize_t _block_rows(Py_ssize_t c) noexcept nogil:
    """Rows per block: about `BLOCK_ITEMS` entries, at least 1 and at most `BLOCK_ROWS`."""
    if c >= BLOCK_ITEMS:
        return 1
    return min(<Py_ssize_t>BLOCK_ROWS, BLOCK_ITEMS // c)


cdef Py_ssize_t _sparse_rows(const floating* x, const index_t* labels, floating* loss,
                             floating* bp, Py_ssize_t n, Py_ssize_t c) noexcept nogil:
    """Fill `loss` [n] and `bp` [n, c]; return -1, or the first row whose label is
    outside ``[0, c)`` (then nothing is written)."""
    cdef Py_ssize_t i, i0, r, rows, block, j
    cdef index_t k
    cdef floating inv
    cdef floating maxes[BLOCK_ROWS]
    cdef double sums[BLOCK_ROWS]
    cdef floating* out
    for i in range(n):
        if labels[i] < 0 or labels[i] >= c:
            return i
    if n == 0:
        return -1
    block = _block_rows(c)
    i0 = 0
    while i0 < n:
        rows = min(block, n - i0)
        _softmax_block(x + i0 * c, bp + i0 * c, maxes, sums, rows, c)
        for r in range(rows):
            i = i0 + r
            k = labels[i]
            out = bp + i * c
            loss[i] = <floating>log(sums[r]) - (x[i * c + k] - maxes[r])
            inv = <floating>(1.0 / sums[r])
            for j in range(c):
                out[j] = out[j] * inv
            out[k] -= 1
        i0 += rows
    return -1


cdef void _dense_rows(const floating* x, const floating* labels, floating* loss,
                      floating* bp, Py_ssize_t n, Py_ssize_t c) noexcept nogil:
    """Fill `loss` [n] and `bp` [n, c] from probability labels [n, c]."""
    cdef Py_ssize_t i, i0, r, rows, block, j
    cdef floating m, inv, lse, lab
    cdef double acc
    cdef floating maxes[BLOCK_ROWS]
    cdef double sums[BLOCK_ROWS]
    cdef const floating* row
    cdef const floating* y
    cdef floating* out
    if c == 0:  # no classes: a loss of 0 per row, an empty backprop
        for i in range(n):
            loss[i] = 0
        return
    block = _block_rows(c)
    i0 = 0
    while i0 < n:
        rows = min(block, n - i0)
        _softmax_block(x + i0 * c, bp + i0 * c, maxes, sums, rows, c)
        for r in range(rows):
            i = i0 + r
            row = x + i * c
            y = labels + i * c
            out = bp + i * c
            m = maxes[r]
            lse = <floating>log(sums[r])
            inv = <floating>(1.0 / sums[r])
            acc = 0
            for j in range(c):
                lab = y[j]
                if lab != 0:  # 0 * log(0) contributes 0 (NaN labels still propagate)
                    acc += lab * (lse - (row[j] - m))
                out[j] = out[j] * inv - lab
            loss[i] = <floating>acc
        i0 += rows


cdef inline bint _is_float_matrix(cnp.ndarray a) noexcept:
    cdef int t = cnp.PyArray_TYPE(a)
    return (cnp.PyArray_NDIM(a) == 2 and (t == cnp.NPY_FLOAT or t == cnp.NPY_DOUBLE)
            and cnp.PyArray_ISCARRAY_RO(a) and cnp.PyArray_ISNOTSWAPPED(a))


cdef inline int _index_width(cnp.ndarray a) noexcept:
    """4 or 8 for a contiguous native signed-integer vector of that width, else 0."""
    if (cnp.PyArray_NDIM(a) == 1 and cnp.PyArray_ISINTEGER(a) and cnp.PyArray_ISSIGNED(a)
            and cnp.PyArray_ISCARRAY_RO(a) and cnp.PyArray_ISNOTSWAPPED(a)):
        if cnp.PyArray_ITEMSIZE(a) == 4 or cnp.PyArray_ITEMSIZE(a) == 8:
            return cnp.PyArray_ITEMSIZE(a)
    return 0


cdef tuple _outputs(cnp.ndarray features):
    """New ``(loss [n], backprop [n, c])`` of the dtype of `features`."""
    cdef int t = cnp.PyArray_TYPE(features)
    cdef cnp.npy_intp dims[2]
    dims[0] = cnp.PyArray_DIM(features, 0)
    dims[1] = cnp.PyArray_DIM(features, 1)
    return cnp.PyArray_EMPTY(1, dims, t, 0), cnp.PyArray_EMPTY(2, dims, t, 0)


def sparse_xent(cnp.ndarray features, cnp.ndarray labels):
    """``(loss [B], backprop [B, C])`` of `features` [B, C] (C-contiguous float32/float64)
    and `labels` [B] (C-contiguous int32/int64), or None if a label is outside
    ``[0, C)``."""
    if not _is_float_matrix(features):
        raise TypeError("features must be a C-contiguous 2-D float32/float64 array")
    cdef int width = _index_width(labels)
    if width == 0:
        raise TypeError("labels must be a C-contiguous 1-D int32/int64 array")
    cdef Py_ssize_t n = cnp.PyArray_DIM(features, 0)
    cdef Py_ssize_t c = cnp.PyArray_DIM(features, 1)
    if cnp.PyArray_DIM(labels, 0) != n:
        raise ValueError(f"labels has {cnp.PyArray_DIM(labels, 0)} entries for {n} rows")
    cdef cnp.ndarray loss, backprop
    loss, backprop = _outputs(features)
    cdef void* x = cnp.PyArray_DATA(features)
    cdef void* y = cnp.PyArray_DATA(labels)
    cdef void* pl = cnp.PyArray_DATA(loss)
    cdef void* pb = cnp.PyArray_DATA(backprop)
    cdef Py_ssize_t bad
    cdef bint single = cnp.PyArray_TYPE(features) == cnp.NPY_FLOAT
    with nogil:
        if single and width == 4:
            bad = _sparse_rows(<const float*>x, <const cnp.int32_t*>y, <float*>pl, <float*>pb,
                               n, c)
        elif single:
            bad = _sparse_rows(<const float*>x, <const cnp.int64_t*>y, <float*>pl, <float*>pb,
                               n, c)
        elif width == 4:
            bad = _sparse_rows(<const double*>x, <const cnp.int32_t*>y, <double*>pl,
                               <double*>pb, n, c)
        else:
            bad = _sparse_rows(<const double*>x, <const cnp.int64_t*>y, <double*>pl,
                               <double*>pb, n, c)
    if bad >= 0:
        return None
    return loss, backprop


def dense_xent(cnp.ndarray features, cnp.ndarray labels):
    """``(loss [B], backprop [B, C])`` of `features` and probability `labels`, both
    [B, C], C-contiguous and of one dtype (float32/float64)."""
    if not _is_float_matrix(features) or not _is_float_matrix(labels):
        raise TypeError("features and labels must be C-contiguous 2-D float32/float64 arrays")
    if cnp.PyArray_TYPE(features) != cnp.PyArray_TYPE(labels):
        raise TypeError("features and labels must have the same dtype")
    cdef Py_ssize_t n = cnp.PyArray_DIM(features, 0)
    cdef Py_ssize_t c = cnp.PyArray_DIM(features, 1)
    if cnp.PyArray_DIM(labels, 0) != n or cnp.PyArray_DIM(labels, 1) != c:
        raise ValueError(f"labels has shape {(<object>labels).shape}, features "
                         f"{(<object>features).shape}")
    cdef cnp.ndarray loss, backprop
    loss, backprop = _outputs(features)
    cdef void* x = cnp.PyArray_DATA(features)
    cdef void* y = cnp.PyArray_DATA(labels)
    cdef void* pl = cnp.PyArray_DATA(loss)
    cdef void* pb = cnp.PyArray_DATA(backprop)
    if cnp.PyArray_TYPE(features) == cnp.NPY_FLOAT:
        with nogil:
            _dense_rows(<const float*>x, <const float*>y, <float*>pl, <float*>pb, n, c)
    else:
        with nogil:
            _dense_rows(<const double*>x, <const double*>y, <double*>pl, <double*>pb, n, c)
    return loss, backprop
