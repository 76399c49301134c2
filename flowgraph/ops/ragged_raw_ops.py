"""TensorFlow's ragged op types: ``RaggedTensorToSparse`` and ``RaggedTensorToTensor``
(what `RaggedTensor.to_sparse` and `RaggedTensor.to_tensor` emit, at any ragged rank)
``RaggedGather`` (`tf.gather` of a ragged tensor's rows) and ``RaggedCross``
(`tf.ragged.cross`, `cross_hashed`), with TensorFlow's gradients (to the flat values,
and to the default value of the padding).

    RaggedTensorToTensor(shape=-1, values=[1, 2, 3], default=0,
                         ROW_SPLITS=[0, 2, 2, 3])  ->  [[1, 2], [0, 0], [3, 0]]

Kernels: `flowgraph/backends/cpu/kernels_ragged_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> rt = tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 2, 3])
>>> t = rt.to_tensor()
>>> t.op.type, tf.Session().run(t).tolist()
('RaggedTensorToTensor', [[1, 2], [0, 0], [3, 0]])
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op, make_tensor

__all__: list[str] = []


@register_op("RaggedTensorToSparse", attrs={"RAGGED_RANK": 1}, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.int64, op.inputs[-1].dtype.base_dtype,
                                  _dtypes.int64])
def _to_sparse_shape(op, *shapes):
    values = shapes[-1]
    rank = None if values.ndims is None else op.attrs["RAGGED_RANK"] + values.ndims
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@register_op("RaggedTensorToTensor", attrs={"row_partition_types": [],
                                            "num_row_partition_tensors": 1},
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _to_tensor_shape(op, shape, values, default_value, *partitions):
    types = [t.decode() if isinstance(t, bytes) else t for t in op.attrs["row_partition_types"]]
    ragged = sum(1 for t in types if t != "FIRST_DIM_SIZE")
    if values.ndims is None:
        return [TensorShape(None)]
    if default_value.ndims is not None and values.ndims and \
            default_value.ndims >= values.ndims:
        raise op.shape_error(f"default_value.shape={default_value} and "
                             f"rt_input.flat_values.shape={values} are incompatible: "
                             "default_value.rank must be less than "
                             "rt_input.flat_values.rank")
    dims = [None] * (ragged + 1) + values.dims[1:]
    if types and types[0] == "ROW_SPLITS" and partitions[0].ndims == 1 and \
            partitions[0][0].value is not None:
        dims[0] = partitions[0][0].value - 1
    elif types and types[0] == "FIRST_DIM_SIZE":
        first = constant_value(op.inputs[3])
        dims[0] = None if first is None else int(first)
    want = constant_value(op.inputs[0])
    if want is not None and want.ndim == 1 and want.size == len(dims):
        dims = [d if int(w) < 0 else int(w) for d, w in zip(dims, want.tolist(), strict=True)]
    return [TensorShape(dims)]


def _gather_out_count(op) -> int:
    return int(op.attrs["OUTPUT_RAGGED_RANK"]) + 1


@register_op("RaggedGather", attrs={"PARAMS_RAGGED_RANK": 1, "OUTPUT_RAGGED_RANK": 1},
             num_outputs=_gather_out_count,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype] * (
                 _gather_out_count(op) - 1) + [op.inputs[-2].dtype.base_dtype])
def _ragged_gather_shape(op, *shapes):
    n_params = op.attrs["PARAMS_RAGGED_RANK"]
    out = op.attrs["OUTPUT_RAGGED_RANK"]
    indices = shapes[-1]
    if indices.ndims is not None and indices.ndims + n_params - 1 != out:
        raise op.shape_error(f"OUTPUT_RAGGED_RANK={out} must be rank(indices) "
                             f"({indices.ndims}) + PARAMS_RAGGED_RANK ({n_params}) - 1")
    values = shapes[-2]
    inner = TensorShape(None) if values.ndims is None else values[1:]
    return [TensorShape([None])] * out + [TensorShape([None]).concatenate(inner)]


@register_gradient("RaggedGather")
def _ragged_gather_grad(op, *grads):
    """As TensorFlow: the flat values of each gathered row are a range of the params'
    flat values; their gradients go back there (`IndexedSlices`)."""
    from flowgraph.ops import array_ops

    n = op.attrs["PARAMS_RAGGED_RANK"]
    splits, values, indices = op.inputs[:n], op.inputs[n], op.inputs[n + 1]
    combined = splits[0]
    for row_splits in splits[1:]:
        combined = array_ops.gather(row_splits, combined)
    flat = array_ops.reshape(indices, [-1])
    starts = array_ops.gather(combined, flat)
    limits = array_ops.gather(combined[1:], flat)
    positions = make_op("RaggedRange", [starts, limits, array_ops.ones_like(starts)],
                        {"T": starts.dtype.base_dtype,
                         "Tsplits": _dtypes.int64}).outputs[1]
    grad = IndexedSlices(grads[-1], positions, array_ops.shape(values))
    return [None] * n + [grad, None]


# TensorFlow registers no gradient for RaggedCross (tf.gradients raises LookupError).


@register_op("RaggedCross", attrs={
    "Nsparse": 0, "input_order": "", "hashed_output": False, "num_buckets": 0, "hash_key": 0,
    "ragged_values_types": [], "ragged_splits_types": [], "sparse_values_types": [],
    "dense_types": [], "out_values_type": _dtypes.string,
    "out_row_splits_type": _dtypes.int64}, num_outputs=2,
    dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["out_values_type"]),
                         _dtypes.as_dtype(op.attrs["out_row_splits_type"])])
def _ragged_cross_shape(op, *shapes):
    order = op.attrs["input_order"]
    order = order.decode() if isinstance(order, bytes) else order
    if set(order) - set("RSD") or order.count("S") != int(op.attrs["Nsparse"]):
        raise op.shape_error(f"input_order {order!r} must name each input once, as R, S or "
                             f"D, with Nsparse={op.attrs['Nsparse']} S")
    return [TensorShape([None]), TensorShape([None])]


@register_gradient("RaggedTensorToSparse")
def _to_sparse_grad(op, d_indices, d_values, d_shape):
    from flowgraph.ops import array_ops

    values = op.inputs[-1]
    return [None] * (len(op.inputs) - 1) + [
        array_ops.reshape(d_values, array_ops.shape(values))]


@register_gradient("RaggedTensorToTensor")
def _to_tensor_grad(op, grad):
    """As TensorFlow: the same conversion of the values' positions (-1 for padding)
    says where each output came from; the values get the gradient at their positions
    (`IndexedSlices`), the default value the rest, summed."""
    from flowgraph.ops import array_ops, math_ops, math_reduce

    values, default = op.inputs[1], op.inputs[2]
    partitions = list(op.inputs[3:])
    types = op.attrs["row_partition_types"]
    ragged = sum(1 for t in types if (t.decode() if isinstance(t, bytes) else t)
                 != "FIRST_DIM_SIZE")
    values_shape = array_ops.shape(values)
    positions = make_tensor("RaggedTensorToTensor", [
        array_ops.shape(grad)[:1 + ragged], array_ops.range(values_shape[0]),
        constant(-1), *partitions], {
            "row_partition_types": list(types), "num_row_partition_tensors": len(partitions)})
    mask = math_ops.not_equal(positions, -1)
    values_grad = IndexedSlices(array_ops.boolean_mask(grad, mask),
                                array_ops.boolean_mask(positions, mask), values_shape)
    rest = array_ops.boolean_mask(grad, math_ops.logical_not(mask))
    kept = default.shape.ndims
    if kept is None:
        axes = array_ops.range(array_ops.rank(rest) - array_ops.rank(default))
    else:
        axes = array_ops.range(array_ops.rank(rest) - kept)
    default_grad = array_ops.reshape(math_reduce.reduce_sum(rest, axes),
                                     array_ops.shape(default))
    return [None, values_grad, default_grad] + [None] * len(partitions)
