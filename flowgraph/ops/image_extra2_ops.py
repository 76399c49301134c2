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
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.array_join_ops import concat, pad, stack
from flowgraph.ops.array_shape_ops import reshape, shape, zeros
from flowgraph.ops.control_flow_ops import with_dependencies
from flowgraph.ops.image_adjust_ops import (
    _check,
    convert_image_dtype,
    resize_image_with_crop_or_pad,
    transpose_image,
)
from flowgraph.ops.image_dtypes import check_input
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import cast, log, square, squared_difference
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


def _verify_compatible_image_shapes(img1, img2):
    """TF's shape checks of an image pair: ranks of at least 3 and compatible inner three
    sizes now (ValueError), and the same as ``Assert`` ops for the sizes known only when
    run (TF adds those whatever is known statically)."""
    from flowgraph.ops.array_shape_ops import shape_n, size
    from flowgraph.ops.control_flow_cond import Assert
    from flowgraph.ops.math_ops import equal, greater_equal
    from flowgraph.ops.math_reduce import reduce_all

    s1, s2 = img1.shape, img2.shape
    for s in (s1, s2):
        if s.ndims is not None and s.ndims < 3:
            raise ValueError(f"Shape {s} must have rank at least 3")
    if s1.ndims is not None and s2.ndims is not None:
        if not s1[-3:].is_compatible_with(s2[-3:]):
            raise ValueError(f"Shapes {s1[-3:]} and {s2[-3:]} are incompatible")
        for d1, d2 in zip(reversed(s1.dims[:-3]), reversed(s2.dims[:-3])):
            if not (d1 == 1 or d2 == 1 or d1.is_compatible_with(d2)):
                raise ValueError(f"Two images are not compatible: {s1} and {s2}")
    t1, t2 = shape_n([img1, img2])
    return [Assert(greater_equal(size(t1), 3), [t1, t2], summarize=10),
            Assert(reduce_all(equal(t1[-3:], t2[-3:])), [t1, t2], summarize=10)]


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image (over the last three axes), in dB:
    ``10 * log10(max_val**2 / mse)``; integer images are scaled to ``[0, 1]`` first.

    As in TensorFlow the result is an ``Identity`` that waits for the images' shape
    checks (the value itself is the ``psnr`` subtraction).

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.image.psnr([[[0.0]]], [[[0.1]]], 1.0))), 2)
    20.0
    """
    from flowgraph.framework.graph import control_dependencies
    from flowgraph.ops.array_identity_ops import identity
    from flowgraph.ops.math_ops import subtract

    with name_scope(name, "PSNR", [a, b]):
        a, b, mv = _float_pair(a, b, max_val)
        mse = reduce_mean(squared_difference(a, b), [-3, -2, -1])
        value = subtract(20.0 * log(mv) / log(10.0),
                         np.float32(10.0 / np.log(10.0)) * log(mse), name="psnr")
        with control_dependencies(_verify_compatible_image_shapes(a, b)):
            return identity(value)


def _gauss_kernel(size, sigma):
    """TF's ``_fspecial_gauss``: a normalized ``[size, size, 1, 1]`` Gaussian, built as a
    softmax of the squared distances."""
    from flowgraph.ops.nn_ops import softmax

    coords = cast(_range(size), sigma.dtype)
    coords -= cast(size - 1, sigma.dtype) / 2.0
    g = square(coords)
    g *= -0.5 / square(sigma)
    g = reshape(g, [1, -1]) + reshape(g, [-1, 1])
    g = softmax(reshape(g, [1, -1]))
    return reshape(g, stack([size, size, 1, 1]))


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2,
                      index_map=False):
    """Per-channel SSIM and contrast-structure of ``[..., h, w, c]`` images (TF's
    graph: Gaussian windows by a depthwise convolution, sizes checked when run)."""
    from flowgraph.framework.constant_op import constant
    from flowgraph.framework.graph import control_dependencies
    from flowgraph.ops.array_identity_ops import identity
    from flowgraph.ops.array_join_ops import tile
    from flowgraph.ops.array_shape_ops import shape_n
    from flowgraph.ops.control_flow_cond import Assert
    from flowgraph.ops.math_ops import greater_equal
    from flowgraph.ops.math_reduce import reduce_all
    from flowgraph.ops.nn_ops import depthwise_conv2d

    size = constant(filter_size, dtype=_dtypes.int32)
    sigma = constant(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = shape_n([img1, img2])
    checks = [Assert(reduce_all(greater_equal(sh[-3:-1], size)), [sh, size], summarize=8)
              for sh in (shape1, shape2)]
    with control_dependencies(checks):
        img1 = identity(img1)
    kernel = tile(_gauss_kernel(size, sigma), stack([1, 1, shape1[-1], 1]))

    def reducer(x):
        sh = shape(x)
        y = depthwise_conv2d(reshape(x, concat([[-1], sh[-3:]], 0)), kernel,
                             strides=[1, 1, 1, 1], padding="VALID")
        return reshape(y, concat([sh[:-3], shape(y)[1:]], 0))

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = square(mean0) + square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(square(img1) + square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    axes = constant([-3, -2], dtype=_dtypes.int32)
    return reduce_mean(luminance * cs, axes), reduce_mean(cs, axes)


def _checked_pair(img1, img2, max_val):
    """The images (the first after TF's shape checks) and `max_val` in float32."""
    from flowgraph.framework.graph import control_dependencies
    from flowgraph.ops.array_identity_ops import identity

    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    with control_dependencies(_verify_compatible_image_shapes(img1, img2)):
        img1 = identity(img1)
    mv = convert_image_dtype(cast(max_val, img1.dtype), _dtypes.float32)
    return (convert_image_dtype(img1, _dtypes.float32),
            convert_image_dtype(img2, _dtypes.float32), mv)


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """Structural similarity of two images (or batches, ``[..., h, w, c]``), averaged
    over pixels and channels (or per pixel with `return_index_map`).

    TensorFlow's graph: Gaussian windows (`filter_size`, `filter_sigma`) by a depthwise
    convolution, the result the ``Mean`` over channels; images smaller than the window
    fail when run.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(256.0), [1, 16, 16, 1]) / 256.0
    >>> tf.Session().run(tf.image.ssim(x, x, 1.0)).tolist()
    [1.0]
    """
    with name_scope(None, "SSIM", [img1, img2]):
        a, b, mv = _checked_pair(img1, img2, max_val)
        value, _ = _ssim_per_channel(a, b, mv, filter_size, filter_sigma, k1, k2,
                                     return_index_map)
        return reduce_mean(value, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM: contrast-structure terms at ``len(power_factors)`` scales
    (halving each time by 2x2 average pooling, after symmetric padding to even sizes) and
    SSIM at the coarsest, combined as a weighted geometric mean (TensorFlow's graph: one
    ``ScaleK`` name scope per scale).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(180.0 * 180.0), [1, 180, 180, 1]) % 7.0 / 7.0
    >>> tf.Session().run(tf.image.ssim_multiscale(x, x, 1.0)).round(4).tolist()
    [1.0]
    """
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops.array_shape_ops import expand_dims, shape_n
    from flowgraph.ops.control_flow_cond import cond
    from flowgraph.ops.math_ops import floormod, not_equal
    from flowgraph.ops.math_ops import pow as _pow
    from flowgraph.ops.math_reduce import reduce_any
    from flowgraph.ops.nn_ops import avg_pool, relu

    with name_scope(None, "MS-SSIM", [img1, img2]):
        a, b, mv = _checked_pair(img1, img2, max_val)
        imgs = [a, b]
        heads = [sh[:-3] for sh in shape_n([a, b])]
        tails = [sh[-3:] for sh in shape_n([a, b])]
        divisor = [1, 2, 2, 1]
        divisor_tensor = constant(divisor[1:], dtype=_dtypes.int32)

        def do_pad(images, remainder):
            padding = pad(expand_dims(remainder, -1), [[1, 0], [1, 0]])
            return [pad(x, padding, mode="SYMMETRIC") for x in images]

        mcs = []
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    flat = [reshape(x, concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
                    remainder = floormod(tails[0], divisor_tensor, name="mod")
                    need_padding = reduce_any(not_equal(remainder, 0))
                    padded = cond(need_padding, lambda f=flat, r=remainder: do_pad(f, r),
                                  lambda f=flat: f)
                    down = [avg_pool(x, ksize=divisor, strides=divisor, padding="VALID")
                            for x in padded]
                    tails = [sh[1:] for sh in shape_n(down)]
                    imgs = [reshape(x, concat([h, t], 0))
                            for x, h, t in zip(down, heads, tails)]
                per_channel, cs = _ssim_per_channel(*imgs, mv, filter_size, filter_sigma,
                                                    k1, k2)
                mcs.append(relu(cs))
        mcs.pop()  # the last scale contributes its full SSIM instead
        values = stack([*mcs, relu(per_channel)], axis=-1)
        ms_ssim = reduce_prod(_pow(values, power_factors), [-1])
        return reduce_mean(ms_ssim, [-1])


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
    from flowgraph.ops.array_join_ops import unstack

    image_shape = shape(x)
    batch, height, width, depth = unstack(image_shape)
    dy = x[:, 1:, :, :] - x[:, :-1, :, :]
    dx = x[:, :, 1:, :] - x[:, :, :-1, :]
    # TF's graph: zeros of a stacked shape concatenated, then reshaped to the image's shape
    dy = concat([dy, zeros(stack([batch, 1, width, depth]), x.dtype)], 1)
    dy = reshape(dy, image_shape)
    dx = concat([dx, zeros(stack([batch, height, 1, depth]), x.dtype)], 2)
    dx = reshape(dx, image_shape)
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
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops.array_join_ops import tile
    from flowgraph.ops.nn_ops import depthwise_conv2d

    x = check_input(convert_to_tensor(image), "DepthwiseConv2dNative", "input",
                    (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64))
    image_shape = shape(x)
    # one depthwise filter per kernel: [3, 3, 1, 2] tiled over the channels
    kernels = np.stack([np.array(_SOBEL_Y), np.array(_SOBEL_Y).T], -1)[:, :, None, :]
    filters = tile(constant(kernels, dtype=x.dtype), [1, 1, image_shape[-1], 1],
                   name="sobel_filters")
    padded = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    out = reshape(out, concat([image_shape, [2]], 0))  # [..., channel, kernel]
    out.set_shape(x.shape.concatenate([2]))
    return out


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
        # TF: a Python gamma is checked now (ValueError), a tensor one by an Assert
        checks = _check(gamma >= 0, "Gamma should be a non-negative real number.")
        if checks:
            gamma = with_dependencies(checks, gamma)
        return convert_image_dtype(gain * flt ** gamma, orig, saturate=True)


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


