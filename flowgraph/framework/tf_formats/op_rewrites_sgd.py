"""``SparseApplyGradientDescent`` (and its resource form) written for TensorFlow, which has
neither op.

flowgraph applies plain gradient descent to a sparse gradient (an embedding's rows) with
one op; TensorFlow's `GradientDescentOptimizer` subtracts the scaled rows with a scatter.
Written for TensorFlow the node becomes, under its own name::

    N/mul = Mul(grad, alpha)
    N     = ScatterSub(var, indices, N/mul)             (gives the updated variable)
    N     = ResourceScatterSub(handle, indices, N/mul)  (the resource form: no output)

Rows named twice are subtracted twice, as flowgraph's kernel does.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.framework.tf_formats.op_rewrites import rewrite_for_tf
>>> with tf.Graph().as_default() as g:
...     emb = tf.Variable([[1.0], [2.0]], name="emb")
...     _ = tf.train.GradientDescentOptimizer(0.1).minimize(
...         tf.reduce_sum(tf.nn.embedding_lookup(emb, [1])))
>>> ops = {n["op"] for n in rewrite_for_tf(g.as_graph_def())["node"]}
>>> "SparseApplyGradientDescent" in ops, "ScatterSub" in ops
(False, True)
"""

from __future__ import annotations

from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker, source_dtype

__all__ = ["sparse_apply_gradient_descent_as_tf"]


def sparse_apply_gradient_descent_as_tf(node: dict, by_name: dict) -> list[dict]:
    """The scatter TensorFlow's optimizer builds for a sparse gradient step."""
    data = [r for r in node["input"] if not r.startswith("^")]
    control = [r for r in node["input"] if r.startswith("^")]
    var, alpha, grad, indices = data[:4]
    dtype = source_dtype(grad, by_name)
    if dtype is None:
        return [node]  # (the gradient's dtype unrecorded: written as it is)
    resource = node["op"].startswith("Resource")
    locking = bool(decode_attr(node.get("attr", {}).get("use_locking", False)))
    nodes = NodeMaker(node["name"], node.get("device", ""))
    scatter = {**nodes.make("", "ResourceScatterSub" if resource else "ScatterSub",
                            [var, indices, nodes.ref("mul"), *control], dtype),
               "output_shapes": node.get("output_shapes", [])}
    if resource:
        scatter["output_dtypes"] = []
        scatter["attr"] = {"dtype": {"dtype": dtype}}
    else:
        scatter["attr"] = {"use_locking": locking}
    return [nodes.make("mul", "Mul", [grad, alpha], dtype), scatter]
