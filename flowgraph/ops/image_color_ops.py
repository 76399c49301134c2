"""HSV color conversions and the hue/saturation adjustments built on them:
`tf.image.rgb_to_hsv`, `hsv_to_rgb`, `adjust_hue`, `adjust_saturation`, `random_hue`,
`random_saturation`, each one TensorFlow op type (``RGBToHSV``, ``HSVToRGB``,
``AdjustHue``, ``AdjustSaturation``: `flowgraph/ops/image_raw_ops.py`), as TensorFlow
builds them. Images are ``[..., 3]`` floats in ``[0, 1]`` (the adjustments convert other
dtypes to float32 and back). ``RGBToHSV``'s gradient differentiates
`rgb_to_hsv_composite`, the same conversion written with array ops.

Example
-------
>>> import flowgraph as tf
>>> hsv = tf.image.rgb_to_hsv([[[1.0, 0.0, 0.0]]])
>>> tf.Session().run(hsv)[0, 0].tolist()
[0.0, 1.0, 1.0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.array_join_ops import stack, unstack
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.image_adjust_ops import convert_image_dtype
from flowgraph.ops.math_ops import (
    add,
    equal,
    greater,
    less,
    maximum,
    minimum,
    subtract,
    truediv,
)
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.random_ops import random_uniform

__all__ = ["adjust_hue", "adjust_saturation", "hsv_to_rgb", "random_hue",
           "random_saturation", "rgb_to_hsv"]


def _channels(images, what: str):
    """The three channels of float `images` ``[..., 3]`` (a TypeError for other dtypes,
    a ValueError for another last dimension)."""
    x = _channels_check(convert_to_tensor(images, name="images"), what)
    return unstack(x, num=3, axis=-1)


def _channels_check(x, what: str):
    if not x.dtype.is_floating:
        raise TypeError(f"{what}: images must be float16, float32 or float64, got "
                        f"{x.dtype.name}")
    if x.shape.ndims is not None and (x.shape.ndims == 0 or x.shape[-1].value not in (None, 3)):
        raise ValueError(f"{what}: the last dimension must be 3 (RGB or HSV), got shape "
                         f"{x.shape}")
    return x


def rgb_to_hsv_composite(images):
    """`rgb_to_hsv` built from differentiable array ops (the gradient of ``RGBToHSV``)."""
    r, g, b = _channels(images, "rgb_to_hsv")
    value = maximum(maximum(r, g), b)
    spread = subtract(value, minimum(minimum(r, g), b))
    zero = zeros_like(value)
    safe_value = where_v2(greater(value, 0.0), value, zero + 1.0)
    saturation = where_v2(greater(value, 0.0), truediv(spread, safe_value), zero)
    safe = where_v2(greater(spread, 0.0), spread, zero + 1.0)
    hue = where_v2(equal(value, r), truediv(subtract(g, b), safe),
                   where_v2(equal(value, g), add(2.0, truediv(subtract(b, r), safe)),
                            add(4.0, truediv(subtract(r, g), safe))))
    hue = truediv(hue, 6.0)
    hue = where_v2(less(hue, 0.0), add(hue, 1.0), hue)
    hue = where_v2(greater(spread, 0.0), hue, zero)
    return stack([hue, saturation, value], axis=-1)


def _color_op(op_type: str, images, name, what: str):
    x = convert_to_tensor(images, name="images")
    _channels_check(x, what)
    return make_tensor(op_type, [x], name=name or op_type)


def rgb_to_hsv(images, name=None):
    """RGB to HSV, hue in ``[0, 1)`` (0 where the pixel is grey): one ``RGBToHSV`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> [round(float(v), 4) for v in tf.Session().run(tf.image.rgb_to_hsv([0.0, 0.5, 1.0]))]
    [0.5833, 1.0, 1.0]
    """
    return _color_op("RGBToHSV", images, name, "rgb_to_hsv")


def hsv_to_rgb(images, name=None):
    """HSV (hue in ``[0, 1]``) to RGB: one ``HSVToRGB`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.hsv_to_rgb([0.5, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    """
    return _color_op("HSVToRGB", images, name, "hsv_to_rgb")


def _adjust(op_type: str, image, arg, arg_name: str, name, default: str):
    """`op_type` on `image` in float16/float32 (other dtypes converted to float32 and
    back), as TensorFlow's adjustments run."""
    with name_scope(name, default, [image]):
        x = convert_to_tensor(image, name="image")
        orig = x.dtype.base_dtype
        keep = orig in (_dtypes.float16, _dtypes.float32)
        flt = x if keep else convert_image_dtype(x, _dtypes.float32)
        with name_scope(None, op_type) as inner:
            amount = convert_to_tensor(arg, _dtypes.float32, name=arg_name)
            out = make_tensor(op_type, [flt, amount], name=inner)
        if keep:
            return identity(out, name="Identity")
        return convert_image_dtype(out, orig)


def adjust_hue(image, delta, name=None):
    """Rotate the hue of an RGB image by `delta` (a fraction of the circle, in [-1, 1]):
    one ``AdjustHue`` op (which has no gradient, as in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.adjust_hue([[[1.0, 0.0, 0.0]]], 1 / 3))[0, 0].round(4).tolist()
    [0.0, 1.0, 0.0]
    """
    return _adjust("AdjustHue", image, delta, "delta", name, "adjust_hue")


def adjust_saturation(image, saturation_factor, name=None):
    """Scale the saturation of an RGB image by `saturation_factor` (clipped to [0, 1]):
    one ``AdjustSaturation`` op (which has no gradient, as in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.adjust_saturation([[[1.0, 0.5, 0.0]]], 0.0))[0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    return _adjust("AdjustSaturation", image, saturation_factor, "scale", name,
                   "adjust_saturation")


def random_hue(image, max_delta, seed=None):
    """`adjust_hue` by a delta drawn uniformly from ``[-max_delta, max_delta]``,
    ``0 <= max_delta <= 0.5``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_hue(tf.ones([2, 2, 3]), 0.1, seed=1).shape.as_list()
    [2, 2, 3]
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image, lower, upper, seed=None):
    """`adjust_saturation` by a factor drawn uniformly from ``[lower, upper)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.image.random_saturation(tf.ones([2, 2, 3]), 0.5, 1.5, seed=1).shape.as_list()
    [2, 2, 3]
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))
