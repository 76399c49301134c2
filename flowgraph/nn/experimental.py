"""`tf.nn.experimental`: dropout with a caller-chosen random source.

`stateless_dropout` draws its keep mask with `tf.random.stateless_uniform` from a seed
pair, so the same seed gives the same mask in every run (TensorFlow's values: the stream
is TensorFlow's Philox stream); `general_dropout` takes the sampler as a function.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.reshape(tf.range(1.0, 9.0), [2, 4])
...     y = tf.nn.experimental.stateless_dropout(x, rate=0.5, seed=[1, 2])
...     print(tf.Session().run(y).tolist())
[[2.0, 0.0, 6.0, 0.0], [0.0, 12.0, 0.0, 0.0]]
"""

from __future__ import annotations

import functools
import numbers

from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops import math_ops
from flowgraph.ops.array_shape_ops import shape as shape_of
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.random_stateless_ops import stateless_uniform

__all__ = ["general_dropout", "stateless_dropout"]


def _noise_shape(x: Tensor, noise_shape):
    if noise_shape is None:
        return shape_of(x)
    return noise_shape


def _dropout(x, rate, noise_shape, uniform_sampler, name, default_name):
    with name_scope(name, default_name, [x]):
        is_number = isinstance(rate, numbers.Real) and not isinstance(rate, bool)
        if is_number and not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                             f"Received: rate={rate}")
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be "
                             f"scaled. Received: x_dtype={x.dtype}")
        if is_number and rate == 0:
            return x
        if is_number:
            scaled = make_tensor("Mul", [x, constant(1.0 / (1.0 - rate), dtype)])
        else:
            rate = convert_to_tensor(rate)
            if rate.shape.ndims not in (None, 0):
                raise ValueError(f"`rate` must be a scalar, got shape {rate.shape}")
            if rate.dtype.base_dtype != dtype:
                rate = math_ops.cast(rate, dtype, name="rate")
            scaled = make_tensor("RealDiv", [x, make_tensor("Sub", [constant(1, dtype), rate])])
        random = uniform_sampler(shape=_noise_shape(x, noise_shape), dtype=dtype)
        keep = make_tensor("GreaterEqual", [random, convert_to_tensor(rate, dtype=dtype)])
        out = make_tensor("SelectV2", [keep, scaled, constant(0, dtype)])
        out.set_shape(x.shape)
        return out


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Zero each element of `x` with probability `rate` and scale the others by
    ``1 / (1 - rate)``, with the keep mask drawn from the seed pair `seed`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.nn.experimental.stateless_dropout(tf.ones([3]), rate=0.5, seed=[1, 2])
    ...     print(y.name)
    stateless_dropout/SelectV2:0
    """
    sampler = functools.partial(stateless_uniform, seed=seed)
    return _dropout(x, rate, noise_shape, sampler, name, "stateless_dropout")


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """Dropout whose mask comes from ``uniform_sampler(shape=..., dtype=...)``, a function
    returning uniform samples in ``[0, 1)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     sampler = lambda shape, dtype: tf.random.stateless_uniform(shape, [1, 2],
    ...                                                                 dtype=dtype)
    ...     y = tf.nn.experimental.general_dropout(tf.ones([3]), 0.5, sampler)
    ...     print(y.name)
    general_dropout/SelectV2:0
    """
    return _dropout(x, rate, noise_shape, uniform_sampler, name, "general_dropout")




def __dir__():
    return list(__all__)
