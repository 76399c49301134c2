"""Traced steps of a ``grpc://`` session: each task's step stats come back to the client.

A `Session.run` on a cluster with ``RunOptions(trace_level=...)`` and a `RunMetadata`
asks every task that runs a stage of the step to trace it: the stage's RunStage header
carries ``trace`` (the level) and, for ``output_partition_graphs``, ``partitions``. The
task runs the stage with those options and answers with the stage's `RunMetadata`, as
its serialized bytes (base64, in the JSON header: a trace is not the hot path) and its
partition graphs as graph dicts. The client merges them into the caller's `RunMetadata`:
one `DeviceStepStats` per device of every task (``/job:ps/replica:0/task:0/device:CPU:0``
...), as TensorFlow's master gathers them, so `timeline.Timeline` draws the whole step.

A traced run takes no prefetching shortcut (`flowgraph.distributed.prefetch`): it runs
every stage with its own call, and drops values prefetched before it. A stage that a
task runs for another inside a pull (`master.delegate`) is traced too: the pull's reply
carries its trace to the pulling task, whose reply carries it on (``handed``).

Example
-------
>>> from flowgraph.runtime.config import RunMetadata, RunOptions
>>> request = TraceRequest.of(RunOptions(trace_level=RunOptions.FULL_TRACE), RunMetadata())
>>> request.header_fields()
{'trace': 3}
"""

from __future__ import annotations

import base64
import threading

from flowgraph.runtime.config import RunMetadata, RunOptions

__all__ = ["TraceRequest", "stage_trace", "trace_fields", "traced_reply"]


class TraceRequest:
    """What a traced run asks of the tasks, and the metadata their replies bring back."""

    def __init__(self, level: int, partitions: bool, run_metadata: RunMetadata) -> None:
        self.level, self.partitions, self.run_metadata = level, partitions, run_metadata
        self._lock = threading.Lock()

    @classmethod
    def of(cls, options, run_metadata) -> TraceRequest | None:
        """The request a run's `options` make, or None when the run traces nothing (no
        `run_metadata`, or neither a trace level nor partition graphs asked for)."""
        if run_metadata is None or options is None:
            return None
        level = int(getattr(options, "trace_level", 0) or 0)
        partitions = bool(getattr(options, "output_partition_graphs", False))
        if not level and not partitions:
            return None
        return cls(level, partitions, run_metadata)

    def header_fields(self) -> dict:
        """The RunStage header fields that ask a task to trace its stage."""
        fields = {"trace": self.level}
        if self.partitions:
            fields["partitions"] = True
        return fields

    def merge(self, reply: dict) -> None:
        """Add what a task's RunStage `reply` brought back to the caller's metadata: its
        stage's trace and those of the stages its pulls ran (``handed``)."""
        for traced in (reply, *reply.get("handed", ())):
            encoded = traced.get("run_metadata")
            if encoded is None:
                continue
            stage = RunMetadata()
            stage.ParseFromString(base64.b64decode(encoded))
            with self._lock:
                self.run_metadata.step_stats.dev_stats.extend(stage.step_stats.dev_stats)
                self.run_metadata.partition_graphs.extend(traced.get("partition_graphs", ()))


def stage_trace(header: dict, timeout_ms: int) -> tuple[RunOptions, RunMetadata] | None:
    """A task's side: the options and metadata to run a stage with, when its RunStage
    `header` asks for a trace; else None."""
    if "trace" not in header:
        return None
    options = RunOptions(trace_level=int(header["trace"]), timeout_in_ms=timeout_ms,
                         output_partition_graphs=bool(header.get("partitions")))
    return options, RunMetadata()


def traced_reply(run_metadata: RunMetadata, partitions: bool, task: str) -> dict:
    """The reply fields that carry a traced stage's `run_metadata` back to the client,
    its devices named as the cluster knows them: the stage ran in a local session of
    `task` (``/job:ps/replica:0/task:0``), whose devices are ``/job:localhost/...``."""
    for dev in run_metadata.step_stats.dev_stats:
        dev.device = _on_task(dev.device, task)
    reply = {"run_metadata": base64.b64encode(run_metadata.SerializeToString()).decode()}
    if partitions:
        graphs = []
        for graph in run_metadata.partition_graphs:
            graph = dict(graph)
            graph["node"] = [{**node, "device": _on_task(node.get("device", ""), task)}
                             for node in graph.get("node", ())]
            graphs.append(graph)
        reply["partition_graphs"] = graphs
    return reply


def trace_fields(reply: dict) -> dict:
    """The fields of a RunStage `reply` that carry traces (empty when untraced)."""
    return {key: reply[key] for key in ("run_metadata", "partition_graphs", "handed")
            if key in reply}


def _on_task(device: str, task: str) -> str:
    local = "/job:localhost/replica:0/task:0"
    return task + device[len(local):] if device.startswith(local) else device
