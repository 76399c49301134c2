# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -fno-math-errno -fno-trapping-math -falign-loops=32
"""Fused in-place optimizer updates (the ``Apply*`` / ``SparseApply*`` kernels), nogil.

State it keeps
--------------
None. Each call updates a variable and its accumulators (C-contiguous float32/float64
arrays that the caller validated) in place, with the GIL released, and returns nothing.

The one-pass invariant
----------------------
Every rule reads and writes each element of the variable and of its accumulators exactly
once per step: element ``i`` is loaded, all of its new values are computed in registers,
then stored. Adam, for example::

    g = grad[i]
    m[i]   = m_i   = m[i] + (g - m[i]) * (1 - beta1)
    v[i]   = v_i   = v[i] + (g*g - v[i]) * (1 - beta2)
    var[i] = var[i] - alpha * m_i / (sqrt(v_i) + epsilon)

A NumPy version of the same step makes ~10 passes over memory and allocates temporaries.

The rules live in ``_training_loops.h`` (C, one function per rule, for float and double);
this module checks arguments, releases the GIL and groups sparse rows.

Vector clones
-------------
The one pass is vectorized: lane ``k`` of a vector holds element ``i + k`` and goes through
the same operations, in the same order, as the scalar loop would apply to it; a tail of
fewer than a vector's width runs scalar. The loops are compiled twice (GCC's
``target_clones``): for AVX2 (8 floats or 4 doubles per instruction) and for baseline
x86-64 (SSE2, 4 or 2); the loader picks one by CPUID, so the built module still runs on
any x86-64 CPU. Wider vectors pay off for the rules bound by sqrt and division (Adam,
Adagrad, RMSProp, FTRL, Adadelta); SGD and Momentum are bound by memory either way. On a
784x512 float32 variable (a copy of which takes ~35 us)::

    SGD    ~38 us with either clone
    Adam  ~270 us with SSE2,  ~120 us with AVX2 (about the pace of the divide/sqrt unit:
                                                 no faster when the arrays fit in L1)

Both clones, and the loops of earlier versions, produce the same bits: sqrt and division
round exactly in vector form, and the AVX2 clone leaves FMA off (a fused multiply-add
rounds once instead of twice). Vectorizing needs ``__restrict`` pointers, so the arrays a
rule writes must not overlap (checked below: a gradient that shares memory with them is
copied first), and ``-fno-math-errno -fno-trapping-math`` (above; neither changes a
result: nothing here reads errno or floating-point exception flags). ``-falign-loops=32``
keeps the tiniest loops (SGD's SSE2 body is five instructions) from straddling a fetch
boundary, which made the baseline clone's SGD ~1.4x slower on Zen 4. FTRL with
``lr_power != -0.5`` calls ``pow`` and stays scalar. Other compilers and platforms build
the same loops once, without clones.

Sparse updates
--------------
A sparse gradient is ``(values[N, row], indices[N])``. Rows with the same index are summed
first (TensorFlow de-duplicates before applying, so ``accum += (g1 + g2)**2``, not
``g1**2 + g2**2``), then the rule runs on that variable row only. To group duplicates,
indices are visited in sorted order: the caller passes ``order`` (a stable argsort) unless
the indices are already non-decreasing (checked here, O(N)), so no hash table is needed::

    indices [3, 0, 3]  --argsort-->  order [1, 0, 2]
    groups  row 0 <- values[1];  row 3 <- values[0] + values[2]  (summed in a scratch row)

Sparse Adam follows TF1's AdamOptimizer, which decays ``m`` and ``v`` of *every* row
(rows without a gradient see g = 0), so it is one pass over all rows.

Errors
------
Index bounds are checked before any write; a bad index is reported by returning its
position, and the caller raises after leaving ``nogil``. An unknown rule, or a variable
and accumulators that share memory, raise ValueError before any write.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._training import apply_dense, SGD
>>> var = np.ones(3)
>>> apply_dense(SGD, var, var, var, var, np.full(3, 2.0), (0.5, 0, 0, 0, 0, 0), 0)
>>> var
array([0., 0., 0.])
"""

cimport numpy as cnp
from cython cimport floating
from libc.math cimport sqrt, sqrtf
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

cnp.import_array()

# The rules themselves are C, in _training_loops.h (see "Vector clones" above).
cdef extern from "_training_loops.h" nogil:
    enum:
        FG_SGD
        FG_MOMENTUM
        FG_ADAGRAD
        FG_ADAM
        FG_RMSPROP
        FG_CENTERED_RMSPROP
        FG_FTRL
        FG_ADADELTA
        FG_ADAM_DECAY
    ctypedef struct fg_hyper:
        double h0
        double h1
        double h2
        double h3
        double h4
        double h5
        int flag
    void fg_update_f32(int rule, float* var, float* s0, float* s1, float* s2,
                       const float* g, Py_ssize_t n, const fg_hyper* h)
    void fg_update_f64(int rule, double* var, double* s0, double* s1, double* s2,
                       const double* g, Py_ssize_t n, const fg_hyper* h)

SGD = FG_SGD
MOMENTUM = FG_MOMENTUM
ADAGRAD = FG_ADAGRAD
ADAM = FG_ADAM
RMSPROP = FG_RMSPROP
CENTERED_RMSPROP = FG_CENTERED_RMSPROP
FTRL = FG_FTRL
ADADELTA = FG_ADADELTA
_NAMES = ("SGD", "MOMENTUM", "ADAGRAD", "ADAM", "RMSPROP", "CENTERED_RMSPROP", "FTRL",
          "ADADELTA")
# Accumulators each rule updates: (s0, s1, s2)[:_SLOTS[rule]]; the others are not read.
cdef int[8] _SLOTS = [0, 1, 1, 2, 2, 3, 2, 2]


cdef inline void _rule(int rule, floating* var, floating* s0, floating* s1, floating* s2,
                       const floating* g, Py_ssize_t n, const fg_hyper* h) noexcept nogil:
    if floating is float:
        fg_update_f32(rule, var, s0, s1, s2, g, n, h)
    else:
        fg_update_f64(rule, var, s0, s1, s2, g, n, h)


# -- sparse driver ----------------------------------------------------------------------
cdef Py_ssize_t _check_indices(const cnp.int64_t* idx, Py_ssize_t k, Py_ssize_t rows,
                               bint* is_sorted) noexcept nogil:
    """The position of the first out-of-range index, or -1; sets `is_sorted`."""
    cdef Py_ssize_t p
    is_sorted[0] = True
    for p in range(k):
        if idx[p] < 0 or idx[p] >= rows:
            return p
        if p > 0 and idx[p] < idx[p - 1]:
            is_sorted[0] = False
    return -1


cdef void _sparse(int rule, floating* var, floating* s0, floating* s1, floating* s2,
                  const floating* g, const cnp.int64_t* idx, const Py_ssize_t* order,
                  Py_ssize_t k, Py_ssize_t rows, Py_ssize_t width, const fg_hyper* h,
                  floating* scratch) noexcept nogil:
    """Apply `rule` to each indexed row (duplicates summed); Adam decays every row."""
    cdef Py_ssize_t p = 0, q, j, c, r, off, next_row = 0
    cdef const floating* gr
    cdef bint adam = rule == FG_ADAM
    while p < k:
        j = order[p] if order != NULL else p
        r = idx[j]
        q = p + 1
        while q < k and idx[order[q] if order != NULL else q] == r:
            q += 1
        if q - p == 1:
            gr = g + j * width
        else:
            memset(scratch, 0, width * sizeof(floating))
            while p < q:
                j = order[p] if order != NULL else p
                for c in range(width):
                    scratch[c] += g[j * width + c]
                p += 1
            gr = scratch
        if adam:
            if next_row < r:  # rows without a gradient: one contiguous block
                off = next_row * width
                _rule(FG_ADAM_DECAY, var + off, s0 + off, s1 + off, s2 + off, NULL,
                      (r - next_row) * width, h)
            next_row = r + 1
        off = r * width
        _rule(rule, var + off, s0 + off, s1 + off, s2 + off, gr, width, h)
        p = q
    if adam and next_row < rows:
        off = next_row * width
        _rule(FG_ADAM_DECAY, var + off, s0 + off, s1 + off, s2 + off, NULL,
              (rows - next_row) * width, h)


# -- Python entry points ----------------------------------------------------------------
def storage_ok(cnp.ndarray a, Py_ssize_t align, Py_ssize_t min_bytes):
    """Whether `a` can be updated in place as it is: C-contiguous, writeable, aligned,
    native-endian, and (if at least `min_bytes` long) starting on an `align`-byte boundary.

    >>> import numpy as np
    >>> storage_ok(np.zeros(3)[::2], 64, 4096)
    False
    """
    cdef int flags = cnp.PyArray_FLAGS(a)
    cdef int need = cnp.NPY_ARRAY_C_CONTIGUOUS | cnp.NPY_ARRAY_WRITEABLE | cnp.NPY_ARRAY_ALIGNED
    if flags & need != need or not cnp.PyArray_ISNOTSWAPPED(a):
        return False
    return (cnp.PyArray_NBYTES(a) < min_bytes
            or <size_t>cnp.PyArray_DATA(a) % <size_t>align == 0)


def adam_alpha(double lr, double beta1_power, double beta2_power, bint single):
    """Adam's bias-corrected step size ``lr * sqrt(1 - beta2_power) / (1 - beta1_power)``.

    Computed in float32 when `single` (the arguments are rounded to float32 first), else
    in float64: operation for operation what NumPy scalars of that dtype compute, so the
    same bits, at ~1/30 of the cost of NumPy's scalar arithmetic (which the optimizer
    kernel paid on every call).

    >>> round(adam_alpha(0.001, 0.9, 0.999, False), 9)
    0.000316228
    """
    cdef float lr_f, b1_f, b2_f, one_f = 1
    if single:
        lr_f = <float>lr
        b1_f = <float>beta1_power
        b2_f = <float>beta2_power
        return <double>(lr_f * sqrtf(one_f - b2_f) / (one_f - b1_f))
    return lr * sqrt(1.0 - beta2_power) / (1.0 - beta1_power)


cdef fg_hyper _hyper(tuple hp, int flag):
    cdef fg_hyper h
    h.h0 = hp[0]
    h.h1 = hp[1]
    h.h2 = hp[2]
    h.h3 = hp[3]
    h.h4 = hp[4]
    h.h5 = hp[5]
    h.flag = flag
    return h


cdef inline bint _overlap(const char* a, Py_ssize_t na, const char* b,
                          Py_ssize_t nb) noexcept:
    """Whether the byte ranges ``[a, a + na)`` and ``[b, b + nb)`` intersect."""
    return a < b + nb and b < a + na


cdef cnp.ndarray _unaliased(str fn, int rule, cnp.ndarray var, cnp.ndarray s0,
                            cnp.ndarray s1, cnp.ndarray s2, cnp.ndarray grad):
    """`grad`, or a copy of it if it shares memory with an array that `rule` writes.

    The C loops take ``__restrict`` pointers: the arrays a rule writes (`var` and the first
    ``_SLOTS[rule]`` of `s0`, `s1`, `s2`, all of `var`'s size) must not overlap each other
    or `grad`. A gradient that is the variable's own storage (a read of the variable fed
    back as its gradient) is copied; overlapping state arrays raise.
    """
    if not 0 <= rule < FG_ADAM_DECAY:
        raise ValueError(f"{fn}: unknown rule {rule}; expected one of {_NAMES}")
    cdef const char* p[4]
    p[0] = <const char*>cnp.PyArray_DATA(var)
    p[1] = <const char*>cnp.PyArray_DATA(s0)
    p[2] = <const char*>cnp.PyArray_DATA(s1)
    p[3] = <const char*>cnp.PyArray_DATA(s2)
    cdef const char* pg = <const char*>cnp.PyArray_DATA(grad)
    cdef Py_ssize_t size = cnp.PyArray_NBYTES(var), gsize = cnp.PyArray_NBYTES(grad)
    cdef int a, b
    cdef bint copy = False
    for a in range(1 + _SLOTS[rule]):
        for b in range(a):
            if _overlap(p[a], size, p[b], size):
                names = ("var", "s0", "s1", "s2")
                raise ValueError(f"{fn}({_NAMES[rule]}): {names[b]} and {names[a]} share "
                                 f"memory; the variable and each accumulator it updates "
                                 f"must be separate arrays")
        copy = copy or _overlap(p[a], size, pg, gsize)
    return grad.copy() if copy else grad


def apply_dense(int rule, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1, cnp.ndarray s2,
                cnp.ndarray grad, tuple hp, int flag):
    """Update `var` (and the accumulators `s0`..`s2`, rule-specific) in place.

    All arrays must be C-contiguous, of one dtype (float32 or float64) and size; unused
    accumulators may be any array of that dtype (pass `var`). `hp` holds six rule-specific
    hyperparameters (see the rules in ``_training_loops.h``), `flag` a rule-specific
    switch. `grad` may share memory with `var` (it is copied first); the variable and the
    accumulators the rule uses must be separate arrays (ValueError otherwise).
    """
    cdef fg_hyper h = _hyper(hp, flag)
    cdef Py_ssize_t n = var.size
    grad = _unaliased("apply_dense", rule, var, s0, s1, s2, grad)
    if cnp.PyArray_TYPE(var) == cnp.NPY_FLOAT32:
        with nogil:
            _rule(rule, <float*>cnp.PyArray_DATA(var), <float*>cnp.PyArray_DATA(s0),
                  <float*>cnp.PyArray_DATA(s1), <float*>cnp.PyArray_DATA(s2),
                  <const float*>cnp.PyArray_DATA(grad), n, &h)
    else:
        with nogil:
            _rule(rule, <double*>cnp.PyArray_DATA(var), <double*>cnp.PyArray_DATA(s0),
                  <double*>cnp.PyArray_DATA(s1), <double*>cnp.PyArray_DATA(s2),
                  <const double*>cnp.PyArray_DATA(grad), n, &h)


def apply_sparse(int rule, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1, cnp.ndarray s2,
                 cnp.ndarray grad, cnp.ndarray indices, tuple hp, int flag):
    """Update the rows `indices` of `var` (viewed as ``[rows, width]``) in place.

    `grad` is ``[len(indices), width]``, `indices` C-contiguous int64; memory sharing as
    for `apply_dense`. Returns -1, or the position of the first index outside
    ``[0, rows)`` (nothing is written then).
    """
    cdef fg_hyper h = _hyper(hp, flag)
    cdef Py_ssize_t k = indices.shape[0]
    cdef Py_ssize_t rows = var.shape[0] if var.ndim > 0 else 1
    cdef Py_ssize_t width = var.size // rows if rows > 0 else 0
    cdef const cnp.int64_t* idx = <const cnp.int64_t*>cnp.PyArray_DATA(indices)
    cdef bint is_sorted = True
    cdef Py_ssize_t bad
    cdef const Py_ssize_t* order = NULL
    cdef cnp.ndarray order_arr
    cdef void* scratch
    grad = _unaliased("apply_sparse", rule, var, s0, s1, s2, grad)
    with nogil:
        bad = _check_indices(idx, k, rows, &is_sorted)
    if bad >= 0:
        return bad
    if not is_sorted:
        order_arr = np.ascontiguousarray(np.argsort(indices, kind="stable"), dtype=np.intp)
        order = <const Py_ssize_t*>cnp.PyArray_DATA(order_arr)
    scratch = malloc(max(width, 1) * var.itemsize)
    if scratch == NULL:
        raise MemoryError("apply_sparse: cannot allocate a scratch row")
    try:
        if cnp.PyArray_TYPE(var) == cnp.NPY_FLOAT32:
            with nogil:
                _sparse(rule, <float*>cnp.PyArray_DATA(var), <float*>cnp.PyArray_DATA(s0),
                        <float*>cnp.PyArray_DATA(s1), <float*>cnp.PyArray_DATA(s2),
                        <const float*>cnp.PyArray_DATA(grad), idx, order, k, rows, width,
                        &h, <float*>scratch)
        else:
            with nogil:
                _sparse(rule, <double*>cnp.PyArray_DATA(var), <double*>cnp.PyArray_DATA(s0),
                        <double*>cnp.PyArray_DATA(s1), <double*>cnp.PyArray_DATA(s2),
                        <const double*>cnp.PyArray_DATA(grad), idx, order, k, rows, width,
                        &h, <double*>scratch)
    finally:
        free(scratch)
    return -1
