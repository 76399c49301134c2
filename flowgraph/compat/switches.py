"""The TF1/TF2 behaviour switches (`tf.enable_v2_tensorshape`, ...) and their state.

Each ``enable_*``/``disable_*`` pair flips one flag. What a flag changes in flowgraph,
measured against TensorFlow 2.15's ``tf.compat.v1`` in graph mode:

- ``v2_tensorshape``: indexing or iterating a `TensorShape` gives ints (None when
  unknown) instead of `Dimension`s; ``shape.dims`` stays a list of `Dimension`s. Only
  code outside flowgraph sees the change (flowgraph's modules keep their `Dimension`s,
  `flowgraph/framework/tensor_shape.py`).
- ``tensor_equality``: recorded only. In graph mode TensorFlow keeps comparing and
  hashing tensors by identity whichever way it is set, and so does flowgraph.
- ``resource_variables``: every variable created without ``use_resource`` afterwards is
  a resource variable (``VarHandleOp``, `flowgraph/ops/resource_variables.py`), and
  ``tf.resource_variables_enabled()`` says so (`flowgraph/framework/build_info.py`).
- ``control_flow_v2``: recorded only. flowgraph's `tf.cond`/`tf.while_loop` stay
  Switch/Merge graphs, so ``tf.control_flow_v2_enabled()`` keeps answering False.

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 3])
>>> tf.enable_v2_tensorshape(); x.shape[1], x.shape[0]
(3, None)
>>> tf.disable_v2_tensorshape(); x.shape[1]
Dimension(3)
"""

from __future__ import annotations

from flowgraph.framework import build_info as _build_info
from flowgraph.framework import tensor_shape as _tensor_shape

__all__ = [
    "disable_control_flow_v2",
    "disable_resource_variables",
    "disable_tensor_equality",
    "disable_v2_tensorshape",
    "enable_control_flow_v2",
    "enable_resource_variables",
    "enable_tensor_equality",
    "enable_v2_tensorshape",
]

_FLAGS = {"resource_variables": False, "control_flow_v2": False, "tensor_equality": False}


def enable_v2_tensorshape() -> None:
    """Make ``shape[i]`` and iterating a shape give ints (None when unknown).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.enable_v2_tensorshape(); tf.TensorShape([2, None])[0]
    2
    >>> tf.disable_v2_tensorshape()
    """
    _tensor_shape._V2_BEHAVIOR[0] = True


def disable_v2_tensorshape() -> None:
    """Make ``shape[i]`` a `Dimension` again (TF1 behaviour, the default).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.disable_v2_tensorshape(); tf.TensorShape([2])[0]
    Dimension(2)
    """
    _tensor_shape._V2_BEHAVIOR[0] = False


def enable_tensor_equality() -> None:
    """Record the switch; in graph mode tensors still compare and hash by identity, as
    in TensorFlow's graph mode.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.enable_tensor_equality(); x = tf.constant(1.0); x == x
    True
    >>> tf.disable_tensor_equality()
    """
    _FLAGS["tensor_equality"] = True


def disable_tensor_equality() -> None:
    """Undo `enable_tensor_equality` (the default).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.disable_tensor_equality()
    """
    _FLAGS["tensor_equality"] = False


def enable_resource_variables() -> None:
    """Make every variable created without ``use_resource`` a resource variable.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.enable_resource_variables(); tf.Variable(1.0).op.type
    'VarHandleOp'
    >>> tf.disable_resource_variables(); tf.Variable(1.0).op.type
    'VariableV2'
    """
    _FLAGS["resource_variables"] = True
    _build_info.RESOURCE_VARIABLES[0] = True


def disable_resource_variables() -> None:
    """Undo `enable_resource_variables` (the default).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.disable_resource_variables()
    """
    _FLAGS["resource_variables"] = False
    _build_info.RESOURCE_VARIABLES[0] = False


def enable_control_flow_v2() -> None:
    """Record the switch; flowgraph's control flow stays TF1's Switch/Merge graphs.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.enable_control_flow_v2()
    >>> tf.disable_control_flow_v2()
    """
    _FLAGS["control_flow_v2"] = True


def disable_control_flow_v2() -> None:
    """Undo `enable_control_flow_v2` (the default).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.disable_control_flow_v2()
    """
    _FLAGS["control_flow_v2"] = False

