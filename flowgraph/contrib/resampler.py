"""`tf.contrib.resampler`: bilinear sampling of images at arbitrary points, the sampler
of spatial transformer networks.

``resampler(data, warp)`` reads `data` (``[batch, height, width, channels]``) at the
``(x, y)`` points of `warp` (``[batch, ..., 2]``, in pixels: x along the width) and returns
``[batch, ..., channels]``. Each point mixes its four neighbouring pixels with bilinear
weights, a neighbour outside the image counting as 0; a point with ``x <= -1``,
``y <= -1``, ``x >= width`` or ``y >= height`` gives 0, as TF 1.x's kernel did. Gradients
flow to both `data` and `warp` (the weights are linear in the point between pixels).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     image = tf.reshape(tf.range(4.0), [1, 2, 2, 1])  # [[0, 1], [2, 3]]
...     out = tf.contrib.resampler.resampler(image, [[[0.5, 0.5], [1.0, 0.0]]])
...     print(tf.Session().run(out).ravel().tolist())
[1.5, 1.0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.array_index_ops import gather_nd

__all__ = ["resampler"]


def _in_range(value, size):
    return math_ops.logical_and(math_ops.greater_equal(value, 0),
                                math_ops.less(value, size))


def resampler(data, warp, name="resampler"):
    """`data` sampled bilinearly at the ``(x, y)`` points of `warp` (see the module)."""
    with name_scope(name, "resampler", [data, warp]):
        data = convert_to_tensor(data, name="data")
        warp = convert_to_tensor(warp, dtype=data.dtype, name="warp")
        if data.shape.ndims is not None and data.shape.ndims != 4:
            raise ValueError(f"resampler: data must be [batch, height, width, channels]; "
                             f"got shape {data.shape}")
        if warp.shape.ndims is not None and (
                warp.shape.ndims < 2 or warp.shape[-1].value not in (None, 2)):
            raise ValueError(f"resampler: warp must be [batch, ..., 2] (x, y) points; got "
                             f"shape {warp.shape}")
        data_shape = array_ops.shape(data)
        warp_shape = array_ops.shape(warp)
        height, width = data_shape[1], data_shape[2]
        points = array_ops.reshape(warp, array_ops.stack([warp_shape[0], -1, 2]))
        x, y = points[..., 0], points[..., 1]
        left, top = math_ops.floor(x), math_ops.floor(y)
        right, bottom = math_ops.add(left, 1.0), math_ops.add(top, 1.0)
        to_right = math_ops.subtract(right, x)  # the left pixels' share
        to_bottom = math_ops.subtract(bottom, y)  # the top pixels' share
        height_f = math_ops.cast(height, data.dtype)
        width_f = math_ops.cast(width, data.dtype)

        def corner(cx, cy, weight):
            valid = math_ops.logical_and(_in_range(cx, width_f), _in_range(cy, height_f))
            column = math_ops.cast(math_ops.clip_by_value(
                cx, 0.0, math_ops.subtract(width_f, 1.0)), dtypes.int32)
            row = math_ops.cast(math_ops.clip_by_value(
                cy, 0.0, math_ops.subtract(height_f, 1.0)), dtypes.int32)
            pixels = gather_nd(data, array_ops.stack([row, column], axis=-1), batch_dims=1)
            weight = math_ops.multiply(weight, math_ops.cast(valid, data.dtype))
            return math_ops.multiply(array_ops.expand_dims(weight, -1), pixels)

        total = math_ops.add(
            math_ops.add(
                math_ops.add(
                    corner(left, top, math_ops.multiply(to_right, to_bottom)),
                    corner(right, top, math_ops.multiply(
                        math_ops.subtract(1.0, to_right), to_bottom))),
                corner(left, bottom, math_ops.multiply(
                    to_right, math_ops.subtract(1.0, to_bottom)))),
            corner(right, bottom, math_ops.multiply(
                math_ops.subtract(1.0, to_right), math_ops.subtract(1.0, to_bottom))))
        inside = math_ops.logical_and(
            math_ops.logical_and(math_ops.greater(x, -1.0), math_ops.greater(y, -1.0)),
            math_ops.logical_and(math_ops.less(x, width_f), math_ops.less(y, height_f)))
        total = math_ops.multiply(total, array_ops.expand_dims(
            math_ops.cast(inside, data.dtype), -1))
        out_shape = array_ops.concat([warp_shape[:-1], data_shape[3:]], 0)
        out = array_ops.reshape(total, out_shape)
        if warp.shape.ndims is not None and data.shape.ndims is not None:
            out.set_shape(warp.shape[:-1].concatenate(data.shape[3:]))
        return out
