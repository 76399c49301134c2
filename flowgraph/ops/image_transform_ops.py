"""Projective image transforms: the ``ImageProjectiveTransformV2`` and ``V3`` op types
behind `tf.contrib.image.transform`, `rotate` and `translate` (and `tf.raw_ops`).

A transform is 8 floats ``[a0, a1, a2, b0, b1, b2, c0, c1]``; the output pixel
``(x, y)`` reads the input at ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`` with
``k = c0 x + c1 y + 1`` (so the transform maps *output* points to *input* points).
Points outside the input follow ``fill_mode`` (``CONSTANT``: ``fill_value``, V3's extra
input, 0 for V2; ``REFLECT``, ``WRAP``, ``NEAREST``); pixels are read with ``NEAREST``
or ``BILINEAR`` interpolation. ``ImageConnectedComponents`` (TF1 contrib's op) labels the
4-connected regions of equal nonzero pixels of ``[batch, height, width]`` images,
``1, 2, ...`` in the order of each region's first pixel over the whole batch. Kernels:
`flowgraph/backends/cpu/kernels_image_transform.py`.

The gradient with respect to the images is TensorFlow's: the incoming gradient
transformed by the inverse transform (the exact adjoint only where the transform is
a permutation of pixels, e.g. integer translations and quarter turns).

Example
-------
>>> import flowgraph as tf
>>> img = tf.reshape(tf.range(6.0), [1, 2, 3, 1])
>>> out = tf.raw_ops.ImageProjectiveTransformV2(
...     images=img, transforms=[[1.0, 0, 1, 0, 1, 0, 0, 0]], output_shape=[2, 3],
...     interpolation="NEAREST")
>>> tf.Session().run(out)[0, :, :, 0].tolist()
[[1.0, 2.0, 0.0], [4.0, 5.0, 0.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value_as_shape,
    convert_to_tensor,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_join_ops import concat
from flowgraph.ops.array_shape_ops import ones, reshape, shape
from flowgraph.ops.linalg_ops import matrix_inverse
from flowgraph.ops.op_util import make_tensor

__all__ = ["flat_transforms_to_matrices", "matrices_to_flat_transforms"]

IMAGE_DTYPES = (_dtypes.uint8, _dtypes.int32, _dtypes.int64, _dtypes.float16,
                _dtypes.float32, _dtypes.float64)
INTERPOLATIONS = ("NEAREST", "BILINEAR")
FILL_MODES = ("CONSTANT", "REFLECT", "WRAP", "NEAREST")


def _transform_shape(op, images, transforms, output_shape, fill_value=None):
    if images.ndims is not None and images.ndims != 4:
        raise op.shape_error(f"images must be 4-D [batch, height, width, channels], got "
                             f"{images}")
    if transforms.ndims is not None and transforms.ndims != 2:
        raise op.shape_error(f"transforms must be 2-D [num_images or 1, 8], got {transforms}")
    if output_shape.ndims is not None and (output_shape.ndims != 1 or
                                           output_shape[0].value not in (None, 2)):
        raise op.shape_error(f"output_shape must be a 1-D tensor of 2 elements (new_height, "
                             f"new_width), got shape {output_shape}")
    if fill_value is not None and fill_value.ndims not in (None, 0):
        raise op.shape_error(f"fill_value must be a scalar, got shape {fill_value}")
    size = constant_value_as_shape(op.inputs[2])
    hw = [None, None] if size.ndims is None else [d.value for d in size.dims]
    if len(hw) != 2:
        hw = [None, None]
    if images.ndims is None:
        return [TensorShape([None, *hw, None])]
    return [TensorShape([images[0].value, *hw, images[3].value])]


_ATTRS = {"interpolation": "NEAREST", "fill_mode": "CONSTANT"}
register_op("ImageProjectiveTransformV2", attrs=dict(_ATTRS), cost="expensive")(
    _transform_shape)
register_op("ImageProjectiveTransformV3", attrs=dict(_ATTRS), cost="expensive")(
    _transform_shape)


def flat_transforms_to_matrices(transforms, name=None):
    """``[n, 8]`` flat projective transforms (or one ``[8]``) as ``[n, 3, 3]`` matrices
    (the ninth entry 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> m = tf.contrib.image.flat_transforms_to_matrices([1.0, 0, 2, 0, 1, 3, 0, 0])
    >>> tf.Session().run(m)[0].tolist()
    [[1.0, 0.0, 2.0], [0.0, 1.0, 3.0], [0.0, 0.0, 1.0]]
    """
    with name_scope(name, "flat_transforms_to_matrices", [transforms]):
        t = convert_to_tensor(transforms, name="transforms", dtype=_dtypes.float32)
        if t.shape.ndims not in (1, 2):
            raise ValueError(f"transforms should have rank 1 or 2, got shape {t.shape}")
        t = reshape(t, [-1, 8])
        n = shape(t)[0:1]
        return reshape(concat([t, ones(concat([n, [1]], 0), _dtypes.float32)], 1),
                       [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices, name=None):
    """``[n, 3, 3]`` matrices (or one ``[3, 3]``) as ``[n, 8]`` flat projective
    transforms, each divided by its last entry first.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.contrib.image.matrices_to_flat_transforms([[2.0, 0, 4], [0, 2, 6], [0, 0, 2]])
    >>> tf.Session().run(t).tolist()
    [[1.0, 0.0, 2.0, 0.0, 1.0, 3.0, 0.0, 0.0]]
    """
    with name_scope(name, "matrices_to_flat_transforms", [transform_matrices]):
        m = convert_to_tensor(transform_matrices, name="transform_matrices",
                              dtype=_dtypes.float32)
        if m.shape.ndims not in (2, 3):
            raise ValueError(f"matrices should have rank 2 or 3, got shape {m.shape}")
        flat = reshape(m, [-1, 9])
        flat = flat / flat[:, 8:9]
        return flat[:, :8]


def _transform_grad(op, grad):
    images, transforms = op.inputs[0], op.inputs[1]
    if images.dtype.base_dtype not in IMAGE_DTYPES:
        raise TypeError(f"{op.type} gradient: invalid image dtype {images.dtype.name}")
    inverse = matrices_to_flat_transforms(matrix_inverse(flat_transforms_to_matrices(
        transforms)))
    inputs = [grad, inverse, shape(images)[1:3]]
    if op.type == "ImageProjectiveTransformV3":
        inputs.append(convert_to_tensor(0.0, dtype=_dtypes.float32))
    attrs = {"interpolation": op.attrs["interpolation"], "fill_mode": op.attrs["fill_mode"]}
    return [make_tensor(op.type, inputs, attrs)] + [None] * (len(op.inputs) - 1)


register_gradient("ImageProjectiveTransformV2")(_transform_grad)
register_gradient("ImageProjectiveTransformV3")(_transform_grad)


# -- connected components (tf.contrib.image.connected_components) ------------------------
@register_op("ImageConnectedComponents", dtype_fn=lambda op: [_dtypes.int64],
             cost="expensive")
def _connected_components_shape(op, image):
    if image.ndims is not None and image.ndims != 3:
        raise op.shape_error(f"image must be 3-D [batch, height, width], got {image}")
    return [image]


not_differentiable("ImageConnectedComponents")
