# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Winograd F(2x2, 3x3): the tile transforms of a 3x3, stride-1 convolution, nogil.

A 2x2 block of outputs of a 3x3 correlation needs the 4x4 patch ``d`` of input under
it, and with the 4x4 transforms

    V = B^T d B      (per input channel)       U = G g G^T  (per filter channel pair)
    Y = A^T M A      with  M[p] = V[p] @ U[p]  for each of the 16 positions p

it takes 16 products of ``in`` by ``out`` channels where im2col takes 36 (4 outputs of
9 taps): the matrix products, almost all of a convolution's time, shrink 2.25x, and
the transforms are additions only (the constants are 0, 1 and 1/2: exact in binary).
The input gradient is the same correlation, of the output gradient with the filter
turned around; the filter gradient is the transposed algorithm,
``dF = G^T (sum over tiles of V * W) G`` with ``W = A g A^T`` of each tile's 2x2 block
``g`` of the output gradient (`gradient_tiles`)::

    B^T = [1  0 -1  0]     G = [  1    0    0 ]     A^T = [1  1  1  0]
          [0  1  1  0]         [ 1/2  1/2  1/2]           [0  1 -1 -1]
          [0 -1  1  0]         [ 1/2 -1/2  1/2]
          [0  1  0 -1]         [  0    0    1 ]

State it keeps
--------------
None. The caller (`kernels_conv.py`) cuts the batch's tiles into chunks that fit the
cache and, per chunk, calls `input_tiles` (the V of each tile), one stacked matrix
product ``M = V @ U`` and `output_tiles` (the Y of each tile, written into the output);
or, for the filter gradient, `input_tiles`, `gradient_tiles` and ``V^T @ W``.
Tile ``t`` of the batch is ``(b, ty, tx)`` flattened, in row-major order over a grid of
``tiles_h x tiles_w`` tiles per image, and covers outputs ``2 ty .. 2 ty + 1`` by
``2 tx .. 2 tx + 1``; its input patch starts at ``(2 ty - pad_top, 2 tx - pad_left)``.
Input outside the array reads as zero (padding, or the last tile of an odd size) and
outputs outside the output array are not written. A chunk's values do not depend on
which thread computes it or on the chunks around it.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu._conv_winograd import input_tiles
>>> x = np.zeros((1, 4, 4, 1))
>>> x[0, 1, 1] = 1.0
>>> v = np.empty((16, 1, 1))
>>> input_tiles(x, v, 0, (0, 0, 1, 1))   # one tile: the whole 4x4 input
>>> v.reshape(4, 4)                      # B^T d B for a unit d[1, 1]
array([[ 0.,  0.,  0.,  0.],
       [ 0.,  1., -1.,  1.],
       [ 0., -1.,  1., -1.],
       [ 0.,  1., -1.,  1.]])
"""

cimport numpy as cnp

cnp.import_array()

cdef extern from "_conv_winograd.h":  # the transforms, in C
    void fg_wg_input_f(const float* x, Py_ssize_t h, Py_ssize_t w, Py_ssize_t c,
                       Py_ssize_t sn, Py_ssize_t sh, Py_ssize_t pt, Py_ssize_t pl,
                       Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, Py_ssize_t count,
                       float* v, Py_ssize_t stride) noexcept nogil
    void fg_wg_input_d(const double* x, Py_ssize_t h, Py_ssize_t w, Py_ssize_t c,
                       Py_ssize_t sn, Py_ssize_t sh, Py_ssize_t pt, Py_ssize_t pl,
                       Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, Py_ssize_t count,
                       double* v, Py_ssize_t stride) noexcept nogil
    void fg_wg_output_f(const float* mm, Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t c,
                        Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, Py_ssize_t count,
                        Py_ssize_t stride, float* out) noexcept nogil
    void fg_wg_output_d(const double* mm, Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t c,
                        Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, Py_ssize_t count,
                        Py_ssize_t stride, double* out) noexcept nogil
    void fg_wg_grad_f(const float* dy, Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t c,
                      Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, Py_ssize_t count,
                      float* w, Py_ssize_t stride) noexcept nogil
    void fg_wg_grad_d(const double* dy, Py_ssize_t oh, Py_ssize_t ow, Py_ssize_t c,
                      Py_ssize_t th, Py_ssize_t tw, Py_ssize_t t0, Py_ssize_t count,
                      double* w, Py_ssize_t stride) noexcept nogil


cdef int _kind(cnp.ndarray a, cnp.ndarray b) except -1:
    """NPY_FLOAT32 or NPY_FLOAT64, the one native dtype of `a` and `b`; else ValueError."""
    cdef int kind = cnp.PyArray_TYPE(a)
    if kind != cnp.PyArray_TYPE(b) or kind not in (cnp.NPY_FLOAT32, cnp.NPY_FLOAT64) or \
            not cnp.PyArray_ISNOTSWAPPED(a) or not cnp.PyArray_ISNOTSWAPPED(b):
        raise ValueError(f"_conv_winograd: expected native float32 or float64 arrays of one "
                         f"dtype, got {a.dtype} and {b.dtype}")
    return kind


cdef Py_ssize_t _stack(cnp.ndarray a, Py_ssize_t c, str what) except -1:
    """The distance in elements between the 16 matrices of the ``[16, count, c]`` stack
    `a`, each C-contiguous; ValueError if `a` is not such a stack."""
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(a)
    if cnp.PyArray_NDIM(a) != 3 or a.shape[0] != 16 or a.shape[2] != c or \
            a.strides[2] != item or a.strides[1] != c * item or a.strides[0] % item or \
            a.strides[0] < a.shape[1] * c * item or not cnp.PyArray_ISALIGNED(a):
        raise ValueError(f"_conv_winograd: {what} must be a [16, tiles, {c}] stack of "
                         f"C-contiguous matrices, got {(<object>a).shape} with strides "
                         f"{(<object>a).strides}")
    return a.strides[0] // item


cdef int _tiles(tuple tiling, Py_ssize_t n, Py_ssize_t t0, Py_ssize_t count,
                Py_ssize_t* pt, Py_ssize_t* pl, Py_ssize_t* th, Py_ssize_t* tw) except -1:
    pt[0], pl[0], th[0], tw[0] = tiling
    if t0 < 0 or count < 0 or t0 + count > n * th[0] * tw[0]:
        raise ValueError(f"_conv_winograd: tiles {t0}..{t0 + count} of "
                         f"{n * th[0] * tw[0]} ({n} images of {th[0]}x{tw[0]})")
    return 0


def input_tiles(cnp.ndarray x, cnp.ndarray v, Py_ssize_t t0, tuple tiling):
    """Fill `v` (a ``[16, count, c]`` stack of C-contiguous matrices) with the
    transformed input patches of tiles ``t0 .. t0 + count`` of the NHWC `x` (channels
    packed); `tiling` is ``(pad_top, pad_left, tiles_h, tiles_w)``."""
    cdef int kind = _kind(x, v)
    cdef Py_ssize_t item = cnp.PyArray_ITEMSIZE(x), pt, pl, th, tw
    if cnp.PyArray_NDIM(x) != 4 or x.strides[3] != item or x.strides[2] != x.shape[3] * item \
            or x.strides[1] % item or x.strides[0] % item or not cnp.PyArray_ISALIGNED(x):
        raise ValueError(f"_conv_winograd: x must be NHWC with packed channels, got shape "
                         f"{(<object>x).shape}, strides {(<object>x).strides}")
    cdef Py_ssize_t h = x.shape[1], w = x.shape[2], c = x.shape[3], count = v.shape[1]
    cdef Py_ssize_t sn = x.strides[0] // item, sh = x.strides[1] // item
    cdef Py_ssize_t stride = _stack(v, c, "v")
    _tiles(tiling, x.shape[0], t0, count, &pt, &pl, &th, &tw)
    with nogil:
        if kind == cnp.NPY_FLOAT32:
            fg_wg_input_f(<const float*>cnp.PyArray_DATA(x), h, w, c, sn, sh, pt, pl, th,
                          tw, t0, count, <float*>cnp.PyArray_DATA(v), stride)
        else:
            fg_wg_input_d(<const double*>cnp.PyArray_DATA(x), h, w, c, sn, sh, pt, pl, th,
                          tw, t0, count, <double*>cnp.PyArray_DATA(v), stride)


cdef Py_ssize_t _outputs(cnp.ndarray out, cnp.ndarray m, tuple tiling, Py_ssize_t t0,
                         str what) except -1:
    """`m`'s matrix distance (`_stack`); ValueError unless the C-contiguous NHWC `out`
    (or gradient) and the stack `m` match and the tiles t0 .. t0 + len cover it."""
    cdef Py_ssize_t pt, pl, th, tw
    if cnp.PyArray_NDIM(out) != 4 or not cnp.PyArray_IS_C_CONTIGUOUS(out):
        raise ValueError(f"_conv_winograd: {what} must be C-contiguous NHWC, got shape "
                         f"{(<object>out).shape}, strides {(<object>out).strides}")
    cdef Py_ssize_t stride = _stack(m, out.shape[3], "the stack")
    _tiles(tiling, out.shape[0], t0, m.shape[1], &pt, &pl, &th, &tw)
    if 2 * th < out.shape[1] or 2 * tw < out.shape[2]:
        raise ValueError(f"_conv_winograd: {th}x{tw} tiles do not cover {what}'s "
                         f"{out.shape[1]}x{out.shape[2]}")
    return stride


def output_tiles(cnp.ndarray m, cnp.ndarray out, Py_ssize_t t0, tuple tiling):
    """Write the outputs of tiles ``t0 .. t0 + count`` from their products `m` (a
    ``[16, count, c]`` stack of C-contiguous matrices) into the C-contiguous NHWC `out`."""
    cdef int kind = _kind(m, out)
    cdef Py_ssize_t stride = _outputs(out, m, tiling, t0, "out")
    cdef Py_ssize_t oh = out.shape[1], ow = out.shape[2], c = out.shape[3], count = m.shape[1]
    cdef Py_ssize_t th = tiling[2], tw = tiling[3]
    with nogil:
        if kind == cnp.NPY_FLOAT32:
            fg_wg_output_f(<const float*>cnp.PyArray_DATA(m), oh, ow, c, th, tw, t0, count,
                           stride, <float*>cnp.PyArray_DATA(out))
        else:
            fg_wg_output_d(<const double*>cnp.PyArray_DATA(m), oh, ow, c, th, tw, t0, count,
                           stride, <double*>cnp.PyArray_DATA(out))


def gradient_tiles(cnp.ndarray dy, cnp.ndarray w, Py_ssize_t t0, tuple tiling):
    """Fill `w` (a ``[16, count, c]`` stack of C-contiguous matrices) with ``A g A^T``
    of the 2x2 blocks ``g`` of tiles ``t0 .. t0 + count`` of the C-contiguous NHWC output
    gradient `dy` (the filter gradient is ``G^T (sum over tiles of V * W) G``, with
    `input_tiles`'s V of the forward input)."""
    cdef int kind = _kind(dy, w)
    cdef Py_ssize_t stride = _outputs(dy, w, tiling, t0, "dy")
    cdef Py_ssize_t oh = dy.shape[1], ow = dy.shape[2], c = dy.shape[3], count = w.shape[1]
    cdef Py_ssize_t th = tiling[2], tw = tiling[3]
    with nogil:
        if kind == cnp.NPY_FLOAT32:
            fg_wg_grad_f(<const float*>cnp.PyArray_DATA(dy), oh, ow, c, th, tw, t0, count,
                         <float*>cnp.PyArray_DATA(w), stride)
        else:
            fg_wg_grad_d(<const double*>cnp.PyArray_DATA(dy), oh, ow, c, th, tw, t0, count,
                         <double*>cnp.PyArray_DATA(w), stride)
