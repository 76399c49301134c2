"""More `tf.image` functions composed from existing ops (so differentiable wherever
their parts are): image-quality metrics (`psnr`, `ssim`, `ssim_multiscale`,
`total_variation`), derivative filters (`image_gradients`, `sobel_edges`), gamma
correction, YIQ/YUV color conversions and TF 2 names of existing functions
(`transpose`, `resize_with_crop_or_pad`, `extract_patches`).

SSIM uses an 11x11 Gaussian window (sigma 1.5) applied as two 1-D passes (the 2-D
window is the outer product of the 1-D one) without padding ("VALID").

Example
-------
>>> import flowgraph as tf
>>> a = tf.reshape(tf.range(12.0), [1, 2, 2, 3]) / 12.0
>>> [round(float(v), 3) for v in tf.Session().run(tf.image.psnr(a, a * 0.5, max_val=1.0))]
[11.355]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_compat_ops import extract_image_patches
from flowgraph.ops.array_join_ops import concat, pad, stack
from flowgraph.ops.array_shape_ops import reshape, shape, zeros_like
from flowgraph.ops.image_adjust_ops import (
    convert_image_dtype,
    resize_image_with_crop_or_pad,
    transpose_image,
)
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import cast, log, maximum, squared_difference
from flowgraph.ops.math_reduce import reduce_mean, reduce_prod, reduce_sum
from flowgraph.ops.math_tensordot import tensordot

__all__ = ["adjust_gamma", "extract_patches", "image_gradients", "psnr",
           "resize_with_crop_or_pad", "rgb_to_yiq", "rgb_to_yuv", "sobel_edges", "ssim",
           "ssim_multiscale", "total_variation", "transpose", "yiq_to_rgb", "yuv_to_rgb"]

transpose = transpose_image
resize_with_crop_or_pad = resize_image_with_crop_or_pad


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """TF 2's name for `extract_image_patches` (``sizes`` for ``ksizes``).

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.image.extract_patches(tf.ones([1, 4, 4, 1]), [1, 2, 2, 1], [1, 2, 2, 1],
    ...                              [1, 1, 1, 1], "VALID")
    >>> p.shape.as_list()
    [1, 2, 2, 4]
    """
    return extract_image_patches(images, ksizes=sizes, strides=strides, rates=rates,
                                 padding=padding, name=name or "ExtractImagePatches")


def _float_pair(a, b, max_val):
    a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
    if a.dtype.base_dtype != b.dtype.base_dtype:
        raise TypeError(f"the two images must have one dtype, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    mv = cast(convert_to_tensor(max_val), a.dtype.base_dtype)
    mv = convert_image_dtype(mv, _dtypes.float32)
    return (convert_image_dtype(a, _dtypes.float32), convert_image_dtype(b, _dtypes.float32),
            mv)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image (over the last three axes), in dB:
    ``10 * log10(max_val**2 / mse)``; integer images are scaled to ``[0, 1]`` first.

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.image.psnr([[[0.0]]], [[[0.1]]], 1.0))), 2)
    20.0
    """
    with name_scope(name, "PSNR", [a, b]):
        a, b, mv = _float_pair(a, b, max_val)
        mse = reduce_mean(squared_difference(a, b), [-3, -2, -1])
        ln10 = np.log(10.0)
        return 20.0 * log(mv) / ln10 - (10.0 / ln10) * log(mse)


def _gauss_1d(size: int, sigma: float) -> np.ndarray:
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = np.exp(-0.5 * coords**2 / sigma**2)
    return (g / g.sum()).astype(np.float32)


def _blur(x, weights):
    """Separable VALID filtering of ``[batch, h, w, c]`` with `weights` on both axes."""
    k = len(weights)
    rows = sum(float(w) * x[:, i: i - k + 1 if i - k + 1 < 0 else None] for i, w in
               enumerate(weights))
    return sum(float(w) * rows[:, :, i: i - k + 1 if i - k + 1 < 0 else None] for i, w in
               enumerate(weights))


def _ssim_parts(x, y, max_val, size, sigma, k1, k2):
    """Per-pixel luminance and contrast-structure terms of ``[batch, h, w, c]`` images."""
    h, w = x.shape[1].value, x.shape[2].value
    if h is not None and w is not None and (h < size or w < size):
        raise ValueError(f"ssim: the images ({h}x{w}) must be at least filter_size="
                         f"{size} pixels high and wide")
    g = _gauss_1d(size, sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = _blur(x, g), _blur(y, g)
    num0 = mx * my * 2.0
    den0 = mx * mx + my * my
    luminance = (num0 + c1) / (den0 + c1)
    num1 = _blur(x * y, g) * 2.0
    den1 = _blur(x * x + y * y, g)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _as_batch(x):
    return reshape(x, concat([[-1], shape(x)[-3:]], 0))


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """Structural similarity of two images (or batches, ``[..., h, w, c]``), averaged
    over pixels and channels (or per pixel with `return_index_map`).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(256.0), [1, 16, 16, 1]) / 256.0
    >>> tf.Session().run(tf.image.ssim(x, x, 1.0)).tolist()
    [1.0]
    """
    with name_scope(None, "SSIM", [img1, img2]):
        a, b, mv = _float_pair(img1, img2, max_val)
        lead = shape(a)[:-3]
        lum, cs = _ssim_parts(_as_batch(a), _as_batch(b), mv, filter_size, filter_sigma, k1, k2)
        index = lum * cs
        if return_index_map:
            return reduce_mean(reshape(index, concat([lead, shape(index)[1:]], 0)), [-1])
        value = reduce_mean(index, [-3, -2, -1])
        return reshape(value, lead)


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _halve(x):
    """2x2 average pooling (stride 2) after symmetric padding to even sizes."""
    h, w = x.shape[1].value, x.shape[2].value
    if h is None or w is None:
        raise ValueError("ssim_multiscale: the images' height and width must be known")
    x = pad(x, [[0, 0], [0, h % 2], [0, w % 2], [0, 0]], mode="SYMMETRIC")
    return (x[:, 0::2, 0::2] + x[:, 1::2, 0::2] + x[:, 0::2, 1::2] + x[:, 1::2, 1::2]) * 0.25


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM: contrast-structure terms at ``len(power_factors)`` scales
    (halving each time) and SSIM at the coarsest, combined as a weighted geometric mean.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(180.0 * 180.0), [1, 180, 180, 1]) % 7.0 / 7.0
    >>> tf.Session().run(tf.image.ssim_multiscale(x, x, 1.0)).round(4).tolist()
    [1.0]
    """
    with name_scope(None, "MS-SSIM", [img1, img2]):
        a, b, mv = _float_pair(img1, img2, max_val)
        lead = shape(a)[:-3]
        x, y = _as_batch(a), _as_batch(b)
        terms = []
        for k in range(len(power_factors)):
            if k:
                x, y = _halve(x), _halve(y)
            lum, cs = _ssim_parts(x, y, mv, filter_size, filter_sigma, k1, k2)
            if k == len(power_factors) - 1:
                terms.append(reduce_mean(lum * cs, [1, 2]))
            else:
                terms.append(reduce_mean(cs, [1, 2]))
        values = maximum(stack(terms, axis=-1), 0.0)
        weights = convert_to_tensor(np.asarray(power_factors, np.float32))
        per_channel = reduce_prod(values ** weights, [-1])
        return reshape(reduce_mean(per_channel, [-1]), lead)


def total_variation(images, name=None):
    """Sum of absolute differences between neighbouring pixels: a scalar for one image
    ``[h, w, c]``, one value per image for ``[batch, h, w, c]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> float(tf.Session().run(tf.image.total_variation([[[0.0], [1.0]], [[3.0], [3.0]]])))
    6.0
    """
    with name_scope(name, "total_variation", [images]):
        x = convert_to_tensor(images, name="images")
        if x.shape.ndims == 3:
            return (reduce_sum(_abs(x[1:] - x[:-1])) + reduce_sum(_abs(x[:, 1:] - x[:, :-1])))
        if x.shape.ndims == 4:
            axes = [1, 2, 3]
            return (reduce_sum(_abs(x[:, 1:] - x[:, :-1]), axes)
                    + reduce_sum(_abs(x[:, :, 1:] - x[:, :, :-1]), axes))
        raise ValueError(f"total_variation: images must be 3-D or 4-D, got shape {x.shape}")


def image_gradients(image):
    """Forward differences ``(dy, dx)`` of ``[batch, h, w, c]`` images, zero in the last
    row (``dy``) and column (``dx``).

    Example
    -------
    >>> import flowgraph as tf
    >>> dy, dx = tf.image.image_gradients(tf.reshape(tf.range(4.0), [1, 2, 2, 1]))
    >>> tf.Session().run(dx)[0, :, :, 0].tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    x = convert_to_tensor(image, name="image")
    if x.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{x.shape}.")
    dy = concat([x[:, 1:] - x[:, :-1], zeros_like(x[:, :1])], 1)
    dx = concat([x[:, :, 1:] - x[:, :, :-1], zeros_like(x[:, :, :1])], 2)
    return dy, dx


_SOBEL_Y = ((-1.0, -2.0, -1.0), (0.0, 0.0, 0.0), (1.0, 2.0, 1.0))


def sobel_edges(image):
    """Sobel responses ``[batch, h, w, c, 2]`` (``[..., 0]`` vertical, ``[..., 1]``
    horizontal) with reflected borders.

    Example
    -------
    >>> import flowgraph as tf
    >>> e = tf.image.sobel_edges(tf.reshape(tf.range(9.0), [1, 3, 3, 1]))
    >>> tf.Session().run(e)[0, 1, 1, 0].tolist()
    [24.0, 8.0]
    """
    x = convert_to_tensor(image, name="image")
    padded = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")

    def window(i, j):
        return padded[:, i: i - 2 if i < 2 else None, j: j - 2 if j < 2 else None]

    outs = []
    for kernel in (np.array(_SOBEL_Y), np.array(_SOBEL_Y).T):
        outs.append(sum(float(kernel[i, j]) * window(i, j)
                        for i in range(3) for j in range(3) if kernel[i, j]))
    return stack(outs, axis=-1)


def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction ``gain * image ** gamma`` (integer images in their ``[0, 1]``
    scale, converted back with saturation).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.adjust_gamma([0.5, 1.0], 2.0)).tolist()
    [0.25, 1.0]
    """
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        x = convert_to_tensor(image, name="image")
        orig = x.dtype.base_dtype
        flt = x if orig in (_dtypes.float16, _dtypes.float32) else convert_image_dtype(
            x, _dtypes.float32)
        g = convert_to_tensor(gamma, dtype=flt.dtype.base_dtype, name="gamma")
        k = convert_to_tensor(gain, dtype=flt.dtype.base_dtype, name="gain")
        return convert_image_dtype(k * flt ** g, orig, saturate=True)


def _color_matrix(images, matrix, what):
    x = convert_to_tensor(images, name="images")
    if x.shape.ndims is not None and x.shape[-1].value not in (None, 3):
        raise ValueError(f"{what}: the last dimension must be 3 channels, got {x.shape}")
    k = convert_to_tensor(np.asarray(matrix), dtype=x.dtype.base_dtype, name="kernel")
    rank = x.shape.ndims
    if rank is None:
        return reshape(tensordot(reshape(x, [-1, 3]), k, 1), shape(x))
    return tensordot(x, k, [[rank - 1], [0]])


_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def rgb_to_yiq(images):
    """RGB to YIQ (the last axis holds the 3 channels; floats in ``[0, 1]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> (tf.Session().run(tf.image.rgb_to_yiq([1.0, 1.0, 1.0])).round(4) + 0.0).tolist()
    [1.0, 0.0, 0.0]
    """
    return _color_matrix(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    """YIQ to RGB, the inverse of `rgb_to_yiq`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.yiq_to_rgb([1.0, 0.0, 0.0])).round(4).tolist()
    [1.0, 1.0, 1.0]
    """
    return _color_matrix(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images):
    """RGB to YUV (the last axis holds the 3 channels; floats in ``[0, 1]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.rgb_to_yuv([1.0, 1.0, 1.0])).round(4).tolist()
    [1.0, 0.0, 0.0]
    """
    return _color_matrix(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    """YUV to RGB, the inverse of `rgb_to_yuv`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.yuv_to_rgb([1.0, 0.0, 0.0])).round(4).tolist()
    [1.0, 1.0, 1.0]
    """
    return _color_matrix(images, _YUV_TO_RGB, "yuv_to_rgb")


