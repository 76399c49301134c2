"""CPU kernels of the image ops (`flowgraph/ops/image_ops.py`).

Resizing is separable and linear in the image: for each of height and width a matrix
``W[out, in]`` of interpolation weights (two per row for bilinear, one 1.0 for nearest
neighbour), and ``out = einsum("yh,nhwc,xw->nyxc", Wh, image, Ww)``. The gradient is the
transposed product. Coordinates are TensorFlow 1.x's legacy ones:
``in = out * scale`` with ``scale = in_size / out_size``, or
``(in_size - 1) / (out_size - 1)`` with ``align_corners``; ``half_pixel_centers`` shifts
both by half a pixel. Decoding uses Pillow.
"""

from __future__ import annotations

import io

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.event_format import encode_png


def _scale(n_in: int, n_out: int, align_corners: bool) -> float:
    if align_corners and n_out > 1:
        return (n_in - 1) / (n_out - 1)
    return n_in / n_out


def bilinear_weights(n_in: int, n_out: int, align_corners: bool, half_pixel: bool):
    """The (n_out, n_in) float64 matrix of bilinear interpolation along one axis."""
    scale = _scale(n_in, n_out, align_corners)
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        src = (o + 0.5) * scale - 0.5 if half_pixel else o * scale
        lo = int(np.floor(src))
        frac = src - lo
        lo_c, hi_c = min(max(lo, 0), n_in - 1), min(max(lo + 1, 0), n_in - 1)
        w[o, lo_c] += 1.0 - frac
        w[o, hi_c] += frac
    return w


def nearest_weights(n_in: int, n_out: int, align_corners: bool, half_pixel: bool):
    """The (n_out, n_in) 0/1 matrix of nearest-neighbour sampling along one axis."""
    scale = _scale(n_in, n_out, align_corners)
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        if half_pixel:
            src = int(np.floor((o + 0.5) * scale))
        elif align_corners:  # TF rounds halves away from zero (roundf), not to even
            src = int(np.floor(o * scale + 0.5))
        else:
            src = int(np.floor(o * scale))
        w[o, min(max(src, 0), n_in - 1)] = 1.0
    return w


def bicubic_weights(n_in: int, n_out: int, align_corners: bool, half_pixel: bool):
    """The (n_out, n_in) matrix of Keys cubic interpolation along one axis: TF's legacy
    kernel (a = -0.75, edge pixels repeated) or, with half-pixel centers, a = -0.5 with
    taps outside the image dropped and the rest renormalized."""
    scale = _scale(n_in, n_out, align_corners)
    a = -0.5 if half_pixel else -0.75
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        src = (o + 0.5) * scale - 0.5 if half_pixel else o * scale
        lo = int(np.floor(src))
        t = np.rint((src - lo) * 1024) / 1024  # TF reads the kernel from a 1024-step table
        taps = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                ((a + 2) * t - (a + 3)) * t * t + 1,
                ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]
        idx = [lo - 1, lo, lo + 1, lo + 2]
        if half_pixel:
            keep = [(i, c) for i, c in zip(idx, taps) if 0 <= i < n_in]
            total = sum(c for _, c in keep)
            for i, c in keep:
                w[o, i] += c / total
        else:
            for i, c in zip(idx, taps):
                w[o, min(max(i, 0), n_in - 1)] += c
    return w


def area_weights(n_in: int, n_out: int, align_corners: bool, half_pixel: bool):
    """The (n_out, n_in) matrix of area averaging: each output pixel covers
    ``[o * scale, (o + 1) * scale)`` of the input, weighted by overlap."""
    scale = _scale(n_in, n_out, align_corners)
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        start, end = o * scale, (o + 1) * scale
        for i in range(int(np.floor(start)), int(np.ceil(end))):
            overlap = min(end, i + 1) - max(start, i)
            if overlap > 0:
                w[o, min(i, n_in - 1)] += overlap / scale
    return w


_WEIGHTS = {"bilinear": bilinear_weights, "nearest": nearest_weights,
            "bicubic": bicubic_weights, "area": area_weights}


def _size_of(size) -> tuple[int, int]:
    h, w = (int(v) for v in np.asarray(size).reshape(-1))
    if h <= 0 or w <= 0:
        raise errors.InvalidArgumentError(None, None, f"Resize: output size must be "
                                          f"positive, got [{h}, {w}]")
    return h, w


def _check_centers(align_corners, half_pixel_centers) -> None:
    """TensorFlow's resize kernels (and their gradients) reject both flags at once."""
    if half_pixel_centers and align_corners:
        raise errors.InvalidArgumentError(None, None, "If half_pixel_centers is True, "
                                          "align_corners must be False.")


def _resize(kind, images, size, align_corners, half_pixel_centers):
    out_h, out_w = _size_of(size)
    _, in_h, in_w, _ = images.shape
    if in_h == 0 or in_w == 0:
        raise errors.InvalidArgumentError(None, None, f"Resize: input image must have a "
                                          f"non-empty height and width, got {images.shape}")
    wh = _WEIGHTS[kind](in_h, out_h, align_corners, half_pixel_centers)
    ww = _WEIGHTS[kind](in_w, out_w, align_corners, half_pixel_centers)
    return np.einsum("yh,nhwc,xw->nyxc", wh, images.astype(np.float64), ww)


def _bilinear_taps32(n_in: int, n_out: int, align_corners: bool, half_pixel: bool):
    """TF's per-axis bilinear taps in float32: (lower, upper, lerp) for each output."""
    f32 = np.float32
    if align_corners and n_out > 1:
        scale = f32(n_in - 1) / f32(n_out - 1)
    else:
        scale = f32(n_in) / f32(n_out)
    o = np.arange(n_out, dtype=f32)
    src = (o + f32(0.5)) * scale - f32(0.5) if half_pixel else o * scale
    low = np.floor(src)
    lower = np.maximum(low, 0).astype(np.int64)
    upper = (np.minimum(np.ceil(src).astype(np.int64), n_in - 1) if half_pixel
             else np.minimum(lower + 1, n_in - 1))
    return lower, upper, (src - low).astype(f32)


def _bilinear32(images, size, align_corners, half_pixel):
    """TF's float32 bilinear resize, rounding as its kernel does (each lerp in float32:
    top and bottom rows along x, then between them along y)."""
    out_h, out_w = _size_of(size)
    _, in_h, in_w, _ = images.shape
    if in_h == 0 or in_w == 0:
        raise errors.InvalidArgumentError(None, None, f"Resize: input image must have a "
                                          f"non-empty height and width, got {images.shape}")
    y0, y1, ly = _bilinear_taps32(in_h, out_h, align_corners, half_pixel)
    x0, x1, lx = _bilinear_taps32(in_w, out_w, align_corners, half_pixel)
    x = images.astype(np.float32, copy=False)
    top, bottom = x[:, y0], x[:, y1]
    lx, ly = lx[None, None, :, None], ly[None, :, None, None]
    top = top[:, :, x0] + (top[:, :, x1] - top[:, :, x0]) * lx
    bottom = bottom[:, :, x0] + (bottom[:, :, x1] - bottom[:, :, x0]) * lx
    return top + (bottom - top) * ly


@cpu_kernel("ResizeBilinear")
def resize_bilinear(images, size, *, align_corners, half_pixel_centers):
    _check_centers(align_corners, half_pixel_centers)
    return _bilinear32(images, size, align_corners, half_pixel_centers)


@cpu_kernel("ResizeBicubic")
def resize_bicubic(images, size, *, align_corners, half_pixel_centers):
    _check_centers(align_corners, half_pixel_centers)
    return _resize("bicubic", images, size, align_corners, half_pixel_centers).astype(
        np.float32)


@cpu_kernel("ResizeArea")
def resize_area(images, size, *, align_corners):
    return _resize("area", images, size, align_corners, False).astype(np.float32)


@cpu_kernel("ResizeBicubicGrad")
def resize_bicubic_grad(grads, original_image, *, align_corners, half_pixel_centers):
    _check_centers(align_corners, half_pixel_centers)
    out = _resize_grad("bicubic", grads, original_image, align_corners, half_pixel_centers)
    return out.astype(original_image.dtype)


@cpu_kernel("ResizeNearestNeighbor")
def resize_nearest(images, size, *, align_corners, half_pixel_centers):
    _check_centers(align_corners, half_pixel_centers)
    out = _resize("nearest", images, size, align_corners, half_pixel_centers)
    return out.astype(images.dtype)  # exact: one source pixel per output pixel


def _resize_grad(kind, grads, original, align_corners, half_pixel_centers):
    _, in_h, in_w, _ = np.shape(original)
    _, out_h, out_w, _ = grads.shape
    wh = _WEIGHTS[kind](in_h, out_h, align_corners, half_pixel_centers)
    ww = _WEIGHTS[kind](in_w, out_w, align_corners, half_pixel_centers)
    return np.einsum("yh,nyxc,xw->nhwc", wh, grads.astype(np.float64), ww)


@cpu_kernel("ResizeBilinearGrad")
def resize_bilinear_grad(grads, original_image, *, align_corners, half_pixel_centers):
    _check_centers(align_corners, half_pixel_centers)
    out = _resize_grad("bilinear", grads, original_image, align_corners, half_pixel_centers)
    return out.astype(original_image.dtype)


@cpu_kernel("ResizeNearestNeighborGrad")
def resize_nearest_grad(grads, size, *, align_corners, half_pixel_centers):
    _check_centers(align_corners, half_pixel_centers)
    in_h, in_w = _size_of(size)
    shape = (grads.shape[0], in_h, in_w, grads.shape[3])
    out = _resize_grad("nearest", grads, np.empty(shape, np.int8), align_corners,
                       half_pixel_centers)
    return out.astype(grads.dtype)


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise errors.UnimplementedError(
            None, None, "Decoding images needs the Pillow package, which is not installed: "
            "pip install Pillow") from None
    return Image


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _jpeg_fast_idct(img, dct_method: str, fancy_upscaling: bool) -> bool:
    """Whether Pillow's draft decoding (libjpeg's fast integer IDCT, no fancy upsampling)
    gives TF's pixels. TF decodes with the fast IDCT unless ``dct_method`` is
    INTEGER_ACCURATE (Pillow's normal decoding); fancy upsampling only touches subsampled
    chroma, so the draft decoding is exact for gray and 4:4:4 images or without it."""
    if isinstance(dct_method, bytes):
        dct_method = dct_method.decode()
    if img.format != "JPEG" or dct_method == "INTEGER_ACCURATE":
        return False
    from PIL import JpegImagePlugin

    return (not fancy_upscaling or img.layers == 1
            or JpegImagePlugin.get_sampling(img) == 0)


def _decode(contents, channels: int, what: str, formats: tuple[str, ...], dtype=np.uint8,
            dct_method: str = "", fancy_upscaling: bool = True):
    image_mod = _pil()
    data = np.asarray(contents, dtype=object).reshape(())[()]
    data = data if isinstance(data, bytes) else str(data).encode("latin-1")
    try:
        img = image_mod.open(io.BytesIO(data))
        if _jpeg_fast_idct(img, dct_method, fancy_upscaling):
            img.decoderconfig = (1, 1)  # (scale, draft): libjpeg's JDCT_IFAST
        img.load()
    except Exception as e:  # Pillow raises many types for bad data
        raise errors.InvalidArgumentError(
            None, None, f"{what}: the data ({len(data)} bytes, starting {data[:8]!r}) is not "
            f"a valid image: {e}") from None
    if img.format not in formats:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: expected {' or '.join(formats)} data, got {img.format}")
    if channels:
        img = img.convert(_MODES[channels])
    elif img.mode not in ("L", "LA", "RGB", "RGBA", "I;16", "I"):
        img = img.convert("RGBA" if "A" in img.mode or "transparency" in img.info else "RGB")
    arr = np.asarray(img)
    if dtype == np.uint16 and arr.dtype != np.uint16:
        arr = arr.astype(np.uint16) * 257
    elif dtype == np.uint8 and arr.dtype != np.uint8:
        arr = (arr.astype(np.int64) >> 8).astype(np.uint8)
    return arr.reshape(arr.shape[0], arr.shape[1], -1).astype(dtype)


# DecodePng and DecodeJpeg share DecodeImage's kernel (`kernels_image_codec`).


@cpu_kernel("EncodePng")
def encode_png_kernel(image, *, compression):
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise errors.InvalidArgumentError(None, None, f"EncodePng: image must be uint8, got "
                                          f"{arr.dtype}")
    out = np.empty((), dtype=object)
    out[()] = encode_png(arr, 6 if compression < 0 else int(compression))
    return out
