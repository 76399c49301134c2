"""The memory schedule's order `S` and the plan structure it is computed on.

The memory schedule (`memory_schedule.py`) sees the plan as one dependency list per
node (`predecessors`: data, control, and each `_Recv`'s `_Send`). It computes one global
order `S` of the nodes (`frugal_order`), a depth-first post-order from the sinks that
visits the deepest input first: a long chain of small values runs before the short
branches that need its end, so large temporaries are made as late as possible::

    x -> a1 -> a2 -> a3 --+
    x -> big -------------+-> add
    S = x a1 a2 a3 big add   (`big` is made just before `add` reads it)

Per device `d` with a budget, `S_d` is the subsequence of `S` on `d`. `S` is
topological for the data edges, the control edges and each `_Send` -> `_Recv` pair
(nodes on a loop's back edge come last), and every edge the schedule adds goes forward
in it, so the plan stays acyclic and no step can deadlock.

Control-flow nodes (`Switch`, `Merge`, `Enter`, `Exit`, `NextIteration`), async nodes
other than `_Recv` (queues may wait on other nodes of the step), and everything
downstream of them (`control_flow_closure`) are never gated.
"""

from __future__ import annotations

from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeTable

__all__ = ["control_flow_closure", "frugal_order", "pair_key", "predecessors", "successors",
           "topological"]


def pair_key(node) -> tuple[str, str]:
    """What a `_Send` node and its `_Recv` share: `partition.py` names them
    ``_send_<tensor>_to_<rest>`` and ``_recv_<tensor>_on_<rest>``, with the tensor's name
    as their one input, so (tensor, rest) holds even where an op name in `rest` (the
    reader a pair is made for) contains ``_to_`` or ``_on_``.

    >>> from types import SimpleNamespace as Node
    >>> pair_key(Node(name="_send_x:0_to_add_on_top", inputs=["x:0"]))
    ('x:0', 'add_on_top')
    >>> pair_key(Node(name="_recv_x:0_on_add_on_top", inputs=["x:0"]))
    ('x:0', 'add_on_top')
    """
    tensor = node.inputs[0]
    return tensor, node.name[len("_send_") + len(tensor) + len("_to_"):]


def predecessors(table: NodeTable) -> list[set[int]]:
    """Per node the nodes it waits for: data, control, and a `_Recv`'s `_Send`.

    >>> predecessors(NodeTable())
    []
    """
    producer = table.producers()
    preds: list[set[int]] = [
        {producer[s] for s in n.input_slots if s in producer} for n in table.nodes]
    for a, b in table.control_edges:
        preds[b].add(a)
    sends = {pair_key(n): i for i, n in enumerate(table.nodes) if n.op_type == "_Send"}
    for i, n in enumerate(table.nodes):
        if n.op_type == "_Recv":
            j = sends.get(pair_key(n))
            if j is not None:
                preds[i].add(j)
    return preds


def successors(preds: list[set[int]]) -> list[list[int]]:
    """Per node the nodes that wait for it (the reverse of `preds`).

    >>> successors([set(), {0}, {0, 1}])
    [[1, 2], [2], []]
    """
    succ: list[list[int]] = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    return succ


def control_flow_closure(table: NodeTable, preds: list[set[int]]) -> set[int]:
    """Control-flow and async (not `_Recv`) nodes and everything downstream of them.

    >>> control_flow_closure(NodeTable(), [])
    set()
    """
    nodes = table.nodes
    out: set[int] = set()
    for i, n in enumerate(nodes):  # table order is topological apart from loop back
        if (n.op is not None and n.op.op_def.control_flow) or preds[i] & out or \
                (n.flags & _executor.FLAG_ASYNC and n.op_type != "_Recv"):
            out.add(i)
    changed = bool(out)
    while changed:  # a loop's back edge can point backwards in table order
        changed = False
        for i in range(len(nodes)):
            if i not in out and preds[i] & out:
                out.add(i)
                changed = True
    return out


def frugal_order(preds: list[set[int]]) -> list[int]:
    """Depth-first post-order from the sinks, the deepest input first (see above).

    The module docstring's graph (x=0, a1..a3=1..3, big=4, add=5):

    >>> frugal_order([set(), {0}, {1}, {2}, {0}, {3, 4}])
    [0, 1, 2, 3, 4, 5]
    """
    n = len(preds)
    depth = [0] * n
    for i in topological(preds):
        depth[i] = 1 + max((depth[p] for p in preds[i]), default=0)
    has_succ = [False] * n
    for ps in preds:
        for p in ps:
            has_succ[p] = True
    seen = [False] * n
    order: list[int] = []
    for root in range(n):
        if has_succ[root] or seen[root]:
            continue
        seen[root] = True
        stack = [(root, iter(sorted(preds[root], key=lambda p: (-depth[p], p))))]
        while stack:
            node, it = stack[-1]
            for p in it:
                if not seen[p]:
                    seen[p] = True
                    stack.append((p, iter(sorted(preds[p], key=lambda q: (-depth[q], q)))))
                    break
            else:
                stack.pop()
                order.append(node)
    order.extend(i for i in topological(preds) if not seen[i])  # cycles: loops
    return order


def topological(preds: list[set[int]]) -> list[int]:
    """Kahn's order; nodes on a cycle (a loop's back edge) come last, in table order.

    >>> topological([{1}, set(), {0}, {4}, {3}])
    [1, 0, 2, 3, 4]
    """
    n = len(preds)
    count = [len(p) for p in preds]
    succ = successors(preds)
    ready = [i for i in range(n) if count[i] == 0]
    out = []
    while ready:
        i = ready.pop()
        out.append(i)
        for j in succ[i]:
            count[j] -= 1
            if count[j] == 0:
                ready.append(j)
    placed = set(out)
    return out + [i for i in range(n) if i not in placed]
