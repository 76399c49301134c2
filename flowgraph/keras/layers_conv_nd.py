"""Keras convolutions and poolings over 1 and 3 spatial axes (graph mode): `Conv3D`,
`Conv3DTranspose`, `Conv1DTranspose`, `SeparableConv1D`, `DepthwiseConv1D`,
`MaxPooling3D`, `AveragePooling3D`, `GlobalAveragePooling3D`, `GlobalMaxPooling3D`;
re-exported by `flowgraph.keras.layers` with TF's aliases (``MaxPool3D``,
``Convolution3D``, ...).

They are the 2-D layers with another ``_rank`` (the number of spatial axes): the
same arguments, weights named the same way (``conv3d/kernel``, shape
``(kd, kh, kw, in, filters)``) and the same configs. The 1-D transposed, separable and
depthwise convolutions run the 2-D op on an inserted axis of length 1, as TensorFlow
does (ExpandDims, the 2-D op, Squeeze); the 3-D ones run `tf.nn.conv3d`,
`conv3d_transpose`, `max_pool3d` and `avg_pool3d`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((4, 8, 8, 1))
...     layer = keras.layers.Conv3D(2, 3, padding="same")
...     y = keras.layers.MaxPool3D()(layer(x))
...     print(y.shape, layer.kernel.name, layer.kernel.shape)
(?, 2, 4, 4, 2) conv3d/kernel:0 (3, 3, 3, 1, 2)
"""

from __future__ import annotations

from flowgraph.keras.layers import Conv2D, MaxPooling2D
from flowgraph.keras.layers_conv import Conv2DTranspose, DepthwiseConv2D, SeparableConv2D
from flowgraph.keras.layers_extra import _GlobalPooling
from flowgraph.layers.convolutional_extra import check_output_padding, deconv_output_shape
from flowgraph.ops import array_shape_ops, math_reduce, nn_conv3d_ops, nn_conv_ops, nn_ops

__all__ = [
    "AveragePooling3D",
    "Conv1DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "DepthwiseConv1D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling3D",
    "MaxPooling3D",
    "SeparableConv1D",
]

# TF's other names for the same classes, joined to tf.keras.layers by flowgraph.keras
ALIASES = {
    "AvgPool1D": "AveragePooling1D", "AvgPool2D": "AveragePooling2D",
    "AvgPool3D": "AveragePooling3D", "MaxPool1D": "MaxPooling1D",
    "MaxPool2D": "MaxPooling2D", "MaxPool3D": "MaxPooling3D",
    "GlobalAvgPool3D": "GlobalAveragePooling3D", "GlobalMaxPool1D": "GlobalMaxPooling1D",
    "GlobalMaxPool2D": "GlobalMaxPooling2D", "GlobalMaxPool3D": "GlobalMaxPooling3D",
    "Convolution1DTranspose": "Conv1DTranspose", "Convolution2D": "Conv2D",
    "Convolution3D": "Conv3D", "Convolution3DTranspose": "Conv3DTranspose",
    "SeparableConvolution1D": "SeparableConv1D",
}


def _bias_and_activation(layer, out):
    if layer.use_bias:
        out = nn_ops.bias_add(out, layer.bias, data_format=layer._fmt())
    return layer.activation(out)


# -- 3-D ----------------------------------------------------------------------------------------
class Conv3D(Conv2D):
    """3-D convolution of ``(batch, depth, height, width, channels)``: kernel
    ``(kd, kh, kw, in_channels, filters)``. The input's depth must be known when the
    graph is built."""

    _rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)

    def call(self, inputs):
        # as TensorFlow: one Conv3D (dilated: SpaceToBatchND -> Conv3D -> BatchToSpaceND)
        out = self._grouped(inputs, lambda x, kernel: nn_conv_ops.convolution(
            x, kernel, self.padding.upper(), strides=list(self.strides),
            dilation_rate=list(self.dilation_rate), data_format=self._fmt(), name="Conv3D"))
        return _bias_and_activation(self, out)


class Conv3DTranspose(Conv3D):
    """Transposed 3-D convolution: kernel ``(kd, kh, kw, filters, in_channels)``; a
    spatial size ``n`` becomes ``n * stride`` ('same') or ``n * stride + max(k - stride,
    0)`` ('valid'), or follows `output_padding`. TF's config has no ``dilation_rate``."""

    _config_omits = ("dilation_rate",)

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)
        if any(d != 1 for d in self.dilation_rate):
            raise ValueError(f"Conv3DTranspose ({self.name}): dilation_rate "
                             f"{self.dilation_rate} is not supported; TensorFlow's "
                             f"Conv3DTranspose has no dilation either.")
        self.output_padding = check_output_padding(output_padding, self.strides,
                                                   "Conv3DTranspose")

    def get_config(self) -> dict:
        config = {**super().get_config(), "output_padding": self.output_padding}
        config.pop("dilation_rate")
        return config

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def call(self, inputs):
        out_shape, known = deconv_output_shape(
            inputs, self.filters, self.kernel_size, self.strides, self.padding,
            self.data_format, self.output_padding)
        out = nn_conv3d_ops.conv3d_transpose(
            inputs, self.kernel, out_shape, list(self.strides),
            padding=self.padding.upper(), data_format=self._fmt())
        out.set_shape(known)
        return _bias_and_activation(self, out)


class MaxPooling3D(MaxPooling2D):
    """Max over ``pool_size`` boxes (depth, height, width) moved by `strides`."""

    _rank = 3
    _pool = staticmethod(nn_conv3d_ops.max_pool3d)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs) -> None:
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling3D(MaxPooling3D):
    """Mean over ``pool_size`` boxes (depth, height, width) moved by `strides`."""

    _pool = staticmethod(nn_conv3d_ops.avg_pool3d)


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over the three spatial axes."""

    _axes = [1, 2, 3]
    _reduce = staticmethod(math_reduce.reduce_mean)


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over the three spatial axes."""

    _axes = [1, 2, 3]
    _reduce = staticmethod(math_reduce.reduce_max)


# -- 1-D on an inserted axis --------------------------------------------------------------------
class _OnInsertedAxis:
    """A 1-D layer that runs its 2-D parent's op on ``(batch, 1, steps, channels)``
    (channels first: ``(batch, channels, 1, steps)``), with kernels expanded the same
    way, and squeezes the inserted axis away."""

    _rank = 1

    def _axis(self) -> int:
        return 1 if self.data_format == "channels_last" else 2

    def _fmt(self) -> str:
        return "NHWC" if self.data_format == "channels_last" else "NCHW"

    def _spatial(self, pair) -> list[int]:
        return super()._spatial((1, *pair))

    def _run_2d(self, inputs, run):
        """``squeeze(run(expand(inputs), expand_kernel))``."""
        axis = self._axis()
        x = array_shape_ops.expand_dims(inputs, axis)
        out = run(x, lambda k: array_shape_ops.expand_dims(k, 0))
        out = array_shape_ops.squeeze(out, [axis])
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias, data_format=self._fmt())
        return self.activation(out)


class Conv1DTranspose(_OnInsertedAxis, Conv2DTranspose):
    """Transposed 1-D convolution of ``(batch, steps, channels)``: kernel
    ``(k, filters, in_channels)``."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         output_padding=output_padding, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)

    def call(self, inputs):
        def run(x, expand):
            pads = None if self.output_padding is None else (0, *self.output_padding)
            out_shape, known = deconv_output_shape(
                x, self.filters, (1, *self.kernel_size), (1, *self.strides), self.padding,
                self.data_format, pads, (1, *self.dilation_rate))
            out = nn_conv_ops.conv2d_transpose(
                x, expand(self.kernel), out_shape, self._spatial(self.strides),
                padding=self.padding.upper(), data_format=self._fmt(),
                dilations=self._spatial(self.dilation_rate))
            out.set_shape(known)
            return out

        return self._run_2d(inputs, run)


class SeparableConv1D(_OnInsertedAxis, SeparableConv2D):
    """Depthwise then pointwise 1-D convolution: ``depthwise_kernel``
    ``(k, in, depth_multiplier)``, ``pointwise_kernel`` ``(1, in * multiplier,
    filters)``."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         depth_multiplier=depth_multiplier, **kwargs)

    def call(self, inputs):
        def run(x, expand):
            return nn_conv_ops.separable_conv2d(
                x, expand(self.depthwise_kernel), expand(self.pointwise_kernel),
                self._spatial(self.strides), self.padding.upper(),
                rate=[1, *self.dilation_rate], data_format=self._fmt())

        return self._run_2d(inputs, run)


class DepthwiseConv1D(_OnInsertedAxis, DepthwiseConv2D):
    """Depthwise 1-D convolution: ``depthwise_kernel`` ``(k, in, depth_multiplier)``,
    output channels ``in * depth_multiplier``."""

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, **kwargs) -> None:
        super().__init__(kernel_size, strides=strides, padding=padding,
                         depth_multiplier=depth_multiplier, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)

    def call(self, inputs):
        def run(x, expand):
            return nn_ops.depthwise_conv2d(x, expand(self.depthwise_kernel),
                                           self._spatial(self.strides), self.padding.upper(),
                                           rate=[1, *self.dilation_rate],
                                           data_format=self._fmt())

        return self._run_2d(inputs, run)
