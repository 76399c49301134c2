"""Data types of tensors (`tf.float32`, ...) and their mapping to NumPy.

Example
-------
>>> as_dtype("float32") == float32, float32.as_numpy_dtype.__name__
(True, 'float32')
"""

from __future__ import annotations

import builtins

import numpy as np


class DType:
    """A tensor element type; one instance per type (and one per ref variant)."""

    __slots__ = ("_enum", "_is_ref", "_name", "_np")

    def __init__(self, name: str, np_type, enum: int, is_ref: bool = False) -> None:
        self._name = name
        self._np = np_type
        self._enum = enum
        self._is_ref = is_ref

    @property
    def name(self) -> str:
        return f"{self._name}_ref" if self._is_ref else self._name

    @property
    def as_numpy_dtype(self):
        return self._np

    @property
    def as_datatype_enum(self) -> int:
        return self._enum + (100 if self._is_ref else 0)

    @property
    def base_dtype(self) -> DType:
        return _BY_NAME[self._name] if self._is_ref else self

    @property
    def real_dtype(self) -> DType:
        base = self.base_dtype
        if base is complex64:
            return float32
        if base is complex128:
            return float64
        return base

    @property
    def is_ref_dtype(self) -> bool:
        return self._is_ref

    @property
    def _as_ref(self) -> DType:
        return self if self._is_ref else _REFS[self._name]

    @property
    def is_floating(self) -> bool:
        return self.base_dtype in (float16, float32, float64)

    @property
    def is_integer(self) -> bool:
        return self.base_dtype in (int8, int16, int32, int64, uint8, uint16, uint32, uint64)

    @property
    def is_unsigned(self) -> bool:
        return self.base_dtype in (uint8, uint16, uint32, uint64)

    @property
    def is_complex(self) -> bool:
        return self.base_dtype in (complex64, complex128)

    @property
    def is_bool(self) -> bool:
        return self.base_dtype is bool

    @property
    def is_numpy_compatible(self) -> bool:
        return True

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def size(self) -> int:
        if self.base_dtype is string:
            return 8
        return np.dtype(self._np).itemsize

    @property
    def min(self):
        if self.is_floating:
            return float(np.finfo(self._np).min)
        if self.is_integer:
            return int(np.iinfo(self._np).min)
        if self.is_bool:
            return False
        raise TypeError(f"Cannot find minimum value of {self.name}.")

    @property
    def max(self):
        if self.is_floating:
            return float(np.finfo(self._np).max)
        if self.is_integer:
            return int(np.iinfo(self._np).max)
        if self.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self.name}.")

    def is_compatible_with(self, other) -> builtins.bool:
        other = as_dtype(other)
        return self.base_dtype is other.base_dtype and (not other._is_ref or self._is_ref)

    def __eq__(self, other) -> builtins.bool:
        if other is self:
            return True
        if other is None:
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self.as_datatype_enum

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.float16, 19)
float32 = DType("float32", np.float32, 1)
float64 = DType("float64", np.float64, 2)
int8 = DType("int8", np.int8, 6)
int16 = DType("int16", np.int16, 5)
int32 = DType("int32", np.int32, 3)
int64 = DType("int64", np.int64, 9)
uint8 = DType("uint8", np.uint8, 4)
uint16 = DType("uint16", np.uint16, 17)
uint32 = DType("uint32", np.uint32, 22)
uint64 = DType("uint64", np.uint64, 23)
bool = DType("bool", np.bool_, 10)
complex64 = DType("complex64", np.complex64, 8)
complex128 = DType("complex128", np.complex128, 18)
string = DType("string", np.object_, 7)
half = float16
double = float64

_ALL_BASE = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
             uint64, bool, complex64, complex128, string)
_BY_NAME = {d._name: d for d in _ALL_BASE}
_REFS = {d._name: DType(d._name, d._np, d._enum, is_ref=True) for d in _ALL_BASE}
for _n, _r in _REFS.items():
    globals()[f"{_n}_ref"] = _r
_BY_ENUM = {d.as_datatype_enum: d for d in _ALL_BASE}
_BY_ENUM.update({r.as_datatype_enum: r for r in _REFS.values()})
_BY_NP = {np.dtype(d._np): d for d in _ALL_BASE if d is not string}
_ALIASES = {"float": float32, "half": float16, "double": float64, "bool_": bool,
            "str": string, "bytes": string, "object": string}
_PY_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool,
             builtins.complex: complex128, builtins.str: string, builtins.bytes: string}

FLOATS = (float16, float32, float64)
INTEGERS = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX = (complex64, complex128)
NUMERIC = FLOATS + INTEGERS + COMPLEX
REAL = FLOATS + INTEGERS
ALL = (*NUMERIC, bool, string)


def as_dtype(type_value) -> DType:
    """Convert a DType, NumPy dtype/type, Python type, name or enum to a `DType`.

    Example
    -------
    >>> as_dtype(np.float64).name, as_dtype("int32_ref").base_dtype.name
    ('float64', 'int32')
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        if type_value.endswith("_ref"):
            base = as_dtype(type_value[:-4])
            return base._as_ref
        found = _BY_NAME.get(type_value) or _ALIASES.get(type_value)
        if found is not None:
            return found
    elif isinstance(type_value, int) and not isinstance(type_value, builtins.bool):
        found = _BY_ENUM.get(type_value)
        if found is not None:
            return found
    elif isinstance(type_value, type) and type_value in _PY_TYPES:
        return _PY_TYPES[type_value]
    else:
        try:
            npd = np.dtype(type_value)
        except TypeError:
            npd = None
        if npd is not None:
            if npd.kind in "OUS":
                return string
            found = _BY_NP.get(npd)
            if found is not None:
                return found
    raise TypeError(f"Cannot convert value {type_value!r} to a flowgraph DType.")


def dtype_of_value(value) -> DType:
    """The dtype TensorFlow gives a constant made from `value`.

    Python floats become float32, ints int32 (int64 when too large), NumPy values keep
    their dtype, and strings become `string`.
    """
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype.kind in "OUS":
            return string
        return as_dtype(value.dtype)
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int32 if -(2**31) <= value < 2**31 else int64
    if isinstance(value, builtins.float):
        return float32
    if isinstance(value, builtins.complex):
        return complex128
    if isinstance(value, str | bytes):
        return string
    if isinstance(value, list | tuple):
        if len(value) == 0:
            return float32
        kinds = [dtype_of_value(v) for v in value]
        if any(k is string for k in kinds):
            if all(k is string for k in kinds):
                return string
            raise TypeError(f"Cannot mix strings and numbers in a tensor: {value!r}")
        for candidate in (complex128, complex64, float64, float32, float16, int64, uint64,
                          uint32, int32, uint16, int16, uint8, int8, bool):
            if candidate in kinds:
                if candidate is int32 and int64 in kinds:
                    return int64
                return candidate
    if hasattr(value, "__array__"):
        return dtype_of_value(np.asarray(value))
    raise TypeError(
        f"Cannot convert {value!r} (type {type(value).__name__}) to a tensor: expected a "
        "number, string, list, NumPy array or Tensor"
    )
