"""Small TF1 helpers on tensors, shapes and protos: `is_tensor`, `dimension_value`,
`dimension_at_index`, `get_static_value`, `make_tensor_proto`/`make_ndarray`,
`convert_to_tensor_or_indexed_slices`/`convert_to_tensor_or_sparse_tensor`,
`broadcast_static_shape`, `saturate_cast`, `to_complex64`/`to_complex128`, and the
variable enums `VariableAggregation`/`VariableSynchronization`.

Example
-------
>>> import flowgraph as tf
>>> tf.dimension_value(tf.TensorShape([None, 3])[1]), tf.is_tensor(tf.constant(1))
(3, True)
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue
from flowgraph.framework.tensor_shape import Dimension, TensorShape, as_shape
from flowgraph.ops.math_ops import cast
from flowgraph.ops.math_raw import clip_by_value_op
from flowgraph.ops.static_value import get_static_value
from flowgraph.ops.variables import VariableAggregation, VariableSynchronization

__all__ = ["VariableAggregation", "VariableSynchronization", "broadcast_static_shape",
           "convert_to_tensor_or_indexed_slices", "convert_to_tensor_or_sparse_tensor",
           "dimension_at_index", "dimension_value", "get_static_value", "is_tensor",
           "make_ndarray", "make_tensor_proto", "saturate_cast", "to_complex64",
           "to_complex128"]


def is_tensor(x) -> bool:
    """Whether `x` is a graph tensor type (`Tensor`, `SparseTensor`, `IndexedSlices`,
    `Variable`), not a NumPy array or Python value.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.is_tensor([1.0]), tf.is_tensor(tf.SparseTensor([[0]], [1.0], [2]))
    (False, True)
    """
    from flowgraph.ops.variables import Variable

    return isinstance(x, Tensor | SparseTensor | IndexedSlices | Variable)


def dimension_value(dimension):
    """The int (or None) of a `Dimension`, passing ints and None through.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.dimension_value(tf.Dimension(None)), tf.dimension_value(4)
    (None, 4)
    """
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape, index) -> Dimension:
    """Dimension `index` of `shape` as a `Dimension` (unknown when the rank is).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.dimension_at_index(tf.TensorShape(None), 2).value is None
    True
    """
    shape = as_shape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return shape.dims[index]


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False,
                      allow_broadcast=False):
    """A `TensorProto` (TensorFlow's message) holding `values`, cast to `dtype` and, when
    `values` is a scalar, broadcast to `shape`.

    Example
    -------
    >>> import flowgraph as tf
    >>> proto = tf.make_tensor_proto([1.0, 2.0], dtype=tf.float64)
    >>> tf.make_ndarray(proto).dtype.name, [d.size for d in proto.tensor_shape.dim]
    ('float64', [2])
    """
    from flowgraph.framework.tf_formats.graph_def import tensor_proto

    np_dtype = None if dtype is None else _dtypes.as_dtype(dtype).as_numpy_dtype
    if isinstance(values, bytes | str) or (isinstance(values, list | tuple) and values
                                           and isinstance(values[0], bytes | str)):
        arr = np.asarray(values, dtype=object)
    else:
        arr = np.asarray(values, dtype=np_dtype)
        if np_dtype is None and not isinstance(values, np.ndarray | np.generic):
            arr = _python_default(arr)
    if shape is not None:
        shape = [int(d) for d in shape]
        if arr.shape != tuple(shape):
            if verify_shape or (arr.size != 1 and not allow_broadcast):
                if arr.size == int(np.prod(shape)) and not verify_shape:
                    arr = arr.reshape(shape)
                else:
                    raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got "
                                    f"{arr.shape}.")
            else:
                arr = np.broadcast_to(arr.reshape(()) if arr.size == 1 else arr, shape)
    return tensor_proto(np.ascontiguousarray(arr))


def _python_default(arr: np.ndarray) -> np.ndarray:
    """Python numbers become int32 (int64 when too large) and float32, as in TensorFlow."""
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64 and (arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)):
        return arr.astype(np.int32)
    return arr


def make_ndarray(tensor):
    """The NumPy array of a `TensorProto`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.make_ndarray(tf.make_tensor_proto([[1, 2]])).tolist()
    [[1, 2]]
    """
    from flowgraph.framework.tf_formats.graph_def import tensor_value

    return tensor_value(tensor)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """`value` itself if it is `IndexedSlices` (checking `dtype`), else a `Tensor`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.convert_to_tensor_or_indexed_slices([1.0]).dtype.name
    'float32'
    """
    if isinstance(value, IndexedSlices):
        if dtype is not None and _dtypes.as_dtype(dtype) != value.dtype.base_dtype:
            raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name}"
                             f" for IndexedSlices of dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """`value` as a `SparseTensor` (from a `SparseTensorValue` too) or a `Tensor`.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.SparseTensorValue([[0]], [1.0], [3])
    >>> type(tf.convert_to_tensor_or_sparse_tensor(v)).__name__
    'SparseTensor'
    """
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and _dtypes.as_dtype(dtype) != value.dtype.base_dtype:
            raise ValueError(f"Sparse dtype: requested = {_dtypes.as_dtype(dtype).name}, "
                             f"actual = {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The broadcast of two static shapes (NumPy rules); incompatible shapes are a
    ValueError.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1]))
    TensorShape([Dimension(None), Dimension(4), Dimension(3)])
    """
    from flowgraph.framework.tensor_shape import broadcast_shape

    try:
        return broadcast_shape(as_shape(shape_x), as_shape(shape_y))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {shape_x} and "
                         f"{shape_y}") from None


def saturate_cast(value, dtype, name=None):
    """Cast `value` to `dtype`, first clipping it to `dtype`'s range (no wrap-around).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.saturate_cast([-5.0, 300.0], tf.uint8)).tolist()
    [0, 255]
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "saturate_cast", [value]) as scope:
        x = convert_to_tensor(value, name="value")
        src = x.dtype.base_dtype
        if not (src.is_complex or dtype.is_complex):
            limits = _clamp_limits(src, dtype)
            if limits is not None:
                lo = convert_to_tensor(limits[0], dtype=src)
                hi = convert_to_tensor(limits[1], dtype=src)
                x = clip_by_value_op(x, lo, hi, name="clamp")
        return cast(x, dtype, name=scope)


def _clamp_limits(src, dst):
    """``(lo, hi)`` in `src`'s NumPy type bounding `dst`'s range, or None when `src`
    already fits. A bound `src` cannot hold exactly is moved one step toward zero, so
    the clamped value always converts without overflow (float32 -> int32 stops at
    2147483520)."""
    # Bounds compare as TensorFlow's NumPy 1 scalars did: a floating `src` against
    # float64 values (int64's max rounds to 2**63, so +inf still wraps to int64's min).
    num = float if src.is_floating else int
    src_min, src_max, dst_min, dst_max = (
        num(np.asarray(v).item()) for v in (src.min, src.max, dst.min, dst.max))
    if not (src_min < dst_min or src_max > dst_max):
        return None
    np_src = src.as_numpy_dtype
    lo = np_src(max(src_min, dst_min))
    if num(lo.item()) < dst_min:
        lo = np.nextafter(lo, np_src(0), dtype=np_src)
    hi = np_src(min(src_max, dst_max))
    if num(hi.item()) > dst_max:
        hi = np.nextafter(hi, np_src(0), dtype=np_src)
    return lo, hi


def to_complex64(x, name="ToComplex64"):
    """`x` cast to complex64 (a deprecated spelling of ``tf.cast(x, tf.complex64)``)."""
    return cast(x, _dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    """`x` cast to complex128 (a deprecated spelling of ``tf.cast(x, tf.complex128)``)."""
    return cast(x, _dtypes.complex128, name=name)
