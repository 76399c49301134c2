"""One device's part of the memory schedule: its values and their live ranges.

A *value* is one node's output block (all its outputs, as step statistics count them)
or one source (feed or constant), sized by `memory_sizes.py`. On a device `d` with a
budget the schedule works on the *gated* nodes of `S_d` (`memory_order.py`), numbered
by position. At position ``i`` a value lives from its producer's start ``p`` (-1 for
sources) to its last consumer's end ``l`` (the end of the step, ``end``, when it is
fetched)::

    gated S_d   0 a = x * 2   1 b = a + 1   2 c = a * b   (end = 3, c is fetched)
    x (a feed): [-1, 0]   a: [0, 2]   b: [1, 2]   c: [2, 3]

Nodes the schedule never gates (control flow, async nodes and what depends on them)
hold their values for the whole step (``[-1, end]``; loop values once per in-flight
iteration, `memory_loops.py`), and the values they read live to the end too. A value
that crosses devices counts as `memory_transfers.py` says. A node whose own inputs
plus outputs exceed a budget the user set is an error (`ResourceExhaustedError`) before
anything runs (`check_nodes`); under a default budget the device's allocator reports
it when it happens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowgraph.framework import errors
from flowgraph.runtime.memory_budget import POOL_FRACTION, MemorySchedule
from flowgraph.runtime.memory_order import pair_key
from flowgraph.runtime.memory_transfers import send_times, waits_here
from flowgraph.runtime.node_table import NodeTable

__all__ = ["DevicePlan", "Value", "check_nodes", "device_plan", "live_values"]


@dataclass
class Value:
    """One value's bytes and live range over a device's gated order.

    >>> Value(4096, -1, 3)
    Value(size=4096, first=-1, last=3, producer=None, frame=0)
    """

    size: int
    first: int  # position of its producer in the gated order (-1: live from the start)
    last: int  # position of its last consumer (`end`: until the step ends)
    producer: int | None = None  # node index, None for a source
    frame: int = 0  # its while-loop frame (0: none); `bound_loops` scales such sizes


@dataclass
class DevicePlan:
    """One device's part of the pass: its nodes, values and budgets."""

    device: str
    budget: int  # for the schedule: the device's budget less the pool's allowance
    local: list[int]  # the device's nodes in `S` order
    gated: list[int]
    pos: dict[int, int]
    values: list[Value]
    sizes: list[int]  # per slot (shared by all devices)
    recvs: dict[int, Value] = field(default_factory=dict)  # gated `_Recv` -> its value
    pooled: bool = False  # the CPU buffer pool shares the device's memory
    # `_Recv` nodes of a host-memory device: their values count from their `_Send`'s
    # earliest start, so delaying them would save nothing; they are never gated
    host_recvs: set[int] = field(default_factory=set)


def device_plan(table: NodeTable, local: list[int], excluded: set[int], sizes: list[int],
                fetched: set[int], node_frame: list[int], stacks: dict[int, int],
                device: str, budget: int, pooled: bool, strict: bool,
                preds: list[set[int]], result: MemorySchedule) -> DevicePlan:
    """The `DevicePlan` of `device` (its nodes `local`, in `S` order): values, the
    pool's allowance (recorded in `result`), and the `_Recv` nodes to gate.

    `strict`: the budget was set by the user (`check_nodes`); `stacks`: per stack push
    node the bytes its stack keeps (`memory_loops.stack_bytes`)."""
    gated = [i for i in local if i not in excluded]
    pos = {i: k for k, i in enumerate(gated)}
    end = len(gated)
    values = live_values(table, local, gated, pos, excluded, sizes, fetched, end,
                         node_frame, preds, result.order)
    own = check_nodes(table, local, values, sizes, device, budget, strict)
    stack = sum(stacks.get(i, 0) for i in local)
    if stack:
        values.append(Value(stack, -1, end))
        result.stack_bytes[device] = stack
    allowance = min(budget // POOL_FRACTION, max(0, budget - own)) if pooled else 0
    if pooled:
        result.pool_allowance[device] = allowance
    recvs = {v.producer: v for v in values
             if v.producer in pos and table.nodes[v.producer].op_type == "_Recv" and v.size}
    host_recvs = set()
    if recvs and table.nodes[gated[0]].placed_on.backend.host_memory:
        sent = send_times(table, pos, preds, result.order)
        for r, v in recvs.items():  # the wait in the rendezvous counts here
            v.first = min(v.first, sent.get(pair_key(table.nodes[r]), -1))
            host_recvs.add(r)
        recvs = {}
    return DevicePlan(device, budget - allowance, local, gated, pos, values, sizes, recvs,
                      pooled, host_recvs)


def live_values(table: NodeTable, local: list[int], gated: list[int], pos: dict[int, int],
                excluded: set[int], sizes: list[int], fetched: set[int], end: int,
                node_frame: list[int], preds: list[set[int]], order: list[int]
                ) -> list[Value]:
    """This device's values with their live ranges over the gated order.

    >>> live_values(NodeTable(), [], [], {}, set(), [], set(), 0, [], [], [])
    []
    """
    nodes = table.nodes
    producer = table.producers()
    last: dict[int, int] = {}  # value key (producer node, or -1 - slot) -> last position
    waits = waits_here(table, local, pos, preds, order, end)

    def key(s: int) -> int:
        return producer[s] if s in producer else -1 - s

    for i in local:
        # a value read by an excluded node lives to the end; one that waits in the
        # rendezvous for a receiver with memory of its own, until it is taken
        at = max(waits[i], pos.get(i, end)) if i in waits else pos.get(i, end)
        for s in nodes[i].input_slots:
            last[key(s)] = max(last.get(key(s), -1), at)
    out = []
    for i in local:
        n = nodes[i]
        slots = range(n.out_base, n.out_base + n.n_out)
        if not any(table.uses[s] for s in slots):
            continue
        size = sum(sizes[s] for s in slots)
        if i in excluded:
            out.append(Value(size, -1, end, i, node_frame[i]))
            continue
        stop = end if any(s in fetched for s in slots) else max(last.get(i, -1), pos[i])
        out.append(Value(size, pos[i], stop, i))
    for k, stop in last.items():
        if k < 0:
            s = -1 - k
            out.append(Value(sizes[s], -1, end if s in fetched else stop))
    return out


def check_nodes(table: NodeTable, local: list[int], values: list[Value],
                sizes: list[int], device: str, budget: int, strict: bool = True) -> int:
    """The most bytes one node's inputs and outputs take; raise ResourceExhaustedError
    for a node whose inputs and outputs exceed `budget` when `strict` (a budget set by
    the user; a default budget, the device's memory, leaves that to the allocator's
    out-of-memory error, which also names the live tensors).

    >>> check_nodes(NodeTable(), [], [], [], "/device:CPU:0", 1024)
    0
    """
    most = 0
    nodes = table.nodes
    producer = table.producers()
    block = {v.producer: v.size for v in values if v.producer is not None}
    for i in local:
        n = nodes[i]
        own = block.get(i, 0)
        seen = set()
        for s in n.input_slots:
            k = producer.get(s, -1 - s)
            if k not in seen:
                seen.add(k)
                own += block.get(k, 0) if k >= 0 else sizes[s]
        if own > budget and strict:
            raise errors.ResourceExhaustedError(
                None, n.op,
                f"Memory budget too small for op '{n.name}' ({n.op_type}) on {device}: "
                f"its inputs and outputs take {own} bytes ({own / 2**20:.1f} MiB), the "
                f"budget is {budget} bytes ({budget / 2**20:.1f} MiB). Raise "
                f"ConfigProto.memory_budget_bytes or RunOptions.memory_budget_bytes to "
                f"at least {own}, or make the op's tensors smaller.")
        most = max(most, own)
    return most
