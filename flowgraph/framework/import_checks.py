"""Checks of an imported node against its op definition, before the op is built.

A graph def read from a file may pair an op type with inputs or attributes that were
meant for another type (a swapped ``op`` field). Building such a node would call the
op's shape function with the wrong number of inputs, or its dtype function with a
string where a `DType` belongs, and fail with an arbitrary Python error. This module
compares the node with the registered `OpDef` first:

- the number of data inputs against the shape function's parameters (``shape_fn(op,
  a, b)`` takes exactly two; ``shape_fn(op, *xs)`` any number; defaults lower the
  minimum);
- each attribute against the type of the op's declared default (bool, int, float, str,
  list, dict, `DType`, `TensorShape`), and attributes whose names always hold a dtype
  (``dtype``, ``T``, ``out_type``, ...) against `DType`.

`check_node_against_op_def` returns a sentence describing the first problem, or None.

Example
-------
>>> import flowgraph as tf
>>> check_node_against_op_def("MatMul", [tf.constant([[1.0]])], {})
'MatMul takes 2 input(s), the node has 1'
>>> check_node_against_op_def("Cast", [tf.constant(1)], {"DstT": "float32"}) is not None
True
"""

from __future__ import annotations

import binascii
import inspect
from typing import Any

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import get_op_def, has_op_def
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["ATTR_DECODE_ERRORS", "check_node_against_op_def"]

# What `serialization.decode_attr` can raise on a malformed value.
ATTR_DECODE_ERRORS = (TypeError, ValueError, KeyError, AttributeError, RecursionError,
                      OverflowError, binascii.Error)

# Attribute names that hold a dtype in every op that has them.
_DTYPE_ATTRS = frozenset({"dtype", "T", "DstT", "SrcT", "out_type", "Tidx",
                          "key_dtype", "value_dtype", "output_type", "Tindices", "Tparams",
                          "index_type", "Tpaddings", "Tshape", "Tmultiples"})
_DTYPE_LIST_ATTRS = frozenset({"dtypes", "output_types", "component_types", "Tcomponents"})

_ARITY: dict[str, tuple[int, int | None]] = {}


def _arity(op_type: str) -> tuple[int, int | None]:
    """(minimum, maximum or None) data inputs of `op_type`, from its shape function."""
    if op_type not in _ARITY:
        fn = get_op_def(op_type).shape_fn
        try:
            params = list(inspect.signature(fn).parameters.values())[1:]  # skip `op`
        except (TypeError, ValueError):
            _ARITY[op_type] = (0, None)
            return _ARITY[op_type]
        lo = hi = 0
        unbounded = False
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                unbounded = True
            elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                hi += 1
                lo += p.default is p.empty
        _ARITY[op_type] = (lo, None if unbounded else hi)
    return _ARITY[op_type]


def _kind_ok(default: Any, value: Any) -> bool:
    if value is None:
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, list | tuple):
        return isinstance(value, list | tuple)
    if isinstance(default, dict):
        return isinstance(value, dict)
    if isinstance(default, _dtypes.DType):
        return isinstance(value, _dtypes.DType)
    if isinstance(default, TensorShape):
        return isinstance(value, TensorShape)
    return True


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r:.60}"


def check_node_against_op_def(op_type: str, inputs: list, attrs: dict) -> str | None:
    """The first mismatch between a node and the definition of `op_type`, or None."""
    if not has_op_def(op_type):
        return (f"unknown op type '{op_type}' (not a registered flowgraph op; "
                "`flowgraph ops` lists them)")
    lo, hi = _arity(op_type)
    n = len(inputs)
    if n < lo or (hi is not None and n > hi):
        want = f"{lo}" if lo == hi else f"{lo} or more" if hi is None else f"{lo} to {hi}"
        return f"{op_type} takes {want} input(s), the node has {n}"
    defaults = get_op_def(op_type).attrs
    for key, value in attrs.items():
        if key in defaults and not _kind_ok(defaults[key], value):
            return (f"attribute '{key}' should be a {type(defaults[key]).__name__} like its "
                    f"default {defaults[key]!r:.40}, found {_describe(value)}")
        if key in _DTYPE_ATTRS and value is not None and not isinstance(value, _dtypes.DType):
            return f"attribute '{key}' should be a dtype, found {_describe(value)}"
        if key in _DTYPE_LIST_ATTRS and not (
                isinstance(value, list | tuple)
                and all(isinstance(v, _dtypes.DType) for v in value)):
            return f"attribute '{key}' should be a list of dtypes, found {_describe(value)}"
    return None
