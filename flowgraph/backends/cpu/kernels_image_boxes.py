"""CPU kernels of the box ops (`flowgraph/ops/image_boxes_ops.py`): non-max suppression,
crop-and-resize and its gradients, box drawing, distorted-box sampling and glimpses.

Non-max suppression is TensorFlow's greedy loop: candidates above the score threshold
leave a priority queue best score first (the lower index first among equal scores); a
candidate is compared with the boxes already selected, newest first, and dropped when
an overlap exceeds the threshold (an overlap equal to it keeps the candidate). Overlaps
are computed per candidate against the selected boxes, so memory stays linear in the
number of boxes. Soft-NMS (``soft_nms_sigma > 0``) instead scales its
score by ``exp(-iou**2 / (2 * sigma))`` per selected box and puts it back in the queue.

Crop-and-resize samples box ``(y1, x1, y2, x2)`` (normalized) at
``y1 * (H - 1) + i * (y2 - y1) * (H - 1) / (crop_h - 1)`` (the box's center row when
``crop_h == 1``), likewise for columns; a sample outside the image takes
``extrapolation_value``.
"""

from __future__ import annotations

import heapq

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


# -- non-max suppression -----------------------------------------------------------------
def iou_function(boxes: np.ndarray):
    """``iou(i, js)``: the IoUs of box `i` with the boxes `js` (either corner first;
    0 for a box without area), computed on demand so that memory stays linear."""
    b = np.asarray(boxes, np.float64)
    y1, y2 = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    x1, x2 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (y2 - y1) * (x2 - x1)

    def iou(i: int, js: np.ndarray) -> np.ndarray:
        ih = np.maximum(np.minimum(y2[i], y2[js]) - np.maximum(y1[i], y1[js]), 0.0)
        iw = np.maximum(np.minimum(x2[i], x2[js]) - np.maximum(x1[i], x1[js]), 0.0)
        inter = ih * iw
        with np.errstate(divide="ignore", invalid="ignore"):
            out = inter / (area[i] + area[js] - inter)
        return np.where((area[i] > 0) & (area[js] > 0), out, 0.0)

    return iou


def greedy_nms(similarity, scores: np.ndarray, max_output: int, threshold: float,
               score_threshold: float, sigma: float = 0.0):
    """Indices and (possibly soft-suppressed) scores of the boxes TF's loop selects;
    ``similarity(i, js)`` gives box `i`'s overlaps with the boxes `js`."""
    scores = np.asarray(scores, np.float64)
    scale = -0.5 / sigma if sigma > 0 else 0.0
    # TF's soft-NMS loop never hard-suppresses (its threshold becomes 1.0)
    threshold = 1.0 if sigma > 0 else threshold
    heap = [(-s, i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected: list[int] = []
    kept: list[float] = []
    while len(selected) < max_output and heap:
        neg, i, begin = heapq.heappop(heap)
        score = original = -neg
        # the selected boxes not yet compared with this candidate, newest first
        sims = similarity(i, np.array(selected[begin:][::-1], np.int64))
        if sigma <= 0:
            if (sims > threshold).any():
                continue
        else:
            hard = False
            for sim in sims:
                score *= np.exp(scale * sim * sim) if sim <= threshold else 0.0
                if sim > threshold:
                    hard = True
                    break
                if score <= score_threshold:
                    break
            if hard:
                continue
        if score == original:
            selected.append(i)
            kept.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, i, len(selected)))
    return np.array(selected, np.int32), np.array(kept)


def _check_boxes(boxes, scores, what):
    if boxes.ndim != 2 or boxes.shape[-1] != 4:
        raise _invalid(f"{what}: boxes must be 2-D [num_boxes, 4], got {list(boxes.shape)}")
    if scores.shape != (boxes.shape[0],):
        raise _invalid(f"{what}: scores has incompatible shape: it must be 1-D [num_boxes] = "
                       f"[{boxes.shape[0]}], got {list(scores.shape)}")


def _max_out(max_output_size, what):
    size = np.asarray(max_output_size)
    if size.ndim != 0:
        raise _invalid(f"{what}: max_output_size must be 0-D, got shape {list(size.shape)}")
    n = int(size)
    if n < 0:
        raise _invalid(f"{what}: output size must be non-negative, got {n}")
    return n


@cpu_kernel("NonMaxSuppressionV3")
def nms_v3(boxes, scores, max_output_size, iou_threshold, score_threshold):
    _check_boxes(boxes, scores, "NonMaxSuppressionV3")
    thr = float(iou_threshold)
    if not 0.0 <= thr <= 1.0:
        raise _invalid(f"NonMaxSuppressionV3: iou_threshold must be in [0, 1], got {thr}")
    n = _max_out(max_output_size, "NonMaxSuppressionV3")
    idx, _ = greedy_nms(iou_function(boxes), scores, n, thr, float(score_threshold))
    return idx


@cpu_kernel("NonMaxSuppressionV4")
def nms_v4(boxes, scores, max_output_size, iou_threshold, score_threshold, *,
           pad_to_max_output_size):
    _check_boxes(boxes, scores, "NonMaxSuppressionV4")
    n = _max_out(max_output_size, "NonMaxSuppressionV4")
    idx, _ = greedy_nms(iou_function(boxes), scores, n, float(iou_threshold),
                        float(score_threshold))
    valid = np.int32(len(idx))
    if pad_to_max_output_size:
        idx = np.concatenate([idx, np.zeros(n - len(idx), np.int32)])
    return idx, np.array(valid)


@cpu_kernel("NonMaxSuppressionV5")
def nms_v5(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma,
           *, pad_to_max_output_size):
    _check_boxes(boxes, scores, "NonMaxSuppressionV5")
    n = _max_out(max_output_size, "NonMaxSuppressionV5")
    idx, kept = greedy_nms(iou_function(boxes), scores, n, float(iou_threshold),
                           float(score_threshold), float(soft_nms_sigma))
    valid = np.int32(len(idx))
    if pad_to_max_output_size:
        pad = n - len(idx)
        idx = np.concatenate([idx, np.zeros(pad, np.int32)])
        kept = np.concatenate([kept, np.zeros(pad)])
    return idx, kept.astype(scores.dtype), np.array(valid)


@cpu_kernel("NonMaxSuppressionWithOverlaps")
def nms_overlaps(overlaps, scores, max_output_size, overlap_threshold, score_threshold):
    if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
        raise _invalid(f"NonMaxSuppressionWithOverlaps: overlaps must be square, got "
                       f"{list(overlaps.shape)}")
    if scores.shape != (overlaps.shape[0],):
        raise _invalid(f"NonMaxSuppressionWithOverlaps: scores has incompatible shape: it "
                       f"must be 1-D [num_boxes] = [{overlaps.shape[0]}], got "
                       f"{list(scores.shape)}")
    matrix = np.asarray(overlaps, np.float64)
    idx, _ = greedy_nms(lambda i, js: matrix[i, js], scores,
                        _max_out(max_output_size, "NonMaxSuppressionWithOverlaps"),
                        float(overlap_threshold),
                        float(score_threshold))
    return idx


@cpu_kernel("CombinedNonMaxSuppression")
def combined_nms(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold,
                 score_threshold, *, pad_per_class, clip_boxes):
    what = "CombinedNonMaxSuppression"
    if boxes.ndim != 4 or boxes.shape[3] != 4:
        raise _invalid(f"{what}: boxes must be 4-D [batch, num_boxes, q, 4], got "
                       f"{list(boxes.shape)}")
    batch, _, q, _ = boxes.shape
    if scores.ndim != 3 or scores.shape[:2] != boxes.shape[:2]:
        raise _invalid(f"{what}: scores has incompatible shape: it must be 3-D [batch, "
                       f"num_boxes, num_classes] with [batch, num_boxes] = "
                       f"{list(boxes.shape[:2])}, got {list(scores.shape)}")
    num_classes = scores.shape[2]
    if q not in (1, num_classes):
        raise _invalid(f"{what}: third dimension of boxes must be either 1 or equal to the "
                       f"third dimension of scores, got {q} and {num_classes}")
    per_class, total = int(max_output_size_per_class), int(max_total_size)
    if per_class <= 0 or total <= 0:
        raise _invalid("CombinedNonMaxSuppression: max_output_size_per_class and "
                       f"max_total_size must be > 0, got {per_class} and {total}")
    size = min(total, per_class * num_classes) if pad_per_class else total
    out_boxes = np.zeros((batch, size, 4), np.float32)
    out_scores = np.zeros((batch, size), np.float32)
    out_classes = np.zeros((batch, size), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []
        for c in range(num_classes):
            cb = boxes[b, :, 0 if q == 1 else c]
            idx, kept = greedy_nms(iou_function(cb), scores[b, :, c], per_class,
                                   float(iou_threshold), float(score_threshold))
            found += [(-s, c, k, i) for k, (i, s) in enumerate(zip(idx, kept))]
        found.sort()
        found = found[:size]
        valid[b] = len(found)
        for k, (neg, c, _, i) in enumerate(found):
            box = boxes[b, i, 0 if q == 1 else c]
            out_boxes[b, k] = np.clip(box, 0.0, 1.0) if clip_boxes else box
            out_scores[b, k], out_classes[b, k] = -neg, c
    return out_boxes, out_scores, out_classes, valid


# -- crop and resize ---------------------------------------------------------------------
def _sample_coords(lo, hi, n_out, n_in):
    """Sample positions along one axis for one box, and their per-unit derivatives
    (d position / d lo, d position / d hi)."""
    if n_out > 1:
        t = np.arange(n_out) / (n_out - 1)
        pos = (lo + t * (hi - lo)) * (n_in - 1)
        return pos, (1 - t) * (n_in - 1), t * (n_in - 1)
    half = np.full(1, 0.5 * (n_in - 1))
    return np.full(1, 0.5 * (lo + hi) * (n_in - 1)), half, half


def _crop_args(image, boxes, box_ind, crop_size, what):
    if image.ndim != 4:
        raise _invalid(f"{what}: image must be 4-D [batch, height, width, depth], got "
                       f"{list(image.shape)}")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"{what}: boxes must be 2-D [num_boxes, 4], got {list(boxes.shape)}")
    if box_ind.shape != (boxes.shape[0],):
        raise _invalid(f"{what}: box_index has incompatible shape: it must be "
                       f"[num_boxes] = [{boxes.shape[0]}], got {list(box_ind.shape)}")
    if min(image.shape[1:3]) <= 0:
        raise _invalid(f"{what}: image dimensions must be positive, got "
                       f"{list(image.shape)}")
    ch, cw = (int(v) for v in np.asarray(crop_size).reshape(-1))
    if ch <= 0 or cw <= 0:
        raise _invalid(f"{what}: crop dimensions must be positive, got [{ch}, {cw}]")
    bad = (box_ind < 0) | (box_ind >= image.shape[0])
    if bad.any():
        raise errors.OutOfRangeError(
            None, None, f"{what}: box_index has values outside [0, batch_size) = "
            f"[0, {image.shape[0]}): {box_ind[bad].tolist()}")
    return ch, cw


def _round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _grid(box, ch, cw, h, w):
    """Sample positions, their bilinear corners and weights, the in-image mask and the
    positions' derivatives with respect to the box corners."""
    ys, dy1, dy2 = _sample_coords(float(box[0]), float(box[2]), ch, h)
    xs, dx1, dx2 = _sample_coords(float(box[1]), float(box[3]), cw, w)
    mask = ((ys >= 0) & (ys <= h - 1))[:, None] & ((xs >= 0) & (xs <= w - 1))[None, :]
    y0 = np.floor(ys).astype(np.int64).clip(0, h - 1)
    y1 = np.ceil(ys).astype(np.int64).clip(0, h - 1)
    x0 = np.floor(xs).astype(np.int64).clip(0, w - 1)
    x1 = np.ceil(xs).astype(np.int64).clip(0, w - 1)
    ly, lx = ys - np.floor(ys), xs - np.floor(xs)
    return ys, xs, mask, (y0, y1, x0, x1), (ly, lx), (dy1, dy2, dx1, dx2)


@cpu_kernel("CropAndResize")
def crop_and_resize(image, boxes, box_ind, crop_size, *, method, extrapolation_value):
    ch, cw = _crop_args(image, boxes, box_ind, crop_size, "CropAndResize")
    img64 = image.astype(np.float64)
    h, w = image.shape[1:3]
    out = np.full((boxes.shape[0], ch, cw, image.shape[3]), float(extrapolation_value))
    for k, box in enumerate(boxes):
        img = img64[box_ind[k]]
        ys, xs, mask, (y0, y1, x0, x1), (ly, lx), _ = _grid(box, ch, cw, h, w)
        if method == "nearest":
            yi = _round_half_away(ys).astype(np.int64).clip(0, h - 1)
            xi = _round_half_away(xs).astype(np.int64).clip(0, w - 1)
            vals = img[yi][:, xi]
        else:
            wy, wx = ly[:, None, None], lx[None, :, None]
            top = img[y0][:, x0] + (img[y0][:, x1] - img[y0][:, x0]) * wx
            bottom = img[y1][:, x0] + (img[y1][:, x1] - img[y1][:, x0]) * wx
            vals = top + (bottom - top) * wy
        out[k][mask] = vals[mask]
    return out.astype(np.float32)


@cpu_kernel("CropAndResizeGradImage")
def crop_and_resize_grad_image(grads, boxes, box_ind, image_size, *, T, method):
    from flowgraph.framework import dtypes as _dtypes

    b, h, w, d = (int(v) for v in np.asarray(image_size).reshape(-1))
    ch, cw = grads.shape[1:3]
    out = np.zeros((b, h, w, d))
    for k, box in enumerate(boxes):
        n = int(box_ind[k])
        if not 0 <= n < b:
            raise errors.OutOfRangeError(
                None, None, f"CropAndResizeGradImage: box_index has values outside "
                f"[0, batch_size) = [0, {b}): {n}")
        ys, xs, mask, (y0, y1, x0, x1), (ly, lx), _ = _grid(box, ch, cw, h, w)
        g = grads[k].astype(np.float64) * mask[..., None]
        if method == "nearest":
            yi = _round_half_away(ys).astype(np.int64).clip(0, h - 1)
            xi = _round_half_away(xs).astype(np.int64).clip(0, w - 1)
            np.add.at(out[n], (yi[:, None], xi[None, :]), g)
            continue
        wy, wx = ly[:, None, None], lx[None, :, None]
        np.add.at(out[n], (y0[:, None], x0[None, :]), (1 - wy) * (1 - wx) * g)
        np.add.at(out[n], (y0[:, None], x1[None, :]), (1 - wy) * wx * g)
        np.add.at(out[n], (y1[:, None], x0[None, :]), wy * (1 - wx) * g)
        np.add.at(out[n], (y1[:, None], x1[None, :]), wy * wx * g)
    return out.astype(_dtypes.as_dtype(T).as_numpy_dtype)


@cpu_kernel("CropAndResizeGradBoxes")
def crop_and_resize_grad_boxes(grads, image, boxes, box_ind, *, method):
    ch, cw = grads.shape[1:3]
    h, w = image.shape[1:3]
    out = np.zeros((boxes.shape[0], 4))
    img64 = image.astype(np.float64)
    for k, box in enumerate(boxes):
        img = img64[int(box_ind[k])]
        _, _, mask, (y0, y1, x0, x1), (ly, lx), (dy1, dy2, dx1, dx2) = _grid(box, ch, cw, h, w)
        tl, tr = img[y0][:, x0], img[y0][:, x1]
        bl, br = img[y1][:, x0], img[y1][:, x1]
        wy, wx = ly[:, None, None], lx[None, :, None]
        top = tl + (tr - tl) * wx
        bottom = bl + (br - bl) * wx
        g = grads[k].astype(np.float64)
        gy = np.sum((bottom - top) * g, axis=-1) * mask
        gx = np.sum(((1 - wy) * (tr - tl) + wy * (br - bl)) * g, axis=-1) * mask
        out[k] = [np.sum(gy * dy1[:, None]), np.sum(gx * dx1[None, :]),
                  np.sum(gy * dy2[:, None]), np.sum(gx * dx2[None, :])]
    return out.astype(boxes.dtype)


# -- drawing, sampling, glimpses ---------------------------------------------------------
_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                            [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1],
                            [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]])


@cpu_kernel("DrawBoundingBoxes")
def draw_bounding_boxes_v1(images, boxes):
    return draw_bounding_boxes(images, boxes, np.zeros((0, 4), np.float32))


@cpu_kernel("DrawBoundingBoxesV2")
def draw_bounding_boxes(images, boxes, colors):
    if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
        raise _invalid(f"DrawBoundingBoxesV2: images must be 4-D [batch, height, width, "
                       f"depth] with depth 1, 3 or 4, got {list(images.shape)}")
    table = np.asarray(colors, np.float64).reshape(-1, 4) if np.size(colors) else _DEFAULT_COLORS
    out = images.copy()
    _, h, w, depth = images.shape
    for b in range(images.shape[0]):
        for k, box in enumerate(boxes[b]):
            color = table[k % len(table)][:depth]
            r0, r1 = int(np.float32(box[0]) * (h - 1)), int(np.float32(box[2]) * (h - 1))
            c0, c1 = int(np.float32(box[1]) * (w - 1)), int(np.float32(box[3]) * (w - 1))
            if r0 > r1 or c0 > c1 or r0 >= h or r1 < 0 or c0 >= w or c1 < 0:
                continue
            rc0, rc1, cc0, cc1 = max(r0, 0), min(r1, h - 1), max(c0, 0), min(c1, w - 1)
            if r0 >= 0:
                out[b, r0, cc0:cc1 + 1] = color
            if r1 < h:
                out[b, r1, cc0:cc1 + 1] = color
            if c0 >= 0:
                out[b, rc0:rc1 + 1, c0] = color
            if c1 < w:
                out[b, rc0:rc1 + 1, c1] = color
    return out


_F = np.float32


def _rect_area(r) -> np.float32:
    return _F((r[2] - r[0]) * (r[3] - r[1]))


def _intersect(a, b):
    lo_x, lo_y = max(a[0], b[0]), max(a[1], b[1])
    hi_x, hi_y = min(a[2], b[2]), min(a[3], b[3])
    return (0, 0, 0, 0) if lo_x > hi_x or lo_y > hi_y else (lo_x, lo_y, hi_x, hi_y)


def _covers(crop, covered, rects) -> bool:
    """Whether `crop` (x0, y0, x1, y1) holds at least `covered` of some box of area >= 1."""
    if _rect_area(crop) < 1:
        return False
    for r in rects:
        area = _rect_area(r)
        if area >= 1 and _rect_area(_intersect(crop, r)) / area >= covered:
            return True
    return False


def _random_crop(width, height, min_rel, max_rel, aspect, uniform):
    """TensorFlow's crop of a random height (then width = height * aspect) with an area
    in [min_rel, max_rel] of the image, at a random place; None if none fits. float32
    math, C's round-half-even ``lrintf``."""
    if max_rel <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_rel > max_rel:
        return None
    min_area = _F(min_rel * _F(width)) * _F(height)
    max_area = _F(max_rel * _F(width)) * _F(height)
    h = int(np.rint(np.sqrt(_F(min_area / aspect))))
    max_h = int(np.rint(np.sqrt(_F(max_area / aspect))))
    if int(np.rint(_F(_F(max_h) * aspect))) > width:
        max_h = int((width + 0.5 - float(_F(1e-7))) / float(aspect))
        if int(np.rint(_F(_F(max_h) * aspect))) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += uniform(max_h - h + 1)
    w = int(np.rint(_F(_F(h) * aspect)))
    area = _F(w * h)
    if area < min_area:
        h += 1
        w = int(np.rint(_F(_F(h) * aspect)))
        area = _F(w * h)
    if area > max_area:
        h -= 1
        w = int(np.rint(_F(_F(h) * aspect)))
        area = _F(w * h)
    if (area < min_area or area > max_area or w > width or h > height or w <= 0
            or h <= 0):
        return None
    y = uniform(height - h) if h < height else 0
    x = uniform(width - w) if w < width else 0
    return (x, y, x + w, y + h)


def _floats(values) -> str:
    return "[" + ", ".join(f"{float(v):g}" for v in values) + "]"


def _dims(array) -> str:
    return "[" + ",".join(str(d) for d in np.shape(array)) + "]"  # TF's shape strings


def _sampling_range(what, label, values):
    """An (aspect ratio or area) attribute range: two positive floats, as TF checks."""
    values = tuple(_F(v) for v in values)
    if len(values) != 2:
        raise _invalid(f"{what}: {label} field must specify 2 dimensions")
    if values[0] <= 0 or values[1] <= 0:
        raise _invalid(f"{what}: {label} must be non-negative: {_floats(values)}")
    return values


def _check_sample_inputs(what, image_size, bounding_boxes, min_object_covered) -> None:
    """TF's run-time checks of a crop sampler's inputs (their shapes may be dynamic)."""
    image_size, boxes = np.asarray(image_size), np.asarray(bounding_boxes)
    if image_size.ndim != 1:
        raise _invalid(f"{what}: image_size must be 1-dimensional: "
                       f"{_dims(image_size)}")
    if image_size.shape[0] != 3:
        raise _invalid(f"{what}: image_size must contain 3 elements{_dims(image_size)}")
    if boxes.ndim != 3:
        raise _invalid(f"{what}: input boxes must be 3-dimensional [batch, num_boxes, "
                       f"coords]: {_dims(boxes)}")
    if boxes.shape[-1] != 4:
        raise _invalid(f"{what}: bounding boxes must have shape [4] or [*, 4], got "
                       f"{_dims(boxes)}")
    if min_object_covered is not None:
        covered = np.asarray(min_object_covered)
        if covered.ndim != 0:
            raise _invalid(f"{what}: min_object_covered must be 0-D, got shape "
                           f"{_dims(covered)}")
        if covered < 0:
            raise _invalid(f"{what}: Min object covered must be non-negative: "
                           f"{float(covered):g}")
    for value, side in zip(image_size[:2], ("height", "width")):
        if not 0 <= int(value) < 2**31 - 1:  # TF reads the sizes unsigned
            raise _invalid(f"{what}: image {side} cannot be >= int32 max")


@cpu_kernel("SampleDistortedBoundingBoxV2")
class SampleDistortedBoundingBox:
    """TensorFlow's crop sampler and stream: a run reserves `max_attempts` Philox blocks
    of the op's stream and reads them word by word; each attempt draws an aspect ratio,
    a height and a place (`_random_crop`) and keeps the first crop that covers enough of
    a box; after `max_attempts` failures, the whole image."""

    def __init__(self, ctx, *, seed, seed2, aspect_ratio_range, area_range, max_attempts,
                 use_image_if_no_bounding_boxes):
        from flowgraph.backends.cpu.kernels_random import _TFStream

        self.stream = _TFStream(seed, seed2)
        self.aspect = _sampling_range(self.what, "Aspect ratio range", aspect_ratio_range)
        self.area = _sampling_range(self.what, "Area range", area_range)
        if self.area[1] > 1:
            raise _invalid(f"{self.what}: Area range must be less then or equal to 1.0: "
                           f"{_floats(self.area)}")
        self.attempts = int(max_attempts)
        if self.attempts <= 0:
            raise _invalid(f"{self.what}: Max attempts must be non-negative: "
                           f"{self.attempts}")
        self.whole_image = bool(use_image_if_no_bounding_boxes)

    what = "SampleDistortedBoundingBoxV2"

    def __call__(self, image_size, bounding_boxes, min_object_covered):
        from flowgraph.backends.cpu import random_tf_streams as rts

        blocks = self.stream.reserve_blocks(self.attempts)
        return self.sample(rts.WordCursor(blocks), image_size, bounding_boxes,
                           min_object_covered)

    def sample(self, cursor, image_size, bounding_boxes, min_object_covered):
        """The crop, drawing from `cursor` (a `random_tf_streams.WordCursor`)."""
        from flowgraph.backends.cpu import random_tf_streams as rts

        _check_sample_inputs(self.what, image_size, bounding_boxes, min_object_covered)
        h, w = (int(v) for v in np.asarray(image_size).reshape(-1)[:2])
        boxes = np.asarray(bounding_boxes, np.float32).reshape(-1, 4)
        if ((boxes < 0) | (boxes > 1)).any():
            raise _invalid(f"{self.what}: All bounding box coordinates "
                           f"must be in [0.0, 1.0]: {float(boxes[(boxes < 0) | (boxes > 1)][0])}")
        rects = [(int(b[1] * _F(w)), int(b[0] * _F(h)), int(b[3] * _F(w)), int(b[2] * _F(h)))
                 for b in boxes]
        if not rects:
            if not self.whole_image:
                raise _invalid(f"{self.what}: No bounding boxes provided as "
                               "input. One must enable use_image_if_no_bounding_boxes if you "
                               "wish to not provide any bounding boxes.")
            rects = [(0, 0, w, h)]

        def uniform(n):
            accept, value = rts.exact_uniform(n, 32)
            return int(cursor.draws(1, 0, 1, lambda a: accept(a[:, 0].astype(np.uint64)),
                                    lambda _, a: value(a[:, 0].astype(np.uint64)))[0])

        covered, crop = _F(min_object_covered), None
        lo, hi = self.aspect
        for _ in range(self.attempts):
            aspect = _F(rts.floats(cursor.take(1))[0] * _F(hi - lo)) + lo
            found = _random_crop(w, h, self.area[0], self.area[1], aspect, uniform)
            if found is not None and _covers(found, covered, rects):
                crop = found
                break
        x0, y0, x1, y1 = crop if crop is not None else (0, 0, w, h)
        dtype = image_size.dtype
        box = np.array([_F(y0) / _F(h), _F(x0) / _F(w), _F(y1) / _F(h), _F(x1) / _F(w)],
                       np.float32)
        return (np.array([y0, x0, 0], np.int64).astype(dtype),
                np.array([y1 - y0, x1 - x0, -1], np.int64).astype(dtype),  # -1 wraps
                box.reshape(1, 1, 4))


@cpu_kernel("ExtractGlimpseV2")
def extract_glimpse(images, size, offsets, *, centered, normalized, uniform_noise, noise):
    b, h, w, d = images.shape
    gh, gw = (int(v) for v in np.asarray(size).reshape(-1))
    kind = noise or ("uniform" if uniform_noise else "gaussian")
    rng = np.random.default_rng()
    out = np.empty((b, gh, gw, d), images.dtype)
    for n in range(b):
        y, x = float(offsets[n, 0]), float(offsets[n, 1])
        if normalized:
            y, x = y * h, x * w
            if centered:
                y, x = y / 2.0 + h / 2.0, x / 2.0 + w / 2.0
        elif centered:
            y, x = y + h / 2.0, x + w / 2.0
        top, left = int(y - gh / 2.0), int(x - gw / 2.0)
        img = images[n].astype(np.float64)
        if kind == "zero":
            fill = np.zeros((gh, gw, d))
        elif kind == "uniform":
            lo, hi = img.min(axis=(0, 1)), img.max(axis=(0, 1))
            fill = rng.uniform(lo, hi, size=(gh, gw, d))
        else:
            fill = rng.normal(img.mean(axis=(0, 1)), img.std(axis=(0, 1)), size=(gh, gw, d))
        rows = np.arange(top, top + gh)
        cols = np.arange(left, left + gw)
        rin = (rows >= 0) & (rows < h)
        cin = (cols >= 0) & (cols < w)
        mask = rin[:, None] & cin[None, :]
        vals = img[rows.clip(0, h - 1)][:, cols.clip(0, w - 1)]
        out[n] = np.where(mask[..., None], vals, fill)
    return out
