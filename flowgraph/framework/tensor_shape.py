"""Partially known shapes: `Dimension` (a size or unknown) and `TensorShape`.

Shape inference works on these: an unknown batch dimension is normal, and an unknown
rank is allowed.

Example
-------
>>> s = TensorShape([None, 3])
>>> s.merge_with([2, None]).as_list()
[2, 3]
"""

from __future__ import annotations

from collections.abc import Iterator


class Dimension:
    """One dimension: a non-negative int, or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value) -> None:
        if isinstance(value, Dimension):
            value = value._value
        if value is None:
            self._value = None
            return
        try:
            ivalue = int(value.__index__()) if hasattr(value, "__index__") else int(value)
        except (TypeError, ValueError):
            raise TypeError(f"Dimension value must be an integer or None, got {value!r}") from None
        if ivalue != value and not isinstance(value, str):
            raise TypeError(f"Dimension value must be an integer or None, got {value!r}")
        if ivalue < 0:
            raise ValueError(f"Dimension {ivalue} must be >= 0")
        self._value = ivalue

    @property
    def value(self) -> int | None:
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

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value == other._value

    def __ne__(self, other):
        eq = self.__eq__(other)
        if eq is None or eq is NotImplemented:
            return eq
        return not eq

    def _cmp(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other._value is None:
            return None
        return fn(self._value, other._value)

    def __lt__(self, other):
        return self._cmp(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._cmp(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._cmp(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._cmp(other, lambda a, b: a >= b)

    def _arith(self, other, fn):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other._value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return as_dimension(other).__sub__(self)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return as_dimension(other).__floordiv__(self)

    def __mod__(self, other):
        return self._arith(other, lambda a, b: a % b)

    def is_compatible_with(self, other) -> bool:
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {as_dimension(other)} are not compatible")

    def merge_with(self, other) -> Dimension:
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return Dimension(self._value if self._value is not None else other._value)


def as_dimension(value) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim) -> int | None:
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """A shape whose rank and dimensions may be unknown.

    Example
    -------
    >>> TensorShape([None, 3]).is_compatible_with([5, 3])
    True
    """

    __slots__ = ("_dims",)

    def __init__(self, dims=None) -> None:
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = None if dims._dims is None else list(dims._dims)
        elif isinstance(dims, int | Dimension):
            self._dims = [as_dimension(dims)]
        else:
            try:
                self._dims = [as_dimension(d) for d in dims]
            except TypeError:
                raise TypeError(f"Cannot build a TensorShape from {dims!r}") from None

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    @property
    def rank(self) -> int | None:
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
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is not None:
            if isinstance(key, slice):
                return TensorShape(self._dims[key])
            return self._dims[key]
        if isinstance(key, slice):
            start, stop = key.start, key.stop
            if (key.step in (None, 1) and start is not None and stop is not None
                    and start >= 0 and stop >= 0):
                return TensorShape([None] * max(0, stop - start))
            return TensorShape(None)
        return Dimension(None)

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d._value for d in self._dims]

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d._value is not None for d in self._dims)

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d._value
        return n

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return TensorShape(other)
        if other._dims is None:
            return TensorShape(self)
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible (ranks differ)")
        try:
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def most_specific_compatible_shape(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([
            a._value if a._value is not None and a._value == b._value else None
            for a, b in zip(self._dims, other._dims)
        ])

    def concatenate(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> TensorShape:
        try:
            return self.merge_with(unknown_shape(rank=rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other) -> None:
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        if self._dims is None or other._dims is None:
            return self._dims is None and other._dims is None
        return len(self._dims) == len(other._dims) and all(
            a._value == b._value for a, b in zip(self._dims, other._dims)
        )

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(None if self._dims is None else tuple(d._value for d in self._dims))

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({[d._value for d in self._dims]})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def __add__(self, other) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other) -> TensorShape:
        return as_shape(other).concatenate(self)


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None, ndims: int | None = None) -> TensorShape:
    rank = ndims if rank is None else rank
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def vector(length) -> TensorShape:
    return TensorShape([length])


def matrix(rows, cols) -> TensorShape:
    return TensorShape([rows, cols])


def broadcast_shape(a, b) -> TensorShape:
    """The NumPy broadcast of two partial shapes (ValueError if incompatible).

    Example
    -------
    >>> broadcast_shape(TensorShape([None, 1]), TensorShape([3])).as_list()
    [None, 3]
    """
    a, b = as_shape(a), as_shape(b)
    if a._dims is None or b._dims is None:
        return TensorShape(None)
    da, db = a._dims[::-1], b._dims[::-1]
    out = []
    for i in range(max(len(da), len(db))):
        x = da[i]._value if i < len(da) else 1
        y = db[i]._value if i < len(db) else 1
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)  # unknown vs known n > 1: must be n (or 1, which broadcasts to n)
        elif y is None:
            out.append(x)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(out[::-1])
