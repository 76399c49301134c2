# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: extra_compile_args = -fno-math-errno -fno-trapping-math -falign-loops=32
"""Fused in-place optimizer updates (the ``Apply*`` / ``SparseApply*`` kernels), nogil.

State it keeps
--------------
None. Each call updates a variable and its accumulators (C-contiguous float32/float64
arrays that the caller validated) in place, with the GIL released unless the update is
small (under ``_NOGIL_MIN`` elements of work), and returns nothing. An `Update` holds only
its op type's fixed layout.

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

The direct path
---------------
An optimizer step calls one update kernel per variable, most of them on small arrays, so
the kernel's fixed cost matters as much as the loop: checking storages, dtypes and shapes,
reading the hyperparameters and assembling them took ~3-6 us per call in Python, against
~0.1 us for the loop on a bias vector. `Update` (one per op type, built when the kernels
are registered) does it in one C call for the common case, inputs that already are what
the loops take, and declines everything else, having written nothing, to the kernel's
checked Python path (`kernels_training.py`), which converts or raises as before. Both
paths read the hyperparameters the same way, so an update's bits do not depend on which
one ran.

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
cdef inline bint _layout_ok(cnp.ndarray a, Py_ssize_t align,
                            Py_ssize_t min_bytes) noexcept:
    cdef int flags = cnp.PyArray_FLAGS(a)
    cdef int need = cnp.NPY_ARRAY_C_CONTIGUOUS | cnp.NPY_ARRAY_WRITEABLE | cnp.NPY_ARRAY_ALIGNED
    if flags & need != need or not cnp.PyArray_ISNOTSWAPPED(a):
        return False
    return (cnp.PyArray_NBYTES(a) < min_bytes
            or <size_t>cnp.PyArray_DATA(a) % <size_t>align == 0)


def storage_ok(cnp.ndarray a, Py_ssize_t align, Py_ssize_t min_bytes):
    """Whether `a` can be updated in place as it is: C-contiguous, writeable, aligned,
    native-endian, and (if at least `min_bytes` long) starting on an `align`-byte boundary.

    >>> import numpy as np
    >>> storage_ok(np.zeros(3)[::2], 64, 4096)
    False
    """
    return _layout_ok(a, align, min_bytes)


def adam_alpha(double lr, double beta1_power, double beta2_power, bint single):
    """Adam's bias-corrected step size ``lr * sqrt(1 - beta2_power) / (1 - beta1_power)``.

    Computed in float32 when `single` (the arguments are rounded to float32 first), else
    in float64: operation for operation what NumPy scalars of that dtype compute, so the
    same bits, at ~1/30 of the cost of NumPy's scalar arithmetic (which the optimizer
    kernel paid on every call).

    >>> round(adam_alpha(0.001, 0.9, 0.999, False), 9)
    0.000316228
    """
    return _adam_alpha(lr, beta1_power, beta2_power, single)


cdef inline double _adam_alpha(double lr, double beta1_power, double beta2_power,
                               bint single) noexcept:
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


# Below this much work (elements) the loops keep the GIL: releasing and taking it back
# costs more than such an update (Adam on 4096 floats: ~1 us) and may wait for a thread
# that took it meanwhile.
cdef Py_ssize_t _NOGIL_MIN = 4096


cdef void _dense_loop(int rule, int typenum, char** p, const void* g, Py_ssize_t n,
                      const fg_hyper* h) noexcept nogil:
    if typenum == cnp.NPY_FLOAT32:
        _rule(rule, <float*>p[0], <float*>p[1], <float*>p[2], <float*>p[3], <const float*>g,
              n, h)
    else:
        _rule(rule, <double*>p[0], <double*>p[1], <double*>p[2], <double*>p[3],
              <const double*>g, n, h)


cdef void _sparse_loop(int rule, int typenum, char** p, const void* g,
                       const cnp.int64_t* idx, const Py_ssize_t* order, Py_ssize_t k,
                       Py_ssize_t rows, Py_ssize_t width, const fg_hyper* h,
                       void* scratch) noexcept nogil:
    if typenum == cnp.NPY_FLOAT32:
        _sparse(rule, <float*>p[0], <float*>p[1], <float*>p[2], <float*>p[3],
                <const float*>g, idx, order, k, rows, width, h, <float*>scratch)
    else:
        _sparse(rule, <double*>p[0], <double*>p[1], <double*>p[2], <double*>p[3],
                <const double*>g, idx, order, k, rows, width, h, <double*>scratch)


cdef inline void _data(char** p, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1,
                       cnp.ndarray s2) noexcept:
    p[0] = <char*>cnp.PyArray_DATA(var)
    p[1] = <char*>cnp.PyArray_DATA(s0)
    p[2] = <char*>cnp.PyArray_DATA(s1)
    p[3] = <char*>cnp.PyArray_DATA(s2)


cdef int _dense(int rule, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1, cnp.ndarray s2,
                cnp.ndarray grad, const fg_hyper* h) except -1:
    """`apply_dense` on arrays of the documented layout."""
    grad = _unaliased("apply_dense", rule, var, s0, s1, s2, grad)
    cdef char* p[4]
    _data(p, var, s0, s1, s2)
    cdef int typenum = cnp.PyArray_TYPE(var)
    cdef const void* g = cnp.PyArray_DATA(grad)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(var)
    if n < _NOGIL_MIN:
        _dense_loop(rule, typenum, p, g, n, h)
    else:
        with nogil:
            _dense_loop(rule, typenum, p, g, n, h)
    return 0


cdef Py_ssize_t _sparse_rows(int rule, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1,
                             cnp.ndarray s2, cnp.ndarray grad, cnp.ndarray indices,
                             const fg_hyper* h) except -2:
    """`apply_sparse` on arrays of the documented layout: -1, or the position of the first
    bad index (nothing written then)."""
    grad = _unaliased("apply_sparse", rule, var, s0, s1, s2, grad)
    cdef Py_ssize_t k = cnp.PyArray_DIMS(indices)[0]
    cdef Py_ssize_t size = cnp.PyArray_SIZE(var)
    cdef Py_ssize_t rows = cnp.PyArray_DIMS(var)[0] if cnp.PyArray_NDIM(var) > 0 else 1
    cdef Py_ssize_t width = size // rows if rows > 0 else 0
    cdef const cnp.int64_t* idx = <const cnp.int64_t*>cnp.PyArray_DATA(indices)
    cdef bint is_sorted = True
    cdef const Py_ssize_t* order = NULL
    cdef cnp.ndarray order_arr
    cdef Py_ssize_t bad
    if k < _NOGIL_MIN:
        bad = _check_indices(idx, k, rows, &is_sorted)
    else:
        with nogil:
            bad = _check_indices(idx, k, rows, &is_sorted)
    if bad >= 0:
        return bad
    if not is_sorted:
        order_arr = np.ascontiguousarray(np.argsort(indices, kind="stable"), dtype=np.intp)
        order = <const Py_ssize_t*>cnp.PyArray_DATA(order_arr)
    cdef char* p[4]
    _data(p, var, s0, s1, s2)
    cdef int typenum = cnp.PyArray_TYPE(var)
    cdef const void* g = cnp.PyArray_DATA(grad)
    cdef void* scratch = malloc(max(width, 1) * cnp.PyArray_ITEMSIZE(var))
    if scratch == NULL:
        raise MemoryError("apply_sparse: cannot allocate a scratch row")
    if (size if rule == FG_ADAM else k * width) < _NOGIL_MIN:
        _sparse_loop(rule, typenum, p, g, idx, order, k, rows, width, h, scratch)
    else:
        with nogil:
            _sparse_loop(rule, typenum, p, g, idx, order, k, rows, width, h, scratch)
    free(scratch)
    return -1


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
    _dense(rule, var, s0, s1, s2, grad, &h)


def apply_sparse(int rule, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1, cnp.ndarray s2,
                 cnp.ndarray grad, cnp.ndarray indices, tuple hp, int flag):
    """Update the rows `indices` of `var` (viewed as ``[rows, width]``) in place.

    `grad` is ``[len(indices), width]``, `indices` C-contiguous int64; memory sharing as
    for `apply_dense`. Returns -1, or the position of the first index outside
    ``[0, rows)`` (nothing is written then).
    """
    cdef fg_hyper h = _hyper(hp, flag)
    return _sparse_rows(rule, var, s0, s1, s2, grad, indices, &h)


# -- one op's update, when its inputs need no checked conversion ---------------------------
cdef inline bint _same_dims(cnp.ndarray a, cnp.ndarray b, int first) noexcept:
    """Whether `a` and `b` have the same number of dimensions and the same sizes from
    dimension `first` on."""
    cdef int d, nd = cnp.PyArray_NDIM(a)
    if nd != cnp.PyArray_NDIM(b):
        return False
    for d in range(first, nd):
        if cnp.PyArray_DIMS(a)[d] != cnp.PyArray_DIMS(b)[d]:
            return False
    return True


cdef inline bint _plain(object x, int typenum) noexcept:
    """Whether `x` is an ndarray of `typenum`, native-endian, aligned, C-contiguous."""
    return (type(x) is cnp.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>x) == typenum
            and cnp.PyArray_ISBEHAVED_RO(<cnp.ndarray>x)
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x))


cdef inline bint _read_scalar(object x, int typenum, double* out) noexcept:
    """Store a 0-d `_plain` array's value in `out` (exactly: float32 widens to double);
    False, nothing stored, for anything else."""
    if not _plain(x, typenum) or cnp.PyArray_NDIM(<cnp.ndarray>x) != 0:
        return False
    if typenum == cnp.NPY_FLOAT32:
        out[0] = (<float*>cnp.PyArray_DATA(<cnp.ndarray>x))[0]
    else:
        out[0] = (<double*>cnp.PyArray_DATA(<cnp.ndarray>x))[0]
    return True


FLAG_CONSTANT, FLAG_USE_NESTEROV, FLAG_UPDATE_SLOTS = 0, 1, 2


cdef class Update:
    """What one update op type's kernel needs to know about its inputs, and the update of
    the common case in one call: every input already what the loops take.

    Call it with the op's inputs (the refs' `VariableState`s first) and its two possible
    flag attributes. It returns True once it has updated the variable; it returns False,
    having written nothing, when any input needs the kernel's checked path (a conversion,
    an error to raise, an update large enough for the kernel threads): a storage that
    `storage_ok` rejects, a variable that is not float32/float64, an accumulator of
    another shape or dtype, a hyperparameter that is not a 0-d array of the variable's
    dtype, a gradient of another dtype, layout or shape, indices that are not int64 or
    int32 of one dimension, or an index out of range. The update itself is the loops'
    (`apply_dense`, `apply_sparse`), with hyperparameters read exactly as the checked path
    reads them (a float32 value widened to double; Adam's step size by `adam_alpha`), so
    both paths give the same bits.

    Arguments: `rule`; `num_inputs`, the op's; `num_refs`, its first inputs (the variable,
    then its accumulators); `slots`, the ref passed as each of s0, s1, s2 (0: the variable,
    unused by the rule); `hyper`, the input position of each of the six hyperparameters
    (-1: 0.0); `alpha_at`, for Adam the positions of lr, beta1_power and beta2_power that
    give h0 (else ``()``); `grad_at`, `idx_at` (-1: dense); `flag_from` (FLAG_CONSTANT:
    `flag`, or FLAG_USE_NESTEROV or FLAG_UPDATE_SLOTS: that argument); `grain`, a dict
    whose ``"update"`` entry is read at each call (updates of twice as much work go to the
    checked path); `align`, `align_min`, as for `storage_ok`.

    >>> import numpy as np
    >>> from flowgraph.framework.resources import VariableState
    >>> sgd = Update(SGD, 3, 1, (0, 0, 0), (1, -1, -1, -1, -1, -1), (), 2, -1,
    ...              FLAG_CONSTANT, 0, {"update": 1 << 18}, 64, 4096)
    >>> var = VariableState("v"); var.value = np.ones(3)
    >>> sgd((var, np.asarray(0.5), np.full(3, 2.0)), False, False)
    True
    >>> var.value
    array([0., 0., 0.])
    >>> sgd((var, 0.5, np.full(3, 2.0)), False, False)  # a float, not a 0-d array
    False
    """

    cdef int rule, num_inputs, num_refs, grad_at, idx_at, flag_from, flag
    cdef int slots[3]
    cdef int hyper[6]
    cdef int alpha_at[3]
    cdef dict grain
    cdef Py_ssize_t align, align_min

    def __init__(self, int rule, int num_inputs, int num_refs, tuple slots, tuple hyper,
                 tuple alpha_at, int grad_at, int idx_at, int flag_from, int flag,
                 dict grain, Py_ssize_t align, Py_ssize_t align_min):
        # (the positions index `inputs` unchecked: boundscheck is off in this module)
        positions = [p for p in (*hyper, *alpha_at, idx_at) if p != -1] + [grad_at]
        if not 0 <= rule < FG_ADAM_DECAY or not 1 <= num_refs <= 4 or len(slots) != 3 \
                or len(hyper) != 6 or len(alpha_at) not in (0, 3) \
                or any(not 0 <= r < num_refs for r in slots) \
                or any(not num_refs <= p < num_inputs for p in positions) \
                or not 0 <= flag_from <= 2:
            raise ValueError(f"Update: inconsistent layout for rule {rule}")
        self.rule, self.num_inputs, self.num_refs = rule, num_inputs, num_refs
        self.grad_at, self.idx_at = grad_at, idx_at
        self.flag_from, self.flag, self.grain = flag_from, flag, grain
        self.align, self.align_min = align, align_min
        cdef int k
        for k in range(3):
            self.slots[k] = slots[k]
            self.alpha_at[k] = alpha_at[k] if alpha_at else -1
        for k in range(6):
            self.hyper[k] = hyper[k]

    cdef cnp.ndarray _storage(self, object state):
        """`state.value` if it can be updated in place as it is, else None."""
        value = getattr(state, "value", None)
        if type(value) is not cnp.ndarray or \
                not _layout_ok(<cnp.ndarray>value, self.align, self.align_min):
            return None
        return <cnp.ndarray>value

    def __call__(self, tuple inputs, bint use_nesterov, bint update_slots):
        if len(inputs) != self.num_inputs:
            return False
        cdef cnp.ndarray var = self._storage(inputs[0])
        if var is None:
            return False
        cdef int typenum = cnp.PyArray_TYPE(var)
        if typenum != cnp.NPY_FLOAT32 and typenum != cnp.NPY_FLOAT64:
            return False
        cdef list refs = [var]
        cdef cnp.ndarray s
        cdef int k
        for k in range(1, self.num_refs):
            s = self._storage(inputs[k])
            if s is None or cnp.PyArray_TYPE(s) != typenum or not _same_dims(s, var, 0):
                return False
            refs.append(s)
        cdef fg_hyper h
        cdef double v[6]
        cdef double a[3]
        for k in range(6):
            v[k] = 0.0
            if self.hyper[k] >= 0 and not _read_scalar(inputs[self.hyper[k]], typenum, &v[k]):
                return False
        if self.alpha_at[0] >= 0:
            for k in range(3):
                if not _read_scalar(inputs[self.alpha_at[k]], typenum, &a[k]):
                    return False
            v[0] = _adam_alpha(a[0], a[1], a[2], typenum == cnp.NPY_FLOAT32)
        h.h0, h.h1, h.h2, h.h3, h.h4, h.h5 = v[0], v[1], v[2], v[3], v[4], v[5]
        h.flag = (self.flag if self.flag_from == FLAG_CONSTANT else
                  use_nesterov if self.flag_from == FLAG_USE_NESTEROV else update_slots)
        cdef Py_ssize_t most = 2 * <Py_ssize_t>self.grain["update"]
        grad = inputs[self.grad_at]
        if not _plain(grad, typenum):
            return False
        cdef cnp.ndarray g = <cnp.ndarray>grad
        s0, s1, s2 = refs[self.slots[0]], refs[self.slots[1]], refs[self.slots[2]]
        if self.idx_at < 0:
            if not _same_dims(g, var, 0) or cnp.PyArray_SIZE(var) >= most:
                return False
            _dense(self.rule, var, s0, s1, s2, g, &h)
            return True
        return self._sparse(inputs[self.idx_at], var, s0, s1, s2, g, &h, most)

    cdef bint _sparse(self, object indices, cnp.ndarray var, cnp.ndarray s0, cnp.ndarray s1,
                      cnp.ndarray s2, cnp.ndarray g, const fg_hyper* h,
                      Py_ssize_t most) except -1:
        if type(indices) is not cnp.ndarray or cnp.PyArray_NDIM(var) < 1:
            return False
        cdef cnp.ndarray idx = <cnp.ndarray>indices
        cdef int itype = cnp.PyArray_TYPE(idx)
        if cnp.PyArray_NDIM(idx) != 1 or (itype != cnp.NPY_INT64 and itype != cnp.NPY_INT32):
            return False
        if not _plain(idx, cnp.NPY_INT64):
            idx = cnp.PyArray_FROM_OTF(idx, cnp.NPY_INT64, cnp.NPY_ARRAY_IN_ARRAY)
        cdef Py_ssize_t k = cnp.PyArray_DIMS(idx)[0], rows = cnp.PyArray_DIMS(var)[0]
        if not _same_dims(g, var, 1) or cnp.PyArray_DIMS(g)[0] != k:
            return False
        cdef Py_ssize_t width = cnp.PyArray_SIZE(var) // rows if rows else 0
        if rows >= 2 and (cnp.PyArray_SIZE(var) if self.rule == FG_ADAM else k * width) >= most:
            return False
        return _sparse_rows(self.rule, var, s0, s1, s2, g, idx, h) < 0
