"""`ConfigProto`, `RunOptions`, `RunMetadata` and step statistics, as plain objects.

They accept TensorFlow's field names (unknown fields are a TypeError naming the field),
so ``tf.ConfigProto(log_device_placement=True)`` works unchanged.

Example
-------
>>> cfg = ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=2)
>>> cfg.device_count["CPU"]
2
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


class _Message:
    """A small protobuf-like record: keyword construction, defaults, `CopyFrom`."""

    _fields: dict[str, Any] = {}

    def __init__(self, **kwargs: Any) -> None:
        for name, default in self._fields.items():
            value = default() if callable(default) else default
            object.__setattr__(self, name, value)
        for name, value in kwargs.items():
            if name not in self._fields:
                raise TypeError(
                    f"{type(self).__name__} has no field '{name}'; known fields: "
                    f"{', '.join(sorted(self._fields))}"
                )
            if isinstance(value, dict) and isinstance(getattr(self, name), _Message):
                value = type(getattr(self, name))(**value)
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._fields and not name.startswith("_"):
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        object.__setattr__(self, name, value)

    def CopyFrom(self, other: _Message) -> None:
        for name in self._fields:
            object.__setattr__(self, name, getattr(other, name))

    def HasField(self, name: str) -> bool:
        default = self._fields[name]
        value = getattr(self, name)
        return value != (default() if callable(default) else default)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._fields
        )

    def __repr__(self) -> str:
        parts = [f"{n}={getattr(self, n)!r}" for n in self._fields if self.HasField(n)]
        return f"{type(self).__name__}({', '.join(parts)})"


class GPUOptions(_Message):
    _fields = {
        "per_process_gpu_memory_fraction": 0.0,
        "allow_growth": False,
        "visible_device_list": "",
        "allocator_type": "",
        "force_gpu_compatible": False,
        "experimental": None,
    }


class OptimizerOptions(_Message):
    L1 = 0
    L0 = -1
    DEFAULT = 0
    OFF = -1
    ON_1 = 1
    _fields = {
        "do_common_subexpression_elimination": True,
        "do_constant_folding": True,
        "do_function_inlining": True,
        "opt_level": 0,
        "global_jit_level": 0,
        "max_folded_constant_in_bytes": 10 * 1024 * 1024,
    }


class GraphOptions(_Message):
    _fields = {
        "optimizer_options": OptimizerOptions,
        "enable_bfloat16_sendrecv": False,
        "build_cost_model": 0,
        "infer_shapes": False,
        "place_pruned_graph": False,
        "timeline_step": 0,
        "rewrite_options": None,
        "enable_recv_scheduling": False,
    }


class ConfigProto(_Message):
    _fields = {
        "device_count": dict,
        "intra_op_parallelism_threads": 0,
        "inter_op_parallelism_threads": 0,
        "use_per_session_threads": False,
        "session_inter_op_thread_pool": list,
        "placement_period": 0,
        "device_filters": list,
        "gpu_options": GPUOptions,
        "allow_soft_placement": False,
        "log_device_placement": False,
        "graph_options": GraphOptions,
        "operation_timeout_in_ms": 0,
        "rpc_options": None,
        "cluster_def": None,
        "isolate_session_state": False,
        "experimental": None,
        "memory_limit_bytes": 0,
        # flowgraph extension: per-device memory budget in bytes (an int for every
        # device, or a dict keyed by device name or type, e.g. {"CPU": 1 << 30}); 0 or
        # absent means the default: none on the CPU, the device's memory limit
        # (`Device.memory_limit`) on OpenCL devices. See docs/memory.md.
        "memory_budget_bytes": 0,
    }

    def inter_op_threads(self) -> int:
        n = self.inter_op_parallelism_threads
        return n if n > 0 else (os.cpu_count() or 1)


class RunOptions(_Message):
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    _fields = {
        "trace_level": 0,
        "timeout_in_ms": 0,
        "inter_op_thread_pool": 0,
        "output_partition_graphs": False,
        "debug_options": None,
        "report_tensor_allocations_upon_oom": False,
        "experimental": None,
        # flowgraph extension: this run's memory budget, overriding the config's
        # (same forms as ConfigProto.memory_budget_bytes; 0: use the config's).
        "memory_budget_bytes": 0,
    }


@dataclass
class NodeExecStats:
    """Timing of one node in one step (times in microseconds, like TensorFlow)."""

    node_name: str
    op_type: str = ""
    all_start_micros: int = 0
    op_start_rel_micros: int = 0
    op_end_rel_micros: int = 0
    all_end_rel_micros: int = 0
    thread_id: int = 0
    output_bytes: int = 0
    live_bytes_after: int = 0
    timeline_label: str = ""
    all_start_nanos: int = 0
    all_end_rel_nanos: int = 0


@dataclass
class LiveTensor:
    """A tensor alive on a device at its memory peak (flowgraph extension of step stats):
    its name (``op:index``, or ``op:0-N`` for an op's N+1 outputs, held as one block),
    its bytes and its producer (``name (OpType)``; feeds and constants: ``feed`` or
    ``constant``)."""

    name: str
    bytes: int
    producer: str


@dataclass
class DeviceStepStats:
    """One device's nodes in a traced step, and its memory.

    `peak_bytes` is the step's peak of live tensor bytes on the device, replayed from
    the trace. Devices with an allocator of their own (OpenCL) also report it, read at
    the end of the step: `allocated_bytes` (taken from the device: live tensors and the
    allocator's cache), `allocator_peak_bytes` (its high-water mark since the device
    was first used), `allocator_in_use_bytes` (asked for by live tensors) and
    `allocator_limit_bytes`; they stay 0 elsewhere.

    flowgraph extensions (docs/memory.md): `peak_live_tensors`, the largest tensors
    alive at `peak_bytes` (`LiveTensor`, largest first, at most 8); `pool_bytes`, the
    bytes the CPU buffer pool held at the end of the step (the pool is shared by the
    process's CPU devices: each reports it); `memory_budget_bytes`, the budget the run's
    plan was scheduled for (0: none).
    """

    device: str
    node_stats: list[NodeExecStats] = field(default_factory=list)
    peak_bytes: int = 0
    allocated_bytes: int = 0
    allocator_peak_bytes: int = 0
    allocator_in_use_bytes: int = 0
    allocator_limit_bytes: int = 0
    peak_live_tensors: list[LiveTensor] = field(default_factory=list)
    pool_bytes: int = 0
    memory_budget_bytes: int = 0


@dataclass
class StepStats:
    dev_stats: list[DeviceStepStats] = field(default_factory=list)

    def peak_bytes(self, device: str | None = None) -> int:
        """Peak live bytes of the step on `device` (default: the maximum over devices)."""
        peaks = [d.peak_bytes for d in self.dev_stats if device is None or d.device == device]
        return max(peaks, default=0)


class RunMetadata:
    """Filled by `Session.run(..., run_metadata=md)` when tracing is requested."""

    def __init__(self) -> None:
        self.step_stats = StepStats()
        self.partition_graphs: list[dict] = []
        self.cost_graph = None

    def Clear(self) -> None:
        self.__init__()

    def CopyFrom(self, other: RunMetadata) -> None:
        self.step_stats = other.step_stats
        self.partition_graphs = list(other.partition_graphs)
        self.cost_graph = other.cost_graph
