"""More image codecs for `tf.image` and `tf.io`: BMP and GIF decoding, `decode_image`
(any of the four formats), JPEG encoding,
`is_jpeg`, `extract_jpeg_shape` and `decode_and_crop_jpeg` (Pillow; kernels:
`flowgraph/backends/cpu/kernels_image_codec.py`).

Example
-------
>>> import flowgraph as tf
>>> jpeg = tf.image.encode_jpeg(tf.zeros([4, 6, 3], tf.uint8))
>>> tf.Session().run(tf.image.extract_jpeg_shape(jpeg)).tolist()
[4, 6, 3]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.math_ops import equal
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_tensor
from flowgraph.ops.string_ops import substr

__all__ = ["adjust_jpeg_quality", "decode_and_crop_jpeg", "decode_bmp", "decode_gif",
           "decode_image", "encode_jpeg", "extract_jpeg_shape", "is_jpeg", "random_jpeg_quality"]

_JPEG_ATTRS = {"channels": 0, "ratio": 1, "fancy_upscaling": True,
               "try_recover_truncated": False, "acceptable_fraction": 1.0, "dct_method": ""}


def _scalar(op, contents, *rest):
    if contents.ndims not in (None, 0):
        raise op.shape_error(f"contents must be a scalar string, got shape {contents}")


@register_op("DecodeBmp", attrs={"channels": 0}, dtype_fn=fixed_dtype(_dtypes.uint8))
def _decode_bmp_shape(op, contents):
    _scalar(op, contents)
    return [TensorShape([None, None, op.attrs["channels"] or None])]


@register_op("DecodeGif", dtype_fn=fixed_dtype(_dtypes.uint8))
def _decode_gif_shape(op, contents):
    _scalar(op, contents)
    return [TensorShape([None, None, None, 3])]


@register_op("DecodeAndCropJpeg", attrs=dict(_JPEG_ATTRS), dtype_fn=fixed_dtype(_dtypes.uint8))
def _decode_crop_shape(op, contents, crop_window):
    _scalar(op, contents)
    window = constant_value(op.inputs[1])
    h, w = (None, None) if window is None else (int(v) for v in np.reshape(window, -1)[2:4])
    return [TensorShape([h, w, op.attrs["channels"] or None])]


@register_op("ExtractJpegShape", attrs={"output_type": _dtypes.int32},
             dtype_fn=attr_dtype("output_type"))
def _jpeg_shape_shape(op, contents):
    _scalar(op, contents)
    return [TensorShape([3])]


@register_op("EncodeJpeg", dtype_fn=fixed_dtype(_dtypes.string),
             attrs={"format": "", "quality": 95, "progressive": False, "optimize_size": False,
                    "chroma_downsampling": True, "density_unit": "in", "x_density": 300,
                    "y_density": 300, "xmp_metadata": ""})
def _encode_jpeg_shape(op, image):
    if image.ndims not in (None, 3):
        raise op.shape_error(f"image must be 3-D [height, width, channels], got {image}")
    return [TensorShape([])]


@register_op("EncodeJpegVariableQuality", dtype_fn=fixed_dtype(_dtypes.string))
def _encode_jpeg_vq_shape(op, images, quality):
    if quality.ndims not in (None, 0):
        raise op.shape_error(f"quality must be a scalar, got shape {quality}")
    return _encode_jpeg_shape(op, images)


@register_op("DecodeImage", attrs={"channels": 0, "dtype": _dtypes.uint8,
                                   "expand_animations": True}, dtype_fn=attr_dtype("dtype"))
def _decode_image_shape(op, contents):
    _scalar(op, contents)
    if op.attrs["expand_animations"]:  # a GIF gives [frames, height, width, 3]
        return [TensorShape(None)]
    return [TensorShape([None, None, op.attrs["channels"] or None])]


not_differentiable("DecodeBmp", "DecodeGif", "DecodeAndCropJpeg", "ExtractJpegShape",
                   "EncodeJpeg", "EncodeJpegVariableQuality", "DecodeImage")


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None,
                 expand_animations: bool = True):
    """Decode a JPEG, PNG, GIF or BMP image, whichever the bytes hold (one ``DecodeImage``
    op). The result is ``[height, width, channels]``, or for a GIF with
    `expand_animations` ``[frames, height, width, 3]`` (so its static rank is unknown
    unless ``expand_animations=False``, which keeps a GIF's first frame). `dtype` uint8,
    uint16 or float32 (in [0, 1]) comes from the op; another dtype is converted with
    `convert_image_dtype` from uint16.

    Example
    -------
    >>> import flowgraph as tf
    >>> png = tf.image.encode_png(tf.fill([2, 3, 1], tf.constant(51, tf.uint8)))
    >>> img = tf.image.decode_image(png, dtype=tf.float32, expand_animations=False)
    >>> img.op.name, img.shape.as_list()
    ('decode_image/DecodeImage', [None, None, None])
    >>> print(tf.Session().run(img)[0, 0])
    [0.2]
    """
    from flowgraph.ops.image_adjust_ops import convert_image_dtype

    with name_scope(name, "decode_image"):
        channels = 0 if channels is None else int(channels)
        target = _dtypes.as_dtype(dtype).base_dtype
        op_dtype = target if target in (_dtypes.uint8, _dtypes.uint16, _dtypes.float32) \
            else _dtypes.uint16
        image = make_tensor("DecodeImage", [_contents(contents)],
                            {"channels": channels, "dtype": op_dtype,
                             "expand_animations": bool(expand_animations)},
                            name="DecodeImage")
        if op_dtype != target:
            image = convert_image_dtype(image, target)
        return image


def _contents(contents):
    return convert_to_tensor(contents, dtype=_dtypes.string, name="contents")


def decode_bmp(contents, channels=0, name=None):
    """Decode a BMP image to uint8 ``[height, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.decode_bmp(tf.constant(b"")).dtype
    tf.uint8
    """
    return make_tensor("DecodeBmp", [_contents(contents)], {"channels": int(channels)},
                       name=name or "DecodeBmp")


def decode_gif(contents, name=None):
    """Decode every frame of a GIF to uint8 RGB ``[num_frames, height, width, 3]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.decode_gif(tf.constant(b"")).shape.as_list()
    [None, None, None, 3]
    """
    return make_tensor("DecodeGif", [_contents(contents)], name=name or "DecodeGif")


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """JPEG-encode a uint8 ``[height, width, 1 or 3]`` image to a scalar string.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.encode_jpeg(tf.zeros([2, 2, 3], tf.uint8)).dtype
    tf.string
    """
    attrs = {"format": format, "quality": int(quality), "progressive": bool(progressive),
             "optimize_size": bool(optimize_size),
             "chroma_downsampling": bool(chroma_downsampling), "density_unit": density_unit,
             "x_density": int(x_density), "y_density": int(y_density),
             "xmp_metadata": xmp_metadata}
    x = convert_to_tensor(image, name="image")
    if x.dtype.base_dtype != _dtypes.uint8:
        raise TypeError(f"encode_jpeg: image must be uint8, got {x.dtype.name}")
    return make_tensor("EncodeJpeg", [x], attrs, name=name or "EncodeJpeg")


def is_jpeg(contents, name=None):
    """True when `contents` starts with the JPEG signature ``FF D8 FF``.

    Example
    -------
    >>> import flowgraph as tf
    >>> bool(tf.Session().run(tf.image.is_jpeg(tf.constant(b"\\xff\\xd8\\xff\\xe0"))))
    True
    """
    with name_scope(name, "is_jpeg"):
        # TF passes its own `name` on: "is_jpeg/Equal", or "<name>/<name>" when named
        return equal(substr(_contents(contents), 0, 3), b"\xff\xd8\xff", name=name)


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    """``[height, width, channels]`` from a JPEG's header.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.extract_jpeg_shape(tf.constant(b"")).shape.as_list()
    [3]
    """
    return make_tensor("ExtractJpegShape", [_contents(contents)],
                       {"output_type": _dtypes.as_dtype(output_type)},
                       name=name or "ExtractJpegShape")


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1,
                         dct_method="", name=None):
    """Decode the ``crop_window = [y, x, height, width]`` part of a JPEG image.

    Example
    -------
    >>> import flowgraph as tf
    >>> jpeg = tf.image.encode_jpeg(tf.zeros([4, 6, 3], tf.uint8))
    >>> crop = tf.image.decode_and_crop_jpeg(jpeg, [1, 2, 2, 3])
    >>> tf.Session().run(crop).shape
    (2, 3, 3)
    """
    attrs = {"channels": int(channels), "ratio": int(ratio),
             "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated),
             "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}
    window = convert_to_tensor(crop_window, dtype=_dtypes.int32, name="crop_window")
    return make_tensor("DecodeAndCropJpeg", [_contents(contents), window], attrs,
                       name=name or "DecodeAndCropJpeg")


def adjust_jpeg_quality(image, jpeg_quality, name=None, dct_method=""):
    """`image` ``[height, width, 1 or 3]`` after a JPEG round trip at `jpeg_quality`
    (0-100, an int or a scalar tensor), in its own dtype.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.adjust_jpeg_quality(tf.fill([8, 8, 3], 0.5), 75).shape.as_list()
    [None, None, 3]
    """
    from flowgraph.ops.image_adjust_ops import convert_image_dtype

    with name_scope(name, "adjust_jpeg_quality", [image]):
        x = convert_to_tensor(image, name="image")
        channels = x.shape[-1].value if x.shape.ndims else None
        orig = x.dtype.base_dtype
        pixels = convert_image_dtype(x, _dtypes.uint8, saturate=True)
        quality = convert_to_tensor(jpeg_quality, dtype=_dtypes.int32, name="jpeg_quality")
        encoded = make_tensor("EncodeJpegVariableQuality", [pixels, quality])
        decoded = make_tensor("DecodeJpeg", [encoded], {**_JPEG_ATTRS, "channels": channels or 0,
                                                        "dct_method": dct_method})
        return convert_image_dtype(decoded, orig, saturate=True)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """`adjust_jpeg_quality` at a quality drawn uniformly from
    ``[min_jpeg_quality, max_jpeg_quality)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_jpeg_quality(tf.fill([8, 8, 3], 0.5), 40, 60, seed=1).dtype
    tf.float32
    """
    from flowgraph.ops.random_ops import random_uniform

    if min_jpeg_quality < 0 or max_jpeg_quality < 0:
        raise ValueError("jpeg_quality must be greater than 0.")
    if min_jpeg_quality > 100 or max_jpeg_quality > 100:
        raise ValueError("jpeg_quality must be less than 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed,
                             dtype=_dtypes.int32)
    return adjust_jpeg_quality(image, quality)
