"""`tf.layers` 3-D convolution and pooling (`conv3d`, `conv3d_transpose`,
`max_pooling3d`, `average_pooling3d`) and the 1-D separable convolution
(`separable_conv1d`), with their classes.

The 3-D layers run `tf.nn.conv3d` / `conv3d_transpose` / `max_pool3d` / `avg_pool3d`
(TF's ``Conv3D``, ``Conv3DBackpropInputV2``, ``MaxPool3D`` and ``AvgPool3D`` ops).
`Conv3D`'s kernel is ``(kd, kh, kw, in_channels, filters)``, `Conv3DTranspose`'s
``(kd, kh, kw, filters, in_channels)``. `SeparableConv1D` runs the 2-D separable
convolution on an inserted axis of length 1, as TensorFlow does.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 8, 16, 16, 1])
...     h = tf.layers.conv3d(x, 4, 3, padding="same", activation=tf.nn.relu)
...     print(h.shape, tf.layers.max_pooling3d(h, 2, 2).shape)
(?, 8, 16, 16, 4) (?, 4, 8, 8, 4)
"""

from __future__ import annotations

from flowgraph.layers.convolutional import _Conv, _Pooling
from flowgraph.layers.convolutional_extra import SeparableConv2D, deconv_output_shape
from flowgraph.ops import array_join_ops, array_shape_ops, nn_conv3d_ops, nn_conv_ops

__all__ = [
    "AveragePooling3D",
    "Conv3D",
    "Conv3DTranspose",
    "MaxPooling3D",
    "SeparableConv1D",
    "average_pooling3d",
    "conv3d",
    "conv3d_transpose",
    "max_pooling3d",
    "separable_conv1d",
]


def _fmt(data_format: str) -> str:
    return "NDHWC" if data_format == "channels_last" else "NCDHW"


class Conv3D(_Conv):
    """3-D convolution layer; see `conv3d`."""

    rank = 3

    def _convolve(self, inputs):
        return nn_conv3d_ops.conv3d(inputs, self.kernel, list(self.strides),
                                    self.padding.upper(), data_format=_fmt(self.data_format),
                                    dilations=list(self.dilation_rate), name="Conv3D")

    def call(self, inputs):
        from flowgraph.ops import nn_ops

        outputs = self._convolve(inputs)
        if self.use_bias:
            if self.data_format == "channels_first":
                outputs = outputs + array_shape_ops.reshape(self.bias, [1, -1, 1, 1, 1])
            else:
                outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


class Conv3DTranspose(Conv3D):
    """Transposed 3-D convolution layer; see `conv3d_transpose`. Each spatial size ``n``
    becomes ``n * stride`` ('same') or ``n * stride + max(k - stride, 0)`` ('valid')."""

    _rank_error = "Inputs should have rank {want}. Received input shape: {shape}"
    # Keras's config: `output_padding` (only None here), no `dilation_rate`
    _config_only = {"groups": 1, "output_padding": None}

    def get_config(self) -> dict:
        config = super().get_config()
        del config["dilation_rate"]
        return {**config, "output_padding": None}

    # TF 1.x's positional order (no dilation: `dilation_rate` stays keyword-only).
    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias: bool = True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable: bool = True, name=None,
                 **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def _convolve(self, inputs):
        out_shape, _ = deconv_output_shape(inputs, self.filters, self.kernel_size,
                                           self.strides, self.padding, self.data_format)
        return nn_conv3d_ops.conv3d_transpose(
            inputs, self.kernel, out_shape, list(self.strides),
            padding=self.padding.upper(), data_format=_fmt(self.data_format),
            name="conv3d_transpose")


class _Pooling3D(_Pooling):
    rank = 3

    def call(self, inputs):
        fn = nn_conv3d_ops.max_pool3d if self.op_name == "max" else nn_conv3d_ops.avg_pool3d
        return fn(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                  data_format=_fmt(self.data_format))


class MaxPooling3D(_Pooling3D):
    """3-D max pooling layer; see `max_pooling3d`."""


class AveragePooling3D(_Pooling3D):
    """3-D average pooling layer; see `average_pooling3d`."""

    op_name = "avg"


class SeparableConv1D(SeparableConv2D):
    """Depthwise-separable 1-D convolution layer; see `separable_conv1d`."""

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, *args, **kwargs) -> None:
        # SeparableConv2D's arguments, with 1-D defaults for the stride and dilation.
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         *args, **kwargs)

    def _convolve(self, inputs):
        last = self.data_format == "channels_last"
        axis = 1 if last else 2
        padding = self.padding
        if padding == "causal":
            pad = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs = array_join_ops.pad(
                inputs, [[0, 0], [pad, 0], [0, 0]] if last else [[0, 0], [0, 0], [pad, 0]])
            padding = "valid"
        x = array_shape_ops.expand_dims(inputs, axis)
        dw = array_shape_ops.expand_dims(self.depthwise_kernel, 0)
        pw = array_shape_ops.expand_dims(self.pointwise_kernel, 0)
        strides = [1, 1, self.strides[0], 1] if last else [1, 1, 1, self.strides[0]]
        y = nn_conv_ops.separable_conv2d(x, dw, pw, strides, padding.upper(),
                                         rate=[1, self.dilation_rate[0]],
                                         data_format="NHWC" if last else "NCHW",
                                         name="separable_conv1d")
        return array_shape_ops.squeeze(y, [axis])


def _layer_args(kwargs: dict, name, reuse) -> dict:
    return {**kwargs, "name": name, "_scope": name, "_reuse": reuse}


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
           use_bias: bool = True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable: bool = True, name=None,
           reuse=None):
    """3-D convolution layer over ``[batch, depth, height, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 6, 7, 8, 2])
    ...     print(tf.layers.conv3d(x, 3, (3, 2, 2), strides=2).shape)
    (?, 2, 3, 4, 3)
    """
    layer = Conv3D(filters, kernel_size, **_layer_args(dict(
        strides=strides, padding=padding, data_format=data_format,
        dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
        kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint, trainable=trainable), name, reuse))
    return layer.apply(inputs)


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias: bool = True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable: bool = True, name=None, reuse=None):
    """Transposed 3-D convolution layer: upsamples depth, height and width by `strides`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 2, 3, 4, 5])
    ...     print(tf.layers.conv3d_transpose(x, 2, 3, strides=2, padding="same").shape)
    (?, 4, 6, 8, 2)
    """
    layer = Conv3DTranspose(filters, kernel_size, **_layer_args(dict(
        strides=strides, padding=padding, data_format=data_format, activation=activation,
        use_bias=use_bias, kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
        trainable=trainable), name, reuse))
    return layer.apply(inputs)


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max over ``pool_size`` boxes moved by `strides`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.layers.max_pooling3d(tf.zeros([1, 4, 5, 6, 2]), 2, 2).shape)
    (1, 2, 2, 3, 2)
    """
    return MaxPooling3D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Mean over ``pool_size`` boxes moved by `strides`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.layers.average_pooling3d(tf.zeros([1, 4, 5, 6, 2]), 2, 2,
    ...                                       padding="same").shape)
    (1, 2, 3, 3, 2)
    """
    return AveragePooling3D(pool_size, strides, padding, data_format,
                            name=name).apply(inputs)


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
                     data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                     activation=None, use_bias: bool = True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable: bool = True, name=None, reuse=None):
    """Depthwise-separable 1-D convolution layer over ``[batch, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 10, 3])
    ...     print(tf.layers.separable_conv1d(x, 4, 3, depth_multiplier=2).shape)
    (?, 8, 4)
    """
    layer = SeparableConv1D(filters, kernel_size, **_layer_args(dict(
        strides=strides, padding=padding, data_format=data_format,
        dilation_rate=dilation_rate, depth_multiplier=depth_multiplier,
        activation=activation, use_bias=use_bias, depthwise_initializer=depthwise_initializer,
        pointwise_initializer=pointwise_initializer, bias_initializer=bias_initializer,
        depthwise_regularizer=depthwise_regularizer,
        pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer, depthwise_constraint=depthwise_constraint,
        pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint,
        trainable=trainable), name, reuse))
    return layer.apply(inputs)
