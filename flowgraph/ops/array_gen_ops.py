"""Generated and derived index tensors: `range`, `linspace`, `one_hot`, `sequence_mask`,
`unique`, `invert_permutation`.
"""

from __future__ import annotations

import collections

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    convert_to_tensor,
    register_constant_evaluator,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops.array_shape_ops import expand_dims
from flowgraph.ops.array_static import MAX_EVAL_ELEMENTS, const_int
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = [
    "invert_permutation",
    "lin_space",
    "linspace",
    "one_hot",
    "range",
    "sequence_mask",
    "unique",
]

_RANGE_ORDER = (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64)


def _cast(x: Tensor, dtype) -> Tensor:
    from flowgraph.ops import math_ops

    cast = getattr(math_ops, "cast", None)
    if cast is None:  # pragma: no cover - only while the math family is incomplete
        raise TypeError(f"cannot convert {x.name} from {x.dtype.name} to {dtype.name}: "
                        "tf.cast is not available")
    return cast(x, dtype)


def _scalar_value(t):
    v = constant_value(t)
    return None if v is None or np.ndim(v) else v[()]


# -- Range --------------------------------------------------------------------------------
def range_size(start, limit, delta, dtype) -> int:
    """The length of Range(start, limit, delta) computed in NumPy `dtype`, as TF does."""
    start, limit, delta = (np.asarray(v, dtype=dtype)[()] for v in (start, limit, delta))
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if np.issubdtype(np.dtype(dtype), np.integer):
        return (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    return int(np.ceil(np.abs((limit - start) / delta)))


def range_numpy(start, limit, delta, dtype) -> np.ndarray:
    """The values of Range, computed in `dtype` (a NumPy dtype) as TensorFlow does."""
    n = range_size(start, limit, delta, dtype)
    start, delta = np.asarray(start, dtype=dtype), np.asarray(delta, dtype=dtype)
    return (start + np.arange(n, dtype=dtype) * delta).astype(dtype, copy=False)


@register_op("Range")
def _range_shape(op, start, limit, delta):
    for what, s in zip(("start", "limit", "delta"), (start, limit, delta)):
        if s.ndims not in (None, 0):
            raise op.shape_error(f"{what} must be a scalar, got shape {s}")
    values = [_scalar_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [TensorShape([None])]
    try:
        n = range_size(*values, op.inputs[0].dtype.as_numpy_dtype)
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    return [TensorShape([n])]


def range(start, limit=None, delta=1, dtype=None, name: str = "range"):
    """The sequence start, start + delta, ... up to but excluding `limit`.

    With one argument it is the limit (start 0). The dtype, unless given, is the widest
    of the arguments' in int32 < int64 < float32 < float64 (Python ints are int32,
    floats float32).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.range(3).dtype.name, tf.range(1.0, 5).shape.as_list()
    ('int32', [4])
    """
    if limit is None:
        start, limit = 0, start
    # a known Dimension is an int32 argument (TF converts it so)
    args = [a.value if isinstance(a, Dimension) and a.value is not None else a
            for a in (start, limit, delta)]
    with name_scope(name, "Range", args) as scope:  # TensorFlow always opens it
        # as TensorFlow: each Python argument a constant of its own type (or of `dtype`),
        # then a Cast of those not of the widest type
        tensors = [a if isinstance(a, Tensor) else
                   convert_to_tensor(a, dtype=dtype, name=arg)
                   for a, arg in zip(args, ("start", "limit", "delta"))]
        if dtype is None:
            for t in tensors:
                if t.dtype.base_dtype not in _RANGE_ORDER:
                    raise TypeError(f"range: arguments must be int32, int64, float32 or "
                                    f"float64, got {t.dtype.base_dtype.name}")
            dtype = max((t.dtype.base_dtype for t in tensors), key=_RANGE_ORDER.index)
        dtype = _dtypes.as_dtype(dtype).base_dtype
        tensors = [t if t.dtype.base_dtype == dtype else _cast(t, dtype) for t in tensors]
        return make_tensor("Range", tensors, name=scope)


@register_constant_evaluator("Range")
def _eval_range(op, index):
    values = [_scalar_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    dtype = op.inputs[0].dtype.as_numpy_dtype
    if range_size(*values, dtype) > MAX_EVAL_ELEMENTS:
        return None
    return range_numpy(*values, dtype)


# -- LinSpace -------------------------------------------------------------------------------
@register_op("LinSpace")
def _linspace_shape(op, start, stop, num):
    for what, s in zip(("start", "stop", "num"), (start, stop, num)):
        if s.ndims not in (None, 0):
            raise op.shape_error(f"{what} must be a scalar, got shape {s}")
    n = const_int(op.inputs[2])
    if n is not None and n <= 0:
        raise op.shape_error(f"Requires num > 0: {n}")
    return [TensorShape([n])]


def linspace(start, stop, num, name: str | None = None, axis: int = 0):
    """`num` evenly spaced values from `start` to `stop`, both included.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.linspace(0.0, 1.0, 5).shape.as_list()
    [5]
    """
    if axis != 0:
        raise NotImplementedError("linspace: only axis=0 (scalar start/stop) is supported")
    s = convert_to_tensor(start)
    if not s.dtype.is_floating:
        s = (convert_to_tensor(start, dtype=_dtypes.float64) if not isinstance(start, Tensor)
             else _cast(s, _dtypes.float64))
    e = (convert_to_tensor(stop, dtype=s.dtype.base_dtype) if not isinstance(stop, Tensor)
         else stop)
    if e.dtype.base_dtype != s.dtype.base_dtype:
        e = _cast(e, s.dtype.base_dtype)
    n = convert_to_tensor(num, preferred_dtype=_dtypes.int32)
    return make_tensor("LinSpace", [s, e, n], name=name or "LinSpace")


lin_space = linspace

not_differentiable("Range", "LinSpace")


# -- OneHot ---------------------------------------------------------------------------------
@register_op("OneHot", attrs={"axis": -1}, dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype])
def _one_hot_shape(op, indices, depth, on, off):
    axis = op.attrs["axis"]
    d = const_int(op.inputs[1])
    if d is not None and d < 0:
        raise op.shape_error(f"depth must be non-negative, got {d}")
    if indices.ndims is None:
        return [TensorShape(None)]
    if not -1 <= axis <= indices.ndims:
        raise op.shape_error(f"axis must be -1 or in [0, {indices.ndims}], got {axis}")
    dims = indices.dims
    pos = len(dims) if axis == -1 else axis
    return [TensorShape([*dims[:pos], d, *dims[pos:]])]


_ONE_HOT_INDICES = (_dtypes.uint8, _dtypes.int8, _dtypes.int32, _dtypes.int64)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name: str | None = None):
    """A tensor with `on_value` at `indices` along a new dimension of size `depth` and
    `off_value` elsewhere (indices outside [0, depth) give a row of `off_value`).

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.one_hot([0, 2], depth=3)
    >>> t.shape.as_list(), t.dtype.name
    ([2, 3], 'float32')
    """
    want = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
    # TensorFlow's order and names: on/off values first, then indices and depth, all in
    # the scope `one_hot`.
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        # given values are unnamed constants (TF: "one_hot/Const"), defaults "on_value"...
        on = None if on_value is None else convert_to_tensor(on_value, dtype=want)
        off = None if off_value is None else convert_to_tensor(off_value, dtype=want)
        if on is not None and off is not None and on.dtype.base_dtype != off.dtype.base_dtype:
            raise TypeError(f"one_hot: dtype {on.dtype.name} of on_value does not match dtype "
                            f"{off.dtype.name} of off_value")
        dtype = want or (on.dtype.base_dtype if on is not None else None) or (
            off.dtype.base_dtype if off is not None else _dtypes.float32)
        on = on if on is not None else convert_to_tensor(1, dtype=dtype, name="on_value")
        off = off if off is not None else convert_to_tensor(0, dtype=dtype, name="off_value")
        ind = convert_to_tensor(indices, preferred_dtype=_dtypes.int64, name="indices")
        if ind.dtype.base_dtype not in _ONE_HOT_INDICES:
            raise TypeError(
                f"one_hot: indices must be uint8, int8, int32 or int64, got "
                f"{ind.dtype.base_dtype.name} ({ind.name}); cast them with tf.cast first.")
        d = (convert_to_tensor(depth, dtype=_dtypes.int32, name="depth")
             if not isinstance(depth, Tensor) else depth)
        return make_tensor("OneHot", [ind, d, on, off],
                           {"axis": -1 if axis is None else int(axis)}, name=scope)


not_differentiable("OneHot")


# -- sequence_mask ----------------------------------------------------------------------------
def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name: str | None = None):
    """``mask[..., j] = j < lengths[...]`` for j < `maxlen` (default: max of `lengths`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.sequence_mask([1, 3], 4).shape.as_list()
    [2, 4]
    """
    from flowgraph.ops import math_ops, math_reduce

    # TensorFlow's graph: Max and Maximum(0, .) without `maxlen`, a raw Range over
    # `maxlen`'s dtype, `lengths` always cast to it (a Cast even when the dtypes agree),
    # Less, then a second Cast for a non-bool `dtype`.
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths, preferred_dtype=_dtypes.int32)
        if maxlen is None:
            maxlen = math_reduce.reduce_max(lengths)
            zero = convert_to_tensor(0, dtype=maxlen.dtype.base_dtype)
            maxlen = make_tensor("Maximum", [zero, maxlen], name="Maximum")
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError(f"sequence_mask: maxlen must be a scalar, got shape {maxlen.shape}")
        kind = maxlen.dtype.base_dtype
        if kind not in _RANGE_ORDER:
            raise TypeError(f"sequence_mask: maxlen must be int32, int64, float32 or float64, "
                            f"got {kind.name}")
        row = make_tensor("Range", [convert_to_tensor(0, dtype=kind), maxlen,
                                    convert_to_tensor(1, dtype=kind)], name="Range")
        column = expand_dims(lengths, -1)
        column = make_tensor("Cast", [column], {"SrcT": column.dtype.base_dtype,
                                                "DstT": kind}, name="Cast")
        mask = math_ops.less(row, column)
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if dtype != _dtypes.bool:
            mask = make_tensor("Cast", [mask], {"SrcT": _dtypes.bool, "DstT": dtype},
                               name="Cast")
        return mask


# -- Unique, InvertPermutation -----------------------------------------------------------------
UniqueResult = collections.namedtuple("Unique", ["y", "idx"])


@register_op("Unique", attrs={"out_idx": _dtypes.int32}, num_outputs=2,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  _dtypes.as_dtype(op.attrs["out_idx"])])
def _unique_shape(op, x):
    if x.ndims not in (None, 1):
        raise op.shape_error(f"Shape must be rank 1 but is rank {x.ndims}")
    return [TensorShape([None]), x if x.ndims is not None else TensorShape([None])]


def unique(x, out_idx=_dtypes.int32, name: str | None = None) -> UniqueResult:
    """The distinct values `y` of 1-D `x` in order of first appearance, and `idx` with
    ``x == y[idx]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> y, idx = tf.unique([4, 1, 4])
    >>> idx.dtype.name
    'int32'
    """
    t = convert_to_tensor(x)
    op = make_op("Unique", [t], {"out_idx": _dtypes.as_dtype(out_idx).base_dtype},
                 name=name or "Unique")
    return UniqueResult(*op.outputs)


@register_op("InvertPermutation")
def _invert_permutation_shape(op, x):
    if x.ndims not in (None, 1):
        raise op.shape_error(f"x must be a 1-D permutation, got shape {x}")
    return [x if x.ndims is not None else TensorShape([None])]


def invert_permutation(x, name: str | None = None):
    """The inverse permutation: ``y[x[i]] = i``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.invert_permutation([2, 0, 1]).shape.as_list()
    [3]
    """
    t = convert_to_tensor(x, preferred_dtype=_dtypes.int32)
    if t.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"invert_permutation: x must be int32 or int64, got {t.dtype.name}")
    return make_tensor("InvertPermutation", [t], name=name or "InvertPermutation")


not_differentiable("InvertPermutation")  # Unique has no gradient (LookupError), as in TF
