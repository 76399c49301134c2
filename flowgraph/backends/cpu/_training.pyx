# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -fno-math-errno
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
position, and the caller raises after leaving ``nogil``.

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
from libc.math cimport fabs, fabsf, pow, powf, sqrt, sqrtf
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

cnp.import_array()

# The errno-free sqrt (-fno-math-errno above) lets GCC vectorize the loops; nothing here
# reads errno.

SGD = 0
MOMENTUM = 1
ADAGRAD = 2
ADAM = 3
RMSPROP = 4
CENTERED_RMSPROP = 5
FTRL = 6
ADADELTA = 7

cdef struct Hyper:
    double h0
    double h1
    double h2
    double h3
    double h4
    double h5
    int flag


# -- the rules: one pass over n elements ------------------------------------------------
# float32 math stays in float32 (sqrtf, not sqrt on a promoted double), as TF computes it.
cdef inline floating _sqrt(floating x) noexcept nogil:
    if floating is float:
        return sqrtf(x)
    else:
        return sqrt(x)


cdef inline floating _pow(floating x, floating y) noexcept nogil:
    if floating is float:
        return powf(x, y)
    else:
        return pow(x, y)


cdef inline floating _abs(floating x) noexcept nogil:
    if floating is float:
        return fabsf(x)
    else:
        return fabs(x)


cdef inline void _sgd(floating* var, const floating* g, Py_ssize_t n,
                      const Hyper* h) noexcept nogil:
    cdef floating lr = <floating>h.h0
    cdef Py_ssize_t i
    for i in range(n):
        var[i] -= lr * g[i]


cdef inline void _momentum(floating* var, floating* acc, const floating* g, Py_ssize_t n,
                           const Hyper* h) noexcept nogil:
    # h0 = lr, h1 = momentum, flag = use_nesterov
    cdef floating lr = <floating>h.h0
    cdef floating mom = <floating>h.h1
    cdef floating a
    cdef Py_ssize_t i
    if h.flag:
        for i in range(n):
            a = acc[i] * mom + g[i]
            acc[i] = a
            var[i] -= g[i] * lr + a * mom * lr
    else:
        for i in range(n):
            a = acc[i] * mom + g[i]
            acc[i] = a
            var[i] -= a * lr


cdef inline void _adagrad(floating* var, floating* acc, const floating* g, Py_ssize_t n,
                          const Hyper* h) noexcept nogil:
    # h0 = lr, flag = update_slots
    cdef floating lr = <floating>h.h0
    cdef floating a, gi
    cdef Py_ssize_t i
    for i in range(n):
        gi = g[i]
        a = acc[i]
        if h.flag:
            a = a + gi * gi
            acc[i] = a
        var[i] -= lr * gi / _sqrt(a)


cdef inline void _adam(floating* var, floating* m, floating* v, const floating* g,
                       Py_ssize_t n, const Hyper* h) noexcept nogil:
    # h0 = alpha (bias-corrected lr), h1 = beta1, h2 = beta2, h3 = epsilon, flag = nesterov
    cdef floating alpha = <floating>h.h0
    cdef floating b1 = <floating>h.h1
    cdef floating b2 = <floating>h.h2
    cdef floating eps = <floating>h.h3
    cdef floating one_b1 = 1 - b1
    cdef floating one_b2 = 1 - b2
    cdef floating gi, mi, vi
    cdef Py_ssize_t i
    if h.flag:
        for i in range(n):
            gi = g[i]
            mi = m[i] + (gi - m[i]) * one_b1
            vi = v[i] + (gi * gi - v[i]) * one_b2
            m[i] = mi
            v[i] = vi
            var[i] -= (gi * one_b1 + b1 * mi) * alpha / (_sqrt(vi) + eps)
    else:
        for i in range(n):
            gi = g[i]
            mi = m[i] + (gi - m[i]) * one_b1
            vi = v[i] + (gi * gi - v[i]) * one_b2
            m[i] = mi
            v[i] = vi
            var[i] -= mi * alpha / (_sqrt(vi) + eps)


cdef inline void _adam_decay(floating* var, floating* m, floating* v, Py_ssize_t n,
                             const Hyper* h) noexcept nogil:
    """Adam on a row with no gradient (g = 0): sparse TF1 Adam still decays it."""
    cdef floating alpha = <floating>h.h0
    cdef floating b1 = <floating>h.h1
    cdef floating b2 = <floating>h.h2
    cdef floating eps = <floating>h.h3
    cdef floating mi, vi
    cdef Py_ssize_t i
    for i in range(n):
        mi = m[i] * b1
        vi = v[i] * b2
        m[i] = mi
        v[i] = vi
        if h.flag:
            var[i] -= b1 * mi * alpha / (_sqrt(vi) + eps)
        else:
            var[i] -= mi * alpha / (_sqrt(vi) + eps)


cdef inline void _rmsprop(floating* var, floating* ms, floating* mom, floating* mg,
                          const floating* g, Py_ssize_t n, const Hyper* h) noexcept nogil:
    # h0 = lr, h1 = rho, h2 = momentum, h3 = epsilon; mg is NULL unless centered
    cdef floating lr = <floating>h.h0
    cdef floating one_rho = 1 - <floating>h.h1
    cdef floating momentum = <floating>h.h2
    cdef floating eps = <floating>h.h3
    cdef floating gi, si, mgi, mi, denom
    cdef Py_ssize_t i
    if mg == NULL:
        for i in range(n):
            gi = g[i]
            si = ms[i] + (gi * gi - ms[i]) * one_rho
            ms[i] = si
            mi = mom[i] * momentum + lr * gi / _sqrt(si + eps)
            mom[i] = mi
            var[i] -= mi
    else:
        for i in range(n):
            gi = g[i]
            si = ms[i] + (gi * gi - ms[i]) * one_rho
            mgi = mg[i] + (gi - mg[i]) * one_rho
            ms[i] = si
            mg[i] = mgi
            denom = si - mgi * mgi + eps
            mi = mom[i] * momentum + lr * gi / _sqrt(denom)
            mom[i] = mi
            var[i] -= mi


cdef inline void _ftrl(floating* var, floating* accum, floating* linear, const floating* g,
                       Py_ssize_t n, const Hyper* h) noexcept nogil:
    # h0 = lr, h1 = l1, h2 = l2, h3 = l2_shrinkage, h4 = lr_power; flag = use shrinkage
    cdef floating lr = <floating>h.h0
    cdef floating l1 = <floating>h.h1
    cdef floating l2 = <floating>h.h2
    cdef floating shrink = <floating>h.h3
    cdef floating lr_power = <floating>h.h4
    cdef bint half = lr_power == <floating>-0.5
    cdef floating gi, gs, a, na, lin, sig_new, sig_old, x, y
    cdef Py_ssize_t i
    for i in range(n):
        gi = g[i]
        gs = gi + 2 * shrink * var[i] if h.flag else gi
        a = accum[i]
        na = a + gi * gi
        if half:
            sig_new = _sqrt(na)
            sig_old = _sqrt(a)
        else:
            sig_new = _pow(na, -lr_power)
            sig_old = _pow(a, -lr_power)
        lin = linear[i] + gs - (sig_new - sig_old) / lr * var[i]
        linear[i] = lin
        accum[i] = na
        if _abs(lin) > l1:
            x = (l1 if lin > 0 else -l1) - lin
            y = sig_new / lr + 2 * l2
            var[i] = x / y
        else:
            var[i] = 0


cdef inline void _adadelta(floating* var, floating* acc, floating* upd, const floating* g,
                           Py_ssize_t n, const Hyper* h) noexcept nogil:
    # h0 = lr, h1 = rho, h2 = epsilon
    cdef floating lr = <floating>h.h0
    cdef floating rho = <floating>h.h1
    cdef floating eps = <floating>h.h2
    cdef floating gi, a, u, d
    cdef Py_ssize_t i
    for i in range(n):
        gi = g[i]
        a = acc[i] * rho + gi * gi * (1 - rho)
        acc[i] = a
        d = _sqrt(upd[i] + eps) / _sqrt(a + eps) * gi
        u = upd[i] * rho + d * d * (1 - rho)
        upd[i] = u
        var[i] -= d * lr


cdef void _rule(int rule, floating* var, floating* s0, floating* s1, floating* s2,
                const floating* g, Py_ssize_t n, const Hyper* h) noexcept nogil:
    if rule == 0:
        _sgd(var, g, n, h)
    elif rule == 1:
        _momentum(var, s0, g, n, h)
    elif rule == 2:
        _adagrad(var, s0, g, n, h)
    elif rule == 3:
        _adam(var, s0, s1, g, n, h)
    elif rule == 4:
        _rmsprop(var, s0, s1, NULL, g, n, h)
    elif rule == 5:
        _rmsprop(var, s0, s1, s2, g, n, h)
    elif rule == 6:
        _ftrl(var, s0, s1, g, n, h)
    elif rule == 7:
        _adadelta(var, s0, s1, g, n, h)


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
                  Py_ssize_t k, Py_ssize_t rows, Py_ssize_t width, const Hyper* h,
                  floating* scratch) noexcept nogil:
    """Apply `rule` to each indexed row (duplicates summed); Adam decays every row."""
    cdef Py_ssize_t p = 0, q, j, c, r, off, next_row = 0
    cdef const floating* gr
    cdef bint adam = rule == 3
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
            while next_row < r:  # rows without a gradient
                off = next_row * width
                _adam_decay(var + off, s0 + off, s1 + off, width, h)
                next_row += 1
            next_row = r + 1
        off = r * width
        _rule(rule, var + off, s0 + off, s1 + off, s2 + off, gr, width, h)
        p = q
    if adam:
        while next_row < rows:
            off = next_row * width
            _adam_decay(var + off, s0 + off, s1 + off, width, h)
            next_row += 1


# -- Python entry points ----------------------------------------------------------------
cdef Hyper _hyper(tuple hp, int flag):
    cdef Hyper h
    h.h0 = hp[0]
    h.h1 = hp[1]
    h.h2 = hp[2]
    h.h3 = hp[3]
    h.h4 = hp[4]
    h.h5 = hp[5]
    h.flag = flag
    return h


def apply_dense(int rule, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1, cnp.ndarray s2,
                cnp.ndarray grad, tuple hp, int flag):
    """Update `var` (and the accumulators `s0`..`s2`, rule-specific) in place.

    All arrays must be C-contiguous, of one dtype (float32 or float64) and size; unused
    accumulators may be any array of that dtype (pass `var`). `hp` holds six rule-specific
    hyperparameters (see the rule functions), `flag` a rule-specific switch.
    """
    cdef Hyper h = _hyper(hp, flag)
    cdef Py_ssize_t n = var.size
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

    `grad` is ``[len(indices), width]``, `indices` C-contiguous int64. Returns -1, or the
    position of the first index outside ``[0, rows)`` (nothing is written then).
    """
    cdef Hyper h = _hyper(hp, flag)
    cdef Py_ssize_t k = indices.shape[0]
    cdef Py_ssize_t rows = var.shape[0] if var.ndim > 0 else 1
    cdef Py_ssize_t width = var.size // rows if rows > 0 else 0
    cdef const cnp.int64_t* idx = <const cnp.int64_t*>cnp.PyArray_DATA(indices)
    cdef bint is_sorted = True
    cdef Py_ssize_t bad
    cdef const Py_ssize_t* order = NULL
    cdef cnp.ndarray order_arr
    cdef void* scratch
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
