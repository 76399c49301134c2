"""CPU kernels of `flowgraph/ops/image_raw_ops.py`: HSV conversions and the hue,
saturation and contrast adjustments, image and volume patches, and the TF1 spellings of
non-max suppression, distorted-box sampling and glimpses (which reuse
`kernels_image_boxes`).

HSV: ``value = max(r, g, b)``, ``saturation = (value - min) / value`` (0 for black),
hue in ``[0, 1)`` from the sixth of the color circle the largest channel names (0 for
greys). The adjustments work in float32 (float64 images in float64) and return the
input's dtype; the hue rotation wraps around the circle and saturation is clipped to
``[0, 1]``.

Patches: the image padded with zeros (``SAME``: as a convolution pads, with the dilated
window), then one strided slice per window tap, stacked before the depth, so that an
output's last axis is ``(tap row, tap column[, ...], channel)`` with the channel fastest.
"""

from __future__ import annotations

import itertools

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_image_boxes as _boxes
from flowgraph.framework import errors

_FLOATS = ["float16", "float32", "float64"]


def _invalid(op, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


def _rgb(op, images, min_rank: int = 1):
    if images.ndim < min_rank or images.shape[-1] != 3:
        raise _invalid(op, f"input must be at least {min_rank}-D with a last dimension of 3 "
                       f"(RGB or HSV), got shape {list(images.shape)}")


def _work_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


# -- HSV ---------------------------------------------------------------------------------
def rgb_to_hsv_array(rgb: np.ndarray) -> np.ndarray:
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = np.maximum(np.maximum(r, g), b)
    spread = value - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        saturation = np.where(value > 0, spread / np.where(value > 0, value, 1), 0)
        safe = np.where(spread > 0, spread, 1)
        hue = np.where(value == r, (g - b) / safe,
                       np.where(value == g, 2 + (b - r) / safe, 4 + (r - g) / safe)) / 6
    hue = np.where(hue < 0, hue + 1, hue)
    hue = np.where(spread > 0, hue, 0)
    return np.stack([hue, saturation, value], axis=-1).astype(rgb.dtype)


def hsv_to_rgb_array(hsv: np.ndarray) -> np.ndarray:
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    chroma = s * v
    low = v - chroma
    sector6 = h * 6
    sector = np.mod(np.floor(sector6), 6).astype(np.int64)  # hue 1.0 is hue 0.0
    mid = chroma * (1 - np.abs(np.mod(sector6, 2) - 1))
    zero = np.zeros_like(v)
    # (r, g, b) before adding `low`, for each sixth of the hue circle
    table = np.stack([np.stack(t, axis=-1) for t in (
        (chroma, mid, zero), (mid, chroma, zero), (zero, chroma, mid),
        (zero, mid, chroma), (mid, zero, chroma), (chroma, zero, mid))], axis=0)
    picked = np.take_along_axis(table, sector[None, ..., None], axis=0)[0]
    return (picked + low[..., None]).astype(hsv.dtype)


@cpu_kernel("RGBToHSV", dtypes=_FLOATS, fresh=True)
def rgb_to_hsv(images, *, op):
    _rgb(op, images)
    return rgb_to_hsv_array(images)


@cpu_kernel("HSVToRGB", dtypes=_FLOATS, fresh=True)
def hsv_to_rgb(images, *, op):
    _rgb(op, images)
    return hsv_to_rgb_array(images)


@cpu_kernel("AdjustHue", dtypes=_FLOATS, fresh=True)
def adjust_hue(images, delta, *, op):
    _rgb(op, images, 3)
    hsv = rgb_to_hsv_array(images.astype(_work_dtype(images.dtype)))
    hsv[..., 0] = np.mod(hsv[..., 0] + np.float32(delta), 1)
    return hsv_to_rgb_array(hsv).astype(images.dtype)


@cpu_kernel("AdjustSaturation", dtypes=_FLOATS, fresh=True)
def adjust_saturation(images, scale, *, op):
    _rgb(op, images, 3)
    hsv = rgb_to_hsv_array(images.astype(_work_dtype(images.dtype)))
    hsv[..., 1] = np.clip(hsv[..., 1] * np.float32(scale), 0, 1)
    return hsv_to_rgb_array(hsv).astype(images.dtype)


def _contrast(op, images, factor):
    if images.ndim < 3:
        raise _invalid(op, f"images must be at least 3-D [..., height, width, channels], got "
                       f"shape {list(images.shape)}")
    if np.ndim(factor) != 0:
        raise _invalid(op, f"contrast_factor must be a scalar, got shape "
                       f"{list(np.shape(factor))}")
    x = images.astype(_work_dtype(images.dtype))
    if x.size == 0:
        return x
    mean = x.mean(axis=(-3, -2), keepdims=True, dtype=np.float64).astype(x.dtype)
    return (x - mean) * x.dtype.type(factor) + mean


@cpu_kernel("AdjustContrastv2", dtypes=_FLOATS, fresh=True)
def adjust_contrast_v2(images, contrast_factor, *, op):
    return _contrast(op, images, contrast_factor).astype(images.dtype)


@cpu_kernel("AdjustContrast", fresh=True)
def adjust_contrast(images, contrast_factor, min_value, max_value, *, op):
    out = _contrast(op, images.astype(np.float32), contrast_factor)
    return np.clip(out, np.float32(min_value), np.float32(max_value)).astype(np.float32)


# -- ScaleAndTranslate ---------------------------------------------------------------------
def _lanczos(radius):
    def kernel(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            v = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi * np.pi * x * x)
        return np.where(x > radius, 0.0, np.where(x <= 1e-3, 1.0, v))
    return kernel, float(radius)


def _cubic(a3, a2, a1, a0, b3, b2, b1, b0):
    def kernel(x):
        near = ((a3 * x + a2) * x + a1) * x + a0
        far = ((b3 * x + b2) * x + b1) * x + b0
        return np.where(x >= 2, 0.0, np.where(x >= 1, far, near))
    return kernel, 2.0


# kernel_type -> (weight of |distance|, radius), TensorFlow's sampling kernels
_SAMPLING = {
    "lanczos1": _lanczos(1), "lanczos3": _lanczos(3), "lanczos5": _lanczos(5),
    "gaussian": (lambda x: np.where(x >= 1.5, 0.0, np.exp(-x * x / 0.5)), 1.5),
    "box": (lambda x: np.where(x < 0.5, 1.0, np.where(x == 0.5, 0.5, 0.0)), 1.0),
    "triangle": (lambda x: np.where(x < 1, 1 - x, 0.0), 1.0),
    "keyscubic": _cubic(1.5, -2.5, 0.0, 1.0, -0.5, 2.5, -4.0, 2.0),
    "mitchellcubic": _cubic(7 / 6, -2.0, 0.0, 8 / 9, -7 / 18, 2.0, -10 / 3, 16 / 9),
}


def scale_weights(out_size: int, in_size: int, scale: float, translate: float,
                  kernel_type: str, antialias: bool) -> np.ndarray:
    """``[out_size, in_size]``: each output pixel's normalized weights over the input
    pixels (a row of zeros where the sample falls outside the input)."""
    kernel, radius = _SAMPLING[kernel_type]
    inv = 1.0 / scale
    kscale = max(inv, 1.0) if antialias else 1.0
    sample = (np.arange(out_size) + 0.5) * inv - inv * translate           # [out]
    start = np.clip(np.ceil(sample - radius * kscale - 0.5), 0, in_size - 1)
    end = np.clip(np.floor(sample + radius * kscale - 0.5), 0, in_size - 1) + 1
    src = np.arange(in_size)[None, :]
    inside = (src >= start[:, None]) & (src < end[:, None])
    w = np.where(inside, kernel(np.abs((src + 0.5 - sample[:, None]) / kscale)), 0.0)
    total = w.sum(axis=1, keepdims=True)
    ok = (np.abs(total) >= 1000 * np.finfo(np.float32).tiny) & \
        ((sample >= 0) & (sample <= in_size))[:, None]
    return np.where(ok, w / np.where(total == 0, 1, total), 0.0)


def _scale_args(op, images, size, scale, translation, kernel_type):
    if images.ndim != 4:
        raise _invalid(op, f"images must be 4-D, got shape {list(images.shape)}")
    if kernel_type not in _SAMPLING:
        raise _invalid(op, f"unknown kernel_type {kernel_type!r}; one of "
                       f"{', '.join(sorted(_SAMPLING))}")
    scale = [float(v) for v in np.reshape(scale, -1)]
    if len(scale) != 2 or min(scale) <= 0:
        raise _invalid(op, f"scale must be 2 positive numbers, got {scale}")
    return scale, [float(v) for v in np.reshape(translation, -1)]


@cpu_kernel("ScaleAndTranslate", fresh=True)
def scale_and_translate(images, size, scale, translation, *, kernel_type, antialias, op):
    (sy, sx), (ty, tx) = _scale_args(op, images, size, scale, translation, kernel_type)
    oh, ow = (int(v) for v in np.reshape(size, -1))
    if oh <= 0 or ow <= 0:
        raise _invalid(op, f"size must be positive, got {[oh, ow]}")
    _, h, w, _ = images.shape
    wy = scale_weights(oh, h, sy, ty, kernel_type, antialias)
    wx = scale_weights(ow, w, sx, tx, kernel_type, antialias)
    out = np.einsum("oh,bhwc->bowc", wy, images.astype(np.float64))
    out = np.einsum("pw,bowc->bopc", wx, out)
    return out if images.dtype == np.float64 else out.astype(np.float32)


@cpu_kernel("ScaleAndTranslateGrad", dtypes=_FLOATS, fresh=True)
def scale_and_translate_grad(grads, image, scale, translation, *, kernel_type, antialias,
                             op):
    (sy, sx), (ty, tx) = _scale_args(op, image, None, scale, translation, kernel_type)
    _, oh, ow, _ = grads.shape
    _, h, w, _ = image.shape
    wy = scale_weights(oh, h, sy, ty, kernel_type, antialias)
    wx = scale_weights(ow, w, sx, tx, kernel_type, antialias)
    out = np.einsum("pw,bopc->bowc", wx, grads.astype(np.float64))
    return np.einsum("oh,bowc->bhwc", wy, out).astype(grads.dtype)


# -- patches -----------------------------------------------------------------------------
def _patches(op, x, ksizes, strides, rates, padding):
    rank = len(ksizes)
    if x.ndim != rank:
        raise _invalid(op, f"the input must be {rank}-D, got shape {list(x.shape)}")
    pads, outs = [(0, 0)], []
    for size, k, s, r in zip(x.shape[1:-1], ksizes[1:-1], strides[1:-1], rates[1:-1]):
        eff = (k - 1) * r + 1
        if padding == "SAME":
            out = -(-size // s)
            total = max((out - 1) * s + eff - size, 0)
            pads.append((total // 2, total - total // 2))
        else:
            out = (size - eff) // s + 1 if size >= eff else 0
            pads.append((0, 0))
        outs.append(out)
    padded = np.pad(x, [*pads, (0, 0)])
    n, depth = x.shape[0], x.shape[-1]
    taps = []
    for tap in itertools.product(*[range(k) for k in ksizes[1:-1]]):
        index = tuple(slice(t * r, t * r + (o - 1) * s + 1, s) if o > 0 else slice(0, 0)
                      for t, r, o, s in zip(tap, rates[1:-1], outs, strides[1:-1]))
        taps.append(padded[(slice(None), *index)])
    k = len(taps)
    stacked = np.stack(taps, axis=-2) if taps else np.zeros((n, *outs, 0, depth), x.dtype)
    return np.ascontiguousarray(stacked.reshape(n, *outs, k * depth))


@cpu_kernel("ExtractImagePatches", fresh=True)
def extract_image_patches(images, *, ksizes, strides, rates, padding, op):
    return _patches(op, images, list(ksizes), list(strides), list(rates), padding)


@cpu_kernel("ExtractVolumePatches", fresh=True)
def extract_volume_patches(x, *, ksizes, strides, padding, op):
    return _patches(op, x, list(ksizes), list(strides), [1] * 5, padding)


# -- TF1 box ops -------------------------------------------------------------------------
def _nms(op, boxes, scores, max_output_size, threshold):
    _boxes._check_boxes(boxes, scores, op.type)
    thr = float(threshold)
    if not 0.0 <= thr <= 1.0:
        raise _invalid(op, f"iou_threshold must be in [0, 1], got {thr}")
    idx, _ = _boxes.greedy_nms(_boxes.iou_function(boxes), scores,
                               _boxes._max_out(max_output_size, op.type), thr, float("-inf"))
    return idx


@cpu_kernel("NonMaxSuppression")
def nms_v1(boxes, scores, max_output_size, *, iou_threshold, op):
    return _nms(op, boxes, scores, max_output_size, iou_threshold)


@cpu_kernel("NonMaxSuppressionV2")
def nms_v2(boxes, scores, max_output_size, iou_threshold, *, op):
    return _nms(op, boxes, scores, max_output_size, iou_threshold)


@cpu_kernel("SampleDistortedBoundingBox")
class SampleDistortedBoundingBoxV1(_boxes.SampleDistortedBoundingBox):
    """``SampleDistortedBoundingBoxV2`` with ``min_object_covered`` an attribute."""

    def __init__(self, ctx, *, seed, seed2, min_object_covered, aspect_ratio_range,
                 area_range, max_attempts, use_image_if_no_bounding_boxes):
        super().__init__(ctx, seed=seed, seed2=seed2, aspect_ratio_range=aspect_ratio_range,
                         area_range=area_range, max_attempts=max_attempts,
                         use_image_if_no_bounding_boxes=use_image_if_no_bounding_boxes)
        self.min_object_covered = np.float32(min_object_covered)

    what = "SampleDistortedBoundingBox"

    def __call__(self, image_size, bounding_boxes):
        return super().__call__(image_size, bounding_boxes, self.min_object_covered)


@cpu_kernel("StatelessSampleDistortedBoundingBox")
class StatelessSampleDistortedBoundingBox(_boxes.SampleDistortedBoundingBox):
    """The same sampler drawing from the Philox stream TensorFlow derives from `seed`
    (the stateless random ops' key and counter), so a seed always gives one crop."""

    what = "StatelessSampleDistortedBoundingBox"

    def __init__(self, ctx, *, aspect_ratio_range, area_range, max_attempts,
                 use_image_if_no_bounding_boxes):
        super().__init__(ctx, seed=1, seed2=1, aspect_ratio_range=aspect_ratio_range,
                         area_range=area_range, max_attempts=max_attempts,
                         use_image_if_no_bounding_boxes=use_image_if_no_bounding_boxes)

    def __call__(self, image_size, bounding_boxes, min_object_covered, seed):
        from flowgraph.backends.cpu import kernels_random_stateless as sl
        from flowgraph.backends.cpu import random_tf_streams as rts

        cursor = rts.WordCursor(sl.KeyCounter(sl.key_counter(seed)))
        return self.sample(cursor, image_size, bounding_boxes, min_object_covered)


@cpu_kernel("RandomCrop")
class RandomCrop:
    """TF1's crop at a random place: one Philox block of the op's stream per run, its
    first word (modulo the room left) the column offset when the image is wider than the
    crop, the next one the row offset when it is taller."""

    def __init__(self, ctx, *, seed, seed2):
        from flowgraph.backends.cpu.kernels_random import _TFStream

        self.stream = _TFStream(seed, seed2)

    def __call__(self, image, size):
        from flowgraph.backends.cpu import random_tf_streams as rts

        if image.ndim != 3:
            raise _invalid_plain(f"RandomCrop: image must be 3-D [height, width, channels], "
                                 f"got shape {list(image.shape)}")
        target = [int(v) for v in np.reshape(size, -1)]
        if len(target) != 2:
            raise _invalid_plain(f"RandomCrop: size must be [height, width], got {target}")
        (height, width, _), (th, tw) = image.shape, target
        if width < tw or height < th:
            raise errors.FailedPreconditionError(
                None, None, f"RandomCrop: the image ({height}x{width}) is smaller than the "
                f"crop ({th}x{tw})")
        cursor = rts.WordCursor(self.stream.reserve_blocks(1))

        def offset(room):
            return int(cursor.take(1)[0]) % (room + 1)

        left = offset(width - tw) if width > tw else 0
        top = offset(height - th) if height > th else 0
        return np.ascontiguousarray(image[top:top + th, left:left + tw])


def _invalid_plain(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


@cpu_kernel("ExtractGlimpse")
def extract_glimpse_v1(images, size, offsets, *, centered, normalized, uniform_noise, noise):
    return _boxes.extract_glimpse(images, size, offsets, centered=centered,
                                  normalized=normalized, uniform_noise=uniform_noise,
                                  noise=noise)
