"""`tf.constant`, `tf.convert_to_tensor` and static constant evaluation.

Example
-------
>>> import flowgraph as tf
>>> t = tf.convert_to_tensor([[1, 2], [3, 4]])
>>> t.dtype.name, t.shape.as_list()
('int32', [2, 2])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape


@register_op("Const", attrs={"value": None, "dtype": None})
def _const_shape(op):
    return [TensorShape(op.attrs["value"].shape)]


not_differentiable("Const")

# type -> function(value, dtype, name, as_ref) -> Tensor; filled by Variable and friends.
_CONVERSION_FUNCTIONS: list[tuple[type, Callable]] = []


def register_tensor_conversion_function(base_type: type, conversion_func: Callable) -> None:
    """Teach `convert_to_tensor` to convert instances of `base_type`."""
    _CONVERSION_FUNCTIONS.append((base_type, conversion_func))


def _to_numpy(value: Any, dtype) -> np.ndarray:
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if dtype == _dtypes.string:
            arr = np.empty(np.shape(value), dtype=object) if np.ndim(value) else None
            if arr is None:
                out = np.empty((), dtype=object)
                out[()] = _as_bytes(value)
                return out
            arr[...] = np.vectorize(_as_bytes, otypes=[object])(np.asarray(value, dtype=object))
            return arr
        inferred = _dtypes.dtype_of_value(value)
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {dtype.name}")
        if not _can_cast_exactly(arr, inferred, dtype):
            raise TypeError(
                f"Expected {dtype.name}, but got {value!r} of type "
                f"'{type(value).__name__}' ({inferred.name})."
            )
        return np.asarray(arr, dtype=dtype.as_numpy_dtype)
    inferred = _dtypes.dtype_of_value(value)
    if inferred == _dtypes.string:
        return _to_numpy(value, _dtypes.string)
    return np.asarray(value, dtype=inferred.as_numpy_dtype)


def _can_cast_exactly(arr: np.ndarray, src, dst) -> bool:
    if src == dst or arr.size == 0:
        return True
    if dst.is_bool != src.is_bool:
        return False
    if src.is_floating and (dst.is_integer or dst.is_bool):
        return False
    if src.is_complex and not dst.is_complex:
        return False
    if dst.is_integer:
        info = np.iinfo(dst.as_numpy_dtype)
        return bool(np.all((arr >= info.min) & (arr <= info.max)))
    return True


def _as_bytes(x) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, np.bytes_):
        return bytes(x)
    if isinstance(x, np.str_):
        return str(x).encode("utf-8")
    raise TypeError(f"Expected a string (str or bytes) for a string tensor, got {x!r}")


def constant(value, dtype=None, shape=None, name: str = "Const", verify_shape: bool = False):
    """A tensor holding `value` (broadcast to `shape` if given).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.constant(0.5, shape=[2, 3]).shape.as_list()
    [2, 3]
    """
    arr = _to_numpy(value, dtype)
    if shape is not None:
        target = as_shape(shape)
        if not target.is_fully_defined():
            raise ValueError(f"constant(): shape must be fully defined, got {target}")
        dims = target.as_list()
        if verify_shape and list(arr.shape) != dims:
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, got {arr.shape}.")
        if arr.size == int(np.prod(dims)):
            arr = arr.reshape(dims)
        elif arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), dims).copy()
        else:
            raise TypeError(
                f"Eager/graph constant: value of {arr.size} elements cannot be reshaped to "
                f"shape {dims} ({int(np.prod(dims))} elements)"
            )
    dt = _dtypes.as_dtype(arr.dtype) if arr.dtype != object else _dtypes.string
    if dtype is not None:
        dt = _dtypes.as_dtype(dtype).base_dtype
    arr.setflags(write=False)
    op = get_default_graph().create_op(
        "Const", [], {"value": arr, "dtype": dt}, name=name, dtypes=[dt]
    )
    return op.outputs[0]


def convert_to_tensor(value, dtype=None, name: str | None = None, preferred_dtype=None,
                      dtype_hint=None, as_ref: bool = False) -> Tensor:
    """Convert tensors, variables, NumPy arrays, Python scalars and lists to a `Tensor`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.convert_to_tensor(3.0).dtype.name
    'float32'
    """
    if isinstance(value, Tensor):
        if dtype is not None:
            want = _dtypes.as_dtype(dtype)
            if not want.base_dtype == value.dtype.base_dtype:
                raise ValueError(
                    f"Tensor conversion requested dtype {want.name} for Tensor with dtype "
                    f"{value.dtype.name}: {value!r}"
                )
        if value.dtype.is_ref_dtype and not as_ref:
            return _deref(value)
        return value
    if isinstance(value, Operation):
        raise TypeError(
            f"Cannot convert Operation '{value.name}' to a Tensor; use op.outputs[i] instead"
        )
    for base_type, fn in _CONVERSION_FUNCTIONS:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is not NotImplemented:
                return result
    if hasattr(value, "_as_graph_element") and not isinstance(value, np.ndarray):
        return convert_to_tensor(value._as_graph_element(), dtype=dtype, name=name)
    if isinstance(value, list | tuple) and any(_contains_tensor(v) for v in value):
        from flowgraph.ops.array_ops import stack

        return stack([convert_to_tensor(v, dtype=dtype) for v in value], name=name or "packed")
    hint = preferred_dtype or dtype_hint
    if dtype is None and hint is not None:
        try:
            return constant(value, dtype=hint, name=name or "Const")
        except (TypeError, ValueError):
            pass
    try:
        return constant(value, dtype=dtype, name=name or "Const")
    except TypeError:
        raise
    except ValueError as e:
        raise TypeError(f"Cannot convert {value!r} to a Tensor: {e}") from None


def _contains_tensor(v) -> bool:
    if isinstance(v, Tensor):
        return True
    if isinstance(v, list | tuple):
        return any(_contains_tensor(x) for x in v)
    return any(isinstance(v, t) for t, _ in _CONVERSION_FUNCTIONS)


def _deref(ref: Tensor) -> Tensor:
    """A value tensor reading the ref tensor `ref` (an Identity, cached per ref)."""
    cache = ref.graph.__dict__.setdefault("_deref_cache", {})
    t = cache.get(ref)
    if t is None:
        from flowgraph.framework.graph import get_default_graph as _g

        graph = ref.graph
        with graph.as_default():
            g = _g()
            with g.name_scope(None), g.control_dependencies(None), g.colocate_with(ref.op):
                op = g.create_op("Identity", [ref], name=f"{ref.op.name}/read")
        t = op.outputs[0]
        cache[ref] = t
    return t


def convert_n_to_tensor(values, dtype=None, name=None) -> list[Tensor]:
    return [convert_to_tensor(v, dtype=dtype) for v in values]


# -- static constant evaluation ---------------------------------------------------------
_CONSTANT_EVALUATORS: dict[str, Callable[[Operation, int], Any]] = {}


def register_constant_evaluator(op_type: str):
    """Decorator: ``fn(op, output_index) -> np.ndarray or None`` for `constant_value`."""

    def decorate(fn):
        _CONSTANT_EVALUATORS[op_type] = fn
        return fn

    return decorate


def constant_value(tensor: Tensor):
    """The value of `tensor` if it can be computed at graph construction, else None."""
    if not isinstance(tensor, Tensor):
        return None
    op = tensor.op
    if op.type == "Const":
        return op.attrs["value"]
    fn = _CONSTANT_EVALUATORS.get(op.type)
    if fn is None:
        return None
    try:
        return fn(op, tensor.value_index)
    except Exception:
        return None


def constant_value_as_shape(tensor: Tensor) -> TensorShape:
    """A partial shape from a 1-D int tensor that may be only partly constant."""
    if tensor.shape.ndims == 0:
        value = constant_value(tensor)
        if value is None:
            return TensorShape(None)
        return TensorShape([] if int(value) == -1 else None)
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if int(v) < 0 else int(v) for v in np.reshape(value, -1)])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            v = constant_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        out = TensorShape([])
        for t in op.inputs[:-1]:
            out = out.concatenate(constant_value_as_shape(t))
        return out
    n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return TensorShape(None) if n is None else TensorShape([None] * n)
