"""Backend discovery through the ``flowgraph.backends`` entry-point group.

Discovery is lazy and cached: the first call to `get_backends()` loads every entry
point. A plugin that fails to load produces one `RuntimeWarning` naming it and is
skipped; it never breaks ``import flowgraph``.

Example
-------
>>> from flowgraph.backends import list_devices
>>> [d.device_type for d in list_devices()][:1]
['CPU']
"""

from __future__ import annotations

import threading
import warnings
from importlib import metadata

from flowgraph.backends.base import Backend, Device, KernelContext, KernelDef, bind_kernel

ENTRY_POINT_GROUP = "flowgraph.backends"

_lock = threading.Lock()
_backends: dict[str, Backend] | None = None


def _load_entry_points() -> dict[str, Backend]:
    found: dict[str, Backend] = {}
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as e:  # pragma: no cover - broken metadata
        warnings.warn(f"flowgraph: could not read entry points: {e}", RuntimeWarning,
                      stacklevel=3)
        eps = []
    seen = set()
    for ep in eps:
        if ep.name in seen:
            continue
        seen.add(ep.name)
        try:
            obj = ep.load()
            backend = obj() if isinstance(obj, type) else obj
            if callable(backend) and not isinstance(backend, Backend):
                backend = backend()
            if not isinstance(backend, Backend):
                raise TypeError(f"expected a flowgraph Backend, got {type(backend).__name__}")
        except Exception as e:
            warnings.warn(
                f"flowgraph: backend plugin '{ep.name}' ({ep.value}) failed to load and is "
                f"skipped: {type(e).__name__}: {e}",
                RuntimeWarning,
                stacklevel=3,
            )
            continue
        found[backend.device_type] = backend
    if "CPU" not in found:
        # Running from a source tree without installed metadata: the CPU backend is
        # still the same object the entry point names.
        from flowgraph.backends.cpu import backend as cpu

        found["CPU"] = cpu
    return found


def get_backends() -> dict[str, Backend]:
    """All loaded backends, by device type (loaded once, then cached)."""
    global _backends
    if _backends is None:
        with _lock:
            if _backends is None:
                _backends = _load_entry_points()
    return _backends


def reload_backends() -> dict[str, Backend]:
    """Forget cached discovery and load the entry points again (for tests and plugins)."""
    global _backends
    with _lock:
        _backends = None
    return get_backends()


def register_backend(backend: Backend) -> None:
    """Register a backend object directly (without an entry point)."""
    get_backends()[backend.device_type] = backend


def get_backend(device_type: str) -> Backend:
    backends = get_backends()
    try:
        return backends[device_type.upper()]
    except KeyError:
        raise ValueError(
            f"No backend for device type '{device_type}'; available: {sorted(backends)}. "
            "A backend comes from a plugin registered under the 'flowgraph.backends' "
            "entry-point group; install the package that provides it."
        ) from None


def list_devices(device_count: dict[str, int] | None = None) -> list[Device]:
    """Every device of every loaded backend, CPU first.

    `device_count` maps a device type to how many devices of that type to create (as
    `ConfigProto(device_count=...)` does); by default each backend's own count.
    """
    device_count = {k.upper(): v for k, v in (device_count or {}).items()}
    out: list[Device] = []
    for dtype_name, backend in sorted(get_backends().items(),
                                      key=lambda kv: (kv[0] != "CPU", kv[0])):
        count = device_count.get(dtype_name)
        if count == 0:
            continue
        out.extend(backend.list_devices(count))
    return out


# TensorFlow reports 256 MiB for a CPU device, though its allocator enforces no limit.
CPU_REPORTED_MEMORY_LIMIT = 256 << 20


class DeviceAttributes:
    """What `list_local_devices()` and `Session.list_devices()` report about a device.

    Attributes follow TensorFlow's ``DeviceAttributes``: `name`, `device_type`,
    `memory_limit` (bytes, 0 when unbounded, and TensorFlow's 268435456 for a CPU
    without a limit; also as `memory_limit_bytes`),
    `physical_device_desc` and `incarnation`.
    """

    __slots__ = ("device_type", "incarnation", "memory_limit", "name", "physical_device_desc")

    def __init__(self, device: Device) -> None:
        self.name = device.name
        self.device_type = device.device_type
        self.memory_limit = int(device.memory_limit or 0)
        if not self.memory_limit and device.device_type == "CPU":
            self.memory_limit = CPU_REPORTED_MEMORY_LIMIT
        self.physical_device_desc = device.description
        self.incarnation = abs(hash(device.name)) % (1 << 62)

    @property
    def memory_limit_bytes(self) -> int:
        return self.memory_limit

    def __repr__(self) -> str:
        return (f"DeviceAttributes(name={self.name!r}, device_type={self.device_type!r}, "
                f"memory_limit={self.memory_limit})")


def list_local_devices(session_config=None) -> list[DeviceAttributes]:
    """The local devices, as TF1's ``device_lib.list_local_devices()`` reports them.

    `session_config` (a `ConfigProto`) applies its ``device_count``.

    Example
    -------
    >>> from flowgraph.backends import list_local_devices
    >>> list_local_devices()[0].device_type
    'CPU'
    """
    counts = getattr(session_config, "device_count", None)
    return [DeviceAttributes(d) for d in list_devices(counts)]


__all__ = [
    "ENTRY_POINT_GROUP",
    "Backend",
    "Device",
    "DeviceAttributes",
    "KernelContext",
    "KernelDef",
    "bind_kernel",
    "get_backend",
    "get_backends",
    "list_devices",
    "list_local_devices",
    "register_backend",
    "reload_backends",
]
