"""`tf.image.generate_bounding_box_proposals`: Faster R-CNN's region proposals.

TensorFlow 2.15 registers the op with a GPU kernel only; on a CPU its run fails with
InvalidArgumentError ("No OpKernel was registered..."). flowgraph builds the op with
TensorFlow's static shapes and checks (``rois`` ``[batch, post_nms_topn, 4]``,
``roi_probabilities`` ``[batch, post_nms_topn]``) and, like TensorFlow on a CPU, has no
kernel for it: running it fails with InvalidArgumentError naming the op.

Example
-------
>>> import flowgraph as tf
>>> rois, probs = tf.image.generate_bounding_box_proposals(
...     tf.zeros([1, 4, 4, 2]), tf.zeros([1, 4, 4, 8]), tf.ones([1, 5]),
...     tf.zeros([1, 32, 4]), post_nms_topn=5)
>>> rois.shape.as_list(), probs.shape.as_list()
([1, 5, 4], [1, 5])
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op

__all__ = ["generate_bounding_box_proposals"]

GenerateBoundingBoxProposals = collections.namedtuple(
    "GenerateBoundingBoxProposals", ["rois", "roi_probabilities"])


@register_op("GenerateBoundingBoxProposals", attrs={"post_nms_topn": 300}, num_outputs=2,
             dtype_fn=fixed_dtype(_dtypes.float32, _dtypes.float32))
def _proposals_shape(op, scores, bbox_deltas, image_info, anchors, nms_threshold,
                     pre_nms_topn, min_size):
    for what, s, rank in (("scores", scores, 4), ("bbox_deltas", bbox_deltas, 4),
                          ("image_info", image_info, 2), ("anchors", anchors, 3),
                          ("nms_threshold", nms_threshold, 0),
                          ("pre_nms_topn", pre_nms_topn, 0), ("min_size", min_size, 0)):
        if s.ndims is not None and s.ndims != rank:
            raise op.shape_error(f"Shape must be rank {rank} but is rank {s.ndims} for "
                                 f"'{what}'")
    if image_info.ndims == 2 and image_info[1].value not in (None, 5):
        raise op.shape_error(f"Dimension must be 5 but is {image_info[1].value} for "
                             f"image_info (rows of height, width, scale, ...)")
    batch = scores[0].value if scores.ndims else None
    n = int(op.attrs["post_nms_topn"])
    return [TensorShape([batch, n, 4]), TensorShape([batch, n])]


not_differentiable("GenerateBoundingBoxProposals")


def generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors,
                                    nms_threshold=0.7, pre_nms_topn=6000, min_size=16,
                                    post_nms_topn=300, name=None):
    """Region proposals from anchor `scores` ``[batch, h, w, A]``, `bbox_deltas`
    ``[batch, h, w, 4A]``, `image_info` ``[batch, 5]`` and `anchors` ``[batch, h*w*A, 4]``:
    ``(rois, roi_probabilities)``. See the module docstring: no CPU kernel, as in
    TensorFlow."""
    with name_scope(name, "GenerateBoundingBoxProposals") as scope:
        inputs = [convert_to_tensor(scores, dtype=_dtypes.float32, name="scores"),
                  convert_to_tensor(bbox_deltas, dtype=_dtypes.float32, name="bbox_deltas"),
                  convert_to_tensor(image_info, dtype=_dtypes.float32, name="image_info"),
                  convert_to_tensor(anchors, dtype=_dtypes.float32, name="anchors"),
                  convert_to_tensor(nms_threshold, dtype=_dtypes.float32,
                                    name="nms_threshold"),
                  convert_to_tensor(pre_nms_topn, dtype=_dtypes.int32, name="pre_nms_topn"),
                  convert_to_tensor(min_size, dtype=_dtypes.float32, name="min_size")]
        op = make_op("GenerateBoundingBoxProposals", inputs,
                     {"post_nms_topn": int(post_nms_topn)}, name=scope)
    return GenerateBoundingBoxProposals(*op.outputs)
