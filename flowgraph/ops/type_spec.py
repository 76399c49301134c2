"""Type specifications (``tf.TypeSpec`` and its kinds): the static description of a value
(dtype, shape, component structure) without the value, as TensorFlow 2 names them and
TF1 code meets them through ``tf.compat.v1`` (``tf.data`` element specs, signatures).

``tf.TensorSpec(shape, dtype, name)`` describes a `Tensor`; ``SparseTensorSpec``,
``IndexedSlicesSpec``, ``TensorArraySpec`` and ``OptionalSpec`` their composite values;
`type_spec_from_value` gives the spec of a value and `is_symbolic_tensor` tells graph
tensors from concrete values.

Example
-------
>>> import flowgraph as tf
>>> spec = tf.TensorSpec([None, 3], tf.float32, name="x")
>>> spec.is_compatible_with(tf.zeros([2, 3])), spec.is_compatible_with(tf.zeros([2, 4]))
(True, False)
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape, as_shape

__all__ = ["IndexedSlicesSpec", "OptionalSpec", "SparseTensorSpec", "TensorArraySpec",
           "TensorSpec", "TypeSpec", "is_symbolic_tensor", "type_spec_from_value"]


class TypeSpec:
    """The base of all specs: compared by kind and their `_fields` values."""

    _fields: tuple[str, ...] = ()

    @property
    def value_type(self):
        raise NotImplementedError  # each kind names the Python type it describes

    def _values(self):
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *[str(v) for v in self._values()]))

    def __repr__(self) -> str:
        def show(v):
            if isinstance(v, TensorShape):  # TF1's TensorShape text: (?, 3)
                if v.ndims is None:
                    return "<unknown>"
                dims = ["?" if d is None else str(d) for d in v.as_list()]
                return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            return repr(v)

        inner = ", ".join(f"{f}={show(getattr(self, f))}" for f in self._fields)
        return f"{type(self).__name__}({inner})"

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether `spec_or_value` (a spec or a value) could be described by this spec."""
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else \
            type_spec_from_value(spec_or_value)
        if type(other) is not type(self):
            return False
        for f in self._fields:
            mine, theirs = getattr(self, f), getattr(other, f)
            if isinstance(mine, TensorShape):
                if not mine.is_compatible_with(theirs):
                    return False
            elif f != "name" and mine != theirs:
                return False
        return True

    def is_subtype_of(self, other) -> bool:
        """Whether every value this spec describes is also described by `other`: the same
        kind and fields, each shape dimension of `other` unknown or equal (a TensorSpec's
        `name` included, as in TensorFlow); nested specs compare field by field."""
        if type(other) is not type(self):
            return False
        return all(_field_is_subtype(getattr(self, f), getattr(other, f))
                   for f in self._fields)

    def most_specific_common_supertype(self, others):
        """The most specific spec that this one and each of `others` are subtypes of
        (shapes keep the dimensions they share), or None when there is none (another
        kind, another dtype or name, another rank)."""
        values = {f: getattr(self, f) for f in self._fields}
        for other in others:
            if type(other) is not type(self):
                return None
            for f in self._fields:
                values[f] = _field_supertype(values[f], getattr(other, f))
                if values[f] is _NONE:
                    return None
        return type(self)(**values)

    def most_specific_compatible_type(self, other):
        """The most specific spec compatible with both (shapes generalized to the dims
        they share); a ValueError for specs of different kinds or dtypes."""
        if type(other) is not type(self):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        values = {}
        for f in self._fields:
            mine, theirs = getattr(self, f), getattr(other, f)
            if isinstance(mine, TensorShape):
                values[f] = _most_specific(mine, theirs)
            elif f == "name":
                values[f] = mine if mine == theirs else None
            elif mine != theirs:
                raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
            else:
                values[f] = mine
        return type(self)(**values)


def _most_specific(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x.value if x.value == y.value else None for x, y in zip(a.dims, b.dims)])


_NONE = object()  # no common supertype


def _field_is_subtype(mine, theirs) -> bool:
    if isinstance(mine, TensorShape):
        return isinstance(theirs, TensorShape) and _shape_is_subtype(mine, theirs)
    if isinstance(mine, TypeSpec):
        return mine.is_subtype_of(theirs)
    if isinstance(mine, list | tuple):
        return (type(theirs) is type(mine) and len(mine) == len(theirs)
                and all(_field_is_subtype(a, b) for a, b in zip(mine, theirs)))
    if isinstance(mine, dict):
        return (isinstance(theirs, dict) and mine.keys() == theirs.keys()
                and all(_field_is_subtype(mine[k], theirs[k]) for k in mine))
    return mine == theirs


def _field_supertype(mine, theirs):
    """The most specific common supertype of two field values, or `_NONE`."""
    if isinstance(mine, TensorShape):
        merged = _common_shape(mine, theirs) if isinstance(theirs, TensorShape) else None
    elif isinstance(mine, TypeSpec):
        merged = mine.most_specific_common_supertype([theirs])
    elif isinstance(mine, list | tuple):
        if type(theirs) is not type(mine) or len(mine) != len(theirs):
            return _NONE
        items = [_field_supertype(a, b) for a, b in zip(mine, theirs)]
        return _NONE if any(i is _NONE for i in items) else type(mine)(items)
    elif isinstance(mine, dict):
        if not isinstance(theirs, dict) or mine.keys() != theirs.keys():
            return _NONE
        items = {k: _field_supertype(mine[k], theirs[k]) for k in mine}
        return _NONE if any(i is _NONE for i in items.values()) else items
    else:
        return mine if mine == theirs else _NONE
    return _NONE if merged is None else merged


def _shape_is_subtype(a: TensorShape, b: TensorShape) -> bool:
    if b.ndims is None:
        return True
    if a.ndims != b.ndims:
        return False
    return all(y.value is None or x.value == y.value for x, y in zip(a.dims, b.dims))


def _common_shape(a: TensorShape, b: TensorShape):
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    if a.ndims != b.ndims:
        return None
    return _most_specific(a, b)


def _read_only(field: str, doc: str) -> property:
    """A spec's field as a read-only property (specs are immutable, as TensorFlow's)."""
    return property(lambda self: self.__dict__["_" + field], doc=doc)


class TensorSpec(TypeSpec):
    """The spec of a `Tensor`: ``shape`` (partially known), ``dtype`` and an optional
    ``name``."""

    _fields = ("shape", "dtype", "name")

    shape = _read_only("shape", "The (partially known) `TensorShape`.")
    dtype = _read_only("dtype", "The `DType` of the tensor.")
    name = _read_only("name", "The optional name (None when unnamed).")

    def __init__(self, shape, dtype=_dtypes.float32, name=None) -> None:
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._name = name

    @property
    def value_type(self):
        from flowgraph.framework.operation import Tensor

        return Tensor

    @classmethod
    def from_spec(cls, spec, name=None):
        """A TensorSpec with the shape and dtype of `spec`."""
        return cls(spec.shape, spec.dtype, name if name is not None else spec.name)

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of `tensor` (named after its op unless `name` is given).

        Example
        -------
        >>> import flowgraph as tf
        >>> tf.TensorSpec.from_tensor(tf.zeros([2], name="z"))
        TensorSpec(shape=(2,), dtype=tf.float32, name='z')
        """
        return cls(tensor.shape, tensor.dtype, name if name is not None else tensor.op.name)


class SparseTensorSpec(TypeSpec):
    """The spec of a `SparseTensor`: its dense ``shape`` and ``dtype``."""

    _fields = ("shape", "dtype")

    shape = _read_only("shape", "The dense `TensorShape` of the sparse tensor.")
    dtype = _read_only("dtype", "The `DType` of its values.")

    def __init__(self, shape=None, dtype=_dtypes.float32) -> None:
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype).base_dtype

    @property
    def value_type(self):
        from flowgraph.framework.sparse_tensor import SparseTensor

        return SparseTensor

    @classmethod
    def from_value(cls, value):
        return cls(_sparse_static_shape(value), value.dtype)


class IndexedSlicesSpec(TypeSpec):
    """The spec of `IndexedSlices`: dense ``shape``, value ``dtype``, ``indices_dtype``,
    ``dense_shape_dtype`` and ``indices_shape``."""

    _fields = ("shape", "dtype", "indices_dtype", "dense_shape_dtype", "indices_shape")

    def __init__(self, shape=None, dtype=_dtypes.float32, indices_dtype=_dtypes.int64,
                 dense_shape_dtype=None, indices_shape=None) -> None:
        self.shape = as_shape(shape)
        self.dtype = _dtypes.as_dtype(dtype).base_dtype
        self.indices_dtype = _dtypes.as_dtype(indices_dtype).base_dtype
        self.dense_shape_dtype = None if dense_shape_dtype is None else \
            _dtypes.as_dtype(dense_shape_dtype).base_dtype
        self.indices_shape = as_shape([None] if indices_shape is None else indices_shape)

    @property
    def value_type(self):
        from flowgraph.framework.indexed_slices import IndexedSlices

        return IndexedSlices


class TensorArraySpec(TypeSpec):
    """The spec of a `tf.TensorArray`: ``element_shape``, ``dtype``, ``dynamic_size``,
    ``infer_shape``."""

    _fields = ("element_shape", "dtype", "dynamic_size", "infer_shape")

    def __init__(self, element_shape=None, dtype=_dtypes.float32, dynamic_size=False,
                 infer_shape=True) -> None:
        self.element_shape = as_shape(element_shape)
        self.dtype = _dtypes.as_dtype(dtype).base_dtype
        self.dynamic_size = dynamic_size
        self.infer_shape = infer_shape

    @property
    def value_type(self):
        from flowgraph.ops.tensor_array import TensorArray

        return TensorArray

    @classmethod
    def from_value(cls, value) -> TensorArraySpec:
        """The spec of the `tf.TensorArray` `value`."""
        from flowgraph.ops.tensor_array import TensorArray

        if not isinstance(value, TensorArray):
            raise TypeError(f"Expected value to be a TensorArray, but got: "
                            f"`{type(value)}`")
        return cls(value.element_shape, value.dtype, value.dynamic_size,
                   value._infer_shape)

    def is_subtype_of(self, other) -> bool:
        """As TensorFlow's: the same dtype and `dynamic_size` (the element shape and
        `infer_shape` are not compared)."""
        return (isinstance(other, TensorArraySpec) and self.dtype == other.dtype
                and self.dynamic_size == other.dynamic_size)

    def most_specific_common_supertype(self, others):
        """The element shapes generalized, `infer_shape` only when all infer; None for
        another dtype or `dynamic_size`."""
        others = list(others)
        if not all(isinstance(o, TensorArraySpec) and o.dtype == self.dtype
                   and o.dynamic_size == self.dynamic_size for o in others):
            return None
        shape = self.element_shape
        for other in others:
            shape = _common_shape(shape, other.element_shape)
            if shape is None:
                return None
        return TensorArraySpec(shape, self.dtype, self.dynamic_size,
                               self.infer_shape and all(o.infer_shape for o in others))


class OptionalSpec(TypeSpec):
    """The spec of an optional value (``tf.experimental.Optional``): the spec of the value
    it may hold."""

    _fields = ("element_spec",)

    def __init__(self, element_spec) -> None:
        self.element_spec = element_spec

    @property
    def value_type(self):
        return type(None)

    @classmethod
    def from_value(cls, value) -> OptionalSpec:
        """The spec of an optional `value`: the spec of the value it may hold."""
        return cls(value.element_spec)


def _sparse_static_shape(value) -> TensorShape:
    from flowgraph.framework.constant_op import constant_value

    static = constant_value(value.dense_shape) if hasattr(value.dense_shape, "op") else \
        value.dense_shape
    if static is None:
        rank = value.indices.shape[1].value if value.indices.shape.ndims == 2 else None
        return TensorShape(None if rank is None else [None] * rank)
    return TensorShape([int(d) for d in static])


def type_spec_from_value(value):
    """The spec of `value`: a `Tensor`, `SparseTensor`, `IndexedSlices`, `TensorArray`,
    or anything `tf.convert_to_tensor` accepts (a NumPy array, a list).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.type_spec_from_value([[1, 2]])
    TensorSpec(shape=(1, 2), dtype=tf.int32, name=None)
    """
    from flowgraph.framework.constant_op import convert_to_tensor
    from flowgraph.framework.graph import Graph
    from flowgraph.framework.indexed_slices import IndexedSlices
    from flowgraph.framework.operation import Tensor
    from flowgraph.framework.sparse_tensor import SparseTensor

    if isinstance(value, TypeSpec):
        return value
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, SparseTensor):
        return SparseTensorSpec.from_value(value)
    if isinstance(value, IndexedSlices):
        return IndexedSlicesSpec(value.values.shape, value.dtype, value.indices.dtype,
                                 None if value.dense_shape is None else
                                 value.dense_shape.dtype, value.indices.shape)
    if type(value).__name__ == "TensorArray" and hasattr(value, "element_shape"):
        return TensorArraySpec(value.element_shape, value.dtype)
    try:
        with Graph().as_default():
            t = convert_to_tensor(value)
            return TensorSpec(t.shape, t.dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Could not build a TypeSpec for {value!r} with type "
                        f"{type(value).__name__} ({e})") from None


def is_symbolic_tensor(tensor) -> bool:
    """Whether `tensor` is a graph (symbolic) tensor rather than a concrete value; in
    flowgraph every `Tensor` is symbolic.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.is_symbolic_tensor(tf.constant(1)), tf.is_symbolic_tensor(1)
    (True, False)
    """
    from flowgraph.framework.operation import Tensor

    return isinstance(tensor, Tensor)
