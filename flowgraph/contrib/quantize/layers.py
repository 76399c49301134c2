"""Finding the layers `tf.contrib.quantize` rewrites: a Conv2D, MatMul or
DepthwiseConv2dNative reading a variable's weights, then an optional bias add
(``Add``/``BiasAdd``), an optional residual ``Add`` (the bypass), an activation (``Relu``,
``Relu6`` or ``Identity``) and an optional residual ``Add`` after it. A layer with a bias
add but no activation is matched too, its bias add standing for the activation.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.quantize.layers import find_layers
>>> with tf.Graph().as_default() as g:
...     y = tf.layers.dense(tf.zeros([2, 4]), 3, activation=tf.nn.relu)
...     [(m.layer_op.name, m.weight_tensor.name, m.activation_op.name) for m in find_layers(g)]
[('dense/MatMul', 'dense/kernel/read:0', 'dense/Relu')]
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["LayerMatch", "find_layers"]

_LAYER_TYPES = {"Conv2D", "MatMul", "DepthwiseConv2dNative"}
ACTIVATION_TYPES = {"Relu", "Relu6"}


class LayerMatch(NamedTuple):
    layer_op: object
    weight_tensor: object
    activation_op: object
    bypass_op: object
    post_activation_bypass_op: object
    bias_add_op: object


def _weight(tensor):
    """`tensor` if it reads weights: a variable's ``read`` Identity, a resource read, or a
    folded-weights Mul."""
    op = tensor.op
    if op.type == "Identity" and op.inputs:
        src = op.inputs[0].op
        if src.type in ("Variable", "VariableV2"):
            return tensor
        if src.type == "Identity" and src.inputs and \
                src.inputs[0].op.type in ("Variable", "VariableV2"):
            return tensor
    return tensor if op.type in ("ReadVariableOp", "Mul") else None


def _layer(op):
    """(layer op, weights) if `op` is a quantizable layer (or a BatchToSpaceND after
    one), else None."""
    if op.type == "BatchToSpaceND" and op.inputs:
        return _layer(op.inputs[0].op)
    if op.type not in _LAYER_TYPES or len(op.inputs) < 2:
        return None
    for t in (op.inputs[1], op.inputs[0]):
        w = _weight(t)
        if w is not None:
            return op, w
    return None


def _bias_add(op):
    """(bias add, layer op, weights) if `op` adds something to a layer's output."""
    if op.type not in ("Add", "BiasAdd"):
        return None
    for t in op.inputs[:2]:
        found = _layer(t.op)
        if found is not None:
            return (op, *found)
    return None


def _activation(op):
    """A `LayerMatch` ending at the activation `op`, or None."""
    if op.type not in ACTIVATION_TYPES | {"Identity"} or not op.inputs:
        return None
    x = op.inputs[0].op
    found = _bias_add(x)
    if found is not None:
        bias, layer, weight = found
        return LayerMatch(layer, weight, op, None, None, bias)
    if x.type == "Add":
        for t in x.inputs:
            found = _bias_add(t.op)
            if found is not None:
                bias, layer, weight = found
                return LayerMatch(layer, weight, op, x, None, bias)
    found = _layer(x)
    if found is not None:
        return LayerMatch(found[0], found[1], op, None, None, None)
    return None


def find_layers(graph) -> list[LayerMatch]:
    """The layers of `graph` to quantize, largest pattern first: with a residual add
    after the activation, ending at an activation, then ending at a bias add."""
    ops = graph.get_operations()
    matches, seen = [], set()

    def keep(match):
        if match is not None and match.layer_op not in seen:
            seen.add(match.layer_op)
            matches.append(match)

    for op in ops:
        if op.type == "Add":
            for t in op.inputs:
                m = _activation(t.op)
                if m is not None:
                    keep(m._replace(post_activation_bypass_op=op))
                    break
    for op in ops:
        keep(_activation(op))
    for op in ops:
        found = _bias_add(op)
        if found is not None:
            keep(LayerMatch(found[1], found[2], op, None, None, None))
    return matches
