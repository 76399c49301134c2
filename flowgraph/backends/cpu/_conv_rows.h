/* The im2col and col2im row loops of _conv.pyx for the common layout: NHWC with packed
   channels and unit horizontal dilation, where the in-bounds taps of one window row are
   one contiguous run of the input. One C function per dtype and instruction set
   (FG_CLONES), so the run copies and adds are inlined and vectorized; the output
   pixel (b, y, x) of a row advances with the row instead of being divided out of it
   (four divisions a row in the general loop). Each writes and adds exactly what the
   general loops of _conv.pyx do, in the same order, so results are the same bits. */
#ifndef FG_CONV_ROWS_H
#define FG_CONV_ROWS_H

#include "_pool_steps.h"

/* The geometry of _conv.pyx (`Geom`): the logical NHWC input, its element strides,
   then the window (size, strides, dilations, top/left padding, output size). */
typedef struct {
    Py_ssize_t n, h, w, c;
    Py_ssize_t sn, sh, sw, sc;
    Py_ssize_t kh, kw, sy, sx, dy, dx, pt, pl, oh, ow;
} fg_conv_geom;

/* In-bounds taps j0 <= j < j1 of a window row starting at input column x0 (unit
   dilation), as _conv.pyx's _span: j1 == j0 when none is. */
static inline void fg_conv_cols(const fg_conv_geom* g, Py_ssize_t x0, Py_ssize_t* j0,
                                Py_ssize_t* j1) {
    Py_ssize_t lo = x0 >= 0 ? 0 : -x0, hi = g->w - x0;
    if (hi > g->kw) hi = g->kw;
    *j0 = lo;
    *j1 = hi < lo ? lo : hi;
}

/* GCC turns plain copy and zero loops into memcpy/memset calls, which cost more than
   the copy for runs of a few hundred bytes; these stay inline loops. */
#if defined(__GNUC__) && !defined(__clang__)
#define FG_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define FG_NO_LIBCALLS
#endif

#define FG_IM2COL_PACKED(NAME, T)                                                      \
FG_CLONES FG_NO_LIBCALLS static void NAME(const T* restrict x, const fg_conv_geom* g,  \
                                          T* restrict cols, Py_ssize_t r0,             \
                                          Py_ssize_t rows) {                           \
    const Py_ssize_t c = g->c, kwc = g->kw * c, per = g->oh * g->ow;                   \
    Py_ssize_t b = r0 / per, y = (r0 - b * per) / g->ow, xo = r0 - b * per - y * g->ow;\
    T* restrict out = cols;                                                            \
    for (Py_ssize_t r = 0; r < rows; r++) {                                            \
        Py_ssize_t x0 = xo * g->sx - g->pl, j0, j1;                                    \
        fg_conv_cols(g, x0, &j0, &j1);                                                 \
        for (Py_ssize_t i = 0; i < g->kh; i++, out += kwc) {                           \
            Py_ssize_t iy = y * g->sy - g->pt + i * g->dy, k;                          \
            if (iy < 0 || iy >= g->h || j0 >= j1) {                                    \
                for (k = 0; k < kwc; k++) out[k] = 0;                                  \
                continue;                                                              \
            }                                                                          \
            const T* restrict src = x + b * g->sn + iy * g->sh + (x0 + j0) * c;        \
            T* restrict run = out + j0 * c;                                            \
            for (k = 0; k < j0 * c; k++) out[k] = 0;                                   \
            for (k = 0; k < (j1 - j0) * c; k++) run[k] = src[k];                       \
            for (k = j1 * c; k < kwc; k++) out[k] = 0;                                 \
        }                                                                              \
        if (++xo == g->ow) {                                                           \
            xo = 0;                                                                    \
            if (++y == g->oh) { y = 0; b++; }                                          \
        }                                                                              \
    }                                                                                  \
}

/* dx (C-contiguous NHWC, the geometry's input) += each row of cols over its window's
   in-bounds taps, row after row, window rows in order: the order of _conv.pyx. */
#define FG_COL2IM_PACKED(NAME, T)                                                      \
FG_CLONES FG_NO_LIBCALLS static void NAME(const T* restrict cols,                      \
                                          const fg_conv_geom* g, T* restrict dx,       \
                                          Py_ssize_t r0, Py_ssize_t rows) {            \
    const Py_ssize_t c = g->c, kwc = g->kw * c, per = g->oh * g->ow;                   \
    Py_ssize_t b = r0 / per, y = (r0 - b * per) / g->ow, xo = r0 - b * per - y * g->ow;\
    const T* restrict row = cols;                                                      \
    for (Py_ssize_t r = 0; r < rows; r++) {                                            \
        Py_ssize_t x0 = xo * g->sx - g->pl, j0, j1;                                    \
        fg_conv_cols(g, x0, &j0, &j1);                                                 \
        for (Py_ssize_t i = 0; i < g->kh; i++, row += kwc) {                           \
            Py_ssize_t iy = y * g->sy - g->pt + i * g->dy;                             \
            if (iy < 0 || iy >= g->h || j0 >= j1)                                      \
                continue;                                                              \
            T* restrict dst = dx + ((b * g->h + iy) * g->w + x0 + j0) * c;             \
            const T* restrict add = row + j0 * c;                                      \
            for (Py_ssize_t k = 0; k < (j1 - j0) * c; k++) dst[k] += add[k];           \
        }                                                                              \
        if (++xo == g->ow) {                                                           \
            xo = 0;                                                                    \
            if (++y == g->oh) { y = 0; b++; }                                          \
        }                                                                              \
    }                                                                                  \
}

#endif
