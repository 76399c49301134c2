"""Kernel errors as TensorFlow errors that name the node, its device and inputs.

The executor calls `describe_error(node, exc, args)` when a kernel raises: the exception
becomes the matching `OpError` subclass (a `ValueError` from NumPy becomes
`InvalidArgumentError`, a `MemoryError` `ResourceExhaustedError`), with the node's name,
op type, device, the shapes and dtypes of its inputs and the line that created the op.
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState
from flowgraph.runtime.node_table import NodeInfo
from flowgraph.runtime.step import StepContext

_ERROR_MAP = [
    (errors.OpError, None),
    (MemoryError, errors.ResourceExhaustedError),
    (ZeroDivisionError, errors.InvalidArgumentError),
    (FloatingPointError, errors.InvalidArgumentError),
    (IndexError, errors.InvalidArgumentError),
    (ValueError, errors.InvalidArgumentError),
    (TypeError, errors.InvalidArgumentError),
    (KeyError, errors.InvalidArgumentError),
    (NotImplementedError, errors.UnimplementedError),
]


def _describe_value(v) -> str:
    if isinstance(v, np.ndarray):
        return f"{tuple(v.shape)} {v.dtype}"
    if isinstance(v, VariableState):
        return f"variable {v.name}"
    if isinstance(v, np.generic):
        return f"() {v.dtype}"
    return type(v).__name__


_NUMPY_BROADCAST = "operands could not be broadcast together with shapes "


def _incompatible_shapes(message: str) -> str:
    """NumPy's broadcast failure in TensorFlow's words ("Incompatible shapes: [4] vs.
    [3]"), which programs match on, NumPy's text kept after it."""
    shapes = message[len(_NUMPY_BROADCAST):].split()
    dims = [s.strip("()").rstrip(",").replace(",", ", ") for s in shapes[:2]]
    if len(dims) != 2:
        return message
    return f"Incompatible shapes: [{dims[0]}] vs. [{dims[1]}] ({message.strip()})"


def describe_error(node: NodeInfo, exc: BaseException, args) -> BaseException:
    """Turn a kernel's exception into a TensorFlow error naming the op and its inputs."""
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        return exc
    cls = errors.InternalError
    for base, mapped in _ERROR_MAP:
        if isinstance(exc, base):
            cls = type(exc) if mapped is None else mapped
            break
    message = exc.message if isinstance(exc, errors.OpError) else f"{exc}"
    if isinstance(exc, ValueError) and message.startswith(_NUMPY_BROADCAST):
        message = _incompatible_shapes(message)
    if isinstance(exc, errors.OpError) and "[[node " in message:
        return exc
    shown = [a for a in args if not isinstance(a, StepContext)]
    names = node.inputs or ([t.name for t in node.op._inputs] if node.op is not None else [])
    described = ", ".join(
        f"{n}={_describe_value(v)}" for n, v in zip(names, shown)
    ) or "no inputs"
    where = node.op.source_line() if node.op is not None else ""
    text = (f"{message}\n\t [[node {node.name} ({node.op_type}) on {node.device} with inputs "
            f"{described}]]")
    if where:
        text += f"\nThe op was created at {where}"
    if cls is errors.InternalError and not isinstance(exc, errors.OpError):
        text = f"{type(exc).__name__}: {text}"
    err = cls(errors._NODE_DEF_OF_OP, node.op, text)  # e.node_def: the op's, as in TF
    err.__cause__ = exc
    return err
