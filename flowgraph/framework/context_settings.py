"""The process-wide runtime settings TensorFlow keeps in its eager context.

`tf.config` (``flowgraph/backends/config_compat.py``) and `tf.debugging` write them; a
`tf.Session` created without a `ConfigProto` takes its configuration from them
(``flowgraph.runtime.config.context_config``), as TensorFlow 2's ``Session`` does. This
module only holds the state: `SETTINGS` maps a setting to its value, ``None`` meaning
"never set" (the session then keeps `ConfigProto`'s default).

`initialized` turns true once something asked for the logical devices (TensorFlow's
``context.ensure_initialized``); from then on the device layout (visible devices, memory
growth, virtual devices) can no longer change.
"""

from __future__ import annotations

SETTINGS: dict = {
    "soft_placement": None,
    "log_device_placement": None,
    "inter_op": None,
    "intra_op": None,
    "visible": None,          # list of PhysicalDevice, None: all
    "virtual": {},            # PhysicalDevice -> [LogicalDeviceConfiguration]
    "memory_growth": {},      # PhysicalDevice -> bool
    "jit": None,
    "optimizer_options": {},
    "device_policy": None,
    "synchronous": None,
    "tf32": True,
    "mlir_bridge": None,
    "functions_eagerly": False,
    "check_numerics": False,
    "traceback_filtering": True,
    "initialized": False,
}

_DEFAULTS = {k: (dict(v) if isinstance(v, dict) else v) for k, v in SETTINGS.items()}


def reset() -> None:
    """Every setting back to its default (tests; a fresh process starts this way)."""
    SETTINGS.clear()
    SETTINGS.update({k: (dict(v) if isinstance(v, dict) else v) for k, v in _DEFAULTS.items()})
