"""Pass 6b, fusion: groups of elementwise nodes become one fused node.

Runs after `bind_kernels` (kernels and devices are known, `_Send`/`_Recv` pairs exist)
and before `schedule`. It changes the plan only, never the user's graph, so gradients,
`Graph` introspection and saved models see the original ops.

A group is a *root* node plus producers that only it (or other members) consume:

- every member is an op its device's backend calls fusible (`Backend.fusible`: on the
  CPU, float elementwise arithmetic, activations and their gradients, BiasAdd, AddN);
- all members are on one device;
- a member other than the root has exactly the group as its consumers, is not fetched,
  has no control inputs and is nobody's control input. Values read outside the group or
  fetched therefore stay materialized: they are roots (or inputs) of groups.

A group of one op is fused too when its result may be large (static size unknown or at
least `SINGLE_MIN_ELEMENTS`), so that it runs on the kernel threads. Because only the
root's value leaves the group, replacing the group by one node at the root's position
keeps the plan acyclic and topologically ordered::

    x ─> Add ─> Relu ─> MatMul          x ─> [Add, Relu] ─> MatMul
    b ──┘                               b ──┘

The fused node keeps the root's name, op and output slot (fetches, step stats and the
memory schedule see the root) and lists its members in `NodeInfo.fused`; its kernel is
the backend's (`Backend.fused_kernel`), whose fallback runs the members' own kernels one
by one, so bad inputs raise the error the failing member would raise, naming it.

A one-element constant of the plan enters the kernel as a constant operand, also when
it reaches a device group through a `_ToDevice` node (`partition.py`); a `_ToDevice`
node that nothing reads any more is dropped.

``RewriterConfig.remapping = OFF`` (TensorFlow's switch for its op-fusing remapper) or
``disable_meta_optimizer`` turns the pass off.
"""

from __future__ import annotations

from flowgraph.framework.operation import Tensor
from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeInfo, NodeTable
from flowgraph.runtime.op_errors import describe_error

_UNFUSIBLE_FLAGS = (_executor.FLAG_NEEDS_STEP | _executor.FLAG_ASYNC |
                    _executor.FLAG_MULTI_OUT | _executor.FLAG_MERGE)
# A single op is fused (its kernel replaced by the fused one) only when its result may be
# large enough to split over threads: static element count unknown or at least this.
# Smaller ones keep their own kernel, which is as fast on one thread.
SINGLE_MIN_ELEMENTS = 1 << 16


def fusion_enabled(config) -> bool:
    """Whether `config` (a `ConfigProto`) lets the fusion pass run."""
    return config.graph_options.rewrite_options.enabled("remapping")


def fuse_elementwise(table: NodeTable, fetch_tensors: list[Tensor]) -> int:
    """Replace fusible groups of `table`'s nodes by fused nodes; returns how many."""
    nodes = table.nodes
    if any(n.op is not None and n.op.op_def.control_flow for n in nodes):
        return 0  # loop frames are assigned per op later; keep loop plans as they are
    producer = table.producers()
    consumers: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        for s in n.input_slots:
            consumers.setdefault(s, []).append(i)
    fetched = {table.tensor_slot(t) for t in fetch_tensors}
    control = {j for edge in table.control_edges for j in edge}
    for _, n in table.op_nodes():
        for c in n.op._control_inputs:
            j = table.node_of.get(c)
            if j is not None:
                control.add(j)
    fusible = [_candidate(n) for n in nodes]

    absorbed: dict[int, int] = {}  # member index -> its root's index
    fused = 0
    for root in range(len(nodes) - 1, -1, -1):
        if not fusible[root] or root in absorbed:
            continue
        members = {root}
        work = [root]
        while work:
            m = work.pop()
            for s in nodes[m].input_slots:
                p = producer.get(s)
                if p is None or p in members or p in absorbed or not fusible[p] or \
                        p in control or s in fetched or nodes[p].op._control_inputs or \
                        nodes[p].device != nodes[root].device or \
                        not all(c in members for c in consumers.get(s, ())):
                    continue
                members.add(p)
                work.append(p)
        if len(members) > 1 or _may_be_large(nodes[root]):
            group = sorted(members)
            node = _fused_node(table, group, nodes[root], producer)
            if node is None:
                continue
            fused += 1
            for m in group[:-1]:
                absorbed[m] = root
            nodes[root] = node
    unread = _unread_movers(table, fetched, absorbed) if fused else set()
    if absorbed or unread:
        _drop_nodes(table, absorbed, unread)
    return fused


def _may_be_large(node: NodeInfo) -> bool:
    n = node.op._outputs[0].shape.num_elements()
    return n is None or n >= SINGLE_MIN_ELEMENTS


def _candidate(node: NodeInfo) -> bool:
    return node.op is not None and node.kernel is not None and node.n_out == 1 and \
        not node.flags & _UNFUSIBLE_FLAGS and node.placed_on is not None and \
        node.placed_on.backend.fusible(node.op)


def _fused_node(table: NodeTable, group: list[int], root: NodeInfo,
                producer: dict[int, int]) -> NodeInfo | None:
    """The fused `NodeInfo` replacing `group` (node indices, topological order), or None
    when the backend leaves the group unfused."""
    nodes = table.nodes
    index = {m: k for k, m in enumerate(group)}
    ext_slots: dict[int, int] = {}  # slot -> input position
    ext_names: list[str] = []
    operands = []
    for m in group:
        ops_in = []
        for k, s in enumerate(nodes[m].input_slots):
            p = producer.get(s)
            if p in index:
                ops_in.append(("op", index[p]))
                continue
            value = table.initial[s]
            if value is None and p is not None and nodes[p].op_type == "_ToDevice" and \
                    nodes[p].op is None:
                value = table.initial[nodes[p].input_slots[0]]  # a plan constant moved
            if value is not None and getattr(value, "size", 0) == 1:
                ops_in.append(("const", value))  # a scalar of the plan: inside the kernel
                continue
            if s not in ext_slots:
                ext_slots[s] = len(ext_slots)
                ext_names.append(nodes[m].op._inputs[k].name)
            ops_in.append(("in", ext_slots[s]))
        operands.append(ops_in)
    members = [nodes[m] for m in group]
    fallback = _fallback(members, operands)
    backend = root.placed_on.backend
    kernel = backend.fused_kernel([n.op for n in members], operands, len(ext_slots),
                                  fallback)
    if kernel is None:
        return None
    return NodeInfo(root.name, root.op_type, root.device, root.op, inputs=ext_names,
                    hand_off=root.hand_off, placed_on=root.placed_on,
                    input_slots=list(ext_slots), out_base=root.out_base, n_out=root.n_out,
                    kernel=kernel, flags=root.flags,
                    fused=[n.op for n in members])


def _fallback(members: list[NodeInfo], operands):
    """Run the members' own kernels in order; an error names the member that raised."""

    def run(*inputs):
        values = []
        for info, ops_in in zip(members, operands):
            args = [inputs[j] if kind == "in" else values[j] if kind == "op" else j
                    for kind, j in ops_in]
            try:
                values.append(info.kernel(*args))
            except Exception as e:
                raise describe_error(info, e, args) from e
        return values[-1]

    return run


def _unread_movers(table: NodeTable, fetched: set[int], absorbed: dict[int, int]) -> set[int]:
    """Indices of `_ToDevice` nodes whose value no node but `absorbed` ones reads and no
    fetch takes (their constants went into fused kernels), outside any control edge."""
    read = {s for i, n in enumerate(table.nodes) if i not in absorbed
            for s in n.input_slots} | fetched
    control = {j for edge in table.control_edges for j in edge}
    return {i for i, n in enumerate(table.nodes)
            if n.op is None and n.op_type == "_ToDevice" and n.out_base not in read
            and i not in control}


def _drop_nodes(table: NodeTable, absorbed: dict[int, int], unread: set[int]) -> None:
    """Remove absorbed members and `unread` nodes from `table`, renumbering nodes and
    control edges."""
    new_index: dict[int, int] = {}
    kept = []
    for i, n in enumerate(table.nodes):
        if i in absorbed or i in unread:
            continue
        new_index[i] = len(kept)
        kept.append(n)
    old_nodes = table.nodes
    table.nodes = kept
    table.control_edges = [(new_index[a], new_index[b]) for a, b in table.control_edges]
    table.node_of = {}
    for i, n in enumerate(kept):
        if n.op is not None:
            table.node_of[n.op] = i
    for m, root in absorbed.items():
        table.node_of[old_nodes[m].op] = new_index[root]
