"""`tf.experimental`: the parts a TF 1.x graph-mode program can use.

- `async_scope` / `async_clear_error`: eager remote execution switches; a graph runs
  synchronously, so the scope changes nothing and there is no pending error to clear;
- `function_executor_type`: the executor of function calls; graph functions are inlined,
  so the scope only records it; `output_all_intermediates` likewise;
- `register_filesystem_plugin`: plugins are TensorFlow shared libraries, refused with
  `NotFoundError` as `tf.load_library` refuses them.
The extension types (`ExtensionType`, `dispatch_for_*`, `StructuredTensor`, ...),
`Optional` (flowgraph's `tf.data` has no optional values) and `enable_strict_mode`
(flowgraph has no registry of deprecated calls to turn into errors) are not provided;
the float8/int4 dtypes are `tf.dtypes.experimental`'s.

Example
-------
>>> import flowgraph as tf
>>> with tf.experimental.async_scope():
...     pass
>>> tf.experimental.output_all_intermediates(True)
"""

from __future__ import annotations

import contextlib

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors

__all__ = ["async_clear_error", "async_scope", "float8_e4m3fn", "float8_e5m2",
           "function_executor_type", "int4", "output_all_intermediates",
           "register_filesystem_plugin", "uint4"]

# tf.dtypes.experimental's types, also here as in TensorFlow
float8_e5m2 = _dtypes.DType(24)
float8_e4m3fn = _dtypes.DType(25)
int4 = _dtypes.DType(29)
uint4 = _dtypes.DType(30)

_settings = {"executor_type": None, "output_all_intermediates": None}


@contextlib.contextmanager
def async_scope():
    """Eager asynchronous execution scope: graph runs are synchronous already."""
    yield


def async_clear_error() -> None:
    """Clear a pending asynchronous error: graph runs leave none."""


@contextlib.contextmanager
def function_executor_type(executor_type):
    """Record `executor_type` for the function calls built in the scope."""
    previous = _settings["executor_type"]
    _settings["executor_type"] = executor_type
    try:
        yield
    finally:
        _settings["executor_type"] = previous


def output_all_intermediates(state) -> None:
    """Whether control flow v2 outputs its intermediates (flowgraph's control flow is v1:
    the setting is recorded only)."""
    _settings["output_all_intermediates"] = None if state is None else bool(state)


def register_filesystem_plugin(plugin_location: str) -> None:
    """Refused: file system plugins are TensorFlow shared libraries."""
    raise errors.NotFoundError(
        None, None, f"register_filesystem_plugin: {plugin_location}: flowgraph cannot load "
        "TensorFlow plugin libraries; its file systems are local files and gs:// / s3:// "
        "through tf.io.gfile (docs/io.md)")


def __getattr__(name: str):
    from flowgraph.framework.missing_api import missing_attribute

    raise missing_attribute("experimental", name)


def __dir__():
    return list(__all__)
