"""Turn a traced step's `StepStats` into a Chrome trace (``chrome://tracing``, Perfetto),
in the layout TensorFlow's ``timeline.Timeline`` writes.

Processes (``"ph": "M"`` events): ``Allocators`` first, then for each device
``<device> Compute`` (one ``"X"`` event per node, named after its op type, with
``args`` ``name``, ``op`` and ``input0``, ``input1``, ... read from the node's
``timeline_label`` ``name = Type(a, b:1, ^c)``; flowgraph's stats give the op type
itself, ``op_type``) and ``<device> Tensors``. Times are the
step stats' microseconds since the epoch. Rows (``tid``) are lanes: a node goes to the
first lane that is free when it starts, so overlapping nodes never share a row.

Each traced output (`NodeOutput`) is a tensor, named ``node`` for output 0 and
``node:k`` after; a consumer's label names its inputs the same way. With
`show_dataflow`, an edge between nodes on different rows is a flow arrow (``"s"`` at the
producer's end, ``"t"`` at the consumer's start, category ``DataFlow``). With
`show_memory`, each tensor is an object (``"N"`` created at its producer's start, an
``"O"`` snapshot of its description, ``"D"`` deleted after its last consumer) and each
allocator a counter (``"C"``, category ``Memory``) of the bytes its tensors hold;
`analyze_step_stats` returns those counters' maxima.

Example
-------
>>> import json
>>> import flowgraph as tf
>>> from flowgraph.runtime.timeline import Timeline
>>> g = tf.Graph()
>>> with g.as_default():
...     y = tf.sin(tf.placeholder(tf.float32, name="x"), name="s") * 2.0
>>> md = tf.RunMetadata()
>>> with tf.Session(graph=g) as sess:
...     _ = sess.run(y, {"x:0": 1.0}, tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
...                  md)
>>> trace = json.loads(Timeline(md.step_stats).generate_chrome_trace_format())
>>> [e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"][:2]
['Allocators', '/job:localhost/replica:0/task:0/device:CPU:0 Compute']
"""

from __future__ import annotations

import copy
import json
import re
from collections import namedtuple

from flowgraph.runtime.config import StepStats

__all__ = ["AllocationMaximum", "StepStatsAnalysis", "Timeline"]

AllocationMaximum = namedtuple("AllocationMaximum", ("timestamp", "num_bytes", "tensors"))
AllocationMaximum.__doc__ = """An allocator's peak: when (microseconds), how many bytes,
and the names of the tensors alive then."""

StepStatsAnalysis = namedtuple("StepStatsAnalysis", ("chrome_trace", "allocator_maximums"))
StepStatsAnalysis.__doc__ = """`Timeline.analyze_step_stats`'s result: the trace (its
``format_to_string(pretty=False)`` gives the JSON) and each allocator's
`AllocationMaximum`."""

_LABEL = re.compile(r"(.*) = (.*)\((.*)\)")


def parse_label(label: str) -> tuple[str, str, list[str]]:
    """``(name, op type, inputs)`` of a timeline label ``name = Type(a, b:1)``.

    >>> parse_label("mm = MatMul(a, v/read)")
    ('mm', 'MatMul', ['a', 'v/read'])
    >>> parse_label("not a label")
    ('unknown', 'unknown', [])
    """
    found = _LABEL.match(label)
    if found is None:
        return "unknown", "unknown", []
    name, op, inputs = found.groups()
    return name, op, inputs.split(", ") if inputs else []


class ChromeTrace:
    """The events of a trace: metadata (process names) first, then the rest in the order
    they were added."""

    def __init__(self) -> None:
        self.metadata: list[dict] = []
        self.events: list[dict] = []

    def process(self, name: str, pid: int) -> None:
        self.metadata.append({"name": "process_name", "ph": "M", "pid": pid,
                              "args": {"name": name}})

    def event(self, ph: str, cat: str, name: str, pid: int, tid: int, ts, **extra) -> None:
        self.events.append({"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid,
                            "ts": ts, **extra})

    def format_to_string(self, pretty: bool = False) -> str:
        trace = {"traceEvents": self.metadata + self.events}
        if pretty:
            return json.dumps(trace, indent=4, separators=(",", ": "))
        return json.dumps(trace, separators=(",", ":"))


class _Tensor:
    """A traced output's lifetime: created when its producer starts, alive until the
    last of its uses ends."""

    def __init__(self, name: str, object_id: int, created, pid: int, allocator: str,
                 num_bytes: int) -> None:
        self.name, self.object_id, self.created, self.pid = name, object_id, created, pid
        self.allocator, self.num_bytes = allocator, num_bytes
        self.last_use = created

    def used_until(self, t) -> None:
        self.last_use = max(self.last_use, t)


class Timeline:
    """A Chrome-trace view of one traced step (see the module docstring).

    Parameters
    ----------
    step_stats : StepStats
        ``run_metadata.step_stats`` of a ``Session.run`` with
        ``RunOptions(trace_level=RunOptions.FULL_TRACE)``.
    graph : Graph, optional
        Accepted for compatibility; the labels name the inputs.
    """

    def __init__(self, step_stats: StepStats, graph=None) -> None:
        self._origin_step_stats = step_stats
        self._graph = graph

    def analyze_step_stats(self, show_dataflow: bool = True, show_memory: bool = True,
                           op_time: str = "schedule") -> StepStatsAnalysis:
        """The trace and each allocator's peak (`StepStatsAnalysis`).

        `op_time` is ``"schedule"`` (a node from its start to its end), ``"gpu"`` or
        ``"all"`` (those use the kernel records of a GPU tracer's ``/stream:all``
        device, which flowgraph's step stats do not have: they show the same)."""
        # As TensorFlow: the lanes are written to the nodes' thread_id, in the step stats
        # given unless op_time asks for a copy with other times.
        stats = (self._origin_step_stats if op_time == "schedule"
                 else copy.deepcopy(self._origin_step_stats))
        trace = ChromeTrace()
        next_pid = iter(range(1 << 30))
        allocators_pid = next(next_pid)
        trace.process("Allocators", allocators_pid)
        pids: dict[str, tuple[int, int]] = {}
        for dev in stats.dev_stats:
            pids[dev.device] = (next(next_pid), next(next_pid))
            trace.process(f"{dev.device} Compute", pids[dev.device][0])
            trace.process(f"{dev.device} Tensors", pids[dev.device][1])
        _assign_lanes(stats)
        tensors: dict[str, _Tensor] = {}
        produced_at: dict[str, tuple] = {}  # tensor name -> (end, pid, tid) of its producer
        for dev in stats.dev_stats:
            compute_pid, tensors_pid = pids[dev.device]
            for ns in dev.node_stats:
                start, end = ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros
                for k, out in enumerate(ns.output):
                    name = f"{ns.node_name}:{k}" if k else ns.node_name
                    alloc = out.tensor_description.allocation_description
                    tensor = _Tensor(name, len(tensors), start, tensors_pid,
                                     alloc.allocator_name, alloc.requested_bytes)
                    tensors[name] = tensor
                    tensor.used_until(end)
                    produced_at[name] = (end, compute_pid, ns.thread_id)
                    if show_memory:
                        trace.event("N", "Tensor", name, tensors_pid, ns.thread_id, start,
                                    id=tensor.object_id)
                        text = str(out.tensor_description).replace('"', "")
                        trace.event("O", "Tensor", name, tensors_pid, ns.thread_id,
                                    end - 1, id=tensor.object_id,
                                    args={"snapshot": {"tensor_description": text}})
        flow_ids = iter(range(1 << 62))
        for dev in stats.dev_stats:
            compute_pid = pids[dev.device][0]
            for ns in dev.node_stats:
                start, end = ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros
                if ns.node_name == "RecvTensor":
                    op, inputs = "RecvTensor", []
                else:
                    _, op, inputs = parse_label(ns.timeline_label)
                    # flowgraph's stats also carry the op type (a fused node's label
                    # lists its members instead)
                    op = getattr(ns, "op_type", "") or op
                args = {"name": ns.node_name, "op": op}
                args.update({f"input{i}": name for i, name in enumerate(inputs)})
                trace.event("X", "Op", op, compute_pid, ns.thread_id, start,
                            dur=ns.all_end_rel_micros, args=args)
                for name in inputs:
                    tensor = tensors.get(name)
                    if tensor is None:
                        continue  # a control input, or a value no traced node produced
                    tensor.used_until(end - 1)
                    src_end, src_pid, src_tid = produced_at[name]
                    if show_dataflow and (src_pid, src_tid) != (compute_pid, ns.thread_id):
                        flow = next(flow_ids)
                        trace.event("s", "DataFlow", name, src_pid, src_tid, src_end, id=flow)
                        trace.event("t", "DataFlow", name, compute_pid, ns.thread_id, start,
                                    id=flow)
        maxima: dict[str, AllocationMaximum] = {}
        if show_memory:
            maxima = _memory_counters(trace, tensors, allocators_pid)
        return StepStatsAnalysis(chrome_trace=trace, allocator_maximums=maxima)

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False,
                                     op_time: str = "schedule") -> str:
        """The trace as indented JSON (write it to a ``.json`` file and open it in
        ``chrome://tracing`` or Perfetto)."""
        analysis = self.analyze_step_stats(show_dataflow=show_dataflow,
                                           show_memory=show_memory, op_time=op_time)
        return analysis.chrome_trace.format_to_string(pretty=True)


def _assign_lanes(stats: StepStats) -> None:
    """Per device, each node to the first lane free before it starts (its thread_id)."""
    for dev in stats.dev_stats:
        lanes = [0]  # per lane, when its last node ends
        for ns in dev.node_stats:
            end = ns.all_start_micros + ns.all_end_rel_micros
            lane = next((i for i, busy in enumerate(lanes) if ns.all_start_micros > busy),
                        len(lanes))
            if lane == len(lanes):
                lanes.append(end)
            else:
                lanes[lane] = end
            ns.thread_id = lane


def _memory_counters(trace: ChromeTrace, tensors: dict, pid: int) -> dict:
    """Delete events for the tensors, a bytes-held counter per allocator; its maxima."""
    changes: dict[str, list[tuple]] = {}
    for name, tensor in tensors.items():
        trace.event("D", "Tensor", name, tensor.pid, 0, tensor.last_use, id=tensor.object_id)
        changes.setdefault(tensor.allocator, []).extend([
            (tensor.created, tensor.num_bytes, name),
            (tensor.last_use, -tensor.num_bytes, name)])
    maxima = {}
    for allocator, steps in changes.items():
        held, alive = 0, set()
        best = AllocationMaximum(timestamp=0, num_bytes=0, tensors=set())
        for t, delta, name in sorted(steps):
            held += delta
            if delta < 0:
                alive.discard(name)
            else:
                alive.add(name)
            if held > best.num_bytes:
                best = AllocationMaximum(timestamp=t, num_bytes=held, tensors=set(alive))
            trace.event("C", "Memory", allocator, pid, 0, t, args={allocator: held})
        maxima[allocator] = best
    return maxima
