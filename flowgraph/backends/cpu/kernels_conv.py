"""CPU kernels for 2-D convolution and pooling, forward and backward.

Every convolution is one matrix product per cache-sized chunk of output pixels, on
NumPy's BLAS (which releases the GIL); the loops around it are Cython (`_conv.pyx`), also
without the GIL::

    Conv2D                cols = im2col(x)[chunk]            out[chunk] = cols @ F
    Conv2DBackpropFilter  cols = im2col(x)[chunk]            dF += cols.T @ dy[chunk]
    Conv2DBackpropInput   dcols = dy[chunk] @ F.T            dx += col2im(dcols)

with ``F`` the filter ``[kh, kw, in, out]`` seen as a ``[kh * kw * in, out]`` matrix and
a row of ``cols`` one output pixel's window (`_conv.pyx` draws the layout). A chunk of
``cols`` (`_CHUNK_BYTES`) is written and read back while it is still in the cache, so
the whole-batch column matrix (100 MB for a 28x28x32 input at batch 128 with a 3x3
filter) never exists. SAME and explicit padding are never materialized: im2col writes
zeros for the taps that fall outside the input and col2im drops them. Results are
computed in NHWC: an NCHW input is copied to NHWC for im2col (one transposing pass) and
read in place, through a transposed view, by the pools; NCHW results are transposed
back. Pooling reduces (or, backward, scatters over) each window's in-bounds taps
directly, so an average divides by the count of real elements, as TensorFlow does.

A 3x3 window at unit strides and dilations with 8 or more channels in and out (the
common CNN layer) takes Winograd's F(2x2, 3x3) instead (`_conv_winograd.pyx`): per 2x2
block of outputs, 16 products of in by out channels where im2col takes 36, on 4x4
tiles transformed by additions::

    Conv2D                V = tiles(x)[chunk]     M = V @ U (16 products)   out = untile(M)
    Conv2DBackpropInput   the same on dy, U of the filter turned 180 degrees, in <-> out
    Conv2DBackpropFilter  V = tiles(x), W = tiles(dy)    Z += V^T @ W       dF = G^T Z G

The products shrink 2.25x (a 28x28x32 -> 64 layer at batch 128, one thread: 116 -> 71
ms VALID); the float32 error stays that of im2col's (~1e-6 of the largest value).

Threads: with two or more kernel threads (`kernel_pool`), the chunks are items that
each thread claims one at a time and runs start to end, its im2col or col2im and then
its product with BLAS held to one thread (`_on_threads`), so a chunk's columns stay in
the cache of the core that wrote them and the threads meet once per kernel.
Conv2DBackpropInput's chunks are whole images (col2im adds into overlapping windows);
Conv2DBackpropFilter keeps one partial dF per chunk (run of chunks) and adds them in
order. With one kernel thread, or a single chunk, the same chunks run in turn with
BLAS's own threads on each product. The chunks, and so each product's rows, are the
same either way: OpenBLAS may round a row differently depending on where it falls in a
product's block, so a result is bitwise the same on any number of kernel threads (with
BLAS held to one thread in both). SAME costs what VALID does per output pixel (zero
taps are memsets or zero tiles, dropped ones are skipped).

Why the kernel threads and not BLAS's: OpenBLAS's idle workers spin for ~0.1 s after
each multi-threaded product (``OPENBLAS_THREAD_TIMEOUT``, 2**28 cycles by default), so a
conv layer whose products use BLAS's threads keeps them spinning through the whole
step, and every other thread then shares a core with a spinning worker. Products held
to one BLAS thread let the workers fall asleep; where a product elsewhere woke them
just before (a dense layer's MatMul), the threads claiming chunks one at a time give
the partly-shared core fewer chunks instead of waiting for it at a fixed split.

Pooling splits the batch across the kernel threads. A 2x2, stride-2 max pool whose
windows all lie inside a contiguous NHWC input (VALID, or SAME on even sizes) and its
gradient run dedicated loops (`_pool2x2.pyx`), bitwise equal to the general ones.

float32 and float64 run as themselves; float16 is computed in float32 and integer
tensors in float64 (exact while sums stay below 2**53), then cast back.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.cpu.kernels_conv import conv2d
>>> x = np.ones((1, 4, 3, 1), np.float32)
>>> conv2d(x, np.ones((2, 2, 1, 1), np.float32), strides=[1, 1, 1, 1], padding="VALID")[0, :, :, 0]
array([[4., 4.],
       [4., 4.],
       [4., 4.]], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import _conv, _conv_winograd, _pool2x2, cpu_kernel, kernel_pool
from flowgraph.backends.cpu._buffers import empty as _empty
from flowgraph.backends.cpu.blas_threads import blas_threads_limited
from flowgraph.framework import errors
from flowgraph.ops.nn_ops import same_padding

# Bytes of one thread's chunk of the column matrix. OpenBLAS runs these skinny products
# (N = 64, K = 288) at ~100 GFLOP/s per core from ~600 to ~3,600 rows (0.7 to 4 MB of
# float32 columns), measured on one core of an AMD EPYC, and at ~75 for the whole batch
# (100,352 rows: 49 ms against 38 for 1,820-row chunks, one thread, SAME batch 128);
# chunks in that range time the same within 2 % on one thread. Chunks run in turn with
# BLAS's threads on each product (see `_on_threads`) meet once per product, so they are
# no smaller than this.
_CHUNK_BYTES = 2 * 1024 * 1024
_BLAS = (np.dtype(np.float32), np.dtype(np.float64))
# Bytes of one chunk's Winograd stacks (V and M, 16 rows of in + out channels per tile):
# 256 tiles of 32 -> 64 channels, in L2 with the products at ~107 GFLOP/s per core,
# against ~88 for stacks twice that size (one core of the EPYC here).
_WINOGRAD_BYTES = 1536 * 1024
# Runs of chunks the filter gradient sums into partials of its own (`_winograd_filter_grad`):
# enough for the kernel threads to balance, few enough to bound the partials' memory.
_FILTER_PARTS = 8
# The 4x4 transform of a 3x3 filter (see `_conv_winograd`).
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


# -- layouts and dtypes -------------------------------------------------------------------
def _hw(values, data_format):
    return (int(values[2]), int(values[3])) if data_format == "NCHW" else \
        (int(values[1]), int(values[2]))


def _work(dtype: np.dtype) -> np.dtype:
    """The dtype a kernel computes in (see the module docstring)."""
    dtype = np.dtype(dtype)
    if dtype.newbyteorder("=") in _BLAS:
        return dtype.newbyteorder("=")
    return np.dtype(np.float32 if dtype.kind == "f" and dtype.itemsize <= 4 else np.float64)


def _nhwc(x: np.ndarray, data_format: str, what: str, packed: bool = False) -> np.ndarray:
    """A logically NHWC view of `x` in its compute dtype (a copy only to convert), with
    `packed` also a copy unless channels are contiguous: im2col gathers 9 taps of
    channel-strided NCHW values 3x slower than a transposing copy plus its memcpy path."""
    if x.ndim != 4:
        raise _invalid(f"{what}: input must be 4-D, got shape {x.shape}")
    x = x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x
    work = _work(x.dtype)
    if x.dtype != work or not x.flags.aligned or any(s % x.itemsize for s in x.strides) \
            or (packed and x.strides[3] != x.itemsize and x.shape[3] > 1):
        x = np.require(x, dtype=work, requirements=("C", "A"))
    return x


def _nhwc_rows(dy: np.ndarray, data_format: str, work: np.dtype) -> np.ndarray:
    """`dy` as a C-contiguous NHWC array of dtype `work` (the GEMM operand)."""
    dy = dy.transpose(0, 2, 3, 1) if data_format == "NCHW" else dy
    return np.require(dy, dtype=work, requirements=("C", "A"))


def _finish(out: np.ndarray, data_format: str, dtype: np.dtype) -> np.ndarray:
    """The NHWC result `out` in the caller's layout and dtype."""
    if data_format == "NCHW":
        out = out.transpose(0, 3, 1, 2)
    if out.dtype != dtype:
        return out.astype(dtype)
    return np.ascontiguousarray(out)


def _nhwc_sizes(sizes, data_format: str, what: str) -> tuple[int, int, int, int]:
    s = [int(v) for v in np.reshape(sizes, -1)]
    if len(s) != 4 or min(s) < 0:
        raise _invalid(f"{what}: input sizes must be a 4-vector of sizes >= 0, got {s}")
    return (s[0], s[2], s[3], s[1]) if data_format == "NCHW" else tuple(s)


# -- window geometry ----------------------------------------------------------------------
def window_geometry(what, height, width, kh, kw, strides, dilations, padding, explicit,
                    data_format) -> tuple:
    """The `_conv` geometry tuple ``(kh, kw, sh, sw, dh, dw, pad_top, pad_left, out_h,
    out_w)``; InvalidArgumentError when the window does not fit the padded input."""
    sh, sw = _hw(strides, data_format)
    dh, dw = _hw(dilations, data_format)
    if min(sh, sw, dh, dw) < 1:
        raise _invalid(f"{what}: strides and dilations must be >= 1, got strides "
                       f"{sh}x{sw}, dilations {dh}x{dw}")
    if padding == "SAME":
        (pt, pb), (pl, pr) = same_padding(height, kh, sh, dh), same_padding(width, kw, sw, dw)
    elif padding == "EXPLICIT":
        h = 2 if data_format == "NCHW" else 1
        pt, pb, pl, pr = (int(v) for v in list(explicit)[2 * h:2 * h + 4])
    else:
        pt = pb = pl = pr = 0
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    hp, wp = height + pt + pb, width + pl + pr
    if hp < eh or wp < ew:
        raise _invalid(
            f"{what}: window of {kh}x{kw} (dilation {dh}x{dw}) does not fit in the padded "
            f"input of {hp}x{wp} (input {height}x{width}, padding {padding}); use a smaller "
            f"window or padding='SAME'")
    return (kh, kw, sh, sw, dh, dw, pt, pl, (hp - eh) // sh + 1, (wp - ew) // sw + 1)


def _check_backprop(what, dy, geo, height, width):
    """InvalidArgumentError unless NHWC `dy` has the forward op's output size."""
    if dy.ndim != 4 or tuple(dy.shape[1:3]) != geo[8:10]:
        raise _invalid(
            f"{what}: out_backprop has shape {list(dy.shape)} (NHWC) but the forward op's "
            f"output is {list(geo[8:10])} spatially (input {height}x{width}, window "
            f"{geo[0]}x{geo[1]}, strides {geo[2]}x{geo[3]}, dilations {geo[4]}x{geo[5]})")


def _chunk_rows(ncol: int, dtype: np.dtype) -> int:
    """Rows of one chunk of a column matrix with `ncol` columns."""
    return max(1, _CHUNK_BYTES // max(ncol * dtype.itemsize, 1))


def _on_threads(items: int, part) -> bool:
    """Run ``part(k, k + 1)`` for every item ``k < items`` on the kernel threads, BLAS
    on one thread inside, and return True; or run nothing and return False when there
    are fewer than two threads or two items.

    Each thread claims the next item not yet taken when it finishes one, so a thread
    that gets less of its core (another process, or OpenBLAS's idle workers spinning
    for ~0.1 s after a multi-threaded product elsewhere) simply runs fewer items. An
    item is a chunk start to end (im2col or col2im, then a one-thread product on the
    columns still in its core's cache), so the threads never meet inside a kernel.
    Splitting each chunk's product across BLAS's threads instead cost 10-25 % more at
    batch 128 on 2 vCPUs (each chunk's columns, written by one core, are read by both,
    and the threads meet twice per chunk), and it keeps BLAS's workers spinning, which
    slows every kernel thread after it. The BLAS limit is process-wide (see
    `blas_threads_limited`; kernels overlapping on two threads ask for the same limit,
    and only the one that found more threads restores them): a product another session
    runs meanwhile gets one thread.
    """
    if items < 2 or kernel_pool.threads() < 2:
        return False
    with blas_threads_limited(1):
        return kernel_pool.claim_items(items, lambda k: part(k, k + 1))


def _im2col(xs: np.ndarray, cols: np.ndarray, r0: int, geo: tuple) -> None:
    """`_conv.im2col` of rows ``r0 .. r0 + len(cols)``, split across the kernel threads
    (each part writes its own rows of `cols`)."""
    grain = max(1, kernel_pool.GRAIN["gather"] // (2 * max(cols.shape[1], 1)))
    kernel_pool.parallel_for(cols.shape[0], lambda a, b: _conv.im2col(
        xs, cols[a:b], r0 + a, geo), grain=grain, align=1)


def _col2im(dcols: np.ndarray, dx: np.ndarray, r0: int, geo: tuple) -> None:
    """`_conv.col2im` of rows ``r0 .. r0 + len(dcols)`` into `dx`, in two parts on two
    kernel threads when an image boundary splits the rows near their middle: windows
    of different images never add into the same element of `dx`, windows of one image
    do."""
    per, rows = geo[8] * geo[9], dcols.shape[0]
    mid = (r0 + rows // 2 + per // 2) // per * per  # the image boundary nearest the middle
    grain = kernel_pool.GRAIN["gather"] // (2 * max(dcols.shape[1], 1))
    if not r0 < mid < r0 + rows or min(mid - r0, r0 + rows - mid) < grain:
        _conv.col2im(dcols, dx, r0, geo)
        return
    parts = ((0, mid - r0), (mid - r0, rows))
    kernel_pool.parallel_for(2, lambda a, b: [_conv.col2im(
        dcols[lo:hi], dx, r0 + lo, geo) for lo, hi in parts[a:b]], grain=1, align=1)


def _image_size(shape) -> int:
    return int(np.prod(shape[1:]))


def _by_image(n: int, per_image: int, fn) -> None:
    """``fn(a, b)`` over images ``a .. b`` of the batch, split across the kernel threads
    (each image's output is its own, so the parts never write the same element)."""
    kernel_pool.parallel_for(n, fn, grain=max(1, -(-kernel_pool.GRAIN["reduce"] //
                                                   max(per_image, 1))), align=1)


def _direct(x: np.ndarray, geo: tuple) -> bool:
    """Whether a 1x1, unit-stride, unpadded window makes `x` its own column matrix."""
    return geo[:8] == (1, 1, 1, 1, 1, 1, 0, 0) and x.flags.c_contiguous


# -- Winograd F(2x2, 3x3) -----------------------------------------------------------------
def _winograd_fits(geo: tuple, cin: int, cout: int) -> bool:
    """Whether a convolution runs as Winograd tiles (`_winograd`): a 3x3 window, unit
    strides and dilations, at least 8 channels in and out (below that the transforms,
    linear in the channels, outweigh the products they save)."""
    return geo[:6] == (3, 3, 1, 1, 1, 1) and min(cin, cout) >= 8


def _winograd_filter(f: np.ndarray, work: np.dtype) -> np.ndarray:
    """``U = G f G^T`` of a ``[3, 3, in, out]`` filter as a ``[16, in, out]`` stack,
    computed in float64."""
    u = np.einsum("ai,ijco,bj->abco", _G, f.astype(np.float64, copy=False), _G)
    return np.ascontiguousarray(u.reshape(16, *f.shape[2:]), dtype=work)


def _stack(step: int, count: int, c: int, work: np.dtype) -> np.ndarray:
    """A ``[16, count, c]`` stack (of a buffer for `step` tiles) whose matrices lie an
    odd number of 64-byte lines apart, so that a tile's 16 rows map to different cache
    sets (see `_conv_winograd.h`)."""
    lines = -(-step * c * work.itemsize // 64) | 1
    size = lines * 64 // work.itemsize
    return _empty((16, size), work)[:, :count * c].reshape(16, count, c)


def _winograd(src: np.ndarray, u: np.ndarray, out: np.ndarray, pads: tuple) -> None:
    """``out`` (C-contiguous NHWC) = the 3x3 stride-1 correlation of the NHWC `src`
    (channels packed; zero outside it, `pads` = (top, left) rows and columns before it)
    with the filter whose transform is `u` (`_winograd_filter`). Tiles in chunks of
    `_WINOGRAD_BYTES`, claimed by the kernel threads as in `_on_threads`."""
    n, oh, ow, cout = out.shape
    cin, work = src.shape[3], out.dtype
    th, tw = -(-oh // 2), -(-ow // 2)
    tiles, tiling = n * th * tw, (pads[0], pads[1], th, tw)
    step = max(1, _WINOGRAD_BYTES // (16 * (cin + cout) * work.itemsize))

    def part(a, b):  # chunks a .. b
        for k in range(a, b):
            t0, count = k * step, min(tiles, (k + 1) * step) - k * step
            v, m = _stack(step, count, cin, work), _stack(step, count, cout, work)
            _conv_winograd.input_tiles(src, v, t0, tiling)
            np.matmul(v, u, out=m)
            _conv_winograd.output_tiles(m, out, t0, tiling)

    chunks = -(-tiles // step)
    if not _on_threads(chunks, part):
        part(0, chunks)


def _winograd_filter_grad(xs: np.ndarray, dy: np.ndarray, pads: tuple) -> np.ndarray:
    """The ``[3, 3, in, out]`` gradient of the filter of `_winograd` for the NHWC input
    `xs` (channels packed) and C-contiguous NHWC output gradient `dy`, ``G^T Z G`` (in
    float64) of ``Z = sum of V^T @ W`` over the chunks of tiles. The chunks form at most
    `_FILTER_PARTS` runs, the items the threads claim, each summing its chunks in order
    into a partial of its own; the partials add in run order, so the bits depend on the
    shapes only, not on the threads."""
    n, oh, ow, cout = dy.shape
    cin, work = xs.shape[3], dy.dtype
    th, tw = -(-oh // 2), -(-ow // 2)
    tiles, tiling = n * th * tw, (pads[0], pads[1], th, tw)
    step = max(1, _WINOGRAD_BYTES // (16 * (cin + cout) * work.itemsize))
    chunks = -(-tiles // step)
    per_run = -(-chunks // _FILTER_PARTS)
    runs = -(-chunks // per_run)
    parts = _empty((runs, 16, cin, cout), work)

    def part(a, b):  # runs a .. b
        product = _empty((16, cin, cout), work)
        for r in range(a, b):
            for k in range(r * per_run, min(chunks, (r + 1) * per_run)):
                t0, count = k * step, min(tiles, (k + 1) * step) - k * step
                v, w = _stack(step, count, cin, work), _stack(step, count, cout, work)
                _conv_winograd.input_tiles(xs, v, t0, tiling)
                _conv_winograd.gradient_tiles(dy, w, t0, tiling)
                first = k == r * per_run
                np.matmul(v.transpose(0, 2, 1), w, out=parts[r] if first else product)
                if not first:
                    parts[r] += product

    if not _on_threads(runs, part):
        part(0, runs)
    z = parts[0].copy()
    for r in range(1, runs):
        z += parts[r]
    z = z.reshape(4, 4, cin, cout).astype(np.float64)
    return np.einsum("ai,abco,bj->ijco", _G, z, _G).astype(work)


# -- Conv2D and its gradients -------------------------------------------------------------
def _filter_matrix(f, what, cin, cout, work):
    """Filter ``[kh, kw, in, out]`` as a C-contiguous ``[kh * kw * in, out]`` matrix."""
    if f.ndim != 4 or f.shape[2] != cin or (cout is not None and f.shape[3] != cout):
        want = f"[height, width, {cin}, {'out' if cout is None else cout}]"
        raise _invalid(f"{what}: filter shape {list(f.shape)} does not match the input: "
                       f"expected {want} for input depth {cin}")
    return np.ascontiguousarray(f, dtype=work).reshape(-1, f.shape[3])


@cpu_kernel("Conv2D", fresh=True)
def conv2d(x, f, *, strides, padding, explicit_paddings=(), dilations=(1, 1, 1, 1),
           data_format="NHWC"):
    xs = _nhwc(x, data_format, "Conv2D", packed=True)
    if f.ndim != 4 or f.shape[2] != xs.shape[3]:
        raise _invalid(
            f"Conv2D: input depth must equal the filter's input depth: input shape "
            f"{xs.shape} (NHWC), filter shape {f.shape} = [height, width, in, out]")
    work = xs.dtype
    f2 = _filter_matrix(f, "Conv2D", xs.shape[3], None, work)
    n, height, width, _ = xs.shape
    geo = window_geometry("Conv2D", height, width, f.shape[0], f.shape[1], strides,
                          dilations, padding, explicit_paddings, data_format)
    rows, cout = n * geo[8] * geo[9], f2.shape[1]
    out = _empty((n, geo[8], geo[9], cout), work)
    out2 = out.reshape(rows, cout)
    if rows and _direct(xs, geo):
        np.matmul(xs.reshape(rows, -1), f2, out=out2)
    elif rows and _winograd_fits(geo, xs.shape[3], cout):
        # the tiler needs C-contiguous NHWC; a split's view has packed channels only
        _winograd(np.ascontiguousarray(xs), _winograd_filter(f, work), out, geo[6:8])
    elif rows and f2.shape[0]:
        step = _chunk_rows(f2.shape[0], work)

        def part(a, b):  # chunks a .. b
            for r0 in range(a * step, min(rows, b * step), step):
                r1 = min(rows, r0 + step)
                cols = _empty((step, f2.shape[0]), work)[:r1 - r0]
                _im2col(xs, cols, r0, geo)
                np.matmul(cols, f2, out=out2[r0:r1])

        count = -(-rows // step)
        if not _on_threads(count, part):
            part(0, count)  # in turn, BLAS's threads on each product
    else:
        out2.fill(0)
    return _finish(out, data_format, x.dtype)


@cpu_kernel("Conv2DBackpropInput", fresh=True)
def conv2d_backprop_input(sizes, f, dy, *, strides, padding, explicit_paddings=(),
                          dilations=(1, 1, 1, 1), data_format="NHWC"):
    what = "Conv2DBackpropInput"
    n, height, width, cin = _nhwc_sizes(sizes, data_format, what)
    work = _work(dy.dtype)
    dyn = _nhwc_rows(dy, data_format, work)
    if f.ndim != 4:
        raise _invalid(f"{what}: filter must be 4-D, got shape {list(f.shape)}")
    geo = window_geometry(what, height, width, f.shape[0], f.shape[1], strides, dilations,
                          padding, explicit_paddings, data_format)
    _check_backprop(what, dyn, geo, height, width)
    if dyn.shape[0] != n:
        raise _invalid(f"{what}: out_backprop has batch {dyn.shape[0]}, input sizes say {n}")
    f2 = _filter_matrix(f, what, cin, dyn.shape[3], work)
    rows = n * geo[8] * geo[9]
    dx = _empty((n, height, width, cin), work)
    dy2 = dyn.reshape(rows, dyn.shape[3])
    if rows and _direct(dx, geo):
        np.matmul(dy2, f2.T, out=dx.reshape(rows, cin))
    elif not (rows and f2.shape[0]):
        _by_image(n, _image_size(dx.shape), lambda a, b: dx[a:b].fill(0))
    elif _winograd_fits(geo, cin, dyn.shape[3]) and max(geo[6:8]) <= 2:
        # dx is dy correlated with the filter turned 180 degrees, in and out swapped,
        # dy padded by 2 - pad (window size - 1 - pad) before its first row and column
        flipped = np.asarray(f)[::-1, ::-1].transpose(0, 1, 3, 2)
        _winograd(dyn, _winograd_filter(flipped, work), dx, (2 - geo[6], 2 - geo[7]))
    else:
        step, per = _chunk_rows(f2.shape[0], work), geo[8] * geo[9]
        images = max(1, step // per)  # per chunk: windows add only into their images

        def part(a, b):  # chunks a .. b, chunk k: images k * images .. (k + 1) * images
            for k in range(a, b):
                i0, i1 = k * images, min(n, (k + 1) * images)
                dx[i0:i1].fill(0)
                for r0 in range(i0 * per, i1 * per, step):  # one product per `step` rows
                    r1 = min(i1 * per, r0 + step)
                    dcols = _empty((step, f2.shape[0]), work)[:r1 - r0]
                    np.matmul(dy2[r0:r1], f2.T, out=dcols)
                    _col2im(dcols, dx, r0, geo)

        count = -(-n // images)
        if not _on_threads(count, part):
            part(0, count)
    return _finish(dx, data_format, dy.dtype)


@cpu_kernel("Conv2DBackpropFilter", fresh=True)
def conv2d_backprop_filter(x, sizes, dy, *, strides, padding, explicit_paddings=(),
                           dilations=(1, 1, 1, 1), data_format="NHWC"):
    what = "Conv2DBackpropFilter"
    shape = [int(v) for v in np.reshape(sizes, -1)]
    if len(shape) != 4 or min(shape) < 0:
        raise _invalid(f"{what}: filter sizes must be a 4-vector of sizes >= 0, got {shape}")
    kh, kw, cin, cout = shape
    xs = _nhwc(x, data_format, what, packed=True)
    work = xs.dtype
    dyn = _nhwc_rows(dy, data_format, work)
    n, height, width, depth = xs.shape
    geo = window_geometry(what, height, width, kh, kw, strides, dilations, padding,
                          explicit_paddings, data_format)
    _check_backprop(what, dyn, geo, height, width)
    if depth != cin or dyn.shape[3] != cout or dyn.shape[0] != n:
        raise _invalid(f"{what}: input {list(xs.shape)} (NHWC) and out_backprop "
                       f"{list(dyn.shape)} (NHWC) do not match filter sizes {shape}")
    rows, ncol = n * geo[8] * geo[9], kh * kw * cin
    df = np.zeros((ncol, cout), work)
    dy2 = dyn.reshape(rows, cout)
    if rows and ncol and cout:
        if _direct(xs, geo):
            np.matmul(xs.reshape(rows, ncol).T, dy2, out=df)
        elif _winograd_fits(geo, cin, cout):
            df[...] = _winograd_filter_grad(xs, dyn, geo[6:8]).reshape(ncol, cout)
        else:
            step = _chunk_rows(ncol, work)
            count = -(-rows // step)
            # One partial dF per chunk, added in chunk order: the same sums, bit for
            # bit, whichever thread ran which chunk.
            parts = _empty((count, ncol, cout), work)

            def part(a, b):  # chunks a .. b
                for k in range(a, b):
                    r0, r1 = k * step, min(rows, (k + 1) * step)
                    cols = _empty((step, ncol), work)[:r1 - r0]
                    _im2col(xs, cols, r0, geo)
                    np.matmul(cols.T, dy2[r0:r1], out=parts[k])

            if not _on_threads(count, part):
                part(0, count)
            df[...] = parts[0]
            for k in range(1, count):
                df += parts[k]
    return df.reshape(kh, kw, cin, cout).astype(dy.dtype, copy=False)


# -- pooling ------------------------------------------------------------------------------
def _pool_geometry(what, x, ksize, strides, padding, data_format):
    """`_geometry` of a pooling window; pooling over batch or depth is rejected."""
    c = 1 if data_format == "NCHW" else 3
    if len(ksize) != 4 or int(ksize[0]) != 1 or int(ksize[c]) != 1:
        raise _invalid(f"{what}: pooling over the batch or depth dimension is not supported "
                       f"(ksize={list(ksize)}); use ksize 1 for those dimensions")
    kh, kw = _hw(ksize, data_format)
    return window_geometry(what, x.shape[1], x.shape[2], kh, kw, strides, (1, 1, 1, 1),
                           padding, (), data_format)


def _two_by_two(xs: np.ndarray, geo: tuple) -> bool:
    """Whether `_pool2x2` covers this max pool: 2x2 windows, stride 2, every window
    inside the contiguous NHWC input (VALID, or SAME on even sizes)."""
    return geo[:8] == (2, 2, 2, 2, 1, 1, 0, 0) and 2 * geo[8] <= xs.shape[1] and \
        2 * geo[9] <= xs.shape[2] and xs.flags.c_contiguous


def _pooled(what, x, ksize, strides, padding, data_format, average):
    xs = _nhwc(x, data_format, what)
    geo = _pool_geometry(what, xs, ksize, strides, padding, data_format)
    out = _empty((xs.shape[0], geo[8], geo[9], xs.shape[3]), xs.dtype)
    if not average and _two_by_two(xs, geo):
        _by_image(xs.shape[0], _image_size(xs.shape),
                  lambda a, b: _pool2x2.max_pool_2x2(xs[a:b], out[a:b]))
    else:
        _by_image(xs.shape[0], _image_size(xs.shape),
                  lambda a, b: _conv.pool(xs[a:b], out[a:b], geo, average))
    return _finish(out, data_format, x.dtype)


@cpu_kernel("MaxPool", fresh=True)
def max_pool(x, *, ksize, strides, padding, data_format="NHWC"):
    return _pooled("MaxPool", x, ksize, strides, padding, data_format, False)


@cpu_kernel("AvgPool", fresh=True)
def avg_pool(x, *, ksize, strides, padding, data_format="NHWC"):
    return _pooled("AvgPool", x, ksize, strides, padding, data_format, True)


@cpu_kernel("AvgPoolGrad", fresh=True)
def avg_pool_grad(sizes, dy, *, ksize, strides, padding, data_format="NHWC"):
    what = "AvgPoolGrad"
    shape = _nhwc_sizes(sizes, data_format, what)
    work = _work(dy.dtype)
    dyn = _nhwc_rows(dy, data_format, work)
    dx = _empty(shape, work)
    geo = _pool_geometry(what, dx, ksize, strides, padding, data_format)
    _check_backprop(what, dyn, geo, shape[1], shape[2])
    if dyn.shape[0] != shape[0] or dyn.shape[3] != shape[3]:
        raise _invalid(f"{what}: gradient of shape {list(dyn.shape)} (NHWC) does not match "
                       f"the input sizes {list(shape)} (NHWC)")

    def part(a, b):
        dx[a:b].fill(0)
        _conv.avg_pool_grad(dyn[a:b], dx[a:b], geo)

    _by_image(shape[0], _image_size(shape), part)
    return _finish(dx, data_format, dy.dtype)


def _max_route(what, x, grad, ksize, strides, padding, data_format, gather):
    """MaxPoolGrad (`gather` false: `grad` pooled-shaped) or MaxPoolGradGrad (`grad`
    x-shaped), through each window's first maximum."""
    xs = _nhwc(x, data_format, what)
    geo = _pool_geometry(what, xs, ksize, strides, padding, data_format)
    pooled = (xs.shape[0], geo[8], geo[9], xs.shape[3])
    src = _nhwc_rows(grad, data_format, xs.dtype)
    want = xs.shape if gather else pooled
    if src.shape != tuple(want):
        raise _invalid(f"{what}: gradient of shape {list(src.shape)} (NHWC) does not match "
                       f"the expected {list(want)} (NHWC; input {list(xs.shape)}, pooled "
                       f"{list(pooled)})")
    dst = _empty(pooled if gather else xs.shape, xs.dtype)

    def part(a, b):
        if dedicated:
            _pool2x2.max_pool_2x2_grad(xs[a:b], src[a:b], dst[a:b])
        else:
            _conv.max_pool_route(xs[a:b], src[a:b], dst[a:b], geo, gather)

    dedicated = not gather and _two_by_two(xs, geo)

    _by_image(xs.shape[0], _image_size(xs.shape), part)
    return _finish(dst, data_format, grad.dtype)


@cpu_kernel("MaxPoolGrad", fresh=True)
def max_pool_grad(x, y, dy, *, ksize, strides, padding, data_format="NHWC"):
    return _max_route("MaxPoolGrad", x, dy, ksize, strides, padding, data_format, False)


@cpu_kernel("MaxPoolGradGrad", fresh=True)
def max_pool_grad_grad(x, y, ddx, *, ksize, strides, padding, data_format="NHWC"):
    return _max_route("MaxPoolGradGrad", x, ddx, ksize, strides, padding, data_format, True)
