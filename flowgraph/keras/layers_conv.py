"""Keras `Conv2DTranspose`, `SeparableConv2D` and `DepthwiseConv2D` (graph mode), on
`tf.nn`'s transposed, separable and depthwise convolutions; re-exported by `flowgraph.keras.layers`.

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

from flowgraph.keras import constraints as _constraints
from flowgraph.keras.layers import Conv2D
from flowgraph.layers.convolutional_extra import check_output_padding, deconv_output_shape
from flowgraph.ops import nn_conv_ops, nn_ops

__all__ = ["Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D"]


def _init_depthwise(layer, depth_multiplier, initializer, regularizer, constraint) -> None:
    """Store the arguments of `layer`'s depthwise kernel (`SeparableConv2D`,
    `DepthwiseConv2D`)."""
    layer.depth_multiplier = int(depth_multiplier)
    layer.depthwise_initializer = initializer
    layer.depthwise_regularizer = regularizer
    layer.depthwise_constraint = _constraints.get(constraint)


def _add_depthwise_kernel(layer, channels: int) -> None:
    """Create `layer.depthwise_kernel`, ``(kh, kw, channels, depth_multiplier)``."""
    layer.depthwise_kernel = layer.add_weight(
        "depthwise_kernel", [*layer.kernel_size, channels, layer.depth_multiplier],
        initializer=layer.depthwise_initializer, regularizer=layer.depthwise_regularizer,
        constraint=layer.depthwise_constraint)


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution: kernel ``(kh, kw, filters, in_channels)``; a spatial
    size ``n`` becomes ``n * stride`` ('same') or ``n * stride + max(k - stride, 0)``
    ('valid'), or follows `output_padding` when given."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)
        self.output_padding = check_output_padding(output_padding, self.strides,
                                                   "Conv2DTranspose")

    def get_config(self) -> dict:
        return {**super().get_config(), "output_padding": self.output_padding}

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def call(self, inputs):
        out_shape, known = deconv_output_shape(
            inputs, self.filters, self.kernel_size, self.strides, self.padding,
            self.data_format, self.output_padding, self.dilation_rate)
        out = nn_conv_ops.conv2d_transpose(
            inputs, self.kernel, out_shape, self._spatial(self.strides),
            padding=self.padding.upper(), data_format=self._fmt(),
            dilations=self._spatial(self.dilation_rate))
        out.set_shape(known)
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
        _init_depthwise(self, depth_multiplier, depthwise_initializer, depthwise_regularizer,
                        depthwise_constraint)
        self.pointwise_initializer = pointwise_initializer
        self.pointwise_regularizer = pointwise_regularizer
        self.pointwise_constraint = _constraints.get(pointwise_constraint)

    def get_config(self) -> dict:
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "depthwise_initializer": self.depthwise_initializer,
                "pointwise_initializer": self.pointwise_initializer,
                "depthwise_regularizer": self.depthwise_regularizer,
                "pointwise_regularizer": self.pointwise_regularizer,
                "depthwise_constraint": self.depthwise_constraint,
                "pointwise_constraint": self.pointwise_constraint}

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        _add_depthwise_kernel(self, channels)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [*(1,) * self._rank, channels * self.depth_multiplier, self.filters],
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


class DepthwiseConv2D(Conv2D):
    """Depthwise 2-D convolution: ``depth_multiplier`` filters per input channel,
    ``depthwise_kernel`` ``(kh, kw, in, multiplier)``, output channels ``in * multiplier``
    (channel ``c * multiplier + m`` from input channel ``c``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     layer = keras.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
    ...     print(layer(keras.Input((5, 5, 4))).shape, layer.depthwise_kernel.shape)
    (?, 5, 5, 8) (3, 3, 4, 2)
    """

    # Conv2D's arguments that TF's DepthwiseConv2D config leaves out
    _config_omits = ("filters", "kernel_initializer", "kernel_regularizer",
                     "kernel_constraint")

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        # Conv2D's own arguments, which a saved config may repeat, do not apply here;
        # `groups` is kept in the config and has no effect, as in Keras
        for key in ("filters", "kernel_initializer", "kernel_regularizer",
                    "kernel_constraint"):
            kwargs.pop(key, None)
        groups = kwargs.pop("groups", 1)
        super().__init__(1, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        _init_depthwise(self, depth_multiplier, depthwise_initializer, depthwise_regularizer,
                        depthwise_constraint)
        self.groups = groups or 1

    def get_config(self) -> dict:
        config = {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                  "depthwise_initializer": self.depthwise_initializer,
                  "depthwise_regularizer": self.depthwise_regularizer,
                  "depthwise_constraint": self.depthwise_constraint}
        for key in ("filters", "kernel_initializer", "kernel_regularizer",
                    "kernel_constraint"):
            config.pop(key, None)
        return config

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        _add_depthwise_kernel(self, channels)
        self.filters = channels * self.depth_multiplier  # the bias's size
        self._add_bias()

    def call(self, inputs):
        out = nn_ops.depthwise_conv2d(inputs, self.depthwise_kernel,
                                      self._spatial(self.strides), self.padding.upper(),
                                      rate=list(self.dilation_rate), data_format=self._fmt())
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias, data_format=self._fmt())
        return self.activation(out)
