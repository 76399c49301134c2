# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The loops of the CPU convolution and pooling kernels (`kernels_conv.py`), nogil.

State it keeps
--------------
None. Every function takes a `geometry` tuple that the caller validated::

    (kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, out_h, out_w)

and float32/float64 arrays of one dtype. An input `x` is *logically* NHWC with any
element strides (an NCHW tensor can be passed as its ``transpose(0, 2, 3, 1)`` view,
without a copy); every other array is C-contiguous. The entry points check the
shapes, dtypes and layouts that the loops rely on (a mistake raises ValueError instead
of reading out of bounds). Padding is never materialized: a
tap that falls outside the input reads zero (convolution, im2col), is skipped (pooling)
or is dropped (col2im, the scatters).

The im2col layout
-----------------
Row ``r`` of a column matrix is output pixel ``r = (b * out_h + y) * out_w + x`` (rows
``r0 .. r0 + rows`` of the whole batch, so the caller can cut the batch into
cache-sized chunks anywhere); its ``kh * kw * c`` columns are the window's taps in
``(i, j, channel)`` order, which is the filter's ``[kh, kw, in, out]`` layout reshaped
to ``[kh * kw * in, out]``. For a 3x3 window, stride 1, padding 1 on a 4x4 input::

    row (b, 0, 0):  [0 0 0 | 0 x00 x01 | 0 x10 x11]     (each entry: `c` channels)

In NHWC with unit horizontal dilation, the taps ``j0 .. j1`` of one window row are one
contiguous run of the input: im2col copies it and col2im adds into it in the C loops of
`_conv_rows.h` (inlined vector copies, no division per row); other layouts take the
general loops here, which give the same bits.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._conv import im2col
>>> x = np.arange(4.0).reshape(1, 2, 2, 1)
>>> cols = np.empty((4, 4))
>>> im2col(x, cols, 0, (2, 2, 1, 1, 1, 1, 0, 0, 2, 2))   # 2x2 window, SAME-like pad
>>> cols[3]
array([3., 0., 0., 0.])
"""

cimport numpy as cnp
from cython cimport floating
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cnp.import_array()


cdef extern from *:
    """
    #include "_conv_rows.h"
    FG_IM2COL_PACKED(fg_im2col_packed_f, float)
    FG_IM2COL_PACKED(fg_im2col_packed_d, double)
    FG_COL2IM_PACKED(fg_col2im_packed_f, float)
    FG_COL2IM_PACKED(fg_col2im_packed_d, double)
    """
    ctypedef struct Geom "fg_conv_geom":
        Py_ssize_t n, h, w, c            # the logical NHWC input
        Py_ssize_t sn, sh, sw, sc        # its element strides
        Py_ssize_t kh, kw, sy, sx, dy, dx, pt, pl, oh, ow
    void fg_im2col_packed_f(const float* x, const Geom* g, float* cols, Py_ssize_t r0,
                            Py_ssize_t rows) noexcept nogil
    void fg_im2col_packed_d(const double* x, const Geom* g, double* cols, Py_ssize_t r0,
                            Py_ssize_t rows) noexcept nogil
    void fg_col2im_packed_f(const float* cols, const Geom* g, float* dx, Py_ssize_t r0,
                            Py_ssize_t rows) noexcept nogil
    void fg_col2im_packed_d(const double* cols, const Geom* g, double* dx, Py_ssize_t r0,
                            Py_ssize_t rows) noexcept nogil


cdef Geom _geom(cnp.ndarray x, tuple geometry) except *:
    cdef Geom g
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(x)
    if cnp.PyArray_NDIM(x) != 4 or any(s % item for s in (<object>x).strides) or \
            not cnp.PyArray_ISALIGNED(x) or not cnp.PyArray_ISNOTSWAPPED(x):
        raise ValueError(f"_conv: expected an aligned native-order 4-D array, got shape "
                         f"{(<object>x).shape}, strides {(<object>x).strides}")
    g.n, g.h, g.w, g.c = x.shape[0], x.shape[1], x.shape[2], x.shape[3]
    g.sn, g.sh = x.strides[0] // item, x.strides[1] // item
    g.sw, g.sc = x.strides[2] // item, x.strides[3] // item
    g.kh, g.kw, g.sy, g.sx, g.dy, g.dx, g.pt, g.pl, g.oh, g.ow = geometry
    return g


cdef int _check(cnp.ndarray x, tuple shape, str what) except -1:
    """ValueError unless `x` is C-contiguous with `shape` (None: any size there)."""
    ok = cnp.PyArray_IS_C_CONTIGUOUS(x) and cnp.PyArray_NDIM(x) == len(shape) and all(
        want is None or have == want for have, want in zip((<object>x).shape, shape))
    if not ok:
        raise ValueError(f"_conv: {what} must be C-contiguous of shape {shape}, got "
                         f"{(<object>x).shape} with strides {(<object>x).strides}")
    return 0


cdef int _same_dtype(cnp.ndarray a, cnp.ndarray b) except -1:
    if cnp.PyArray_TYPE(a) != cnp.PyArray_TYPE(b) or cnp.PyArray_TYPE(a) not in (
            cnp.NPY_FLOAT32, cnp.NPY_FLOAT64):
        raise ValueError(f"_conv: expected float32 or float64 arrays of one dtype, got "
                         f"{a.dtype} and {b.dtype}")
    return 0


cdef inline Py_ssize_t _imin(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a < b else b


cdef inline void _span(Py_ssize_t start, Py_ssize_t k, Py_ssize_t d, Py_ssize_t n,
                       Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """Taps ``lo <= t < hi`` with ``0 <= start + t * d < n``."""
    lo[0] = 0 if start >= 0 else (-start + d - 1) // d
    hi[0] = 0 if start >= n else _imin(k, (n - 1 - start) // d + 1)
    if hi[0] < lo[0]:
        hi[0] = lo[0]


cdef inline Py_ssize_t _row_window(const Geom* g, Py_ssize_t row, Py_ssize_t* b,
                                   Py_ssize_t* y, Py_ssize_t* j0,
                                   Py_ssize_t* j1) noexcept nogil:
    """Output row `row` (batch, out_y, out_x flattened) as its batch `b`, output row `y`,
    in-bounds column taps ``j0 <= j < j1``; returns the window's first input column."""
    cdef Py_ssize_t per_image = g.oh * g.ow
    b[0] = row // per_image
    row -= b[0] * per_image
    y[0] = row // g.ow
    cdef Py_ssize_t x0 = (row - y[0] * g.ow) * g.sx - g.pl
    _span(x0, g.kw, g.dx, g.w, j0, j1)
    return x0


# -- im2col / col2im ----------------------------------------------------------------------
cdef void _im2col(const floating* x, const Geom* g, floating* cols, Py_ssize_t r0,
                  Py_ssize_t rows) noexcept nogil:
    cdef Py_ssize_t c = g.c, kwc = g.kw * g.c, ncol = g.kh * g.kw * g.c
    cdef Py_ssize_t r, b, y, i, j, k, iy, x0, j0, j1
    cdef floating* row
    cdef floating* dst
    cdef const floating* src
    if g.sc == 1 and g.sw == c and g.dx == 1:  # window rows are contiguous runs
        if floating is float:
            fg_im2col_packed_f(x, g, cols, r0, rows)
        else:
            fg_im2col_packed_d(x, g, cols, r0, rows)
        return
    for r in range(rows):
        x0 = _row_window(g, r0 + r, &b, &y, &j0, &j1)
        for i in range(g.kh):
            row = cols + r * ncol + i * kwc
            iy = y * g.sy - g.pt + i * g.dy
            if iy < 0 or iy >= g.h or j0 >= j1:
                memset(row, 0, kwc * sizeof(floating))
                continue
            src = x + b * g.sn + iy * g.sh
            if j0 > 0:
                memset(row, 0, j0 * c * sizeof(floating))
            if j1 < g.kw:
                memset(row + j1 * c, 0, (g.kw - j1) * c * sizeof(floating))
            for j in range(j0, j1):
                dst = row + j * c
                for k in range(c):
                    dst[k] = src[(x0 + j * g.dx) * g.sw + k * g.sc]


cdef void _col2im(const floating* cols, const Geom* g, floating* dx, Py_ssize_t r0,
                  Py_ssize_t rows) noexcept nogil:
    """``dx[window taps of row r] += cols[r]`` for a C-contiguous NHWC `dx`."""
    cdef Py_ssize_t c = g.c, kwc = g.kw * g.c, ncol = g.kh * g.kw * g.c
    cdef Py_ssize_t r, b, y, i, j, k, iy, x0, j0, j1
    cdef const floating* row
    cdef floating* dst
    if g.dx == 1:  # the taps of a window row are one contiguous run of dx
        if floating is float:
            fg_col2im_packed_f(cols, g, dx, r0, rows)
        else:
            fg_col2im_packed_d(cols, g, dx, r0, rows)
        return
    for r in range(rows):
        x0 = _row_window(g, r0 + r, &b, &y, &j0, &j1)
        for i in range(g.kh):
            iy = y * g.sy - g.pt + i * g.dy
            if iy < 0 or iy >= g.h:
                continue
            row = cols + r * ncol + i * kwc
            for j in range(j0, j1):
                dst = dx + ((b * g.h + iy) * g.w + x0 + j * g.dx) * c
                for k in range(c):
                    dst[k] += row[j * c + k]


def im2col(cnp.ndarray x, cnp.ndarray cols, Py_ssize_t r0, tuple geometry):
    """Fill `cols` (C-contiguous ``[rows, kh * kw * c]``) with the windows of output
    rows ``r0 .. r0 + rows`` of the logically-NHWC `x` (zeros where a tap is padding)."""
    cdef Geom g = _geom(x, geometry)
    cdef Py_ssize_t rows = cols.shape[0]
    _same_dtype(x, cols)
    _check(cols, (None, g.kh * g.kw * g.c), "cols")
    if r0 < 0 or r0 + rows > g.n * g.oh * g.ow:
        raise ValueError(f"_conv.im2col: rows {r0}..{r0 + rows} of {g.n * g.oh * g.ow}")
    if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT32:
        with nogil:
            _im2col(<const float*>cnp.PyArray_DATA(x), &g, <float*>cnp.PyArray_DATA(cols),
                    r0, rows)
    else:
        with nogil:
            _im2col(<const double*>cnp.PyArray_DATA(x), &g, <double*>cnp.PyArray_DATA(cols),
                    r0, rows)


def col2im(cnp.ndarray cols, cnp.ndarray dx, Py_ssize_t r0, tuple geometry):
    """Add each row of `cols` (as `im2col` laid it out) into the taps of its window in
    the C-contiguous NHWC `dx`; taps in the padding are dropped."""
    cdef Geom g = _geom(dx, geometry)
    cdef Py_ssize_t rows = cols.shape[0]
    _same_dtype(dx, cols)
    _check(dx, (None, None, None, None), "dx")
    _check(cols, (None, g.kh * g.kw * g.c), "cols")
    if r0 < 0 or r0 + rows > g.n * g.oh * g.ow:
        raise ValueError(f"_conv.col2im: rows {r0}..{r0 + rows} of {g.n * g.oh * g.ow}")
    if cnp.PyArray_TYPE(dx) == cnp.NPY_FLOAT32:
        with nogil:
            _col2im(<const float*>cnp.PyArray_DATA(cols), &g, <float*>cnp.PyArray_DATA(dx),
                    r0, rows)
    else:
        with nogil:
            _col2im(<const double*>cnp.PyArray_DATA(cols), &g,
                    <double*>cnp.PyArray_DATA(dx), r0, rows)


# -- pooling ------------------------------------------------------------------------------
cdef extern from *:
    """
    #include "_pool_steps.h"
    FG_ARGMAX_STEP(fg_argmax_step_f, float, FG_CLONES)
    FG_ARGMAX_STEP(fg_argmax_step_d, double, FG_CLONES)

    /* One tap of a running maximum over c contiguous channels (a NaN wins, as np.max). */
    #define FG_MAX_STEP(NAME, T)                                                       \
    FG_CLONES static void NAME(const T* restrict px, T* restrict best, Py_ssize_t c) { \
        for (Py_ssize_t k = 0; k < c; k++) {                                           \
            T v = px[k], o = best[k];                                                  \
            best[k] = ((v > o) | (v != v)) ? v : o;                                    \
        }                                                                              \
    }
    FG_MAX_STEP(fg_max_step_f, float)
    FG_MAX_STEP(fg_max_step_d, double)

    /* Tap t's share of a window's routing over c channels: scatter adds src[k] where
       tap[k] == t (mode 0), or stores it there and zero elsewhere (mode 2, for windows
       that tile the input: each element is written once, no zero fill first); gather
       (mode 1) picks src[k] there. One masked pass per tap, no indexed loads or
       stores, so it vectorizes too. */
    #define FG_ROUTE_TAP(NAME, T)                                                      \
    FG_CLONES static void NAME(const T* restrict tap, T t, const T* restrict src,     \
                            T* restrict dst, Py_ssize_t c, int mode) {                 \
        /* Both loads happen unconditionally, or the compiler keeps the branch. */     \
        if (mode == 1) {                                                               \
            for (Py_ssize_t k = 0; k < c; k++) {                                       \
                T s = src[k], d = dst[k];                                              \
                dst[k] = tap[k] == t ? s : d;                                          \
            }                                                                          \
        } else if (mode == 2) {                                                        \
            for (Py_ssize_t k = 0; k < c; k++) {                                       \
                T s = src[k];                                                          \
                dst[k] = tap[k] == t ? s : (T)0;                                       \
            }                                                                          \
        } else {                                                                       \
            for (Py_ssize_t k = 0; k < c; k++) {                                       \
                T s = src[k];                                                          \
                dst[k] += tap[k] == t ? s : (T)0;                                      \
            }                                                                          \
        }                                                                              \
    }
    FG_ROUTE_TAP(fg_route_tap_f, float)
    FG_ROUTE_TAP(fg_route_tap_d, double)
    """
    void fg_argmax_step_f(const float* px, float* best, float* tap, float t,
                          Py_ssize_t c) noexcept nogil
    void fg_argmax_step_d(const double* px, double* best, double* tap, double t,
                          Py_ssize_t c) noexcept nogil
    void fg_route_tap_f(const float* tap, float t, const float* src, float* dst,
                        Py_ssize_t c, int mode) noexcept nogil
    void fg_route_tap_d(const double* tap, double t, const double* src, double* dst,
                        Py_ssize_t c, int mode) noexcept nogil
    void fg_max_step_f(const float* px, float* best, Py_ssize_t c) noexcept nogil
    void fg_max_step_d(const double* px, double* best, Py_ssize_t c) noexcept nogil


cdef inline void _fold(floating* o, const floating* src, Py_ssize_t c, Py_ssize_t sc,
                       bint average) noexcept nogil:
    """``o = o + src`` or ``o = max(o, src)`` (a NaN wins, as np.max) over `c` channels."""
    cdef Py_ssize_t k
    cdef floating v
    if sc == 1:  # the NHWC case, as a separate loop so the compiler vectorizes it
        if average:
            for k in range(c):
                o[k] += src[k]
        elif floating is float:
            fg_max_step_f(src, o, c)
        else:
            fg_max_step_d(src, o, c)
    elif average:
        for k in range(c):
            o[k] += src[k * sc]
    else:
        for k in range(c):
            v = src[k * sc]
            o[k] = v if (v > o[k] or v != v) else o[k]


cdef void _pool(const floating* x, const Geom* g, floating* out, bint average) noexcept nogil:
    """Max or mean over the in-bounds taps of every window (`out`: contiguous NHWC)."""
    cdef Py_ssize_t c = g.c, b, y, xo, i, j, k, i0, i1, j0, j1
    cdef floating scale
    cdef floating* o
    cdef const floating* src
    for b in range(g.n):
        for y in range(g.oh):
            _span(y * g.sy - g.pt, g.kh, 1, g.h, &i0, &i1)
            for xo in range(g.ow):
                _span(xo * g.sx - g.pl, g.kw, 1, g.w, &j0, &j1)
                o = out + ((b * g.oh + y) * g.ow + xo) * c
                if i0 >= i1 or j0 >= j1:
                    for k in range(c):
                        o[k] = 0
                    continue
                src = x + b * g.sn + (y * g.sy - g.pt + i0) * g.sh + \
                    (xo * g.sx - g.pl + j0) * g.sw
                if g.sc == 1:
                    memcpy(o, src, c * sizeof(floating))
                else:
                    for k in range(c):
                        o[k] = src[k * g.sc]
                for i in range(i0, i1):
                    for j in range(j0, j1):
                        if i != i0 or j != j0:
                            _fold(o, x + b * g.sn + (y * g.sy - g.pt + i) * g.sh +
                                  (xo * g.sx - g.pl + j) * g.sw, c, g.sc, average)
                if average:
                    scale = 1
                    scale /= (i1 - i0) * (j1 - j0)
                    for k in range(c):
                        o[k] *= scale


cdef void _avg_pool_grad(const floating* dy, const Geom* g, floating* dx) noexcept nogil:
    """``dx[tap] += dy[window] / count`` over in-bounds taps (`dx`: zeroed NHWC)."""
    cdef Py_ssize_t c = g.c, b, y, xo, i, j, k, i0, i1, j0, j1
    cdef floating scale
    cdef const floating* src
    cdef floating* dst
    for b in range(g.n):
        for y in range(g.oh):
            _span(y * g.sy - g.pt, g.kh, 1, g.h, &i0, &i1)
            for xo in range(g.ow):
                _span(xo * g.sx - g.pl, g.kw, 1, g.w, &j0, &j1)
                if i0 >= i1 or j0 >= j1:
                    continue
                src = dy + ((b * g.oh + y) * g.ow + xo) * c
                scale = 1
                scale /= (i1 - i0) * (j1 - j0)
                for i in range(i0, i1):
                    for j in range(j0, j1):
                        dst = dx + ((b * g.h + y * g.sy - g.pt + i) * g.w +
                                    xo * g.sx - g.pl + j) * c
                        for k in range(c):
                            dst[k] += src[k] * scale


cdef inline void _argmax_step(const floating* px, Py_ssize_t sc, floating* best,
                              floating* tap, floating t, Py_ssize_t c) noexcept nogil:
    """One tap (number `t`) of a running first-argmax over `c` channels. The tap number
    is kept in the data's own float type so that the loop vectorizes (one select per
    lane; tap numbers are small integers, exact in any float type)."""
    cdef Py_ssize_t k
    cdef floating v, o
    if sc == 1:
        if floating is float:
            fg_argmax_step_f(px, best, tap, t, c)
        else:
            fg_argmax_step_d(px, best, tap, t, c)
        return
    for k in range(c):
        v = px[k * sc]
        o = best[k]
        if v > o or (v != v and o == o):
            best[k] = v
            tap[k] = t


cdef inline void _route_tap(const floating* tap, Py_ssize_t t, const floating* src,
                            floating* dst, Py_ssize_t c, int mode) noexcept nogil:
    if floating is float:
        fg_route_tap_f(tap, <float>t, src, dst, c, mode)
    else:
        fg_route_tap_d(tap, <double>t, src, dst, c, mode)


cdef int _max_route(const floating* x, const Geom* g, const floating* src, floating* dst,
                    int mode) noexcept nogil:
    """Route through each window's first maximum (row-major over its in-bounds taps; a
    NaN counts as the maximum): scatter ``dst[argmax] += src[window]`` (mode 0, `dst`:
    zeroed NHWC like `x`; mode 2, windows that tile `x`: each tap of `dst` stored once,
    zero where it is not the maximum, nothing zeroed first), or gather (mode 1)
    ``dst[window] = src[argmax]`` (`src` NHWC like `x`). Returns -1 when out of memory."""
    cdef bint gather = mode == 1
    cdef Py_ssize_t c = g.c, b, y, xo, i, j, k, i0, i1, j0, j1, iy, ix, win, nt
    cdef floating* best = <floating*>malloc((2 * c + 1) * sizeof(floating))
    cdef floating* tap = best + c
    cdef Py_ssize_t* base = <Py_ssize_t*>malloc(g.kh * g.kw * sizeof(Py_ssize_t))
    if best == NULL or base == NULL:
        free(best)
        free(base)
        return -1
    for b in range(g.n):
        for y in range(g.oh):
            _span(y * g.sy - g.pt, g.kh, 1, g.h, &i0, &i1)
            for xo in range(g.ow):
                _span(xo * g.sx - g.pl, g.kw, 1, g.w, &j0, &j1)
                win = ((b * g.oh + y) * g.ow + xo) * c
                if i0 >= i1 or j0 >= j1:
                    if gather:
                        for k in range(c):
                            dst[win + k] = 0
                    continue
                nt = 0
                for i in range(i0, i1):
                    iy = y * g.sy - g.pt + i
                    for j in range(j0, j1):
                        ix = xo * g.sx - g.pl + j
                        base[nt] = ((b * g.h + iy) * g.w + ix) * c  # in contiguous NHWC
                        if nt == 0 and g.sc == 1:
                            memcpy(best, x + b * g.sn + iy * g.sh + ix * g.sw,
                                   c * sizeof(floating))
                            memset(tap, 0, c * sizeof(floating))  # all-zero bits: 0.0
                        elif nt == 0:
                            for k in range(c):
                                best[k] = x[b * g.sn + iy * g.sh + ix * g.sw + k * g.sc]
                                tap[k] = 0
                        else:
                            _argmax_step(x + b * g.sn + iy * g.sh + ix * g.sw, g.sc, best,
                                         tap, <floating>nt, c)
                        nt += 1
                for i in range(nt):
                    if gather:
                        _route_tap(tap, i, src + base[i], dst + win, c, mode)
                    else:
                        _route_tap(tap, i, src + win, dst + base[i], c, mode)
    free(best)
    free(base)
    return 0


def pool(cnp.ndarray x, cnp.ndarray out, tuple geometry, bint average):
    """Max (or, with `average`, mean) pooling of the logically-NHWC `x` into the
    C-contiguous NHWC `out`, over each window's in-bounds taps."""
    cdef Geom g = _geom(x, geometry)
    _same_dtype(x, out)
    _check(out, (g.n, g.oh, g.ow, g.c), "out")
    if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT32:
        with nogil:
            _pool(<const float*>cnp.PyArray_DATA(x), &g, <float*>cnp.PyArray_DATA(out),
                  average)
    else:
        with nogil:
            _pool(<const double*>cnp.PyArray_DATA(x), &g, <double*>cnp.PyArray_DATA(out),
                  average)


def avg_pool_grad(cnp.ndarray dy, cnp.ndarray dx, tuple geometry):
    """Add each window's share of the contiguous NHWC `dy` into the zeroed NHWC `dx`."""
    cdef Geom g = _geom(dx, geometry)
    _same_dtype(dx, dy)
    _check(dx, (None, None, None, None), "dx")
    _check(dy, (g.n, g.oh, g.ow, g.c), "dy")
    if cnp.PyArray_TYPE(dx) == cnp.NPY_FLOAT32:
        with nogil:
            _avg_pool_grad(<const float*>cnp.PyArray_DATA(dy), &g,
                           <float*>cnp.PyArray_DATA(dx))
    else:
        with nogil:
            _avg_pool_grad(<const double*>cnp.PyArray_DATA(dy), &g,
                           <double*>cnp.PyArray_DATA(dx))


def max_pool_route(cnp.ndarray x, cnp.ndarray src, cnp.ndarray dst, tuple geometry,
                   bint gather):
    """MaxPoolGrad (scatter the pooled-shape `src` into the x-shaped `dst`) or, with
    `gather`, MaxPoolGradGrad (read the x-shaped `src` into the pooled `dst`); every
    element of `dst` is written. When the windows tile the input (stride = window, no
    overlap, every element in one window: 2x2 stride-2 pooling of an even size), the
    scatter stores each element once instead of zeroing `dst` and adding into it."""
    cdef Geom g = _geom(x, geometry)
    cdef int status, mode = 1 if gather else 0
    cdef size_t size = cnp.PyArray_NBYTES(dst)
    cdef tuple pooled = (g.n, g.oh, g.ow, g.c), full = (g.n, g.h, g.w, g.c)
    _same_dtype(x, src)
    _same_dtype(x, dst)
    _check(src, full if gather else pooled, "src")
    _check(dst, pooled if gather else full, "dst")
    if not gather and g.sy == g.kh and g.sx == g.kw and g.h + g.pt <= g.oh * g.sy and \
            g.w + g.pl <= g.ow * g.sx:
        mode = 2
    if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT32:
        with nogil:
            if mode != 2:
                memset(cnp.PyArray_DATA(dst), 0, size)
            status = _max_route(<const float*>cnp.PyArray_DATA(x), &g,
                                <const float*>cnp.PyArray_DATA(src),
                                <float*>cnp.PyArray_DATA(dst), mode)
    else:
        with nogil:
            if mode != 2:
                memset(cnp.PyArray_DATA(dst), 0, size)
            status = _max_route(<const double*>cnp.PyArray_DATA(x), &g,
                                <const double*>cnp.PyArray_DATA(src),
                                <double*>cnp.PyArray_DATA(dst), mode)
    if status:
        raise MemoryError(f"max_pool_route: no memory for {g.c} channels of scratch")
