"""Pass 4, lay out slots: one executor node per op, one slot per value.

Feeds come first, then the constants of the plan (``Const`` ops and folded values, which
become initial slot values and run no node), then each op's outputs in topological order.
A node's inputs are the slots of its input tensors, seen through the rewrite pass's
replacements. Fed and folded outputs of an op that still runs keep a slot nobody reads.

>>> import flowgraph as tf
>>> from flowgraph.runtime.rewrite import Rewrites
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, name="x")
...     y = tf.negative(x, name="y")
...     table = lay_out_slots([y.op], [x], Rewrites(), {y.op: None})
>>> table.nodes[0].name, table.nodes[0].input_slots, table.nodes[0].out_base
('y', [0], 1)
"""

from __future__ import annotations

from flowgraph.backends.base import Device
from flowgraph.framework.constant_op import dense_constant
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.runtime.node_table import NodeInfo, NodeTable
from flowgraph.runtime.rewrite import Rewrites


def lay_out_slots(ops: list[Operation], feed_tensors: list[Tensor], rewrites: Rewrites,
                  placement: dict[Operation, Device]) -> NodeTable:
    """A `NodeTable` with a node per op of `ops` (topological order), on its device."""
    table = NodeTable()
    table.replace = rewrites.replace
    for t in feed_tensors:
        table.feed_slots[t] = table.new_slot()
    for t, value in rewrites.known.items():
        if t not in table.feed_slots:
            table.slot_of[t] = table.new_slot(dense_constant(value))
            table.constants.add(t)
    for op in ops:
        device = placement[op]
        i = table.add_node(NodeInfo(op.name, op.type, getattr(device, "name", None), op,
                                    placed_on=device, n_out=len(op._outputs)))
        base = table.nodes[i].out_base
        for k, t in enumerate(op._outputs):
            if t not in table.feed_slots and t not in rewrites.known:
                table.slot_of[t] = base + k
    for _, node in table.op_nodes():
        node.input_slots = [table.tensor_slot(t) for t in node.op._inputs]
    return table
