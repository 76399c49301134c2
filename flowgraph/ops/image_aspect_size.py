"""The target size of ``tf.image.resize_images(..., preserve_aspect_ratio=True)``.

TensorFlow scales both sides by ``min(new_height / height, new_width / width)`` and
rounds (half to even) in float32, building the computation as graph ops so that images
of unknown height or width work too; its shape inference then folds the result when the
image and the requested size are both known. Both halves are reproduced here.
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.ops.array_join_ops import unstack
from flowgraph.ops.array_shape_ops import shape
from flowgraph.ops.math_ops import cast, minimum
from flowgraph.ops.math_ops import round as _round

__all__ = ["aspect_preserving_size"]


def _height_width(images):
    """Height and width of 3-D or 4-D `images`: ints where static, scalar tensors else."""
    static = images.shape.as_list()
    if all(d is not None for d in static):
        return static[-3], static[-2]
    dynamic = unstack(shape(images), len(static))
    dims = [s if s is not None else d for s, d in zip(static, dynamic)]
    return dims[-3], dims[-2]


def _static_size(size, height, width):
    """The folded size as TensorFlow's shape inference finds it, or None."""
    if not isinstance(height, int) or not isinstance(width, int):
        return None
    target = constant_value(size)
    if target is None:
        return None
    f32 = np.float32
    factor = min(f32(target[0]) / f32(height), f32(target[1]) / f32(width))
    return [int(np.round(f32(factor * f32(height)))), int(np.round(f32(factor * f32(width))))]


def aspect_preserving_size(images, size):
    """The int32 ``[height, width]`` tensor `images` resize to so that they fit in `size`
    (a 1-D int32 tensor) keeping their aspect ratio, and its value when it is static.

    Call it inside the resize's name scope: the ops are named as TensorFlow's.

    Example
    -------
    >>> import flowgraph as tf
    >>> new, known = aspect_preserving_size(tf.zeros([7, 10, 3]), tf.constant([5, 5]))
    >>> known
    [4, 5]
    """
    height, width = _height_width(images)
    f32 = _dtypes.float32
    factor = minimum(cast(size[0], f32) / cast(height, f32),
                     cast(size[1], f32) / cast(width, f32))
    new_height = cast(_round(factor * cast(height, f32)), _dtypes.int32)
    new_width = cast(_round(factor * cast(width, f32)), _dtypes.int32)
    new_size = convert_to_tensor([new_height, new_width], _dtypes.int32, name="size")
    return new_size, _static_size(size, height, width)
