"""Indexing: `slice`, `strided_slice` and ``Tensor.__getitem__``, `gather`, `gather_nd`,
`scatter_nd`, `where` / `where_v2`, `boolean_mask`.

``tensor[...]`` builds one `StridedSlice`: ints shrink a dimension, slices (negative
steps too) select a range, ``...`` stands for all remaining dimensions and
``tf.newaxis`` (None) inserts one; start, stop and step may be scalar int tensors.
The spec semantics live in `flowgraph.ops.array_slicing`.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    convert_to_tensor,
    register_constant_evaluator,
    register_tensor_conversion_function,
)
from flowgraph.framework.graph import graph_for, name_scope
from flowgraph.framework.indexed_slices import LARGE_SPARSE_NUM_ELEMENTS, IndexedSlices
from flowgraph.framework.operation import Tensor, install_tensor_operator
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, broadcast_shape
from flowgraph.ops import array_slicing
from flowgraph.ops.array_join_ops import concat, stack
from flowgraph.ops.array_shape_ops import ones_like, reshape, shape, squeeze
from flowgraph.ops.array_static import const_int, static_elements
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import binary_inputs, fixed_dtype, make_tensor, op_scope

__all__ = [
    "boolean_mask",
    "gather",
    "gather_nd",
    "newaxis",
    "scatter_nd",
    "slice",
    "strided_slice",
    "where",
    "where_v2",
]

newaxis = None

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _ints(elems):
    return None if elems is None else [e if isinstance(e, int) else None for e in elems]


# -- Slice --------------------------------------------------------------------------------
@register_op("Slice")
def _slice_shape(op, x, begin_shape, size_shape):
    begin, size = _ints(static_elements(op.inputs[1])), _ints(static_elements(op.inputs[2]))
    n = next((len(v) for v in (begin, size) if v is not None), x.ndims)
    if n is None:
        return [TensorShape(None)]
    if x.ndims is not None and x.ndims != n:
        raise op.shape_error(f"begin and size must have {x.ndims} entries (the input rank), "
                             f"got {n}")
    begin, size = begin or [None] * n, size or [None] * n
    if len(begin) != len(size):
        raise op.shape_error(f"begin has {len(begin)} entries but size has {len(size)}")
    dims = [None] * n if x.ndims is None else [d.value for d in x.dims]
    # As TensorFlow: a size of -1 resolves (to the dimension less begin) only when every
    # size is constant; then each known begin entry resolves its dimension, even where
    # other begin entries are unknown (``tf.slice(x, [0, t, 0], [-1, -1, -1])``).
    resolve = None not in size
    out = []
    for i, (d, b, s) in enumerate(zip(dims, begin, size)):
        if b is not None and b < 0:
            raise op.shape_error(f"begin[{i}] = {b} must be non-negative")
        if s is not None and s < -1:
            raise op.shape_error(f"size[{i}] = {s} must be -1 or non-negative")
        # begin + size beyond the dimension fails when it runs, as in TensorFlow
        if s == -1:
            out.append(None if d is None or b is None or not resolve else d - b)
        else:
            out.append(s)
    return [TensorShape(out)]


def slice(input_, begin, size, name: str | None = None):
    """The block of `input_` starting at `begin` with extent `size` (-1: to the end).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.slice(tf.zeros([4, 5]), [1, 2], [-1, 2]).shape.as_list()
    [3, 2]
    """
    with op_scope(name, "Slice", (input_, begin, size)) as scope:
        x = convert_to_tensor(input_, name="input")
        b = convert_to_tensor(begin, preferred_dtype=_dtypes.int32, name="begin")
        s = (convert_to_tensor(size, dtype=b.dtype, name="size")
             if not isinstance(size, Tensor) else size)
        return make_tensor("Slice", [x, b, s], name=scope)


# -- StridedSlice ---------------------------------------------------------------------------
@register_op("StridedSlice", attrs={m: 0 for m in _MASKS})
def _strided_slice_shape(op, x, *spec_shapes):
    specs = [_ints(static_elements(t)) for t in op.inputs[1:]]
    lengths = {len(v) for v in specs if v is not None}
    lengths |= {s[0].value for s in spec_shapes if s.ndims == 1 and s[0].value is not None}
    if len(lengths) > 1:
        raise op.shape_error(f"begin, end and strides must have the same length, got "
                             f"lengths {sorted(lengths)}")
    if not lengths or x.ndims is None:
        return [TensorShape(None)]
    n = lengths.pop()
    begin, end, strides = (v if v is not None else [None] * n for v in specs)
    masks = {m: op.attrs[m] for m in _MASKS}
    try:
        out = array_slicing.strided_slice_shape([d.value for d in x.dims], begin, end,
                                                strides, masks)
    except ValueError as e:
        raise op.shape_error(str(e).rstrip(".")) from None
    return [TensorShape(out)]


def strided_slice(input_, begin, end, strides=None, begin_mask: int = 0, end_mask: int = 0,
                  ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0,
                  var=None, name: str | None = None):
    """`input_[begin:end:strides]` per dimension, with TensorFlow's masks: bit i of
    `begin_mask`/`end_mask` ignores `begin[i]`/`end[i]`, `ellipsis_mask` marks an ellipsis,
    `new_axis_mask` inserts a dimension, `shrink_axis_mask` drops one (index `begin[i]`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.strided_slice(tf.zeros([4, 5]), [0, 1], [0, 5], [1, 2],
    ...                  shrink_axis_mask=1).shape.as_list()
    [2]
    """
    attrs = dict(zip(_MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                              shrink_axis_mask)))
    with op_scope(name, "StridedSlice", (input_, begin, end, strides)) as scope:
        x = convert_to_tensor(input_, name="input")
        b = convert_to_tensor(begin, preferred_dtype=_dtypes.int32, name="begin")
        e = (convert_to_tensor(end, dtype=b.dtype, name="end")
             if not isinstance(end, Tensor) else end)
        if strides is None:  # one stride per begin index: a constant if their number is known
            strides = (np.ones(b.shape.as_list(), dtype=b.dtype.as_numpy_dtype)
                       if b.shape.is_fully_defined() else ones_like(b))
        s = (convert_to_tensor(strides, dtype=b.dtype, name="strides")
             if not isinstance(strides, Tensor) else strides)
        return make_tensor("StridedSlice", [x, b, e, s],
                           {k: int(v) for k, v in attrs.items()}, name=scope)


def _check_index(v):
    if v is None or (isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)):
        return v
    if isinstance(v, Tensor) and v.dtype.base_dtype in (_dtypes.int32, _dtypes.int64) and \
            v.shape.ndims in (None, 0):
        return v
    raise TypeError(
        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
        f"tf.int32/tf.int64 tensors are valid indices, got {v!r}")


def _pack_spec(values):
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        big = any(not -(2**31) <= int(v) < 2**31 for v in values)
        return convert_to_tensor(np.asarray(values, np.int64 if big else np.int32),
                                 name="stack")
    return stack(values, name="stack")


def _bound_dtype(*bounds):
    dtypes = {b.dtype.base_dtype for b in bounds if isinstance(b, Tensor)}
    if not dtypes:
        return None
    return _dtypes.int64 if _dtypes.int64 in dtypes else _dtypes.int32


def _bound(v, default: int, dtype):
    if v is not None:
        return v
    return default if dtype is None else convert_to_tensor(default, dtype=dtype)


def _getitem(tensor, key):
    """``tensor[key]`` as one StridedSlice (see the module docstring)."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, k in enumerate(key):
        bit = 1 << i
        if isinstance(k, builtins.slice):
            start, stop, step = (_check_index(k.start), _check_index(k.stop),
                                 _check_index(k.step))
            if start is None:
                masks["begin_mask"] |= bit
            if stop is None:
                masks["end_mask"] |= bit
            # As TensorFlow: beside a tensor bound, a missing one is a constant of the
            # tensors' dtype made before the op's scope (`Const`, packed in `stack`)
            dtype = _bound_dtype(start, stop, step)
            begin.append(_bound(start, 0, dtype))
            end.append(_bound(stop, 0, dtype))
            strides.append(_bound(step, 1, dtype))
        elif k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        else:
            k = _check_index(k)
            masks["shrink_axis_mask"] |= bit
            begin.append(k)
            end.append(k if isinstance(k, Tensor) else int(k) + 1)
            strides.append(1)
    # TensorFlow builds the spec inside the op's scope: `strided_slice/stack`, `stack_1`, ...
    with name_scope(None, "strided_slice", [tensor]) as scope:
        spec = [_pack_spec(begin), _pack_spec(end), _pack_spec(strides)]
        return make_tensor("StridedSlice", [tensor, *spec], masks, name=scope)


install_tensor_operator("__getitem__", _getitem)


@register_constant_evaluator("StridedSlice")
def _eval_strided_slice(op, index):
    masks = {m: op.attrs[m] for m in _MASKS}
    spec = [constant_value(t) for t in op.inputs[1:]]
    if any(v is None for v in spec):
        return None
    v = constant_value(op.inputs[0])
    if v is not None:
        return np.asarray(array_slicing.strided_slice_numpy(np.asarray(v), *spec, **masks))
    elems = static_elements(op.inputs[0]) if op.inputs[0].shape.ndims == 1 else None
    if elems is None:
        return None
    arr = np.empty(len(elems), dtype=object)
    arr[:] = elems
    out = np.asarray(array_slicing.strided_slice_numpy(arr, *spec, **masks), dtype=object)
    # As TensorFlow: of a partly known shape, only a single known dimension is a value.
    if out.ndim != 0 or not isinstance(out[()], int):
        return None
    return out.astype(op.outputs[0].dtype.as_numpy_dtype)


@register_constant_evaluator("Slice")
def _eval_slice(op, index):
    v, b, s = (constant_value(t) for t in op.inputs)
    if v is None or b is None or s is None:
        return None
    v = np.asarray(v)
    idx = tuple(np.s_[int(bi):] if int(si) == -1 else np.s_[int(bi):int(bi) + int(si)]
                for bi, si in zip(b, s))
    return v[idx]


# -- GatherV2, GatherNd, ScatterNd ----------------------------------------------------------
@register_op("GatherV2", attrs={"batch_dims": 0}, cost=OpCost.EXPENSIVE)
def _gather_shape(op, params, indices, axis_shape):
    bd = op.attrs["batch_dims"]
    axis = const_int(op.inputs[2])
    if params.ndims is None or indices.ndims is None:
        return [TensorShape(None)]
    if bd < 0:
        bd += indices.ndims
    if axis is None:
        return [TensorShape([None] * (params.ndims + indices.ndims - 1 - bd))]
    if not -params.ndims <= axis < params.ndims:
        raise op.shape_error(f"axis {axis} is out of range for params of rank {params.ndims}")
    axis = axis + params.ndims if axis < 0 else axis
    if not 0 <= bd <= min(axis, indices.ndims):
        raise op.shape_error(f"batch_dims={op.attrs['batch_dims']} must be in [0, "
                             f"min(axis={axis}, rank(indices)={indices.ndims})]")
    for i in range(bd):
        if not params[i].is_compatible_with(indices[i]):
            raise op.shape_error(f"batch dimension {i} differs: params {params[i]} vs "
                                 f"indices {indices[i]}")
    p, ind = params.dims, indices.dims
    return [TensorShape([*p[:axis], *ind[bd:], *p[axis + 1:]])]


@register_constant_evaluator("GatherV2")
def _eval_gather(op, index):
    if op.attrs["batch_dims"] != 0:
        return None
    p, i, axis = (constant_value(t) for t in op.inputs)
    if p is None or i is None or axis is None:
        return None
    return np.take(np.asarray(p), np.asarray(i), axis=int(axis))


def gather(params, indices, validate_indices=None, name: str | None = None, axis=None,
           batch_dims: int = 0):
    """Elements of `params` along `axis` at `indices` (out-of-range indices are an
    InvalidArgumentError at run time). `batch_dims` leading dimensions are shared.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.gather(tf.zeros([4, 5]), [[0, 2], [1, 3], [3, 3]], axis=1).shape.as_list()
    [4, 3, 2]
    """
    if axis is None:
        axis = batch_dims
    if axis == 0 and batch_dims == 0 and hasattr(params, "sparse_read"):
        return params.sparse_read(indices, name=name)  # a resource variable: ResourceGather
    if axis == 0 and batch_dims == 0 and hasattr(params, "nested_row_splits"):
        return params.gather_rows(indices, name=name)  # a RaggedTensor: RaggedGather
    with op_scope(name, "GatherV2", (params, indices, axis)) as scope:
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
        if not i.dtype.is_integer:
            raise TypeError(f"gather: indices must be int32 or int64, got {i.dtype.name}")
        a = convert_to_tensor(axis, preferred_dtype=_dtypes.int32, name="axis")
        return make_tensor("GatherV2", [p, i, a], {"batch_dims": int(batch_dims)},
                           name=scope)


@register_op("GatherNd", cost=OpCost.EXPENSIVE)
def _gather_nd_shape(op, params, indices):
    if indices.ndims is None:
        return [TensorShape(None)]
    if indices.ndims == 0:
        raise op.shape_error("indices must have rank at least 1")
    m = indices[-1].value
    if m is None or params.ndims is None:
        return [TensorShape(None)]
    if m > params.ndims:
        raise op.shape_error(f"index depth {m} (last dimension of indices) exceeds the rank "
                             f"{params.ndims} of params")
    return [TensorShape(indices.dims[:-1] + params.dims[m:])]


def gather_nd(params, indices, name: str | None = None, batch_dims: int = 0):
    """Slices of `params` addressed by the last dimension of `indices`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.gather_nd(tf.zeros([2, 3, 4]), [[0, 1], [1, 2]]).shape.as_list()
    [2, 4]
    """
    if batch_dims:
        from flowgraph.ops.array_gather_nd_batch import batch_gather_nd

        return batch_gather_nd(params, indices, batch_dims, name=name)
    if getattr(params, "_handle", None) is not None and hasattr(params, "gather_nd"):
        return params.gather_nd(indices, name=name)  # a resource variable: ResourceGatherNd
    with op_scope(name, "GatherNd", (params, indices)) as scope:
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
        return make_tensor("GatherNd", [p, i], name=scope)


@register_op("ScatterNd", dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _scatter_nd_shape(op, indices, updates, shape_shape):
    out = TensorShape(None)
    elems = static_elements(op.inputs[2])
    if elems is not None:
        out = TensorShape([e if isinstance(e, int) and e >= 0 else None for e in elems])
    if indices.ndims is not None and indices[-1].value is not None and out.ndims is not None:
        m = indices[-1].value
        if m > out.ndims:
            raise op.shape_error(f"index depth {m} exceeds the rank of the output shape {out}")
        want = TensorShape(indices.dims[:-1] + out.dims[m:])
        if not updates.is_compatible_with(want):
            raise op.shape_error(f"updates must have shape {want} (indices.shape[:-1] + "
                                 f"shape[{m}:]), got {updates}")
    return [out]


def scatter_nd(indices, updates, shape, name: str | None = None):
    """A zero tensor of `shape` with `updates` added at `indices` (duplicates add up).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.scatter_nd([[1], [3]], [5.0, 6.0], [4]).shape.as_list()
    [4]
    """
    with op_scope(name, "ScatterNd", (indices, updates, shape)) as scope:
        i = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
        u = convert_to_tensor(updates, name="updates")
        s = (convert_to_tensor(shape, dtype=i.dtype, name="shape")
             if not isinstance(shape, Tensor) else shape)
        return make_tensor("ScatterNd", [i, u, s], name=scope)


# -- Where, Select, SelectV2 ----------------------------------------------------------------
@register_op("Where", dtype_fn=fixed_dtype(_dtypes.int64))
def _where_shape(op, cond):
    return [TensorShape([None, cond.ndims])]


@register_op("Select", dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _select_shape(op, cond, x, y):
    try:
        out = x.merge_with(y)
    except ValueError:
        raise op.shape_error(f"x and y must have the same shape, got {x} and {y}") from None
    if cond.ndims is None or cond.ndims == 0 or out.ndims is None:
        return [out]
    if cond.ndims == 1 and out.ndims > 1:
        if not cond[0].is_compatible_with(out[0]):
            raise op.shape_error(f"a vector condition must match the first dimension of x, "
                                 f"got {cond} for x of shape {out}")
        return [out]
    if not cond.is_compatible_with(out):
        raise op.shape_error(f"condition must be a scalar, a vector matching the first "
                             f"dimension of x, or have x's shape {out}; got {cond}")
    return [out.merge_with(cond)]


@register_constant_evaluator("Select")
def _eval_select(op, index):
    c, x, y = (constant_value(t) for t in op.inputs)
    if c is None or x is None or y is None:
        return None
    c, x = np.asarray(c), np.asarray(x)
    if c.ndim == 1 and x.ndim > 1:  # a vector condition picks rows
        c = c.reshape((-1,) + (1,) * (x.ndim - 1))
    return np.where(c, x, np.asarray(y))


@register_op("SelectV2", dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _select_v2_shape(op, cond, x, y):
    try:
        return [broadcast_shape(broadcast_shape(cond, x), y)]
    except ValueError:
        raise op.shape_error(f"cannot broadcast condition {cond}, x {x} and y {y}") from None


not_differentiable("Where")


def _select(op_type, condition, x, y, name, names):
    """`Where` (no `x`, `y`) or `op_type` (Select, SelectV2), Python values converted in
    the op's scope under TensorFlow's argument names."""
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    if x is None:
        with op_scope(name, "Where", (condition,)) as scope:
            c = convert_to_tensor(condition, preferred_dtype=_dtypes.bool, name="condition")
            return make_tensor("Where", [c], name=scope)
    with op_scope(name, op_type, (condition, x, y)) as scope:
        c = convert_to_tensor(condition, preferred_dtype=_dtypes.bool, name="condition")
        a, b = binary_inputs(x, y, op_type, name, names)
        return make_tensor(op_type, [c, a, b], name=scope)


def where(condition, x=None, y=None, name: str | None = None):
    """Without `x`/`y`: the int64 coordinates [N, rank] of the true elements. With them:
    elements of `x` where `condition` holds, else of `y` (same shapes; `condition` may be
    a scalar or a vector over the first dimension).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.where([[True, False]]).dtype.name
    'int64'
    """
    if (h := handler_for("where", condition, x, y)) is not None:  # RaggedTensors
        return h(condition, x, y, name)
    return _select("Select", condition, x, y, name, ("t", "e"))


def where_v2(condition, x=None, y=None, name: str | None = None):
    """Like `where`, but `condition`, `x` and `y` broadcast against each other.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.where_v2([True, False], tf.zeros([3, 2]), 1.0).shape.as_list()
    [3, 2]
    """
    if (h := handler_for("where", condition, x, y)) is not None:
        return h(condition, x, y, name)
    return _select("SelectV2", condition, x, y, name, ("t", "e"))


# -- boolean_mask ---------------------------------------------------------------------------
def boolean_mask(tensor, mask, name: str = "boolean_mask", axis=None):
    """The entries of `tensor` (from dimension `axis` on) where the boolean `mask` is true,
    flattened into one dimension.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.boolean_mask(tf.zeros([3, 4, 5]), tf.ones([3, 4], tf.bool)).shape.as_list()
    [None, 5]
    """
    from flowgraph.ops.math_reduce import reduce_prod

    # TensorFlow's graph, all inside one `boolean_mask` scope: the masked dimensions
    # collapsed by a Reshape to their product, the flattened mask's Where, a Squeeze and
    # a GatherV2 (the result).
    with name_scope(name, "boolean_mask", [tensor, mask]):
        x = convert_to_tensor(tensor, name="tensor")
        m = convert_to_tensor(mask, name="mask")
        k = m.shape.ndims
        if k is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None. E.g. shape=[None] is ok, but shape=None is "
                             "not.")
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        axis = 0 if axis is None else int(axis)
        r = x.shape.ndims
        if r is not None:
            if axis < 0:
                axis += r
            if axis + k > r:
                raise ValueError(f"boolean_mask: a mask of rank {k} at axis {axis} needs a "
                                 f"tensor of rank at least {axis + k}, got shape {x.shape}")
            part = x.shape[axis:axis + k]
            if not part.is_compatible_with(m.shape):
                raise ValueError(f"Shapes {part} and {m.shape} are incompatible: the mask "
                                 f"must match dimensions {axis}..{axis + k - 1} of the tensor")
        lead = reduce_prod(shape(x)[axis:axis + k], [0])
        flat = reshape(x, concat([shape(x)[:axis], [lead], shape(x)[axis + k:]], 0))
        if r is not None:
            flat.set_shape(x.shape[:axis].concatenate([x.shape[axis:axis + k].num_elements()])
                           .concatenate(x.shape[axis + k:]))
        idx = squeeze(where(reshape(m, [-1])), axis=[1])
        return gather(flat, idx, axis=axis)


# -- IndexedSlices to dense ----------------------------------------------------------------
def indexed_slices_to_tensor(value: IndexedSlices, dtype=None, name=None,
                             as_ref: bool = False) -> Tensor:
    """The dense tensor of `value` (duplicate indices add up), with TF's size warning."""
    if dtype is not None and not _dtypes.as_dtype(dtype).base_dtype == value.dtype.base_dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for "
            f"IndexedSlices with dtype {value.dtype.name}: {value!r}")
    if value.dense_shape is None:
        raise ValueError(
            "Tensor conversion requested for IndexedSlices for argument `value` without "
            f"dense_shape: {value!s}. "
            "Pass dense_shape to IndexedSlices to allow converting it to a dense tensor.")
    # As TensorFlow: a size warning only for a known, large shape (none for an unknown
    # one), and the rows summed by an UnsortedSegmentSum over dense_shape[0] segments.
    static = constant_value(value.dense_shape)
    if static is not None:
        n = int(np.prod(np.asarray(static, dtype=np.int64)))
        if n >= LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(
                f"Converting sparse IndexedSlices to a dense Tensor with {n} elements. "
                "This may consume a large amount of memory.", UserWarning, stacklevel=3)
    with graph_for([value]).as_default():
        rows = value.dense_shape[0]
        return make_tensor("UnsortedSegmentSum", [value.values, value.indices, rows],
                           name=name or "UnsortedSegmentSum")


# IndexedSlices -> dense Tensor: registered here, in the op library, since it builds ops.
register_tensor_conversion_function(IndexedSlices, indexed_slices_to_tensor)
