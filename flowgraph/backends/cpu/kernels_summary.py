"""CPU kernels for the summary ops of `flowgraph/ops/summary_ops.py`: each returns a
scalar string, a serialized `Summary` (encoded by `flowgraph.framework.event_format`).
"""

from __future__ import annotations

import sys

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework import event_format as ef


def _text(x) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _serialized(summary: ef.Summary) -> np.ndarray:
    return np.asarray(summary.SerializeToString(), dtype=object)


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _dims(shape) -> str:
    """A shape as TensorFlow's messages print it: ``[2,3]``."""
    return "[" + ",".join(str(d) for d in shape) + "]"


# -- scalar --------------------------------------------------------------------------------
@cpu_kernel("ScalarSummary")
def scalar_summary(tags, values):
    tags, values = np.asarray(tags), np.asarray(values)
    if tags.shape != values.shape:
        first = _text(tags.reshape(-1)[0]) if tags.size else ""
        raise _invalid(
            f"tags and values are not the same shape: {_dims(tags.shape)} != "
            f"{_dims(values.shape)} (tag '{first}')")
    summary = ef.Summary()
    for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
        summary.value.add(tag=_text(tag), simple_value=float(value))
    return _serialized(summary)


# -- histogram -------------------------------------------------------------------------------
def _default_bucket_limits() -> np.ndarray:
    """TensorBoard's default bucket limits: ±1e-12 growing by 10% up to 1e20, and 0."""
    pos = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos)


_BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values: np.ndarray) -> ef.HistogramProto:
    """A HistogramProto of `values` with the default buckets; runs of empty buckets are
    collapsed into their last limit, as TensorFlow does."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    counts = np.bincount(np.searchsorted(_BUCKET_LIMITS, x, side="right"),
                         minlength=len(_BUCKET_LIMITS))[:len(_BUCKET_LIMITS)]
    limits, buckets = [], []
    i, n = 0, len(counts)
    while i < n:
        end, count = _BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = _BUCKET_LIMITS[i], counts[i]
                i += 1
        limits.append(float(end))
        buckets.append(float(count))
    if x.size:
        lo, hi = float(x.min()), float(x.max())
    else:
        lo, hi = sys.float_info.max, -sys.float_info.max
    return ef.HistogramProto(min=lo, max=hi, num=float(x.size), sum=float(x.sum()),
                             sum_squares=float(np.dot(x, x)), bucket_limit=limits,
                             bucket=buckets)


@cpu_kernel("HistogramSummary")
def histogram_summary(tag, values):
    x = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        # TensorFlow reports the first non-finite value it meets.
        bad = x.reshape(-1)[np.argmin(np.isfinite(x.reshape(-1)))]
        what = "Nan in summary histogram" if np.isnan(bad) else "Infinity in Histogram"
        raise _invalid(f"{what} for: {_text(np.asarray(tag).item())}")
    summary = ef.Summary()
    summary.value.add(tag=_text(np.asarray(tag).item()), histo=histogram_proto(x))
    return _serialized(summary)


# -- image -----------------------------------------------------------------------------------
def _to_uint8(img: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """One float image (h, w, c) scaled into uint8 as TensorFlow's ImageSummary does: the
    bounds of its finite pixels in float32, then ``x * scale + offset`` in the image's own
    dtype (a float16 image rounds in float16), truncated to uint8."""
    kind = img.dtype.type
    x32 = img.astype(np.float32)
    finite = np.all(np.isfinite(x32), axis=-1)
    good = x32[finite]
    lo = np.float32(good.min()) if good.size else np.float32(np.inf)
    hi = np.float32(good.max()) if good.size else np.float32(-np.inf)
    if lo < 0:
        m = max(abs(lo), abs(hi))
        scale, offset = (np.float32(0) if m < 1e-6 else np.float32(127) / m), 128.0
    else:
        scale, offset = (np.float32(0) if hi < 1e-6 else np.float32(255) / hi), 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = img * kind(scale) + kind(offset)
        out = np.where(finite[..., None], scaled, 0).astype(np.uint8)
    out[~finite] = bad_color
    return out


@cpu_kernel("ImageSummary")
def image_summary(tag, tensor, *, max_images, bad_color):
    tensor = np.asarray(tensor)
    tag_s = _text(np.asarray(tag).item())
    if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
        raise _invalid(
            f"Tensor must be 4-D with last dim 1, 3, or 4, not {_dims(tensor.shape)} "
            f"(ImageSummary '{tag_s}': [batch_size, height, width, channels])")
    channels = tensor.shape[3]
    if bad_color is None:
        bad = np.array([255, 0, 0, 255], dtype=np.uint8)[:channels]
    else:
        bad = np.asarray(bad_color, dtype=np.uint8).reshape(-1)[:channels]
    summary = ef.Summary()
    n = min(tensor.shape[0], int(max_images))
    for i in range(n):
        img = tensor[i]
        pixels = img if tensor.dtype == np.uint8 else _to_uint8(img, bad)
        name = f"{tag_s}/image" if max_images == 1 else f"{tag_s}/image/{i}"
        summary.value.add(tag=name, image=ef.Summary.Image(
            height=img.shape[0], width=img.shape[1], colorspace=channels,
            encoded_image_string=ef.encode_png(np.ascontiguousarray(pixels))))
    return _serialized(summary)


# -- tensor ----------------------------------------------------------------------------------
@cpu_kernel("TensorSummaryV2")
def tensor_summary(tag, tensor, serialized_summary_metadata):
    meta_bytes = np.asarray(serialized_summary_metadata).item()
    summary = ef.Summary()
    value = summary.value.add(tag=_text(np.asarray(tag).item()),
                              tensor=ef.make_tensor_proto(tensor))
    # Always set, even when empty: TensorFlow's values carry an (empty) metadata field.
    value.metadata = ef.SummaryMetadata.FromString(meta_bytes or b"")
    return _serialized(summary)


@cpu_kernel("TensorSummary")
def tensor_summary_v1(tensor, *, op, T=None, description="", labels=(), display_name=""):
    summary = ef.Summary()
    summary.value.add(node_name=op.name, tensor=ef.make_tensor_proto(tensor))
    return _serialized(summary)


# -- merge -----------------------------------------------------------------------------------
@cpu_kernel("MergeSummary")
def merge_summary(*inputs):
    parts, seen = [], set()
    for inp in inputs:
        for item in np.asarray(inp, dtype=object).reshape(-1):
            data = item if isinstance(item, bytes) else str(item).encode("utf-8")
            try:
                parsed = ef.Summary.FromString(data)
            except (ValueError, TypeError, IndexError) as e:
                raise _invalid(f"MergeSummary: could not parse one of the summary inputs "
                               f"({e})") from None
            for v in parsed.value:
                if v.tag and v.tag in seen:
                    raise _invalid(f"Duplicate tag {v.tag} found in summary inputs")
                seen.add(v.tag)
            parts.append(data)
    # Serialized Summaries concatenate: `value` is their only (repeated) field.
    return np.asarray(b"".join(parts), dtype=object)
