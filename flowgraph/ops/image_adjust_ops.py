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
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_index_ops import slice as _slice
from flowgraph.ops.array_join_ops import pad, reverse_v2, stack, tile, unstack
from flowgraph.ops.array_shape_ops import expand_dims, rank, reshape, shape, squeeze, transpose
from flowgraph.ops.math_ops import (
    add,
    cast,
    equal,
    floormod,
    maximum,
    minimum,
    multiply,
)
from flowgraph.ops.tensor_compat import saturate_cast

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


def _spatial(x, begin_hw, size_hw):
    batched = x.shape.ndims == 4
    begin = ([0] if batched else []) + list(begin_hw) + [0]
    size = ([-1] if batched else []) + list(size_hw) + [-1]
    return _slice(x, begin, size)


def _is_tensor(v) -> bool:
    return isinstance(v, Tensor)


def _batched(image, what: str):
    """(4-D image, whether the input was a batch): a 3-D image (or one of unknown rank)
    gets a batch axis of 1, as TensorFlow's box functions work on batches."""
    x = convert_to_tensor(image, name="image")
    ndims = x.shape.ndims
    if ndims not in (None, 3, 4):
        raise ValueError(f"'image' (shape {x.shape}) must have either 3 or 4 dimensions.")
    if ndims == 4:
        return x, True
    x = expand_dims(x, 0)
    if ndims is None:
        x.set_shape([None] * 4)
    return x, False


def _dims(x) -> list:
    """The four dimensions of `x`: ints where static, scalar tensors elsewhere."""
    static = x.shape.as_list()
    if all(d is not None for d in static):
        return static
    dynamic = unstack(shape(x), 4)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _check(condition, message: str) -> list:
    """TF's box-argument check: a Python condition raises ValueError(message) now, a
    tensor one becomes an ``Assert`` op the result waits for."""
    if _is_tensor(condition):
        from flowgraph.ops.check_ops import Assert

        return [Assert(condition, [message])]
    if not condition:
        raise ValueError(message)
    return []


def _check_3d(x) -> list:
    """TensorFlow's run-time checks of an image whose inner three sizes are not all
    static: they are positive, and the rank is at least 3 (none when they are static)."""
    inner = x.shape[-3:] if x.shape.ndims is not None else TensorShape([None] * 3)
    if any(d.value == 0 for d in inner.dims):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {x.shape}")
    if inner.is_fully_defined():
        return []
    from flowgraph.ops.check_ops import assert_greater_equal, assert_positive

    return [assert_positive(shape(x)[-3:], ["inner 3 dims of 'image.shape' must be > 0."]),
            assert_greater_equal(rank(x), 3,
                                 message="'image' must be at least three-dimensional.")]


def _finish(out, batch, height, width, depth, batched: bool):
    out.set_shape([None if _is_tensor(d) else d for d in (batch, height, width, depth)])
    return out if batched else squeeze(out, axis=[0])


def _with_checks(checks: list, x):
    """`x` after `checks`: TensorFlow's ``control_dependency`` Identity, made even when no
    check is left (all passed when the graph was built)."""
    from flowgraph.ops.control_flow_ops import with_dependencies

    return with_dependencies(checks, x)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height x target_width`` window whose top-left corner is at
    ``(offset_height, offset_width)``; the box arguments are ints or scalar tensors.

    As in TensorFlow, a 3-D image is cropped as a batch of one (the result is a
    ``Squeeze``), a box given as ints fixes the static size, and a check that fails on
    ints raises ValueError now, one on tensors when run.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(9), [3, 3, 1])
    >>> tf.Session().run(tf.image.crop_to_bounding_box(img, 1, 0, 2, 2))[..., 0].tolist()
    [[3, 4], [6, 7]]
    """
    with name_scope(None, "crop_to_bounding_box", [image]):
        x, batched = _batched(image, "crop_to_bounding_box")
        checks = _check_3d(x)
        batch, height, width, depth = _dims(x)
        checks += (_check(offset_width >= 0, "offset_width must be >= 0.")
                  + _check(offset_height >= 0, "offset_height must be >= 0.")
                  + _check(target_width > 0, "target_width must be > 0.")
                  + _check(target_height > 0, "target_height must be > 0.")
                  + _check(width >= target_width + offset_width,
                           "width must be >= target + offset.")
                  + _check(height >= target_height + offset_height,
                           "height must be >= target + offset."))
        x = _with_checks(checks, x)
        out = _slice(x, stack([0, offset_height, offset_width, 0]),
                     stack([shape(x)[0], target_height, target_width, shape(x)[3]]))
        return _finish(out, batch, target_height, target_width, depth, batched)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`image` zero-padded to ``target_height x target_width``, with `offset_height` rows
    above and `offset_width` columns to the left (ints or scalar tensors; see
    `crop_to_bounding_box` for the shapes and checks).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.pad_to_bounding_box(tf.ones([1, 1, 1]), 1, 0, 2, 2))[
    ...     ..., 0].tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    """
    with name_scope(None, "pad_to_bounding_box", [image]):
        x, batched = _batched(image, "pad_to_bounding_box")
        checks = _check_3d(x)
        batch, height, width, depth = _dims(x)
        after_w = target_width - offset_width - width
        after_h = target_height - offset_height - height
        checks += (_check(offset_height >= 0, "offset_height must be >= 0")
                  + _check(offset_width >= 0, "offset_width must be >= 0")
                  + _check(after_w >= 0, "width must be <= target - offset")
                  + _check(after_h >= 0, "height must be <= target - offset"))
        x = _with_checks(checks, x)
        paddings = reshape(stack([0, 0, offset_height, after_h, offset_width, after_w, 0, 0]),
                           [4, 2])
        return _finish(pad(x, paddings), batch, target_height, target_width, depth, batched)


def _max(a, b):
    return maximum(a, b) if _is_tensor(a) or _is_tensor(b) else max(a, b)


def _min(a, b):
    return minimum(a, b) if _is_tensor(a) or _is_tensor(b) else min(a, b)


def _equal(a, b):
    return equal(a, b) if _is_tensor(a) or _is_tensor(b) else a == b


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Center-crop and/or zero-pad `image` to ``target_height x target_width`` (ints or
    scalar tensors; the image's height and width may be unknown until run time).

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(1, 5), [1, 4, 1])
    >>> tf.Session().run(tf.image.resize_image_with_crop_or_pad(img, 3, 2))[..., 0].tolist()
    [[0, 0], [2, 3], [0, 0]]
    """
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        x, batched = _batched(image, "resize_image_with_crop_or_pad")
        checks = _check_3d(x) + (_check(target_width > 0, "target_width must be > 0.")
                  + _check(target_height > 0, "target_height must be > 0."))
        x = _with_checks(checks, x)
        # as TF: tensor targets wait for the checks too, and the width comes first
        if _is_tensor(target_height):
            target_height = _with_checks(checks, target_height)
        if _is_tensor(target_width):
            target_width = _with_checks(checks, target_width)
        _, height, width, _ = _dims(x)
        width_diff = target_width - width
        crop_w, pad_w = _max(-width_diff // 2, 0), _max(width_diff // 2, 0)
        height_diff = target_height - height
        crop_h, pad_h = _max(-height_diff // 2, 0), _max(height_diff // 2, 0)
        cropped = crop_to_bounding_box(x, crop_h, crop_w, _min(target_height, height),
                                       _min(target_width, width))
        out = pad_to_bounding_box(cropped, pad_h, pad_w, target_height, target_width)
        # TensorFlow checks the result's size (statically here when the target is ints)
        _, out_height, out_width, _ = _dims(out)
        checks = (_check(_equal(out_height, target_height), "resized height is not correct.")
                  + _check(_equal(out_width, target_width), "resized width is not correct."))
        out = _with_checks(checks, out)
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
        _with_checks(_check_3d(x), x)  # TF builds its checks' Identity and drops it
        h, w = x.shape.as_list()[-3:-1]
        if h is not None and w is not None:
            start_h = int((h - h * central_fraction) / 2)
            start_w = int((w - w * central_fraction) / 2)
            lead = [0] if x.shape.ndims == 4 else []
            return _slice(x, stack([*lead, start_h, start_w, 0]),
                          stack([*([-1] if lead else []), h - 2 * start_h, w - 2 * start_w,
                                 -1]))
        # As TF: a side unknown statically is computed at run time in float64.
        dims = shape(x)
        starts, sizes = [], []
        for axis, static in ((-3, h), (-2, w)):
            if static is None:
                side = dims[x.shape.ndims + axis]
                sided = cast(side, _dtypes.float64)
                fraction = cast(central_fraction, _dtypes.float64)
                start = cast((sided - sided * fraction) / 2, _dtypes.int32)
            else:
                side, start = static, int((static - static * central_fraction) / 2)
            starts.append(start)
            sizes.append(side - start * 2)
        lead = [0] if x.shape.ndims == 4 else []
        out = _slice(x, stack([*lead, *starts, 0]), stack([*([-1] if lead else []), *sizes, -1]))
        out.set_shape([*x.shape.as_list()[:-3], None if h is None else sizes[0],
                       None if w is None else sizes[1], x.shape.as_list()[-1]])
        return out


def transpose_image(image, name=None):
    """Swap the height and width axes.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.transpose_image(tf.zeros([2, 5, 3])).shape.as_list()
    [5, 2, 3]
    """
    with name_scope(name, "transpose", [image]):
        x = _image(image, "transpose_image")
        return transpose(x, [0, 2, 1, 3] if x.shape.ndims == 4 else [1, 0, 2],
                         name=name or "transpose")


def rot90(image, k=1, name=None):
    """Rotate by `k` quarter turns counter-clockwise (as ``np.rot90`` over height, width).

    `k` is an int or a scalar int32 tensor (a random rotation in a ``tf.data`` map, say).
    As in TensorFlow the graph is one ``tf.case`` over ``k % 4`` whichever `k` is given:
    the result is the case's ``Merge``, its height and width unknown statically. An image
    of unknown rank is checked when run and rotated as 3-D or 4-D by a ``tf.cond``.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(4), [2, 2, 1])
    >>> tf.Session().run(tf.image.rot90(img))[..., 0].tolist()
    [[1, 3], [0, 2]]
    """
    from flowgraph.ops.control_flow_cond import cond

    with name_scope(name, "rot90", [image, k]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"'image' (shape {x.shape}) must be at least three-dimensional.")
        x = _with_checks(_check_3d(x), x)
        k = convert_to_tensor(k, dtype=_dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = floormod(k, 4, name="mod")
        ndims = x.shape.ndims
        if ndims is None:
            return cond(equal(rank(x), 3), lambda: _rot90_case(x, k, scope, 0),
                        lambda: _rot90_case(x, k, scope, 1))
        if ndims in (3, 4):
            return _rot90_case(x, k, scope, ndims - 3)
        raise ValueError(f"'image' (shape {x.shape}) must have either 3 or 4 dimensions.")


def _rot90_case(x, k, scope: str, lead: int):
    """TF's ``_rot90_3D``/``_rot90_4D``: a ``tf.case`` over k in {1, 2, 3}, the image
    itself by default; `lead` is the number of batch axes (0 or 1)."""
    from flowgraph.ops.control_flow_cond import case

    h, w = lead, lead + 1
    perm = [*range(lead), w, h, lead + 2]
    branches = [(equal(k, 1), lambda: transpose(reverse_v2(x, [w]), perm)),
                (equal(k, 2), lambda: reverse_v2(x, [h, w])),
                (equal(k, 3), lambda: reverse_v2(transpose(x, perm), [w]))]
    out = case(branches, default=lambda: x, exclusive=True, name=scope)
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * (lead + 3)
    out.set_shape([*dims[:lead], None, None, dims[-1]])
    return out


def rgb_to_grayscale(images, name=None):
    """Luma ``0.2989 R + 0.5870 G + 0.1140 B``, keeping a channel axis of size 1.

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.image.rgb_to_grayscale(tf.ones([1, 1, 3])))[0, 0, 0]), 4)
    0.9999
    """
    from flowgraph.ops.math_tensordot import tensordot

    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        x = convert_to_tensor(images, name="images")
        dtype = x.dtype.base_dtype
        flt = convert_image_dtype(x, _dtypes.float32)
        gray = expand_dims(tensordot(flt, [0.2989, 0.5870, 0.1140], [-1, -1]), -1)
        return convert_image_dtype(gray, dtype, name=scope)  # named by the scope, as TF's


def _check_grayscale(x) -> list:
    """TensorFlow's grayscale checks: a rank of at least 2 and a last size of 1, raised
    now when the shape is static, else ``Assert`` ops."""
    static = x.shape
    if (static.ndims is not None and static.ndims < 2) or (
            static.is_fully_defined() and static[-1].value != 1):
        if static.ndims is not None and static.ndims < 2:
            raise ValueError(f"A grayscale image (shape {static}) must be at least "
                             "two-dimensional.")
        raise ValueError("Last dimension of a grayscale image should be size 1.")
    if static.is_fully_defined():
        return []
    from flowgraph.ops.check_ops import assert_equal, assert_greater_equal

    return [assert_equal(shape(x)[-1], 1,
                         message="Last dimension of a grayscale image should be size 1."),
            # TF checks a rank of 3 here (not 2): a 2-D image of unknown size fails
            assert_greater_equal(rank(x), 3,
                                 message="A grayscale image must be at least two-dimensional.")]


def grayscale_to_rgb(images, name=None):
    """Repeat the single channel three times (the result is named after the scope, as
    TensorFlow's ``grayscale_to_rgb:0``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.grayscale_to_rgb(tf.zeros([2, 2, 1])).name
    'grayscale_to_rgb:0'
    """
    from flowgraph.ops.array_join_ops import concat
    from flowgraph.ops.array_shape_ops import ones

    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        x = convert_to_tensor(images, name="images")
        x = _with_checks(_check_grayscale(x), x)
        x = convert_to_tensor(x, name="images")
        rank_1 = expand_dims(rank(x) - 1, 0)
        multiples = concat([ones(rank_1, dtype=_dtypes.int32), expand_dims(3, 0)], 0)
        rgb = tile(x, multiples, name=scope)
        if x.shape.ndims is not None:
            rgb.set_shape(x.shape[:-1].concatenate([3]))
        return rgb


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
    # TensorFlow raises AttributeError for these (not ValueError or TypeError)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if not x.dtype.is_floating and not x.dtype.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if x.dtype.base_dtype == dtype:
        return identity(x, name=name)  # as in TF: an Identity in the caller's scope
    # As TensorFlow, the result is the scope's own op ("convert_image:0").
    with name_scope(name, "convert_image", [x]) as scope:
        src = x.dtype.base_dtype
        # TF's saturate_cast (a ``clamp`` ClipByValue to the target's range) when asked
        to_dtype = saturate_cast if saturate else cast
        if src.is_integer and dtype.is_integer:
            src_max, dst_max = np.iinfo(src.as_numpy_dtype).max, np.iinfo(dtype.as_numpy_dtype).max
            if src_max > dst_max:
                return to_dtype(x // ((src_max + 1) // (dst_max + 1)), dtype, name=scope)
            return multiply(to_dtype(x, dtype), (dst_max + 1) // (src_max + 1), name=scope)
        if src.is_floating and dtype.is_floating:
            return cast(x, dtype, name=scope)
        if src.is_integer:
            scale = 1.0 / np.iinfo(src.as_numpy_dtype).max
            return multiply(cast(x, dtype), scale, name=scope)
        scaled = multiply(x, np.iinfo(dtype.as_numpy_dtype).max + 0.5)
        return to_dtype(scaled, dtype, name=scope)


def adjust_brightness(image, delta):
    """`image` plus `delta` (in float; integer images are converted there and back)."""
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        x = convert_to_tensor(image, name="image")
        flt = x if x.dtype.base_dtype in _HALF_OR_FLOAT else convert_image_dtype(
            x, _dtypes.float32)
        adjusted = add(flt, cast(delta, flt.dtype.base_dtype), name=scope)
        return convert_image_dtype(adjusted, x.dtype.base_dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """``(x - mean) * contrast_factor + mean``, the mean of each channel of each image:
    one ``AdjustContrastv2`` op in float16/float32 (other dtypes are converted to float32
    and back, saturating), as in TensorFlow."""
    from flowgraph.ops.op_util import make_tensor

    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        x = convert_to_tensor(images, name="images")
        orig = x.dtype.base_dtype
        keep = orig in (_dtypes.float16, _dtypes.float32)
        flt = x if keep else convert_image_dtype(x, _dtypes.float32)
        factor = convert_to_tensor(contrast_factor, _dtypes.float32, name="contrast_factor")
        # TF's op is named after the scope; the result is "adjust_contrast/Identity"
        out = make_tensor("AdjustContrastv2", [flt, factor], name=scope)
        if keep:
            return identity(out, name="Identity")
        return convert_image_dtype(out, orig, saturate=True)
