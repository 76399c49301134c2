"""The core of ``tf.image.resize_image_with_pad``: fit an image inside a target box
keeping its aspect ratio, then zero-pad it to the box, centered.

As TensorFlow, the sizes are computed by graph ops in float32 (so images of unknown
height or width work): the scale is ``max(width / target_width, height /
target_height)``, the new sizes are floored, and the top/left padding is
``floor((target - new_size_float) / 2)``.
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_shape_ops import expand_dims, squeeze
from flowgraph.ops.image_adjust_ops import (
    _check,
    _check_3d,
    _dims,
    _max,
    _with_checks,
    pad_to_bounding_box,
)
from flowgraph.ops.math_ops import cast, floor

__all__ = ["resize_and_pad"]


def resize_and_pad(image, target_height, target_width, resize_fn):
    """`image` (3-D or 4-D) resized by ``resize_fn(images, [new_height, new_width])`` to
    fit ``target_height x target_width`` with its aspect ratio, then centered and
    zero-padded to exactly that size (ints or scalar tensors).

    Example
    -------
    >>> import flowgraph as tf
    >>> out = resize_and_pad(tf.ones([3, 4, 1]), 4, 6, tf.image.resize_images)
    >>> out.shape.as_list()
    [4, 6, 1]
    """
    with name_scope(None, "resize_image_with_pad", [image]):
        x = convert_to_tensor(image, name="image")
        ndims = x.shape.ndims
        if ndims not in (None, 3, 4):
            raise ValueError(f"'image' (shape {x.shape}) must have either 3 or 4 dimensions.")
        batched = ndims == 4
        if not batched:
            x = expand_dims(x, 0)
            if ndims is None:
                x.set_shape([None] * 4)
        checks = (_check_3d(x) + _check(target_width > 0, "target_width must be > 0.")
                  + _check(target_height > 0, "target_height must be > 0."))
        x = _with_checks(checks, x)
        _, height, width, _ = _dims(x)
        f32 = _dtypes.float32
        f_height, f_width = cast(height, f32), cast(width, f32)
        f_target_height, f_target_width = cast(target_height, f32), cast(target_width, f32)
        ratio = _max(f_width / f_target_width, f_height / f_target_height)
        new_height_f, new_width_f = f_height / ratio, f_width / ratio
        new_height = cast(floor(new_height_f), _dtypes.int32)
        new_width = cast(floor(new_width_f), _dtypes.int32)
        pad_top = floor((f_target_height - new_height_f) / 2)
        pad_left = floor((f_target_width - new_width_f) / 2)
        pad_top = _max(0, cast(pad_top, _dtypes.int32))
        pad_left = _max(0, cast(pad_left, _dtypes.int32))
        resized = resize_fn(x, [new_height, new_width])
        padded = pad_to_bounding_box(resized, pad_top, pad_left, target_height, target_width)
        if padded.shape.ndims is None:
            raise ValueError("padded contains no shape.")
        _dims(padded)  # TF reads the sizes once more (a Shape/unstack when dynamic)
        return padded if batched else squeeze(padded, [0])

