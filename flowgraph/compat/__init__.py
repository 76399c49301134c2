"""`tf.compat`: the version shims TF1 code calls, and text/bytes helpers.

flowgraph *is* TensorFlow 1.x's API, so ``tf.compat.v1`` is the `flowgraph` module
itself (``tf.compat.v1.placeholder is tf.placeholder``), and
``import flowgraph.compat.v1 as tf`` works like ``import tensorflow.compat.v1 as tf``.
``disable_v2_behavior()`` and ``disable_eager_execution()`` do nothing (graph mode is
the only mode); the finer switches (``enable_v2_tensorshape`` ...) are in
`flowgraph/compat/switches.py`; ``enable_eager_execution()`` and ``enable_v2_behavior()``
raise a `NotImplementedError` explaining that flowgraph runs graphs with sessions.

Example
-------
>>> import flowgraph as tf
>>> tf.compat.v1 is tf
True
>>> tf.compat.as_bytes("café"), tf.compat.as_text(b"caf\\xc3\\xa9")
(b'caf\\xc3\\xa9', 'café')
"""

from __future__ import annotations

import contextlib
import datetime
import numbers
import os
import sys

import numpy as np

__all__ = [
    "as_bytes",
    "as_str",
    "as_str_any",
    "as_text",
    "bytes_or_text_types",
    "complex_types",
    "dimension_at_index",
    "dimension_value",
    "disable_control_flow_v2",
    "disable_eager_execution",
    "disable_resource_variables",
    "disable_tensor_equality",
    "disable_v2_behavior",
    "disable_v2_tensorshape",
    "enable_control_flow_v2",
    "enable_eager_execution",
    "enable_resource_variables",
    "enable_tensor_equality",
    "enable_v2_behavior",
    "enable_v2_tensorshape",
    "executing_eagerly",
    "forward_compatibility_horizon",
    "forward_compatible",
    "integral_types",
    "path_to_str",
    "real_types",
    "v1",
]

from flowgraph.compat.switches import (
    disable_control_flow_v2,
    disable_resource_variables,
    disable_tensor_equality,
    disable_v2_tensorshape,
    enable_control_flow_v2,
    enable_resource_variables,
    enable_tensor_equality,
    enable_v2_tensorshape,
)
from flowgraph.framework.tensor_shape import dimension_at_index, dimension_value

v1 = sys.modules["flowgraph"]
sys.modules[f"{__name__}.v1"] = v1

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes (text is encoded with `encoding`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.as_bytes("abc")
    b'abc'
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str (bytes are decoded with `encoding`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.as_text(b"abc")
    'abc'
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value) -> str:
    """`value` as str: decoded if bytes, ``str(value)`` otherwise.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.as_str_any(3)
    '3'
    """
    if isinstance(value, bytes):
        return as_str(value)
    return str(value)


def path_to_str(path):
    """A path-like object as str; anything else unchanged.

    Example
    -------
    >>> import flowgraph as tf, pathlib
    >>> tf.compat.path_to_str(pathlib.PurePosixPath("/tmp/model"))
    '/tmp/model'
    """
    if isinstance(path, os.PathLike):
        return as_str_any(os.fspath(path))
    return path


# TensorFlow 2.15's forward-compatibility horizon: graphs may use op features released
# before it (TF_FORWARD_COMPATIBILITY_DELTA_DAYS moves it, as in TensorFlow).
_HORIZON = [datetime.date(2023, 10, 10)
            + datetime.timedelta(days=int(os.environ.get("TF_FORWARD_COMPATIBILITY_DELTA_DAYS",
                                                         "0") or 0))]


def forward_compatible(year: int, month: int, day: int) -> bool:
    """Whether the date is before the forward-compatibility horizon (TensorFlow 2.15's,
    2023-10-10, unless `forward_compatibility_horizon` moved it).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.forward_compatible(2019, 1, 1), tf.compat.forward_compatible(2100, 1, 1)
    (True, False)
    """
    return _HORIZON[0] > datetime.date(year, month, day)


@contextlib.contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int):
    """Move the horizon of `forward_compatible` to the date while the block runs.

    >>> import flowgraph as tf
    >>> with tf.compat.forward_compatibility_horizon(2030, 1, 1):
    ...     tf.compat.forward_compatible(2029, 12, 31)
    True
    """
    saved = _HORIZON[0]
    _HORIZON[0] = datetime.date(year, month, day)
    try:
        yield
    finally:
        _HORIZON[0] = saved


# -- TF1/TF2 switches ------------------------------------------------------------------------
def disable_v2_behavior() -> None:
    """No-op: flowgraph always has TensorFlow 1.x behaviour.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.disable_v2_behavior()
    """


def disable_eager_execution() -> None:
    """No-op: flowgraph always builds graphs and runs them with a `Session`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.disable_eager_execution()
    """






def executing_eagerly() -> bool:
    """Always False: flowgraph has no eager mode.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.executing_eagerly()
    False
    """
    return False


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Not supported: flowgraph has no eager mode; raises NotImplementedError.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.enable_eager_execution()
    Traceback (most recent call last):
    ...
    NotImplementedError: tf.enable_eager_execution() is not supported: ...
    """
    raise NotImplementedError(
        "tf.enable_eager_execution() is not supported: flowgraph implements TensorFlow "
        "1.x graph mode only. Build the graph, then evaluate tensors with a tf.Session "
        "(sess.run(t)) or tf.InteractiveSession (t.eval()). Remove the "
        "enable_eager_execution() call.")


def enable_v2_behavior() -> None:
    """Not supported: flowgraph implements TF1 behaviour only; raises NotImplementedError.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.compat.enable_v2_behavior()
    Traceback (most recent call last):
    ...
    NotImplementedError: tf.enable_v2_behavior() is not supported: ...
    """
    raise NotImplementedError(
        "tf.enable_v2_behavior() is not supported: flowgraph implements the TensorFlow "
        "1.x (tf.compat.v1) API in graph mode only. Remove the call; use tf.Session to run "
        "graphs.")
