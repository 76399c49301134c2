"""The planner's working form of a run: executor nodes over numbered value slots.

The passes after placement (`plan.py` lists them) read and extend one `NodeTable`:

- a *slot* holds one value during a step: a feed, a constant of the plan (its initial
  value), or one output of a node. Slots are numbered densely, as the executor wants;
- a *node* is one kernel call: an op of the graph, or a `_Send`/`_Recv` that the
  partition pass adds. It reads its inputs from slots and writes its ``n_out`` outputs
  to the consecutive slots starting at ``out_base``.

Nothing here runs anything; `plan.emit` turns the finished table into an executor
`Plan`::

    slot 0: feed x       node 0  MatMul(0, 1) -> slot 2
    slot 1: const w      node 1  Relu(2)      -> slot 3
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowgraph.backends.base import Device
from flowgraph.framework.operation import Operation, Tensor


@dataclass
class NodeInfo:
    """One executor node: what it is (for traces and errors) and how it is wired."""

    name: str
    op_type: str
    device: str
    op: Operation | None  # None for nodes the planner adds (_Send, _Recv)
    inputs: list[str] = field(default_factory=list)  # input names, when op is None
    hand_off: bool = False  # may run on another thread when the ready one is busy
    in_place: bool = False  # its kernel writes its result into its input 0
    placed_on: Device | None = None
    input_slots: list[int] = field(default_factory=list)
    out_base: int = 0
    n_out: int = 0
    kernel: Any = None
    flags: int = 0
    fused: list[Operation] | None = None  # a fused node's member ops (`fusion.py`)


class NodeTable:
    """Nodes and slots of a plan under construction (see the module docstring)."""

    def __init__(self) -> None:
        self.nodes: list[NodeInfo] = []
        self.initial: list = []  # per slot: its value before the step (constants) or None
        self.feed_slots: dict[Tensor, int] = {}
        self.slot_of: dict[Tensor, int] = {}  # feeds, constants, outputs of op nodes
        self.replace: dict[Tensor, Tensor] = {}  # merged subexpressions: t -> stand-in
        self.constants: set[Tensor] = set()  # values known at plan time (initial slots)
        self.node_of: dict[Operation, int] = {}
        self.control_edges: list[tuple[int, int]] = []
        self.uses: list[int] = []  # per slot: consumers plus fetches (set by `schedule`)

    @property
    def num_slots(self) -> int:
        return len(self.initial)

    def new_slot(self, value=None) -> int:
        self.initial.append(value)
        return len(self.initial) - 1

    def tensor_slot(self, t: Tensor) -> int:
        """The slot holding tensor `t`'s value (a fed tensor is never replaced)."""
        if t in self.feed_slots:
            return self.feed_slots[t]
        return self.slot_of[self.replace.get(t, t)]

    def add_node(self, node: NodeInfo) -> int:
        """Append `node`, giving it fresh output slots; returns its index."""
        node.out_base = self.num_slots
        for _ in range(node.n_out):
            self.new_slot()
        self.nodes.append(node)
        if node.op is not None:
            self.node_of[node.op] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def producers(self) -> dict[int, int]:
        """Slot -> index of the node writing it (sources: feeds and constants, absent)."""
        return {node.out_base + k: i for i, node in enumerate(self.nodes)
                for k in range(node.n_out)}

    def op_nodes(self):
        """(index, node) for the nodes that run graph ops, in topological order."""
        return ((i, n) for i, n in enumerate(self.nodes) if n.op is not None)
