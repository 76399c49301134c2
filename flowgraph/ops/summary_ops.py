"""Declarations of the summary ops; `flowgraph.summary` builds them (``tf.summary.scalar``
and friends) and `flowgraph/backends/cpu/kernels_summary.py` computes them.

Every summary op outputs a scalar string, a serialized `Summary` protobuf:

======================  =====================================  ==========================
op type                 inputs                                 attrs
======================  =====================================  ==========================
``ScalarSummary``       tags, values (same shape, checked at run time)
``HistogramSummary``    tag (scalar), values
``ImageSummary``        tag, tensor ``[batch, h, w, 1|3|4]``   max_images, bad_color
``TensorSummaryV2``     tag, tensor, serialized metadata
``TensorSummary``       tensor (TF 1.x; named by the op)       description, labels, ...
``MergeSummary``        N serialized summaries                 N
======================  =====================================  ==========================

None is differentiable.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.op_util import make_tensor
>>> make_tensor("ScalarSummary", [tf.constant("loss"), tf.constant(1.0)]).dtype.name
'string'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype

_string_out = fixed_dtype(_dtypes.string)


# Like TensorFlow, the shapes of tags/values and images are checked when the op runs, so a
# summary of a tensor that is never evaluated does not fail graph construction.
@register_op("ScalarSummary", dtype_fn=_string_out)
def _scalar_summary_shape(op, tags, values):
    return [TensorShape([])]


@register_op("HistogramSummary", dtype_fn=_string_out)
def _histogram_summary_shape(op, tag, values):
    if tag.ndims not in (None, 0):
        raise op.shape_error(f"tag must be a scalar string, got shape {tag}")
    return [TensorShape([])]


@register_op("ImageSummary", attrs={"max_images": 3, "bad_color": None},
             dtype_fn=_string_out)
def _image_summary_shape(op, tag, tensor):
    return [TensorShape([])]


@register_op("TensorSummaryV2", dtype_fn=_string_out)
def _tensor_summary_shape(op, tag, tensor, serialized_summary_metadata):
    return [TensorShape([])]


# TensorFlow 1.x's tensor summary (graphs written before TensorSummaryV2): the value is
# named by the op's name, with no metadata.
@register_op("TensorSummary", attrs={"T": None, "description": "", "labels": [],
                                     "display_name": ""}, dtype_fn=_string_out)
def _tensor_summary_v1_shape(op, tensor):
    return [TensorShape([])]


@register_op("MergeSummary", attrs={"N": 0}, dtype_fn=_string_out)
def _merge_summary_shape(op, *inputs):
    return [TensorShape([])]


not_differentiable("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummaryV2",
                   "TensorSummary", "MergeSummary")
