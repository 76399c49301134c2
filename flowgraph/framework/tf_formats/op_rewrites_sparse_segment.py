"""TensorFlow's ``SparseSegment{Sum,Mean,SqrtN}Grad`` read as the ops they compute.

TensorFlow's gradient of a sparse segment reduction (``embedding_lookup_sparse``, the
canned linear models' weighted sums) is one op; flowgraph's gradient builds primitive
ops, so a training graph written by TensorFlow (an estimator's ``train`` SavedModel)
holds one flowgraph lacks. For ``grad`` of shape ``[segments, ...]``::

    rows = GatherV2(grad, segment_ids)                     # each id's incoming gradient
    Sum:   UnsortedSegmentSum(rows, indices, output_dim0)
    Mean:  the same of rows / max(n, 1)[segment_ids]       # n: ids per segment
    SqrtN: the same of rows / sqrt(max(n, 1))[segment_ids]

Example
-------
>>> node = {"name": "g", "op": "SparseSegmentSumGrad", "device": "",
...         "input": ["grad:0", "idx:0", "seg:0", "dim0:0"], "attr": {"T": {"dtype": "float32"}}}
>>> nodes, outputs = expand_sparse_segment_grad(node)
>>> nodes[-1]["name"], nodes[-1]["op"], outputs
('g', 'UnsortedSegmentSum', {})
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker

__all__ = ["SPARSE_SEGMENT_GRAD_OPS", "expand_sparse_segment_grad"]

SPARSE_SEGMENT_GRAD_OPS = ("SparseSegmentSumGrad", "SparseSegmentMeanGrad",
                           "SparseSegmentSqrtNGrad")


def _dtype(node: dict, key: str, default: str) -> str:
    raw = node.get("attr", {}).get(key) or node.get("tf_attr", {}).get(key)
    return raw["dtype"] if isinstance(raw, dict) and "dtype" in raw else default


def expand_sparse_segment_grad(node: dict) -> tuple[list[dict], dict[int, str]]:
    """The nodes computing `node` (a TensorFlow sparse segment gradient node dict), the
    last one named as it; the second item (other outputs) is empty: it has one."""
    name, device = node["name"], node.get("device", "")
    data = [r for r in node["input"] if not r.startswith("^")]
    control = [r for r in node["input"] if r.startswith("^")]
    if len(data) != 4:
        raise ValueError(f"node '{name}' ({node['op']}) has {len(data)} data inputs; grad, "
                         "indices, segment_ids and output_dim0 are expected")
    grad, indices, segment_ids, dim0 = data
    t = _dtype(node, "T", "float32")
    seg_t = _dtype(node, "Tsegmentids", "int32")
    mk = NodeMaker(name, device)
    out: list[dict] = []

    def op(suffix, op_type, inputs, dtype=t, attr=None):
        out.append(mk.make(suffix, op_type, inputs, dtype, attr))
        return out[-1]["name"] + ":0"

    def const(suffix, value):
        out.append(mk.const(suffix, value))
        return out[-1]["name"] + ":0"

    zero = const("axis", np.array(0, np.int32))
    rows = op("rows", "GatherV2", [grad, segment_ids, zero], attr={"batch_dims": 0})
    if node["op"] != "SparseSegmentSumGrad":
        shape_attr = {"out_type": {"dtype": "int32"}}
        grad_shape = op("grad_shape", "Shape", [grad], "int32", shape_attr)
        segments = op("segments", "Reshape", [
            op("segments_1", "Slice", [grad_shape, const("begin0", np.array([0], np.int32)),
                                       const("size1", np.array([1], np.int32))], "int32"),
            const("scalar", np.array([], np.int32))], "int32")
        ones = op("ones", "Cast", [op("ones_ids", "OnesLike", [segment_ids], seg_t)], t,
                  {"SrcT": {"dtype": seg_t}, "DstT": {"dtype": t}, "Truncate": False})
        count = op("count", "Maximum", [
            op("count_0", "UnsortedSegmentSum", [ones, segment_ids, segments]),
            const("one", np.array(1, t))])
        if node["op"] == "SparseSegmentSqrtNGrad":
            count = op("count_sqrt", "Sqrt", [count])
        per_id = op("per_id", "GatherV2", [count, segment_ids, zero], attr={"batch_dims": 0})
        id_shape = op("id_shape", "Shape", [per_id], "int32", shape_attr)
        trailing = op("trailing", "OnesLike", [op("trailing_dims", "Slice", [
            op("rows_shape", "Shape", [rows], "int32", shape_attr),
            const("begin1", np.array([1], np.int32)),
            const("rest", np.array([-1], np.int32))], "int32")], "int32")
        shape = op("divisor_shape", "ConcatV2", [id_shape, trailing, zero], "int32",
                   {"N": 2})
        rows = op("scaled_rows", "RealDiv", [rows, op("divisor", "Reshape",
                                                      [per_id, shape])])
    op("", "UnsortedSegmentSum", [rows, indices, dim0, *control])
    out[-1]["output_shapes"] = (node.get("output_shapes") or [])[:1]
    return out, {}
