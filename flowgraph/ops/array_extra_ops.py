"""More array ops with TensorFlow 1.x's op types: ``Roll``, ``LowerBound``/``UpperBound``
(`searchsorted`), ``ListDiff`` (`setdiff1d`), ``UniqueWithCounts``, ``UnravelIndex``,
``Bitcast``, ``BroadcastArgs`` (`broadcast_dynamic_shape`), ``SpaceToBatchND``/
``BatchToSpaceND`` and ``Timestamp``; and `repeat`, `batch_gather`,
`space_to_batch`/`batch_to_space` and `required_space_to_batch_paddings` built on them.

``Roll`` and the space/batch pair are differentiable (each other's gradients); the others
compute indices, counts or bit patterns and have no gradient.

Example
-------
>>> import flowgraph as tf
>>> with tf.Session() as sess:
...     print(sess.run(tf.roll([1, 2, 3, 4], shift=1, axis=0)))
[4 1 2 3]
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
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = ["batch_gather", "batch_to_space", "batch_to_space_nd", "bitcast",
           "broadcast_dynamic_shape", "repeat", "required_space_to_batch_paddings", "roll",
           "searchsorted", "setdiff1d", "space_to_batch", "space_to_batch_nd", "timestamp",
           "unique_with_counts", "unravel_index"]

_INDEX_TYPES = (_dtypes.int32, _dtypes.int64)


def _int_tensor(x, name):
    # a NumPy array keeps its own dtype (int64 stays int64), as in TensorFlow
    preferred = None if isinstance(x, np.ndarray) else _dtypes.int32
    t = convert_to_tensor(x, name=name, preferred_dtype=preferred)
    if t.dtype.base_dtype not in _INDEX_TYPES:
        raise TypeError(f"{name} must be int32 or int64, got {t.dtype.base_dtype.name}")
    return t


# -- roll ---------------------------------------------------------------------------------

@register_op("Roll")
def _roll_shape(op, x, shift, axis):
    if not shift.is_compatible_with(axis):
        raise op.shape_error(f"shift {shift} and axis {axis} must have the same shape")
    return [x]


@register_gradient("Roll")
def _roll_grad(op, grad):
    _, shift, axis = op.inputs
    return [roll(grad, -shift, axis), None, None]


def roll(input, shift, axis, name=None):
    """Shift the elements of `input` by `shift` places along `axis` (scalars or equal
    length lists), wrapping around.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.roll([[1, 2], [3, 4]], shift=[1, -1], axis=[0, 1])).tolist()
    [[4, 3], [2, 1]]
    """
    return make_tensor("Roll", [convert_to_tensor(input, name="input"),
                                _int_tensor(shift, "shift"), _int_tensor(axis, "axis")],
                       name=name or "Roll")


# -- searchsorted ---------------------------------------------------------------------------

def _bound_shape(op, sorted_inputs, values):
    if sorted_inputs.ndims is not None and values.ndims is not None:
        if sorted_inputs.ndims != values.ndims or not TensorShape(
                sorted_inputs.dims[:-1]).is_compatible_with(TensorShape(values.dims[:-1])):
            raise op.shape_error(f"sorted_sequence {sorted_inputs} and values {values} must "
                                 "have the same leading dimensions")
    return [values]


for _t in ("LowerBound", "UpperBound"):
    register_op(_t, attrs={"out_type": _dtypes.int32},
                dtype_fn=attr_dtype("out_type"))(_bound_shape)


def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None):
    """For each of `values`, the index in the (last-axis) sorted `sorted_sequence` where it
    would be inserted keeping the order: before equal entries (``side="left"``) or after.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.searchsorted([1, 3, 5], [0, 3, 6], side="right")).tolist()
    [0, 2, 3]
    """
    if side not in ("left", "right"):
        raise ValueError(f"tf.searchsorted: side must be 'left' or 'right', got {side!r}")
    seq = convert_to_tensor(sorted_sequence, name="sorted_sequence")
    vals = convert_to_tensor(values, dtype=seq.dtype.base_dtype, name="values")
    return make_tensor("LowerBound" if side == "left" else "UpperBound", [seq, vals],
                       {"out_type": _dtypes.as_dtype(out_type)}, name=name or "SearchSorted")


# -- set difference, unique with counts, unravel ----------------------------------------------

@register_op("ListDiff", attrs={"out_idx": _dtypes.int32}, num_outputs=2,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  _dtypes.as_dtype(op.attrs["out_idx"])])
def _list_diff_shape(op, x, y):
    for what, s in (("x", x), ("y", y)):
        if s.ndims not in (None, 1):
            raise op.shape_error(f"{what} must be 1-D, got shape {s}")
    return [TensorShape([None]), TensorShape([None])]


@register_constant_evaluator("ListDiff")
def _eval_list_diff(op, index):
    x, y = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if x is None or y is None:
        return None
    x = np.asarray(x)
    keep = np.flatnonzero(~np.isin(x, np.asarray(y)))
    return x[keep] if index == 0 else keep.astype(op.outputs[1].dtype.as_numpy_dtype)


ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def setdiff1d(x, y, index_dtype=_dtypes.int32, name=None):
    """The values of 1-D `x` not in `y`, in their order in `x`, and their indices in `x`.

    Example
    -------
    >>> import flowgraph as tf
    >>> out, idx = tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    >>> tf.Session().run([out, idx])
    [array([2, 4, 6], dtype=int32), array([1, 3, 5], dtype=int32)]
    """
    x = convert_to_tensor(x, name="x")
    y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
    op = make_op("ListDiff", [x, y], {"out_idx": _dtypes.as_dtype(index_dtype)},
                 name=name or "ListDiff")
    return ListDiff(*op.outputs)


@register_op("UniqueWithCounts", attrs={"out_idx": _dtypes.int32}, num_outputs=3,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  _dtypes.as_dtype(op.attrs["out_idx"]),
                                  _dtypes.as_dtype(op.attrs["out_idx"])])
def _unique_with_counts_shape(op, x):
    if x.ndims not in (None, 1):
        raise op.shape_error(f"x must be 1-D, got shape {x}")
    return [TensorShape([None]), x if x.ndims is not None else TensorShape([None]),
            TensorShape([None])]


def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    """`tf.unique` plus how often each distinct value occurs: ``(y, idx, count)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> y, idx, count = tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    >>> tf.Session().run(count).tolist()
    [2, 1, 3, 1, 2]
    """
    op = make_op("UniqueWithCounts", [convert_to_tensor(x, name="x")],
                 {"out_idx": _dtypes.as_dtype(out_idx)}, name=name or "UniqueWithCounts")
    return UniqueWithCounts(*op.outputs)


@register_op("UnravelIndex", dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype])
def _unravel_shape(op, indices, dims):
    if dims.ndims not in (None, 1):
        raise op.shape_error(f"dims must be 1-D, got shape {dims}")
    if indices.ndims is None:
        return [TensorShape(None)]
    if indices.ndims > 1:
        raise op.shape_error(f"indices must be 0-D or 1-D, got shape {indices}")
    return [TensorShape([dims.dims[0] if dims.ndims else None, *indices.dims])]


def unravel_index(indices, dims, name=None):
    """The coordinates of flat `indices` in an array of shape `dims` (row-major):
    ``[len(dims)]`` for a scalar, ``[len(dims), n]`` for a vector.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.unravel_index([2, 5, 7], [3, 3])).tolist()
    [[0, 1, 2], [2, 2, 1]]
    """
    idx = _int_tensor(indices, "indices")
    d = convert_to_tensor(dims, dtype=idx.dtype.base_dtype, name="dims")
    return make_tensor("UnravelIndex", [idx, d], name=name or "UnravelIndex")


# -- bitcast, broadcast args, timestamp ------------------------------------------------------

@register_op("Bitcast", attrs={"type": None}, dtype_fn=attr_dtype("type"))
def _bitcast_shape(op, x):
    src = op.inputs[0].dtype.base_dtype.size
    dst = _dtypes.as_dtype(op.attrs["type"]).size
    if x.ndims is None or src == dst:
        return [x]
    if src > dst:
        return [TensorShape([*x.dims, src // dst])]
    if x.ndims == 0 or not x.dims[-1].is_compatible_with(dst // src):
        raise op.shape_error(f"cannot bitcast {op.inputs[0].dtype.base_dtype.name} of shape "
                             f"{x} to {_dtypes.as_dtype(op.attrs['type']).name}: the last "
                             f"dimension must be {dst // src}")
    return [TensorShape(x.dims[:-1])]


def bitcast(input, type, name=None):
    """Reinterpret the bytes of `input` as `type`; a wider type consumes the last
    dimension, a narrower one adds a dimension.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.bitcast(tf.constant(1.0), tf.int32)).item()
    1065353216
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype == _dtypes.string or _dtypes.as_dtype(type) == _dtypes.string:
        raise TypeError("tf.bitcast: strings cannot be bitcast")
    return make_tensor("Bitcast", [x], {"type": _dtypes.as_dtype(type)},
                       name=name or "Bitcast")


@register_op("BroadcastArgs", dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype])
def _broadcast_args_shape(op, s0, s1):
    n0 = s0[0].value if s0.ndims == 1 else None
    n1 = s1[0].value if s1.ndims == 1 else None
    return [TensorShape([None if n0 is None or n1 is None else max(n0, n1)])]


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shape vectors (NumPy rules), computed when the op runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.broadcast_dynamic_shape([1, 2, 3], [5, 1, 1])).tolist()
    [5, 2, 3]
    """
    s0 = _int_tensor(shape_x, "shape_x")
    s1 = convert_to_tensor(shape_y, dtype=s0.dtype.base_dtype, name="shape_y")
    return make_tensor("BroadcastArgs", [s0, s1], name="BroadcastArgs")


@register_op("Timestamp", dtype_fn=fixed_dtype(_dtypes.float64), stateful=True)
def _timestamp_shape(op):
    return [TensorShape([])]


def timestamp(name=None):
    """The time, in seconds since the Unix epoch (float64), when the op runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> bool(tf.Session().run(tf.timestamp()) > 1.6e9)
    True
    """
    return make_tensor("Timestamp", [], name=name or "Timestamp")


# Left without a gradient, as TensorFlow leaves ListDiff and UniqueWithCounts:
# tf.gradients raises LookupError when a gradient reaches one.
not_differentiable("LowerBound", "UpperBound",
                   "UnravelIndex", "Bitcast", "BroadcastArgs", "Timestamp")


# -- space to batch -------------------------------------------------------------------------

def _space_batch_shape(op, x, block, pads):
    b = constant_value(op.inputs[1])
    p = constant_value(op.inputs[2])
    m = block[0].value if block.ndims == 1 else None
    if x.ndims is None or m is None:
        return [TensorShape(None) if x.ndims is None else TensorShape([None] * x.ndims)]
    if b is None or p is None:
        # Unknown blocks or paddings: the spatial sizes are unknown, the rest are kept
        # (and the batch too when the blocks are known), as TensorFlow infers them.
        out = [None] * (m + 1) + x.as_list()[m + 1:]
        if b is not None and x[0].value is not None:
            prod = int(np.prod(np.asarray(b)))
            out[0] = x[0].value * prod if op.type == "SpaceToBatchND" else \
                (x[0].value // prod if x[0].value % prod == 0 else None)
        return [TensorShape(out)]
    b = [int(v) for v in np.asarray(b).reshape(-1)]
    p = np.asarray(p).reshape(-1, 2)
    if x.ndims < m + 1:
        raise op.shape_error(f"input {x} must have at least {m + 1} dimensions for "
                             f"{m} block dimensions")
    dims = x.as_list()
    prod = int(np.prod(b))
    out = list(dims)
    to_batch = op.type == "SpaceToBatchND"
    for i in range(m):
        d = dims[i + 1]
        if d is None:
            out[i + 1] = None
            continue
        if to_batch:
            size = d + int(p[i, 0]) + int(p[i, 1])
            if size % b[i]:
                raise op.shape_error(f"padded dimension {i + 1} ({size}) is not divisible "
                                     f"by block_shape[{i}] = {b[i]}")
            out[i + 1] = size // b[i]
        else:
            out[i + 1] = d * b[i] - int(p[i, 0]) - int(p[i, 1])
    if dims[0] is not None:
        if to_batch:
            out[0] = dims[0] * prod
        elif dims[0] % prod:
            raise op.shape_error(f"batch dimension {dims[0]} is not divisible by the "
                                 f"product of block_shape ({prod})")
        else:
            out[0] = dims[0] // prod
    return [TensorShape(out)]


register_op("SpaceToBatchND")(_space_batch_shape)
register_op("BatchToSpaceND")(_space_batch_shape)


@register_gradient("SpaceToBatchND")
def _space_to_batch_grad(op, grad):
    return [batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@register_gradient("BatchToSpaceND")
def _batch_to_space_grad(op, grad):
    return [space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


def space_to_batch_nd(input, block_shape, paddings, name=None):
    """Zero-pad the spatial dimensions of `input` (``[batch, *spatial, ...]``) by
    `paddings`, cut them into blocks of `block_shape`, and move the block offsets into
    the batch dimension (the batch grows by ``prod(block_shape)``).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(4), [1, 2, 2, 1])
    >>> tf.Session().run(tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]])).ravel().tolist()
    [0, 1, 2, 3]
    """
    with op_scope(name, "SpaceToBatchND", (input, block_shape, paddings)) as scope:
        return make_tensor("SpaceToBatchND", [convert_to_tensor(input, name="input"),
                                              _int_tensor(block_shape, "block_shape"),
                                              _int_tensor(paddings, "paddings")],
                           name=scope)


def batch_to_space_nd(input, block_shape, crops, name=None):
    """The inverse of `space_to_batch_nd`: move blocks from the batch back into the
    spatial dimensions, then remove `crops`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(4), [4, 1, 1, 1])
    >>> tf.Session().run(tf.batch_to_space_nd(x, [2, 2], [[0, 0], [0, 0]]))[0, :, :, 0]
    array([[0, 1],
           [2, 3]], dtype=int32)
    """
    with op_scope(name, "BatchToSpaceND", (input, block_shape, crops)) as scope:
        return make_tensor("BatchToSpaceND", [convert_to_tensor(input, name="input"),
                                              _int_tensor(block_shape, "block_shape"),
                                              _int_tensor(crops, "crops")],
                           name=scope)


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):
    """`space_to_batch_nd` of a 4-D ``[batch, height, width, depth]`` input with a square
    `block_size`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.space_to_batch(tf.zeros([1, 4, 4, 3]), [[0, 0], [0, 0]], 2).shape.as_list()
    [4, 2, 2, 3]
    """
    size = block_shape if block_size is None else block_size
    if size is None or int(size) < 2:
        raise ValueError(f"tf.space_to_batch: block_size must be at least 2, got {size}")
    return space_to_batch_nd(input, [int(size), int(size)], paddings, name=name)


def batch_to_space(input, crops, block_size, name=None, block_shape=None):
    """`batch_to_space_nd` of a 4-D input with a square `block_size`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.batch_to_space(tf.zeros([4, 2, 2, 3]), [[0, 0], [0, 0]], 2).shape.as_list()
    [1, 4, 4, 3]
    """
    size = block_shape if block_size is None else block_size
    if int(size) < 2:
        raise ValueError(f"tf.batch_to_space: block_size must be at least 2, got {size}")
    return batch_to_space_nd(input, [int(size), int(size)], crops, name=name)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name=None):
    """``(paddings, crops)`` that make `input_shape` (spatial dims) plus `base_paddings`
    divisible by `block_shape`, for `space_to_batch_nd`/`batch_to_space_nd`.

    Example
    -------
    >>> import flowgraph as tf
    >>> p, c = tf.required_space_to_batch_paddings([5, 7], [2, 3])
    >>> tf.Session().run([p, c])
    [array([[0, 1],
           [0, 2]], dtype=int32), array([[0, 1],
           [0, 2]], dtype=int32)]
    """
    from flowgraph.ops.array_join_ops import stack
    from flowgraph.ops.array_shape_ops import zeros

    with name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        shape_t = _int_tensor(input_shape, "input_shape")
        block = convert_to_tensor(block_shape, dtype=shape_t.dtype.base_dtype,
                                  name="block_shape")
        m = block.shape[0].value
        if m is None:
            raise ValueError("block_shape must have a known length")
        base = zeros([m, 2], shape_t.dtype.base_dtype) if base_paddings is None else \
            convert_to_tensor(base_paddings, dtype=shape_t.dtype.base_dtype)
        start, end = base[:, 0], base[:, 1]
        full = shape_t + start + end
        pad_end_extra = (block - full % block) % block
        pad_end = end + pad_end_extra
        paddings = stack([start, pad_end], axis=1, name="paddings")
        crops = stack([start * 0, pad_end_extra], axis=1, name="crops")
        return paddings, crops


# -- compositions -------------------------------------------------------------------------

def repeat(input, repeats, axis=None, name=None):
    """Repeat each element of `input` along `axis` (flattened when None) `repeats` times
    (a scalar or one count per element); differentiable in `input`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0)).tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    from flowgraph.ops.array_gen_ops import range as _range
    from flowgraph.ops.array_index_ops import gather
    from flowgraph.ops.array_shape_ops import reshape, shape
    from flowgraph.ops.math_reduce import cumsum, reduce_sum

    with name_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        if axis is None:
            x = reshape(x, [-1])
            axis = 0
        reps = _int_tensor(repeats, "repeats")
        n = shape(x, out_type=reps.dtype.base_dtype)[axis]
        reps = reps + reshape(_range(n) * 0, [-1]) if reps.shape.ndims == 0 else reps
        ends = cumsum(reps)
        total = reduce_sum(reps)
        positions = _range(total, dtype=reps.dtype.base_dtype)
        index = searchsorted(ends, positions, side="right", out_type=reps.dtype.base_dtype)
        return gather(x, index, axis=axis)


def batch_gather(params, indices, name=None):
    """``params[b..., indices[b..., j], ...]``: a gather along the first non-batch axis,
    batched over the leading axes that `indices` shares with `params`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.batch_gather([[1, 2, 3], [4, 5, 6]], [[2], [0]])).tolist()
    [[3], [4]]
    """
    from flowgraph.ops.array_index_ops import gather

    with name_scope(name, "BatchGather", [params, indices]):
        idx = _int_tensor(indices, "indices")
        rank = idx.shape.ndims
        if rank is None:
            raise ValueError("tf.batch_gather: the rank of indices must be known")
        return gather(params, idx, axis=rank - 1, batch_dims=rank - 1)
