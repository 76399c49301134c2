"""Tensor element types (`tf.float32`, ...) and their mapping to NumPy.

There is exactly one `DType` object per type, plus one per reference ("_ref") variant,
so dtypes can be compared with ``is`` as well as ``==``.

Example
-------
>>> as_dtype("float32") is float32, float32.as_numpy_dtype.__name__
(True, 'float32')
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any

import numpy as np

__all__ = [
    "ALL",
    "COMPLEX",
    "FLOATS",
    "INTEGERS",
    "NUMERIC",
    "QUANTIZED_DTYPES",
    "REAL",
    "DType",
    "as_dtype",
    "bfloat16",
    "bfloat16_ref",
    "bool",
    "bool_ref",
    "complex64",
    "complex64_ref",
    "complex128",
    "complex128_ref",
    "double",
    "double_ref",
    "dtype_of_value",
    "float16",
    "float16_ref",
    "float32",
    "float32_ref",
    "float64",
    "float64_ref",
    "half",
    "half_ref",
    "int8",
    "int8_ref",
    "int16",
    "int16_ref",
    "int32",
    "int32_ref",
    "int64",
    "int64_ref",
    "qint8",
    "qint8_ref",
    "qint16",
    "qint16_ref",
    "qint32",
    "qint32_ref",
    "quint8",
    "quint8_ref",
    "quint16",
    "quint16_ref",
    "resource",
    "resource_ref",
    "string",
    "string_ref",
    "uint8",
    "uint8_ref",
    "uint16",
    "uint16_ref",
    "uint32",
    "uint32_ref",
    "uint64",
    "uint64_ref",
    "variant",
    "variant_ref",
]

_REF_OFFSET = 100

# base enum -> (name, numpy type); the enum numbers are TensorFlow's DataType values.
_BASE_TYPES: dict[int, tuple[str, type]] = {
    1: ("float32", np.float32),
    2: ("float64", np.float64),
    3: ("int32", np.int32),
    4: ("uint8", np.uint8),
    5: ("int16", np.int16),
    6: ("int8", np.int8),
    7: ("string", np.object_),
    8: ("complex64", np.complex64),
    9: ("int64", np.int64),
    10: ("bool", np.bool_),
    17: ("uint16", np.uint16),
    18: ("complex128", np.complex128),
    19: ("float16", np.float16),
    22: ("uint32", np.uint32),
    23: ("uint64", np.uint64),
}

# Quantized types: enum -> (name, storage type). As in TensorFlow, their NumPy type is a
# one-field structured dtype named after the type (``[("qint8", "i1")]``), so a quantized
# value is never mistaken for a plain integer.
_QUANTIZED_TYPES: dict[int, tuple[str, type]] = {
    11: ("qint8", np.int8),
    12: ("quint8", np.uint8),
    13: ("qint32", np.int32),
    15: ("qint16", np.int16),
    16: ("quint16", np.uint16),
}
# Types with no NumPy equivalent of their own: bfloat16 borrows ml_dtypes' scalar type when
# that package is installed; resource and variant handles have none at all.
_OTHER_TYPES: dict[int, str] = {14: "bfloat16", 20: "resource", 21: "variant",
                                24: "float8_e5m2", 25: "float8_e4m3fn", 29: "int4",
                                30: "uint4"}
# tf.dtypes.experimental's types: names and classes only (no kernel computes in them)
_EXPERIMENTAL_KINDS = {24: "f", 25: "f", 29: "i", 30: "u"}
_BFLOAT16_MAX = (2.0 - 2.0**-7) * 2.0**127  # 8 exponent bits, 7 fraction bits


def _bfloat16_numpy_type() -> type | None:
    try:
        import ml_dtypes  # optional: TensorFlow's own NumPy bfloat16
    except ImportError:
        return None
    return ml_dtypes.bfloat16


def _numpy_type_of(base_enum: int) -> Any:
    if base_enum in _BASE_TYPES:
        return _BASE_TYPES[base_enum][1]
    if base_enum in _QUANTIZED_TYPES:
        name, storage = _QUANTIZED_TYPES[base_enum]
        return np.dtype([(name, storage)])
    if base_enum == 14:
        return _bfloat16_numpy_type()
    return None


def _name_of(base_enum: int) -> str:
    if base_enum in _BASE_TYPES:
        return _BASE_TYPES[base_enum][0]
    if base_enum in _QUANTIZED_TYPES:
        return _QUANTIZED_TYPES[base_enum][0]
    return _OTHER_TYPES[base_enum]


_INTERNED: dict[int, DType] = {}


class DType:
    """The element type of a tensor; a single shared instance exists per type.

    ``DType(enum)`` returns the interned instance for a TensorFlow DataType number.
    Equality also accepts anything `as_dtype` understands.

    Example
    -------
    >>> DType(1) is float32, float32 == np.float32, float32 == "float32"
    (True, True, True)
    >>> float32_ref.base_dtype, float32._as_ref
    (tf.float32, tf.float32_ref)
    >>> qint8.is_quantized, qint8.as_numpy_dtype, qint8.size
    (True, dtype([('qint8', 'i1')]), 1)
    """

    __slots__ = ("_enum", "_name", "_np")

    _enum: int
    _name: str
    _np: Any

    def __new__(cls, type_enum: int) -> DType:
        try:
            return _INTERNED[type_enum]
        except (KeyError, TypeError):
            raise TypeError(f"{type_enum!r} is not a valid flowgraph DType enum.") from None

    @classmethod
    def _create(cls, type_enum: int) -> DType:
        self = object.__new__(cls)
        base = type_enum % _REF_OFFSET
        name = _name_of(base)
        if type_enum > _REF_OFFSET:
            name += "_ref"
        object.__setattr__(self, "_enum", type_enum)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_np", _numpy_type_of(base))
        return self

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("DType objects are immutable")

    def __delattr__(self, key: str) -> None:
        raise AttributeError("DType objects are immutable")

    # -- identity -------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The type's name, e.g. ``"float32"`` or ``"float32_ref"``."""
        return self._name

    @property
    def as_datatype_enum(self) -> int:
        """TensorFlow's DataType number (reference types add 100)."""
        return self._enum

    @property
    def as_numpy_dtype(self) -> Any:
        """The NumPy scalar type (``np.object_`` for strings).

        Quantized types give a one-field structured dtype (``[("qint8", "i1")]``),
        bfloat16 gives ``ml_dtypes.bfloat16`` (TypeError without that package), and
        resource and variant handles have none (KeyError, as in TensorFlow).
        """
        if self._np is None:
            base = self._enum % _REF_OFFSET
            if base == 14:
                raise TypeError(
                    "tf.bfloat16 has no NumPy type unless the ml_dtypes package is "
                    "installed (pip install ml_dtypes)."
                )
            raise KeyError(f"{self.name} has no NumPy equivalent: its values are handles.")
        return self._np

    @property
    def is_ref_dtype(self) -> builtins.bool:
        """Whether this is a reference ("_ref") type."""
        return self._enum > _REF_OFFSET

    @property
    def base_dtype(self) -> DType:
        """The non-reference type (``self`` if this is not a reference type)."""
        return _INTERNED[self._enum - _REF_OFFSET] if self._enum > _REF_OFFSET else self

    @property
    def _as_ref(self) -> DType:
        """The reference variant of this type."""
        return self if self._enum > _REF_OFFSET else _INTERNED[self._enum + _REF_OFFSET]

    @property
    def real_dtype(self) -> DType:
        """The type of the real part for complex types, otherwise ``self``."""
        base = self.base_dtype
        if base is complex64:
            return float32
        if base is complex128:
            return float64
        return self

    # -- classification -------------------------------------------------------------

    @property
    def _kind(self) -> str:
        """NumPy's kind letter; "q" for quantized, "h" for resource/variant handles."""
        base = self._enum % _REF_OFFSET
        if base in _QUANTIZED_TYPES:
            return "q"
        if base == 14:
            return "f"
        if base in _EXPERIMENTAL_KINDS:
            return _EXPERIMENTAL_KINDS[base]
        if base in _OTHER_TYPES:
            return "h"
        return np.dtype(self._np).kind

    @property
    def is_floating(self) -> builtins.bool:
        """Whether this is a real floating-point type (bfloat16 included)."""
        return self._kind == "f"

    @property
    def is_integer(self) -> builtins.bool:
        """Whether this is a (signed or unsigned) integer type; quantized ones are not."""
        return self._kind in "iu"

    @property
    def is_unsigned(self) -> builtins.bool:
        """Whether this is an unsigned integer type."""
        return self._kind == "u"

    @property
    def is_complex(self) -> builtins.bool:
        """Whether this is a complex type."""
        return self._kind == "c"

    @property
    def is_bool(self) -> builtins.bool:
        """Whether this is the boolean type."""
        return self._kind == "b"

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        """Whether values of this type can be held in NumPy arrays (not for handles)."""
        return self._kind != "h"

    @property
    def is_quantized(self) -> builtins.bool:
        """Whether this is a quantized type (qint8, quint8, qint16, quint16, qint32).

        Example
        -------
        >>> qint8.is_quantized, int8.is_quantized
        (True, False)
        """
        return self._kind == "q"

    @property
    def size(self) -> int:
        """Bytes per element as TensorFlow counts them: 0 for strings and for
        resource/variant handles (their size is not fixed).

        >>> float32.size, string.size
        (4, 0)
        """
        kind = self._kind
        if kind == "h" or self._enum % _REF_OFFSET == 7:  # DT_STRING
            return 0
        if self._enum % _REF_OFFSET == 14:
            return 2
        return np.dtype(self._np).itemsize

    # -- limits ---------------------------------------------------------------------

    def _check_numeric_limits(self) -> None:
        if not (self.is_floating or self.is_integer):
            raise TypeError(
                f"Cannot find the limits of type {self.name}: only real floating-point "
                "and integer types have them"
                + (" (quantized types have none)." if self.is_quantized else ".")
            )

    @property
    def min(self) -> Any:
        """The smallest finite value of a real numeric type (TypeError otherwise)."""
        self._check_numeric_limits()
        if self._np is None:  # bfloat16 without ml_dtypes
            return -_BFLOAT16_MAX
        if self.is_floating:
            return _finfo(self._np).min
        return int(np.iinfo(self._np).min)

    @property
    def max(self) -> Any:
        """The largest finite value of a real numeric type (TypeError otherwise)."""
        self._check_numeric_limits()
        if self._np is None:
            return _BFLOAT16_MAX
        if self.is_floating:
            return _finfo(self._np).max
        return int(np.iinfo(self._np).max)

    @property
    def limits(self) -> tuple[Any, Any]:
        """Image intensity limits, as TensorFlow defines them: ``(0, max)`` of an integer
        or bool type, ``(0, 1)`` of a floating one (the negative part is clipped; `min`
        and `max` give the full range).

        >>> int8.limits, float32.limits
        ((0, 127), (0, 1))
        """
        name = self.base_dtype.name
        if name in ("float32", "float64"):
            return 0, 1
        if name == "bool":
            return 0, True
        if not self.is_integer or self.is_quantized:
            raise ValueError(f"{self!r} does not have defined limits: TensorFlow defines "
                             "them for bool, integer, float32 and float64 types only.")
        return 0, self.max

    # -- comparison -----------------------------------------------------------------

    def is_compatible_with(self, other: Any) -> builtins.bool:
        """Whether a value of type `other` can be used where this type is expected.

        A type accepts itself and its own reference variant, but a reference type
        does not accept a non-reference value.

        Example
        -------
        >>> float32.is_compatible_with(float32_ref), float32_ref.is_compatible_with(float32)
        (True, False)
        """
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)

    def __eq__(self, other: object) -> builtins.bool:
        if other is self:
            return True
        if other is None:
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __reduce__(self):
        return DType, (self._enum,)

    def __copy__(self) -> DType:
        return self

    def __deepcopy__(self, memo: dict) -> DType:
        return self


def _finfo(np_type: Any) -> Any:
    if np.dtype(np_type).kind == "V":  # ml_dtypes' bfloat16 has its own finfo
        import ml_dtypes

        return ml_dtypes.finfo(np_type)
    return np.finfo(np_type)


for _enum in (*_BASE_TYPES, *_QUANTIZED_TYPES, *_OTHER_TYPES):
    _INTERNED[_enum] = DType._create(_enum)
    _INTERNED[_enum + _REF_OFFSET] = DType._create(_enum + _REF_OFFSET)

float32 = DType(1)
float64 = DType(2)
int32 = DType(3)
uint8 = DType(4)
int16 = DType(5)
int8 = DType(6)
string = DType(7)
complex64 = DType(8)
int64 = DType(9)
bool = DType(10)
uint16 = DType(17)
complex128 = DType(18)
float16 = DType(19)
uint32 = DType(22)
uint64 = DType(23)
half = float16
double = float64
qint8 = DType(11)
quint8 = DType(12)
qint32 = DType(13)
bfloat16 = DType(14)
qint16 = DType(15)
quint16 = DType(16)
resource = DType(20)
variant = DType(21)

float32_ref = DType(101)
float64_ref = DType(102)
int32_ref = DType(103)
uint8_ref = DType(104)
int16_ref = DType(105)
int8_ref = DType(106)
string_ref = DType(107)
complex64_ref = DType(108)
int64_ref = DType(109)
bool_ref = DType(110)
uint16_ref = DType(117)
complex128_ref = DType(118)
float16_ref = DType(119)
uint32_ref = DType(122)
uint64_ref = DType(123)
half_ref = float16_ref
double_ref = float64_ref
qint8_ref = DType(111)
quint8_ref = DType(112)
qint32_ref = DType(113)
bfloat16_ref = DType(114)
qint16_ref = DType(115)
quint16_ref = DType(116)
resource_ref = DType(120)
variant_ref = DType(121)

#: Type groups, e.g. for kernel registration.
FLOATS: tuple[DType, ...] = (float16, float32, float64)
INTEGERS: tuple[DType, ...] = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX: tuple[DType, ...] = (complex64, complex128)
REAL: tuple[DType, ...] = FLOATS + INTEGERS
NUMERIC: tuple[DType, ...] = FLOATS + INTEGERS + COMPLEX
ALL: tuple[DType, ...] = (*NUMERIC, bool, string)
#: The quantized types and their reference variants, as in ``tf.dtypes``.
QUANTIZED_DTYPES: frozenset[DType] = frozenset(
    d for d in _INTERNED.values() if d.is_quantized
)

_BY_NAME: dict[str, DType] = {d.name: d for d in _INTERNED.values()}
_BY_NAME.update({
    "half": float16, "float": float32, "double": float64,
    "half_ref": float16_ref, "float_ref": float32_ref, "double_ref": float64_ref,
    "bool_": bool, "str": string, "bytes": string, "object": string,
})
_BY_NUMPY: dict[np.dtype, DType] = {
    np.dtype(d._np): d
    for d in (*ALL, *(DType(e) for e in _QUANTIZED_TYPES), bfloat16)
    if d is not string and d._np is not None
}
_BY_PYTHON_TYPE: dict[type, DType] = {
    builtins.float: float64, builtins.int: int64, builtins.bool: bool,
    builtins.complex: complex128, builtins.str: string, builtins.bytes: string,
    builtins.object: string,
}


def _from_numpy_dtype(npd: np.dtype) -> DType | None:
    if npd.kind in "OUS":
        return string
    if npd.kind == "V":  # quantized structured dtypes, ml_dtypes' bfloat16
        return _BY_NUMPY.get(npd)
    if not npd.isnative:
        npd = npd.newbyteorder("=")
    return _BY_NUMPY.get(npd)


def as_dtype(type_value: Any) -> DType:
    """Convert a DType, NumPy dtype or type, Python type, name or enum to a `DType`.

    Python types follow NumPy: ``float`` is float64, ``int`` int64, ``str``/``bytes``
    are `string`. Names may end in ``_ref``. Anything else raises TypeError.

    Example
    -------
    >>> as_dtype(np.float64), as_dtype(float), as_dtype("int32_ref").base_dtype
    (tf.float64, tf.float64, tf.int32)
    """
    if isinstance(type_value, DType):
        return type_value
    found: DType | None = None
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
    elif isinstance(type_value, np.dtype):
        found = _from_numpy_dtype(type_value)
    elif isinstance(type_value, type):
        found = _BY_PYTHON_TYPE.get(type_value)
        if found is None and issubclass(type_value, np.generic):
            found = _from_numpy_dtype(np.dtype(type_value))
    elif isinstance(type_value, numbers.Integral) and not isinstance(
        type_value, builtins.bool | np.bool_
    ):
        found = _INTERNED.get(int(type_value))
    if found is None:
        raise TypeError(f"Cannot convert value {type_value!r} to a flowgraph DType.")
    return found


# -- inferring the dtype of constant values ---------------------------------------------

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Python scalar categories, ordered by how they promote.
_PY_NONE, _PY_BOOL, _PY_INT, _PY_FLOAT, _PY_COMPLEX = range(5)


def _kind_rank(d: DType) -> int:
    if d.is_bool:
        return _PY_BOOL
    if d.is_integer:
        return _PY_INT
    if d.is_floating:
        return _PY_FLOAT
    return _PY_COMPLEX


def _python_int_dtype(lo: int, hi: int) -> DType:
    if _INT32_MIN <= lo and hi <= _INT32_MAX:
        return int32
    if _INT64_MIN <= lo and hi <= _INT64_MAX:
        return int64
    bad = lo if lo < _INT64_MIN else hi
    raise ValueError(f"Python int {bad} is out of range for int64.")


def dtype_of_value(value: Any) -> DType:
    """The dtype of a constant made from `value` without an explicit dtype.

    Python floats give float32, ints int32 (int64 if they do not fit in int32), bools
    bool, complex numbers complex128, str/bytes `string`. NumPy arrays and scalars keep
    their dtype. A nested list gets the promotion of its elements by those rules (a
    Python float anywhere makes it float32 unless NumPy floats are present); an empty
    list is float32.

    Example
    -------
    >>> dtype_of_value(1.0), dtype_of_value([1, 2**40]), dtype_of_value(np.float64(1))
    (tf.float32, tf.int64, tf.float64)
    """
    py_kind = _PY_NONE
    int_range: list[int] = []  # [min, max] of the Python ints seen
    numpy_types: set[np.dtype] = set()
    n_strings = n_numbers = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list | tuple):
            stack.extend(v)
            continue
        if isinstance(v, np.ndarray | np.generic):
            kind = v.dtype.kind
            if kind in "US":
                n_strings += 1
            elif kind == "O":
                items = v.ravel().tolist() if isinstance(v, np.ndarray) else [v.item()]
                if items:
                    stack.extend(items)
                else:
                    n_strings += 1  # an empty object array is a string tensor
            else:
                d = _from_numpy_dtype(v.dtype)
                if d is None:
                    raise TypeError(f"Unsupported NumPy dtype {v.dtype} in {value!r}.")
                numpy_types.add(np.dtype(d._np))
                n_numbers += 1
            continue
        dtype_attr = getattr(v, "dtype", None)
        if isinstance(dtype_attr, DType):  # a Tensor or Variable
            base = dtype_attr.base_dtype
            if base is string:
                n_strings += 1
            else:
                numpy_types.add(np.dtype(base._np))
                n_numbers += 1
            continue
        if isinstance(v, str | bytes):
            n_strings += 1
            continue
        if v is None:
            raise ValueError(f"None values are not supported in a tensor: {value!r}")
        if isinstance(v, builtins.bool):
            py_kind = max(py_kind, _PY_BOOL)
        elif isinstance(v, numbers.Integral):
            iv = int(v)
            if int_range:
                int_range[0], int_range[1] = min(int_range[0], iv), max(int_range[1], iv)
            else:
                int_range[:] = [iv, iv]
            py_kind = max(py_kind, _PY_INT)
        elif isinstance(v, numbers.Real):
            py_kind = max(py_kind, _PY_FLOAT)
        elif isinstance(v, numbers.Complex):
            py_kind = max(py_kind, _PY_COMPLEX)
        elif hasattr(v, "__array__"):
            stack.append(np.asarray(v))
            continue
        else:
            raise TypeError(
                f"Cannot convert {v!r} (type {type(v).__name__}) to a tensor: expected a "
                "number, string, list, NumPy array or Tensor."
            )
        n_numbers += 1

    if n_strings:
        if n_numbers:
            raise TypeError(f"Cannot mix strings and numbers in one tensor: {value!r}")
        return string
    numpy_result = (
        _from_numpy_dtype(np.result_type(*numpy_types)) if numpy_types else None
    )
    if py_kind == _PY_NONE:
        return float32 if numpy_result is None else numpy_result
    if py_kind == _PY_INT:
        python_result = _python_int_dtype(*int_range)
    else:
        python_result = {_PY_BOOL: bool, _PY_FLOAT: float32, _PY_COMPLEX: complex128}[py_kind]
    if numpy_result is None:
        return python_result
    # Python scalars are "weak": NumPy-typed values decide unless Python needs a wider kind.
    if py_kind > _kind_rank(numpy_result):
        return python_result
    if py_kind == _PY_INT and numpy_result.is_integer:
        info = np.iinfo(numpy_result._np)
        if not (info.min <= int_range[0] and int_range[1] <= info.max):
            promoted = np.result_type(numpy_result._np, python_result._np)
            return _from_numpy_dtype(promoted) or int64
    return numpy_result
