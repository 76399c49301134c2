"""`tf.constant`, `tf.convert_to_tensor` and static constant evaluation.

Conversion follows TensorFlow 1.x: Python floats become float32, ints int32 (int64 when
they do not fit), bools bool, str/bytes string; NumPy values keep their dtype. With an
explicit `dtype`, Python values must be of a compatible kind (``1.5`` is not an int32)
while NumPy values are cast, as TensorFlow does. Lists that contain tensors (or
variables) are packed with ``tf.stack``.

Example
-------
>>> import flowgraph as tf
>>> t = tf.convert_to_tensor([[1, 2], [3, 4]])
>>> t.dtype.name, t.shape.as_list()
('int32', [2, 2])
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape, as_shape


@register_op("Const", attrs={"value": None, "dtype": None})
def _const_shape(op):
    return [TensorShape(op.attrs["value"].shape)]


not_differentiable("Const")

# (type, function(value, dtype, name, as_ref) -> Tensor); filled by Variable and friends.
_CONVERSION_FUNCTIONS: list[tuple[type, Callable]] = []


def register_tensor_conversion_function(base_type: type, conversion_func: Callable,
                                        priority: int = 100) -> None:
    """Teach `convert_to_tensor` to convert instances of `base_type`.

    `conversion_func(value, dtype=None, name=None, as_ref=False)` returns a Tensor (or
    NotImplemented to let the next function try).
    """
    _CONVERSION_FUNCTIONS.append((base_type, conversion_func))


def _kind_error(value, dtype) -> TypeError:
    return TypeError(
        f"Expected {dtype.name}, but got {value!r} of type '{type(value).__name__}'."
    )


def _check_python_kind(value: Any, dtype) -> None:
    """TypeError unless every scalar in the (nested) Python `value` fits `dtype`'s kind."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list | tuple):
            stack.extend(v)
            continue
        if isinstance(v, np.ndarray | np.generic) or isinstance(v, str | bytes):
            continue  # NumPy values are cast; strings are checked by the conversion
        if v is None:
            raise TypeError(f"Failed to convert {value!r} to a {dtype.name} tensor: None "
                            "values are not supported.")
        if dtype.is_bool:
            ok = isinstance(v, bool)
        elif dtype.is_integer:  # a known Dimension counts as an int, as in TensorFlow
            ok = isinstance(v, numbers.Integral) or (isinstance(v, Dimension)
                                                     and v.value is not None)
        elif dtype.is_floating:
            ok = isinstance(v, numbers.Real)
        elif dtype.is_complex:
            ok = isinstance(v, numbers.Complex)
        else:  # quantized types take NumPy values only, as in TensorFlow
            ok = not dtype.is_quantized
        if not ok:
            raise _kind_error(v if not isinstance(value, list | tuple) else value, dtype)


def _dimensions_as_ints(value):
    if isinstance(value, Dimension):
        return value.value
    if isinstance(value, list | tuple):
        return [_dimensions_as_ints(v) for v in value]
    return value


def _string_array(value) -> np.ndarray:
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        out = np.empty((), dtype=object)
        out[()] = _as_bytes(value)
        return out
    src = np.asarray(value, dtype=object)
    out = np.empty(src.shape, dtype=object)
    flat = out.reshape(-1)
    for i, x in enumerate(src.reshape(-1)):
        flat[i] = _as_bytes(x)
    return out


def _to_numpy(value: Any, dtype) -> np.ndarray:
    if value is None:
        raise ValueError("None values not supported: cannot convert None to a tensor.")
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if dtype == _dtypes.string:
            return _string_array(value)
        np_dtype = dtype.as_numpy_dtype
        if isinstance(value, np.ndarray | np.generic):
            if value.dtype.kind in "USO":
                raise _kind_error(value, dtype)
            with np.errstate(all="ignore"):
                return np.asarray(value).astype(np_dtype)  # TF casts NumPy values
        _check_python_kind(value, dtype)
        if dtype.is_integer:
            value = _dimensions_as_ints(value)
        inferred = _dtypes.dtype_of_value(value)
        if inferred == _dtypes.string:
            raise _kind_error(value, dtype)
        try:
            with np.errstate(over="ignore"):
                arr = np.asarray(value, dtype=np_dtype)
        except OverflowError:
            raise TypeError(
                f"Expected {dtype.name}, but got {value!r}: the value does not fit in "
                f"{dtype.name}."
            ) from None
        if dtype.is_integer and inferred.is_integer and arr.size:
            info = np.iinfo(np_dtype)
            ref = np.asarray(value, dtype=object)
            if not all(info.min <= int(x) <= info.max for x in ref.reshape(-1)):
                raise TypeError(
                    f"Expected {dtype.name}, but got {value!r}: the value does not fit "
                    f"in {dtype.name} (range [{info.min}, {info.max}])."
                )
        return arr
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype.kind in "US" or (value.dtype == object and value.size):
            return _string_array(value)
        return np.asarray(value)
    if type(value) is int and 2**63 <= value < 2**64:
        return np.asarray(value, dtype=np.uint64)  # as TensorFlow does
    try:
        inferred = _dtypes.dtype_of_value(value)
    except ValueError as e:  # None inside a list, an int out of range
        raise TypeError(f"Failed to convert {value!r} to a tensor: {e}") from None
    if inferred == _dtypes.string:
        return _string_array(value)
    return np.asarray(value, dtype=inferred.as_numpy_dtype)


def _as_bytes(x) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, np.bytes_):
        return bytes(x)
    if isinstance(x, np.str_):
        return str(x).encode("utf-8")
    raise TypeError(f"Expected string, but got {x!r} of type '{type(x).__name__}'.")


def _fill_to_shape(arr: np.ndarray, dims: list[int]) -> np.ndarray:
    """TF1's rule for ``constant(value, shape=...)``: reshape a value with the same
    number of elements, broadcast a scalar, and pad a short list with its last element."""
    n = int(np.prod(dims, dtype=np.int64))
    if arr.size == n:
        return arr.reshape(dims)
    if arr.size == 1 and arr.dtype != object:
        # One value repeated: a read-only view of it (no memory per element), which
        # `tensor_proto` writes as TF does, one value and a shape; a plan lays it out
        # densely when it runs (`dense_constant`).
        return np.broadcast_to(arr.reshape(()), dims)
    if arr.size == 1:
        return np.broadcast_to(arr.reshape(()), dims).copy()
    if arr.size > n:
        raise ValueError(
            f"Too many elements provided for a constant of shape {dims}: it takes at most "
            f"{n}, but got {arr.size}."
        )
    flat = arr.reshape(-1)
    fill = flat[-1] if flat.size else np.zeros((), dtype=arr.dtype)
    if arr.dtype == object and not flat.size:
        fill = b""
    out = np.empty(n, dtype=arr.dtype)
    out[: flat.size] = flat
    out[flat.size:] = fill
    return out.reshape(dims)


def constant(value, dtype=None, shape=None, name: str = "Const", verify_shape: bool = False):
    """A tensor holding `value` (a Python scalar or nested list, or a NumPy array).

    With `shape`, a value of as many elements is reshaped, a scalar is broadcast, and a
    shorter list is padded with its last element (TF1's rule); `verify_shape=True`
    requires the value to have exactly `shape` instead.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.constant(0.5, shape=[2, 3]).shape.as_list()
    [2, 3]
    >>> tf.constant([1, 2], dtype=tf.float32).dtype.name
    'float32'
    """
    if isinstance(value, Tensor):
        raise TypeError(
            f"tf.constant expects a Python or NumPy value, but got the tensor {value.name}; "
            "use tf.identity (or tf.convert_to_tensor) to reuse a tensor."
        )
    arr = _to_numpy(value, dtype)
    if shape is not None:
        if isinstance(shape, Tensor):
            raise TypeError(
                f"tf.constant: `shape` must be a Python list or TensorShape, not the tensor "
                f"{shape.name}; use tf.fill(shape, value) for a shape known only at run time."
            )
        target = as_shape(shape)
        if not target.is_fully_defined():
            raise TypeError(f"tf.constant: shape must be fully defined, got {target}.")
        dims = target.as_list()
        if verify_shape and list(arr.shape) != dims:
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, but got {arr.shape}.")
        arr = _fill_to_shape(arr, dims)
    dt = _dtypes.string if arr.dtype == object else _dtypes.as_dtype(arr.dtype)
    if not arr.flags.owndata or arr.flags.writeable:
        arr = np.array(arr, copy=True) if arr is value else arr
    arr.setflags(write=False)
    op = get_default_graph().create_op(
        "Const", [], {"value": arr, "dtype": dt}, name=name or "Const", dtypes=[dt]
    )
    return op._outputs[0]


def convert_to_tensor(value, dtype=None, name: str | None = None, preferred_dtype=None,
                      dtype_hint=None, as_ref: bool = False) -> Tensor:
    """Convert tensors, variables, NumPy arrays, Python scalars and lists to a `Tensor`.

    A `Tensor` is returned as is (ValueError if `dtype` differs); a variable gives its
    value (``v/read``); a list containing tensors is packed with ``tf.stack``; anything
    else becomes a ``Const``. `preferred_dtype` is tried first and dropped if the value
    does not fit it.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.convert_to_tensor(3.0).dtype.name
    'float32'
    >>> tf.convert_to_tensor(3, preferred_dtype=tf.float32).dtype.name
    'float32'
    """
    if isinstance(value, Tensor):
        if dtype is not None:
            want = _dtypes.as_dtype(dtype)
            if not want.base_dtype == value.dtype.base_dtype:
                raise ValueError(
                    f"Tensor conversion requested dtype {want.base_dtype.name} for Tensor with "
                    f"dtype {value.dtype.base_dtype.name}: {value!r}"
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
        return convert_to_tensor(value._as_graph_element(), dtype=dtype, name=name,
                                 as_ref=as_ref)
    if isinstance(value, list | tuple) and _contains_tensor(value):
        return _autopack(value, dtype, name or "packed")
    hint = preferred_dtype if preferred_dtype is not None else dtype_hint
    if dtype is None and hint is not None:
        try:
            return constant(value, dtype=hint, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _contains_tensor(v) -> bool:
    if isinstance(v, Tensor):
        return True
    if isinstance(v, list | tuple):
        return any(_contains_tensor(x) for x in v)
    if isinstance(v, int | float | bool | str | bytes | np.ndarray | np.generic):
        return False
    return any(isinstance(v, t) for t, _ in _CONVERSION_FUNCTIONS)


def _first_tensor_dtype(v):
    if isinstance(v, list | tuple):
        for x in v:
            d = _first_tensor_dtype(x)
            if d is not None:
                return d
        return None
    if isinstance(v, Tensor):
        return v.dtype.base_dtype
    if _contains_tensor(v):
        return getattr(v, "dtype", None) and v.dtype.base_dtype
    return None


# ``tf.stack``, installed by `flowgraph.ops.array_join_ops` (this layer never imports the
# op library): converting a list that holds tensors packs it with this function.
_stack: Callable | None = None


def install_stack_function(fn: Callable) -> None:
    """Set the ``tf.stack`` used to convert lists holding tensors (called by
    `flowgraph.ops.array_join_ops`)."""
    global _stack
    _stack = fn


def _autopack(value, dtype, name: str) -> Tensor:
    """Pack a (nested) list holding tensors with ``tf.stack``, converting every element
    to the dtype of the first tensor found (or `dtype`)."""
    stack = _stack
    if stack is None:
        raise TypeError(
            f"Cannot convert a list containing tensors ({value!r}) to a tensor: tf.stack is "
            "not available"
        )
    if dtype is None:
        dtype = _first_tensor_dtype(value)
    # As in TensorFlow: a scope `name` holds the plain elements, named by their index
    # (`Reshape/shape/1`), and the Pack takes the scope's exact name.
    with get_default_graph().name_scope(name) as scope:
        elems = [
            _autopack(v, dtype, str(i)) if isinstance(v, list | tuple) and _contains_tensor(v)
            else convert_to_tensor(v, dtype=dtype, name=str(i))
            for i, v in enumerate(value)
        ]
        return stack(elems, name=scope)


def _deref(ref: Tensor) -> Tensor:
    """A value tensor reading the ref tensor `ref` (an Identity, cached per ref)."""
    graph = ref.graph
    cache = graph.__dict__.setdefault("_deref_cache", {})
    t = cache.get(ref)
    if t is None:
        with graph.as_default(), graph.name_scope(None), graph.control_dependencies(None), \
                graph.colocate_with(ref.op):
            op = graph.create_op("Identity", [ref], name=f"{ref.op.name}/read")
        t = op.outputs[0]
        cache[ref] = t
    return t


def convert_n_to_tensor(values, dtype=None, name=None) -> list[Tensor]:
    """Convert each of `values` (see `convert_to_tensor`)."""
    return [convert_to_tensor(v, dtype=dtype) for v in values]


def _convert_tensor_shape(shape: TensorShape, dtype=None, name=None, as_ref=False):
    if not shape.is_fully_defined():
        raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
    dims = shape.as_list()
    if dtype is None:
        dtype = _dtypes.int64 if any(d >= 2**31 for d in dims) else _dtypes.int32
    return constant(dims, dtype=dtype, name=name or "shape_as_tensor")


def _convert_dimension(dim: Dimension, dtype=None, name=None, as_ref=False):
    if dim.value is None:
        raise ValueError("Cannot convert an unknown Dimension to a Tensor.")
    return constant(dim.value, dtype=dtype or _dtypes.int32, name=name or "shape_as_tensor")


register_tensor_conversion_function(TensorShape, _convert_tensor_shape)
register_tensor_conversion_function(Dimension, _convert_dimension)


# -- static constant evaluation ---------------------------------------------------------
_CONSTANT_EVALUATORS: dict[str, Callable[[Operation, int], Any]] = {}


def register_constant_evaluator(op_type: str):
    """Decorator: ``fn(op, output_index) -> np.ndarray or None`` for `constant_value`."""

    def decorate(fn):
        _CONSTANT_EVALUATORS[op_type] = fn
        return fn

    return decorate


def is_uniform_view(arr) -> bool:
    """Whether `arr` is one value broadcast over a shape of more than one element (what
    ``constant(scalar, shape=...)`` holds).

    >>> is_uniform_view(np.broadcast_to(np.float32(1), (2, 3)))
    True
    """
    return (isinstance(arr, np.ndarray) and arr.size > 1
            and not any(arr.strides))


def dense_constant(value):
    """`value` laid out densely when it is a uniform view (`is_uniform_view`), read-only
    as the constant it stands for; any other value unchanged. Kernels get dense arrays.

    >>> dense_constant(np.broadcast_to(np.int32(7), (3,))).strides
    (4,)
    """
    if not is_uniform_view(value):
        return value
    out = np.ascontiguousarray(value)
    out.setflags(write=False)
    return out


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
    if op.type == "ShapeN":
        return op.inputs[tensor.value_index].shape
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
