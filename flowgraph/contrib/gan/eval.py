"""`tfgan.eval`'s image helpers: `image_grid` tiles a batch of images into one image,
`image_reshaper` lays a list of images out in rows.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.gan.eval import image_grid
>>> with tf.Graph().as_default():
...     grid = image_grid(tf.zeros([6, 2, 3, 1]), grid_shape=(2, 3), image_shape=(2, 3),
...                       num_channels=1)
...     grid.shape.as_list()
[1, 4, 9, 1]
"""

from __future__ import annotations

import math

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.ops.array_join_ops import concat, unstack
from flowgraph.ops.array_shape_ops import expand_dims, reshape, transpose, zeros_like

__all__ = ["image_grid", "image_reshaper"]


def image_grid(input_tensor, grid_shape, image_shape=(32, 32), num_channels=3):
    """One ``[1, rows * height, cols * width, channels]`` image of the batch
    `input_tensor` (``[N, height * width * channels]`` or ``[N, height, width,
    channels]`` with ``N = rows * cols``), filled row by row."""
    input_tensor = convert_to_tensor(input_tensor)
    rows, cols = grid_shape
    height, width = image_shape
    batch = input_tensor.shape.dims[0].value
    if rows * cols != batch:
        raise ValueError(f"image_grid: Grid shape {grid_shape} incompatible with minibatch "
                         f"size {batch}.")
    dims = input_tensor.shape.as_list()
    if len(dims) == 2:
        if dims[1] != height * width * num_channels:
            raise ValueError("image_grid: Image shape and number of channels incompatible "
                             f"with input tensor: {dims[1]} features vs "
                             f"{(height, width, num_channels)}.")
    elif len(dims) == 4:
        if dims[1:] != [height, width, num_channels]:
            raise ValueError("image_grid: Image shape and number of channels incompatible "
                             f"with input tensor. {input_tensor.shape} vs "
                             f"{(height, width, num_channels)}")
    else:
        raise ValueError(f"image_grid: Unrecognized input tensor format: rank "
                         f"{len(dims)}, expected 2 or 4.")
    x = reshape(input_tensor, (rows, cols, height, width, num_channels))
    x = transpose(x, [0, 1, 3, 2, 4])
    x = reshape(x, [rows, cols * width, height, num_channels])
    x = transpose(x, [0, 2, 1, 3])
    return reshape(x, [1, rows * height, cols * width, num_channels])


def _validate_images(images) -> None:
    for img in images:
        img.shape.assert_has_rank(3)
        img.shape.assert_is_fully_defined()
        if img.shape.dims[-1].value not in (1, 3):
            raise ValueError("image_reshaper: only supports 1 or 3 channel images, got "
                             f"shape {img.shape}.")


def image_reshaper(images, num_cols=None):
    """The images (a list of ``[H, W, C]`` tensors, or a ``[N, H, W, C]`` tensor) in rows
    of `num_cols` (default ``ceil(sqrt(N))``), the last row padded with zero images,
    as one ``[1, rows * H, num_cols * W, C]`` image."""
    if isinstance(images, Tensor):
        images = unstack(images)
    images = [convert_to_tensor(img) for img in images]
    _validate_images(images)
    num_images = len(images)
    num_columns = num_cols if num_cols else math.ceil(math.sqrt(num_images))
    num_rows = math.ceil(float(num_images) / num_columns)
    rows = [images[i:i + num_columns] for i in range(0, num_images, num_columns)]
    short = num_rows * num_columns - num_images
    if short > 0:
        rows[-1].extend([zeros_like(images[-1])] * short)
    img = concat([concat(row, 1) for row in rows], 0)
    return expand_dims(img, 0)
