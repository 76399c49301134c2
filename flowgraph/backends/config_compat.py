"""``tf.config``: the devices flowgraph's backends provide, and the process-wide settings
TensorFlow keeps there (soft placement, visible devices, thread pool sizes).

Devices come from the backend registry (`flowgraph.backends.list_local_devices`). The
settings are recorded and returned; TF1 graph sessions take theirs from their
`tf.ConfigProto`, so the values set here are defaults for code that asks for them.

Example
-------
>>> import flowgraph as tf
>>> cpus = tf.config.list_physical_devices("CPU")
>>> cpus[0].name, cpus[0].device_type
('/physical_device:CPU:0', 'CPU')
>>> tf.config.list_logical_devices("CPU")[0].name
'/device:CPU:0'
"""

from __future__ import annotations

import collections
import types

__all__ = ["LogicalDevice", "LogicalDeviceConfiguration", "PhysicalDevice",
           "get_logical_device_configuration", "get_soft_device_placement",
           "get_visible_devices", "list_logical_devices", "list_physical_devices",
           "set_logical_device_configuration", "set_soft_device_placement",
           "set_visible_devices", "threading"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDeviceConfiguration = collections.namedtuple(
    "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority",
                                   "experimental_device_ordinal"],
    defaults=(None, None, 0))

_settings = {"soft_placement": True, "visible": None, "logical": {}, "inter_op": 0,
             "intra_op": 0}


def _devices():
    from flowgraph.backends import list_local_devices

    for d in list_local_devices():
        index = d.name.rsplit(":", 1)[-1]
        yield d.device_type, index


def list_physical_devices(device_type=None):
    """The devices of the installed backends (all, or those of `device_type`)."""
    return [PhysicalDevice(f"/physical_device:{t}:{i}", t) for t, i in _devices()
            if device_type is None or t == device_type.upper()]


def get_visible_devices(device_type=None):
    """The physical devices set visible (default: all)."""
    visible = _settings["visible"]
    devices = list_physical_devices(device_type) if visible is None else visible
    return [d for d in devices if device_type is None or d.device_type == device_type.upper()]


def set_visible_devices(devices, device_type=None):
    """Record which physical devices are visible."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    known = set(list_physical_devices())
    for d in devices:
        if d not in known:
            raise ValueError(f"Unrecognized device: {d!r}")
    _settings["visible"] = list(devices)


def list_logical_devices(device_type=None):
    """The devices sessions place ops on (``/device:CPU:0``, ...)."""
    return [LogicalDevice(f"/device:{t}:{i}", t) for t, i in _devices()
            if device_type is None or t == device_type.upper()]


def get_logical_device_configuration(device):
    """The logical configuration recorded for a physical device (None when none)."""
    return _settings["logical"].get(device)


def set_logical_device_configuration(device, logical_devices):
    """Record a logical configuration (e.g. a memory limit) for a physical device."""
    _settings["logical"][device] = logical_devices


def get_soft_device_placement() -> bool:
    """Whether ops may fall back to another device when their requested one has no
    kernel (default True)."""
    return _settings["soft_placement"]


def set_soft_device_placement(enabled) -> None:
    """Record the soft-placement default."""
    _settings["soft_placement"] = bool(enabled)


def _get(key):
    return lambda: _settings[key]


def _set(key):
    def setter(num_threads):
        _settings[key] = int(num_threads)

    return setter


threading = types.SimpleNamespace(
    get_inter_op_parallelism_threads=_get("inter_op"),
    set_inter_op_parallelism_threads=_set("inter_op"),
    get_intra_op_parallelism_threads=_get("intra_op"),
    set_intra_op_parallelism_threads=_set("intra_op"),
)
