"""Pass 8, in place: bind kernel variants that write their result into input 0.

A backend may register an in-place variant of a kernel (`Backend.register_in_place`).
A node gets it when its input 0 is a fresh array (the output of a kernel registered
``fresh``: a new array nobody else references) on the same device, and this node is
its only use (not fetched, not read by another node), also through a chain of
`Identity` nodes (the gradients' `tf.tuple`) used once each::

    MatMul ──> BiasAdd ──> Relu ──┬─> MatMul      BiasAdd and Relu write in place
                                  └─> ReluGrad    (Relu's result is read twice: kept)

A fused node (`fusion.py`) counts as fresh, and gets its kernel's own ``in_place``
variant under the same rule. It runs after `schedule`, which counts the uses.
"""

from __future__ import annotations

from flowgraph.runtime.node_table import NodeTable


def bind_in_place(table: NodeTable) -> None:
    """Swap in in-place kernel variants where the rule above allows."""
    producer = table.producers()
    nodes, uses = table.nodes, table.uses

    def owned(slot: int, device: str, fresh: frozenset) -> bool:
        while True:
            p = producer.get(slot)
            if p is None or uses[slot] != 1 or nodes[p].op is None or \
                    nodes[p].device != device:
                return False
            if nodes[p].op_type in fresh or nodes[p].fused:
                return True
            if nodes[p].op_type != "Identity":
                return False
            slot = nodes[p].input_slots[0]

    for _, node in table.op_nodes():
        op, ins = node.op, node.input_slots
        if node.fused:  # its kernel is the fused one, which may have its own variant
            variant = getattr(node.kernel, "in_place", None)
            if variant is not None and ins and ins[0] not in ins[1:] and \
                    owned(ins[0], node.device, node.placed_on.backend.fresh_outputs):
                node.kernel = variant
                node.in_place = True
            continue
        if not ins or ins[0] in ins[1:] or \
                any(t.dtype.is_ref_dtype for t in op._inputs):  # (kernel wrapped to deref)
            continue
        backend = node.placed_on.backend
        if not owned(ins[0], node.device, backend.fresh_outputs):
            continue
        kernel = backend.in_place_kernel(op)
        if kernel is not None:
            node.kernel = kernel
            node.in_place = True
