"""`ConfigProto`, `RunOptions`, `RunMetadata` and step statistics, as plain objects.

They accept TensorFlow's field names (an unknown one is protobuf's ValueError),
so ``tf.ConfigProto(log_device_placement=True)`` works unchanged.

Example
-------
>>> cfg = ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=2)
>>> cfg.device_count["CPU"]
2
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from flowgraph.framework import event_messages as _event_messages
from flowgraph.framework.message_api import RecordMessage


class _Message(RecordMessage):
    """A protobuf-like record: keyword construction, defaults, and protobuf"s Message
    API with TensorFlow"s bytes (`RecordMessage`; ``WIRE_FIELDS`` holds TensorFlow"s
    field numbers of the fields TensorFlow has)."""

    _fields: dict[str, Any] = {}

    def __init__(self, **kwargs: Any) -> None:
        for name, default in self._fields.items():
            value = default() if callable(default) else default
            object.__setattr__(self, name, value)
        for name, value in kwargs.items():
            if name not in self._fields:
                raise ValueError(  # protobuf's type and wording
                    f'Protocol message {type(self).__name__} has no "{name}" field. '
                    f"Known fields: {', '.join(sorted(self._fields))}"
                )
            if isinstance(value, dict) and isinstance(getattr(self, name), _Message):
                value = type(getattr(self, name))(**value)
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._fields and not name.startswith("_"):
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        object.__setattr__(self, name, value)

    def _record_fields(self) -> dict:
        return {name: default() if callable(default) else default
                for name, default in self._fields.items()}

    def HasField(self, name: str) -> bool:
        if name not in self._fields:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
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
    class Experimental(_Message):
        """TensorFlow's ``GPUOptions.Experimental``: accepted, stored and written; no
        effect on flowgraph's devices."""

        class VirtualDevices(_Message):
            PROTO_NAME = "tensorflow.GPUOptions.Experimental.VirtualDevices"
            _fields = {"memory_limit_mb": list, "priority": list, "device_ordinal": list}
            WIRE_FIELDS = ((1, "memory_limit_mb", "float", True), (2, "priority", "int32", True),
                           (3, "device_ordinal", "int32", True))

        PROTO_NAME = "tensorflow.GPUOptions.Experimental"
        _fields = {
            "virtual_devices": list, "num_virtual_devices_per_gpu": 0,
            "use_unified_memory": False, "num_dev_to_dev_copy_streams": 0,
            "collective_ring_order": "", "timestamped_allocator": False,
            "kernel_tracker_max_interval": 0, "kernel_tracker_max_bytes": 0,
            "kernel_tracker_max_pending": 0, "internal_fragmentation_fraction": 0.0,
            "disallow_retry_on_allocation_failure": False, "gpu_host_mem_limit_in_mb": 0.0,
            "gpu_host_mem_disallow_growth": False, "gpu_system_memory_size_in_mb": 0,
        }
        WIRE_FIELDS = (
            (1, "virtual_devices", VirtualDevices, True),
            (2, "use_unified_memory", "bool", False),
            (3, "num_dev_to_dev_copy_streams", "int32", False),
            (4, "collective_ring_order", "string", False),
            (5, "timestamped_allocator", "bool", False),
            (7, "kernel_tracker_max_interval", "int32", False),
            (8, "kernel_tracker_max_bytes", "int32", False),
            (9, "kernel_tracker_max_pending", "int32", False),
            (10, "internal_fragmentation_fraction", "double", False),
            (12, "disallow_retry_on_allocation_failure", "bool", False),
            (13, "gpu_host_mem_limit_in_mb", "float", False),
            (14, "gpu_host_mem_disallow_growth", "bool", False),
            (15, "num_virtual_devices_per_gpu", "int32", False),
            (16, "gpu_system_memory_size_in_mb", "int32", False),
        )

    PROTO_NAME = "tensorflow.GPUOptions"
    _fields = {
        "per_process_gpu_memory_fraction": 0.0,
        "allow_growth": False,
        "visible_device_list": "",
        "allocator_type": "",
        "force_gpu_compatible": False,
        "experimental": Experimental,
    }
    WIRE_FIELDS = (
        (1, "per_process_gpu_memory_fraction", "double", False),
        (2, "allocator_type", "string", False),
        (4, "allow_growth", "bool", False),
        (5, "visible_device_list", "string", False),
        (8, "force_gpu_compatible", "bool", False),
        (9, "experimental", Experimental, False),
    )


class OptimizerOptions(_Message):
    L1 = 0
    L0 = -1
    DEFAULT = 0
    OFF = -1
    ON_1 = 1
    PROTO_NAME = "tensorflow.OptimizerOptions"
    _fields = {
        "do_common_subexpression_elimination": True,
        "do_constant_folding": True,
        "do_function_inlining": True,
        "opt_level": 0,
        "global_jit_level": 0,
        "max_folded_constant_in_bytes": 10 * 1024 * 1024,
    }
    WIRE_FIELDS = (
        (1, "do_common_subexpression_elimination", "bool", False),
        (2, "do_constant_folding", "bool", False),
        (3, "opt_level", "enum", False),
        (4, "do_function_inlining", "bool", False),
        (5, "global_jit_level", "enum", False),
        (6, "max_folded_constant_in_bytes", "int64", False),
    )
    ENUM_NAMES = {"opt_level": {0: "L1", -1: "L0"},
                  "global_jit_level": {0: "DEFAULT", -1: "OFF", 1: "ON_1", 2: "ON_2"}}


class RewriterConfig(_Message):
    """Switches of the plan's graph rewrites, with TensorFlow's names (``rewrite_options``).

    Each toggle is ``DEFAULT`` (0: the pass runs), ``ON``, ``OFF`` or ``AGGRESSIVE``;
    ``disable_meta_optimizer=True`` turns off every rewrite this message controls. The
    toggles flowgraph acts on:

    - ``arithmetic_optimization``: algebraic rewrites (`flowgraph/runtime/rewrite_arith.py`):
      chains by constants, ``x*1``, ``x+0``, double ``Neg``/``Transpose``/``Reshape``,
      ``Identity`` chains, chains of unary math ops composed into one node;
    - ``constant_folding`` and ``common_subgraph_elimination``: ``OFF`` also turns off
      folding and CSE (which ``OptimizerOptions`` controls too: one pass serves both);
    - ``shape_optimization``: plans specialized to the fed shapes (Shape, Size, Rank and
      the shape arithmetic behind them folded to constants).

    The other fields are accepted and stored, as TensorFlow's are, without effect.
    docs/performance.md ("Graph rewrites") describes each rewrite.

    >>> off = RewriterConfig(arithmetic_optimization=RewriterConfig.OFF)
    >>> cfg = ConfigProto(graph_options=GraphOptions(rewrite_options=off))
    >>> cfg.graph_options.rewrite_options.arithmetic_optimization == RewriterConfig.OFF
    True
    """

    # Toggle
    DEFAULT = 0
    ON = 1
    OFF = 2
    AGGRESSIVE = 3
    EXPERIMENTAL_MLIR = 4
    EXPERIMENTAL_BOTH = 5
    # NumIterationsType
    DEFAULT_NUM_ITERS = 0
    ONE = 1
    TWO = 2
    # MemOptType
    DEFAULT_MEM_OPT = 0
    NO_MEM_OPT = 1
    MANUAL = 2
    SWAPPING_HEURISTICS = 4
    RECOMPUTATION_HEURISTICS = 5
    SCHEDULING_HEURISTICS = 6
    HEURISTICS = 3
    # CpuLayout
    NO_CONVERSION_ON_CPU = 0
    NCHW_TO_NHWC = 1
    NHWC_TO_NCHW = 2
    PROTO_NAME = "tensorflow.RewriterConfig"
    _fields = {
        "cpu_layout_conversion": 0,
        "layout_optimizer": 0,
        "constant_folding": 0,
        "shape_optimization": 0,
        "remapping": 0,
        "common_subgraph_elimination": 0,
        "arithmetic_optimization": 0,
        "dependency_optimization": 0,
        "loop_optimization": 0,
        "function_optimization": 0,
        "debug_stripper": 0,
        "disable_model_pruning": False,
        "scoped_allocator_optimization": 0,
        "pin_to_host_optimization": 0,
        "implementation_selector": 0,
        "auto_mixed_precision": 0,
        "auto_mixed_precision_mkl": 0,
        "auto_mixed_precision_onednn_bfloat16": 0,
        "auto_mixed_precision_cpu": 0,
        "disable_meta_optimizer": False,
        "disable_tfg_optimizer": False,
        "use_plugin_optimizers": 0,
        "experimental_conditional_code_motion": 0,
        "meta_optimizer_iterations": 0,
        "min_graph_nodes": 0,
        "experimental_disable_compressed_tensor_optimization": False,
        "experimental_disable_folding_quantization_emulation": False,
        "memory_optimization": 0,
        "memory_optimizer_target_node_name_scope": "",
        "meta_optimizer_timeout_ms": 0,
        "auto_parallel": None,
        "fail_on_optimizer_errors": False,
        "scoped_allocator_opts": None,
        "optimizers": list,
        "custom_optimizers": list,
        "inter_optimizer_verifier_config": None,
        "post_optimization_verifier_config": None,
    }
    WIRE_FIELDS = (
        (1, "layout_optimizer", "enum", False),
        (2, "disable_model_pruning", "bool", False),
        (3, "constant_folding", "enum", False),
        (4, "memory_optimization", "enum", False),
        (6, "memory_optimizer_target_node_name_scope", "string", False),
        (7, "arithmetic_optimization", "enum", False),
        (8, "dependency_optimization", "enum", False),
        (9, "loop_optimization", "enum", False),
        (10, "function_optimization", "enum", False),
        (11, "debug_stripper", "enum", False),
        (12, "meta_optimizer_iterations", "enum", False),
        (13, "shape_optimization", "enum", False),
        (14, "remapping", "enum", False),
        (15, "scoped_allocator_optimization", "enum", False),
        (17, "min_graph_nodes", "int32", False),
        (18, "pin_to_host_optimization", "enum", False),
        (19, "disable_meta_optimizer", "bool", False),
        (20, "meta_optimizer_timeout_ms", "int64", False),
        (21, "fail_on_optimizer_errors", "bool", False),
        (22, "implementation_selector", "enum", False),
        (23, "auto_mixed_precision", "enum", False),
        (24, "common_subgraph_elimination", "enum", False),
        (25, "auto_mixed_precision_mkl", "enum", False),
        (26, "experimental_disable_compressed_tensor_optimization", "bool", False),
        (27, "experimental_disable_folding_quantization_emulation", "bool", False),
        (28, "use_plugin_optimizers", "enum", False),
        (29, "auto_mixed_precision_cpu", "enum", False),
        (30, "experimental_conditional_code_motion", "enum", False),
        (31, "auto_mixed_precision_onednn_bfloat16", "enum", False),
        (32, "disable_tfg_optimizer", "bool", False),
        (50, "cpu_layout_conversion", "enum", False),
        (100, "optimizers", "string", True),
    )
    _TOGGLE = {0: "DEFAULT", 1: "ON", 2: "OFF", 3: "AGGRESSIVE", 4: "EXPERIMENTAL_MLIR",
               5: "EXPERIMENTAL_BOTH"}
    ENUM_NAMES = {
        **dict.fromkeys([n for _, n, kind, _ in WIRE_FIELDS if kind == "enum"], _TOGGLE),
        "meta_optimizer_iterations": {0: "DEFAULT_NUM_ITERS", 1: "ONE", 2: "TWO"},
        "memory_optimization": {0: "DEFAULT_MEM_OPT", 1: "NO_MEM_OPT", 2: "MANUAL",
                                3: "HEURISTICS", 4: "SWAPPING_HEURISTICS",
                                5: "RECOMPUTATION_HEURISTICS", 6: "SCHEDULING_HEURISTICS"},
        "cpu_layout_conversion": {0: "NO_CONVERSION_ON_CPU", 1: "NCHW_TO_NHWC",
                                  2: "NHWC_TO_NCHW"},
    }

    def enabled(self, toggle: str) -> bool:
        """Whether the rewrite behind field `toggle` runs (not OFF, optimizer not disabled).

        >>> RewriterConfig(shape_optimization=RewriterConfig.OFF).enabled("shape_optimization")
        False
        """
        return not self.disable_meta_optimizer and getattr(self, toggle) != self.OFF


class GraphOptions(_Message):
    PROTO_NAME = "tensorflow.GraphOptions"
    _fields = {
        "optimizer_options": OptimizerOptions,
        "enable_bfloat16_sendrecv": False,
        "build_cost_model": 0,
        "infer_shapes": False,
        "place_pruned_graph": False,
        "timeline_step": 0,
        "rewrite_options": RewriterConfig,
        "enable_recv_scheduling": False,
    }
    WIRE_FIELDS = (
        (2, "enable_recv_scheduling", "bool", False),
        (3, "optimizer_options", OptimizerOptions, False),
        (4, "build_cost_model", "int64", False), (5, "infer_shapes", "bool", False),
        (6, "place_pruned_graph", "bool", False),
        (7, "enable_bfloat16_sendrecv", "bool", False), (8, "timeline_step", "int32", False),
        (10, "rewrite_options", RewriterConfig, False),
    )


class RPCOptions(_Message):
    """Options of the RPC layer between tasks (``ConfigProto.rpc_options``): TensorFlow's
    fields, accepted and stored, plus flowgraph's security settings (docs/distributed.md,
    "Faults and security"): ``auth_token`` (a shared secret every call carries and every
    server checks) and the PEM files ``tls_cert_file``, ``tls_key_file``, ``tls_ca_file``.

    >>> cfg = ConfigProto(rpc_options=RPCOptions(auth_token="s3cret"))
    >>> cfg.rpc_options.auth_token
    's3cret'
    """

    PROTO_NAME = "tensorflow.RPCOptions"
    _fields = {
        "use_rpc_for_inprocess_master": False,
        "compression_algorithm": "",
        "compression_level": 0,
        "cache_rpc_response": False,
        "disable_session_connection_sharing": False,
        "num_channels_per_target": 0,
        "auth_token": "",
        "tls_cert_file": "",
        "tls_key_file": "",
        "tls_ca_file": "",
    }
    WIRE_FIELDS = (  # auth_token and the tls_* files are flowgraph"s: not written
        (1, "use_rpc_for_inprocess_master", "bool", False),
        (2, "compression_algorithm", "string", False), (3, "compression_level", "int32", False),
        (4, "cache_rpc_response", "bool", False),
        (5, "disable_session_connection_sharing", "bool", False),
        (6, "num_channels_per_target", "int32", False),
    )


class ConfigProto(_Message):
    class Experimental(_Message):
        """TensorFlow's ``ConfigProto.Experimental``: accepted, stored and written; no
        effect on flowgraph's sessions (``session_metadata`` and ``coordination_config``
        are not held)."""

        PROTO_NAME = "tensorflow.ConfigProto.Experimental"
        _fields = {
            "collective_group_leader": "", "executor_type": "", "recv_buf_max_chunk": 0,
            "use_numa_affinity": False, "collective_deterministic_sequential_execution": False,
            "collective_nccl": False, "share_session_state_in_clusterspec_propagation": False,
            "disable_thread_spinning": False, "share_cluster_devices_in_session": False,
            "optimize_for_static_graph": False, "enable_mlir_bridge": False,
            "mlir_bridge_rollout": 0, "enable_mlir_graph_optimization": False,
            "disable_output_partition_graphs": False, "xla_fusion_autotuner_thresh": 0,
            "use_tfrt": False, "disable_functional_ops_lowering": False,
            "xla_prefer_single_graph_cluster": False,
            "disable_optimize_for_static_graph": False,
            "disable_eager_executor_streaming_enqueue": False,
        }
        WIRE_FIELDS = (
            (1, "collective_group_leader", "string", False),
            (3, "executor_type", "string", False), (4, "recv_buf_max_chunk", "int32", False),
            (5, "use_numa_affinity", "bool", False),
            (6, "collective_deterministic_sequential_execution", "bool", False),
            (7, "collective_nccl", "bool", False),
            (8, "share_session_state_in_clusterspec_propagation", "bool", False),
            (9, "disable_thread_spinning", "bool", False),
            (10, "share_cluster_devices_in_session", "bool", False),
            (12, "optimize_for_static_graph", "bool", False),
            (13, "enable_mlir_bridge", "bool", False),
            (14, "disable_output_partition_graphs", "bool", False),
            (15, "xla_fusion_autotuner_thresh", "int64", False),
            (16, "enable_mlir_graph_optimization", "bool", False),
            (17, "mlir_bridge_rollout", "enum", False), (18, "use_tfrt", "bool", False),
            (21, "disable_functional_ops_lowering", "bool", False),
            (22, "xla_prefer_single_graph_cluster", "bool", False),
            (24, "disable_optimize_for_static_graph", "bool", False),
            (26, "disable_eager_executor_streaming_enqueue", "bool", False),
        )

    PROTO_NAME = "tensorflow.ConfigProto"
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
        "rpc_options": RPCOptions,
        "cluster_def": None,
        "isolate_session_state": False,
        "experimental": Experimental,
        "memory_limit_bytes": 0,
        # flowgraph extension: per-device memory budget in bytes (an int for every
        # device, or a dict keyed by device name or type, e.g. {"CPU": 1 << 30}); 0 or
        # absent means the default: none on the CPU, the device's memory limit
        # (`Device.memory_limit`) on OpenCL devices. See docs/memory.md.
        "memory_budget_bytes": 0,
    }
    WIRE_FIELDS = (  # memory_budget_bytes and memory_limit_bytes are flowgraph"s
        (1, "device_count", ("map", "string", "int32"), True),
        (2, "intra_op_parallelism_threads", "int32", False),
        (3, "placement_period", "int32", False), (4, "device_filters", "string", True),
        (5, "inter_op_parallelism_threads", "int32", False),
        (6, "gpu_options", GPUOptions, False), (7, "allow_soft_placement", "bool", False),
        (8, "log_device_placement", "bool", False),
        (9, "use_per_session_threads", "bool", False),
        (10, "graph_options", GraphOptions, False),
        (11, "operation_timeout_in_ms", "int64", False),
        (13, "rpc_options", RPCOptions, False),
        (15, "isolate_session_state", "bool", False),
        (16, "experimental", Experimental, False),
    )

    def inter_op_threads(self) -> int:
        n = self.inter_op_parallelism_threads
        return n if n > 0 else (os.cpu_count() or 1)


class RunOptions(_Message):
    class Experimental(_Message):
        """TensorFlow's ``RunOptions.Experimental``: accepted, stored and written
        (``run_handler_pool_options`` is not held); no effect on flowgraph's runs."""

        PROTO_NAME = "tensorflow.RunOptions.Experimental"
        _fields = {"collective_graph_key": 0, "use_run_handler_pool": False}
        WIRE_FIELDS = ((1, "collective_graph_key", "int64", False),
                       (2, "use_run_handler_pool", "bool", False))

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    PROTO_NAME = "tensorflow.RunOptions"
    _fields = {
        "trace_level": 0,
        "timeout_in_ms": 0,
        "inter_op_thread_pool": 0,
        "output_partition_graphs": False,
        "debug_options": None,
        "report_tensor_allocations_upon_oom": False,
        "experimental": Experimental,
        # flowgraph extension: this run's memory budget, overriding the config's
        # (same forms as ConfigProto.memory_budget_bytes; 0: use the config's).
        "memory_budget_bytes": 0,
    }
    WIRE_FIELDS = (  # memory_budget_bytes is flowgraph"s: not written
        (1, "trace_level", "enum", False), (2, "timeout_in_ms", "int64", False),
        (3, "inter_op_thread_pool", "int32", False),
        (5, "output_partition_graphs", "bool", False),
        (7, "report_tensor_allocations_upon_oom", "bool", False),
        (8, "experimental", Experimental, False),
    )
    ENUM_NAMES = {"trace_level": {0: "NO_TRACE", 1: "SOFTWARE_TRACE", 2: "HARDWARE_TRACE",
                                  3: "FULL_TRACE"}}


# A traced output (`NodeExecStats.output`): TensorFlow's messages, printed as its text
# format (``dtype: DT_FLOAT``), as `Timeline`'s tensor snapshots show them.
AllocationDescription = _event_messages.AllocationDescription
TensorDescription = _event_messages.TensorDescription
NodeOutput = _event_messages.NodeOutput
AllocatorMemoryUsed = _event_messages.AllocatorMemoryUsed
MemoryStats = _event_messages.MemoryStats


@dataclass
class CostGraphDef:
    """``RunMetadata.cost_graph``: TensorFlow's CostGraphDef, which a local session leaves
    empty (``node`` and ``cost`` hold nothing)."""

    node: list = field(default_factory=list)
    cost: list = field(default_factory=list)


@dataclass
class NodeExecStats:
    """Timing of one node in one step (times in microseconds, like TensorFlow; the
    ``*_nanos`` fields in nanoseconds, ``all_start_nanos`` since the epoch), and its
    outputs (`NodeOutput`), as TensorFlow traces them."""

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
    op_start_rel_nanos: int = 0
    op_end_rel_nanos: int = 0
    output: list[NodeOutput] = field(default_factory=list)
    # TensorFlow's per-allocator usage and the kernel's temporary/persistent bytes
    memory: list[AllocatorMemoryUsed] = field(default_factory=list)
    memory_stats: MemoryStats | None = None
    scheduled_micros: int = 0
    scheduled_nanos: int = 0

    def HasField(self, name: str) -> bool:
        """Whether message field `name` is set (``memory_stats``: on executed nodes)."""
        if name == "memory_stats":
            return self.memory_stats is not None
        raise ValueError(f"NodeExecStats.HasField: '{name}' is not a singular message "
                         "field of NodeExecStats; expected 'memory_stats'.")


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


class RunMetadata(RecordMessage):
    """Filled by `Session.run(..., run_metadata=md)` when tracing is requested.

    Its bytes are TensorFlow's RunMetadata's ``step_stats`` (devices, and per node its
    name, times, thread, timeline label and outputs); ``partition_graphs`` and
    ``cost_graph`` are not written, nor flowgraph's memory fields of the step stats."""

    PROTO_NAME = "tensorflow.RunMetadata"
    WIRE_FIELDS = ((1, "step_stats", "message", False),)

    def __init__(self) -> None:
        self.step_stats = StepStats()
        self.partition_graphs: list[dict] = []
        self.cost_graph = CostGraphDef()

    def _record_fields(self) -> dict:
        return {"step_stats": StepStats(), "partition_graphs": [],
                "cost_graph": CostGraphDef()}

    @classmethod
    def _wire_class(cls) -> type:
        return _event_messages.RunMetadata

    def _to_wire(self):
        em = _event_messages
        out = em.RunMetadata()
        if not self.step_stats.dev_stats:
            return out
        out.step_stats = em.StepStats()
        for dev in self.step_stats.dev_stats:
            d = out.step_stats.dev_stats.add(device=dev.device or None)
            for ns in dev.node_stats:
                # proto3: a field at its default is not written (None: left unset)
                d.node_stats.add(
                    node_name=ns.node_name or None,
                    all_start_micros=ns.all_start_micros or None,
                    op_start_rel_micros=ns.op_start_rel_micros or None,
                    op_end_rel_micros=ns.op_end_rel_micros or None,
                    all_end_rel_micros=ns.all_end_rel_micros or None,
                    memory=list(ns.memory), output=list(ns.output),
                    timeline_label=ns.timeline_label or None,
                    scheduled_micros=ns.scheduled_micros or None,
                    thread_id=ns.thread_id or None, memory_stats=ns.memory_stats,
                    all_start_nanos=ns.all_start_nanos or None,
                    op_start_rel_nanos=ns.op_start_rel_nanos or None,
                    op_end_rel_nanos=ns.op_end_rel_nanos or None,
                    all_end_rel_nanos=ns.all_end_rel_nanos or None,
                    scheduled_nanos=ns.scheduled_nanos or None)
        return out

    def _merge_wire(self, wire) -> None:
        if not wire.HasField("step_stats"):
            return
        for dev in wire.step_stats.dev_stats:
            self.step_stats.dev_stats.append(DeviceStepStats(device=dev.device, node_stats=[
                NodeExecStats(
                    node_name=ns.node_name, all_start_micros=ns.all_start_micros,
                    op_start_rel_micros=ns.op_start_rel_micros,
                    op_end_rel_micros=ns.op_end_rel_micros,
                    all_end_rel_micros=ns.all_end_rel_micros, thread_id=ns.thread_id,
                    timeline_label=ns.timeline_label, all_start_nanos=ns.all_start_nanos,
                    op_start_rel_nanos=ns.op_start_rel_nanos,
                    op_end_rel_nanos=ns.op_end_rel_nanos,
                    all_end_rel_nanos=ns.all_end_rel_nanos, output=list(ns.output),
                    memory=list(ns.memory), scheduled_micros=ns.scheduled_micros,
                    scheduled_nanos=ns.scheduled_nanos,
                    memory_stats=ns.memory_stats if ns.HasField("memory_stats") else None)
                for ns in dev.node_stats]))

    def MergeFrom(self, other) -> None:
        """Merge `other` in: its devices' step stats and partition graphs appended."""
        self._check_same(other, "MergeFrom")
        self.step_stats.dev_stats.extend(copy.deepcopy(other.step_stats.dev_stats))
        self.partition_graphs.extend(copy.deepcopy(other.partition_graphs))
        if other.HasField("cost_graph"):
            self.cost_graph = copy.deepcopy(other.cost_graph)

    def Clear(self) -> None:
        self.__init__()

    def HasField(self, name: str) -> bool:
        """Whether singular field `name` is set: ``step_stats`` after a traced run.

        >>> RunMetadata().HasField("step_stats")
        False
        """
        if name == "step_stats":
            return bool(self.step_stats.dev_stats)
        if name == "cost_graph":
            return bool(self.cost_graph.node or self.cost_graph.cost)
        kind = "repeated field" if name == "partition_graphs" else "field"
        raise ValueError(f"RunMetadata.HasField: '{name}' is not a singular {kind} of "
                         "RunMetadata; its singular fields are step_stats and cost_graph.")


class Switches(NamedTuple):
    """Which rewrites run: common subexpressions, folding, algebra, shape folding."""

    cse: bool
    fold: bool
    arith: bool
    shapes: bool


def switches(options, rewrite_options=None) -> Switches:
    """The rewrites `options` (`OptimizerOptions`) and `rewrite_options`
    (`RewriterConfig`) leave on. Either message can turn CSE or folding off (flowgraph
    has one pass for what TensorFlow does in two layers); ``opt_level=L0`` turns both
    off, ``disable_meta_optimizer`` every rewrite `RewriterConfig` controls.

    >>> switches(OptimizerOptions(opt_level=OptimizerOptions.L0))
    Switches(cse=False, fold=False, arith=True, shapes=True)
    """
    rc = rewrite_options if rewrite_options is not None else RewriterConfig()
    level_on = getattr(options, "opt_level", 0) != OptimizerOptions.L0
    return Switches(
        cse=bool(options.do_common_subexpression_elimination) and level_on
        and rc.enabled("common_subgraph_elimination"),
        fold=bool(options.do_constant_folding) and level_on and rc.enabled("constant_folding"),
        arith=rc.enabled("arithmetic_optimization"),
        shapes=rc.enabled("shape_optimization"))


_TOGGLES = {"layout_optimizer", "constant_folding", "shape_optimization", "remapping",
            "arithmetic_optimization", "dependency_optimization", "loop_optimization",
            "function_optimization", "debug_stripper", "scoped_allocator_optimization",
            "pin_to_host_optimization", "implementation_selector", "auto_mixed_precision",
            "use_plugin_optimizers", "auto_mixed_precision_onednn_bfloat16",
            "auto_mixed_precision_mkl"}


def context_config() -> ConfigProto:
    """The `ConfigProto` a session created without one runs with: `ConfigProto`'s defaults
    with the process-wide settings of `tf.config` and `tf.debugging` applied (visible and
    virtual devices as ``device_count``, memory growth, soft placement, device-placement
    logging, threads, JIT, graph-rewrite switches), as TensorFlow 2's ``Session`` does.

    >>> context_config().allow_soft_placement
    False
    """
    from flowgraph.backends import config_compat
    from flowgraph.framework.context_settings import SETTINGS

    config = ConfigProto()
    if SETTINGS["soft_placement"] is not None:
        config.allow_soft_placement = SETTINGS["soft_placement"]
    if SETTINGS["log_device_placement"] is not None:
        config.log_device_placement = SETTINGS["log_device_placement"]
    if SETTINGS["inter_op"] is not None:
        config.inter_op_parallelism_threads = SETTINGS["inter_op"]
    if SETTINGS["intra_op"] is not None:
        config.intra_op_parallelism_threads = SETTINGS["intra_op"]
    if SETTINGS["jit"] is not None:
        config.graph_options.optimizer_options.global_jit_level = (
            OptimizerOptions.ON_1 if SETTINGS["jit"] else OptimizerOptions.OFF)
    rewrite = config.graph_options.rewrite_options
    for name, value in SETTINGS["optimizer_options"].items():
        if name in _TOGGLES and value is not None:
            setattr(rewrite, name, RewriterConfig.ON if value else RewriterConfig.OFF)
        elif name in ("disable_model_pruning", "disable_meta_optimizer"):
            setattr(rewrite, name, bool(value))
        elif name == "min_graph_nodes":
            rewrite.min_graph_nodes = int(value)
    counts = config_compat.device_counts()
    if counts is not None:
        config.device_count = counts
    if any(SETTINGS["memory_growth"].values()):
        config.gpu_options.allow_growth = True
    return config
