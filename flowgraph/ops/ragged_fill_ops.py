"""`tf.ragged_fill_empty_rows` and its gradient op: give every empty row of a ragged
tensor's ``(value_rowids, values)`` one default value, as `tf.sparse.fill_empty_rows`
does for a sparse tensor (kernels: `flowgraph/backends/cpu/kernels_ragged_fill.py`).

Example
-------
>>> import flowgraph as tf
>>> r = tf.ragged_fill_empty_rows(value_rowids=tf.constant([0, 0, 2], tf.int64),
...                               values=tf.constant([1.0, 2.0, 3.0]),
...                               nrows=tf.constant(4, tf.int64),
...                               default_value=tf.constant(-1.0))
>>> with tf.Session() as sess:
...     out = sess.run(r)
>>> out.output_values.tolist(), out.empty_row_indicator.tolist()
([1.0, 2.0, -1.0, 3.0, -1.0], [False, True, False, True])
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op

__all__ = ["ragged_fill_empty_rows", "ragged_fill_empty_rows_grad"]

_I64 = _dtypes.int64
RaggedFillEmptyRows = collections.namedtuple(
    "RaggedFillEmptyRows",
    ["output_value_rowids", "output_values", "empty_row_indicator", "reverse_index_map"])
RaggedFillEmptyRowsGrad = collections.namedtuple("RaggedFillEmptyRowsGrad",
                                                 ["d_values", "d_default_value"])


@register_op("RaggedFillEmptyRows", num_outputs=4,
             dtype_fn=lambda op: [_I64, op.inputs[1].dtype.base_dtype, _dtypes.bool, _I64])
def _ragged_fill_shape(op, value_rowids, values, nrows, default_value):
    for what, s, rank in (("value_rowids", value_rowids, 1), ("values", values, 1),
                          ("nrows", nrows, 0), ("default_value", default_value, 0)):
        if s.ndims is not None and s.ndims != rank:
            raise op.shape_error(f"{what} must have rank {rank}, got shape {s}")
    n = values[0].value if values.ndims else None
    return [TensorShape([None]), TensorShape([None]), TensorShape([None]), TensorShape([n])]


@register_op("RaggedFillEmptyRowsGrad", num_outputs=2,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype] * 2)
def _ragged_fill_grad_shape(op, reverse_index_map, grad_values):
    return [reverse_index_map, TensorShape([])]


@register_gradient("RaggedFillEmptyRows")
def _ragged_fill_grad(op, d_rowids, d_values, d_empty, d_reverse):
    g = make_op("RaggedFillEmptyRowsGrad", [op.outputs[3], d_values])
    return [None, g.outputs[0], None, g.outputs[1]]


not_differentiable("RaggedFillEmptyRowsGrad")


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """Fill each of the `nrows` rows that has no value with `default_value`; returns
    ``(output_value_rowids, output_values, empty_row_indicator, reverse_index_map)``,
    where ``reverse_index_map[i]`` is the output position of ``values[i]``."""
    values = convert_to_tensor(values, name="values")
    inputs = [convert_to_tensor(value_rowids, dtype=_I64, name="value_rowids"), values,
              convert_to_tensor(nrows, dtype=_I64, name="nrows"),
              convert_to_tensor(default_value, dtype=values.dtype.base_dtype,
                                name="default_value")]
    op = make_op("RaggedFillEmptyRows", inputs, name=name or "RaggedFillEmptyRows")
    return RaggedFillEmptyRows(*op.outputs)


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """The gradient of `ragged_fill_empty_rows`: ``(d_values, d_default_value)``, the
    gradients of the values moved back and the sum over the filled positions."""
    inputs = [convert_to_tensor(reverse_index_map, dtype=_I64, name="reverse_index_map"),
              convert_to_tensor(grad_values, name="grad_values")]
    op = make_op("RaggedFillEmptyRowsGrad", inputs, name=name or "RaggedFillEmptyRowsGrad")
    return RaggedFillEmptyRowsGrad(*op.outputs)
