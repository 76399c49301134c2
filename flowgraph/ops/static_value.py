"""`tf.get_static_value` (also ``tensor_util.constant_value`` and
``tf.contrib.util.constant_value``): the value of a tensor known while the graph is built,
folded over exactly the op types TensorFlow 2.15's Python folds.

That set is small on purpose: ``Const``; ``Shape``, ``Size`` and ``Rank`` of inputs whose
static shape answers them; ``Range``, ``Cast``, ``Concat``/``ConcatV2``, ``Pack`` and
``Unpack`` (axis 0 only), ``Fill`` of a fully known shape, ``Equal``/``NotEqual`` and the
pass-through ops (``Identity``, ``StopGradient``, ``CheckNumericsV2``,
``DebugIdentityV2``) over folded inputs. Arithmetic (``Mul``, ``Add``, ``Sub``, ``Neg``,
...), ``StridedSlice``, ``Reshape``, ``ShapeN``, ``Gather`` and the rest give None, as in
TensorFlow, even where flowgraph's own shape inference (`constant_value` of
`flowgraph.framework.constant_op`, TensorFlow's C++ shape refiner's counterpart) folds them.

A tensor that folds, and every folded tensor it was folded from, may no longer be fed
(``Graph.prevent_feeding``), as TensorFlow marks them. Anything that is not a tensor comes
back unchanged; a `SparseTensor` or a variable gives None.

>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [2, 3])
>>> tf.get_static_value(tf.shape(x)).tolist(), tf.get_static_value(tf.shape(x) * 2)
([2, 3], None)
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.variables import Variable

__all__ = ["get_static_value"]


def get_static_value(tensor, partial=False):
    """The NumPy value of `tensor` if TensorFlow's graph-time folding computes it, else
    None; `partial` lets a ``Pack`` keep None for the items it cannot fold.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.get_static_value(tf.cast(tf.constant([1, 2]), tf.float32)).tolist()
    [1.0, 2.0]
    >>> tf.get_static_value(tf.constant([1, 2]) * 2) is None
    True
    >>> tf.get_static_value(3)
    3
    """
    if not _is_tensor_like(tensor):
        return tensor
    if not isinstance(tensor, Tensor):
        return None
    fold = _FOLDS.get(tensor.op.type)
    value = None if fold is None else fold(tensor, partial)
    if value is not None:
        tensor.graph.prevent_feeding(tensor)
    return value


def _is_tensor_like(value) -> bool:
    return isinstance(value, Tensor | SparseTensor | Variable)


def _static_shape(tensor: Tensor):
    shape = tensor.op.inputs[0].shape
    return shape if shape.is_fully_defined() else None


def _const(t, partial):
    return np.array(t.op.attrs["value"])


def _shape(t, partial):
    shape = _static_shape(t)
    return None if shape is None else np.array(shape.as_list(), dtype=t.dtype.as_numpy_dtype)


def _size(t, partial):
    shape = _static_shape(t)
    if shape is None:
        return None
    return np.array(int(np.prod(shape.as_list(), dtype=np.int64)), dtype=t.dtype.as_numpy_dtype)


def _rank(t, partial):
    ndims = t.op.inputs[0].shape.ndims
    return None if ndims is None else np.array(ndims, dtype=np.int32)


def _range(t, partial):
    parts = [get_static_value(x) for x in t.op.inputs]
    if any(p is None for p in parts):
        return None
    return np.arange(*parts, dtype=t.dtype.as_numpy_dtype)


def _cast(t, partial):
    value = get_static_value(t.op.inputs[0])
    return None if value is None else np.asarray(value).astype(t.dtype.as_numpy_dtype)


def _concat(values, axis):
    axis = get_static_value(axis)
    if axis is None:
        return None
    parts = [get_static_value(x) for x in values]
    if any(p is None for p in parts):
        return None
    return np.concatenate(parts, axis=int(axis))


def _concat_v1(t, partial):
    return _concat(t.op.inputs[1:], t.op.inputs[0])


def _concat_v2(t, partial):
    return _concat(t.op.inputs[:-1], t.op.inputs[-1])


def _pack(t, partial):
    if not t.op.inputs or t.op.attrs.get("axis", 0) != 0:
        return None
    values = []
    for x in t.op.inputs:
        value = get_static_value(x, partial)
        if value is None and not partial:
            return None
        values.append(value)
    try:
        return np.array(values)
    except ValueError:  # items of different shapes
        return None


def _unpack(t, partial):
    if t.op.attrs.get("axis", 0) != 0:
        return None
    value = get_static_value(t.op.inputs[0], partial)
    return None if value is None else value[t.value_index]


def _fill(t, partial):
    value = get_static_value(t.op.inputs[1])
    if value is None or not t.shape.is_fully_defined():
        return None
    return np.full(t.shape.as_list(), value, dtype=np.asarray(value).dtype)


def _compare(fn):
    def fold(t, partial):
        a = get_static_value(t.op.inputs[0])
        if a is None:
            return None
        b = get_static_value(t.op.inputs[1])
        return None if b is None else fn(a, b)
    return fold


def _through(t, partial):
    return get_static_value(t.op.inputs[0], partial)


_FOLDS = {
    "Const": _const, "Shape": _shape, "Size": _size, "Rank": _rank, "Range": _range,
    "Cast": _cast, "Concat": _concat_v1, "ConcatV2": _concat_v2, "Pack": _pack,
    "Unpack": _unpack, "Fill": _fill, "Equal": _compare(np.equal),
    "NotEqual": _compare(np.not_equal), "StopGradient": _through, "Identity": _through,
    "CheckNumericsV2": _through, "DebugIdentityV2": _through,
}
