"""Partially known shapes: `Dimension` (a size, or unknown) and `TensorShape`.

Static shape inference works on these. A dimension may be unknown (``None``, shown as
``?``), and so may the whole rank. Comparisons involving unknown dimensions answer
``None`` ("can't tell"), and merging combines what two partial shapes know.

Example
-------
>>> s = TensorShape([None, 3])
>>> s.merge_with([2, None]).as_list()
[2, 3]
>>> str(broadcast_shape([None, 1], [4]))
'(?, 4)'
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Union

from flowgraph.framework.event_messages import shape_proto

# `tf.enable_v2_tensorshape()` sets it: indexing and iterating a shape then give ints
# (None when unknown) instead of `Dimension`s (flowgraph/compat/switches.py), to code
# outside flowgraph only: flowgraph's own modules keep seeing `Dimension`s.
_V2_BEHAVIOR = [False]


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _v2_caller(frame) -> bool:
    """Whether `frame` runs code outside the flowgraph package (by its file)."""
    return not frame.f_code.co_filename.startswith(_PACKAGE_DIR)

__all__ = [
    "Dimension",
    "TensorShape",
    "as_dimension",
    "as_shape",
    "broadcast_shape",
    "dimension_at_index",
    "dimension_value",
    "matrix",
    "scalar",
    "unknown_shape",
    "vector",
]

DimensionLike = Union["Dimension", int, None]
ShapeLike = Union["TensorShape", Iterable[DimensionLike], int, None]


class Dimension:
    """One dimension of a shape: a non-negative int, or None when unknown.

    Arithmetic with an unknown operand gives an unknown result; comparisons and
    ``==`` return None when either side is unknown.

    Example
    -------
    >>> Dimension(3) + 2, Dimension(None) * 4, Dimension(None) == 3
    (Dimension(5), Dimension(None), None)
    """

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        if isinstance(value, Dimension):
            self._value: int | None = value._value
            return
        if value is None:
            self._value = None
            return
        if isinstance(value, int):  # bool included: TensorFlow keeps True as it is
            ivalue = value
        else:
            # As TensorFlow 2.15: only ints and objects with ``__index__`` (NumPy ints,
            # 0-d int arrays); floats, even 2.0, and strings are a TypeError.
            index = getattr(type(value), "__index__", None)
            if index is None:
                raise TypeError(
                    "Dimension value must be integer or None or have an __index__ method, "
                    f"got value '{value!r}' with type '{type(value)!r}'")
            try:
                ivalue = int(index(value))
            except TypeError:
                raise TypeError(
                    "Dimension value must be integer or None or have an __index__ method, "
                    f"got value '{value!r}' with type '{type(value)!r}'") from None
        if ivalue < 0:
            raise ValueError(f"Dimension {ivalue} must be >= 0")
        self._value = ivalue

    @property
    def value(self) -> int | None:
        """The size, or None if unknown."""
        return self._value

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int")
        return self._value

    def __index__(self) -> int:
        return self.__int__()

    def __repr__(self) -> str:
        return f"Dimension({self._value})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self):
        return Dimension, (self._value,)

    # -- comparisons (None when unknown) ---------------------------------------------

    def _compare(self, other: Any, fn: Callable[[int, int], bool]) -> Any:
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return fn(self._value, other._value)

    def __eq__(self, other: object) -> Any:
        return self._compare(other, operator.eq)

    def __ne__(self, other: object) -> Any:
        return self._compare(other, operator.ne)

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, operator.lt)

    def __le__(self, other: Any) -> Any:
        return self._compare(other, operator.le)

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, operator.gt)

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, operator.ge)

    # -- arithmetic (unknown in, unknown out) ----------------------------------------

    def _arith(self, other: Any, fn: Callable[[int, int], int], reverse: bool = False) -> Any:
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return Dimension(None)
        a, b = (other._value, self._value) if reverse else (self._value, other._value)
        return Dimension(fn(a, b))

    def __add__(self, other: Any) -> Dimension:
        return self._arith(other, operator.add)

    def __radd__(self, other: Any) -> Dimension:
        return self._arith(other, operator.add, reverse=True)

    def __sub__(self, other: Any) -> Dimension:
        return self._arith(other, operator.sub)

    def __rsub__(self, other: Any) -> Dimension:
        return self._arith(other, operator.sub, reverse=True)

    def __mul__(self, other: Any) -> Dimension:
        return self._arith(other, operator.mul)

    def __rmul__(self, other: Any) -> Dimension:
        return self._arith(other, operator.mul, reverse=True)

    def __floordiv__(self, other: Any) -> Dimension:
        return self._arith(other, operator.floordiv)

    def __rfloordiv__(self, other: Any) -> Dimension:
        return self._arith(other, operator.floordiv, reverse=True)

    def __mod__(self, other: Any) -> Dimension:
        return self._arith(other, operator.mod)

    def __rmod__(self, other: Any) -> Dimension:
        return self._arith(other, operator.mod, reverse=True)

    def __truediv__(self, other: Any) -> Dimension:
        raise TypeError("unsupported operand type(s) for /: 'Dimension' and "
                        f"'{type(other).__name__}', please use // instead")

    def __rtruediv__(self, other: Any) -> Dimension:
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and "
                        "'Dimension', please use // instead")

    # -- compatibility ----------------------------------------------------------------

    def is_compatible_with(self, other: DimensionLike) -> bool:
        """Whether the two could describe the same size (an unknown matches anything).

        Example
        -------
        >>> Dimension(None).is_compatible_with(4), Dimension(3).is_compatible_with(4)
        (True, False)
        """
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other: DimensionLike) -> None:
        """Raise ValueError unless `is_compatible_with(other)`."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {as_dimension(other)} are not compatible")

    def merge_with(self, other: DimensionLike) -> Dimension:
        """The dimension that combines what both know (ValueError if they conflict).

        Example
        -------
        >>> Dimension(None).merge_with(5)
        Dimension(5)
        """
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other._value)


def as_dimension(value: DimensionLike) -> Dimension:
    """`value` as a `Dimension` (returned unchanged if it already is one).

    Example
    -------
    >>> as_dimension(7), as_dimension(None)
    (Dimension(7), Dimension(None))
    """
    return value if isinstance(value, Dimension) else Dimension(value)


def _iterable_dims(dims: Any, items: Iterator[Any]) -> tuple[Dimension, ...]:
    """The dimensions of an iterable that is no list or tuple (an array, a generator); an
    item that is no dimension is a TypeError naming both, as in TensorFlow."""
    out = []
    for d in items:
        try:
            out.append(as_dimension(d))
        except TypeError as e:
            raise TypeError(
                f"Failed to convert '{dims!r}' to a shape: '{d!r}'could not be converted to "
                "a dimension. A shape should either be single dimension (e.g. 10), or an "
                "iterable of dimensions (e.g. [1, 10, None]).") from e
    return tuple(out)


def dimension_value(dimension: DimensionLike) -> int | None:
    """The int (or None) held by a `Dimension`; plain ints and None pass through.

    Example
    -------
    >>> dimension_value(Dimension(3)), dimension_value(None), dimension_value(4)
    (3, None, 4)
    """
    if isinstance(dimension, Dimension):
        return dimension.value
    return dimension


class TensorShape:
    """A shape whose rank, and any of whose dimensions, may be unknown.

    Build it from None (unknown rank), an iterable of ints/None/`Dimension`, a single
    int (a rank-1 shape) or another `TensorShape`.

    Example
    -------
    >>> s = TensorShape([None, 3])
    >>> s, str(s), s.ndims, s.is_compatible_with([5, 3])
    (TensorShape([Dimension(None), Dimension(3)]), '(?, 3)', 2, True)
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: ShapeLike) -> None:
        if dims is None:
            self._dims: tuple[Dimension, ...] | None = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, str | bytes):
            raise TypeError(
                f"A string ({dims!r}) is an ambiguous TensorShape; wrap it in a list or "
                "convert it to an int"
            )
        elif hasattr(dims, "unknown_rank") and hasattr(dims, "dim"):  # a TensorShapeProto
            self._dims = None if dims.unknown_rank else tuple(
                as_dimension(None if d.size == -1 else d.size) for d in dims.dim)
        else:
            try:
                items = iter(dims)  # type: ignore[arg-type]
            except TypeError:
                self._dims = (as_dimension(dims),)  # type: ignore[arg-type]
            else:
                self._dims = (tuple(as_dimension(d) for d in items)
                              if isinstance(dims, list | tuple) else _iterable_dims(dims, items))

    # -- rank and dimensions -----------------------------------------------------------

    @property
    def dims(self) -> list[Dimension] | None:
        """The dimensions as a list of `Dimension`, or None if the rank is unknown."""
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> int | None:
        """The rank, or None if unknown."""
        return None if self._dims is None else len(self._dims)

    @property
    def rank(self) -> int | None:
        """The rank, or None if unknown (same as `ndims`)."""
        return self.ndims

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[Dimension]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        if _V2_BEHAVIOR[0] and _v2_caller(sys._getframe(1)):
            return iter([d._value for d in self._dims])
        return iter(self._dims)

    def __getitem__(self, key: int | slice) -> Any:
        if self._dims is not None:
            if isinstance(key, slice):
                return TensorShape(self._dims[key])
            if _V2_BEHAVIOR[0] and _v2_caller(sys._getframe(1)):
                return self._dims[key]._value
            return self._dims[key]
        if isinstance(key, slice):
            return unknown_shape()
        operator.index(key)  # reject non-integer keys
        return None if _V2_BEHAVIOR[0] and _v2_caller(sys._getframe(1)) else Dimension(None)

    def as_list(self) -> list[int | None]:
        """The dimensions as ints (None where unknown); ValueError if the rank is unknown.

        Example
        -------
        >>> TensorShape([2, None]).as_list()
        [2, None]
        """
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d._value for d in self._dims]

    def as_proto(self):
        """The shape as a ``TensorShapeProto`` (-1 for unknown sizes).

        Example
        -------
        >>> [d.size for d in TensorShape([2, None]).as_proto().dim]
        [2, -1]
        """
        return shape_proto(None if self._dims is None else self.as_list())

    def is_fully_defined(self) -> bool:
        """Whether the rank and every dimension are known."""
        return self._dims is not None and all(d._value is not None for d in self._dims)

    def assert_is_fully_defined(self) -> None:
        """Raise ValueError unless the shape is fully defined."""
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self) -> int | None:
        """The number of elements, or None if the shape is not fully defined.

        Example
        -------
        >>> TensorShape([2, 3]).num_elements(), TensorShape([2, None]).num_elements()
        (6, None)
        """
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:  # type: ignore[union-attr]
            n *= d._value  # type: ignore[operator]
        return n

    # -- compatibility and merging -----------------------------------------------------

    def is_compatible_with(self, other: ShapeLike) -> bool:
        """Whether some fully known shape could match both.

        Example
        -------
        >>> TensorShape([None, 3]).is_compatible_with([4, 3])
        True
        >>> TensorShape([None, 3]).is_compatible_with([4, 3, 1])
        False
        """
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims, strict=True))

    def assert_is_compatible_with(self, other: ShapeLike) -> None:
        """Raise ValueError unless `is_compatible_with(other)`."""
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other: ShapeLike) -> TensorShape:
        """The shape combining what both know (ValueError if they conflict).

        Example
        -------
        >>> TensorShape([None, 3]).merge_with([2, None]).as_list()
        [2, 3]
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible (ranks differ)")
        try:
            pairs = zip(self._dims, other._dims, strict=True)
            return TensorShape([a.merge_with(b) for a, b in pairs])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def most_specific_compatible_shape(self, other: ShapeLike) -> TensorShape:
        """The most specific shape that both shapes are compatible with.

        Example
        -------
        >>> TensorShape([2, 3]).most_specific_compatible_shape([2, 4]).as_list()
        [2, None]
        """
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([
            a._value if a._value is not None and a._value == b._value else None
            for a, b in zip(self._dims, other._dims, strict=True)
        ])

    def concatenate(self, other: ShapeLike) -> TensorShape:
        """The dimensions of `self` followed by those of `other`.

        Example
        -------
        >>> TensorShape([1]).concatenate([None, 2]).as_list()
        [1, None, 2]
        """
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def __add__(self, other: ShapeLike) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other: ShapeLike) -> TensorShape:
        return as_shape(other).concatenate(self)

    # -- rank checks ----------------------------------------------------------------

    def with_rank(self, rank: int) -> TensorShape:
        """This shape with its rank fixed to `rank` (ValueError if it has another rank).

        Example
        -------
        >>> TensorShape(None).with_rank(2).as_list()
        [None, None]
        """
        try:
            return self.merge_with(unknown_shape(rank=rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank: int) -> TensorShape:
        """`self`, after checking that its rank is at least `rank` (if known)."""
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        """`self`, after checking that its rank is at most `rank` (if known)."""
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        """Raise ValueError if the rank is known and differs from `rank`."""
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other: ShapeLike) -> None:
        """Raise ValueError if both ranks are known and differ."""
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    # -- equality and display ---------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        try:
            other = as_shape(other)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return NotImplemented
        if self._dims is None or other._dims is None:
            return self._dims is None and other._dims is None
        return len(self._dims) == len(other._dims) and all(
            a._value == b._value for a, b in zip(self._dims, other._dims, strict=True)
        )

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(None if self._dims is None else tuple(d._value for d in self._dims))

    def __reduce__(self):
        return TensorShape, (None if self._dims is None else self.as_list(),)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape([{', '.join(repr(d) for d in self._dims)}])"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def as_shape(shape: ShapeLike) -> TensorShape:
    """`shape` as a `TensorShape` (returned unchanged if it already is one).

    Example
    -------
    >>> as_shape([2, None]).as_list()
    [2, None]
    """
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None, ndims: int | None = None) -> TensorShape:
    """A shape of unknown rank, or of known `rank` with all dimensions unknown.

    Example
    -------
    >>> unknown_shape(), unknown_shape(rank=2)
    (TensorShape(None), TensorShape([Dimension(None), Dimension(None)]))
    """
    if rank is None:
        rank = ndims
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    """The rank-0 shape ``()``."""
    return TensorShape([])


def vector(length: DimensionLike) -> TensorShape:
    """A rank-1 shape ``(length,)``."""
    return TensorShape([length])


def matrix(rows: DimensionLike, cols: DimensionLike) -> TensorShape:
    """A rank-2 shape ``(rows, cols)``."""
    return TensorShape([rows, cols])


def dimension_at_index(shape: ShapeLike, index: int) -> Dimension:
    """Dimension `index` of `shape`; unknown if the rank is unknown.

    Example
    -------
    >>> dimension_at_index(None, 3), dimension_at_index([4, 5], 1)
    (Dimension(None), Dimension(5))
    """
    return as_shape(shape)[index]


def broadcast_shape(shape_x: ShapeLike, shape_y: ShapeLike) -> TensorShape:
    """The NumPy-broadcast of two partial shapes (ValueError if they cannot broadcast).

    An unknown dimension against 1 stays unknown; against a known size n > 1 it must
    be 1 or n, so the result is n. An unknown rank gives an unknown result.

    Example
    -------
    >>> broadcast_shape([None, 1], [3]).as_list()
    [None, 3]
    """
    x, y = as_shape(shape_x), as_shape(shape_y)
    if x._dims is None or y._dims is None:
        return unknown_shape()
    rx, ry = x._dims[::-1], y._dims[::-1]
    out: list[int | None] = []
    for i in range(max(len(rx), len(ry))):
        a = rx[i]._value if i < len(rx) else 1
        b = ry[i]._value if i < len(ry) else 1
        if a == 1:
            out.append(b)
        elif b == 1 or a == b:
            out.append(a)
        elif a is None:
            out.append(b)
        elif b is None:
            out.append(a)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}")
    return TensorShape(out[::-1])
