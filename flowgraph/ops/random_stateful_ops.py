"""Stateful random ops on a generator's state variable, and the ``*V2`` stateless ops
that take a Philox key and counter (what `tf.random.Generator` builds:
`flowgraph/ops/random_generator.py`).

The state variable is an int64 vector, ``[counter_lo, counter_hi, key]`` for Philox.
``RngReadAndSkip`` returns the state and advances its counter past ``delta`` outputs;
``RngSkip`` only advances it; the ``Stateful*`` samplers read, draw and advance in one
op. The state input is a resource variable's handle (what the generator makes, as in
TensorFlow) or a reference variable (``ref_inputs``: both reach the kernel as the
variable's storage).
Kernels: `flowgraph/backends/cpu/kernels_random_stateful.py`.

Example
-------
>>> import flowgraph as tf
>>> g = tf.random.Generator.from_seed(1)
>>> x = g.normal([2])
>>> with tf.Session() as sess:
...     sess.run(g.state.initializer)
...     print([round(float(v), 4) for v in sess.run(x)])
[0.4384, -0.5344]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype

_SAMPLERS_V2 = ("StatelessRandomUniformV2", "StatelessRandomNormalV2",
                "StatelessTruncatedNormalV2")
_STATEFUL = ("StatefulUniform", "StatefulStandardNormalV2", "StatefulTruncatedNormal")


def _check_vector(op, what, shape, length=None):
    if shape.ndims is not None and shape.ndims != 1:
        raise op.shape_error(f"{what} must be a vector, got rank {shape.ndims}")
    if length is not None and shape.ndims == 1 and shape[0].value not in (None, length):
        raise op.shape_error(f"{what} must have {length} elements, got {shape[0].value}")


def _check_scalar(op, what, shape):
    if shape.ndims is not None and shape.ndims != 0:
        raise op.shape_error(f"{what} must be a scalar, got shape {shape}")


def _v2_shape(op, shape, key, counter, alg, *bounds):
    _check_vector(op, "shape", shape)
    _check_vector(op, "key", key, 1)
    _check_vector(op, "counter", counter)
    _check_scalar(op, "alg", alg)
    for what, b in zip(("minval", "maxval"), bounds, strict=False):
        _check_scalar(op, what, b)
    return [constant_value_as_shape(op.inputs[0])]


def _stateful_shape(op, state, algorithm, shape, *params):
    _check_scalar(op, "algorithm", algorithm)
    _check_vector(op, "shape", shape)
    return [constant_value_as_shape(op.inputs[2])]


for _name in _SAMPLERS_V2:
    register_op(_name, attrs={"dtype": _dtypes.float32, "Tshape": _dtypes.int32},
                dtype_fn=attr_dtype(), stateful=False)(_v2_shape)
register_op("StatelessRandomUniformIntV2", attrs={"dtype": _dtypes.int32,
                                                  "Tshape": _dtypes.int32},
            dtype_fn=attr_dtype())(_v2_shape)
register_op("StatelessRandomUniformFullIntV2", attrs={"dtype": _dtypes.uint64,
                                                      "Tshape": _dtypes.int32},
            dtype_fn=attr_dtype())(_v2_shape)

for _name in _STATEFUL:
    register_op(_name, attrs={"dtype": _dtypes.float32, "shape_dtype": _dtypes.int64},
                dtype_fn=attr_dtype(), stateful=True, ref_inputs=(0,))(_stateful_shape)
register_op("StatefulUniformInt", attrs={"dtype": _dtypes.int64,
                                         "shape_dtype": _dtypes.int64},
            dtype_fn=attr_dtype(), stateful=True, ref_inputs=(0,))(_stateful_shape)
register_op("StatefulUniformFullInt", attrs={"dtype": _dtypes.uint64,
                                             "shape_dtype": _dtypes.int64},
            dtype_fn=attr_dtype(), stateful=True, ref_inputs=(0,))(_stateful_shape)
register_op("StatefulRandomBinomial", attrs={"dtype": _dtypes.int64},
            dtype_fn=attr_dtype(), stateful=True, ref_inputs=(0,))(_stateful_shape)


@register_op("RngReadAndSkip", dtype_fn=fixed_dtype(_dtypes.int64), stateful=True,
             ref_inputs=(0,))
def _rng_read_and_skip_shape(op, state, alg, delta):
    _check_scalar(op, "alg", alg)
    _check_scalar(op, "delta", delta)
    return [TensorShape([3])]


@register_op("RngSkip", num_outputs=0, dtype_fn=fixed_dtype(), stateful=True,
             ref_inputs=(0,))
def _rng_skip_shape(op, state, algorithm, delta):
    _check_scalar(op, "algorithm", algorithm)
    _check_scalar(op, "delta", delta)
    return []


not_differentiable(*_SAMPLERS_V2, *_STATEFUL, "StatelessRandomUniformIntV2",
                   "StatelessRandomUniformFullIntV2", "StatefulUniformInt",
                   "StatefulUniformFullInt", "StatefulRandomBinomial", "RngReadAndSkip",
                   "RngSkip")
