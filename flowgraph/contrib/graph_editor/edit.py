"""Detaching, connecting and bypassing subgraph views (in place).

Detached inputs and outputs are replaced by placeholders named ``geph__<op>_<index>``
next to the tensor they stand for.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib import graph_editor as ge
>>> with tf.Graph().as_default():
...     a = tf.constant(1.0, name="a")
...     b = tf.identity(a, name="b")
...     _, phs = ge.detach_inputs(b.op)
>>> [t.name for t in phs], [t.name for t in b.op.inputs]
(['geph__a_0:0'], ['geph__a_0:0'])
"""

from __future__ import annotations

from flowgraph.contrib.graph_editor import reroute, select, subgraph, util

__all__ = ["bypass", "connect", "detach", "detach_control_inputs", "detach_control_outputs",
           "detach_inputs", "detach_outputs"]


def detach_control_inputs(sgv) -> None:
    """Remove the control inputs of the ops of `sgv` that come from outside it."""
    sgv = subgraph.make_view(sgv)
    inside = frozenset(sgv.ops)
    for op in sgv.ops:
        outside = [c for c in op.control_inputs if c not in inside]
        if outside:
            reroute.remove_control_inputs(op, outside)


def detach_control_outputs(sgv, control_outputs) -> None:
    """Remove the control edges from the ops of `sgv` to ops outside it
    (`control_outputs`: a `util.ControlOutputs` of the graph)."""
    if not isinstance(control_outputs, util.ControlOutputs):
        raise TypeError("detach_control_outputs: expected a util.ControlOutputs, got "
                        f"{type(control_outputs).__name__}")
    control_outputs.update()
    sgv = subgraph.make_view(sgv)
    inside = frozenset(sgv.ops)
    for op in sgv.ops:
        for cop in control_outputs.get(op):
            if cop not in inside and op in cop.control_inputs:
                reroute.remove_control_inputs(cop, [op])


def detach_inputs(sgv, control_inputs: bool = False):
    """Make the ops of `sgv` read one new placeholder per input in place of the input;
    returns (the view, the placeholders)."""
    sgv = subgraph.make_view(sgv)
    with sgv.graph.as_default():
        phs = [util.make_placeholder_from_tensor(t) for t in sgv.inputs]
    sgv, _ = reroute.swap_inputs(sgv, phs)
    if control_inputs:
        detach_control_inputs(sgv)
    return sgv, phs


def detach_outputs(sgv, control_outputs=None):
    """Make the consumers of `sgv`'s outputs read one new placeholder per output that
    has consumers; returns (the view of those outputs, the placeholders)."""
    sgv = subgraph.make_view(sgv)
    sgv_ = sgv.remap_outputs([i for i, t in enumerate(sgv.outputs) if t.consumers()])
    with sgv.graph.as_default():
        phs = [util.make_placeholder_from_tensor(t) for t in sgv_.outputs]
    reroute.swap_outputs(sgv_, phs)
    if control_outputs is not None:
        detach_control_outputs(sgv_, control_outputs)
    return sgv_, phs


def detach(sgv, control_inputs=False, control_outputs=None, control_ios=None):
    """`detach_inputs` and `detach_outputs`: returns (view, input placeholders, output
    placeholders)."""
    control_inputs, control_outputs = select.check_cios(control_inputs, control_outputs,
                                                        control_ios)
    _, input_phs = detach_inputs(sgv, control_inputs)
    _, output_phs = detach_outputs(sgv, control_outputs)
    return sgv, input_phs, output_phs


def connect(sgv0, sgv1, disconnect_first: bool = False):
    """Make the inputs of `sgv1` the outputs of `sgv0` (in order; the counts must
    match); with `disconnect_first`, `sgv0`'s outputs first lose their consumers."""
    sgv0 = subgraph.make_view(sgv0)
    sgv1 = subgraph.make_view(sgv1)
    util.check_graphs(sgv0, sgv1)
    if disconnect_first:
        detach_outputs(sgv0)
    outputs0 = subgraph.SubGraphView(passthrough_ts=list(sgv0.outputs))
    reroute.reroute_inputs(outputs0, sgv1)
    return sgv0, sgv1


def bypass(sgv):
    """Make the consumers of `sgv`'s outputs read its inputs instead (the view is left
    reading placeholders); returns (the view, the placeholders)."""
    sgv = subgraph.make_view(sgv)
    inputs = list(sgv.inputs)
    sgv, phs = detach_inputs(sgv)
    reroute.reroute_ts(inputs, list(sgv.outputs))
    return sgv, phs
