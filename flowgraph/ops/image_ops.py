"""`tf.image` basics for input pipelines: resizing (bilinear, nearest neighbour, with
TensorFlow 1.x's ``align_corners`` coordinates), per-image standardization, flips,
random crops and brightness, and PNG/JPEG decoding (Pillow) and PNG encoding.

Images are ``[height, width, channels]`` or batches ``[batch, height, width, channels]``.
``ResizeBilinear``/``ResizeNearestNeighbor`` are linear in the image, so their gradients
(``ResizeBilinearGrad``/``ResizeNearestNeighborGrad``) are the transposed resampling.
The random ops draw from `tf.random_uniform` with the graph and op seeds.
Kernels: `flowgraph/backends/cpu/kernels_image.py`.

Example
-------
>>> import flowgraph as tf
>>> img = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
>>> up = tf.image.resize_images(img, [3, 3], align_corners=True)
>>> with tf.Session() as sess:
...     print(sess.run(up)[0, :, :, 0])
[[0.  0.5 1. ]
 [1.  1.5 2. ]
 [2.  2.5 3. ]]
"""

from __future__ import annotations

import contextlib

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    constant_value_as_shape,
    convert_to_tensor,
)
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_index_ops import slice as _slice
from flowgraph.ops.array_join_ops import reverse_v2
from flowgraph.ops.array_shape_ops import expand_dims, reshape, shape, squeeze
from flowgraph.ops.check_ops import Assert
from flowgraph.ops.image_aspect_size import aspect_preserving_size
from flowgraph.ops.image_dtypes import REAL_IMAGES, check_input
from flowgraph.ops.math_ops import (
    cast,
    greater_equal,
    maximum,
    realdiv,
    rsqrt,
    sqrt,
    subtract,
)
from flowgraph.ops.math_reduce import reduce_all, reduce_mean
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_tensor
from flowgraph.ops.random_ops import random_uniform

__all__ = [
    "ResizeMethod",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_png",
    "flip_left_right",
    "flip_up_down",
    "per_image_standardization",
    "random_brightness",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_images",
    "resize_nearest_neighbor",
]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


# -- registrations ---------------------------------------------------------------------
def _resize_shape(op, images, size):
    if images.ndims not in (None, 4):
        raise op.shape_error(f"images must be 4-D [batch, height, width, channels], got "
                             f"shape {images}")
    value = constant_value(op.inputs[1])
    hw = [None, None] if value is None else [int(v) for v in np.reshape(value, -1)]
    if images.ndims is None:
        return [TensorShape([None, *hw, None])]
    return [TensorShape([images[0].value, *hw, images[3].value])]


def _float_result(op):
    # TF's interpolating resizes return float32 whatever the image dtype (float64 too)
    return [_dtypes.float32]


_RESIZE_ATTRS = {"align_corners": False, "half_pixel_centers": False}
register_op("ResizeBilinear", attrs=_RESIZE_ATTRS, dtype_fn=_float_result)(_resize_shape)
register_op("ResizeNearestNeighbor", attrs=_RESIZE_ATTRS)(_resize_shape)
register_op("ResizeBicubic", attrs=_RESIZE_ATTRS, dtype_fn=_float_result)(_resize_shape)
register_op("ResizeArea", attrs={"align_corners": False},
            dtype_fn=_float_result)(_resize_shape)
# TensorFlow registers no gradient for ResizeArea nor for the resize gradient ops
# (no second derivative): tf.gradients through them raises LookupError, here as there.


@register_op("ResizeBicubicGrad", attrs=_RESIZE_ATTRS,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _resize_bicubic_grad_shape(op, grads, original):
    return [original]


@register_gradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    # TF differentiates bicubic resizes of float32 and float64 images only (None else)
    if op.inputs[0].dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
        return [None, None]
    return [make_tensor("ResizeBicubicGrad", [grad, op.inputs[0]], dict(op.attrs)), None]


@register_op("ResizeBilinearGrad", attrs=_RESIZE_ATTRS,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _resize_bilinear_grad_shape(op, grads, original):
    return [original]


@register_op("ResizeNearestNeighborGrad", attrs=_RESIZE_ATTRS)
def _resize_nearest_grad_shape(op, grads, size):
    value = constant_value(op.inputs[1])
    hw = [None, None] if value is None else [int(v) for v in np.reshape(value, -1)]
    if grads.ndims is None:
        return [TensorShape([None, *hw, None])]
    return [TensorShape([grads[0].value, *hw, grads[3].value])]


@register_gradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    return [make_tensor("ResizeBilinearGrad", [grad, op.inputs[0]], dict(op.attrs)), None]


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op, grad):
    hw = shape(op.inputs[0])[1:3]
    return [make_tensor("ResizeNearestNeighborGrad", [grad, hw], dict(op.attrs)), None]


def _scalar_string(op, contents):
    if contents.ndims not in (None, 0):
        raise op.shape_error(f"contents must be a scalar string, got shape {contents}")
    channels = op.attrs["channels"]
    return [TensorShape([None, None, channels or None])]


register_op("DecodePng", attrs={"channels": 0, "dtype": _dtypes.uint8},
            dtype_fn=attr_dtype("dtype"))(_scalar_string)
register_op("DecodeJpeg", attrs={"channels": 0, "ratio": 1, "fancy_upscaling": True,
                                 "try_recover_truncated": False, "acceptable_fraction": 1.0,
                                 "dct_method": ""},
            dtype_fn=fixed_dtype(_dtypes.uint8))(_scalar_string)


@register_op("EncodePng", attrs={"compression": -1}, dtype_fn=fixed_dtype(_dtypes.string))
def _encode_png_shape(op, image):
    if image.ndims not in (None, 3):
        raise op.shape_error(f"image must be 3-D [height, width, channels], got {image}")
    return [TensorShape([])]


not_differentiable("DecodePng", "DecodeJpeg", "EncodePng")


# -- resizing ----------------------------------------------------------------------------
class ResizeMethod:
    """TF1's resize methods (``tf.image.ResizeMethod``).

    Example
    -------
    >>> ResizeMethod.NEAREST_NEIGHBOR
    1
    """

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


def _image_tensor(images, what: str):
    x = convert_to_tensor(images, name="images")
    if x.shape.ndims is not None and x.shape.ndims not in (3, 4):
        raise ValueError(f"{what}: images must be 3-D [height, width, channels] or 4-D "
                         f"[batch, height, width, channels], got shape {x.shape}")
    return x


def _size_tensor(size, what: str):
    s = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
    if s.shape.ndims is not None and (s.shape.ndims != 1 or s.shape[0].value not in (None, 2)):
        raise ValueError(f"{what}: size must be a 1-D int32 tensor of 2 elements "
                         f"[new_height, new_width], got shape {s.shape}")
    return s


def _resize_op(op_type, images, size, align_corners, half_pixel_centers, name,
               in_scope: bool = False):
    """The resize op. As TF's raw ``tf.image.resize_bilinear`` & co., the op takes the
    scope's name (``ResizeBilinear:0``, its size ``ResizeBilinear/size``); with
    `in_scope` (``resize_images``) it is made in the caller's scope under its type's
    name. A 3-D image (which TF's raw ops reject) goes through ExpandDims/Squeeze."""
    what = f"image.{op_type}"
    scope_cm = _no_scope() if in_scope else name_scope(name, op_type, [images, size])
    with scope_cm as scope:
        x = check_input(_image_tensor(images, what), op_type, "images", REAL_IMAGES)
        s = _size_tensor(size, what)
        single = x.shape.ndims == 3
        if single:
            x = expand_dims(x, 0)
        attrs = {"align_corners": bool(align_corners)}
        if half_pixel_centers is not None:
            attrs["half_pixel_centers"] = bool(half_pixel_centers)
        y = make_tensor(op_type, [x, s], attrs,
                        name=op_type if in_scope or single else scope)
        return squeeze(y, [0]) if single else y


@contextlib.contextmanager
def _no_scope():
    yield None


def resize_bilinear(images, size, align_corners: bool = False, name=None,
                    half_pixel_centers: bool = False):
    """Bilinear resize of `images` to ``size = [new_height, new_width]`` (float32 output,
    float64 images included, as in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.resize_bilinear(tf.zeros([1, 4, 4, 3], tf.uint8), [2, 2]).dtype
    tf.float32
    """
    return _resize_op("ResizeBilinear", images, size, align_corners, half_pixel_centers,
                      name)


def resize_nearest_neighbor(images, size, align_corners: bool = False, name=None,
                            half_pixel_centers: bool = False):
    """Nearest-neighbour resize of `images` (keeps the dtype).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.resize_nearest_neighbor(tf.zeros([1, 4, 4, 3], tf.uint8), [8, 8]).shape
    TensorShape([Dimension(1), Dimension(8), Dimension(8), Dimension(3)])
    """
    return _resize_op("ResizeNearestNeighbor", images, size, align_corners,
                      half_pixel_centers, name)


def resize_bicubic(images, size, align_corners: bool = False, name=None,
                   half_pixel_centers: bool = False):
    """Bicubic resize of `images` (Keys' cubic kernel; float32 output).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.resize_bicubic(tf.zeros([1, 4, 4, 3]), [6, 6]).shape.as_list()
    [1, 6, 6, 3]
    """
    return _resize_op("ResizeBicubic", images, size, align_corners, half_pixel_centers,
                      name)


def resize_area(images, size, align_corners: bool = False, name=None):
    """Area-averaging resize of `images` (float32 output; no gradient, as in TF).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.resize_area(tf.ones([1, 4, 4, 1]), [2, 2]).shape.as_list()
    [1, 2, 2, 1]
    """
    return _resize_op("ResizeArea", images, size, align_corners, None, name)


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners: bool = False,
                  preserve_aspect_ratio: bool = False, name=None):
    """Resize 3-D or 4-D `images` to ``size = [new_height, new_width]`` (TF1's
    ``tf.image.resize_images``, also ``tf.image.resize`` in ``tf.compat.v1``).

    Parameters
    ----------
    method : ResizeMethod
        ``BILINEAR`` (float32 result) or ``NEAREST_NEIGHBOR`` (keeps the dtype).
    align_corners : bool
        Map the corner pixels of input and output onto each other.
    preserve_aspect_ratio : bool
        Shrink `size` so the image keeps its aspect ratio (TF's rounding; sizes may be
        dynamic).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.resize_images(tf.zeros([5, 4, 3]), [10, 8]).shape.as_list()
    [10, 8, 3]
    """
    if isinstance(method, str):
        method = _METHOD_NAMES.get(method.lower(), method)
    with name_scope(name, "resize", [images, size]):  # TF's scope name is "resize"
        x = _image_tensor(images, "resize_images")
        size_t = _size_tensor(size, "resize_images")
        target = constant_value(size_t)
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        hw = None if dims is None else dims[-3:-1]
        if preserve_aspect_ratio:  # graph ops, as TF: the image may have dynamic sizes
            if x.shape.ndims is None:
                raise ValueError("resize_images: 'images' contains no shape.")
            size_t, target = aspect_preserving_size(x, size_t)
            if target is not None and x.shape.ndims == 3:
                x = expand_dims(x, 0)  # the static size goes on the resize op itself
        elif target is not None and hw is not None and list(hw) == [int(t) for t in target]:
            # TensorFlow returns the images unchanged (a 3-D one through its batch of one)
            return squeeze(expand_dims(x, 0), [0]) if len(dims) == 3 else x
        if method not in _RESIZERS:  # as TF, once the scope and size checks are built
            raise ValueError(f"Resize method is not implemented: {method}")
        out = _resize_op(_RESIZERS[method], x, size_t, align_corners,
                         None if method == ResizeMethod.AREA else False, None, in_scope=True)
        if preserve_aspect_ratio and target is not None:
            out.set_shape([None, *target, None])
            return squeeze(out, [0]) if dims is not None and len(dims) == 3 else out
        # As TensorFlow: a partly constant size (tf.stack([h, 7])) fixes what it knows.
        if target is None and out.shape.ndims is not None:
            known = constant_value_as_shape(size_t)
            if known.ndims == 2:
                out.set_shape([None] * (out.shape.ndims - 3) + known.as_list() + [None])
        return out


resize = resize_images
_RESIZERS = {ResizeMethod.BILINEAR: "ResizeBilinear",
             ResizeMethod.NEAREST_NEIGHBOR: "ResizeNearestNeighbor",
             ResizeMethod.BICUBIC: "ResizeBicubic", ResizeMethod.AREA: "ResizeArea"}


# -- pixel statistics and flips ---------------------------------------------------------
def _float_image(x):
    if x.dtype.base_dtype in _FLOATS:
        return x
    return cast(x, _dtypes.float32)


def per_image_standardization(image):
    """``(x - mean) / max(stddev, 1 / sqrt(num_pixels * channels))`` per image (over
    height, width and channels); float32 for integer images.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.image.per_image_standardization(tf.constant([[[0.0], [2.0]]]))
    >>> with tf.Session() as sess:
    ...     print(sess.run(y).ravel())
    [-1.  1.]
    """
    with name_scope(None, "per_image_standardization", [image]) as scope:
        x = _float_image(_image_tensor(image, "per_image_standardization"))
        axes = [-3, -2, -1]
        mean = reduce_mean(x, axes, keepdims=True)
        centered = subtract(x, mean)
        variance = reduce_mean(centered * centered, axes, keepdims=True)
        dims = shape(x)[-3:]
        count = cast(dims[0] * dims[1] * dims[2], x.dtype.base_dtype)
        adjusted = maximum(sqrt(variance), rsqrt(count))
        return realdiv(centered, adjusted, name=scope)  # TF: "per_image_standardization"


def _flip(image, axis_3d: int, what: str):
    """TF's flips: in a scope named `what`, after the image checks (a
    ``control_dependency`` Identity); an image of unknown rank picks the axis by a
    ``tf.cond`` on its rank."""
    from flowgraph.ops.array_shape_ops import rank
    from flowgraph.ops.control_flow_cond import cond
    from flowgraph.ops.image_adjust_ops import _check_3d, _with_checks
    from flowgraph.ops.math_ops import equal

    with name_scope(None, what, [image]):
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"'image' (shape {x.shape}) must be at least three-dimensional.")
        x = _with_checks(_check_3d(x), x)
        ndims = x.shape.ndims
        if ndims is None:
            def one_image():
                out = reverse_v2(x, [axis_3d])
                out.set_shape([None] * 3)
                return out

            return cond(equal(rank(x), 3), one_image, lambda: reverse_v2(x, [axis_3d + 1]))
        if ndims not in (3, 4):
            raise ValueError(f"'image' (shape {x.shape})must have either 3 or 4 dimensions.")
        return reverse_v2(x, [axis_3d if ndims == 3 else axis_3d + 1])


def flip_left_right(image):
    """Reverse the width axis.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.flip_left_right(tf.zeros([2, 3, 1])).shape.as_list()
    [2, 3, 1]
    """
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """Reverse the height axis.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.flip_up_down(tf.zeros([2, 3, 1])).shape.as_list()
    [2, 3, 1]
    """
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis_3d: int, seed, what: str):
    """TF's random flips: one image is flipped in a ``tf.cond`` when its draw is below
    1/2; a batch blends each image with its flip by ``round(draw)`` (flipped when the
    draw is above 1/2); an image of unknown rank picks one of the two by a ``tf.cond``."""
    from flowgraph.ops.array_join_ops import stack
    from flowgraph.ops.array_shape_ops import rank
    from flowgraph.ops.control_flow_cond import cond
    from flowgraph.ops.image_adjust_ops import _check_3d, _with_checks
    from flowgraph.ops.math_ops import equal, less, multiply
    from flowgraph.ops.math_ops import round as _round

    with name_scope(None, what, [image]) as scope:
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"'image' (shape {x.shape}) must be at least three-dimensional.")
        x = _with_checks(_check_3d(x), x)
        static = x.shape

        def one_image():
            flip = less(random_uniform([], minval=0, maxval=1.0, seed=seed), 0.5)
            out = cond(flip, lambda: reverse_v2(x, [axis_3d]), lambda: x, name=scope)
            out.set_shape(static if static.ndims is not None else [None] * 3)
            return out

        def batch():
            n = shape(x)[0]
            draws = random_uniform(stack([n]), minval=0, maxval=1.0, seed=seed)
            flips = cast(_round(reshape(draws, stack([n, 1, 1, 1]))), x.dtype)
            return multiply(flips, reverse_v2(x, [axis_3d + 1])) + (1 - flips) * x

        if static.ndims is None:
            return cond(equal(rank(x), 3), one_image, batch)
        return one_image() if static.ndims == 3 else batch()


def random_flip_left_right(image, seed=None):
    """Flip each image left-right with probability 1/2 (each image of a batch apart).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_flip_left_right(tf.zeros([4, 4, 3]), seed=1).shape.as_list()
    [4, 4, 3]
    """
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Flip each image upside down with probability 1/2.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_flip_up_down(tf.zeros([4, 4, 3]), seed=1).shape.as_list()
    [4, 4, 3]
    """
    return _random_flip(image, 0, seed, "random_flip_up_down")


def random_crop(value, size, seed=None, name=None):
    """A crop of shape `size` at a uniformly random offset (any rank).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_crop(tf.zeros([8, 8, 3]), [4, 5, 3], seed=2).shape.as_list()
    [4, 5, 3]
    """
    with name_scope(name, "random_crop", [value, size]) as scope:
        x = convert_to_tensor(value, name="value")
        s = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
        static = constant_value(s)
        if static is not None and x.shape.ndims is not None and x.shape.ndims != len(static):
            raise ValueError(f"random_crop: size {[int(v) for v in static]} has not the rank "
                             f"of the value's shape {x.shape}")
        # a size larger than the value fails when the step runs (InvalidArgumentError), as
        # in TensorFlow
        fits = Assert(reduce_all(greater_equal(shape(x), s)),
                      ["Need value.shape >= size, got ", shape(x), s], summarize=1000)
        with control_dependencies([fits]):
            limit = shape(x) - s + 1
        offset = random_uniform(shape(s), dtype=_dtypes.int32, maxval=_dtypes.int32.max,
                                seed=seed) % limit
        out = _slice(x, offset, s, name=scope)  # TF names the crop after its scope
        if static is not None:
            out.set_shape([int(v) for v in static])
        return out


def random_brightness(image, max_delta, seed=None):
    """`adjust_brightness` by one random ``delta`` in ``[-max_delta, max_delta)``: added
    to every pixel of a float image, or of an integer image converted to [0, 1) and back
    (saturating), as in TensorFlow; any shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_brightness(tf.zeros([2, 2, 3]), 0.2, seed=3).dtype
    tf.float32
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


# -- codecs ------------------------------------------------------------------------------
def decode_png(contents, channels: int = 0, dtype=_dtypes.uint8, name=None):
    """Decode PNG bytes into a ``[height, width, channels]`` uint8 (or uint16) tensor;
    ``channels=0`` keeps the file's. As in TF the op also decodes JPEG and GIF data.
    Needs Pillow (the kernel says so when missing).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.decode_png(b"", channels=3).shape.as_list()
    [None, None, 3]
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in (_dtypes.uint8, _dtypes.uint16):
        raise TypeError(f"decode_png: dtype must be uint8 or uint16, got {dtype.name}")
    c = convert_to_tensor(contents, dtype=_dtypes.string, name="contents")
    return make_tensor("DecodePng", [c], {"channels": int(channels), "dtype": dtype},
                       name=name or "DecodePng")


def decode_jpeg(contents, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1,
                dct_method: str = "", name=None):
    """Decode JPEG bytes into a ``[height, width, channels]`` uint8 tensor through Pillow's
    libjpeg. Pixels equal TF's for gray and 4:4:4 images, with ``fancy_upscaling=False``
    or with ``dct_method='INTEGER_ACCURATE'``; TF's default decoding of subsampled
    chroma (fast IDCT with fancy upsampling) may differ by a few units.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.decode_jpeg(b"", channels=1).dtype
    tf.uint8
    """
    # channels are checked when the op runs (0, 1 or 3 for JPEG data), as in TF
    if ratio != 1:
        raise NotImplementedError("decode_jpeg: ratio other than 1 is not implemented in "
                                  "flowgraph; resize after decoding")
    c = convert_to_tensor(contents, dtype=_dtypes.string, name="contents")
    attrs = {"channels": int(channels), "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated),
             "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}
    return make_tensor("DecodeJpeg", [c], attrs, name=name or "DecodeJpeg")


def encode_png(image, compression: int = -1, name=None):
    """PNG bytes (a scalar string) of a uint8 ``[height, width, channels]`` image.

    Example
    -------
    >>> import flowgraph as tf
    >>> png = tf.image.encode_png(tf.zeros([2, 2, 3], tf.uint8))
    >>> with tf.Session() as sess:
    ...     print(sess.run(png)[:4])
    b'\\x89PNG'
    """
    x = convert_to_tensor(image, name="image")
    if x.dtype.base_dtype != _dtypes.uint8:
        raise TypeError(f"encode_png: image must be uint8, got {x.dtype.name}")
    return make_tensor("EncodePng", [x], {"compression": int(compression)},
                       name=name or "EncodePng")


# decode_image (the DecodeImage op) lives with the other codecs.
# Crops, pads, rotations and color adjustments composed from array ops.
from flowgraph.ops.image_adjust_ops import (  # noqa: E402
    adjust_brightness,
    adjust_contrast,
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    grayscale_to_rgb,
    pad_to_bounding_box,
    resize_image_with_crop_or_pad,
    rgb_to_grayscale,
    rot90,
    transpose_image,
)
from flowgraph.ops.image_codec_ops import decode_image  # noqa: E402

__all__ += ["adjust_brightness", "adjust_contrast", "central_crop", "convert_image_dtype",
            "crop_to_bounding_box", "grayscale_to_rgb", "pad_to_bounding_box",
            "resize_image_with_crop_or_pad", "rgb_to_grayscale", "rot90", "transpose_image"]


def resize_image_with_pad(image, target_height: int, target_width: int,
                          method=ResizeMethod.BILINEAR, align_corners: bool = False):
    """Resize `image` to fit ``target_height x target_width`` keeping its aspect ratio,
    then zero-pad it (centered) to exactly that size; sizes may be dynamic.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.resize_image_with_pad(tf.ones([3, 4, 1]), 4, 6).shape.as_list()
    [4, 6, 1]
    """
    from flowgraph.ops.image_resize_pad import resize_and_pad

    def resize_fn(images, new_size):
        return resize_images(images, new_size, method, align_corners=align_corners)

    return resize_and_pad(image, target_height, target_width, resize_fn)


def random_contrast(image, lower, upper, seed=None):
    """`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_contrast(tf.ones([2, 2, 3]), 0.5, 1.5, seed=1).shape.as_list()
    [2, 2, 3]
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    factor = random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


__all__ += ["random_contrast", "resize_image_with_pad"]

# HSV conversions and hue/saturation adjustments (composites).
from flowgraph.ops.image_color_ops import (  # noqa: E402
    adjust_hue,
    adjust_saturation,
    hsv_to_rgb,
    random_hue,
    random_saturation,
    rgb_to_hsv,
)

__all__ += ["adjust_hue", "adjust_saturation", "hsv_to_rgb", "random_hue",
            "random_saturation", "rgb_to_hsv"]

# Box ops, metrics and filters, color spaces and more codecs (TF 1.15 names).
from flowgraph.ops.array_compat_ops import extract_image_patches  # noqa: E402
from flowgraph.ops.image_boxes_ops import (  # noqa: E402
    combined_non_max_suppression,
    crop_and_resize,
    draw_bounding_boxes,
    extract_glimpse,
    non_max_suppression,
    non_max_suppression_overlaps,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
    sample_distorted_bounding_box,
)
from flowgraph.ops.image_codec_ops import (  # noqa: E402
    adjust_jpeg_quality,
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    encode_jpeg,
    extract_jpeg_shape,
    is_jpeg,
    random_jpeg_quality,
)
from flowgraph.ops.image_extra2_ops import (  # noqa: E402
    adjust_gamma,
    extract_patches,
    image_gradients,
    psnr,
    resize_with_crop_or_pad,
    rgb_to_yiq,
    rgb_to_yuv,
    sobel_edges,
    ssim,
    ssim_multiscale,
    total_variation,
    transpose,
    yiq_to_rgb,
    yuv_to_rgb,
)

__all__ += [
    "adjust_gamma",
    "adjust_jpeg_quality",
    "combined_non_max_suppression",
    "crop_and_resize",
    "decode_and_crop_jpeg",
    "decode_bmp",
    "decode_gif",
    "draw_bounding_boxes",
    "encode_jpeg",
    "extract_glimpse",
    "extract_image_patches",
    "extract_jpeg_shape",
    "extract_patches",
    "image_gradients",
    "is_jpeg",
    "non_max_suppression",
    "non_max_suppression_overlaps",
    "non_max_suppression_padded",
    "non_max_suppression_with_scores",
    "psnr",
    "random_jpeg_quality",
    "resize_with_crop_or_pad",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "sample_distorted_bounding_box",
    "sobel_edges",
    "ssim",
    "ssim_multiscale",
    "total_variation",
    "transpose",
    "yiq_to_rgb",
    "yuv_to_rgb",
]
from flowgraph.ops.image_proposals_ops import generate_bounding_box_proposals  # noqa: E402

__all__ += ["generate_bounding_box_proposals"]
