"""`tf.types`: ``tf.types.experimental.TensorLike`` (an `isinstance` target for what
converts to a tensor) and ``FunctionType``.

Example
-------
>>> import flowgraph as tf
>>> isinstance(tf.constant(1.0), tf.types.experimental.TensorLike)
True
>>> isinstance(object(), tf.types.experimental.TensorLike)
False
"""

from __future__ import annotations

import types

import numpy as np

from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor

__all__ = ["experimental"]


class _TensorLikeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor | SparseTensor | np.ndarray | np.generic | int | float
                          | bool | str | bytes | list | tuple)


class TensorLike(metaclass=_TensorLikeMeta):
    """What converts to a tensor: tensors, sparse tensors, arrays, Python scalars,
    strings and nested lists (an `isinstance` target)."""


class FunctionType:
    """The type of a function's parameters (`inspect.Signature` semantics)."""

    def __init__(self, parameters=(), captures=None) -> None:
        self.parameters = tuple(parameters)
        self.captures = dict(captures or {})


experimental = types.SimpleNamespace(TensorLike=TensorLike, FunctionType=FunctionType)


def __dir__():
    return list(__all__)
