/* The Winograd F(2x2, 3x3) tile transforms of _conv_winograd.pyx (see its docstring for
   the matrices, the tile numbering and the stacks' layout).

   Each transform runs per tile over the channels in blocks of FG_WG_BLOCK: a full block
   goes through the block function with that constant size, so the compiler unrolls it
   into a few vector instructions per row (one AVX-512 register of floats); the last,
   partial block gets the same function with its size. Additions and subtractions only,
   each lane on its own: a channel's result does not depend on its block.

   A stack's 16 matrices lie `stride` elements apart, which the caller makes an odd
   number of cache lines: a tile writes (or reads) one row in each of the 16, and at a
   power-of-two distance (256 tiles of 32 floats: 32 KB) all 16 rows fall in one set of
   the 8-way L1 and evict each other (the transforms took twice as long). */
#ifndef FG_CONV_WINOGRAD_H
#define FG_CONV_WINOGRAD_H

#include "_pool_steps.h"

#define FG_WG_BLOCK 16
#define FG_WG_INLINE static inline __attribute__((always_inline))

/* The tile after t: (b, ty, tx) in row-major order over th x tw tiles per image. */
#define FG_WG_NEXT(b, ty, tx, th, tw)                                                  \
    if (++tx == tw) {                                                                  \
        tx = 0;                                                                        \
        if (++ty == th) { ty = 0; b++; }                                               \
    }

/* V = B^T d B over channels k0 .. k0 + m of the tile whose patch starts at (y0, x0). */
#define FG_WG_INPUT_BLOCK(NAME, T)                                                     \
FG_WG_INLINE void NAME(const T* restrict img, Py_ssize_t h, Py_ssize_t w, Py_ssize_t c,\
                       Py_ssize_t sh, Py_ssize_t y0, Py_ssize_t x0, Py_ssize_t k0,      \
                       Py_ssize_t m, T* restrict v, Py_ssize_t stride) {               \
    T d[16][FG_WG_BLOCK], e[16][FG_WG_BLOCK];                                          \
    for (int q = 0; q < 16; q++) {                                                     \
        Py_ssize_t iy = y0 + q / 4, ix = x0 + q % 4;                                   \
        if (iy < 0 || iy >= h || ix < 0 || ix >= w) {                                  \
            for (Py_ssize_t k = 0; k < m; k++) d[q][k] = 0;                            \
        } else {                                                                       \
            const T* restrict px = img + iy * sh + ix * c + k0;                        \
            for (Py_ssize_t k = 0; k < m; k++) d[q][k] = px[k];                        \
        }                                                                              \
    }                                                                                  \
    for (int s = 0; s < 4; s++) {  /* e = B^T d: combine rows */                       \
        for (Py_ssize_t k = 0; k < m; k++) {                                           \
            T a0 = d[s][k], a1 = d[4 + s][k], a2 = d[8 + s][k], a3 = d[12 + s][k];     \
            e[s][k] = a0 - a2;                                                         \
            e[4 + s][k] = a1 + a2;                                                     \
            e[8 + s][k] = a2 - a1;                                                     \
            e[12 + s][k] = a1 - a3;                                                    \
        }                                                                              \
    }                                                                                  \
    for (int r = 0; r < 4; r++) {  /* V = e B: combine columns */                      \
        T* restrict v0 = v + 4 * r * stride + k0;                                      \
        for (Py_ssize_t k = 0; k < m; k++) {                                           \
            T a0 = e[4 * r][k], a1 = e[4 * r + 1][k];                                  \
            T a2 = e[4 * r + 2][k], a3 = e[4 * r + 3][k];                              \
            v0[k] = a0 - a2;                                                           \
            v0[stride + k] = a1 + a2;                                                  \
            v0[2 * stride + k] = a2 - a1;                                              \
            v0[3 * stride + k] = a1 - a3;                                              \
        }                                                                              \
    }                                                                                  \
}

/* V (16 x count x c, matrices `stride` apart) of tiles t0 .. t0 + count of x (NHWC, packed channels, element
   strides sn, sh per image and row), patches starting at (2 ty - pt, 2 tx - pl). */
#define FG_WG_INPUT(NAME, BLOCK, T)                                                    \
FG_WG_INPUT_BLOCK(BLOCK, T)                                                            \
FG_CLONES static void NAME(const T* restrict x, Py_ssize_t h, Py_ssize_t w,           \
                           Py_ssize_t c, Py_ssize_t sn, Py_ssize_t sh, Py_ssize_t pt,  \
                           Py_ssize_t pl, Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, \
                           Py_ssize_t count, T* restrict v, Py_ssize_t stride) {       \
    Py_ssize_t per = th * tw, b = t0 / per, ty = (t0 - b * per) / tw;                  \
    Py_ssize_t tx = t0 - b * per - ty * tw;                                            \
    for (Py_ssize_t t = 0; t < count; t++) {                                           \
        Py_ssize_t y0 = 2 * ty - pt, x0 = 2 * tx - pl, k0 = 0;                         \
        for (; k0 + FG_WG_BLOCK <= c; k0 += FG_WG_BLOCK)                               \
            BLOCK(x + b * sn, h, w, c, sh, y0, x0, k0, FG_WG_BLOCK, v + t * c, stride);\
        if (k0 < c)                                                                    \
            BLOCK(x + b * sn, h, w, c, sh, y0, x0, k0, c - k0, v + t * c, stride);     \
        FG_WG_NEXT(b, ty, tx, th, tw)                                                  \
    }                                                                                  \
}

/* Y = A^T M A over channels k0 .. k0 + m of one tile, into the outputs of the tile
   that lie inside out (o: its top-left output, ok: which of its 4 outputs are in). */
#define FG_WG_OUTPUT_BLOCK(NAME, T)                                                    \
FG_WG_INLINE void NAME(const T* restrict mm, Py_ssize_t stride, Py_ssize_t k0,        \
                       Py_ssize_t m, T* restrict o, Py_ssize_t row, Py_ssize_t c,       \
                       const int* ok) {                                                \
    T e[8][FG_WG_BLOCK], y[4][FG_WG_BLOCK];                                            \
    for (int s = 0; s < 4; s++) {  /* e = A^T M: combine rows */                       \
        const T* restrict m0 = mm + s * stride + k0;                                   \
        for (Py_ssize_t k = 0; k < m; k++) {                                           \
            T a0 = m0[k], a1 = m0[4 * stride + k];                                     \
            T a2 = m0[8 * stride + k], a3 = m0[12 * stride + k];                       \
            e[s][k] = a0 + a1 + a2;                                                    \
            e[4 + s][k] = a1 - a2 - a3;                                                \
        }                                                                              \
    }                                                                                  \
    for (int r = 0; r < 2; r++) {  /* Y = e A: combine columns */                      \
        for (Py_ssize_t k = 0; k < m; k++) {                                           \
            T a0 = e[4 * r][k], a1 = e[4 * r + 1][k];                                  \
            T a2 = e[4 * r + 2][k], a3 = e[4 * r + 3][k];                              \
            y[2 * r][k] = a0 + a1 + a2;                                                \
            y[2 * r + 1][k] = a1 - a2 - a3;                                            \
        }                                                                              \
    }                                                                                  \
    for (int q = 0; q < 4; q++) {                                                      \
        if (ok[q]) {                                                                   \
            T* restrict dst = o + (q / 2) * row + (q % 2) * c + k0;                    \
            for (Py_ssize_t k = 0; k < m; k++) dst[k] = y[q][k];                       \
        }                                                                              \
    }                                                                                  \
}

/* The outputs of tiles t0 .. t0 + count from M (16 x count x c, `stride`) into the C-contiguous
   NHWC out [n, oh, ow, c]; outputs past oh or ow are dropped. */
#define FG_WG_OUTPUT(NAME, BLOCK, T)                                                   \
FG_WG_OUTPUT_BLOCK(BLOCK, T)                                                           \
FG_CLONES static void NAME(const T* restrict mm, Py_ssize_t oh, Py_ssize_t ow,        \
                           Py_ssize_t c, Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0,  \
                           Py_ssize_t count, Py_ssize_t stride, T* restrict out) {     \
    Py_ssize_t per = th * tw, b = t0 / per, ty = (t0 - b * per) / tw;                  \
    Py_ssize_t tx = t0 - b * per - ty * tw;                                            \
    for (Py_ssize_t t = 0; t < count; t++) {                                           \
        int down = 2 * ty + 1 < oh, right = 2 * tx + 1 < ow;                           \
        int ok[4] = {1, right, down, down && right};                                   \
        T* o = out + ((b * oh + 2 * ty) * ow + 2 * tx) * c;                            \
        Py_ssize_t k0 = 0;                                                             \
        for (; k0 + FG_WG_BLOCK <= c; k0 += FG_WG_BLOCK)                               \
            BLOCK(mm + t * c, stride, k0, FG_WG_BLOCK, o, ow * c, c, ok);              \
        if (k0 < c)                                                                    \
            BLOCK(mm + t * c, stride, k0, c - k0, o, ow * c, c, ok);                   \
        FG_WG_NEXT(b, ty, tx, th, tw)                                                  \
    }                                                                                  \
}

/* W = A g A^T over channels k0 .. k0 + m of one tile's 2x2 block g of dy (g: its top-
   left element, ok: which of the 4 lie inside dy; the others read zero). */
#define FG_WG_GRAD_BLOCK(NAME, T)                                                      \
FG_WG_INLINE void NAME(const T* restrict g, Py_ssize_t row, Py_ssize_t c,              \
                       const int* ok, Py_ssize_t k0, Py_ssize_t m, T* restrict w,       \
                       Py_ssize_t stride) {                                            \
    T d[4][FG_WG_BLOCK], e[8][FG_WG_BLOCK];                                            \
    for (int q = 0; q < 4; q++) {                                                      \
        if (ok[q]) {                                                                   \
            const T* restrict px = g + (q / 2) * row + (q % 2) * c + k0;               \
            for (Py_ssize_t k = 0; k < m; k++) d[q][k] = px[k];                        \
        } else {                                                                       \
            for (Py_ssize_t k = 0; k < m; k++) d[q][k] = 0;                            \
        }                                                                              \
    }                                                                                  \
    for (int j = 0; j < 2; j++) {  /* e = A g: rows */                                 \
        for (Py_ssize_t k = 0; k < m; k++) {                                           \
            T a0 = d[j][k], a1 = d[2 + j][k];                                          \
            e[j][k] = a0;                                                              \
            e[2 + j][k] = a0 + a1;                                                     \
            e[4 + j][k] = a0 - a1;                                                     \
            e[6 + j][k] = -a1;                                                         \
        }                                                                              \
    }                                                                                  \
    for (int r = 0; r < 4; r++) {  /* W = e A^T: columns */                            \
        T* restrict w0 = w + 4 * r * stride + k0;                                      \
        for (Py_ssize_t k = 0; k < m; k++) {                                           \
            T a0 = e[2 * r][k], a1 = e[2 * r + 1][k];                                  \
            w0[k] = a0;                                                                \
            w0[stride + k] = a0 + a1;                                                  \
            w0[2 * stride + k] = a0 - a1;                                              \
            w0[3 * stride + k] = -a1;                                                  \
        }                                                                              \
    }                                                                                  \
}

/* W (16 x count x c, `stride`) of tiles t0 .. t0 + count of the C-contiguous NHWC gradient
   dy [n, oh, ow, c]. */
#define FG_WG_GRAD(NAME, BLOCK, T)                                                     \
FG_WG_GRAD_BLOCK(BLOCK, T)                                                             \
FG_CLONES static void NAME(const T* restrict dy, Py_ssize_t oh, Py_ssize_t ow,        \
                           Py_ssize_t c, Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0,  \
                           Py_ssize_t count, T* restrict w, Py_ssize_t stride) {       \
    Py_ssize_t per = th * tw, b = t0 / per, ty = (t0 - b * per) / tw;                  \
    Py_ssize_t tx = t0 - b * per - ty * tw;                                            \
    for (Py_ssize_t t = 0; t < count; t++) {                                           \
        int down = 2 * ty + 1 < oh, right = 2 * tx + 1 < ow;                           \
        int ok[4] = {1, right, down, down && right};                                   \
        const T* g = dy + ((b * oh + 2 * ty) * ow + 2 * tx) * c;                       \
        Py_ssize_t k0 = 0;                                                             \
        for (; k0 + FG_WG_BLOCK <= c; k0 += FG_WG_BLOCK)                               \
            BLOCK(g, ow * c, c, ok, k0, FG_WG_BLOCK, w + t * c, stride);               \
        if (k0 < c)                                                                    \
            BLOCK(g, ow * c, c, ok, k0, c - k0, w + t * c, stride);                    \
        FG_WG_NEXT(b, ty, tx, th, tw)                                                  \
    }                                                                                  \
}

FG_WG_INPUT(fg_wg_input_f, fg_wg_input_block_f, float)
FG_WG_INPUT(fg_wg_input_d, fg_wg_input_block_d, double)
FG_WG_OUTPUT(fg_wg_output_f, fg_wg_output_block_f, float)
FG_WG_OUTPUT(fg_wg_output_d, fg_wg_output_block_d, double)
FG_WG_GRAD(fg_wg_grad_f, fg_wg_grad_block_f, float)
FG_WG_GRAD(fg_wg_grad_d, fg_wg_grad_block_d, double)

#endif
