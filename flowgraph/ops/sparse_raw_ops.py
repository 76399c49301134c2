"""TensorFlow's SparseTensor op types behind `tf.sparse.add`, `tf.sparse.concat`,
`tf.sparse.slice`, `tf.sparse.split`, `tf.sparse.softmax`, `tf.sparse.reduce_max`,
`tf.sparse.maximum`/`minimum`, ``sparse * dense``, `tf.sparse.cross` and
`tf.io.serialize_sparse`, with the gradients TensorFlow registers for them
(``SparseAddGrad``, ``SparseSliceGrad``, the composed gradients of the element-wise ops
and the softmax); the sparse segment reductions' gradient ops; and the session's maps of
SparseTensors by handle that TF1's input queues use.

A SparseTensor enters each op as its three tensors (indices, values, dense_shape) and a
sparse result leaves as its parts, so a graph TensorFlow wrote with these ops imports
as it is. Kernels: `flowgraph/backends/cpu/kernels_sparse_raw.py`.

    SparseAdd(a=[[0,0]: 1, [1,2]: 2], b=[[1,2]: 10, [1,0]: 5], thresh=0)
      -> [[0,0]: 1, [1,0]: 5, [1,2]: 12]

Example
-------
>>> import flowgraph as tf
>>> a = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
>>> s = tf.sparse.add(a, a)
>>> s.values.op.type, tf.Session().run(s.values).tolist()
('SparseAdd', [2.0, 4.0])
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.sparse_ops import _sparse_reduce_sum_shape

__all__: list[str] = []

_I64 = _dtypes.int64


def _rank(indices: TensorShape, shape: TensorShape | None = None):
    r = indices[1].value if indices.ndims == 2 else None
    if r is None and shape is not None and shape.ndims == 1:
        r = shape[0].value
    return r


def _nnz(indices: TensorShape):
    return indices[0].value if indices.ndims else None


def _values_dtype(index: int):
    return lambda op: [op.inputs[index].dtype.base_dtype]


def _sparse_out(index: int):
    """dtype_fn of an op returning (indices, values, shape) with values like input
    `index`."""
    return lambda op: [_I64, op.inputs[index].dtype.base_dtype, _I64]


# -- two SparseTensors -------------------------------------------------------------------
@register_op("SparseAdd", num_outputs=3, dtype_fn=_sparse_out(1))
def _sparse_add_shape(op, a_indices, a_values, a_shape, b_indices, b_values, b_shape,
                      thresh):
    if thresh.ndims not in (None, 0):
        raise op.shape_error(f"thresh must be a scalar, got shape {thresh}")
    rank = _rank(a_indices, a_shape) or _rank(b_indices, b_shape)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@register_op("SparseAddGrad", num_outputs=2, dtype_fn=lambda op: [
    op.inputs[0].dtype.base_dtype] * 2)
def _sparse_add_grad_shape(op, grad, a_indices, b_indices, sum_indices):
    return [TensorShape([_nnz(a_indices)]), TensorShape([_nnz(b_indices)])]


def _pair_shape(op, a_indices, a_values, a_shape, b_indices, b_values, b_shape):
    return [TensorShape([None, None]), TensorShape([None])]  # TF leaves the rank unknown


for _name in ("SparseSparseMaximum", "SparseSparseMinimum"):
    register_op(_name, num_outputs=2, dtype_fn=lambda op: [
        _I64, op.inputs[1].dtype.base_dtype])(_pair_shape)


@register_gradient("SparseAdd")
def _sparse_add_grad(op, d_indices, d_values, d_shape):
    a_indices, _, _, b_indices = op.inputs[:4]
    g = make_op("SparseAddGrad", [d_values, a_indices, b_indices, op.outputs[0]])
    return [None, g.outputs[0], None, None, g.outputs[1], None, None]


def _extremum_grad(op, d_indices, d_values):
    # As TensorFlow, which registers this gradient only to say that it has none.
    raise NotImplementedError(f"Gradient for {op.type} is not implemented.")


register_gradient("SparseSparseMaximum")(_extremum_grad)
register_gradient("SparseSparseMinimum")(_extremum_grad)


# -- a SparseTensor and a dense tensor ---------------------------------------------------
@register_op("SparseTensorDenseAdd", dtype_fn=_values_dtype(3))
def _sparse_dense_add_shape(op, a_indices, a_values, a_shape, b):
    # b's shape (TensorFlow checks a_shape against it when the op runs)
    return [b]


def _cwise_shape(op, sp_indices, sp_values, sp_shape, dense):
    return [TensorShape([_nnz(sp_indices) if _nnz(sp_indices) is not None else
                         (sp_values[0].value if sp_values.ndims == 1 else None)])]


for _name in ("SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"):
    register_op(_name, dtype_fn=_values_dtype(1))(_cwise_shape)


@register_gradient("SparseTensorDenseAdd")
def _sparse_dense_add_grad(op, grad):
    from flowgraph.ops import array_ops

    indices = op.inputs[0]
    if indices.dtype.base_dtype != _I64:
        from flowgraph.ops.math_ops import cast

        indices = cast(indices, _I64)
    return [None, array_ops.gather_nd(grad, indices), None, grad]


def _cwise_mul_div_grad(op, grad, is_mul: bool):
    """As TensorFlow: each entry's index into the dense operand is its index divided by
    the broadcast factor of every dimension (0 on a broadcast one), with the sparse
    tensor's extra leading dimensions dropped; the dense operand's gradient adds the
    entries' contributions at those indices (`SparseTensorDenseAdd` onto zeros)."""
    from flowgraph.ops import array_ops, math_ops

    x_indices, x_values, x_shape, y = op.inputs
    y_shape = math_ops.cast(array_ops.shape(y), _I64)
    added = array_ops.expand_dims(array_ops.size(x_shape) - array_ops.size(y_shape), 0)
    augmented = array_ops.concat([array_ops.ones(added, _I64), y_shape], 0)
    scaled = math_ops.floordiv(x_indices, math_ops.floordiv(x_shape, augmented))
    scaled = array_ops.slice(scaled, array_ops.concat([[0], added], 0), [-1, -1])
    at = array_ops.gather_nd(y, scaled)
    if is_mul:
        dx, dy_values = grad * at, grad * x_values
    else:
        dx, dy_values = grad / at, grad * (-x_values / math_ops.square(at))
    dy = make_tensor("SparseTensorDenseAdd", [scaled, dy_values, y_shape,
                                              array_ops.zeros_like(y)])
    return [None, dx, None, dy]


@register_gradient("SparseDenseCwiseMul")
def _cwise_mul_grad(op, grad):
    return _cwise_mul_div_grad(op, grad, True)


@register_gradient("SparseDenseCwiseDiv")
def _cwise_div_grad(op, grad):
    return _cwise_mul_div_grad(op, grad, False)


@register_gradient("SparseDenseCwiseAdd")
def _cwise_add_grad(op, grad):
    raise NotImplementedError("Gradient for SparseDenseCwiseAdd is not implemented.")


# -- concat, slice, split ----------------------------------------------------------------
def _concat_count(op) -> int:
    return int(op.attrs["N"])


@register_op("SparseConcat", attrs={"concat_dim": 0, "N": 2}, num_outputs=3,
             dtype_fn=lambda op: [_I64, op.inputs[_concat_count(op)].dtype.base_dtype, _I64])
def _sparse_concat_shape(op, *shapes):
    n = _concat_count(op)
    indices = shapes[:n]
    rank = next((r for r in (_rank(s) for s in indices + shapes[2 * n:]) if r is not None),
                None)
    if rank is None:
        rank = next((s[0].value for s in shapes[2 * n:] if s.ndims == 1), None)
    counts = [_nnz(s) for s in indices]
    total = None if any(c is None for c in counts) else sum(counts)
    return [TensorShape([total, rank]), TensorShape([total]), TensorShape([rank])]


@register_op("SparseSlice", num_outputs=3, dtype_fn=_sparse_out(1))
def _sparse_slice_shape(op, indices, values, shape, start, size):
    rank = _rank(indices, shape)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@register_op("SparseSliceGrad", dtype_fn=_values_dtype(0))
def _sparse_slice_grad_shape(op, grad, input_indices, input_start, output_indices):
    return [TensorShape([_nnz(input_indices)])]


@register_gradient("SparseSlice")
def _sparse_slice_grad(op, d_indices, d_values, d_shape):
    indices, _, _, start, _ = op.inputs
    val_grad = make_tensor("SparseSliceGrad", [d_values, indices, start, op.outputs[0]])
    return [None, val_grad, None, None, None]


@register_op("SparseSplit", attrs={"num_split": 1},
             num_outputs=lambda op: 3 * int(op.attrs["num_split"]),
             dtype_fn=lambda op: [_I64] * op.attrs["num_split"]
             + [op.inputs[2].dtype.base_dtype] * op.attrs["num_split"]
             + [_I64] * op.attrs["num_split"])
def _sparse_split_shape(op, split_dim, indices, values, shape):
    k = int(op.attrs["num_split"])
    rank = _rank(indices, shape)
    return ([TensorShape([None, rank])] * k + [TensorShape([None])] * k
            + [TensorShape([rank])] * k)


# -- softmax, reductions -----------------------------------------------------------------
@register_op("SparseSoftmax", dtype_fn=_values_dtype(1))
def _sparse_softmax_shape(op, sp_indices, sp_values, sp_shape):
    if not op.inputs[1].dtype.is_floating:
        raise op.shape_error(f"sp_values must be floating point, got "
                             f"{op.inputs[1].dtype.name}")
    return [TensorShape([_nnz(sp_indices)]).merge_with(sp_values.with_rank(1))
            if sp_values.ndims is not None else TensorShape([_nnz(sp_indices)])]


@register_gradient("SparseSoftmax")
def _sparse_softmax_grad(op, grad):
    """``dx = (grad - sum over the row of grad * y) * y`` for ``y`` the softmax."""
    from flowgraph.ops.sparse_ops import sparse_reduce_sum

    indices, _, shape = op.inputs
    y = op.outputs[0]
    from flowgraph.framework.sparse_tensor import SparseTensor

    row_sum = sparse_reduce_sum(SparseTensor(indices, y * grad, shape), axis=[-1],
                                keepdims=True)
    shifted = make_tensor("SparseDenseCwiseAdd", [indices, grad, shape, -row_sum])
    return [None, shifted * y, None]


register_op("SparseReduceMax", attrs={"keep_dims": False},
            dtype_fn=_values_dtype(1))(_sparse_reduce_sum_shape)


def _reduce_sparse_shape(op, indices, values, shape, axes):
    # TensorFlow registers no shape function beyond "unknown" for these ops, so
    # even the rank of the result stays unknown.
    return [TensorShape(None)] * 3


for _name in ("SparseReduceMaxSparse", "SparseReduceSumSparse"):
    register_op(_name, attrs={"keep_dims": False}, num_outputs=3,
                dtype_fn=_sparse_out(1))(_reduce_sparse_shape)


# -- serialization -----------------------------------------------------------------------
@register_op("SerializeSparse", attrs={"out_type": _dtypes.string},
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["out_type"])])
def _serialize_sparse_shape(op, indices, values, shape):
    return [TensorShape([3])]


@register_op("DeserializeSparse", attrs={"dtype": None}, num_outputs=3,
             dtype_fn=lambda op: [_I64, _dtypes.as_dtype(op.attrs["dtype"]), _I64])
def _deserialize_sparse_shape(op, serialized):
    if serialized.ndims is not None and serialized.ndims and \
            not serialized[-1].is_compatible_with(3):
        raise op.shape_error(f"serialized_sparse must end in a dimension of 3, got "
                             f"{serialized}")
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


# -- gradients of the sparse segment reductions ---------------------------------------
def _segment_grad_shape(op, grad, indices, segment_ids, dim0):
    if not op.inputs[0].dtype.is_floating:
        raise op.shape_error(f"grad must be floating point, got {op.inputs[0].dtype.name}")
    if indices.ndims not in (None, 1) or segment_ids.ndims not in (None, 1):
        raise op.shape_error(f"indices and segment_ids must be vectors, got {indices} and "
                             f"{segment_ids}")
    inner = TensorShape(None) if grad.ndims is None else grad[1:]
    if op.type.endswith("V2"):
        return [TensorShape([None]).concatenate(inner), TensorShape([None])]
    n = constant_value(op.inputs[3])
    return [TensorShape([None if n is None else int(n)]).concatenate(inner)]


for _kind in ("Sum", "Mean", "SqrtN"):
    register_op(f"SparseSegment{_kind}Grad", dtype_fn=_values_dtype(0))(_segment_grad_shape)
    register_op(f"SparseSegment{_kind}GradV2", num_outputs=2, dtype_fn=lambda op: [
        op.inputs[0].dtype.base_dtype, op.inputs[1].dtype.base_dtype])(_segment_grad_shape)


# -- string crosses with a separator (tf.sparse.cross) ---------------------------------
@register_op("SparseCrossV2", attrs={"N": 0, "sparse_types": [], "dense_types": []},
             num_outputs=3, dtype_fn=lambda op: [_I64, _dtypes.string, _I64])
def _sparse_cross_v2_shape(op, *shapes):
    if shapes[-1].ndims not in (None, 0):
        raise op.shape_error(f"sep must be a scalar string, got shape {shapes[-1]}")
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


# -- a session's SparseTensors by handle (TF1's input queues batch SparseTensors so) ----
_MAP_ATTRS = {"container": "", "shared_name": ""}


@register_op("AddSparseToTensorsMap", attrs={**_MAP_ATTRS, "T": None},
             dtype_fn=lambda op: [_I64], stateful=True)
def _add_sparse_to_map_shape(op, indices, values, shape):
    return [TensorShape([])]


@register_op("AddManySparseToTensorsMap", attrs={**_MAP_ATTRS, "T": None},
             dtype_fn=lambda op: [_I64], stateful=True)
def _add_many_sparse_to_map_shape(op, indices, values, shape):
    if shape.ndims == 1 and shape[0].value is not None and shape[0].value < 2:
        raise op.shape_error(f"the SparseTensor must have rank > 1 (a minibatch), got a "
                             f"dense shape of {shape[0].value} elements")
    rows = constant_value(op.inputs[2])
    return [TensorShape([None if rows is None else int(rows[0])])]


@register_op("TakeManySparseFromTensorsMap", attrs={**_MAP_ATTRS, "dtype": None},
             num_outputs=3, stateful=True,
             dtype_fn=lambda op: [_I64, _dtypes.as_dtype(op.attrs["dtype"]), _I64])
def _take_many_sparse_shape(op, handles):
    if handles.ndims not in (None, 1):
        raise op.shape_error(f"sparse_handles must be a vector, got shape {handles}")
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


not_differentiable("SparseAddGrad", "SparseConcat")
# TensorFlow registers no gradient for SparseCrossV2 either.
# TensorFlow registers no gradient for these (tf.gradients raises LookupError):
# SparseSliceGrad, SparseSplit, SparseReduceMax, SparseReduceMaxSparse,
# SparseReduceSumSparse, SerializeSparse, DeserializeSparse, SparseSegment*Grad(V2),
# AddSparseToTensorsMap, AddManySparseToTensorsMap, TakeManySparseFromTensorsMap.
