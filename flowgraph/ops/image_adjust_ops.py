"""Image crops, pads, rotations and color adjustments built from array ops (no new op
types): `tf.image.crop_to_bounding_box`, `pad_to_bounding_box`,
`resize_image_with_crop_or_pad`, `central_crop`, `rot90`, `transpose_image`,
`rgb_to_grayscale`, `grayscale_to_rgb`, `convert_image_dtype`, `adjust_brightness`,
`adjust_contrast`. Images are ``[height, width, channels]`` or a batch of them.

Example
-------
>>> import flowgraph as tf
>>> img = tf.reshape(tf.range(16.0), [4, 4, 1])
>>> tf.Session().run(tf.image.central_crop(img, 0.5))[..., 0].tolist()
[[5.0, 6.0], [9.0, 10.0]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_index_ops import slice as _slice
from flowgraph.ops.array_join_ops import pad, reverse_v2, tile
from flowgraph.ops.array_shape_ops import expand_dims, squeeze, transpose
from flowgraph.ops.math_ops import add, cast, clip_by_value, multiply, subtract
from flowgraph.ops.math_reduce import reduce_mean, reduce_sum

_HALF_OR_FLOAT = (_dtypes.float16, _dtypes.float32)

__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "grayscale_to_rgb",
    "pad_to_bounding_box",
    "resize_image_with_crop_or_pad",
    "rgb_to_grayscale",
    "rot90",
    "transpose_image",
]


def _image(image, what: str):
    x = convert_to_tensor(image, name="image")
    if x.shape.ndims not in (None, 3, 4):
        raise ValueError(f"tf.image.{what}: 'image' must be 3-D [height, width, channels] or "
                         f"4-D [batch, height, width, channels], got shape {x.shape}")
    if x.shape.ndims is None:
        raise ValueError(f"tf.image.{what}: 'image' must have a known rank (3 or 4)")
    return x


def _hw(x, what: str) -> tuple[int, int]:
    h, w = x.shape.as_list()[-3:-1]
    if h is None or w is None:
        raise ValueError(f"tf.image.{what}: height and width must be known statically, got "
                         f"shape {x.shape}")
    return h, w


def _spatial(x, begin_hw, size_hw):
    batched = x.shape.ndims == 4
    begin = ([0] if batched else []) + list(begin_hw) + [0]
    size = ([-1] if batched else []) + list(size_hw) + [-1]
    return _slice(x, begin, size)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height x target_width`` window whose top-left corner is at
    ``(offset_height, offset_width)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(9), [3, 3, 1])
    >>> tf.Session().run(tf.image.crop_to_bounding_box(img, 1, 0, 2, 2))[..., 0].tolist()
    [[3, 4], [6, 7]]
    """
    with name_scope(None, "crop_to_bounding_box", [image]):
        x = _image(image, "crop_to_bounding_box")
        h, w = x.shape.as_list()[-3:-1]
        for what, off, size, dim in (("height", offset_height, target_height, h),
                                     ("width", offset_width, target_width, w)):
            if isinstance(off, int) and off < 0:
                raise ValueError(f"tf.image.crop_to_bounding_box: offset_{what} must be >= 0")
            if isinstance(size, int) and size <= 0:
                raise ValueError(f"tf.image.crop_to_bounding_box: target_{what} must be > 0")
            if dim is not None and isinstance(off, int) and isinstance(size, int) and \
                    off + size > dim:
                raise ValueError(f"tf.image.crop_to_bounding_box: {what} must be >= "
                                 f"target + offset ({dim} < {size} + {off})")
        return _spatial(x, [offset_height, offset_width], [target_height, target_width])


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`image` zero-padded to ``target_height x target_width``, with `offset_height` rows
    above and `offset_width` columns to the left.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.pad_to_bounding_box(tf.ones([1, 1, 1]), 1, 0, 2, 2))[
    ...     ..., 0].tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    """
    with name_scope(None, "pad_to_bounding_box", [image]):
        x = _image(image, "pad_to_bounding_box")
        h, w = _hw(x, "pad_to_bounding_box")
        after_h = target_height - offset_height - h
        after_w = target_width - offset_width - w
        if min(offset_height, offset_width, after_h, after_w) < 0:
            raise ValueError(f"tf.image.pad_to_bounding_box: the image ({h}x{w}) at offset "
                             f"({offset_height}, {offset_width}) does not fit in "
                             f"{target_height}x{target_width}")
        paddings = [[offset_height, after_h], [offset_width, after_w], [0, 0]]
        if x.shape.ndims == 4:
            paddings = [[0, 0], *paddings]
        return pad(x, paddings)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Center-crop and/or zero-pad `image` to ``target_height x target_width``.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(1, 5), [1, 4, 1])
    >>> tf.Session().run(tf.image.resize_image_with_crop_or_pad(img, 3, 2))[..., 0].tolist()
    [[0, 0], [2, 3], [0, 0]]
    """
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        x = _image(image, "resize_image_with_crop_or_pad")
        h, w = _hw(x, "resize_image_with_crop_or_pad")
        crop_h, crop_w = max((h - target_height) // 2, 0), max((w - target_width) // 2, 0)
        pad_h, pad_w = max((target_height - h) // 2, 0), max((target_width - w) // 2, 0)
        keep_h, keep_w = min(target_height, h), min(target_width, w)
        batched = x.shape.ndims == 4
        if not batched:  # TF works on a batch of one: the result is ".../Squeeze"
            x = expand_dims(x, 0)
        cropped = crop_to_bounding_box(x, crop_h, crop_w, keep_h, keep_w)
        out = pad_to_bounding_box(cropped, pad_h, pad_w, target_height, target_width)
        return out if batched else squeeze(out, axis=[0])


def central_crop(image, central_fraction: float):
    """The central `central_fraction` (in ``(0, 1]``) of each side of `image`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.central_crop(tf.zeros([10, 8, 3]), 0.5).shape.as_list()
    [6, 4, 3]
    """
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError(f"tf.image.central_crop: central_fraction must be within (0, 1], "
                         f"got {central_fraction}")
    with name_scope(None, "central_crop", [image]):
        x = _image(image, "central_crop")
        if central_fraction == 1.0:
            return x
        h, w = _hw(x, "central_crop")
        start_h = int((h - h * central_fraction) / 2)
        start_w = int((w - w * central_fraction) / 2)
        return _spatial(x, [start_h, start_w], [h - 2 * start_h, w - 2 * start_w])


def transpose_image(image):
    """Swap the height and width axes.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.transpose_image(tf.zeros([2, 5, 3])).shape.as_list()
    [5, 2, 3]
    """
    x = _image(image, "transpose_image")
    return transpose(x, [0, 2, 1, 3] if x.shape.ndims == 4 else [1, 0, 2])


def rot90(image, k: int = 1, name=None):
    """Rotate by `k` quarter turns counter-clockwise (as ``np.rot90`` over height, width).

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(4), [2, 2, 1])
    >>> tf.Session().run(tf.image.rot90(img))[..., 0].tolist()
    [[1, 3], [0, 2]]
    """
    with name_scope(name, "rot90", [image]):
        x = _image(image, "rot90")
        h_axis = x.shape.ndims - 3
        k = int(k) % 4
        if k == 0:
            return x
        if k == 1:
            return transpose_image(reverse_v2(x, [h_axis + 1]))
        if k == 2:
            return reverse_v2(x, [h_axis, h_axis + 1])
        return reverse_v2(transpose_image(x), [h_axis + 1])


def rgb_to_grayscale(images, name=None):
    """Luma ``0.2989 R + 0.5870 G + 0.1140 B``, keeping a channel axis of size 1.

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.image.rgb_to_grayscale(tf.ones([1, 1, 3])))[0, 0, 0]), 4)
    0.9999
    """
    with name_scope(name, "rgb_to_grayscale", [images]):
        x = convert_to_tensor(images, name="images")
        dtype = x.dtype.base_dtype
        flt = convert_image_dtype(x, _dtypes.float32)
        weights = convert_to_tensor(np.array([0.2989, 0.5870, 0.1140], np.float32))
        gray = reduce_sum(multiply(flt, weights), axis=-1, keepdims=True)
        return convert_image_dtype(gray, dtype)


def grayscale_to_rgb(images, name=None):
    """Repeat the single channel three times."""
    with name_scope(name, "grayscale_to_rgb", [images]):
        x = convert_to_tensor(images, name="images")
        return tile(x, [1] * (x.shape.ndims - 1) + [3])


def convert_image_dtype(image, dtype, saturate: bool = False, name=None):
    """Convert between image dtypes, rescaling: integer images span ``[0, MAX]``, float
    images ``[0, 1)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([0, 255], tf.uint8)
    >>> tf.Session().run(tf.image.convert_image_dtype(x, tf.float32)).tolist()
    [0.0, 1.0]
    """
    dtype = _dtypes.as_dtype(dtype)
    x = convert_to_tensor(image, name="image")
    if x.dtype.base_dtype == dtype:
        return identity(x, name=name)  # as in TF: an Identity in the caller's scope
    with name_scope(name, "convert_image", [x]):
        src = x.dtype.base_dtype
        if src.is_integer and dtype.is_integer:
            src_max, dst_max = np.iinfo(src.as_numpy_dtype).max, np.iinfo(dtype.as_numpy_dtype).max
            if src_max > dst_max:
                return cast(x // ((src_max + 1) // (dst_max + 1)), dtype)
            return multiply(cast(x, dtype), (dst_max + 1) // (src_max + 1))
        if src.is_floating and dtype.is_floating:
            return cast(x, dtype)
        if src.is_integer:
            scale = 1.0 / np.iinfo(src.as_numpy_dtype).max
            return multiply(cast(x, dtype), scale)
        if saturate:
            x = clip_by_value(x, 0.0, 1.0)
        scale = np.iinfo(dtype.as_numpy_dtype).max + 0.5
        return cast(multiply(x, scale), dtype)


def adjust_brightness(image, delta):
    """`image` plus `delta` (in float; integer images are converted there and back)."""
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        x = convert_to_tensor(image, name="image")
        flt = x if x.dtype.base_dtype in _HALF_OR_FLOAT else convert_image_dtype(
            x, _dtypes.float32)
        adjusted = add(flt, cast(delta, flt.dtype.base_dtype), name=scope)
        return convert_image_dtype(adjusted, x.dtype.base_dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """``(x - mean) * contrast_factor + mean``, the mean of each channel of each image."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        x = convert_to_tensor(images, name="images")
        flt = x if x.dtype.base_dtype in _HALF_OR_FLOAT else convert_image_dtype(
            x, _dtypes.float32)
        mean = reduce_mean(flt, axis=[-3, -2], keepdims=True)
        factor = cast(contrast_factor, flt.dtype.base_dtype)
        # TF's fused op is named after the scope; the result is "adjust_contrast/Identity"
        out = add(multiply(subtract(flt, mean), factor), mean, name=scope)
        return convert_image_dtype(out, x.dtype.base_dtype, saturate=True)

