"""TensorFlow's image op types that flowgraph's `tf.image` once built from array ops, and
the TF1 spellings of its box ops: ``RGBToHSV`` / ``HSVToRGB``, ``AdjustHue``,
``AdjustSaturation``, ``AdjustContrastv2`` (and TF1's float-only ``AdjustContrast``
with its clip range), ``ExtractImagePatches`` / ``ExtractVolumePatches``,
``ScaleAndTranslate`` (TF 2's antialiased resize, with ``ScaleAndTranslateGrad``),
``NonMaxSuppression`` (threshold attribute) / ``NonMaxSuppressionV2`` (threshold
input), ``SampleDistortedBoundingBox`` (``min_object_covered`` as an attribute) and its
seeded ``StatelessSampleDistortedBoundingBox``, TF1's ``RandomCrop`` op (TensorFlow's
`tf.random_crop` is a composite today) and ``ExtractGlimpse``, the version
`tf.compat.v1.image.extract_glimpse` builds.

`tf.image.rgb_to_hsv`, `hsv_to_rgb`, `adjust_hue`, `adjust_saturation`,
`adjust_contrast`, `extract_patches` / `tf.extract_image_patches`,
`tf.extract_volume_patches` and `tf.image.extract_glimpse` build these op types, as
TensorFlow's do. Gradients as TensorFlow registers them: ``RGBToHSV`` and the patch ops
have one; ``HSVToRGB`` is not differentiable; the adjustments have none (`tf.gradients`
raises LookupError, as in TensorFlow). Kernels: `flowgraph/backends/cpu/kernels_image_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> hsv = tf.image.rgb_to_hsv([[[1.0, 0.0, 0.0]]])
>>> hsv.op.type, tf.Session().run(hsv)[0, 0].tolist()
('RGBToHSV', [0.0, 1.0, 1.0])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import (
    OpCost,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.image_boxes_ops import _glimpse_shape, _nms_shape, _sample_box_shape

__all__: list[str] = []


# -- color -------------------------------------------------------------------------------
def _rgb_like(op, images, what: str = "images", min_rank: int = 1):
    if images.ndims is not None:
        if images.ndims < min_rank:
            raise op.shape_error(f"{what} must be at least {min_rank}-D, got rank "
                                 f"{images.ndims}")
        if images[-1].value not in (None, 3):
            raise op.shape_error(f"the last dimension of {what} must be 3 (RGB or HSV), got "
                                 f"{images[-1].value}")
    return images


@register_op("RGBToHSV")
def _rgb_to_hsv_shape(op, images):
    return [_rgb_like(op, images)]


@register_op("HSVToRGB")
def _hsv_to_rgb_shape(op, images):
    return [_rgb_like(op, images)]


@register_gradient("RGBToHSV")
def _rgb_to_hsv_grad(op, grad):
    from flowgraph.ops.gradients import gradients
    from flowgraph.ops.image_color_ops import rgb_to_hsv_composite

    # The derivative of the conversion's piecewise formulas (the composite of array ops
    # that computes the same values), along the upstream gradient.
    x = op.inputs[0]
    return gradients([rgb_to_hsv_composite(x)], [x], grad_ys=[grad])


@register_op("AdjustHue")
def _adjust_hue_shape(op, images, delta):
    return [_rgb_like(op, images, min_rank=3)]


@register_op("AdjustSaturation")
def _adjust_saturation_shape(op, images, scale):
    return [_rgb_like(op, images, min_rank=3)]


def _rank3(op, images):
    if images.ndims is not None and images.ndims < 3:
        raise op.shape_error(f"images must be at least 3-D [..., height, width, channels], "
                             f"got rank {images.ndims}")
    return images


@register_op("AdjustContrastv2")
def _adjust_contrast_v2_shape(op, images, factor):
    return [_rank3(op, images)]


@register_op("AdjustContrast", dtype_fn=lambda op: [_dtypes.float32])
def _adjust_contrast_shape(op, images, factor, min_value, max_value):
    return [_rank3(op, images)]


# -- ScaleAndTranslate ---------------------------------------------------------------------
_SCALE_ATTRS = {"kernel_type": "lanczos3", "antialias": True}


def _resized_dtype(op):
    # TF's result is float32; flowgraph keeps float64 images in float64, as its other
    # resizes (ResizeBilinear, CropAndResize) do
    return [_dtypes.float64 if op.inputs[0].dtype.base_dtype == _dtypes.float64
            else _dtypes.float32]


@register_op("ScaleAndTranslate", attrs=dict(_SCALE_ATTRS), cost=OpCost.EXPENSIVE,
             dtype_fn=_resized_dtype)
def _scale_translate_shape(op, images, size, scale, translation):
    if images.ndims is not None and images.ndims != 4:
        raise op.shape_error(f"images must be 4-D [batch, height, width, channels], got rank "
                             f"{images.ndims}")
    for s, what in ((size, "size"), (scale, "scale"), (translation, "translation")):
        if s.ndims is not None and (s.ndims != 1 or s[0].value not in (None, 2)):
            raise op.shape_error(f"{what} must be a 2-vector, got {s}")
    value = constant_value(op.inputs[1])
    h, w = (None, None) if value is None else (int(v) for v in np.reshape(value, -1))
    n, c = (images[0].value, images[3].value) if images.ndims is not None else (None, None)
    return [TensorShape([n, h, w, c])]


@register_op("ScaleAndTranslateGrad", attrs=dict(_SCALE_ATTRS), cost=OpCost.EXPENSIVE)
def _scale_translate_grad_shape(op, grads, original_image, scale, translation):
    for s, what in ((grads, "grads"), (original_image, "original_image")):
        if s.ndims is not None and s.ndims != 4:
            raise op.shape_error(f"{what} must be 4-D, got rank {s.ndims}")
    return [original_image]


@register_gradient("ScaleAndTranslate")
def _scale_translate_grad(op, grad):
    from flowgraph.ops.math_ops import cast
    from flowgraph.ops.op_util import make_tensor

    images, _, scale, translation = op.inputs
    dtype = images.dtype.base_dtype
    if not dtype.is_floating:
        return [None, None, None, None]  # integer images: no gradient
    # TensorFlow's gradient kernel is float32; flowgraph's also takes float16/float64
    attrs = {k: op.attrs[k] for k in _SCALE_ATTRS}
    g = grad if dtype == _dtypes.float32 else cast(grad, dtype)
    return [make_tensor("ScaleAndTranslateGrad", [g, images, scale, translation], attrs),
            None, None, None]


# -- patches -----------------------------------------------------------------------------
def _patch_shape(op, x: TensorShape, rank: int, rates) -> TensorShape:
    if x.ndims is not None and x.ndims != rank:
        raise op.shape_error(f"the input must be {rank}-D, got rank {x.ndims}")
    x = x if x.ndims is not None else TensorShape([None] * rank)
    ksizes, strides = list(op.attrs["ksizes"]), list(op.attrs["strides"])
    for name, v in (("ksizes", ksizes), ("strides", strides), ("rates", rates)):
        if len(v) != rank or v[0] != 1 or v[-1] != 1:
            raise op.shape_error(f"{name} must be [1, {', '.join(['n'] * (rank - 2))}, 1], "
                                 f"got {list(v)}")
    dims = [x[0].value]
    for axis in range(1, rank - 1):
        size, eff = x[axis].value, (ksizes[axis] - 1) * rates[axis] + 1
        if size is None:
            dims.append(None)
        elif op.attrs["padding"] == "SAME":
            dims.append(-(-size // strides[axis]))
        else:  # a window larger than the input gives no patches (not an error)
            dims.append(max((size - eff) // strides[axis] + 1, 0))
    depth = x[rank - 1].value
    k = 1
    for v in ksizes[1:-1]:
        k *= v
    return TensorShape([*dims, None if depth is None else depth * k])


@register_op("ExtractImagePatches", attrs={"ksizes": None, "strides": None, "rates": None,
                                           "padding": None}, cost=OpCost.EXPENSIVE)
def _image_patches_shape(op, images):
    return [_patch_shape(op, images, 4, list(op.attrs["rates"]))]


@register_op("ExtractVolumePatches", attrs={"ksizes": None, "strides": None, "padding": None},
             cost=OpCost.EXPENSIVE)
def _volume_patches_shape(op, x):
    return [_patch_shape(op, x, 5, [1] * 5)]


def _patches_grad(op, grad, rank: int):
    """Every patch entry's gradient added back to the pixel it was read from: the patch
    op run on the pixels' indices (1-based; 0 marks padding) names each entry's pixel."""
    from flowgraph.ops.array_gen_ops import range as range_
    from flowgraph.ops.array_shape_ops import reshape, shape, transpose
    from flowgraph.ops.math_ops import cast
    from flowgraph.ops.math_reduce import reduce_prod
    from flowgraph.ops.op_util import make_tensor
    from flowgraph.ops.segment_ops import unsorted_segment_sum

    x = op.inputs[0]
    dims = shape(x, out_type=_dtypes.int64)
    spatial = dims[1:rank - 1]
    count = reduce_prod(spatial)
    index = reshape(range_(1, count + 1, dtype=_dtypes.int64),
                    _concat([[1], spatial, [1]]))
    attrs = {k: op.attrs[k] for k in op.attrs if k in ("ksizes", "strides", "rates",
                                                       "padding")}
    picked = make_tensor(op.type, [index], attrs)          # [1, *out, k]
    ids = reshape(picked, [-1])                             # out positions x k, row-major
    # grad [n, *out, k * depth] -> [*out, k, n, depth] -> rows per patch entry
    g = reshape(grad, _concat([shape(grad, out_type=_dtypes.int64)[:rank - 1],
                               [-1], dims[rank - 1:]]))
    perm = [*range(1, rank), 0, rank]
    rows = reshape(transpose(g, perm), _concat([[-1], dims[:1], dims[rank - 1:]]))
    summed = unsorted_segment_sum(rows, ids, cast(count + 1, _dtypes.int64))[1:]
    back = reshape(summed, _concat([spatial, dims[:1], dims[rank - 1:]]))
    return [transpose(back, [rank - 2, *range(rank - 2), rank - 1])]


def _concat(parts):
    from flowgraph.framework.constant_op import convert_to_tensor
    from flowgraph.ops.array_join_ops import concat

    return concat([convert_to_tensor(p, dtype=_dtypes.int64) for p in parts], 0)


@register_gradient("ExtractImagePatches")
def _image_patches_grad(op, grad):
    return _patches_grad(op, grad, 4)


@register_gradient("ExtractVolumePatches")
def _volume_patches_grad(op, grad):
    return _patches_grad(op, grad, 5)


# -- TF1 box ops -------------------------------------------------------------------------
register_op("NonMaxSuppression", attrs={"iou_threshold": 0.5},
            dtype_fn=lambda op: [_dtypes.int32])(_nms_shape)
register_op("NonMaxSuppressionV2", dtype_fn=lambda op: [_dtypes.int32])(_nms_shape)


@register_op("SampleDistortedBoundingBox", stateful=True, num_outputs=3,
             attrs={"seed": 0, "seed2": 0, "min_object_covered": 0.1,
                    "aspect_ratio_range": (0.75, 1.33), "area_range": (0.05, 1.0),
                    "max_attempts": 100, "use_image_if_no_bounding_boxes": False},
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype] * 2 + [_dtypes.float32])
def _sample_box_v1_shape(op, image_size, bounding_boxes):
    return _sample_box_shape(op, image_size, bounding_boxes, None)


@register_op("StatelessSampleDistortedBoundingBox", num_outputs=3,
             attrs={"aspect_ratio_range": (0.75, 1.33), "area_range": (0.05, 1.0),
                    "max_attempts": 100, "use_image_if_no_bounding_boxes": False},
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype] * 2 + [_dtypes.float32])
def _stateless_sample_box_shape(op, image_size, bounding_boxes, min_object_covered, seed):
    if seed.ndims is not None and (seed.ndims != 1 or seed[0].value not in (None, 2)):
        raise op.shape_error(f"seed must be a 2-vector, got {seed}")
    return _sample_box_shape(op, image_size, bounding_boxes, min_object_covered)


@register_op("RandomCrop", attrs={"seed": 0, "seed2": 0}, stateful=True)
def _random_crop_shape(op, image, size):
    if image.ndims is not None and image.ndims != 3:
        raise op.shape_error(f"image must be 3-D [height, width, channels], got rank "
                             f"{image.ndims}")
    value = constant_value(op.inputs[1])
    h, w = (None, None) if value is None else (int(v) for v in np.reshape(value, -1)[:2])
    return [TensorShape([h, w, image[2].value if image.ndims is not None else None])]


register_op("ExtractGlimpse", attrs={"centered": True, "normalized": True,
                                     "uniform_noise": True, "noise": "uniform"},
            stateful=True)(_glimpse_shape)

not_differentiable("HSVToRGB", "NonMaxSuppression", "NonMaxSuppressionV2", "RandomCrop",
                   "StatelessSampleDistortedBoundingBox",
                   "SampleDistortedBoundingBox", "ExtractGlimpse")
# TensorFlow registers no gradient for AdjustHue, AdjustSaturation, AdjustContrast and
# AdjustContrastv2: tf.gradients through them raises LookupError, here as there.
