"""Static (graph-construction time) knowledge about small integer tensors.

Shape functions of array ops need to know the values of their shape-like inputs
(`reshape`'s `shape`, `fill`'s `dims`, `slice`'s `begin`...). `constant_value` answers
when the whole tensor is known. This module answers element by element for 1-D
tensors built from `tf.shape`/`tf.shape_n`, `tf.stack`, `tf.concat`, `tf.cast` and
strided slicing (what TensorFlow's shape inference reads through; not `tf.identity` or
`tf.slice`), where each element is an ``int``, ``None`` (unknown), or a `DimOf` naming the
still-unknown dimension ``index`` of a tensor (shape functions treat it as unknown, as
TensorFlow does)::

    x: (?, 3, 4)   shape(x)[0] -> DimOf(x, 0)   stack([DimOf(x, 0), -1]) -> (?, ?)

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 3], name="x")
>>> static_elements(tf.shape(x))
[DimOf(x:0, 0), 3]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape

# Evaluators that create data (Fill, Range, Tile...) stop above this many elements.
MAX_EVAL_ELEMENTS = 1 << 16


class DimOf:
    """The (statically unknown) size of dimension `index` of `tensor`."""

    __slots__ = ("index", "tensor")

    def __init__(self, tensor: Tensor, index: int) -> None:
        self.tensor = tensor
        self.index = index

    def __eq__(self, other) -> bool:
        return (isinstance(other, DimOf) and other.tensor is self.tensor
                and other.index == self.index)

    def __hash__(self) -> int:
        return hash((id(self.tensor), self.index))

    def __repr__(self) -> str:
        return f"DimOf({self.tensor.name}, {self.index})"


def const_int(t) -> int | None:
    """The value of scalar int tensor (or Python int) `t`, or None."""
    if isinstance(t, int | np.integer):
        return int(t)
    v = constant_value(t)
    if v is None or np.ndim(v) != 0:
        return None
    return int(v)


def _as_element(v):
    if v is None or isinstance(v, DimOf):
        return v
    return int(v)


def static_elements(t: Tensor, _depth: int = 0) -> list | None:
    """The elements of 1-D int tensor `t` as far as known, or None when its length is not.

    Each element is an int, None or a `DimOf`.
    """
    if not isinstance(t, Tensor):
        return [int(v) for v in np.reshape(t, -1)]
    value = constant_value(t)
    if value is not None:
        if np.ndim(value) != 1:
            return None
        return [int(v) for v in value]
    if _depth < 32:
        found = _elements_from_op(t, _depth + 1)
        if found is not None:
            return found
    if t.shape.ndims == 1 and t.shape[0].value is not None:
        return [None] * t.shape[0].value
    return None


def static_scalar(t: Tensor, _depth: int = 0):
    """The value of scalar int tensor `t`: an int, a `DimOf` or None."""
    v = constant_value(t)
    if v is not None:
        return int(v) if np.ndim(v) == 0 else None
    op = t.op
    if _depth > 32:
        return None
    if op.type == "Identity":
        return static_scalar(op.inputs[0], _depth + 1)
    if op.type == "StridedSlice":
        out = _strided_slice_elements(op, _depth + 1)
        if out is not None and out.ndim == 0:
            return _as_element(out[()])
    if op.type == "Unpack" and op.inputs[0].shape.ndims == 1:
        elems = static_elements(op.inputs[0], _depth + 1)
        return None if elems is None else elems[t.value_index]
    return None


def _elements_from_op(t: Tensor, depth: int) -> list | None:
    op = t.op
    if op.type == "Shape":
        x = op.inputs[0]
        if x.shape.ndims is None:
            return None
        return [d.value if d.value is not None else DimOf(x, i)
                for i, d in enumerate(x.shape.dims)]
    if op.type == "ShapeN":
        x = op.inputs[t.value_index]
        if x.shape.ndims is None:
            return None
        return [d.value if d.value is not None else DimOf(x, i)
                for i, d in enumerate(x.shape.dims)]
    if op.type == "Cast":
        return static_elements(op.inputs[0], depth)
    if op.type == "Pack" and op.attrs.get("axis", 0) in (0, -1):
        return [static_scalar(v, depth) for v in op.inputs]
    if op.type == "ConcatV2":
        out: list = []
        for part in op.inputs[:-1]:
            elems = static_elements(part, depth)
            if elems is None:
                return None
            out.extend(elems)
        return out
    if op.type == "StridedSlice":
        out = _strided_slice_elements(op, depth)
        if out is not None and out.ndim == 1:
            return [_as_element(v) for v in out]
    return None


def _strided_slice_elements(op, depth: int):
    """StridedSlice of a 1-D partially known vector, as a NumPy object array."""
    from flowgraph.ops.array_slicing import strided_slice_numpy

    source = op.inputs[0]
    if source.shape.ndims != 1:
        return None
    elems = static_elements(source, depth)
    if elems is None:
        return None
    spec = [constant_value(x) for x in op.inputs[1:]]
    if any(v is None for v in spec):
        return None
    arr = np.empty(len(elems), dtype=object)
    arr[:] = elems
    return np.asarray(strided_slice_numpy(arr, *spec, **_slice_masks(op)), dtype=object)


def _slice_masks(op) -> dict:
    return {k: op.attrs[k] for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                     "new_axis_mask", "shrink_axis_mask")}


def shape_from_elements(elems: list | None) -> TensorShape:
    """A TensorShape from `static_elements` output (negative and symbolic -> unknown)."""
    if elems is None:
        return TensorShape(None)
    return TensorShape([v if isinstance(v, int) and v >= 0 else None for v in elems])


def static_shape_of(t: Tensor) -> TensorShape:
    """The partial shape that 1-D int tensor `t` describes (e.g. `dims` of `tf.fill`)."""
    if t.shape.ndims == 0:
        return TensorShape(None)
    return shape_from_elements(static_elements(t))


def normalize_axis(axis: int, rank: int, what: str) -> int:
    """`axis` in [-rank, rank) mapped to [0, rank); ValueError naming `what` otherwise."""
    if not -rank <= axis < rank:
        raise ValueError(f"{what}: axis {axis} is out of range for rank {rank}; expected "
                         f"a value in [{-rank}, {rank})")
    return axis + rank if axis < 0 else axis
