"""Gradients of the sparse ops (`flowgraph/ops/sparse_ops.py`).

Only values and dense operands get gradients; indices, shapes and segment ids never do.
The segment reductions give `data` dense rows, as TensorFlow's, unless they were made
with ``sparse_gradient=True`` (as `embedding_lookup_sparse` makes them): then
`IndexedSlices`, one row per distinct entry of `indices` (duplicates added up), so the
gradient of a lookup into a huge table touches only the looked-up rows.

    SparseSegmentMean(data, indices=[9, 4, 9], segment_ids=[0, 0, 0])  -> out[0]
    d data = IndexedSlices(values=[g[0] / 3, 2 * g[0] / 3], indices=[4, 9])
             (SparseSegmentMeanGradV2: one row per distinct index, sorted)

Example
-------
>>> import flowgraph as tf
>>> d = tf.constant([[1.0], [2.0], [4.0]])
>>> (g,) = tf.gradients(tf.sparse.segment_sum(d, [0, 2], [0, 0], sparse_gradient=True), [d])
>>> type(g).__name__
'IndexedSlices'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import register_gradient
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.linalg_basic import matrix_transpose
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.sparse_ops import SEGMENT_OPS

__all__: list[str] = []


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


@register_gradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    indices = op.inputs[0]
    grad = _dense(grad)
    if indices.shape.ndims == 1:  # a vector of positions into a 1-D output
        indices = array_ops.expand_dims(indices, 1)
    picked = array_ops.gather_nd(grad, indices)
    d_default = math_reduce.reduce_sum(grad) - math_reduce.reduce_sum(picked)
    return [None, None, picked, d_default]


@register_gradient("SparseReorder")
def _sparse_reorder_grad(op, grad_indices, grad_values):
    indices, _, shape = op.inputs
    n = array_ops.shape(indices, out_type=_dtypes.int64)[0]
    positions = array_ops.range(n, dtype=_dtypes.int64)
    perm = make_op("SparseReorder", [indices, positions, shape]).outputs[1]
    return [None, array_ops.gather(_dense(grad_values), array_ops.invert_permutation(perm)),
            None]


@register_gradient("SparseFillEmptyRows")
def _fill_empty_rows_grad(op, d_indices, d_values, d_empty, d_reverse):
    reverse_map = op.outputs[3]
    g = make_op("SparseFillEmptyRowsGrad", [reverse_map, _dense(d_values)])
    return [None, g.outputs[0], None, g.outputs[1]]


@register_gradient("SparseReduceSum")
def _sparse_reduce_sum_grad(op, grad):
    """Each entry's gradient is the output gradient at its coordinates with the reduced
    axes dropped: gather it from the keep-dims gradient at coordinates zeroed on them."""
    indices, _, shape, axes = op.inputs
    grad = _dense(grad)
    rank = array_ops.size(shape)
    axes_mod = math_ops.floormod(math_ops.cast(axes, _dtypes.int32), rank)
    reduced = math_reduce.reduce_any(math_ops.equal(
        array_ops.expand_dims(array_ops.range(rank), 1),
        array_ops.expand_dims(array_ops.reshape(axes_mod, [-1]), 0)), axis=1)
    keep = math_ops.cast(math_ops.logical_not(reduced), _dtypes.int64)
    kept_shape = shape * keep + (1 - keep)
    g = array_ops.reshape(grad, kept_shape)
    return [None, array_ops.gather_nd(g, indices * keep), None, None]


@register_gradient("SparseTensorDenseMatMul")
def _sp_matmul_grad(op, grad):
    # Built op for op as TensorFlow's gradient (``..._grad/Squeeze`` for the values,
    # ``..._grad/matrix_transpose/transpose`` for an adjointed b).
    indices, values, shape, b = op.inputs
    adj_a, adj_b = op.attrs["adjoint_a"], op.attrs["adjoint_b"]
    grad = _dense(grad)
    # d b: op(a)^H @ grad, adjointed back when b was.
    d_b = make_tensor("SparseTensorDenseMatMul", [indices, values, shape, grad],
                      {"adjoint_a": not adj_a, "adjoint_b": False})
    if adj_b:
        d_b = matrix_transpose(d_b, conjugate=True)
    # d values[k] for entry (r, c): grad's row meets op(b)'s row, one small matmul each.
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = array_ops.gather(grad, cols if adj_a else rows)
    parts_b = array_ops.gather(array_ops.transpose(b) if adj_b else b, rows if adj_a else cols)
    if not adj_a and not adj_b:
        d_values = math_ops.matmul(array_ops.expand_dims(parts_a, -2),
                                   array_ops.expand_dims(parts_b, -2), adjoint_b=True)
    elif adj_a and not adj_b:
        d_values = math_ops.matmul(array_ops.expand_dims(parts_a, -1),
                                   array_ops.expand_dims(parts_b, -1), adjoint_a=True)
    elif not adj_a:
        d_values = math_ops.matmul(array_ops.expand_dims(parts_a, -2),
                                   array_ops.expand_dims(parts_b, -1))
    else:
        d_values = math_ops.matmul(array_ops.expand_dims(parts_a, -1),
                                   array_ops.expand_dims(parts_b, -2),
                                   adjoint_a=True, adjoint_b=True)
    return [None, array_ops.squeeze(d_values, axis=[-2, -1]), None, d_b]


def _segment_grad(op, grad):
    """TensorFlow's gradient of ``SparseSegment{Sum,Mean,SqrtN}``: dense rows
    (``...Grad``, ``output_dim0`` rows) unless the op was made with
    ``sparse_gradient=True``; then the ``...GradV2`` form, whose rows and sorted distinct
    indices make an `IndexedSlices`, so a lookup into a huge table never densifies its
    gradient."""
    data, indices, segment_ids = op.inputs[:3]
    kind = op.type.replace("WithNumSegments", "")
    extra = [None] * (len(op.inputs) - 3)
    shape = data.shape
    if shape.ndims and shape[0].value is not None:
        dim0 = convert_to_tensor(shape[0].value, dtype=_dtypes.int32)
    else:
        dim0 = array_ops.shape(data, out_type=_dtypes.int32)[0]
    grad = _dense(grad)
    if not op.attrs.get("sparse_gradient", False):
        rows = make_tensor(kind + "Grad", [grad, indices, segment_ids, dim0])
        return [rows, None, None, *extra]
    g = make_op(kind + "GradV2", [grad, indices, segment_ids, dim0])
    if shape.is_fully_defined():
        dense_shape = convert_to_tensor(shape.as_list(), dtype=indices.dtype.base_dtype)
    else:
        dense_shape = array_ops.shape(data, out_type=indices.dtype.base_dtype)
    return [IndexedSlices(g.outputs[0], g.outputs[1], dense_shape), None, None, *extra]


for _name in SEGMENT_OPS:
    register_gradient(_name)(_segment_grad)
    register_gradient(_name + "WithNumSegments")(_segment_grad)
