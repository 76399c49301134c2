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
from typing import Any, NamedTuple


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

    def enabled(self, toggle: str) -> bool:
        """Whether the rewrite behind field `toggle` runs (not OFF, optimizer not disabled).

        >>> RewriterConfig(shape_optimization=RewriterConfig.OFF).enabled("shape_optimization")
        False
        """
        return not self.disable_meta_optimizer and getattr(self, toggle) != self.OFF


class GraphOptions(_Message):
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


class RPCOptions(_Message):
    """Options of the RPC layer between tasks (``ConfigProto.rpc_options``): TensorFlow's
    fields, accepted and stored, plus flowgraph's security settings (docs/distributed.md,
    "Faults and security"): ``auth_token`` (a shared secret every call carries and every
    server checks) and the PEM files ``tls_cert_file``, ``tls_key_file``, ``tls_ca_file``.

    >>> cfg = ConfigProto(rpc_options=RPCOptions(auth_token="s3cret"))
    >>> cfg.rpc_options.auth_token
    's3cret'
    """

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
        "rpc_options": RPCOptions,
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

    def HasField(self, name: str) -> bool:
        """Whether singular field `name` is set: ``step_stats`` after a traced run.

        >>> RunMetadata().HasField("step_stats")
        False
        """
        if name == "step_stats":
            return bool(self.step_stats.dev_stats)
        if name == "cost_graph":
            return self.cost_graph is not None
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
