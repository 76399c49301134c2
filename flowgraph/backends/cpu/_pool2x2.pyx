# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""2x2, stride-2 max pooling and its gradient on contiguous NHWC arrays, nogil.

The common pooling layer of convolutional networks gets loops of its own: each output
pixel's four taps are read at fixed offsets and folded over the channels in one
vectorized pass, where the general kernels of `_conv.pyx` (which this module must match
bit for bit) call a helper per tap and keep a table of tap offsets per window.

State it keeps
--------------
None. The caller (`kernels_conv.py`) passes C-contiguous float32 or float64 arrays of
one dtype: `x` of shape ``[n, h, w, c]``, the pooled ``[n, h // 2, w // 2, c]``, and
calls only for windows that all lie inside the input (VALID padding, or SAME on even
sizes: no padding then). Output pixel ``(y, x)`` reads the taps, in this order::

    t0 = x[2y, 2x]      t1 = x[2y, 2x + 1]
    t2 = x[2y + 1, 2x]  t3 = x[2y + 1, 2x + 1]

Matching the general kernels
----------------------------
* Forward: the maximum folds taps 0..3 as ``m = (v > m or v is NaN) ? v : m`` (the last
  NaN wins, a NaN is never replaced by a number), as `_conv.pool` does.
* Gradient: the route goes to the *first* maximum (``v > best``, or ``v`` the first
  NaN), as `_conv.max_pool_route` does. When the windows tile the input (even sizes)
  every element is stored once: the gradient at the maximum, ``+0.0`` elsewhere. With
  an odd size the general kernel zeroes ``dx`` and adds, so the maximum receives
  ``0.0 + g`` (``+0.0`` for ``g = -0.0``); this module computes the same, and zeroes
  the last row or column that no window covers.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._pool2x2 import max_pool_2x2
>>> x = np.arange(16.0).reshape(1, 4, 4, 1)
>>> out = np.empty((1, 2, 2, 1))
>>> max_pool_2x2(x, out)
>>> out[0, :, :, 0]
array([[ 5.,  7.],
       [13., 15.]])
"""

cimport numpy as cnp
from libc.string cimport memset

cnp.import_array()

cdef extern from *:
    """
    #include "_pool_steps.h"
    /* Forward over a run of `pixels` output pixels of one output row: taps at p0,
       p0 + c (row 2y) and p0 + row, p0 + row + c (row 2y + 1). */
    #define FG_MAX2X2_ROW(NAME, T)                                                     \
    FG_CLONES static void NAME(const T* restrict p0, Py_ssize_t row,               \
                                  T* restrict o, Py_ssize_t pixels, Py_ssize_t c) {   \
        for (Py_ssize_t p = 0; p < pixels; p++) {                                      \
            const T* a = p0 + 2 * p * c;                                               \
            const T* b = a + row;                                                      \
            T* out = o + p * c;                                                        \
            for (Py_ssize_t k = 0; k < c; k++) {                                       \
                T m = a[k], v;                                                         \
                v = a[c + k]; m = ((v > m) | (v != v)) ? v : m;                        \
                v = b[k];     m = ((v > m) | (v != v)) ? v : m;                        \
                v = b[c + k]; m = ((v > m) | (v != v)) ? v : m;                        \
                out[k] = m;                                                            \
            }                                                                          \
        }                                                                              \
    }
    FG_MAX2X2_ROW(fg_max2x2_row_f, float)
    FG_MAX2X2_ROW(fg_max2x2_row_d, double)

    /* A running first-argmax (4 taps) for the gradient: see _pool_steps.h. */
    FG_ARGMAX_STEP(fg_p2_argmax_f, float, inline)
    FG_ARGMAX_STEP(fg_p2_argmax_d, double, inline)
    #define FG_P2_STORE(T)                                                             \
        da[k0 + k] = tap[k] == (T)0 ? s : (T)0;                                        \
        da[c + k0 + k] = tap[k] == (T)1 ? s : (T)0;                                    \
        db[k0 + k] = tap[k] == (T)2 ? s : (T)0;                                        \
        db[c + k0 + k] = tap[k] == (T)3 ? s : (T)0;
    /* Gradient over one output row: g is the pooled gradient, d0 the first tap of the
       x-shaped result (same offsets as p0). `add` reproduces the zero-then-add of the
       general kernel (odd sizes): the maximum gets 0 + g. Channels go in blocks of 64
       through simple loops (one per tap), which the compiler vectorizes; one loop
       chaining all four taps it does not. */
    #define FG_MAX2X2_GRAD_ROW(NAME, ARGMAX, T)                                        \
    FG_CLONES static void NAME(const T* restrict p0, Py_ssize_t row,               \
                                  const T* restrict g, T* restrict d0,                \
                                  Py_ssize_t pixels, Py_ssize_t c, int add) {         \
        T best[64], tap[64];                                                           \
        for (Py_ssize_t p = 0; p < pixels; p++) {                                      \
            const T* a = p0 + 2 * p * c;                                               \
            const T* b = a + row;                                                      \
            const T* gp = g + p * c;                                                   \
            T* da = d0 + 2 * p * c;                                                    \
            T* db = da + row;                                                          \
            for (Py_ssize_t k0 = 0; k0 < c; k0 += 64) {                                \
                Py_ssize_t m = c - k0 < 64 ? c - k0 : 64;                              \
                for (Py_ssize_t k = 0; k < m; k++) {                                   \
                    best[k] = a[k0 + k];                                               \
                    tap[k] = 0;                                                        \
                }                                                                      \
                ARGMAX(a + c + k0, best, tap, 1, m);                                   \
                ARGMAX(b + k0, best, tap, 2, m);                                       \
                ARGMAX(b + c + k0, best, tap, 3, m);                                   \
                if (add) {                                                             \
                    for (Py_ssize_t k = 0; k < m; k++) {                               \
                        T s = (T)0 + gp[k0 + k];                                       \
                        FG_P2_STORE(T)                                                 \
                    }                                                                  \
                } else {                                                               \
                    for (Py_ssize_t k = 0; k < m; k++) {                               \
                        T s = gp[k0 + k];                                              \
                        FG_P2_STORE(T)                                                 \
                    }                                                                  \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    }
    FG_MAX2X2_GRAD_ROW(fg_max2x2_grad_row_f, fg_p2_argmax_f, float)
    FG_MAX2X2_GRAD_ROW(fg_max2x2_grad_row_d, fg_p2_argmax_d, double)
    """
    void fg_max2x2_row_f(const float* p0, Py_ssize_t row, float* o, Py_ssize_t pixels,
                         Py_ssize_t c) noexcept nogil
    void fg_max2x2_row_d(const double* p0, Py_ssize_t row, double* o, Py_ssize_t pixels,
                         Py_ssize_t c) noexcept nogil
    void fg_max2x2_grad_row_f(const float* p0, Py_ssize_t row, const float* g, float* d0,
                              Py_ssize_t pixels, Py_ssize_t c, int add) noexcept nogil
    void fg_max2x2_grad_row_d(const double* p0, Py_ssize_t row, const double* g,
                              double* d0, Py_ssize_t pixels, Py_ssize_t c,
                              int add) noexcept nogil


cdef int _check(cnp.ndarray a, tuple shape, str what) except -1:
    """ValueError unless `a` is C-contiguous native float32/float64 of `shape`."""
    if not cnp.PyArray_IS_C_CONTIGUOUS(a) or (<object>a).shape != shape or \
            cnp.PyArray_TYPE(a) not in (cnp.NPY_FLOAT32, cnp.NPY_FLOAT64) or \
            not cnp.PyArray_ISNOTSWAPPED(a):
        raise ValueError(f"_pool2x2: {what} must be C-contiguous native float32/float64 "
                         f"of shape {shape}, got {a.dtype} {(<object>a).shape} with "
                         f"strides {(<object>a).strides}")
    return 0


cdef tuple _pooled_shape(cnp.ndarray x):
    if cnp.PyArray_NDIM(x) != 4:
        raise ValueError(f"_pool2x2: x must be 4-D NHWC, got shape {(<object>x).shape}")
    n, h, w, c = (<object>x).shape
    return (n, h // 2, w // 2, c)


def max_pool_2x2(cnp.ndarray x, cnp.ndarray out):
    """``out[b, y, x] = max(x[b, 2y:2y+2, 2x:2x+2])`` per channel (a NaN wins)."""
    cdef tuple pooled = _pooled_shape(x)
    _check(x, (<object>x).shape, "x")
    _check(out, pooled, "out")
    if cnp.PyArray_TYPE(x) != cnp.PyArray_TYPE(out):
        raise ValueError(f"_pool2x2: x is {x.dtype} but out is {out.dtype}")
    cdef Py_ssize_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3]
    cdef Py_ssize_t oh = h // 2, ow = w // 2, b, y, src, dst
    cdef bint single = cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT32
    cdef char* xp = <char*>cnp.PyArray_DATA(x)
    cdef char* op = <char*>cnp.PyArray_DATA(out)
    with nogil:
        for b in range(n):
            for y in range(oh):
                src = (b * h + 2 * y) * w * c
                dst = (b * oh + y) * ow * c
                if single:
                    fg_max2x2_row_f(<const float*>xp + src, w * c, <float*>op + dst, ow, c)
                else:
                    fg_max2x2_row_d(<const double*>xp + src, w * c, <double*>op + dst,
                                    ow, c)


def max_pool_2x2_grad(cnp.ndarray x, cnp.ndarray dy, cnp.ndarray dx):
    """MaxPoolGrad: `dy` routed to each window's first maximum of `x`, into the
    x-shaped `dx` (every element written; see the module docstring for odd sizes)."""
    cdef tuple pooled = _pooled_shape(x)
    _check(x, (<object>x).shape, "x")
    _check(dy, pooled, "dy")
    _check(dx, (<object>x).shape, "dx")
    if cnp.PyArray_TYPE(x) != cnp.PyArray_TYPE(dy) or \
            cnp.PyArray_TYPE(x) != cnp.PyArray_TYPE(dx):
        raise ValueError(f"_pool2x2: x, dy and dx must share a dtype, got {x.dtype}, "
                         f"{dy.dtype} and {dx.dtype}")
    cdef Py_ssize_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3]
    cdef Py_ssize_t oh = h // 2, ow = w // 2, b, y, i, src, g
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(x)
    cdef bint single = cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT32
    cdef int add = (h % 2) or (w % 2)
    cdef char* xp = <char*>cnp.PyArray_DATA(x)
    cdef char* gp = <char*>cnp.PyArray_DATA(dy)
    cdef char* dp = <char*>cnp.PyArray_DATA(dx)
    with nogil:
        for b in range(n):
            for y in range(oh):
                src = (b * h + 2 * y) * w * c
                g = (b * oh + y) * ow * c
                if single:
                    fg_max2x2_grad_row_f(<const float*>xp + src, w * c,
                                         <const float*>gp + g, <float*>dp + src, ow, c, add)
                else:
                    fg_max2x2_grad_row_d(<const double*>xp + src, w * c,
                                         <const double*>gp + g, <double*>dp + src, ow, c,
                                         add)
                if w % 2:  # the last column of both rows: in no window
                    for i in range(2):
                        memset(dp + (src + i * w * c + (w - 1) * c) * item, 0, c * item)
            if h % 2:  # the last row: in no window
                memset(dp + (b * h + h - 1) * w * c * item, 0, w * c * item)
