"""CPU kernels of the projective image transforms (`flowgraph/ops/image_transform_ops.py`).

Vectorized over every output pixel: the 8-float transform maps the output grid to
input coordinates (in float32, as TensorFlow computes them), the fill mode folds
coordinates that fall outside the input back in (``REFLECT``: ``dcba|abcd|dcba``,
``WRAP``: ``abcd|abcd|abcd``, ``NEAREST``: clamped; ``CONSTANT`` leaves them out, to read
``fill_value``), then pixels are read by rounding (half away from zero) or bilinearly
from the four neighbours. Values are interpolated in float32 whatever the image dtype
and cast back (truncating for integer images), matching TensorFlow's kernel.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_F32 = np.float32


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _reflect(c: np.ndarray, n: int) -> np.ndarray:
    if n <= 1:
        return np.zeros_like(c)
    sz2 = _F32(2 * n)
    neg = c + sz2 * np.trunc(-c / sz2)
    neg = np.where(neg < -n, neg + sz2, -neg - 1)
    pos = c - sz2 * np.trunc(c / sz2)
    pos = np.where(pos >= n, sz2 - pos - 1, pos)
    out = np.where(c < 0, neg, np.where(c > n - 1, pos, c))
    return np.clip(out, 0, n - 1).astype(_F32)


def _wrap(c: np.ndarray, n: int) -> np.ndarray:
    if n <= 1:
        return np.zeros_like(c)
    sz = _F32(n - 1)
    neg = c + _F32(n) * (np.trunc(-c / sz) + 1)
    pos = c - _F32(n) * np.trunc(c / sz)
    out = np.where(c < 0, neg, np.where(c > n - 1, pos, c))
    return np.clip(out, 0, n - 1).astype(_F32)


def _map(c: np.ndarray, n: int, mode: str) -> np.ndarray:
    if mode == "REFLECT":
        return _reflect(c, n)
    if mode == "WRAP":
        return _wrap(c, n)
    if mode == "NEAREST":
        return np.clip(c, 0, n - 1).astype(_F32)
    return c


def _index(c: np.ndarray) -> np.ndarray:
    """Float coordinates as int64 indices, far-away ones parked at -1 (outside)."""
    ok = np.isfinite(c) & (np.abs(c) < 2.0**62)
    return np.where(ok, c, -1).astype(np.int64)


def _project(images, transforms, output_shape, interpolation, fill_mode, fill_value, op):
    interpolation, fill_mode = (v.decode() if isinstance(v, bytes) else v
                                for v in (interpolation, fill_mode))
    if interpolation not in ("NEAREST", "BILINEAR"):
        raise _invalid(f"{op}: invalid interpolation {interpolation!r}; expected 'NEAREST' "
                       f"or 'BILINEAR'")
    if fill_mode not in ("CONSTANT", "REFLECT", "WRAP", "NEAREST"):
        raise _invalid(f"{op}: invalid fill_mode {fill_mode!r}; expected 'CONSTANT', "
                       f"'REFLECT', 'WRAP' or 'NEAREST'")
    if images.ndim != 4:
        raise _invalid(f"{op}: images must be 4-D [batch, height, width, channels], got "
                       f"shape {list(images.shape)}")
    b, h, w = images.shape[:3]
    t = np.asarray(transforms, _F32)
    if t.ndim != 2 or t.shape[1] != 8 or t.shape[0] not in (b, 1):
        raise _invalid(f"{op}: input transform should be num_images x 8 or 1 x 8 "
                       f"(num_images={b}), got shape {list(t.shape)}")
    size = np.asarray(output_shape)
    if size.shape != (2,):
        raise _invalid(f"{op}: output_shape must be a 1-D tensor of 2 elements: new_height, "
                       f"new_width; got shape {list(size.shape)}")
    oh, ow = (int(v) for v in size)
    if oh <= 0 or ow <= 0:
        raise _invalid(f"{op}: output dimensions must be positive, got {[oh, ow]}")
    fill = _F32(fill_value).astype(images.dtype)
    t = np.broadcast_to(t, (b, 8))[:, :, None, None]
    ys = np.arange(oh, dtype=_F32)[None, :, None]
    xs = np.arange(ow, dtype=_F32)[None, None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        proj = t[:, 6] * xs + t[:, 7] * ys + _F32(1)
        in_x = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / proj
        in_y = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / proj
        x = _map(in_x.astype(_F32), w, fill_mode)
        y = _map(in_y.astype(_F32), h, fill_mode)
    batch = np.arange(b)[:, None, None]

    def read(yi, xi):
        ok = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
        vals = images[batch, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
        return np.where(ok[..., None], vals, fill)

    with np.errstate(invalid="ignore"):
        if interpolation == "NEAREST":
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            xr = np.sign(x64) * np.floor(np.abs(x64) + 0.5)
            yr = np.sign(y64) * np.floor(np.abs(y64) + 0.5)
            out = read(_index(yr), _index(xr))
        else:
            yf, xf = np.floor(y), np.floor(x)
            yc, xc = yf + 1, xf + 1
            yfi, xfi, yci, xci = _index(yf), _index(xf), _index(yc), _index(xc)
            wxf, wxc = (xc - x)[..., None], (x - xf)[..., None]
            top = wxf * read(yfi, xfi).astype(_F32) + wxc * read(yfi, xci).astype(_F32)
            bottom = wxf * read(yci, xfi).astype(_F32) + wxc * read(yci, xci).astype(_F32)
            out = (yc - y)[..., None] * top + (y - yf)[..., None] * bottom
            if images.dtype.kind in "iu":
                out = np.trunc(out)
            out = out.astype(images.dtype)
    return np.where((proj == 0)[..., None], fill, out).astype(images.dtype)


@cpu_kernel("ImageProjectiveTransformV2", fresh=True)
def image_projective_transform_v2(images, transforms, output_shape, *, interpolation,
                                  fill_mode):
    return _project(images, transforms, output_shape, interpolation, fill_mode, 0.0,
                    "ImageProjectiveTransformV2")


@cpu_kernel("ImageProjectiveTransformV3", fresh=True)
def image_projective_transform_v3(images, transforms, output_shape, fill_value, *,
                                  interpolation, fill_mode):
    if np.ndim(fill_value) != 0:
        raise _invalid(f"ImageProjectiveTransformV3: fill_value must be a scalar, got shape "
                       f"{list(np.shape(fill_value))}")
    return _project(images, transforms, output_shape, interpolation, fill_mode,
                    float(fill_value), "ImageProjectiveTransformV3")


@cpu_kernel("ImageConnectedComponents", fresh=True)
def image_connected_components(image):
    """Regions of equal nonzero (non-empty) pixels joined across edges (not corners):
    a graph with one node per pixel and an edge per equal pair of neighbours, its
    components numbered by their first pixel in the flattened batch; background 0."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if image.ndim != 3:
        raise _invalid(f"ImageConnectedComponents: image must be 3-D [batch, height, width], "
                       f"got shape {list(image.shape)}")
    fg = image != (b"" if image.dtype == object else 0)
    idx = np.arange(image.size).reshape(image.shape)
    right = fg[:, :, :-1] & (image[:, :, :-1] == image[:, :, 1:])
    down = fg[:, :-1, :] & (image[:, :-1, :] == image[:, 1:, :])
    src = np.concatenate([idx[:, :, :-1][right], idx[:, :-1, :][down]])
    dst = np.concatenate([idx[:, :, 1:][right], idx[:, 1:, :][down]])
    graph = coo_matrix((np.ones(src.size, np.int8), (src, dst)), shape=(image.size,) * 2)
    _, comp = connected_components(graph, directed=False)
    comp = comp[fg.reshape(-1)]
    _, first, inverse = np.unique(comp, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(1, first.size + 1)
    out = np.zeros(image.size, np.int64)
    out[fg.reshape(-1)] = rank[inverse.reshape(-1)]
    return out.reshape(image.shape)
