"""The memory schedule's gating: the control edges that keep one device within budget.

On a device's gated order (`memory_values.DevicePlan`), let ``a`` be the position of the
first node that has not finished. Any node at a position ``k`` may start once every
node before ``m(k)`` has finished; then the nodes that have started all lie at positions
``<= K(a)`` and the live values are among those with ``p <= K(a)`` and ``l >= a``.
`windows` chooses ``K(a)`` as large as the budget allows for that set (a two-pointer
sweep), and ``m(k)`` is the smallest ``a`` with ``K(a) >= k``. "Every node before ``m``
has finished" is enforced with edges from the *frontier* of that prefix, its nodes
without a successor inside it (every other prefix node reaches one of them), minus
those already implied by the node's predecessors (`schedule_device`)::

    gated S_d   0 a   1 b = f(a)   2 c   3 d = g(b, c), fetched          (end = 4)
    values      a 4: [0, 1]   b 4: [1, 3]   c 4: [2, 3]   d 1: [3, 4]
    budget 9:   K = [1, 1, 3, 3]   (c with a and b would make 12)
    m(2) = 2:   c waits for the frontier of the prefix [a, b], that is for b

A gated `_Recv` on a device with memory of its own (see `memory_transfers.py`) may run
as early as possible when its value, counted from the step's start, keeps the
sequential order's peak within the budget (`_asap_recvs`, the first consumed first);
each other one waits, by edges, for the other inputs of its first consumer on its
device (`_gate_recv`), as well as for its window.

Invariants
----------
* Nodes whose output block is estimated at 0 bytes are not gated (they add nothing),
  nor are the `_Recv` nodes `_asap_recvs` chose (their values count from the start) or
  those of a host-memory receiver (theirs count from their `_Send`'s earliest start).
* If ``K(a) >= a`` for every ``a`` (the budget holds the sequential order's peak), the
  live bytes that step statistics replay stay within the budget less the pool's share:
  at most the `_window_peak`, the largest window's bytes less those made at descendants
  of its first unfinished node, which cannot have started. Otherwise the pass
  falls back to ``K(a) = a`` where it must (run in `S` order there) and logs a warning
  with the sequential peak.
"""

from __future__ import annotations

import logging

import numpy as np

from flowgraph.runtime.memory_budget import MemorySchedule
from flowgraph.runtime.memory_order import successors
from flowgraph.runtime.memory_values import DevicePlan, Value
from flowgraph.runtime.node_table import NodeTable

__all__ = ["schedule_device", "windows"]

_PEAK_POSITIONS = 8000  # `_window_peak` refines its bound up to this many gated nodes

# One logger for the whole pass, whichever of its modules reports.
_log = logging.getLogger("flowgraph.runtime.memory_schedule")


def windows(values: list[Value], end: int, budget: int
            ) -> tuple[list[int], int, list[int]]:
    """Per position ``a`` the largest ``K(a)`` (see above), the sequential peak, and
    per ``a`` the bytes of the window's values, those with ``p <= K(a)`` and ``l >= a``
    (at most `budget` where the budget holds the sequential order's peak).

    ``windows`` has one extra entry, ``end``, so a caller's scan always stops.

    The module docstring's example:

    >>> windows([Value(4, 0, 1), Value(4, 1, 3), Value(4, 2, 3), Value(1, 3, 4)], 4, 9)
    ([1, 1, 3, 3, 4], 9, [8, 8, 9, 9])
    """
    by_first: dict[int, list[Value]] = {}
    by_last: dict[int, list[Value]] = {}
    for v in values:
        by_first.setdefault(v.first, []).append(v)
        by_last.setdefault(v.last, []).append(v)
    seq_peak = max(_sequential_live(values, end))
    out = []
    cur = sum(v.size for v in by_first.get(-1, ()))
    k = -1
    held = []

    def add(j: int, a: int) -> int:
        return sum(v.size for v in by_first.get(j, ()) if v.last >= a)

    for a in range(end):
        if a:
            cur -= sum(v.size for v in by_last.get(a - 1, ()) if v.first <= k)
        while k + 1 < end and (k + 1 <= a or cur + add(k + 1, a) <= budget):
            k += 1
            cur += add(k, a)
        out.append(k)
        held.append(cur)
    out.append(end)
    return out, seq_peak, held


def _sequential_live(values: list[Value], end: int) -> list[int]:
    """Per position ``0..end`` the bytes of the values live there when the gated nodes
    run one at a time in `S` order (a value counts on ``[max(first, 0), last]``)."""
    delta = [0] * (end + 2)
    for v in values:
        delta[max(v.first, 0)] += v.size
        delta[min(v.last, end) + 1] -= v.size
    live, cur = [], 0
    for a in range(end + 1):
        cur += delta[a]
        live.append(cur)
    return live


def schedule_device(table: NodeTable, dp: DevicePlan, preds: list[set[int]],
                    result: MemorySchedule) -> None:
    """Gate the device's nodes (in `S` order) as the module docstring says: the edges
    go to ``result.edges``, the device's sequential peak and, on a pooled device, what
    the gated step leaves the buffer pool to `result` too."""
    nodes = table.nodes
    gated, pos, budget, device = dp.gated, dp.pos, dp.budget, dp.device
    asap = _asap_recvs(dp) | dp.host_recvs
    wins, seq_peak, held = windows(dp.values, len(gated), budget)
    result.sequential_peak[device] = seq_peak
    if seq_peak > budget:
        _log.warning(
            "memory budget %d bytes on %s (less the buffer pool's share) is below the peak "
            "of the most frugal order found (%d bytes): parts of the step run one node at "
            "a time and may still exceed it", budget, device, seq_peak)
    block = {i: sum(dp.sizes[nodes[i].out_base:nodes[i].out_base + nodes[i].n_out])
             for i in gated}
    local_preds = {i: {p for p in preds[i] if p in pos} for i in gated}
    guaranteed: dict[int, int] = {}  # node -> prefix known finished when it starts
    frontier: set[int] = set()
    prefix = 0
    a = 0
    for k, i in enumerate(gated):
        while wins[a] < k:
            a += 1
        g = max((guaranteed[p] for p in local_preds[i]), default=0)
        if i in asap:  # counted live from the step's start: it may run at once
            guaranteed[i] = g
            continue
        if i in dp.recvs:  # ALAP: wait for the other inputs of its first consumer
            g = max(g, _gate_recv(dp, i, preds, local_preds, guaranteed, result))
        if block[i] > 0 and a > g:
            while prefix < a:
                j = gated[prefix]
                frontier.difference_update(local_preds[j])
                frontier.add(j)
                prefix += 1
            for f in sorted(frontier, key=pos.__getitem__):
                if pos[f] >= g and f not in local_preds[i]:
                    result.edges.append((f, i))
                    local_preds[i].add(f)
            g = a
        guaranteed[i] = g
    if dp.pooled:  # the pool may keep what the gated step can never hold
        peak = _window_peak(dp, wins, held, preds, result)
        if peak < budget:
            result.pool_allowance[device] += budget - peak


def _window_peak(dp: DevicePlan, wins: list[int], held: list[int],
                 preds: list[set[int]], result: MemorySchedule) -> int:
    """The most bytes the device's values can hold at once in the gated plan.

    While position ``a`` has not finished, no descendant of its node can have started
    (data, control, transfer and the edges added here), so of the window's ``held[a]``
    the values made at descendants inside ``(a, K(a)]`` are not live yet; every value
    made at a position after ``a`` lives to it at least, so their bytes simply come off.
    Large plans (over `_PEAK_POSITIONS` gated nodes) keep the plain ``max(held)``.
    """
    end = len(dp.gated)
    if not end:
        return sum(v.size for v in dp.values)
    if end > _PEAK_POSITIONS:
        return max(held)
    born = np.zeros(end, np.int64)
    for v in dp.values:
        if v.first >= 0:
            born[v.first] += v.size
    desc = _descendant_bits(dp, preds, result)
    nbytes = (end + 7) // 8
    best = 0
    for a in sorted(range(end), key=held.__getitem__, reverse=True):
        if held[a] <= best:
            break
        mask = desc[a] & ((1 << (wins[a] + 1)) - 1)
        bits = np.unpackbits(np.frombuffer(mask.to_bytes(nbytes, "little"), np.uint8),
                             count=end, bitorder="little")
        best = max(best, held[a] - int(born @ bits))
    return best


def _descendant_bits(dp: DevicePlan, preds: list[set[int]], result: MemorySchedule
                     ) -> list[int]:
    """Per gated position of `dp` a bit set of the gated positions downstream of it.

    `S` (``result.order``) is topological for `preds` and the added edges all go forward
    in it, so one backward pass suffices; loop nodes, at its end, may come out with
    fewer bits, which only makes `_window_peak` larger."""
    succ = successors(preds)
    for f, i in result.edges:
        succ[f].append(i)
    pos = dp.pos
    below = [0] * len(preds)
    for i in reversed(result.order):
        bits = 0
        for j in succ[i]:
            bits |= below[j]
            if j in pos:
                bits |= 1 << pos[j]
        below[i] = bits
    return [below[i] for i in dp.gated]


def _asap_recvs(dp: DevicePlan) -> set[int]:
    """The `_Recv` nodes that may run as early as possible: those whose value, counted
    from the step's start, still leaves the sequential order's peak within the budget
    (taken greedily, the first consumed first). Their values' ``first`` becomes -1."""
    if not dp.recvs:
        return set()
    live = _sequential_live(dp.values, len(dp.gated))
    out = set()
    for r in sorted(dp.recvs, key=dp.pos.__getitem__):
        v, k = dp.recvs[r], dp.pos[r]
        if k and max(live[:k]) + v.size <= dp.budget:
            for a in range(k):
                live[a] += v.size
            v.first = -1
            out.add(r)
    return out


def _gate_recv(dp: DevicePlan, r: int, preds: list[set[int]],
               local_preds: dict[int, set[int]], guaranteed: dict[int, int],
               result: MemorySchedule) -> int:
    """Edges that hold `_Recv` `r` until the other inputs of its first consumer (on this
    device, gated, before `r` in `S`) have been made; the prefix they guarantee."""
    pos = dp.pos
    consumer = next((i for i in dp.gated[pos[r] + 1:] if r in preds[i]), None)
    g = 0
    for c in () if consumer is None else (consumer,):
        for p in sorted(preds[c], key=lambda q: pos.get(q, -1)):
            if p in pos and pos[p] < pos[r] and p not in local_preds[r]:
                result.edges.append((p, r))
                local_preds[r].add(p)
            if p in local_preds[r]:
                g = max(g, guaranteed[p])
    return g
