"""``tf.sparse.bincount``, ``tf.sparse.expand_dims``, ``tf.sparse.eye`` and the bincount
op types of TensorFlow's graphs: ``DenseBincount``, ``SparseBincount``,
``RaggedBincount`` (dense counts of a given size) and ``DenseCountSparseOutput``,
``SparseCountSparseOutput``, ``RaggedCountSparseOutput`` (sparse counts, the ops behind
``tf.sparse.bincount``); kernels in `flowgraph/backends/cpu/kernels_sparse_bincount.py`.

Counting runs over the whole input (``axis=0``) or per row of a rank-2 input
(``axis=-1``); a count's bin is the value, and values at or past ``maxlength`` are
dropped::

    values [[1, 2, 2], [0, 5, 1]], axis=-1
      row 0: bins 1, 2 -> counts 1, 2    indices [[0, 1], [0, 2], [1, 0], [1, 1], [1, 5]]
      row 1: bins 0, 1, 5 -> 1, 1, 1     dense_shape [2, 6]

Example
-------
>>> import flowgraph as tf
>>> counts = tf.sparse.bincount([[1, 2, 2], [0, 5, 1]], axis=-1)
>>> tf.Session().run(counts).values.tolist()
[1, 2, 1, 1, 1]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_op
from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.op_util import make_op
from flowgraph.ops.ragged_tensor import RaggedTensor

__all__ = ["sparse_bincount", "sparse_expand_dims", "sparse_eye"]

_INTS = (_dtypes.int32, _dtypes.int64)


def _weights_dtype(op):
    return [op.inputs[-1].dtype.base_dtype]


def _dense_size(op, size_input: int):
    n = constant_value(op.inputs[size_input])
    return None if n is None else int(n)


@register_op("DenseBincount", attrs={"binary_output": False, "Tidx": _dtypes.int32,
                                     "T": _dtypes.float32}, dtype_fn=_weights_dtype)
def _dense_bincount_shape(op, x, size, weights):
    n = _dense_size(op, 1)
    if x.ndims == 1:
        return [TensorShape([n])]
    if x.ndims == 2:
        return [TensorShape([x.dims[0].value, n])]
    if x.ndims is None:
        return [TensorShape(None)]
    raise op.shape_error(f"input must have rank 1 or 2, got shape {x}")


@register_op("SparseBincount", attrs={"binary_output": False, "Tidx": _dtypes.int32,
                                      "T": _dtypes.float32}, dtype_fn=_weights_dtype)
def _sparse_bincount_shape(op, indices, values, dense_shape, size, weights):
    n = _dense_size(op, 3)
    rank = dense_shape.dims[0].value if dense_shape.ndims == 1 else None
    return [TensorShape(None if rank is None else ([n] if rank == 1 else [None, n]))]


@register_op("RaggedBincount", attrs={"binary_output": False, "Tidx": _dtypes.int32,
                                      "T": _dtypes.float32}, dtype_fn=_weights_dtype)
def _ragged_bincount_shape(op, splits, values, size, weights):
    rows = splits.dims[0].value if splits.ndims == 1 else None
    return [TensorShape([None if rows is None else rows - 1, _dense_size(op, 2)])]


_COUNT_ATTRS = {"minlength": -1, "maxlength": -1, "binary_output": False,
                "T": _dtypes.int32, "output_type": _dtypes.int32}


def _count_dtypes(op):
    return [_dtypes.int64, op.inputs[-1].dtype.base_dtype, _dtypes.int64]


def _count_shapes(rank):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@register_op("DenseCountSparseOutput", attrs=_COUNT_ATTRS, num_outputs=3,
             dtype_fn=_count_dtypes)
def _dense_count_shape(op, values, weights):
    return _count_shapes(values.ndims)


@register_op("SparseCountSparseOutput", attrs=_COUNT_ATTRS, num_outputs=3,
             dtype_fn=_count_dtypes)
def _sparse_count_shape(op, indices, values, dense_shape, weights):
    return _count_shapes(dense_shape.dims[0].value if dense_shape.ndims == 1 else None)


@register_op("RaggedCountSparseOutput", attrs=_COUNT_ATTRS, num_outputs=3,
             dtype_fn=_count_dtypes)
def _ragged_count_shape(op, splits, values, weights):
    return _count_shapes(2)


# Left without a gradient, as TensorFlow leaves the bincount and count ops:
# tf.gradients raises LookupError when a gradient reaches one.


def _int_values(t, what: str):
    if t.dtype.base_dtype not in _INTS:
        raise TypeError(f"Value passed to parameter '{what}' has DataType "
                        f"{t.dtype.base_dtype.name} not in list of allowed values: int32, "
                        "int64")
    return t


def _weights_for(weights, like, what: str):
    if weights is None:
        return _a.zeros([0], like.dtype.base_dtype)
    if isinstance(weights, RaggedTensor):
        return weights.flat_values
    if isinstance(weights, (SparseTensor, SparseTensorValue)):
        return convert_to_tensor(weights.values, name="weights")
    return _a.reshape(convert_to_tensor(weights, name="weights"), [-1]) if what == "flat" \
        else convert_to_tensor(weights, name="weights")


def sparse_bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
                    binary_output=False, name=None):
    """Counts of the non-negative int `values` (a Tensor, SparseTensor or RaggedTensor)
    as a `SparseTensor`: over everything (``axis=0``), or per row of a rank-2 input
    (``axis=-1``, the counts' indices are ``[row, value]``).

    `weights` (same structure as `values`) adds its entry instead of 1 and sets the
    output dtype (else the dtype of `values`); `binary_output` counts presence (1).
    The last dimension of the result is ``max(values) + 1``, at least `minlength` and at
    most `maxlength` (larger values are dropped).

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.Session().run(tf.sparse.bincount([1, 1, 3], minlength=5))
    >>> c.indices.tolist(), c.values.tolist(), c.dense_shape.tolist()
    ([[1], [3]], [2, 1], [5])
    """
    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are "
                         "currently supported.")
    attrs = {"minlength": -1 if minlength is None else int(minlength),
             "maxlength": -1 if maxlength is None else int(maxlength),
             "binary_output": bool(binary_output)}
    with name_scope(name, "count", [values, weights]):
        if isinstance(values, SparseTensorValue):
            values = SparseTensor(values.indices, values.values, values.dense_shape)
        if isinstance(values, RaggedTensor):
            flat = _int_values(values.flat_values, "values")
            w = _weights_for(weights, flat, "")
            if axis == 0:
                inputs, op_type = [flat, w], "DenseCountSparseOutput"
            else:
                splits = values.row_splits
                if splits.dtype.base_dtype != _dtypes.int64:
                    splits = _m.cast(splits, _dtypes.int64)
                inputs, op_type = [splits, flat, w], "RaggedCountSparseOutput"
        elif isinstance(values, SparseTensor):
            vals = _int_values(values.values, "values")
            w = _weights_for(weights, vals, "")
            if axis == 0:
                inputs, op_type = [vals, w], "DenseCountSparseOutput"
            else:
                inputs = [values.indices, vals, values.dense_shape, w]
                op_type = "SparseCountSparseOutput"
        else:
            dense = _int_values(convert_to_tensor(values, name="values"), "values")
            if axis == 0:
                dense = _a.reshape(dense, [-1])
                w = _weights_for(weights, dense, "flat")
            else:
                w = _weights_for(weights, dense, "")
            inputs, op_type = [dense, w], "DenseCountSparseOutput"
        attrs["T"] = inputs[-2].dtype.base_dtype
        attrs["output_type"] = inputs[-1].dtype.base_dtype
        op = make_op(op_type, inputs, attrs, name=op_type)
        return SparseTensor(*op.outputs)


def sparse_expand_dims(sp_input, axis=None, name=None):
    """`sp_input` with a new dimension of size 1 at `axis` (default -1, the end).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 1], [1, 2]], [1.0, 2.0], [2, 3])
    >>> out = tf.Session().run(tf.sparse.expand_dims(sp, 1))
    >>> out.indices.tolist(), out.dense_shape.tolist()
    ([[0, 0, 1], [1, 0, 2]], [2, 1, 3])
    """
    if isinstance(sp_input, SparseTensorValue):
        sp_input = SparseTensor(sp_input.indices, sp_input.values, sp_input.dense_shape)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"tf.sparse.expand_dims: sp_input must be a SparseTensor, got "
                        f"{type(sp_input).__name__}")
    axis = -1 if axis is None else int(axis)
    rank = sp_input.dense_shape.shape.dims[0].value if sp_input.dense_shape.shape.ndims \
        else None
    if rank is not None and not -rank - 1 <= axis <= rank:
        raise ValueError(f"tf.sparse.expand_dims: axis {axis} is out of range for a "
                         f"SparseTensor of rank {rank}; use -{rank + 1} <= axis <= {rank}")
    with name_scope(name, "expand_dims", [sp_input]):
        # As TensorFlow: the position is a tensor (``where_v2``) and the pieces are
        # ``Slice``s, so the new dense shape has no constant value (shape ``(?, ?, 1)``).
        if rank is None:
            rank = _a.shape(sp_input.dense_shape)[0]
        pos = convert_to_tensor(axis, name="axis", dtype=_dtypes.int32)
        pos = _a.where_v2(pos >= 0, pos, pos + rank + 1)
        idx, shp = sp_input.indices, sp_input.dense_shape
        column = _a.zeros([_a.shape(idx)[0], 1], dtype=_dtypes.int64)
        indices = _a.concat([_a.slice(idx, [0, 0], [-1, pos]), column,
                             _a.slice(idx, [0, pos], [-1, -1])], axis=1)
        before, after = _a.slice(shp, [0], [pos]), _a.slice(shp, [pos], [-1])
        one = convert_to_tensor([1], name="new_shape", dtype=_dtypes.int64)
        out = SparseTensor(indices, sp_input.values, _a.concat([before, one, after], axis=0))
        if isinstance(rank, int):
            # TensorFlow's shape inference folds the position, so only the rank and the new
            # dimension are known.
            at = axis + rank + 1 if axis < 0 else axis
            out.set_shape([None] * at + [1] + [None] * (rank - at))
        return out


def sparse_eye(num_rows, num_columns=None, dtype=_dtypes.float32, name=None):
    """A `SparseTensor` `[num_rows, num_columns]` with ones on the diagonal.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.sparse.eye(2, 3)).indices.tolist()
    [[0, 0], [1, 1]]
    """
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = _m.cast(convert_to_tensor(num_rows, name="num_rows"), _dtypes.int64)
        cols = rows if num_columns is None else \
            _m.cast(convert_to_tensor(num_columns, name="num_columns"), _dtypes.int64)
        diag = _a.range(_m.minimum(rows, cols))
        indices = _a.stack([diag, diag], axis=1)
        values = _a.ones_like(diag, dtype=_dtypes.as_dtype(dtype))
        return SparseTensor(indices, values, _a.stack([rows, cols]))

