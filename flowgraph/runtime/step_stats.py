"""A traced step's `StepStats`: per node its timing, per device live and peak bytes.

The executor traces, per node, its start and end (monotonic ns), thread, output bytes
and each output's dtype and shape; each node's `NodeExecStats` gets TensorFlow's fields
from them (wall-clock times, a ``name = Type(inputs)`` label, an `output` list).

Live bytes per device are replayed here from that trace (completion order) and the
plan: a node's outputs are allocated on its device when it finishes, and a slot is freed
when its last consumer has finished (fetched slots never are); feeds and constants count
from the start on the device of their consumers. Async nodes (`_Recv`, queue ops)
are traced from their start to their completion, so a `_Recv` allocates its bytes on the
destination device when the value arrives. Outputs of a multi-output node are one block,
freed when the last of them is.

At each new peak the replay notes the largest live tensors (`LiveTensor`: name, bytes,
producer); the device's stats keep those of its peak. CPU devices report the bytes the
CPU buffer pool holds at the end of the step (`pool_bytes`), and every device the budget
its plan was scheduled for (see docs/memory.md).

Devices whose backend keeps allocator counters (`Backend.memory_stats`: OpenCL) also
report them as read at the end of the step: bytes allocated on the device (the cache
included), its high-water mark, bytes in use by live tensors and the limit.
"""

from __future__ import annotations

import time

from flowgraph.framework.dtypes import as_dtype
from flowgraph.framework.event_messages import TensorShapeProto
from flowgraph.runtime import _executor
from flowgraph.runtime.config import (
    AllocationDescription,
    AllocatorMemoryUsed,
    DeviceStepStats,
    LiveTensor,
    MemoryStats,
    NodeExecStats,
    NodeOutput,
    RunMetadata,
    StepStats,
    TensorDescription,
)
from flowgraph.runtime.plan import CompiledPlan

TOP_TENSORS = 8  # live tensors reported at a device's peak


class _MemoryReplay:
    """Live and peak bytes per device while the trace is replayed."""

    def __init__(self, cp: CompiledPlan, feed_bytes: dict[int, int]) -> None:
        self.cp = cp
        self.live: dict[str, int] = {d.name: 0 for d in cp.devices}
        self.peak: dict[str, int] = dict(self.live)
        self.uses = list(cp.slot_uses)
        self.node_of_slot = {base + k: n for n, (base, count) in enumerate(cp.node_outputs)
                             for k in range(count)}
        self.block_left: dict[int, int] = {}  # node -> output slots still in use
        self.block_bytes: dict[int, tuple[str, int]] = {}
        # per device: what is alive (key: node, or -1 - slot for sources) and, at its
        # peak, the largest of it
        self.held: dict[str, dict[int, int]] = {}
        self.at_peak: dict[str, list[tuple[int, int]]] = {}
        initial = cp.plan.initial_values
        self.source_bytes = {  # feeds and constants
            s: int(getattr(initial[s] if s < len(initial) else None, "nbytes", 0) or 0)
            for s in cp.source_slots}
        self.source_bytes.update(feed_bytes)
        for s, n in self.source_bytes.items():
            if self.uses[s] > 0:
                self._add(cp.slot_device[s], n, -1 - s)

    def _add(self, dev: str, n: int, key: int) -> None:
        self.live[dev] = self.live.get(dev, 0) + n
        held = self.held.setdefault(dev, {})
        held[key] = n
        if self.live[dev] > self.peak.get(dev, 0):
            self.peak[dev] = self.live[dev]
            self.at_peak[dev] = sorted(
                (kv for kv in held.items() if kv[1]), key=lambda kv: -kv[1])[:TOP_TENSORS]

    def _remove(self, dev: str, n: int, key: int) -> None:
        self.live[dev] -= n
        self.held.get(dev, {}).pop(key, None)

    def live_tensors(self, dev: str, feed_names: dict[int, str]) -> list[LiveTensor]:
        """The largest tensors alive at `dev`'s peak (see `LiveTensor`)."""
        out = []
        for key, n in self.at_peak.get(dev, ()):
            if key < 0:
                s = -1 - key
                name = feed_names.get(s)
                out.append(LiveTensor(name or f"constant (slot {s})", n,
                                      "feed" if name else "constant"))
                continue
            info = self.cp.nodes[key]
            count = self.cp.node_outputs[key][1]
            suffix = ":0" if count == 1 else f":0-{count - 1}"
            out.append(LiveTensor(info.name + suffix, n, f"{info.name} ({info.op_type})"))
        return out

    def finished(self, node: int, dev: str, out_bytes: int) -> None:
        """Node `node` finished on `dev`: allocate its outputs, release its inputs."""
        base, count = self.cp.node_outputs[node]
        left = sum(1 for k in range(count) if self.uses[base + k] > 0)
        if left and out_bytes:
            self.block_left[node] = left
            self.block_bytes[node] = (dev, out_bytes)
            self._add(dev, out_bytes, node)
        for s in self.cp.node_inputs[node]:
            self._release(s)

    def _release(self, slot: int) -> None:
        self.uses[slot] -= 1
        if self.uses[slot] != 0:
            return
        producer = self.node_of_slot.get(slot)
        if producer is None:
            self._remove(self.cp.slot_device[slot], self.source_bytes.get(slot, 0), -1 - slot)
        elif producer in self.block_left:
            self.block_left[producer] -= 1
            if self.block_left[producer] == 0:
                dev, n = self.block_bytes.pop(producer)
                del self.block_left[producer]
                self._remove(dev, n, producer)


def fill_step_stats(run_metadata: RunMetadata, cp: CompiledPlan, trace,
                    feed_bytes: dict[int, int]) -> None:
    """Set ``run_metadata.step_stats`` from a step's `trace` (see the module docstring).

    `feed_bytes` maps each feed slot to its value's size.
    """
    by_device = {d.name: DeviceStepStats(device=d.name) for d in cp.devices}
    wall_offset = time.time_ns() - _executor.monotonic_ns()
    memory = _MemoryReplay(cp, feed_bytes)
    allocators = {d.name: _allocator_name(d.name) for d in cp.devices}
    for node, t0, t1, tid, out_bytes, outputs in trace:
        info = cp.nodes[node]
        memory.finished(node, info.device, out_bytes)
        dev = by_device.setdefault(info.device, DeviceStepStats(device=info.device))
        allocator = allocators.get(info.device) or _allocator_name(info.device)
        if not dev.node_stats:
            dev.node_stats.append(_source_stats(t0 + wall_offset))
        live = memory.live.get(info.device, 0)
        dev.node_stats.append(NodeExecStats(
            node_name=info.name,
            op_type=info.op_type,
            all_start_micros=(t0 + wall_offset) // 1000,
            op_start_rel_micros=0,
            op_end_rel_micros=(t1 - t0) // 1000,
            all_end_rel_micros=(t1 - t0) // 1000,
            thread_id=tid,
            output_bytes=out_bytes,
            live_bytes_after=live,
            timeline_label=_label(info),
            all_start_nanos=t0 + wall_offset,
            all_end_rel_nanos=t1 - t0,
            op_end_rel_nanos=t1 - t0,
            output=[_node_output(k, o, allocator) for k, o in enumerate(outputs)],
            memory=[AllocatorMemoryUsed(allocator_name=allocator, total_bytes=out_bytes,
                                        peak_bytes=out_bytes, live_bytes=out_bytes,
                                        allocator_bytes_in_use=live)] if out_bytes else [],
            memory_stats=MemoryStats(),
            scheduled_micros=(t0 + wall_offset) // 1000,
            scheduled_nanos=t0 + wall_offset,
        ))
        for op in (info.fused or ())[:-1]:
            # A member of a fused node: listed (so a tool looking for the op finds it,
            # on its device), with no time or bytes of its own: the fused node has them.
            dev.node_stats.append(NodeExecStats(
                node_name=op.name, op_type=op.type,
                all_start_micros=(t1 + wall_offset) // 1000, thread_id=tid,
                live_bytes_after=memory.live.get(info.device, 0),
                timeline_label=f"{op.name} = {op.type}() (fused into {info.name})",
                all_start_nanos=t1 + wall_offset))
    feed_names = {s: t.name for t, s in cp.feed_slots.items()}
    mem = cp.memory_schedule
    pools = {d.name: d.backend.buffer_pool() for d in cp.devices}
    held = {id(p): p.held_bytes() for p in pools.values() if p is not None}
    for name, dev in by_device.items():
        dev.peak_bytes = memory.peak.get(name, 0)
        dev.peak_live_tensors = memory.live_tensors(name, feed_names)
        pool = pools.get(name)
        dev.pool_bytes = held[id(pool)] if pool is not None else 0
        dev.memory_budget_bytes = mem.budgets.get(name, 0) if mem is not None else 0
    for d in cp.devices:
        stats = d.backend.memory_stats(d)
        if stats:
            dev = by_device[d.name]
            dev.allocated_bytes = stats.get("bytes_allocated", 0)
            dev.allocator_peak_bytes = stats.get("peak_bytes_allocated", 0)
            dev.allocator_in_use_bytes = stats.get("bytes_in_use", 0)
            dev.allocator_limit_bytes = stats.get("bytes_limit", 0)
    run_metadata.step_stats = StepStats(dev_stats=list(by_device.values()))


def _source_stats(start_ns: int) -> NodeExecStats:
    """TensorFlow's first entry of each device's step: the graph's ``_SOURCE`` node."""
    return NodeExecStats(node_name="_SOURCE", op_type="NoOp",
                         all_start_micros=start_ns // 1000, all_start_nanos=start_ns,
                         timeline_label="_SOURCE = NoOp()")


def _label(info) -> str:
    """TensorFlow's ``name = Type(input, input:1, ^control)`` (`Timeline` reads the
    inputs from it); a fused node lists its members: ``y = Fused(a:Add, y:Relu)``, a
    node fused from one op is labelled as that op."""
    if info.fused and len(info.fused) > 1:
        return f"{info.name} = Fused({', '.join(f'{op.name}:{op.type}' for op in info.fused)})"
    op = info.fused[0] if info.fused else info.op
    if op is not None:
        inputs = [t.name[:-2] if t.name.endswith(":0") else t.name for t in op.inputs]
        inputs += [f"^{c.name}" for c in op.control_inputs]
    else:
        inputs = list(info.inputs)
    return f"{info.name} = {info.op_type}({', '.join(inputs)})"


def _allocator_name(device: str) -> str:
    """TensorFlow's allocator names: ``cpu``; ``GPU_0_bfc`` for a device's own memory."""
    kind, _, index = device.rpartition("device:")[2].partition(":")
    return "cpu" if kind.upper() == "CPU" else f"{kind.upper()}_{index or 0}_bfc"


def _node_output(slot: int, described: tuple, allocator: str) -> NodeOutput:
    """A traced output's `NodeOutput` from the executor's (dtype, shape, bytes)."""
    dtype, shape, nbytes = described
    try:
        enum = as_dtype(dtype).as_datatype_enum if dtype is not None else 0
    except (TypeError, ValueError, KeyError):
        enum = 0  # not a tensor dtype (a handle, a Python object)
    proto = TensorShapeProto()
    for size in (shape if isinstance(shape, tuple) else ()):
        proto.dim.add(size=int(size))
    return NodeOutput(slot=slot, tensor_description=TensorDescription(
        dtype=enum, shape=proto, allocation_description=AllocationDescription(
            requested_bytes=int(nbytes), allocated_bytes=int(nbytes),
            allocator_name=allocator)))
