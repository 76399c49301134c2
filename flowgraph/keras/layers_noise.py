"""Keras noise, regularization, activation and masking layers (graph mode):
`SpatialDropout1D`/`2D`/`3D`, `GaussianDropout`, `GaussianNoise`, `AlphaDropout`,
`ActivityRegularization`, `PReLU`, `ThresholdedReLU`, `Masking` and `Identity`;
re-exported by `flowgraph.keras.layers`.

The noise layers change their input only while training (``training=True``, or the
learning phase when the call does not say); they pass masks through. `Masking` makes a
mask: a step whose features all equal `mask_value` is skipped by the layers downstream
that consume masks (the recurrent layers, `GlobalAveragePooling1D`) and passed along by
those that support them (`Dense`, `Dropout`, `Activation`, ...).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((3, 2))
...     y = keras.layers.GlobalAveragePooling1D()(keras.layers.Masking()(x))
...     data = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]], np.float32)
...     print(keras.backend.get_session().run(y, {x: data}))
[[2. 3.]]
"""

from __future__ import annotations

import numbers

from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras import constraints as _constraints
from flowgraph.keras import regularizers as _regularizers
from flowgraph.keras.layers import Dropout, Layer, _data_format
from flowgraph.layers.core import smart_cond
from flowgraph.ops import (
    array_identity_ops,
    array_join_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_ops,
    random_ops,
)

__all__ = [
    "ActivityRegularization",
    "AlphaDropout",
    "GaussianDropout",
    "GaussianNoise",
    "Identity",
    "Masking",
    "PReLU",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "ThresholdedReLU",
]


# -- spatial dropout ----------------------------------------------------------------------------
class SpatialDropout1D(Dropout):
    """`Dropout` of whole channels of ``(batch, steps, channels)``: one keep/drop draw
    per example and channel."""

    _rank = 1

    def __init__(self, rate, data_format=None, **kwargs) -> None:
        kwargs.pop("noise_shape", None)  # a saved config repeats Dropout's
        super().__init__(rate, **kwargs)
        self.data_format = "channels_last" if self._rank == 1 else _data_format(data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "noise_shape": None}

    def _noise_shape(self, inputs):
        ndims = self._rank + 2
        shape = array_shape_ops.shape(inputs)
        channel = shape[ndims - 1] if self.data_format == "channels_last" else shape[1]
        ones = [1] * self._rank
        dims = [shape[0], *ones, channel] if self.data_format == "channels_last" else \
            [shape[0], channel, *ones]
        return array_join_ops.stack(dims)

    def call(self, inputs, training=None):
        if inputs.shape.ndims is not None and inputs.shape.ndims != self._rank + 2:
            raise ValueError(f"{type(self).__name__} ({self.name}) expects inputs of rank "
                             f"{self._rank + 2}; got shape {inputs.shape}")
        return super().call(inputs, training=training)


class SpatialDropout2D(SpatialDropout1D):
    """`Dropout` of whole feature maps of 4-D inputs."""

    _rank = 2


class SpatialDropout3D(SpatialDropout1D):
    """`Dropout` of whole feature volumes of 5-D inputs."""

    _rank = 3


# -- multiplicative and additive noise --------------------------------------------------------
class _Noise(Layer):
    """Applies ``_noisy(inputs)`` while training, the identity otherwise."""

    supports_masking = True

    def call(self, inputs, training=None):
        if not self._active():
            return array_identity_ops.identity(inputs)
        return smart_cond(training, lambda: self._noisy(inputs),
                          lambda: array_identity_ops.identity(inputs))

    def _active(self) -> bool:
        return True

    def _normal(self, inputs, mean: float, stddev: float):
        return random_ops.random_normal(array_shape_ops.shape(inputs), mean, stddev,
                                        dtype=inputs.dtype.base_dtype, seed=self.seed)


class GaussianNoise(_Noise):
    """Add zero-mean Gaussian noise of standard deviation `stddev` while training."""

    def __init__(self, stddev, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.stddev, self.seed = float(stddev), seed

    def get_config(self) -> dict:
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}

    def _noisy(self, inputs):
        return math_ops.add(inputs, self._normal(inputs, 0.0, self.stddev))


class GaussianDropout(_Noise):
    """Multiply by Gaussian noise of mean 1 and standard deviation
    ``sqrt(rate / (1 - rate))`` while training."""

    def __init__(self, rate, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate, self.seed = float(rate), seed

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}

    def _active(self) -> bool:  # as TensorFlow: a rate outside (0, 1) passes inputs on
        return 0 < self.rate < 1

    def _noisy(self, inputs):
        stddev = (self.rate / (1.0 - self.rate)) ** 0.5
        return math_ops.multiply(inputs, self._normal(inputs, 1.0, stddev))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(_Noise):
    """Dropout for SELU networks: dropped units are set to SELU's negative saturation
    value and the result is scaled and shifted back to the input's mean and variance."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}

    def _active(self) -> bool:  # as TensorFlow: a rate outside (0, 1) passes inputs on
        return 0 < self.rate < 1

    def _noisy(self, inputs):
        dtype = inputs.dtype.base_dtype
        shape = array_shape_ops.shape(inputs) if self.noise_shape is None else \
            list(self.noise_shape)
        alpha_p = -_SELU_ALPHA * _SELU_SCALE
        kept = math_ops.cast(math_ops.greater_equal(
            random_ops.random_uniform(shape, dtype=dtype, seed=self.seed), self.rate), dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = math_ops.add(math_ops.multiply(inputs, kept),
                         math_ops.multiply(alpha_p, math_ops.subtract(1.0, kept)))
        return math_ops.add(math_ops.multiply(a, x), b)


class ActivityRegularization(Layer):
    """The identity, adding ``l1 * sum(|x|) + l2 * sum(x ** 2)`` of its output (over the
    batch size) to the layer's losses."""

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs) -> None:
        kwargs.pop("activity_regularizer", None)
        super().__init__(activity_regularizer=_regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def get_config(self) -> dict:
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}

    def call(self, inputs):
        return array_identity_ops.identity(inputs)


# -- activations --------------------------------------------------------------------------------
class PReLU(Layer):
    """``max(x, 0) + alpha * min(x, 0)`` with a learned ``alpha`` of the input's shape
    (less the batch), of size 1 along `shared_axes`."""

    supports_masking = True

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        self.alpha_regularizer = alpha_regularizer
        self.alpha_constraint = _constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, numbers.Integral):
            self.shared_axes = [int(shared_axes)]
        else:
            self.shared_axes = [int(a) for a in shared_axes]

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha_initializer": self.alpha_initializer,
                "alpha_regularizer": self.alpha_regularizer,
                "alpha_constraint": self.alpha_constraint, "shared_axes": self.shared_axes}

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        if shape.ndims is None or shape.ndims < 2:
            raise ValueError(f"PReLU ({self.name}) needs inputs of known rank >= 2; got "
                             f"shape {shape}")
        dims = shape.as_list()[1:]
        for axis in self.shared_axes or []:
            if not 1 <= axis <= len(dims):
                raise ValueError(f"PReLU ({self.name}): shared axis {axis} is outside the "
                                 f"input's non-batch axes 1..{len(dims)} (shape {shape})")
            dims[axis - 1] = 1
        if any(d is None for d in dims):
            raise ValueError(f"PReLU ({self.name}): the non-shared axes of the input must be "
                             f"known; got shape {shape} with shared_axes "
                             f"{self.shared_axes}")
        self.alpha = self.add_weight("alpha", dims, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)

    def call(self, inputs):
        positive = nn_ops.relu(inputs)
        negative = math_ops.multiply(math_ops.negative(self.alpha),
                                     nn_ops.relu(math_ops.negative(inputs)))
        return math_ops.add(positive, negative)


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, else 0."""

    supports_masking = True

    def __init__(self, theta=1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError("Theta of a Thresholded ReLU layer cannot be None, expecting a "
                             "float. Received: None")
        if float(theta) < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer should be >=0. "
                             f"Received: {theta}")
        self.theta = float(theta)

    def get_config(self) -> dict:
        return {**super().get_config(), "theta": self.theta}

    def call(self, inputs):
        dtype = inputs.dtype.base_dtype
        return math_ops.multiply(inputs, math_ops.cast(math_ops.greater(inputs, self.theta),
                                                       dtype))


# -- masks --------------------------------------------------------------------------------------
class Masking(Layer):
    """Mark the steps of ``(batch, steps, features)`` whose features all equal
    `mask_value` as skipped: the output zeroes them and carries the boolean mask
    ``(batch, steps)`` (``output._keras_mask``) to the layers downstream."""

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}

    def _keep(self, inputs, keepdims: bool):
        return math_reduce.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1,
                                      keepdims=keepdims)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, keepdims=False)

    def call(self, inputs):
        keep = self._keep(inputs, keepdims=True)
        return math_ops.multiply(inputs, math_ops.cast(keep, inputs.dtype.base_dtype))


class Identity(Layer):
    """Its input, unchanged (a placeholder layer)."""

    def call(self, inputs):
        return array_identity_ops.identity(inputs)
