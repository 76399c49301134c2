"""`tf.image` ops on boxes: non-max suppression (plain, with scores and soft-NMS, padded,
on an overlap matrix, combined over classes and batches), `crop_and_resize` with its
gradients, `draw_bounding_boxes`, `sample_distorted_bounding_box` and `extract_glimpse`.

Boxes are ``[y1, x1, y2, x2]``, normalized to ``[0, 1]`` except for NMS, where any
consistent units work and either corner may come first. Kernels:
`flowgraph/backends/cpu/kernels_image_boxes.py` (its opening comment describes TF's
suppression loop and sampling grid).

Example
-------
>>> import flowgraph as tf
>>> boxes = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11]]
>>> keep = tf.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], 3, iou_threshold=0.5)
>>> tf.Session().run(keep).tolist()
[0, 2]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_shape_ops import shape
from flowgraph.ops.image_dtypes import REAL_IMAGES, check_input
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = ["combined_non_max_suppression", "crop_and_resize", "draw_bounding_boxes",
           "extract_glimpse", "non_max_suppression", "non_max_suppression_overlaps",
           "non_max_suppression_padded", "non_max_suppression_with_scores",
           "sample_distorted_bounding_box"]

_I32 = _dtypes.int32


# -- registrations -----------------------------------------------------------------------
def _int_value(tensor):
    v = constant_value(tensor)
    return None if v is None else int(v)


def _ranks(op, shapes, ranks):
    """TF's rank checks: input ``k`` must have rank ``ranks[k]`` (None: any)."""
    for k, (s, want) in enumerate(zip(shapes, ranks)):
        if want is not None and s.ndims is not None and s.ndims != want:
            raise op.shape_error(f"Shape must be rank {want} but is rank {s.ndims} for input "
                                 f"{k} ('{op.inputs[k].name}')")


def _same_dim(op, a, b, what):
    """Merge two dimensions as TF's shape functions do: unequal known sizes are an error."""
    if a.value is not None and b.value is not None and a.value != b.value:
        raise op.shape_error(f"Dimensions must be equal, but are {a.value} and {b.value}: "
                             f"{what}")


def _box_coords(op, boxes, axis):
    if boxes.ndims is not None and boxes[axis].value not in (None, 4):
        raise op.shape_error(f"Dimension must be 4 but is {boxes[axis].value}: boxes hold "
                             f"[y1, x1, y2, x2] in their last dimension, got {boxes}")


def _nms_shape(op, boxes, scores, *rest):
    # boxes [num_boxes, 4], scores [num_boxes], the rest scalars (max size, thresholds)
    _ranks(op, [boxes, scores, *rest], [2, 1] + [0] * len(rest))
    _box_coords(op, boxes, 1)
    if boxes.ndims is not None and scores.ndims is not None:
        _same_dim(op, boxes[0], scores[0], "boxes and scores must hold one row per box")
    return [TensorShape([None])]


register_op("NonMaxSuppressionV3", dtype_fn=fixed_dtype(_I32))(_nms_shape)


@register_op("NonMaxSuppressionV4", attrs={"pad_to_max_output_size": False}, num_outputs=2,
             dtype_fn=fixed_dtype(_I32, _I32))
def _nms_v4_shape(op, boxes, scores, *rest):
    _nms_shape(op, boxes, scores, *rest)
    n = _int_value(op.inputs[2]) if op.attrs["pad_to_max_output_size"] else None
    return [TensorShape([n]), TensorShape([])]


@register_op("NonMaxSuppressionV5", attrs={"pad_to_max_output_size": False}, num_outputs=3,
             dtype_fn=lambda op: [_I32, op.inputs[1].dtype.base_dtype, _I32])
def _nms_v5_shape(op, boxes, scores, *rest):
    _nms_shape(op, boxes, scores, *rest)
    n = _int_value(op.inputs[2]) if op.attrs["pad_to_max_output_size"] else None
    return [TensorShape([n]), TensorShape([n]), TensorShape([])]


@register_op("NonMaxSuppressionWithOverlaps", dtype_fn=fixed_dtype(_I32))
def _nms_overlaps_shape(op, overlaps, scores, *rest):
    _ranks(op, [overlaps, scores, *rest], [2, 1] + [0] * len(rest))
    if overlaps.ndims is not None:
        _same_dim(op, overlaps[0], overlaps[1], "overlaps must be a square matrix")
        if scores.ndims is not None:
            _same_dim(op, overlaps[0], scores[0], "overlaps and scores must hold one row per "
                      "box")
    return [TensorShape([None])]


@register_op("CombinedNonMaxSuppression", attrs={"pad_per_class": False, "clip_boxes": True},
             num_outputs=4,
             dtype_fn=fixed_dtype(_dtypes.float32, _dtypes.float32, _dtypes.float32, _I32))
def _combined_nms_shape(op, boxes, scores, per_class, total, *rest):
    # boxes [batch, num_boxes, q, 4], scores [batch, num_boxes, num_classes]
    _ranks(op, [boxes, scores, per_class, total, *rest], [4, 3] + [0] * (2 + len(rest)))
    _box_coords(op, boxes, 3)
    if boxes.ndims is not None and scores.ndims is not None:
        _same_dim(op, boxes[0], scores[0], "boxes and scores must have the same batch size")
        _same_dim(op, boxes[1], scores[1], "boxes and scores must hold the same boxes")
        q, classes = boxes[2].value, scores[2].value
        if q is not None and classes is not None and q not in (1, classes):
            raise op.shape_error(f"third dimension of boxes must be either 1 or equal to the "
                                 f"third dimension of scores, got {q} and {classes}")
    batch = boxes[0].value if boxes.ndims is not None else None
    if batch is None and scores.ndims is not None:
        batch = scores[0].value
    size = _int_value(op.inputs[3])
    if op.attrs["pad_per_class"]:
        pc = _int_value(op.inputs[2])
        classes = scores[2].value if scores.ndims is not None else None
        size = None if None in (size, pc, classes) else min(size, pc * classes)
    return [TensorShape([batch, size, 4]), TensorShape([batch, size]),
            TensorShape([batch, size]), TensorShape([batch])]


@register_op("CropAndResize", attrs={"method": "bilinear", "extrapolation_value": 0.0},
             dtype_fn=fixed_dtype(_dtypes.float32), cost="expensive")
def _crop_and_resize_shape(op, image, boxes, box_ind, crop_size):
    _ranks(op, [image, boxes, box_ind, crop_size], [4, 2, 1, 1])
    _box_coords(op, boxes, 1)
    if crop_size.ndims is not None and crop_size[0].value not in (None, 2):
        raise op.shape_error(f"Dimension must be 2 but is {crop_size[0].value}: crop_size is "
                             f"[crop_height, crop_width]")
    if boxes.ndims is not None and box_ind.ndims is not None:
        _same_dim(op, boxes[0], box_ind[0], "box_ind must hold one batch index per box")
    size = constant_value(op.inputs[3])
    ch, cw = (None, None) if size is None else (int(v) for v in np.reshape(size, -1))
    n = boxes[0].value if boxes.ndims is not None else None
    depth = image[3].value if image.ndims is not None else None
    return [TensorShape([n, ch, cw, depth])]


@register_op("CropAndResizeGradImage", attrs={"T": _dtypes.float32, "method": "bilinear"},
             dtype_fn=attr_dtype("T"), cost="expensive")
def _crop_grad_image_shape(op, grads, boxes, box_ind, image_size):
    from flowgraph.framework.constant_op import constant_value_as_shape

    return [constant_value_as_shape(op.inputs[3]).with_rank(4)]


@register_op("CropAndResizeGradBoxes", attrs={"method": "bilinear"},
             dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype], cost="expensive")
def _crop_grad_boxes_shape(op, grads, image, boxes, box_ind):
    return [boxes]


@register_gradient("CropAndResize")
def _crop_and_resize_grad(op, grad):
    image, boxes, box_ind, _ = op.inputs
    g_image = None
    if image.dtype.base_dtype in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        g_image = make_tensor("CropAndResizeGradImage", [grad, boxes, box_ind, shape(image)],
                              {"T": image.dtype.base_dtype, "method": op.attrs["method"]})
    g_boxes = make_tensor("CropAndResizeGradBoxes", [grad, image, boxes, box_ind],
                          {"method": op.attrs["method"]})
    return [g_image, g_boxes, None, None]


@register_op("DrawBoundingBoxes")
@register_op("DrawBoundingBoxesV2")
def _draw_boxes_shape(op, images, boxes, colors=None):
    if images.ndims is not None and images.ndims != 4:
        raise op.shape_error(f"images must be 4-D [batch, height, width, depth], got {images}")
    return [images]


@register_op("SampleDistortedBoundingBoxV2", stateful=True, num_outputs=3,
             attrs={"seed": 0, "seed2": 0, "aspect_ratio_range": (0.75, 1.33),
                    "area_range": (0.05, 1.0), "max_attempts": 100,
                    "use_image_if_no_bounding_boxes": False},
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype] * 2 + [_dtypes.float32])
def _sample_box_shape(op, image_size, bounding_boxes, min_object_covered):
    # TF's checks: ranks first (image_size [3], boxes [batch, n, 4], a scalar coverage)
    for s, rank in ((image_size, 1), (bounding_boxes, 3), (min_object_covered, 0)):
        if s is not None and s.ndims is not None and s.ndims != rank:
            raise op.shape_error(f"Shape must be rank {rank} but is rank {s.ndims}")
    for s, axis, want in ((image_size, 0, 3), (bounding_boxes, 2, 4)):
        if s.ndims is not None and s[axis].value not in (None, want):
            raise op.shape_error(f"Dimension must be {want} but is {s[axis].value}")
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


@register_op("ExtractGlimpseV2", stateful=True,
             attrs={"centered": True, "normalized": True, "uniform_noise": True,
                    "noise": "uniform"})
def _glimpse_shape(op, images, size, offsets):
    if images.ndims is not None and images.ndims != 4:
        raise op.shape_error(f"input must be 4-D [batch, height, width, channels], got "
                             f"{images}")
    if offsets.ndims is not None:  # TF: offsets are [batch, 2], one (y, x) per image
        if offsets.ndims != 2 or offsets[1].value not in (None, 2):
            raise op.shape_error(f"offsets must be [batch, 2], got {offsets}")
        batch = None if images.ndims is None else images[0].value
        if None not in (batch, offsets[0].value) and batch != offsets[0].value:
            raise op.shape_error(f"offsets must have one row per image: {batch} images, "
                                 f"{offsets[0].value} offsets")
    value = constant_value(op.inputs[1])
    gh, gw = (None, None) if value is None else (int(v) for v in np.reshape(value, -1))
    # TF merges the batch of the images with the rows of the offsets.
    batch = None if images.ndims is None else images[0].value
    if batch is None and offsets.ndims == 2:
        batch = offsets[0].value
    return [TensorShape([batch, gh, gw, None if images.ndims is None else images[3].value])]


# TensorFlow registers no gradient for NonMaxSuppressionV5, CombinedNonMaxSuppression,
# DrawBoundingBoxesV2, ExtractGlimpseV2 and the CropAndResize gradient ops: their float
# outputs on a differentiated path raise LookupError there, so they are left undeclared.
not_differentiable("NonMaxSuppressionV3", "NonMaxSuppressionV4",
                   "NonMaxSuppressionWithOverlaps", "DrawBoundingBoxes",
                   "SampleDistortedBoundingBoxV2")


# -- wrappers ----------------------------------------------------------------------------
def _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold):
    halves = (_dtypes.float16, _dtypes.float32)
    b = convert_to_tensor(check_input(boxes, "NonMaxSuppressionV3", "boxes", halves),
                          dtype=_dtypes.float32, name="boxes")
    s = convert_to_tensor(check_input(scores, "NonMaxSuppressionV3", "scores", halves),
                          dtype=_dtypes.float32, name="scores")
    n = convert_to_tensor(max_output_size, dtype=_I32, name="max_output_size")
    t = convert_to_tensor(iou_threshold, dtype=_dtypes.float32, name="iou_threshold")
    st = convert_to_tensor(score_threshold, dtype=_dtypes.float32, name="score_threshold")
    return [b, s, n, t, st]


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices of at most `max_output_size` boxes, best score first, dropping each box
    whose IoU with a box already kept exceeds `iou_threshold` (greedy NMS).

    Example
    -------
    >>> import flowgraph as tf
    >>> keep = tf.image.non_max_suppression([[0, 0, 1, 1], [0, 0, 1, 0.9]], [0.6, 0.9], 2)
    >>> tf.Session().run(keep).tolist()
    [1]
    """
    with name_scope(name, "non_max_suppression"):
        return make_tensor("NonMaxSuppressionV3", _nms_inputs(
            boxes, scores, max_output_size, iou_threshold, score_threshold))


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """`non_max_suppression` that also returns the kept boxes' scores; with
    ``soft_nms_sigma > 0`` overlapping boxes are down-weighted by
    ``exp(-iou**2 / (2 * sigma))`` instead of dropped (Soft-NMS).

    Example
    -------
    >>> import flowgraph as tf
    >>> idx, sc = tf.image.non_max_suppression_with_scores(
    ...     [[0, 0, 1, 1], [0, 0, 1, 0.9]], [0.6, 0.9], 2, soft_nms_sigma=0.5)
    >>> tf.Session().run(idx).tolist()
    [1, 0]
    """
    with name_scope(name, "non_max_suppression_with_scores"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
        sigma = convert_to_tensor(soft_nms_sigma, dtype=_dtypes.float32, name="soft_nms_sigma")
        op = make_op("NonMaxSuppressionV5", [*inputs, sigma], {"pad_to_max_output_size": False})
        return op.outputs[0], op.outputs[1]


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False, canonicalized_coordinates=False,
                               tile_size=512):
    """`non_max_suppression` returning ``(selected_indices, num_valid)``; with
    `pad_to_max_output_size` the indices are zero-padded to `max_output_size`.

    Boxes may come in batches, ``[..., num_boxes, 4]`` with scores ``[..., num_boxes]``
    (then `pad_to_max_output_size` must be True): the indices are ``[...,
    max_output_size]`` and `num_valid` has the batch shape, each image suppressed on its
    own. As in TensorFlow the indices are a ``Reshape`` of the padded selection (a slice
    of its first `num_valid` entries without padding); `sorted_input`,
    `canonicalized_coordinates` and `tile_size` only tune TF's tiled algorithm, whose
    selection is the greedy one.

    Example
    -------
    >>> import flowgraph as tf
    >>> idx, n = tf.image.non_max_suppression_padded(
    ...     [[0, 0, 1, 1], [0, 0, 1, 0.9]], [0.6, 0.9], 3, pad_to_max_output_size=True)
    >>> tf.Session().run([idx, n])[0].tolist()
    [1, 0, 0]
    """
    from flowgraph.ops.array_join_ops import concat, stack
    from flowgraph.ops.array_shape_ops import expand_dims, reshape
    from flowgraph.ops.functional_ops import map_fn

    with name_scope(name, "non_max_suppression_padded"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
        b, s, n = inputs[:3]
        rank = b.shape.ndims
        if not pad_to_max_output_size and rank is not None and rank > 2:
            raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) "
                             f"must be True for batched input")

        def one_image(boxes_scores):
            op = make_op("NonMaxSuppressionV4", [*boxes_scores, *inputs[2:]],
                         {"pad_to_max_output_size": True})
            return op.outputs[0], op.outputs[1]

        if rank == 2:
            idx, valid = one_image([b, s])
            if not pad_to_max_output_size:
                return idx[:valid], valid
            return reshape(idx, expand_dims(n, 0)), valid
        batch_dims = shape(b)[:-2]
        count = shape(b)[-2]
        idx, valid = map_fn(one_image, [reshape(b, stack([-1, count, 4])),
                                        reshape(s, stack([-1, count]))],
                            dtype=(_I32, _I32), back_prop=False)
        if not pad_to_max_output_size:
            return idx[0, :valid[0]], reshape(valid, batch_dims)
        return (reshape(idx, concat([batch_dims, expand_dims(n, 0)], 0)),
                reshape(valid, batch_dims))


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Greedy NMS on a precomputed ``[num_boxes, num_boxes]`` overlap matrix.

    Example
    -------
    >>> import flowgraph as tf
    >>> ov = [[1.0, 0.7, 0.2], [0.7, 1.0, 0.1], [0.2, 0.1, 1.0]]
    >>> keep = tf.image.non_max_suppression_overlaps(ov, [0.5, 0.9, 0.3], 3, 0.6)
    >>> tf.Session().run(keep).tolist()
    [1, 2]
    """
    with name_scope(name, "non_max_suppression_overlaps"):
        ov = convert_to_tensor(overlaps, name="overlaps")
        inputs = [ov, convert_to_tensor(scores, name="scores"),
                  convert_to_tensor(max_output_size, dtype=_I32, name="max_output_size"),
                  convert_to_tensor(overlap_threshold, dtype=_dtypes.float32,
                                    name="overlap_threshold"),
                  convert_to_tensor(score_threshold, dtype=_dtypes.float32,
                                    name="score_threshold")]
        return make_tensor("NonMaxSuppressionWithOverlaps", inputs)


def _named_outputs(op):
    """The op's outputs in TF's generated named tuple (``.nmsed_boxes``, ``.begin``), the
    class `tf.raw_ops` returns for the op type too."""
    from flowgraph.ops.raw_ops import _result_type

    return _result_type(op.type)(*op.outputs)


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """NMS per class and image, merged best-first: ``(nmsed_boxes [batch, max_total_size,
    4], nmsed_scores, nmsed_classes (float), valid_detections [batch])``; `boxes` is
    ``[batch, num_boxes, q, 4]`` (``q`` 1 or ``num_classes``), `scores` ``[batch,
    num_boxes, num_classes]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> b, s, c, n = tf.image.combined_non_max_suppression(
    ...     [[[[0, 0, 1, 1]], [[0, 0, 1, 0.9]]]], [[[0.9, 0.2], [0.8, 0.7]]], 2, 3)
    >>> tf.Session().run(n).tolist()
    [2]
    """
    with name_scope(name, "combined_non_max_suppression"):
        inputs = [convert_to_tensor(boxes, dtype=_dtypes.float32, name="boxes"),
                  convert_to_tensor(scores, dtype=_dtypes.float32, name="scores"),
                  convert_to_tensor(max_output_size_per_class, dtype=_I32,
                                    name="max_output_size_per_class"),
                  convert_to_tensor(max_total_size, dtype=_I32, name="max_total_size"),
                  convert_to_tensor(iou_threshold, dtype=_dtypes.float32, name="iou_threshold"),
                  convert_to_tensor(score_threshold, dtype=_dtypes.float32,
                                    name="score_threshold")]
        op = make_op("CombinedNonMaxSuppression", inputs,
                     {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)})
        return _named_outputs(op)


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0.0, name=None, box_indices=None):
    """Crops of `image` ``[batch, h, w, d]`` at the normalized `boxes` ``[n, 4]`` of the
    images `box_ind` ``[n]``, each resampled to `crop_size` ``[crop_h, crop_w]``
    (bilinear or nearest): float32 ``[n, crop_h, crop_w, d]`` (float64 for float64
    images). Differentiable in `image` and `boxes`.

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> crop = tf.image.crop_and_resize(img, [[0.0, 0.0, 1.0, 1.0]], [0], [2, 2])
    >>> tf.Session().run(crop)[0, :, :, 0].tolist()
    [[0.0, 3.0], [12.0, 15.0]]
    """
    if box_ind is None:
        box_ind = box_indices
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"crop_and_resize: method must be 'bilinear' or 'nearest', got "
                         f"{method!r}")
    with name_scope(name, "CropAndResize", [image, boxes, box_ind]) as scope:
        # float64 boxes are kept (flowgraph's float64 crops); TF takes float32 only
        b = convert_to_tensor(check_input(boxes, "CropAndResize", "boxes",
                                          (_dtypes.float32, _dtypes.float64)), name="boxes")
        if b.dtype.base_dtype != _dtypes.float64:
            b = convert_to_tensor(boxes, dtype=_dtypes.float32, name="boxes")
        inputs = [check_input(convert_to_tensor(image, name="image"), "CropAndResize", "image",
                              REAL_IMAGES), b,
                  convert_to_tensor(box_ind, dtype=_I32, name="box_ind"),
                  convert_to_tensor(crop_size, dtype=_I32, name="crop_size")]
        return make_tensor("CropAndResize", inputs,
                           {"method": method, "extrapolation_value": float(extrapolation_value)},
                           name=scope)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """`images` ``[batch, h, w, depth]`` (float) with the outlines of the normalized
    `boxes` ``[batch, num_boxes, 4]`` drawn in `colors` ``[num_colors, 4]`` (RGBA,
    cycled; TF's default palette when None).

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 1]), [[[0.0, 0.0, 0.5, 0.5]]])
    >>> tf.Session().run(out)[0, :, :, 0].tolist()[0]
    [1.0, 1.0, 0.0, 0.0]
    """
    # TF's layout: the V1 op (default palette) without colors, else the V2 op; no scope
    op_type = "DrawBoundingBoxes" if colors is None else "DrawBoundingBoxesV2"
    values = [images, boxes] if colors is None else [images, boxes, colors]
    with op_scope(name, op_type, values) as scope:
        f32 = (_dtypes.float32,)
        inputs = [check_input(convert_to_tensor(images, name="images"), op_type, "images",
                              (_dtypes.float32, _dtypes.float16)),
                  convert_to_tensor(check_input(boxes, op_type, "boxes", f32),
                                    dtype=_dtypes.float32, name="boxes")]
        if colors is not None:
            inputs.append(convert_to_tensor(check_input(colors, op_type, "colors", f32),
                                            dtype=_dtypes.float32, name="colors"))
        return make_tensor(op_type, inputs, name=scope)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """A random crop ``(begin, size, bboxes)`` of an image of `image_size` ``[h, w, c]``
    covering at least `min_object_covered` of one of `bounding_boxes` ``[batch, n, 4]``,
    with aspect ratio and area fraction within their ranges; feed `begin` and `size` to
    `tf.slice`. Falls back to the whole image after `max_attempts`.

    Example
    -------
    >>> import flowgraph as tf
    >>> begin, size, box = tf.image.sample_distorted_bounding_box(
    ...     [40, 50, 3], [[[0.2, 0.2, 0.6, 0.6]]], seed=3, min_object_covered=0.5)
    >>> box.shape.as_list()
    [1, 1, 4]
    """
    # As TF1's: the op takes `seed` and `seed2` as given, whatever the graph seed; both
    # 0 means unseeded
    s1, s2 = seed or 0, seed2 or 0
    with name_scope(name, "sample_distorted_bounding_box"):
        size_t = check_input(convert_to_tensor(image_size, name="image_size"),
                             "SampleDistortedBoundingBoxV2", "image_size",
                             (_dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32,
                              _dtypes.int64))
        inputs = [size_t, convert_to_tensor(bounding_boxes, dtype=_dtypes.float32,
                                            name="bounding_boxes"),
                  convert_to_tensor(min_object_covered, dtype=_dtypes.float32,
                                    name="min_object_covered")]
        attrs = {"seed": int(s1), "seed2": int(s2),
                 "aspect_ratio_range": tuple((0.75, 1.33) if aspect_ratio_range is None
                                             else aspect_ratio_range),
                 "area_range": tuple((0.05, 1.0) if area_range is None else area_range),
                 "max_attempts": 100 if max_attempts is None else int(max_attempts),
                 "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes)}
        return _named_outputs(make_op("SampleDistortedBoundingBoxV2", inputs, attrs))


def extract_glimpse(input, size, offsets, centered=True, normalized=True,
                    uniform_noise=True, name=None, noise="uniform"):
    """Windows of `size` ``[h, w]`` from each image of `input` ``[batch, H, W, c]`` at
    `offsets` ``[batch, 2]`` (``(y, x)`` centers; normalized to ``[-1, 1]`` around the
    image center by default); pixels outside the image are noise (uniform between the
    image's extremes, Gaussian, or zero with ``noise="zero"``).

    Example
    -------
    >>> import flowgraph as tf
    >>> img = tf.reshape(tf.range(42.0), [1, 6, 7, 1])
    >>> g = tf.image.extract_glimpse(img, [3, 3], [[0.0, 0.0]])
    >>> tf.Session().run(g)[0, :, :, 0].tolist()[0]
    [9.0, 10.0, 11.0]
    """
    # TF1's function builds the first version of the op, ``ExtractGlimpse``
    with name_scope(name, "ExtractGlimpse") as scope:
        f32 = (_dtypes.float32,)
        inputs = [convert_to_tensor(check_input(input, "ExtractGlimpse", "input", f32),
                                    dtype=_dtypes.float32, name="input"),
                  convert_to_tensor(size, dtype=_I32, name="size"),
                  convert_to_tensor(check_input(offsets, "ExtractGlimpse", "offsets", f32),
                                    dtype=_dtypes.float32, name="offsets")]
        kind = noise if noise != "uniform" or uniform_noise else "gaussian"
        return make_tensor("ExtractGlimpse", inputs, name=scope, attrs=
                           {"centered": bool(centered), "normalized": bool(normalized),
                            "uniform_noise": bool(uniform_noise), "noise": kind})
