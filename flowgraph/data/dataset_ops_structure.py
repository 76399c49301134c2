"""Element structures of datasets: nesting, component specs and value conversion.

A dataset element is a nested structure whose leaves are *components*: tuples
(including namedtuples) and dicts nest, everything else is one component. Internally a
pipeline moves *flat* tuples of NumPy arrays (dict entries in sorted key order, as
TensorFlow flattens them); `pack_as` rebuilds the user's structure at the edges (the
arguments of a traced function, the outputs of ``get_next``).

A list is **not** a structure: ``from_tensor_slices([1, 2, 3])`` slices one int32
component, as in TensorFlow. Only a function's return value turns a list into a tuple.

Example
-------
>>> flatten({"b": 1, "a": (2, 3)})
[2, 3, 1]
>>> pack_as({"b": 0, "a": (0, 0)}, [7, 8, 9])
{'a': (7, 8), 'b': 9}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import _to_numpy, convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape


class ComponentSpec:
    """The static type of one component: its dtype and (partial) shape.

    Not a tuple, so that it is a leaf of element structures.
    """

    __slots__ = ("dtype", "shape")
    sparse = False

    def __init__(self, dtype: _dtypes.DType, shape: TensorShape) -> None:
        self.dtype = dtype
        self.shape = shape

    def __eq__(self, other) -> bool:
        return (isinstance(other, ComponentSpec) and self.dtype == other.dtype
                and self.shape.as_list() == other.shape.as_list()
                if self.shape.ndims is not None and other.shape.ndims is not None
                else isinstance(other, ComponentSpec) and self.dtype == other.dtype
                and self.shape.ndims == other.shape.ndims)

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __repr__(self) -> str:
        return f"ComponentSpec({self.dtype.name}, {self.shape})"


class SparseComponentSpec(ComponentSpec):
    """A `SparseTensor` component: the dtype of its values and its dense shape.

    Inside a pipeline its value is one `SparseValue`; at the iterator's ops it travels as
    three dense components (indices, values, dense_shape) and `get_next` rebuilds the
    `SparseTensor`.
    """

    __slots__ = ()
    sparse = True

    def __repr__(self) -> str:
        return f"SparseComponentSpec({self.dtype.name}, {self.shape})"

    def with_shape(self, shape) -> SparseComponentSpec:
        return SparseComponentSpec(self.dtype, as_shape(shape))


class SparseValue:
    """The NumPy value of a sparse component (not a tuple, so it stays one leaf)."""

    __slots__ = ("dense_shape", "indices", "values")

    def __init__(self, indices, values, dense_shape) -> None:
        self.indices = np.asarray(indices, dtype=np.int64).reshape(-1, len(dense_shape))
        self.values = values
        self.dense_shape = np.asarray(dense_shape, dtype=np.int64)

    def __repr__(self) -> str:
        return (f"SparseValue(indices={self.indices.tolist()}, values={self.values!r}, "
                f"dense_shape={self.dense_shape.tolist()})")


def same_kind(spec: ComponentSpec, dtype, shape) -> ComponentSpec:
    """A spec of `spec`'s kind (dense or sparse) with another dtype/shape."""
    return type(spec)(dtype, as_shape(shape))


def graph_specs(structure) -> list[ComponentSpec]:
    """The dense components an element travels as through iterator ops: three per
    sparse component (indices, values, dense_shape)."""
    out: list[ComponentSpec] = []
    for s in flatten(structure):
        if s.sparse:
            rank = s.shape.ndims
            out += [ComponentSpec(_dtypes.int64, TensorShape([None, rank])),
                    ComponentSpec(s.dtype, TensorShape([None])),
                    ComponentSpec(_dtypes.int64, TensorShape([rank]))]
        else:
            out.append(s)
    return out


def expand_sparse(specs: list, element) -> tuple:
    """A pipeline element (flat, one `SparseValue` per sparse component) as the flat
    dense components of `graph_specs`."""
    out: list = []
    for s, v in zip(specs, element):
        if s.sparse:
            out += [v.indices, v.values, v.dense_shape]
        else:
            out.append(v)
    return tuple(out)


def pack_graph(structure, tensors: list):
    """Rebuild the user's element from the iterator op's outputs (a `SparseTensor` from
    each three outputs of a sparse component)."""
    from flowgraph.framework.sparse_tensor import SparseTensor

    it = iter(tensors)
    leaves = []
    for s in flatten(structure):
        if s.sparse:
            indices, values, dense_shape = next(it), next(it), next(it)
            leaves.append(SparseTensor(indices, values, known_dense_shape(dense_shape,
                                                                           s.shape)))
        else:
            leaves.append(next(it))
    return pack_as(structure, leaves)


def known_dense_shape(dense_shape, shape: TensorShape):
    """As TensorFlow restores a sparse component: its dense shape a constant when the
    spec's shape is fully known, else a ``stack`` with constants for the known sizes (so
    shape inference downstream, e.g. of ``tf.sparse.to_dense``, sees them)."""
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops.array_join_ops import stack, unstack

    if shape.ndims is None or all(d.value is None for d in shape.dims):
        return dense_shape
    if shape.is_fully_defined():
        return constant(shape.as_list(), dtype=_dtypes.int64, name="shape")
    pieces = unstack(dense_shape, num=shape.ndims)
    for i, d in enumerate(shape.dims):
        if d.value is not None:
            pieces[i] = constant(d.value, dtype=_dtypes.int64)
    return stack(pieces)


def component_class(spec: ComponentSpec):
    """`Tensor`, or `SparseTensor` for a sparse component (``output_classes``)."""
    if spec.sparse:
        from flowgraph.framework.sparse_tensor import SparseTensor

        return SparseTensor
    return Tensor


# -- nesting ------------------------------------------------------------------------------
def is_nested(x) -> bool:
    """True for the containers that nest: tuples (and namedtuples) and mappings."""
    return isinstance(x, tuple | Mapping)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _sorted_keys(d: Mapping) -> list:
    try:
        return sorted(d)
    except TypeError:
        raise TypeError(f"dataset element dict keys must be sortable, got {list(d)}") from None


def flatten(structure) -> list:
    """The leaves of `structure`, depth first, dict entries in sorted key order."""
    if isinstance(structure, Mapping):
        return [leaf for k in _sorted_keys(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_as(structure, flat) -> Any:
    """Rebuild `structure`'s nesting with the leaves taken in order from `flat`."""
    flat = list(flat)
    it = iter(flat)
    result = _pack(structure, it)
    if next(it, _END) is not _END:
        raise ValueError(f"too many leaves ({len(flat)}) for structure {structure!r}")
    return result


_END = object()


def _pack(structure, it):
    if isinstance(structure, Mapping):
        # Leaves come in sorted key order; the result keeps the structure's own key order,
        # as TensorFlow's nest does (so ``features.items()`` walks the keys as written).
        packed = {k: _pack(structure[k], it) for k in _sorted_keys(structure)}
        items = {k: packed[k] for k in structure}
        return type(structure)(items) if type(structure) is not dict else items
    if _is_namedtuple(structure):
        return type(structure)(*[_pack(s, it) for s in structure])
    if isinstance(structure, tuple):
        return tuple(_pack(s, it) for s in structure)
    leaf = next(it, _END)
    if leaf is _END:
        raise ValueError(f"too few leaves for structure {structure!r}")
    return leaf


def map_structure(fn: Callable, structure) -> Any:
    """`structure` with `fn` applied to every leaf."""
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])


def same_structure(a, b) -> bool:
    """True if `a` and `b` nest the same way (same tuple lengths and dict keys)."""
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (isinstance(a, Mapping) and isinstance(b, Mapping)
                and set(a) == set(b) and all(same_structure(a[k], b[k]) for k in a))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(same_structure(x, y) for x, y in zip(a, b)))
    return True


def describe(structure) -> str:
    """A short text of a structure of specs, e.g. ``(int32 (), float32 (None, 3))``."""
    def leaf(s):
        return f"{s.dtype.name} {tuple(s.shape.as_list()) if s.shape.ndims is not None else '?'}"
    text = repr(map_structure(leaf, structure))
    return text.replace("'", "")


# -- converting values -----------------------------------------------------------------
def normalize_element(value, what: str) -> Any:
    """Turn a user element into a structure of Tensors and NumPy arrays.

    Tuples and dicts nest; a list becomes one component (NumPy array, or a packed
    tensor when it holds tensors); anything else converts as `tf.constant` would.
    """
    from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue

    if isinstance(value, SparseTensor):
        return value
    if isinstance(value, SparseTensorValue):  # a namedtuple, but one sparse component
        return SparseValue(value.indices, _to_numpy(value.values, None), value.dense_shape)
    if isinstance(value, Mapping):
        if not value:
            raise ValueError(f"{what}: an element cannot be an empty dict")
        _sorted_keys(value)  # the leaves are ordered by key, so keys must sort
        return {k: normalize_element(value[k], what) for k in value}
    if _is_namedtuple(value):
        return type(value)(*[normalize_element(v, what) for v in value])
    if isinstance(value, tuple):
        if not value:
            raise ValueError(f"{what}: an element cannot be an empty tuple")
        return tuple(normalize_element(v, what) for v in value)
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_as_graph_element") or _holds_tensor(value):
        return convert_to_tensor(value)
    if value is None:
        raise TypeError(f"{what}: None is not a valid component of a dataset element")
    try:
        return _to_numpy(value, None)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: cannot convert {value!r} to a tensor ({e})") from None


def _holds_tensor(v) -> bool:
    if isinstance(v, list):
        return any(_holds_tensor(x) for x in v)
    return isinstance(v, Tensor)


def sparse_spec_of(st) -> SparseComponentSpec:
    """The spec of a `SparseTensor` (its dense shape as far as known statically)."""
    return SparseComponentSpec(st.dtype.base_dtype, st.get_shape())


def spec_of(component) -> ComponentSpec:
    """The `ComponentSpec` of a Tensor or NumPy array."""
    if isinstance(component, Tensor):
        return ComponentSpec(component.dtype.base_dtype, component.shape)
    if isinstance(component, SparseValue):
        return SparseComponentSpec(_dtypes.dtype_of_value(np.asarray(component.values)),
                                   TensorShape(component.dense_shape.tolist()))
    if hasattr(component, "dense_shape"):  # a SparseTensor of the graph
        return sparse_spec_of(component)
    arr = component
    return ComponentSpec(_dtypes.dtype_of_value(arr), TensorShape(list(arr.shape)))


def to_component(value, spec: ComponentSpec) -> np.ndarray:
    """Convert a produced value to a NumPy array of `spec.dtype` (strings as bytes); a
    sparse component's value (anything with indices/values/dense_shape) to a
    `SparseValue`."""
    if spec.sparse:
        values = to_component(np.asarray(value.values), ComponentSpec(spec.dtype, TensorShape(
            [None])))
        return SparseValue(value.indices, values, value.dense_shape)
    dtype = spec.dtype
    if dtype == _dtypes.string:
        if isinstance(value, np.ndarray) and value.dtype == object:
            if value.ndim == 0 or value.size == 0 or isinstance(value.flat[0], bytes):
                return value
        return _to_numpy(value, dtype)
    np_dtype = dtype.as_numpy_dtype
    if isinstance(value, np.ndarray) and value.dtype == np_dtype:
        return value
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype.kind in "USO":
            raise TypeError(f"expected {dtype.name} but got a string value {value!r}")
        return np.asarray(value, dtype=np_dtype)
    return _to_numpy(value, dtype)


def as_spec_structure(types, shapes) -> Any:
    """Zip nested `types` with nested `shapes` (default: unknown) into specs."""
    types = map_structure(lambda d: _dtypes.as_dtype(d).base_dtype, types)
    if shapes is None:
        return map_structure(lambda d: ComponentSpec(d, TensorShape(None)), types)
    shapes = _normalize_shapes(types, shapes)
    flat_t, flat_s = flatten(types), flatten(shapes)
    if len(flat_t) != len(flat_s):
        raise ValueError(
            f"output_types {types!r} and output_shapes {shapes!r} do not match: "
            f"{len(flat_t)} types but {len(flat_s)} shapes")
    return pack_as(types, [ComponentSpec(t, s) for t, s in zip(flat_t, flat_s)])


def _normalize_shapes(types, shapes):
    """Shapes nested like `types`; a list/TensorShape/None at a leaf is one shape."""
    if isinstance(types, Mapping):
        if not isinstance(shapes, Mapping) or set(shapes) != set(types):
            raise ValueError(f"output_shapes {shapes!r} must be nested like output_types "
                             f"{types!r}")
        return {k: _normalize_shapes(types[k], shapes[k]) for k in types}
    if isinstance(types, tuple):
        if not isinstance(shapes, tuple | list) or len(shapes) != len(types):
            raise ValueError(f"output_shapes {shapes!r} must be nested like output_types "
                             f"{types!r}")
        return tuple(_normalize_shapes(t, s) for t, s in zip(types, shapes))
    return as_shape(shapes)


def check_shape(value: np.ndarray, shape: TensorShape) -> bool:
    """True if the array's shape is compatible with the partial `shape`."""
    dims = shape.as_list() if shape.ndims is not None else None
    if dims is None:
        return True
    return len(dims) == value.ndim and all(d is None or d == n for d, n in zip(dims, value.shape))


# -- scalar parameters (batch sizes, counts, seeds) ---------------------------------------
def scalar_param(value, dtype, what: str):
    """A scalar parameter as a Python number, or a scalar Tensor read at run time."""
    if isinstance(value, Tensor):
        if value.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, but '{value.name}' has shape "
                             f"{value.shape}")
        if not (value.dtype.base_dtype.is_integer or value.dtype.base_dtype == dtype):
            raise TypeError(f"{what} must be an integer tensor, got {value.dtype.name} "
                            f"('{value.name}')")
        return value
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise ValueError(f"{what} must be a scalar, got {value!r}")
    if dtype.is_integer:
        if arr.dtype.kind not in "iub":
            raise TypeError(f"{what} must be an integer, got {value!r}")
        return int(arr)
    if dtype.is_bool:
        return bool(arr)
    return arr.item()


def static_int(value) -> int | None:
    """The Python int of a scalar parameter if known at graph construction, else None."""
    if isinstance(value, Tensor):
        from flowgraph.framework.constant_op import constant_value

        v = constant_value(value)
        return None if v is None else int(v)
    return int(value)
