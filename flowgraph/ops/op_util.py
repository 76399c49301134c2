"""Helpers shared by the op modules: building ops, matching dtypes of binary inputs.

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [2])
>>> a, b = binary_inputs(x, 2, "Mul")
>>> b.dtype.name
'float32'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Tensor


def make_op(op_type: str, inputs=(), attrs=None, name=None, dtypes=None):
    """Create an op in the default graph (or the graph of its first tensor input)."""
    graph = None
    for t in inputs:
        if isinstance(t, Tensor):
            graph = t.graph
            break
    graph = graph or get_default_graph()
    return graph.create_op(op_type, list(inputs), attrs, name=name, dtypes=dtypes)


def make_tensor(op_type: str, inputs=(), attrs=None, name=None, dtypes=None) -> Tensor:
    """Like `make_op`, returning the op's single output."""
    return make_op(op_type, inputs, attrs, name, dtypes).outputs[0]


def binary_inputs(x, y, op_name: str, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Convert `x`, `y` to tensors of one dtype, as TensorFlow does for binary ops.

    A non-tensor operand takes the dtype of the tensor operand; two tensors of different
    dtypes are a TypeError naming the op and both dtypes.
    """
    if isinstance(x, Tensor) or not isinstance(y, Tensor):
        x = convert_to_tensor(x)
        y = _convert_like(y, x, op_name)
    else:
        y = convert_to_tensor(y)
        x = _convert_like(x, y, op_name)
    if x.dtype.base_dtype != y.dtype.base_dtype:
        where = f"'{name}' " if name else ""
        raise TypeError(
            f"Input 'y' of '{op_name}' Op {where}has type {y.dtype.base_dtype.name} that does "
            f"not match type {x.dtype.base_dtype.name} of argument 'x' ({x.name} vs {y.name}). "
            f"Cast one of them with tf.cast first."
        )
    return x, y


def _convert_like(value, like: Tensor, op_name: str) -> Tensor:
    if isinstance(value, Tensor):
        return convert_to_tensor(value)
    try:
        return convert_to_tensor(value, dtype=like.dtype.base_dtype)
    except (TypeError, ValueError):
        got = convert_to_tensor(value)
        raise TypeError(
            f"Input of '{op_name}' Op has type {got.dtype.name} that does not match type "
            f"{like.dtype.base_dtype.name} of argument '{like.name}'."
        ) from None


def same_dtype(op):
    """dtype_fn: every output has the dtype of input 0."""
    return [op.inputs[0].dtype.base_dtype] * op.op_def.output_count(op)


def attr_dtype(name: str = "dtype"):
    """dtype_fn factory: the single output has the dtype in attribute `name`."""

    def fn(op):
        return [_dtypes.as_dtype(op.attrs[name])]

    return fn


def fixed_dtype(*dtypes):
    """dtype_fn factory: fixed output dtypes."""

    def fn(op):
        return list(dtypes)

    return fn
