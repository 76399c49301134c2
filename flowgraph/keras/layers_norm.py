"""`tf.keras.layers.LayerNormalization`: normalize each example over its feature axes.

For every position outside `axis` the values along `axis` are shifted to mean 0 and
scaled to variance 1 (``(x - mean) / sqrt(variance + epsilon)``), then multiplied by the
trainable ``gamma`` and shifted by ``beta``, both shaped like the `axis` dimensions. As in
TensorFlow's graph mode, trailing axes (the default ``axis=-1``) are computed by one
``FusedBatchNormV3`` over the input reshaped to ``[1, rows, features, 1]`` (NCHW), then
``mul``/``add`` with gamma and beta; other axes use `tf.nn.moments` and
`tf.nn.batch_normalization` (output ``.../batchnorm/add_1``).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     y = keras.layers.LayerNormalization()(tf.constant([[1.0, 3.0], [2.0, 2.0]]))
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         print(sess.run(y).round(2).tolist())
[[-1.0, 1.0], [0.0, 0.0]]
"""

from __future__ import annotations

import numbers

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras import constraints as _constraints
from flowgraph.keras.layers import Layer
from flowgraph.ops import (
    array_join_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_impl,
    nn_norm_ops,
    nn_ops,
)

__all__ = ["LayerNormalization"]


class LayerNormalization(Layer):
    """Layer normalization over `axis` (an int or a list of ints, default -1); see the
    module docstring. `epsilon` (default 1e-3) is added to the variance; `center` and
    `scale` create ``beta`` and ``gamma``."""

    def __init__(self, axis=-1, epsilon=1e-3, center: bool = True, scale: bool = True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, list | tuple):
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, numbers.Integral):
            self.axis = int(axis)
        else:
            raise TypeError(f"LayerNormalization: expected an int or a list/tuple of ints "
                            f"for the argument 'axis', but received: {axis!r}")
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint = _constraints.get(beta_constraint)
        self.gamma_constraint = _constraints.get(gamma_constraint)

    def get_config(self) -> dict:
        keys = ("epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
                "beta_regularizer", "gamma_regularizer", "beta_constraint",
                "gamma_constraint")
        axis = self.axis if isinstance(self.axis, list) else [self.axis]
        return {**super().get_config(), "axis": list(getattr(self, "_axes", axis)),
                **{k: getattr(self, k) for k in keys}}

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        ndims = shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank (layer {self.name}).")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -ndims <= a < ndims:
                raise ValueError(f"Invalid value for `axis` argument: {a} is out of range "
                                 f"for input of rank {ndims} (layer {self.name}).")
        self._axes = sorted({a % ndims for a in axes})
        if len(self._axes) != len(axes):
            raise ValueError(f"Duplicate axis: {axes} (layer {self.name}).")
        self._ndims = ndims
        param_shape = [shape[a].value for a in self._axes]
        if None in param_shape:
            raise ValueError(f"LayerNormalization: the `axis` dimensions of the input must "
                             f"be known, got shape {shape} for axis {axes}.")
        self.gamma = self.add_weight(
            "gamma", param_shape, initializer=self.gamma_initializer,
            regularizer=self.gamma_regularizer,
            constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight(
            "beta", param_shape, initializer=self.beta_initializer,
            regularizer=self.beta_regularizer,
            constraint=self.beta_constraint) if self.center else None

    def _fusable(self, inputs) -> bool:
        trailing = self._axes == list(range(self._ndims - len(self._axes), self._ndims))
        return (trailing and self.epsilon >= 1.001e-5
                and inputs.dtype.base_dtype in (_dtypes.float16, _dtypes.float32))

    def _fused(self, inputs):
        first = self._axes[0]
        shape = array_shape_ops.shape(inputs)
        rows = math_reduce.reduce_prod(shape[:first]) if first else 1
        features = math_reduce.reduce_prod(shape[first:])
        x = array_shape_ops.reshape(inputs, array_join_ops.stack([1, rows, features, 1]))
        ones = array_shape_ops.fill(array_join_ops.stack([rows]), 1.0)
        zeros = array_shape_ops.fill(array_join_ops.stack([rows]), 0.0)
        y, _, _ = nn_norm_ops.fused_batch_norm(x, ones, zeros, epsilon=self.epsilon,
                                                data_format="NCHW")
        y = array_shape_ops.reshape(y, shape)
        y.set_shape(inputs.shape)
        dtype = inputs.dtype.base_dtype
        if self.gamma is not None:
            y = y * math_ops.cast(self.gamma, dtype)
        if self.beta is not None:
            y = y + math_ops.cast(self.beta, dtype)
        return y

    def call(self, inputs):
        if self._fusable(inputs):
            return self._fused(inputs)
        mean, variance = nn_ops.moments(inputs, self._axes, keep_dims=True)
        bshape = [1] * self._ndims
        for a in self._axes:
            bshape[a] = -1 if len(self._axes) == 1 else inputs.shape[a].value

        def bcast(v):
            return None if v is None else array_shape_ops.reshape(v, bshape)

        return nn_impl.batch_normalization(inputs, mean, variance, bcast(self.beta),
                                           bcast(self.gamma), self.epsilon)
