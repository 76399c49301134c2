"""`tf.random_gamma` (op ``RandomGamma``): one draw per entry of `shape` for each
concentration, so the result has shape ``shape + alpha.shape``. (`tf.random_poisson` is in
`flowgraph.ops.misc_compat_ops`.)

Example
-------
>>> import flowgraph as tf
>>> tf.random_gamma([4], alpha=[1.0, 5.0], seed=1).shape.as_list()
[4, 2]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.ops import array_gen_ops, array_shape_ops, math_ops, math_reduce
from flowgraph.ops.op_util import attr_dtype, make_tensor
from flowgraph.ops.random_ops import FLOATS, _shape_tensor, op_seeds

__all__ = ["random_gamma"]

_SEEDS = {"seed": 0, "seed2": 0}


def _draws_shape(op, shape, params):
    if shape.ndims not in (None, 1):
        raise op.shape_error(f"shape must be a 1-D tensor but has rank {shape.ndims}")
    return [constant_value_as_shape(op.inputs[0]).concatenate(params)]


register_op("RandomGamma", attrs={**_SEEDS, "T": _dtypes.float32}, dtype_fn=attr_dtype("T"),
            stateful=True)(_draws_shape)


@register_op("RandomGammaGrad")
def _random_gamma_grad_shape(op, alpha, sample):
    return [sample]


# Left without a gradient, as TensorFlow leaves RandomGammaGrad:
# tf.gradients raises LookupError when a gradient reaches one.


@register_gradient("RandomGamma")
def _random_gamma_grad(op, grad):
    # Implicit reparameterization: with F the gamma cdf, F(sample; alpha) = u stays fixed,
    # so d sample / d alpha = -(dF/d alpha) / pdf (the kernel of RandomGammaGrad). The
    # draws' leading `shape` axes sum away to alpha's shape.
    shape_t, alpha = op.inputs
    sample = op.outputs[0]
    partial = make_tensor("RandomGammaGrad", [alpha, sample])
    lead = array_shape_ops.size(shape_t)
    axes = array_gen_ops.range(lead)
    return [None, math_reduce.reduce_sum(math_ops.multiply(grad, partial), axes)]


def random_gamma(shape, alpha, beta=None, dtype=_dtypes.float32, seed=None, name=None):
    """Gamma draws of shape ``shape + broadcast(alpha, beta).shape``: concentration
    `alpha`, inverse scale `beta` (default 1); never below the dtype's smallest normal.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.random_gamma([1000], alpha=2.0, beta=4.0, seed=3)
    >>> 0.4 < float(tf.Session().run(tf.reduce_mean(x))) < 0.6
    True
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in FLOATS:
        raise ValueError(f"tf.random_gamma: dtype must be a float type, got {dtype.name}")
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = _shape_tensor(shape)
        alpha_t = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        if beta is not None:
            beta_t = convert_to_tensor(beta, dtype=dtype, name="beta")
            alpha_t = math_ops.add(alpha_t, math_ops.multiply(beta_t, 0.0))  # broadcast
        seed1, seed2 = op_seeds(seed)
        draws = make_tensor("RandomGamma", [shape_t, alpha_t],
                            {"seed": seed1, "seed2": seed2, "T": dtype})
        if beta is not None:
            draws = math_ops.truediv(draws, beta_t)
        return math_ops.maximum(np.finfo(dtype.as_numpy_dtype).tiny, draws)
