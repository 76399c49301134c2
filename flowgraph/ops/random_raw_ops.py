"""TensorFlow's remaining random op types: the TF1 ``RandomPoisson`` (its rate and output
share one dtype; `tf.random.poisson` emits ``RandomPoissonV2``),
``ParameterizedTruncatedNormal`` (per-batch normal parameters and bounds),
``NonDeterministicInts`` (OS entropy), ``StatefulStandardNormal`` (the first form of
``StatefulStandardNormalV2``: Philox, no algorithm input), ``StatelessRandomGammaV3``
(gamma draws from a Philox key and counter, with the implicit-reparameterization
gradient) and the two ops
that pick the stateless algorithm: ``StatelessRandomGetKeyCounterAlg`` (the key and
counter a seed starts, and Philox) and ``StatelessRandomGetAlg``.

Values: ``RandomPoisson`` draws TensorFlow's stream (the kernel of ``RandomPoissonV2``);
the key and counter of a seed are TensorFlow's, and so are ``StatefulStandardNormal``'s
draws from a generator's state; the other samplers match TensorFlow's
distributions, shapes and dtypes, not its streams. Kernels:
`flowgraph/backends/cpu/kernels_random_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> key, counter, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=[1, 2])
>>> x = tf.raw_ops.StatelessRandomGammaV3(shape=[3], key=key, counter=counter, alg=alg,
...                                       alpha=tf.constant(2.0))
>>> with tf.Session() as sess:
...     a, b = sess.run([x, x])
>>> bool((a == b).all()), a.shape
(True, (3,))
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.misc_compat_ops import _poisson_shape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_tensor

__all__: list[str] = []

_SEEDS = {"seed": 0, "seed2": 0}


def _shape_only(op, shape, *params):
    if shape.ndims is not None and shape.ndims != 1:
        raise op.shape_error(f"shape must be a 1-D tensor, got rank {shape.ndims}")
    return [constant_value_as_shape(op.inputs[0])]


def _input_dtype(index: int):
    """The output dtype: that of input `index` (TensorFlow's ``dtype`` attribute types
    both, and a graph TensorFlow wrote carries it)."""
    return lambda op: [op.inputs[index].dtype.base_dtype]


register_op("RandomPoisson", attrs={**_SEEDS, "dtype": None}, dtype_fn=_input_dtype(1),
            stateful=True)(_poisson_shape)
register_op("ParameterizedTruncatedNormal", attrs={**_SEEDS, "dtype": None},
            dtype_fn=_input_dtype(1), stateful=True)(_shape_only)
register_op("NonDeterministicInts", attrs={"dtype": _dtypes.int64,
                                           "shape_dtype": _dtypes.int64},
            dtype_fn=attr_dtype(), stateful=True)(_shape_only)


@register_op("StatefulStandardNormal", attrs={"dtype": _dtypes.float32,
                                             "shape_dtype": _dtypes.int64},
             dtype_fn=attr_dtype(), stateful=True, ref_inputs=(0,))
def _stateful_normal_v1_shape(op, state, shape):
    if shape.ndims is not None and shape.ndims != 1:
        raise op.shape_error(f"shape must be a 1-D tensor, got rank {shape.ndims}")
    return [constant_value_as_shape(op.inputs[1])]


@register_op("StatelessRandomGammaV3", attrs={"shape_dtype": _dtypes.int32},
             dtype_fn=lambda op: [op.inputs[4].dtype.base_dtype])
def _gamma_v3_shape(op, shape, key, counter, alg, alpha):
    if alg.ndims not in (None, 0):
        raise op.shape_error(f"alg must be a scalar, got shape {alg}")
    return _shape_only(op, shape)


@register_op("StatelessRandomGetKeyCounterAlg", attrs={"Tseed": _dtypes.int64},
             num_outputs=3,
             dtype_fn=fixed_dtype(_dtypes.uint64, _dtypes.uint64, _dtypes.int32))
def _get_key_counter_alg_shape(op, seed):
    if seed.ndims is not None and (seed.ndims != 1 or seed[0].value not in (None, 2)):
        raise op.shape_error(f"seed must have shape [2], got {seed}")
    return [TensorShape([1]), TensorShape([2]), TensorShape([])]


@register_op("StatelessRandomGetAlg", dtype_fn=fixed_dtype(_dtypes.int32), stateful=True)
def _get_alg_shape(op):
    return [TensorShape([])]


@register_gradient("StatelessRandomGammaV3")
def _gamma_v3_grad(op, grad):
    """Implicit reparameterization, as for ``StatelessRandomGammaV2``: d sample / d alpha
    from ``RandomGammaGrad``, summed over the sample axes alpha was broadcast along."""
    from flowgraph.ops.array_gen_ops import range as range_
    from flowgraph.ops.array_join_ops import concat
    from flowgraph.ops.array_shape_ops import ones, rank, reshape, shape, size
    from flowgraph.ops.math_reduce import reduce_sum

    shape_t, alpha = op.inputs[0], op.inputs[4]
    lead = size(shape_t) - rank(alpha)
    alpha_b = reshape(alpha, concat([ones([lead], _dtypes.int32), shape(alpha)], 0))
    partial = make_tensor("RandomGammaGrad", [alpha_b, op.outputs[0]])
    return [None, None, None, None, reduce_sum(grad * partial, range_(lead))]


not_differentiable("ParameterizedTruncatedNormal")
# TensorFlow registers no gradient (tf.gradients raises LookupError) for RandomPoisson,
# NonDeterministicInts, StatefulStandardNormal, StatelessRandomGetKeyCounterAlg and
# StatelessRandomGetAlg.
