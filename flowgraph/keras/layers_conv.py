"""Keras `Conv2DTranspose` and `SeparableConv2D` (graph mode), on `tf.nn`'s transposed and
separable convolutions; re-exported by `flowgraph.keras.layers`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((4, 4, 8))
...     print(keras.layers.Conv2DTranspose(3, 2, strides=2)(x).shape)
(?, 8, 8, 3)
"""

from __future__ import annotations

from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras.layers import Conv2D
from flowgraph.layers.convolutional_extra import deconv_output_length
from flowgraph.layers.core import normalize_tuple
from flowgraph.ops import array_join_ops, array_shape_ops, nn_conv_ops, nn_ops

__all__ = ["Conv2DTranspose", "SeparableConv2D"]


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution: kernel ``(kh, kw, filters, in_channels)``; a spatial
    size ``n`` becomes ``n * stride`` ('same') or ``n * stride + max(k - stride, 0)``
    ('valid'), or follows `output_padding` when given."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)
        self.output_padding = None
        if output_padding is not None:
            self.output_padding = normalize_tuple(output_padding, 2, "output_padding")
            if any(p >= s for p, s in zip(self.output_padding, self.strides)):
                raise ValueError(f"Conv2DTranspose: output_padding {self.output_padding} must "
                                 f"be smaller than strides {self.strides} in each dimension")

    def get_config(self) -> dict:
        return {**super().get_config(), "output_padding": self.output_padding}

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def _length(self, n, i):
        pad = None if self.output_padding is None else self.output_padding[i]
        return deconv_output_length(n, self.kernel_size[i], self.padding, self.strides[i],
                                    pad, self.dilation_rate[i])

    def call(self, inputs):
        last = self.data_format == "channels_last"
        axes = (1, 2) if last else (2, 3)
        dyn = array_shape_ops.shape(inputs)
        static = inputs.shape
        hw = [self._length(static[a].value if static[a].value is not None else dyn[a], i)
              for i, a in enumerate(axes)]
        dims = [dyn[0], *hw, self.filters] if last else [dyn[0], self.filters, *hw]
        out = nn_conv_ops.conv2d_transpose(
            inputs, self.kernel, array_join_ops.stack(dims), self._spatial(self.strides),
            padding=self.padding.upper(), data_format=self._fmt(),
            dilations=self._spatial(self.dilation_rate))
        known = [self._length(static[a].value, i) for i, a in enumerate(axes)]
        out.set_shape(TensorShape([static[0], *known, self.filters] if last else
                                  [static[0], self.filters, *known]))
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias, data_format=self._fmt())
        return self.activation(out)


class SeparableConv2D(Conv2D):
    """Depthwise convolution (`depth_multiplier` filters per channel), then a 1x1
    convolution to `filters`: ``depthwise_kernel`` ``(kh, kw, in, multiplier)`` and
    ``pointwise_kernel`` ``(1, 1, in * multiplier, filters)``."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def get_config(self) -> dict:
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "depthwise_initializer": self.depthwise_initializer,
                "pointwise_initializer": self.pointwise_initializer}

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, 1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._add_bias()

    def call(self, inputs):
        out = nn_conv_ops.separable_conv2d(
            inputs, self.depthwise_kernel, self.pointwise_kernel,
            self._spatial(self.strides), self.padding.upper(),
            rate=list(self.dilation_rate), data_format=self._fmt())
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias, data_format=self._fmt())
        return self.activation(out)
