"""Where the memory schedule counts a value that crosses devices, and where its `_Recv`
goes in the order `S` (`memory_order.py`).

Between its `_Send` and its `_Recv` a value waits in the step's rendezvous, as a host
array. The *receiving* device counts that wait when its memory is host memory (a CPU):
the array it receives is that very array, and only the receiver's order says when the
wait ends (when its `_Recv` runs). It counts the value from the earliest position the
`_Send` can run at, the last node of its own order that the `_Send` waits for
(`send_times`; -1, the step's start, when none). Delaying such a `_Recv` would then save
nothing, so it is never gated (``DevicePlan.host_recvs``, `memory_values.py`).

A receiver with memory of its own (OpenCL) holds the value only from its `_Recv` on, so
there the whitepaper's ASAP/ALAP applies: `recv_alap_order` moves each gated `_Recv` in
`S` to just before its first successor, its as-late-as-possible place; the gating
(`memory_gating.py`) then lets some of them run as early as possible instead. The
value's wait in host memory counts on the sending device, when that is a CPU, until the
first node there that depends on the `_Recv` (`waits_here`; the end of the step when
none does: the sender's order cannot tell when the receiver takes it). Between two
OpenCL devices the host copy waiting in the rendezvous counts nowhere::

    S_CPU:0   0 slice   1 Sum   2 sin ... 21 add_19   22 _Recv   23 Sum_1
    CPU:1     tile(x + add_19) -> _Send               (waits for add_19)
    the sent value counts on CPU:0 over [21, 23], not [22, 23] nor [-1, 23]
"""

from __future__ import annotations

from flowgraph.runtime.memory_order import pair_key, successors
from flowgraph.runtime.node_table import NodeTable

__all__ = ["recv_alap_order", "send_times", "waits_here"]


def send_times(table: NodeTable, pos: dict[int, int], preds: list[set[int]],
               order: list[int]) -> dict[tuple[str, str], int]:
    """Per transfer (`pair_key`) the last position of `pos` (one device's gated order)
    that its `_Send` waits for, directly or through other nodes (-1: none); until that
    node has finished, the value cannot be in the rendezvous. Loop nodes, at the end of
    `order`, may come out earlier than they are, which only counts their values longer.

    >>> send_times(NodeTable(), {}, [], [])
    {}
    """
    after = [-1] * len(preds)
    out = {}
    for i in order:
        a = -1
        for p in preds[i]:
            a = max(a, after[p], pos.get(p, -1))
        after[i] = a
        if table.nodes[i].op_type == "_Send":
            out[pair_key(table.nodes[i])] = a
    return out


def waits_here(table: NodeTable, local: list[int], pos: dict[int, int],
               preds: list[set[int]], order: list[int], end: int) -> dict[int, int]:
    """Per `_Send` of `local` whose value waits in this (host-memory) device's memory
    until a device with memory of its own takes it (a host receiver counts the wait
    itself, see above): the last position of `pos` it may wait to, the first node here
    that depends on the `_Recv` (it cannot start before the value was taken), else `end`.

    >>> waits_here(NodeTable(), [], {}, [], [], 0)
    {}
    """
    nodes = table.nodes
    sends = [i for i in local if nodes[i].op_type == "_Send"]
    if not sends or not nodes[sends[0]].placed_on.backend.host_memory:
        return {}
    recvs = {pair_key(n): r for r, n in enumerate(nodes)
             if n.op_type == "_Recv" and not n.placed_on.backend.host_memory}
    sends = {i: recvs[pair_key(nodes[i])] for i in sends
             if pair_key(nodes[i]) in recvs}
    if not sends:
        return {}
    succ = successors(preds)
    first = [end] * len(preds)  # per node: the first position here downstream of it
    for i in reversed(order):  # loop nodes at the end may keep `end`: longer, still safe
        for j in succ[i]:
            first[i] = min(first[i], first[j], pos.get(j, end))
    return {i: first[r] for i, r in sends.items()}


def recv_alap_order(table: NodeTable, order: list[int], preds: list[set[int]],
                    excluded: set[int]) -> list[int]:
    """`order` with each gated `_Recv` moved to just before its first successor (its
    as-late-as-possible place); the order stays topological, since a `_Recv` waits for
    nothing on its own device that comes after it.

    >>> recv_alap_order(NodeTable(), [], [], set())
    []
    """
    nodes = table.nodes
    at = {i: k for k, i in enumerate(order)}
    first: dict[int, int] = {}  # node -> its earliest successor in `order`
    for i, ps in enumerate(preds):
        for p in ps:
            if nodes[p].op_type == "_Recv" and (p not in first or at[i] < at[first[p]]):
                first[p] = i
    moved: dict[int, list[int]] = {}
    for r, c in first.items():
        if r not in excluded and nodes[c].op_type != "_Recv":
            moved.setdefault(c, []).append(r)
    if not moved:
        return order
    late = {r for rs in moved.values() for r in rs}
    out: list[int] = []
    for i in order:
        if i in late:
            continue
        out.extend(sorted(moved.get(i, ()), key=at.__getitem__))
        out.append(i)
    return out
