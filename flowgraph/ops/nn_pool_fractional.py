"""Fractional max and average pooling (Graham, "Fractional Max-Pooling", 2014).

`FractionalMaxPool` and `FractionalAvgPool` shrink the rows and columns of an NHWC input
by a non-integer ratio: output size ``floor(in / ratio)``. The pooling regions are drawn
per run from the op's seeds and returned as two int64 boundary sequences (length
``out + 1``, from 0 to the input size): region i spans ``[seq[i], seq[i+1])``, or
``[seq[i], seq[i+1]]`` when `overlapping`. The gradients reuse those sequences.
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_shape_ops, math_ops
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["fractional_avg_pool", "fractional_max_pool"]

_ALLOWED = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64)
_ATTRS = {"pooling_ratio": None, "pseudo_random": False, "overlapping": False,
          "deterministic": False, "seed": 0, "seed2": 0}


def _fractional_shape(op, x):
    ratio = op.attrs["pooling_ratio"]
    if x.ndims not in (None, 4):
        raise op.shape_error(f"Shape must be rank 4 but is rank {x.ndims}")
    for r in ratio:
        if r < 1.0:
            raise op.shape_error(f"pooling_ratio cannot be smaller than 1, got: {r}")
    if x.ndims is None:
        return [TensorShape([None] * 4), TensorShape([None]), TensorShape([None])]
    out = [None if d is None else math.floor(d / r) for d, r in zip(x.as_list(), ratio)]
    rows = None if out[1] is None else out[1] + 1
    cols = None if out[2] is None else out[2] + 1
    return [TensorShape(out), TensorShape([rows]), TensorShape([cols])]


def _fractional_dtypes(op):
    return [op.inputs[0].dtype.base_dtype, _dtypes.int64, _dtypes.int64]


for _type in ("FractionalMaxPool", "FractionalAvgPool"):
    register_op(_type, attrs=_ATTRS, num_outputs=3, dtype_fn=_fractional_dtypes,
                stateful=True, cost="expensive")(_fractional_shape)


@register_op("FractionalMaxPoolGrad", attrs={"overlapping": False}, cost="expensive")
def _max_grad_shape(op, orig_input, orig_output, out_backprop, rows, cols):
    return [orig_input]


@register_op("FractionalAvgPoolGrad", attrs={"overlapping": False}, cost="expensive",
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _avg_grad_shape(op, orig_shape, out_backprop, rows, cols):
    known = constant_value(op.inputs[0])
    if known is not None:
        return [TensorShape([int(d) for d in known])]
    return [TensorShape([None] * 4)]


@register_gradient("FractionalMaxPool")
def _fractional_max_pool_grad(op, grad, _rows_grad, _cols_grad):
    return [make_tensor("FractionalMaxPoolGrad",
                        [op.inputs[0], op.outputs[0], grad, op.outputs[1], op.outputs[2]],
                        {"overlapping": op.attrs["overlapping"]})]


@register_gradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op, grad, _rows_grad, _cols_grad):
    x = op.inputs[0]
    if x.shape.is_fully_defined():
        shape = constant(x.shape.as_list(), dtype=_dtypes.int64)
    else:
        shape = math_ops.cast(array_shape_ops.shape(x), _dtypes.int64)
    return [make_tensor("FractionalAvgPoolGrad", [shape, grad, op.outputs[1], op.outputs[2]],
                        {"overlapping": op.attrs["overlapping"]})]


def _fractional(op_type, value, pooling_ratio, pseudo_random, overlapping, deterministic,
                seed, seed2, name):
    ratio = [float(r) for r in pooling_ratio]
    if len(ratio) < 4:
        raise ValueError(f"Attr 'pooling_ratio' of '{op_type}' Op passed list of length "
                         f"{len(ratio)} less than minimum 4.")
    with name_scope(name, op_type, [value]) as scope:
        x = convert_to_tensor(value, name="value")
        if x.dtype.base_dtype not in _ALLOWED:
            raise TypeError(f"Value passed to parameter 'value' has DataType "
                            f"{x.dtype.base_dtype.name} not in list of allowed values: "
                            f"{', '.join(d.name for d in _ALLOWED)}")
        op = make_op(op_type, [x], {"pooling_ratio": ratio,
                                    "pseudo_random": bool(pseudo_random),
                                    "overlapping": bool(overlapping),
                                    "deterministic": bool(deterministic),
                                    "seed": int(seed), "seed2": int(seed2)}, name=scope)
    return tuple(op.outputs)


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Max pooling of an NHWC `value` over regions whose sizes shrink rows and columns by
    the non-integer `pooling_ratio` (four floats, the first and last 1.0). Returns
    ``(output, row_pooling_sequence, col_pooling_sequence)``; `pseudo_random` draws the
    regions from one random offset instead of a random permutation, `overlapping` lets
    neighbouring regions share their boundary cell, `deterministic` (with `seed`,
    `seed2`) draws the same regions on every run. Seeds must be 0 unless deterministic.

    Example
    -------
    >>> import flowgraph as tf
    >>> out, rows, cols = tf.nn.fractional_max_pool(tf.ones([1, 7, 9, 2]),
    ...                                             [1.0, 1.44, 1.73, 1.0])
    >>> out.shape.as_list(), rows.shape.as_list()
    ([1, 4, 5, 2], [5])
    """
    return _fractional("FractionalMaxPool", value, pooling_ratio, pseudo_random,
                       overlapping, deterministic, seed, seed2, name)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """Average pooling over fractional regions: as `fractional_max_pool`, with the mean
    of each region.

    Example
    -------
    >>> import flowgraph as tf
    >>> out, rows, cols = tf.nn.fractional_avg_pool(tf.ones([1, 6, 9, 1]),
    ...                                             [1.0, 1.5, 2.0, 1.0])
    >>> out.shape.as_list(), cols.shape.as_list()
    ([1, 4, 4, 1], [5])
    """
    return _fractional("FractionalAvgPool", value, pooling_ratio, pseudo_random,
                       overlapping, deterministic, seed, seed2, name)
