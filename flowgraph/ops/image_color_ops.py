"""HSV color conversions and the hue/saturation adjustments built on them, composed from
array ops (so they differentiate): `tf.image.rgb_to_hsv`, `hsv_to_rgb`, `adjust_hue`,
`adjust_saturation`, `random_hue`, `random_saturation`. Images are ``[..., 3]`` floats
in ``[0, 1]`` (integer images are converted there and back by the adjustments).

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
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.array_join_ops import stack, unstack
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.image_adjust_ops import convert_image_dtype
from flowgraph.ops.math_ops import (
    abs,
    add,
    clip_by_value,
    equal,
    floor,
    floormod,
    greater,
    less,
    maximum,
    minimum,
    multiply,
    subtract,
    truediv,
)
from flowgraph.ops.random_ops import random_uniform

__all__ = ["adjust_hue", "adjust_saturation", "hsv_to_rgb", "random_hue",
           "random_saturation", "rgb_to_hsv"]


def _channels(images, what: str):
    """The three channels of float `images` ``[..., 3]`` (a TypeError for other dtypes,
    a ValueError for another last dimension)."""
    x = convert_to_tensor(images, name="images")
    if not x.dtype.is_floating:
        raise TypeError(f"{what}: images must be float16, float32 or float64, got "
                        f"{x.dtype.name}")
    if x.shape.ndims is not None and (x.shape.ndims == 0 or x.shape[-1].value not in (None, 3)):
        raise ValueError(f"{what}: the last dimension must be 3 (RGB or HSV), got shape "
                         f"{x.shape}")
    return unstack(x, num=3, axis=-1)


def rgb_to_hsv(images, name=None):
    """RGB to HSV, hue in ``[0, 1)`` (0 where the pixel is grey).

    Example
    -------
    >>> import flowgraph as tf
    >>> [round(float(v), 4) for v in tf.Session().run(tf.image.rgb_to_hsv([0.0, 0.5, 1.0]))]
    [0.5833, 1.0, 1.0]
    """
    with name_scope(name, "rgb_to_hsv", [images]):
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


def hsv_to_rgb(images, name=None):
    """HSV (hue in ``[0, 1]``) to RGB.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.hsv_to_rgb([0.5, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    """
    with name_scope(name, "hsv_to_rgb", [images]):
        h, s, v = _channels(images, "hsv_to_rgb")
        chroma = multiply(s, v)
        low = subtract(v, chroma)
        sector6 = multiply(h, 6.0)
        sector = floormod(floor(sector6), 6.0)  # hue 1.0 is hue 0.0
        mid = multiply(chroma, subtract(1.0, abs(subtract(floormod(sector6, 2.0), 1.0))))
        zero = zeros_like(v)
        # (r, g, b) before adding `low`, for each sixth of the hue circle
        table = [(chroma, mid, zero), (mid, chroma, zero), (zero, chroma, mid),
                 (zero, mid, chroma), (mid, zero, chroma), (chroma, zero, mid)]
        out = []
        for c in range(3):
            acc = zero
            for k, row in enumerate(table):
                acc = where_v2(equal(sector, float(k)), row[c], acc)
            out.append(add(acc, low))
        return stack(out, axis=-1)


def _in_float(image, fn, what: str, values):
    with name_scope(None, what, values):
        x = convert_to_tensor(image, name="image")
        flt = convert_image_dtype(x, _dtypes.float32) if not x.dtype.is_floating else x
        out = hsv_to_rgb(fn(rgb_to_hsv(flt)))
        return convert_image_dtype(out, x.dtype.base_dtype, saturate=True)


def adjust_hue(image, delta, name=None):
    """Rotate the hue of an RGB image by `delta` (a fraction of the circle, in [-1, 1]).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.adjust_hue([[[1.0, 0.0, 0.0]]], 1 / 3))[0, 0].round(4).tolist()
    [0.0, 1.0, 0.0]
    """
    def shift(hsv):
        h, s, v = unstack(hsv, num=3, axis=-1)
        return stack([floormod(add(h, delta), 1.0), s, v], axis=-1)
    return _in_float(image, shift, name or "adjust_hue", [image, delta])


def adjust_saturation(image, saturation_factor, name=None):
    """Scale the saturation of an RGB image by `saturation_factor` (clipped to [0, 1]).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.image.adjust_saturation([[[1.0, 0.5, 0.0]]], 0.0))[0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    def scale(hsv):
        h, s, v = unstack(hsv, num=3, axis=-1)
        s = clip_by_value(multiply(s, saturation_factor), 0.0, 1.0)
        return stack([h, s, v], axis=-1)
    return _in_float(image, scale, name or "adjust_saturation", [image, saturation_factor])


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
