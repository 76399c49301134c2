"""``tf.config``: the devices flowgraph's backends provide, and the process-wide runtime
settings TensorFlow keeps in its context (visible devices, memory growth, virtual
devices, soft placement, threads, JIT and graph-rewrite switches).

Physical devices are each backend's own devices (`flowgraph.backends.list_devices`):
``CPU:0``, plus ``GPU:N`` for every OpenCL device when that backend is installed. The
settings live in `flowgraph.framework.context_settings`; a `tf.Session` created without a
`ConfigProto` is configured from them (`flowgraph.runtime.config.context_config`), as
TensorFlow 2's graph sessions are: hidden devices are not placed on, virtual CPU devices
become ``CPU:1``..., memory growth becomes ``gpu_options.allow_growth``, the optimizer
switches become ``rewrite_options``. Asking for the logical devices (or a device's memory
info) initializes the runtime; from then on the device layout is fixed and changing it
raises TensorFlow's `RuntimeError`.

Example
-------
>>> import flowgraph as tf
>>> cpus = tf.config.list_physical_devices("CPU")
>>> cpus[0].name, cpus[0].device_type
('/physical_device:CPU:0', 'CPU')
>>> for gpu in tf.config.experimental.list_physical_devices("GPU"):
...     tf.config.experimental.set_memory_growth(gpu, True)
"""

from __future__ import annotations

import collections
import re
import types
import warnings

from flowgraph.framework.context_settings import SETTINGS as _S

__all__ = ["LogicalDevice", "LogicalDeviceConfiguration", "PhysicalDevice", "experimental",
           "experimental_connect_to_cluster", "experimental_connect_to_host",
           "experimental_functions_run_eagerly", "experimental_run_functions_eagerly",
           "functions_run_eagerly", "get_logical_device_configuration",
           "get_soft_device_placement", "get_visible_devices", "list_logical_devices",
           "list_physical_devices", "optimizer", "run_functions_eagerly",
           "set_logical_device_configuration", "set_soft_device_placement",
           "set_visible_devices", "threading"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDeviceConfiguration = collections.namedtuple(
    "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority",
                                   "experimental_device_ordinal"],
    defaults=(None, None, None))


# -- physical devices ---------------------------------------------------------------

def _backend_devices():
    from flowgraph.backends import list_devices

    return list_devices()


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The devices of the installed backends (all, or those of `device_type`).

    `device_type` is matched exactly, as TensorFlow does (``"GPU"``, not ``"gpu"``).
    """
    return [PhysicalDevice(f"/physical_device:{d.device_type}:{d.index}", d.device_type)
            for d in _backend_devices()
            if device_type is None or d.device_type == device_type]


def _check_known(device) -> None:
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")


def _visible() -> list[PhysicalDevice]:
    return list_physical_devices() if _S["visible"] is None else list(_S["visible"])


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices the runtime may use (default: all)."""
    return [d for d in _visible() if device_type is None or d.device_type == device_type]


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Restrict the runtime to `devices` (of `device_type` when given; the devices of the
    other types stay as they are). ``set_visible_devices([], "GPU")`` hides every GPU:
    sessions created without a `ConfigProto` then place nothing there.

    Raises `ValueError` for a device that does not exist (or is not of `device_type`),
    `RuntimeError` when the runtime is already initialized and the set would change.
    """
    if not isinstance(devices, list):
        devices = [devices]
    for d in devices:
        _check_known(d)
        if device_type is not None and d.device_type != device_type:
            raise ValueError(f"Unrecognized device: {d!r}")
    new = [d for d in _visible() if device_type is not None and d.device_type != device_type]
    new += devices
    if new == _visible():
        return
    if _S["initialized"]:
        raise RuntimeError("Visible devices cannot be modified after being initialized")
    _S["visible"] = new


def get_memory_growth(device) -> bool | None:
    """Whether memory growth is on for a GPU (None: never set)."""
    _check_known(device)
    if device.device_type == "CPU":
        raise KeyError(device)
    return _S["memory_growth"].get(device)


def set_memory_growth(device, enable: bool) -> None:
    """Allocate a GPU's memory as needed rather than up front (``allow_growth``).

    flowgraph's OpenCL allocator already allocates on demand, so this is what sessions
    get either way; it is validated and recorded as TensorFlow does.
    """
    _check_known(device)
    if device in _S["virtual"]:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    if _S["memory_growth"].get(device) == enable:
        return
    if _S["initialized"]:
        raise RuntimeError("Physical devices cannot be modified after being initialized")
    _S["memory_growth"][device] = enable


def get_device_details(device) -> dict:
    """What is known of a physical device: {} for the CPU; ``device_name`` for a GPU."""
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"device must be a tf.config.PhysicalDevice, but got: {device}")
    _check_known(device)
    if device.device_type == "CPU":
        return {}
    for d in _backend_devices():
        if (d.device_type, str(d.index)) == (device.device_type, device.name.rsplit(":")[-1]):
            return {"device_name": d.description}
    return {}


# -- logical devices and the runtime ----------------------------------------------------

def _counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for d in list_physical_devices():
        counts.setdefault(d.device_type, 0)
        if d in _visible():
            counts[d.device_type] += len(_S["virtual"].get(d) or [None])
    return counts


def device_counts() -> dict[str, int] | None:
    """The ``ConfigProto.device_count`` the settings imply (None when all are defaults)."""
    if _S["visible"] is None and not _S["virtual"]:
        return None
    return _counts()


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The devices sessions place ops on (``/device:CPU:0``, ...). Initializes the
    runtime: the device layout cannot change afterwards."""
    _S["initialized"] = True
    return [LogicalDevice(f"/device:{t}:{i}", t) for t, n in _counts().items()
            for i in range(n) if device_type is None or t == device_type]


def get_logical_device_configuration(device) -> list | None:
    """The logical devices configured on a physical device (None when none)."""
    _check_known(device)
    return _S["virtual"].get(device)


def set_logical_device_configuration(device, logical_devices) -> None:
    """Split a physical device into logical ones: N configurations on ``CPU:0`` give
    sessions ``CPU:0``..``CPU:N-1``; a GPU's need a ``memory_limit`` each."""
    _check_known(device)
    logical_devices = list(logical_devices)
    if device.device_type == "CPU":
        for v in logical_devices:
            for field, what in (("memory_limit", "memory limit"),
                                ("experimental_priority", "experimental_priority"),
                                ("experimental_device_ordinal", "experimental_device_ordinal")):
                if getattr(v, field) is not None:
                    raise ValueError(f"Setting {what} on CPU virtual devices is currently "
                                     "not supported")
    elif device.device_type == "GPU":
        if any(v.memory_limit is None for v in logical_devices):
            raise ValueError("Setting memory limit is required for GPU virtual devices")
    else:
        raise ValueError(f"Virtual devices are not supported for {device.device_type}")
    if _S["virtual"].get(device) == logical_devices:
        return
    if _S["initialized"]:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    _S["virtual"][device] = logical_devices


_DEVICE = re.compile(r"^(?:/?(?:job:\w+/)?(?:replica:\d+/)?(?:task:\d+/)?(?:device:)?)?"
                     r"([A-Za-z_]+):(\d+)$")


def _logical(device: str):
    m = _DEVICE.match(device or "")
    if m is None:
        raise ValueError(
            f"Failed parsing device name: '{device}'. Note a valid device string should at "
            'least contain a device type and a device index, like "GPU:0".')
    kind, index = m.group(1), int(m.group(2))
    _S["initialized"] = True
    if index >= _counts().get(kind, 0):
        raise ValueError(f"No matching devices found for '{device}'")
    return kind, index


def get_memory_info(device: str) -> dict:
    """``{'current': bytes, 'peak': bytes}`` of a device's allocator; the host has no
    tracked allocator (0, 0), as in TensorFlow."""
    kind, index = _logical(device)
    if kind != "CPU":
        for d in _backend_devices():
            if (d.device_type, d.index) == (kind, index):
                stats = d.backend.memory_stats(d) or {}
                return {"current": int(stats.get("bytes_in_use", 0)),
                        "peak": int(stats.get("peak_bytes_in_use", 0))}
    return {"current": 0, "peak": 0}


def get_memory_usage(device: str) -> int:
    """Deprecated: ``get_memory_info(device)['current']``."""
    warnings.warn("Use tf.config.experimental.get_memory_info(device)['current'] instead.",
                  DeprecationWarning, stacklevel=2)
    return get_memory_info(device)["current"]


def reset_memory_stats(device: str) -> None:
    """Reset a device's peak-memory counter (nothing is tracked on the host)."""
    _logical(device)


# -- placement and execution switches ----------------------------------------------------

def get_soft_device_placement() -> bool:
    """Whether sessions without a `ConfigProto` fall back to another device when the
    requested one cannot run an op (graph mode default: False)."""
    return bool(_S["soft_placement"])


def set_soft_device_placement(enabled) -> None:
    """Set ``allow_soft_placement`` for sessions created without a `ConfigProto`."""
    _S["soft_placement"] = bool(enabled)


def get_device_policy() -> str:
    """How eager ops treat inputs on another device; graph sessions copy them
    (``'silent'``)."""
    return _S["device_policy"] or "silent"


def set_device_policy(device_policy: str | None) -> None:
    """Record the eager device policy (graph sessions always copy: ``'silent'``)."""
    if device_policy not in (None, "silent", "silent_for_int32", "warn", "explicit"):
        raise ValueError(
            f"Invalid argument `device_policy`: {device_policy!r}. Please refer to "
            "https://www.tensorflow.org/api_docs/python/tf/config/experimental/"
            "set_device_policy for valid `device_policy` arguments.")
    _S["device_policy"] = device_policy


def get_synchronous_execution() -> bool:
    """Whether eager ops run synchronously (always, for flowgraph's sessions)."""
    return True if _S["synchronous"] is None else _S["synchronous"]


def set_synchronous_execution(enable: bool) -> None:
    """Record the eager execution mode; a session step always waits for its fetches."""
    _S["synchronous"] = bool(enable)


def tensor_float_32_execution_enabled() -> bool:
    """Whether TensorFloat-32 math is allowed (default True; flowgraph computes float32
    at full precision on every backend)."""
    return _S["tf32"]


def enable_tensor_float_32_execution(enabled: bool) -> None:
    """Record whether TensorFloat-32 math is allowed."""
    _S["tf32"] = bool(enabled)


def enable_mlir_bridge() -> None:
    """Record the MLIR bridge switch (flowgraph has no XLA bridge: no effect)."""
    _S["mlir_bridge"] = True


def disable_mlir_bridge() -> None:
    """Record the MLIR bridge switch (flowgraph has no XLA bridge: no effect)."""
    _S["mlir_bridge"] = False


def functions_run_eagerly() -> bool:
    """Whether ``tf.function`` bodies run eagerly (graph mode: False unless set)."""
    return _S["functions_eagerly"]


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Record whether ``tf.function`` bodies run eagerly."""
    _S["functions_eagerly"] = bool(run_eagerly)


def experimental_functions_run_eagerly() -> bool:
    """Deprecated spelling of `functions_run_eagerly`."""
    warnings.warn("Use tf.config.functions_run_eagerly instead of the experimental version.",
                  DeprecationWarning, stacklevel=2)
    return functions_run_eagerly()


def experimental_run_functions_eagerly(run_eagerly: bool) -> None:
    """Deprecated spelling of `run_functions_eagerly`."""
    warnings.warn("Use `tf.config.run_functions_eagerly` instead of the experimental "
                  "version.", DeprecationWarning, stacklevel=2)
    run_functions_eagerly(run_eagerly)


def experimental_connect_to_cluster(cluster_spec_or_resolver, job_name="localhost",
                                    task_index=0, protocol=None,
                                    make_master_device_default=True,
                                    cluster_device_filters=None) -> None:
    """Eager-only in TensorFlow: in graph mode, create ``tf.Session(server.target)``
    instead (`tf.train.Server`)."""
    raise ValueError(
        "`tf.config.experimental_connect_to_cluster` can only be called in eager mode.")


def experimental_connect_to_host(remote_host=None, job_name="worker") -> None:
    """Eager-only in TensorFlow (see `experimental_connect_to_cluster`)."""
    raise ValueError(
        "`tf.config.experimental_connect_to_cluster` can only be called in eager mode.")


class ClusterDeviceFilters:
    """Which devices each task of a cluster sees: ``set_device_filters(job, task,
    filters)``; `tf.train.ClusterSpec` users pass the filters on to ``device_filters``
    of the tasks' `ConfigProto`."""

    def __init__(self) -> None:
        self._filters: dict = {}

    def set_device_filters(self, job_name: str, task_index: int, device_filters) -> None:
        """Set the device filters of task `task_index` of job `job_name`."""
        if not isinstance(job_name, str) or not isinstance(task_index, int):
            raise TypeError("job_name must be a string and task_index an integer")
        self._filters.setdefault(job_name, {})[task_index] = [str(f) for f in device_filters]

    def filters(self, job_name: str, task_index: int) -> list[str]:
        """The filters set for one task ([] when none)."""
        return list(self._filters.get(job_name, {}).get(task_index, []))


# -- tf.config.optimizer -----------------------------------------------------------------

def get_jit() -> str:
    """``'autoclustering'`` when JIT compilation was switched on, else ``''``."""
    return "autoclustering" if _S["jit"] else ""


def set_jit(enabled) -> None:
    """Switch JIT compilation (``global_jit_level``) for sessions without a config.
    flowgraph's plans are compiled either way (fusion: docs/performance.md)."""
    _S["jit"] = bool(enabled) and enabled != ""


def get_experimental_options() -> dict:
    """The graph-rewrite switches set with `set_experimental_options`."""
    out = {k: v for k, v in _S["optimizer_options"].items()}
    out.setdefault("disable_model_pruning", False)
    out.setdefault("disable_meta_optimizer", False)
    return out


def set_experimental_options(options: dict) -> None:
    """Switch graph rewrites by their ``RewriterConfig`` names (``constant_folding``,
    ``arithmetic_optimization``, ``shape_optimization``, ...: True/False) for sessions
    created without a `ConfigProto`."""
    _S["optimizer_options"].update(options)


def _get(key):
    return lambda: _S[key] or 0


def _set(key):
    def setter(num_threads):
        _S[key] = int(num_threads)

    return setter


threading = types.SimpleNamespace(
    get_inter_op_parallelism_threads=_get("inter_op"),
    set_inter_op_parallelism_threads=_set("inter_op"),
    get_intra_op_parallelism_threads=_get("intra_op"),
    set_intra_op_parallelism_threads=_set("intra_op"),
)

optimizer = types.SimpleNamespace(
    get_experimental_options=get_experimental_options, get_jit=get_jit,
    set_experimental_options=set_experimental_options, set_jit=set_jit)

experimental = types.SimpleNamespace(
    ClusterDeviceFilters=ClusterDeviceFilters,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    disable_mlir_bridge=disable_mlir_bridge,
    enable_mlir_bridge=enable_mlir_bridge,
    enable_tensor_float_32_execution=enable_tensor_float_32_execution,
    get_device_details=get_device_details,
    get_device_policy=get_device_policy,
    get_memory_growth=get_memory_growth,
    get_memory_info=get_memory_info,
    get_memory_usage=get_memory_usage,
    get_synchronous_execution=get_synchronous_execution,
    get_virtual_device_configuration=get_logical_device_configuration,
    get_visible_devices=get_visible_devices,
    list_logical_devices=list_logical_devices,
    list_physical_devices=list_physical_devices,
    reset_memory_stats=reset_memory_stats,
    set_device_policy=set_device_policy,
    set_memory_growth=set_memory_growth,
    set_synchronous_execution=set_synchronous_execution,
    set_virtual_device_configuration=set_logical_device_configuration,
    set_visible_devices=set_visible_devices,
    tensor_float_32_execution_enabled=tensor_float_32_execution_enabled,
)
