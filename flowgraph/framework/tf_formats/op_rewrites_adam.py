"""``SparseApplyAdam`` written for TensorFlow, which has no such op.

flowgraph applies Adam to a sparse gradient (an embedding's) with one fused op;
TensorFlow's `AdamOptimizer` builds the same update from plain ops, and a GraphDef written
for TensorFlow (a ``.meta`` file, a TF-format SavedModel of a training graph) must use
those. The node becomes, under its own name scope (the last node keeps its name and gives
the updated variable, as the fused op does)::

    lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
    (indices, grad) = the unique indices and their summed gradient rows
    m    = ScatterAdd(Assign(m, m * beta1), indices, grad * (1 - beta1))
    v    = ScatterAdd(Assign(v, v * beta2), indices, grad * grad * (1 - beta2))
    var  = AssignSub(var, lr_t * m / (sqrt(v) + epsilon))

Every row's moments decay and every row moves, as flowgraph's kernel and TensorFlow's
graph both do.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.framework.tf_formats.op_rewrites import rewrite_for_tf
>>> with tf.Graph().as_default() as g:
...     emb = tf.Variable([[1.0], [2.0]], name="emb")
...     _ = tf.train.AdamOptimizer(0.1).minimize(
...         tf.reduce_sum(tf.nn.embedding_lookup(emb, [1])))
>>> ops = {n["op"] for n in rewrite_for_tf(g.as_graph_def())["node"]}
>>> "SparseApplyAdam" in ops, sorted(ops & {"ScatterAdd", "AssignSub"})
(False, ['AssignSub', 'ScatterAdd'])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker, source_dtype

__all__ = ["sparse_apply_adam_as_tf"]


def sparse_apply_adam_as_tf(node: dict, by_name: dict) -> list[dict]:
    """The TensorFlow nodes computing ``SparseApplyAdam`` node `node`."""
    inputs = [r for r in node["input"] if not r.startswith("^")]
    control = [r for r in node["input"] if r.startswith("^")]
    var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, rows, row_ids = inputs
    dtype = (node.get("output_dtypes") or ["float32"])[0]
    index_dtype = source_dtype(row_ids, by_name) or "int64"
    locking = node.get("attr", {}).get("use_locking", False)
    mk = NodeMaker(node["name"], node.get("device", ""))
    r = mk.ref

    def op(suffix, op_type, args, attr=None):
        return mk.make(suffix, op_type, args, dtype, attr)

    assign_attr = {"use_locking": locking, "validate_shape": True}
    grad, indices = r("UnsortedSegmentSum"), r("Unique")
    return [
        # repeated indices: their rows are summed first (TensorFlow's optimizer does so
        # before its sparse update; flowgraph's kernel inside)
        {**mk.make("Unique", "Unique", [row_ids], index_dtype,
                   {"out_idx": {"dtype": "int32"}}),
         "output_dtypes": [index_dtype, "int32"]},
        mk.make("Size", "Size", [r("Unique")], "int32", {"out_type": {"dtype": "int32"}}),
        op("UnsortedSegmentSum", "UnsortedSegmentSum",
           [rows, f"{mk.name}/Unique:1", r("Size")]),
        mk.const("one", np.asarray(1.0, dtype=np.dtype(dtype))),
        op("sub", "Sub", [r("one"), beta2_power]),
        op("Sqrt", "Sqrt", [r("sub")]),
        op("mul", "Mul", [lr, r("Sqrt")]),
        op("sub_1", "Sub", [r("one"), beta1_power]),
        op("truediv", "RealDiv", [r("mul"), r("sub_1")]),
        op("sub_2", "Sub", [r("one"), beta1]),
        op("mul_1", "Mul", [grad, r("sub_2")]),
        op("mul_2", "Mul", [m, beta1]),
        op("Assign", "Assign", [m, r("mul_2")], assign_attr),
        op("ScatterAdd", "ScatterAdd", [m, indices, r("mul_1"), f"^{mk.name}/Assign"],
           {"use_locking": locking}),
        op("mul_3", "Mul", [grad, grad]),
        op("sub_3", "Sub", [r("one"), beta2]),
        op("mul_4", "Mul", [r("mul_3"), r("sub_3")]),
        op("mul_5", "Mul", [v, beta2]),
        op("Assign_1", "Assign", [v, r("mul_5")], assign_attr),
        op("ScatterAdd_1", "ScatterAdd", [v, indices, r("mul_4"), f"^{mk.name}/Assign_1"],
           {"use_locking": locking}),
        op("Sqrt_1", "Sqrt", [r("ScatterAdd_1")]),
        op("mul_6", "Mul", [r("truediv"), r("ScatterAdd")]),
        op("add", "AddV2", [r("Sqrt_1"), epsilon]),
        op("truediv_1", "RealDiv", [r("mul_6"), r("add")]),
        {**op("", "AssignSub", [var, r("truediv_1"), *control], {"use_locking": locking}),
         "output_shapes": node.get("output_shapes", [])},
    ]
