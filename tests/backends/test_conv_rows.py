"""The C row loops of im2col and col2im (`flowgraph/backends/cpu/_conv_rows.h`), taken for
NHWC inputs with packed channels and unit horizontal dilation, against the general
Cython loops of `_conv.pyx` (im2col: the same input seen through a channel-strided
view, which the fast loop does not take) and a row-by-row NumPy col2im that adds in the
same order: bit for bit, over random geometries, row ranges that start and end inside
an image, both dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from flowgraph.backends.cpu import _conv
from flowgraph.backends.cpu import kernels_conv as kc


def _case(seed):
    rng = np.random.default_rng(seed)
    n, h, w, c = int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(1, 9)), \
        int(rng.integers(1, 6))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    strides = [1, int(rng.integers(1, 3)), int(rng.integers(1, 4)), 1]
    dilations = [1, int(rng.integers(1, 3)), 1, 1]
    padding = ("VALID", "SAME", "EXPLICIT")[seed % 3]
    explicit = [0, 0, *(int(v) for v in rng.integers(0, 4, size=4)), 0, 0]
    if padding == "VALID":
        h, w = max(h, (kh - 1) * dilations[1] + 1), max(w, kw)
    try:
        geo = kc.window_geometry("t", h, w, kh, kw, strides, dilations, padding, explicit,
                                 "NHWC")
    except Exception:
        geo = kc.window_geometry("t", h, w, kh, kw, strides, dilations, "SAME", (), "NHWC")
    dt = np.float32 if seed % 2 else np.float64
    x = rng.standard_normal((n, h, w, c)).astype(dt)
    rows = n * geo[8] * geo[9]
    r0 = int(rng.integers(0, rows))
    return rng, x, geo, r0, int(rng.integers(1, rows - r0 + 1))


def _strided(x):
    """`x`'s values in an array whose channels are two elements apart."""
    wide = np.zeros((*x.shape[:3], 2 * x.shape[3]), x.dtype)
    wide[..., ::2] = x
    return wide[..., ::2]


@pytest.mark.parametrize("seed", range(60))
def test_im2col_rows_match_the_general_loop(seed):
    _, x, geo, r0, count = _case(seed)
    ncol = geo[0] * geo[1] * x.shape[3]
    fast, general = np.full((count, ncol), 7, x.dtype), np.full((count, ncol), 7, x.dtype)
    _conv.im2col(x, fast, r0, geo)
    _conv.im2col(_strided(x), general, r0, geo)
    assert fast.tobytes() == general.tobytes()


def _col2im_rows(cols, dx, r0, geo):
    """`_conv.col2im` one output row and window row at a time, in NumPy."""
    kh, kw, sy, sx, dy, _, pt, pl, oh, ow = geo
    h, w, c = dx.shape[1:]
    for r in range(cols.shape[0]):
        b, rest = divmod(r0 + r, oh * ow)
        y, xo = divmod(rest, ow)
        taps = cols[r].reshape(kh, kw, c)
        for i in range(kh):
            iy = y * sy - pt + i * dy
            if 0 <= iy < h:
                for j in range(kw):
                    ix = xo * sx - pl + j
                    if 0 <= ix < w:
                        dx[b, iy, ix] += taps[i, j]


@pytest.mark.parametrize("seed", range(60))
def test_col2im_rows_add_what_a_row_by_row_reference_adds(seed):
    rng, x, geo, r0, count = _case(seed)
    ncol = geo[0] * geo[1] * x.shape[3]
    cols = rng.standard_normal((count, ncol)).astype(x.dtype)
    start = rng.standard_normal(x.shape).astype(x.dtype)
    got, want = start.copy(), start.copy()
    _conv.col2im(cols, got, r0, geo)
    _col2im_rows(cols, want, r0, geo)
    assert got.tobytes() == want.tobytes()


def test_a_chunk_of_rows_is_the_matching_slice_of_the_whole():
    """Rows r0 .. r1 of a chunk are rows r0 .. r1 of the whole batch's column matrix,
    wherever the chunk starts (the pixel counter starts from r0, then advances)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 7, 6, 4)).astype(np.float32)
    geo = kc.window_geometry("t", 7, 6, 3, 3, [1, 2, 1, 1], [1, 1, 1, 1], "SAME", (), "NHWC")
    rows = 3 * geo[8] * geo[9]
    whole = np.empty((rows, 36), np.float32)
    _conv.im2col(x, whole, 0, geo)
    for r0, r1 in [(0, 1), (5, 17), (geo[9] - 1, 2 * geo[9] + 1), (rows - 4, rows)]:
        part = np.empty((r1 - r0, 36), np.float32)
        _conv.im2col(x, part, r0, geo)
        assert part.tobytes() == whole[r0:r1].tobytes()
