"""The fake-quantization ops `tf.contrib.quantize` inserts: `last_value_quantize` (the
range is the last batch's, for weights) and `moving_avg_quantize` (an exponential moving
average of the batch ranges, for activations). Both keep the range in the variables
``<prefix>/min`` and ``<prefix>/max``; in an eval graph they only read them.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.quantize.quant_ops import last_value_quantize
>>> with tf.Graph().as_default():
...     q = last_value_quantize(tf.constant([-1.0, 0.3, 2.0]), name_prefix="w_quant")
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         [round(float(v), 4) for v in sess.run(q)]
[-1.0, 0.2941, 2.0]
"""

from __future__ import annotations

from flowgraph.framework.graph import GraphKeys
from flowgraph.ops import math_ops, math_reduce, state_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.fake_quant_ops import (
    fake_quant_with_min_max_vars,
    fake_quant_with_min_max_vars_per_channel,
)
from flowgraph.ops.init_ops import constant_initializer
from flowgraph.train.moving_averages import assign_moving_average

__all__ = ["last_value_quantize", "moving_avg_quantize"]


def _range_variable(name, shape, init, vars_collection):
    collections = [vars_collection] if vars_collection else []
    collections.append(GraphKeys.GLOBAL_VARIABLES)
    return vs.get_variable(name, shape=shape, initializer=constant_initializer(init),
                           collections=collections, trainable=False)


def _batch_range(inputs, per_channel: bool, symmetric: bool, num_bits: int,
                 narrow_range: bool):
    """The batch's (min, max), widened to contain 0 (and made symmetric if asked)."""
    rank = inputs.shape.ndims
    axis = ({2: [0], 4: [0, 1, 2]}.get(rank) if per_channel else None)
    if per_channel and rank == 1:
        batch_min = batch_max = inputs
    else:
        batch_min = math_reduce.reduce_min(inputs, axis=axis, name="BatchMin")
        batch_max = math_reduce.reduce_max(inputs, axis=axis, name="BatchMax")
    if symmetric:
        # two's complement: the negative side is one step longer unless narrow_range
        ratio = -1.0 if narrow_range else -((1 << num_bits) - 2) / (1 << num_bits)
        return (math_ops.minimum(batch_min, batch_max / ratio),
                math_ops.maximum(batch_max, batch_min * ratio))
    return math_ops.minimum(batch_min, 0.0), math_ops.maximum(batch_max, 0.0)


def _quantize(inputs, min_var, max_var, per_channel, num_bits, narrow_range):
    fn = fake_quant_with_min_max_vars_per_channel if per_channel \
        else fake_quant_with_min_max_vars
    return fn(inputs, min_var, max_var, num_bits=num_bits, narrow_range=narrow_range)


def _variables(inputs, per_channel, init_min, init_max, vars_collection):
    rank = inputs.shape.ndims
    if per_channel and rank not in (1, 2, 4):
        raise ValueError(f"fake quantization: per-channel ranges need a 1-, 2- or 4-D "
                         f"input, got {inputs.name} of shape {inputs.shape}")
    shape = [inputs.shape.dims[-1].value] if per_channel else []
    return (_range_variable("min", shape, init_min, vars_collection),
            _range_variable("max", shape, init_max, vars_collection))


def last_value_quantize(inputs, per_channel=False, init_min=-6.0, init_max=6.0,
                        vars_collection=None, name_prefix="LastValueQuant", reuse=None,
                        is_training=True, num_bits=8, narrow_range=False, symmetric=False):
    """`inputs` fake-quantized to the range of this batch (stored in ``min``/``max``)."""
    with vs.variable_scope(None, default_name=name_prefix, values=[inputs], reuse=reuse):
        min_var, max_var = _variables(inputs, per_channel, init_min, init_max,
                                      vars_collection)
        if not is_training:
            return _quantize(inputs, min_var, max_var, per_channel, num_bits, narrow_range)
        lo, hi = _batch_range(inputs, per_channel, symmetric, num_bits, narrow_range)
        assign_min = state_ops.assign(min_var, lo, name="AssignMinLast")
        assign_max = state_ops.assign(max_var, hi, name="AssignMaxLast")
        return _quantize(inputs, assign_min, assign_max, per_channel, num_bits,
                         narrow_range)


def moving_avg_quantize(inputs, per_channel=False, init_min=-6.0, init_max=6.0,
                        ema_decay=0.999, vars_collection=GraphKeys.MOVING_AVERAGE_VARIABLES,
                        name_prefix="MovingAvgQuantize", reuse=None, is_training=True,
                        num_bits=8, narrow_range=False, symmetric=False):
    """`inputs` fake-quantized to a zero-debiased moving average (decay `ema_decay`) of
    the batch ranges, kept in ``min``/``max``."""
    with vs.variable_scope(None, default_name=name_prefix, values=[inputs], reuse=reuse):
        min_var, max_var = _variables(inputs, per_channel, init_min, init_max,
                                      vars_collection)
        if not is_training:
            return _quantize(inputs, min_var, max_var, per_channel, num_bits, narrow_range)
        lo, hi = _batch_range(inputs, per_channel, symmetric, num_bits, narrow_range)
        assign_min = assign_moving_average(min_var, lo, ema_decay, name="AssignMinEma")
        assign_max = assign_moving_average(max_var, hi, ema_decay, name="AssignMaxEma")
        return _quantize(inputs, assign_min, assign_max, per_channel, num_bits,
                         narrow_range)
