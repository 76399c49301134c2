"""Pass 7b, memory schedule: control edges that keep each device's live bytes in a budget.

Without it the executor runs whatever is ready, so a producer whose consumer also waits
for a slow chain makes its (possibly huge) value at once and holds it until the chain
ends. With a budget (``ConfigProto(memory_budget_bytes=...)`` or the per-run
``RunOptions(memory_budget_bytes=...)``, see `docs/memory.md`) this pass adds control
edges to the *plan* (the user's graph is never touched) so that producers wait until
enough memory has been released, while independent work still overlaps when the budget
allows. Without a budget it does not run.

State
-----
Per slot an estimated size (`estimate_slot_bytes`): static shapes and dtypes; where a
budget is set, the session keys plans by the fed shapes too and static shape inference
runs again with them (`infer_fed_shapes`); what neither tells (a size that depends on a
fed *value*) is counted 0, listed in `MemorySchedule.unknown_sizes`, and measured by the
plan's first run (`measure_sizes`), after which the session compiles the plan again with
the measured sizes. Plan constants count by their value; a ref output (the variable
itself) counts 0. A *value* is one node's output block (all its outputs, as step
statistics count them) or one source (feed or constant). The pass computes one global
order `S` of the nodes (a depth-first post-order from the sinks that visits the deepest
input first: a long chain of small values runs before the short branches that need its
end, so large temporaries are made as late as possible) and, per device `d` with a
budget, `S_d`, the subsequence of `S` on `d`. At position ``i`` of `S_d` a value lives
from its producer's start ``p`` (-1 for sources) to its last consumer's end ``l`` (the
end of the step when it is fetched).

Budgets come from the run's or the config's spec, else from the device's default
(`default_budgets`: an OpenCL device's memory limit; none on the CPU). On a device whose
memory the CPU buffer pool shares (``pooled``) the pool is lent ``budget // 8`` (less
where a node needs more than the rest) and the schedule works with the remainder; once
the edges are in, the pool also gets what the gated step can never hold
(`_window_peak`), and is capped at its share during the plan's runs (`pool_cap`). A
budget with room to spare thus leaves the pool every array the step reuses (a tight one
makes the step allocate them anew).

Loops: a node inside a `while_loop` frame counts its block once per in-flight iteration
of its frame and of every enclosing frame (the frame's per-iteration live set, an upper
bound: every block of the body). `_bound_loops` lowers ``parallel_iterations`` (the
largest first, one at a time) until each device's loop bytes fit what the rest of the
step leaves at its sequential peak. The values that loop gradients keep on stacks
(`StackPushV2`, `StackPushAt`) count for the whole step: the pushed value's size times
the pushes measured in the first run (before that, times the in-flight iterations).

Let ``a`` be the position of the first node of `S_d` that has not finished. Any node at
a position ``k`` may start once every node before ``m(k)`` has finished; then the nodes
that have started all lie at positions ``<= K(a)`` and the live values are among those
with ``p <= K(a)`` and ``l >= a``. `_windows` chooses ``K(a)`` as large as the budget
allows for that set (a two-pointer sweep), and ``m(k)`` is the smallest ``a`` with
``K(a) >= k``. "Every node before ``m`` has finished" is enforced with edges from the
*frontier* of that prefix, its nodes without a successor inside it (every other prefix
node reaches one of them), minus those already implied by the node's predecessors.

Transfers. Between its `_Send` and its `_Recv` a value waits in the step's rendezvous,
as a host array. The *receiving* device counts that wait when its memory is host memory
(a CPU): the array it receives is that very array, and only the receiver's order says
when the wait ends (when its `_Recv` runs). It counts the value from the earliest
position the `_Send` can run at, the last node of its own order that the `_Send` waits
for (`_send_times`; -1, the step's start, when none). Delaying such a `_Recv` would
then save nothing, so it is never gated (``host_recvs``). A receiver with memory of its
own (OpenCL) holds the value only from its `_Recv` on, so there the whitepaper's
ASAP/ALAP applies: `_recv_alap_order` moves each gated `_Recv` in `S` to just before its
first successor, its as-late-as-possible place; `_asap_recvs` takes the `_Recv` nodes
(the first consumed first) whose value, counted from the step's start instead, keeps
the sequential order's peak within the budget: those run as early as possible, ungated
(their values count from position -1). Each other `_Recv` waits, by edges, for the other
inputs of its first consumer on its device (`_gate_recv`), as well as for its window.
Its wait in host memory counts on the sending device, when that is a CPU, until the
first node there that depends on the `_Recv` (`_waits_here`; the end of the step when
none does: the sender's order cannot tell when the receiver takes it).
Between two OpenCL devices the host copy waiting in the rendezvous counts nowhere::

    S_CPU:0   0 slice   1 Sum   2 sin ... 21 add_19   22 _Recv   23 Sum_1
    CPU:1     tile(x + add_19) -> _Send               (waits for add_19)
    the sent value counts on CPU:0 over [21, 23], not [22, 23] nor [-1, 23]

Invariants
----------
* Every edge added goes forward in `S`, a topological order of the plan's data edges,
  its control edges and each `_Send` -> `_Recv` pair, so the plan stays acyclic and no
  step can deadlock.
* Edges join nodes of one device only; no edge starts or ends at a control-flow node
  (`Switch`, `Merge`, `Enter`, `Exit`, `NextIteration`), an async node other than
  `_Recv` (queues may wait on other nodes of the step), or any node downstream of one.
  Such nodes are never gated, their values count as live for the whole step (loop
  values once per in-flight iteration, see above), and the values they read live to the
  end too. An edge source is thus never dead and never inside a while-loop frame.
* Nodes whose output block is estimated at 0 bytes are not gated (they add nothing),
  nor are the `_Recv` nodes `_asap_recvs` chose (their values count from the start) or
  those of a host-memory receiver (theirs count from their `_Send`'s earliest start).
* If ``K(a) >= a`` for every ``a`` (the budget holds the sequential order's peak), the
  live bytes that step statistics replay stay within the budget less the pool's share:
  at most the `_window_peak`, the largest window's bytes less those made at descendants
  of its first unfinished node, which cannot have started. Otherwise the pass
  falls back to ``K(a) = a`` where it must (run in `S` order there) and logs a warning
  with the sequential peak. A node whose own inputs plus outputs exceed a budget the
  user set is an error (`ResourceExhaustedError`) before anything runs; under a default
  budget the device's allocator reports it when it happens.
"""

from __future__ import annotations

import contextlib
import logging
import math
from dataclasses import dataclass, field

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeTable
from flowgraph.runtime.specialize import refine_outputs

__all__ = ["MemorySchedule", "budget_key", "default_budgets", "device_budgets",
           "estimate_slot_bytes",
           "infer_fed_shapes", "measure_sizes", "memory_schedule", "pool_cap"]

POOL_FRACTION = 8  # a pooled device lends at least 1/8 of its budget to the CPU pool
_PEAK_POSITIONS = 8000  # `_window_peak` refines its bound up to this many gated nodes
_STACK_PUSHES = ("StackPushV2", "StackPushAt")  # input 1 is kept until popped

_log = logging.getLogger(__name__)


@dataclass
class MemorySchedule:
    """What the pass decided (kept on the compiled plan as ``cp.memory_schedule``).

    `budgets` and `sequential_peak` map device names to bytes; `order` is the global
    memory-frugal order (node indices); `edges` the control edges added; `unknown_sizes`
    names nodes whose outputs' shapes were unknown (counted as 0 bytes).
    """

    budgets: dict[str, int]
    order: list[int] = field(default_factory=list)
    sequential_peak: dict[str, int] = field(default_factory=dict)
    edges: list[tuple[int, int]] = field(default_factory=list)
    unknown_sizes: list[str] = field(default_factory=list)
    # Per pooled (CPU) device the bytes lent to the buffer pool; `pool_cap`, the pool's
    # cap during this plan's runs (None: no pooled device has a budget).
    pool_allowance: dict[str, int] = field(default_factory=dict)
    pool_cap: int | None = None
    # Per while-loop frame name its ``parallel_iterations`` as bounded here, and per
    # device the bytes counted for loop frames and the stacks of loop gradients.
    loop_parallel: dict[str, int] = field(default_factory=dict)
    loop_bytes: dict[str, int] = field(default_factory=dict)
    stack_bytes: dict[str, int] = field(default_factory=dict)
    # True when sizes the shapes cannot tell (unknown dims, stack depths) were guessed:
    # the session traces the plan's next run and recompiles with `measure_sizes`.
    needs_measure: bool = False
    # The pools `pool_cap` caps, found on the plan's first run (the step reuses them).
    pools: list | None = field(default=None, repr=False, compare=False)


def device_budgets(spec, device_names: list[str], defaults: dict[str, int] | None = None
                   ) -> dict[str, int]:
    """Per device name its budget in bytes, from a config value (0 or absent: the
    device's default from `defaults`, else none).

    `spec` is an int (every device) or a dict keyed by device name, short name
    (``/device:CPU:0``) or device type (``CPU``). `defaults` holds the default budgets
    (`default_budgets`: an OpenCL device's memory limit; none on the CPU).

    >>> device_budgets({"CPU": 1 << 20}, ["/job:localhost/replica:0/task:0/device:CPU:0"])
    {'/job:localhost/replica:0/task:0/device:CPU:0': 1048576}
    """
    out: dict[str, int] = {}
    defaults = defaults or {}
    for name in device_names:
        if isinstance(spec, dict):
            short = name[name.find("/device:"):] if "/device:" in name else name
            dtype = short.split(":")[-2] if short.count(":") >= 2 else short
            value = spec.get(name, spec.get(short, spec.get(dtype, 0)))
        else:
            value = spec or 0
        if value == 0 and not isinstance(value, bool):
            value = defaults.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"memory_budget_bytes for {name} must be a non-negative int "
                             f"(bytes; 0 for no budget), but got {value!r}")
        if value:
            out[name] = value
    return out


def budget_key(spec):
    """A hashable form of a budget spec, for plan caches.

    >>> budget_key({"CPU": 4096})
    (('CPU', 4096),)
    """
    return tuple(sorted(spec.items())) if isinstance(spec, dict) else spec


def default_budgets(devices) -> dict[str, int]:
    """The budget a device gets when the config sets none: its memory limit on devices
    with memory of their own (OpenCL, ``Device.memory_limit``); none on the CPU.

    >>> default_budgets([])
    {}
    """
    return {d.name: int(d.memory_limit) for d in devices
            if not d.backend.host_memory and d.memory_limit}


def estimate_slot_bytes(table: NodeTable, feed_shapes: dict | None = None,
                        measured: dict[str, tuple[int, int]] | None = None
                        ) -> tuple[list[int], list[str]]:
    """Per slot its estimated bytes, and the names of nodes with unknown output sizes.

    Static shapes first; `feed_shapes` (tensor -> shape of the value fed) refines what
    they leave unknown (`infer_fed_shapes`); `measured` (`measure_sizes`) sizes the rest.
    """
    sizes = [0] * table.num_slots
    unknown: list[str] = []
    inferred = infer_fed_shapes(table, feed_shapes) if feed_shapes else {}
    measured = measured or {}
    for s, value in enumerate(table.initial):
        if value is not None:
            sizes[s] = int(getattr(value, "nbytes", 0) or 0)
    for t, s in table.feed_slots.items():
        n = _static_bytes(t, inferred.get(t))
        sizes[s] = n or 0
    sent: dict[str, int] = {}
    for node in table.nodes:
        if node.op is not None:
            missing = False
            for k, t in enumerate(node.op._outputs[:node.n_out]):
                n = _static_bytes(t, inferred.get(t))
                missing = missing or n is None
                sizes[node.out_base + k] = n or 0
            if missing:
                seen = measured.get(node.name)
                if seen is None:
                    unknown.append(node.name)
                else:  # the block's largest measured size, less what shapes told
                    block = sum(sizes[node.out_base:node.out_base + node.n_out])
                    sizes[node.out_base] += max(0, seen[0] - block)
        elif node.op_type == "_Send":
            sent[_pair_key(node)] = sizes[node.input_slots[0]]
        elif node.op_type == "_Recv" and node.n_out:
            sizes[node.out_base] = sent.get(_pair_key(node), 0)
        elif node.n_out and node.input_slots:  # _ToDevice: a copy of its input
            sizes[node.out_base] = sizes[node.input_slots[0]]
    return sizes, unknown


def _static_bytes(t, shape: TensorShape | None = None) -> int | None:
    if t.dtype.is_ref_dtype:
        return 0
    shape = t.shape if shape is None else shape
    if not shape.is_fully_defined():
        return None
    return math.prod(shape.as_list()) * t.dtype.size


def infer_fed_shapes(table: NodeTable, feed_shapes: dict) -> dict:
    """Static shape inference re-run with the fed shapes: per tensor whose shape the
    feeds refine, its refined `TensorShape` (feeds included).

    Each op's shape function runs again, in the table's (topological) order, on its
    inputs' refined shapes; a shape function that fails or disagrees leaves the graph's
    shape as it is. Inputs are looked up by the slot they read, so a tensor the rewrite
    pass replaced (its consumers read another op's output) still gets its refined shape.

    >>> infer_fed_shapes(NodeTable(), {})
    {}
    """
    known: dict = {}
    by_slot: dict[int, TensorShape] = {}
    for t, shape in feed_shapes.items():
        try:
            known[t] = t.shape.merge_with(as_shape(tuple(shape)))
        except (TypeError, ValueError):
            continue
        if t in table.feed_slots:
            by_slot[table.feed_slots[t]] = known[t]
    for node in table.nodes:
        op = node.op
        if op is None or not node.n_out:
            continue
        ins = op._inputs
        slots = node.input_slots if len(node.input_slots) == len(ins) and \
            not getattr(node, "fused", None) else [None] * len(ins)
        shapes_in = [by_slot.get(s, known.get(t)) for t, s in zip(ins, slots)]
        if all(shape is None for shape in shapes_in):
            continue
        for k, merged in refine_outputs(op, [t.shape if shape is None else shape
                                             for t, shape in zip(ins, shapes_in)],
                                        feed_shapes):
            known[op._outputs[k]] = merged
            if k < node.n_out:
                by_slot[node.out_base + k] = merged
    return known


def measure_sizes(cp, trace) -> dict[str, tuple[int, int]]:
    """Per node name of a traced step its largest output block (bytes) and how often it
    ran, for the nodes `memory_schedule` could not size (``cp.memory_schedule``)."""
    want = set(cp.memory_schedule.unknown_sizes) if cp.memory_schedule else set()
    want.update(n.name for n in cp.nodes if n.op_type in _STACK_PUSHES)
    out: dict[str, tuple[int, int]] = {}
    for node, _t0, _t1, _tid, out_bytes in trace:
        name = cp.nodes[node].name
        if name in want:
            big, count = out.get(name, (0, 0))
            out[name] = (max(big, int(out_bytes)), count + 1)
    return out


@contextlib.contextmanager
def pool_cap(schedule: MemorySchedule | None, devices=()):
    """Cap the buffer pools of `devices`' backends (the CPU's, `Backend.buffer_pool`)
    at ``schedule.pool_cap`` bytes while a budgeted step runs (nothing without one).

    >>> with pool_cap(None):
    ...     pass
    """
    if schedule is None or schedule.pool_cap is None:
        yield
        return
    pools = schedule.pools
    if pools is None:  # pools whose own limit the cap lowers, once per plan
        found = {id(p): p for p in (d.backend.buffer_pool() for d in devices)
                 if p is not None and schedule.pool_cap < getattr(p, "BUDGET", math.inf)}
        pools = schedule.pools = list(found.values())
    for pool in pools:
        pool.push_cap(schedule.pool_cap)
    try:
        yield
    finally:
        for pool in pools:
            pool.pop_cap(schedule.pool_cap)


def memory_schedule(table: NodeTable, fetch_slots: list[int], budget_spec, *,
                    defaults: dict[str, int] | None = None, pooled=(),
                    feed_shapes: dict | None = None,
                    measured: dict[str, tuple[int, int]] | None = None,
                    frames=None) -> MemorySchedule | None:
    """Add the control edges that keep `table` within `budget_spec` (see the module
    docstring); None when no device has a budget.

    `defaults`: budgets of devices the spec leaves at 0 (`default_budgets`); `pooled`:
    names of devices whose memory the CPU buffer pool shares; `feed_shapes` and
    `measured`: see `estimate_slot_bytes`; `frames` (`FrameTables`, plans with loops):
    its ``frame_parallel`` is lowered where the budget requires.

    >>> memory_schedule(NodeTable(), [], 0) is None
    True
    """
    nodes = table.nodes
    names = sorted({n.device for n in nodes})
    budgets = device_budgets(budget_spec, names, defaults)
    if not budgets:
        return None
    explicit = device_budgets(budget_spec, names)  # the others: OOM reports misfits
    sizes, unknown = estimate_slot_bytes(table, feed_shapes, measured)
    preds = _predecessors(table)
    excluded = _control_flow_closure(table, preds)
    order = _recv_alap_order(table, _frugal_order(preds), preds, excluded)
    result = MemorySchedule(budgets, order, unknown_sizes=unknown)
    node_frame = frames.node_frame if frames is not None else [0] * len(nodes)
    stacks = _stacks(table, sizes, measured, node_frame, frames, result)
    plans = [_device_plan(table, [i for i in order if nodes[i].device == device], excluded,
                          sizes, set(fetch_slots), node_frame, stacks, device, budget,
                          device in pooled, device in explicit, preds, result)
             for device, budget in budgets.items()]
    if frames is not None and len(frames.frame_parent) > 1:
        _bound_loops(plans, frames, result)
    for dp in plans:
        _schedule_device(table, dp, preds, result)
    allowances = [result.pool_allowance[d] for d in budgets if d in pooled]
    result.pool_cap = min(allowances) if allowances else None
    result.needs_measure = measured is None and bool(unknown or result.needs_measure)
    table.control_edges.extend(result.edges)
    return result


def _stacks(table: NodeTable, sizes: list[int], measured, node_frame: list[int], frames,
            result: MemorySchedule) -> dict[int, int]:
    """Per stack push node the bytes its stack keeps: the pushed value times the pushes
    measured in an earlier run, or, unmeasured, times the in-flight iterations."""
    out = {}
    for i, n in enumerate(table.nodes):
        if n.op_type not in _STACK_PUSHES or len(n.input_slots) < 2:
            continue
        seen = (measured or {}).get(n.name)
        if seen is not None:
            count = seen[1]
        else:
            result.needs_measure = True
            count, f = 1, node_frame[i]
            while f > 0:
                count *= frames.frame_parallel[f]
                f = frames.frame_parent[f]
        out[i] = sizes[n.input_slots[1]] * count
    return out


@dataclass
class _DevicePlan:
    """One device's part of the pass: its nodes, values and budgets."""

    device: str
    budget: int  # for the schedule: the device's budget less the pool's allowance
    local: list[int]  # the device's nodes in `S` order
    gated: list[int]
    pos: dict[int, int]
    values: list[_Value]
    sizes: list[int]  # per slot (shared by all devices)
    recvs: dict[int, _Value] = field(default_factory=dict)  # gated `_Recv` -> its value
    pooled: bool = False  # the CPU buffer pool shares the device's memory
    # `_Recv` nodes of a host-memory device: their values count from their `_Send`'s
    # earliest start, so delaying them would save nothing; they are never gated
    host_recvs: set[int] = field(default_factory=set)


def _device_plan(table: NodeTable, local: list[int], excluded: set[int], sizes: list[int],
                 fetched: set[int], node_frame: list[int], stacks: dict[int, int],
                 device: str, budget: int, pooled: bool, strict: bool,
                 preds: list[set[int]], result: MemorySchedule) -> _DevicePlan:
    gated = [i for i in local if i not in excluded]
    pos = {i: k for k, i in enumerate(gated)}
    end = len(gated)
    values = _values(table, local, gated, pos, excluded, sizes, fetched, end, node_frame,
                     preds, result.order)
    own = _check_nodes(table, local, values, sizes, device, budget, strict)
    stack = sum(stacks.get(i, 0) for i in local)
    if stack:
        values.append(_Value(stack, -1, end))
        result.stack_bytes[device] = stack
    allowance = min(budget // POOL_FRACTION, max(0, budget - own)) if pooled else 0
    if pooled:
        result.pool_allowance[device] = allowance
    recvs = {v.producer: v for v in values
             if v.producer in pos and table.nodes[v.producer].op_type == "_Recv" and v.size}
    host_recvs = set()
    if recvs and table.nodes[gated[0]].placed_on.backend.host_memory:
        sent = _send_times(table, pos, preds, result.order)
        for r, v in recvs.items():  # the wait in the rendezvous counts here
            v.first = min(v.first, sent.get(_pair_key(table.nodes[r]), -1))
            host_recvs.add(r)
        recvs = {}
    return _DevicePlan(device, budget - allowance, local, gated, pos, values, sizes, recvs,
                       pooled, host_recvs)


def _send_times(table: NodeTable, pos: dict[int, int], preds: list[set[int]],
                order: list[int]) -> dict[tuple[str, str], int]:
    """Per transfer (`_pair_key`) the last position of `pos` (one device's gated order)
    that its `_Send` waits for, directly or through other nodes (-1: none); until that
    node has finished, the value cannot be in the rendezvous. Loop nodes, at the end of
    `order`, may come out earlier than they are, which only counts their values longer."""
    after = [-1] * len(preds)
    out = {}
    for i in order:
        a = -1
        for p in preds[i]:
            a = max(a, after[p], pos.get(p, -1))
        after[i] = a
        if table.nodes[i].op_type == "_Send":
            out[_pair_key(table.nodes[i])] = a
    return out


def _bound_loops(plans: list[_DevicePlan], frames, result: MemorySchedule) -> None:
    """Lower ``parallel_iterations`` until every device's loop values (one
    per-iteration live set per in-flight iteration) fit what the rest of the step
    leaves of its budget at its sequential peak."""
    parallel = list(frames.frame_parallel)
    parent = frames.frame_parent

    def mult(f: int) -> int:
        m = 1
        while f > 0:
            m *= parallel[f]
            f = parent[f]
        return m

    def loop_bytes(dp: _DevicePlan) -> int:
        return sum(v.size * mult(v.frame) for v in dp.values if v.frame)

    room = {}
    for dp in plans:
        rest = [v for v in dp.values if not v.frame]
        room[dp.device] = dp.budget - _windows(rest, len(dp.gated), dp.budget)[1]
    while True:
        over = [dp for dp in plans if loop_bytes(dp) > room[dp.device]]
        chains = set()
        for dp in over:
            for v in dp.values:
                f = v.frame
                while f > 0:
                    chains.add(f)
                    f = parent[f]
        candidates = [f for f in chains if parallel[f] > 1]
        if not candidates:
            if over:
                _log.warning(
                    "memory budget on %s: one iteration of each while loop needs %d "
                    "bytes, more than the %d the rest of the step leaves; the loops run "
                    "one iteration at a time and may exceed it", over[0].device,
                    loop_bytes(over[0]), room[over[0].device])
            break
        f = max(candidates, key=lambda f: (parallel[f], -f))
        parallel[f] -= 1
    names = {fid: name for name, fid in frames.frame_id.items()}
    result.loop_parallel = {names.get(f, str(f)): parallel[f] for f in range(1, len(parallel))}
    frames.frame_parallel[:] = parallel
    for dp in plans:
        result.loop_bytes[dp.device] = loop_bytes(dp)
        for v in dp.values:
            if v.frame:
                v.size *= mult(v.frame)
                v.frame = 0


def _predecessors(table: NodeTable) -> list[set[int]]:
    """Per node the nodes it waits for: data, control, and a `_Recv`'s `_Send`."""
    producer = table.producers()
    preds: list[set[int]] = [
        {producer[s] for s in n.input_slots if s in producer} for n in table.nodes]
    for a, b in table.control_edges:
        preds[b].add(a)
    sends = {_pair_key(n): i for i, n in enumerate(table.nodes) if n.op_type == "_Send"}
    for i, n in enumerate(table.nodes):
        if n.op_type == "_Recv":
            j = sends.get(_pair_key(n))
            if j is not None:
                preds[i].add(j)
    return preds


def _pair_key(node) -> tuple[str, str]:
    """What a `_Send` node and its `_Recv` share: `partition.py` names them
    ``_send_<tensor>_to_<rest>`` and ``_recv_<tensor>_on_<rest>``, with the tensor's name
    as their one input, so (tensor, rest) holds even where an op name in `rest` (the
    reader a pair is made for) contains ``_to_`` or ``_on_``."""
    tensor = node.inputs[0]
    return tensor, node.name[len("_send_") + len(tensor) + len("_to_"):]


def _control_flow_closure(table: NodeTable, preds: list[set[int]]) -> set[int]:
    """Control-flow and async (not `_Recv`) nodes and everything downstream of them."""
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


def _frugal_order(preds: list[set[int]]) -> list[int]:
    """Depth-first post-order from the sinks, the deepest input first (see above)."""
    n = len(preds)
    depth = [0] * n
    for i in _topological(preds):
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
    order.extend(i for i in _topological(preds) if not seen[i])  # cycles: loops
    return order


def _topological(preds: list[set[int]]) -> list[int]:
    """Kahn's order; nodes on a cycle (a loop's back edge) come last, in table order."""
    n = len(preds)
    count = [len(p) for p in preds]
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
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


def _schedule_device(table: NodeTable, dp: _DevicePlan, preds: list[set[int]],
                     result: MemorySchedule) -> None:
    """Gate the device's nodes (in `S` order) as the module docstring says."""
    nodes = table.nodes
    gated, pos, budget, device = dp.gated, dp.pos, dp.budget, dp.device
    asap = _asap_recvs(dp) | dp.host_recvs
    windows, seq_peak, held = _windows(dp.values, len(gated), budget)
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
        while windows[a] < k:
            a += 1
        g = max((guaranteed[p] for p in local_preds[i]), default=0)
        if i in asap:  # counted live from the step's start: it may run at once
            guaranteed[i] = g
            continue
        if i in dp.recvs:  # ALAP: wait for the other inputs of its first consumer
            g = max(g, _gate_recv(table, dp, i, preds, local_preds, guaranteed, result))
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
        peak = _window_peak(dp, windows, held, preds, result)
        if peak < budget:
            result.pool_allowance[device] += budget - peak


def _window_peak(dp: _DevicePlan, windows: list[int], held: list[int],
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
        mask = desc[a] & ((1 << (windows[a] + 1)) - 1)
        bits = np.unpackbits(np.frombuffer(mask.to_bytes(nbytes, "little"), np.uint8),
                             count=end, bitorder="little")
        best = max(best, held[a] - int(born @ bits))
    return best


def _descendant_bits(dp: _DevicePlan, preds: list[set[int]], result: MemorySchedule
                     ) -> list[int]:
    """Per gated position of `dp` a bit set of the gated positions downstream of it.

    `S` (``result.order``) is topological for `preds` and the added edges all go forward
    in it, so one backward pass suffices; loop nodes, at its end, may come out with
    fewer bits, which only makes `_window_peak` larger."""
    n = len(preds)
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    for f, i in result.edges:
        succ[f].append(i)
    pos = dp.pos
    below = [0] * n
    for i in reversed(result.order):
        bits = 0
        for j in succ[i]:
            bits |= below[j]
            if j in pos:
                bits |= 1 << pos[j]
        below[i] = bits
    return [below[i] for i in dp.gated]


def _recv_alap_order(table: NodeTable, order: list[int], preds: list[set[int]],
                     excluded: set[int]) -> list[int]:
    """`order` with each gated `_Recv` moved to just before its first successor (its
    as-late-as-possible place); the order stays topological, since a `_Recv` waits for
    nothing on its own device that comes after it."""
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


def _asap_recvs(dp: _DevicePlan) -> set[int]:
    """The `_Recv` nodes that may run as early as possible: those whose value, counted
    from the step's start, still leaves the sequential order's peak within the budget
    (taken greedily, the first consumed first). Their values' ``first`` becomes -1."""
    if not dp.recvs:
        return set()
    end = len(dp.gated)
    live = [0] * (end + 1)
    delta = [0] * (end + 2)
    for v in dp.values:
        delta[max(v.first, 0)] += v.size
        delta[min(v.last, end) + 1] -= v.size
    cur = 0
    for a in range(end + 1):
        cur += delta[a]
        live[a] = cur
    out = set()
    for r in sorted(dp.recvs, key=dp.pos.__getitem__):
        v, k = dp.recvs[r], dp.pos[r]
        if k and max(live[:k]) + v.size <= dp.budget:
            for a in range(k):
                live[a] += v.size
            v.first = -1
            out.add(r)
    return out


def _gate_recv(table: NodeTable, dp: _DevicePlan, r: int, preds: list[set[int]],
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


@dataclass
class _Value:
    size: int
    first: int  # position of its producer in the gated order (-1: live from the start)
    last: int  # position of its last consumer (`end`: until the step ends)
    producer: int | None = None  # node index, None for a source
    frame: int = 0  # its while-loop frame (0: none); `_bound_loops` scales such sizes


def _values(table: NodeTable, local: list[int], gated: list[int], pos: dict[int, int],
            excluded: set[int], sizes: list[int], fetched: set[int], end: int,
            node_frame: list[int], preds: list[set[int]], order: list[int]
            ) -> list[_Value]:
    """This device's values with their live ranges over the gated order."""
    nodes = table.nodes
    producer = table.producers()
    last: dict[int, int] = {}  # value key (producer node, or -1 - slot) -> last position
    waits = _waits_here(table, local, pos, preds, order, end)

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
            out.append(_Value(size, -1, end, i, node_frame[i]))
            continue
        stop = end if any(s in fetched for s in slots) else max(last.get(i, -1), pos[i])
        out.append(_Value(size, pos[i], stop, i))
    for k, stop in last.items():
        if k < 0:
            s = -1 - k
            out.append(_Value(sizes[s], -1, end if s in fetched else stop))
    return out


def _waits_here(table: NodeTable, local: list[int], pos: dict[int, int],
                preds: list[set[int]], order: list[int], end: int) -> dict[int, int]:
    """Per `_Send` of `local` whose value waits in this (host-memory) device's memory
    until a device with memory of its own takes it (a host receiver counts the wait
    itself, see the module docstring): the last position of `pos` it may wait to, the
    first node here that depends on the `_Recv` (it cannot start before the value was
    taken), else `end`."""
    nodes = table.nodes
    sends = [i for i in local if nodes[i].op_type == "_Send"]
    if not sends or not nodes[sends[0]].placed_on.backend.host_memory:
        return {}
    recvs = {_pair_key(n): r for r, n in enumerate(nodes)
             if n.op_type == "_Recv" and not n.placed_on.backend.host_memory}
    sends = {i: recvs[_pair_key(nodes[i])] for i in sends
             if _pair_key(nodes[i]) in recvs}
    if not sends:
        return {}
    succ: list[list[int]] = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for q in ps:
            succ[q].append(i)
    first = [end] * len(preds)  # per node: the first position here downstream of it
    for i in reversed(order):  # loop nodes at the end may keep `end`: longer, still safe
        for j in succ[i]:
            first[i] = min(first[i], first[j], pos.get(j, end))
    return {i: first[r] for i, r in sends.items()}


def _check_nodes(table: NodeTable, local: list[int], values: list[_Value],
                 sizes: list[int], device: str, budget: int, strict: bool = True) -> int:
    """The most bytes one node's inputs and outputs take; raise ResourceExhaustedError
    for a node whose inputs and outputs exceed `budget` when `strict` (a budget set by
    the user; a default budget, the device's memory, leaves that to the allocator's
    out-of-memory error, which also names the live tensors)."""
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


def _windows(values: list[_Value], end: int, budget: int
             ) -> tuple[list[int], int, list[int]]:
    """Per position ``a`` the largest ``K(a)`` (see above), the sequential peak, and
    per ``a`` the bytes of the window's values, those with ``p <= K(a)`` and ``l >= a``
    (at most `budget` where the budget holds the sequential order's peak).

    ``windows`` has one extra entry, ``end``, so a caller's scan always stops."""
    by_first: dict[int, list[_Value]] = {}
    by_last: dict[int, list[_Value]] = {}
    for v in values:
        by_first.setdefault(v.first, []).append(v)
        by_last.setdefault(v.last, []).append(v)
    delta = [0] * (end + 2)  # sequential live bytes: a value counts on [first, last]
    for v in values:
        delta[max(v.first, 0)] += v.size
        delta[min(v.last, end) + 1] -= v.size
    seq_peak, live = 0, 0
    for a in range(end + 1):
        live += delta[a]
        seq_peak = max(seq_peak, live)
    windows = []
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
        windows.append(k)
        held.append(cur)
    windows.append(end)
    return windows, seq_peak, held
