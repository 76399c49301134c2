"""The process-wide switches of `tf.debugging`: device-placement logging (read by every
`tf.Session` created without a `ConfigProto`), traceback filtering, and the eager
instrumentation TensorFlow 2 added (check-numerics callbacks, debug-info dumps).

Example
-------
>>> import flowgraph as tf
>>> tf.debugging.set_log_device_placement(True)
>>> tf.debugging.get_log_device_placement()
True
>>> tf.debugging.set_log_device_placement(False)
"""

from __future__ import annotations

from flowgraph.framework.context_settings import SETTINGS as _S

__all__ = ["disable_check_numerics", "disable_dump_debug_info", "disable_traceback_filtering",
           "enable_check_numerics", "enable_dump_debug_info", "enable_traceback_filtering",
           "get_log_device_placement", "is_traceback_filtering_enabled",
           "set_log_device_placement"]


def get_log_device_placement() -> bool:
    """Whether sessions created without a `ConfigProto` print each op's device."""
    return bool(_S["log_device_placement"])


def set_log_device_placement(enabled: bool) -> None:
    """Print each op's device when a session without a `ConfigProto` places a graph
    (``ConfigProto(log_device_placement=True)`` for the others)."""
    _S["log_device_placement"] = bool(enabled)


def is_traceback_filtering_enabled() -> bool:
    """Whether tracebacks hide the library's frames (default True). flowgraph's errors
    already name the op and where it was created, so the switch is recorded only."""
    return _S["traceback_filtering"]


def enable_traceback_filtering() -> None:
    """Turn traceback filtering on (recorded; see `is_traceback_filtering_enabled`)."""
    _S["traceback_filtering"] = True


def disable_traceback_filtering() -> None:
    """Turn traceback filtering off (recorded; see `is_traceback_filtering_enabled`)."""
    _S["traceback_filtering"] = False


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50):
    """TensorFlow 2's op callback that wraps every float op in ``CheckNumericsV2``.

    flowgraph has no op-creation callbacks, so this raises rather than silently checking
    nothing: check tensors explicitly with `tf.debugging.check_numerics`, or add a check
    for every float tensor of the graph with ``tf.add_check_numerics_ops()`` and run it
    with the train op.
    """
    raise NotImplementedError(
        "tf.debugging.enable_check_numerics: flowgraph has no op-creation callbacks to "
        "insert CheckNumericsV2 after every op. Use check_op = tf.add_check_numerics_ops() "
        "after building the graph and run it with your fetches, or wrap single tensors in "
        "tf.debugging.check_numerics(t, message).")


def disable_check_numerics() -> None:
    """Undo `enable_check_numerics` (which flowgraph never enables: a no-op)."""
    _S["check_numerics"] = False


def enable_dump_debug_info(dump_root, tensor_debug_mode="NO_TENSOR",
                           circular_buffer_size=1000, op_regex=None, tensor_dtypes=None):
    """TensorFlow 2's tfdbg v2 event dumps (for TensorBoard's Debugger V2): flowgraph does
    not write them. Use ``tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)`` with
    ``tf.summary.FileWriter.add_run_metadata`` for per-op traces instead."""
    raise NotImplementedError(
        f"tf.debugging.experimental.enable_dump_debug_info({dump_root!r}): flowgraph does "
        "not write tfdbg v2 dumps. Trace steps with tf.RunOptions(trace_level="
        "tf.RunOptions.FULL_TRACE) and FileWriter.add_run_metadata, or check values with "
        "tf.debugging.check_numerics.")


def disable_dump_debug_info() -> None:
    """Undo `enable_dump_debug_info` (a no-op: dumps are never on)."""
