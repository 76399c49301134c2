"""`tf.layers` transposed and separable convolutions: `conv2d_transpose`,
`separable_conv2d` and their classes.

`Conv2DTranspose` keeps ``<scope>/kernel`` of shape ``(kh, kw, filters, in_channels)``
(the kernel of the convolution it transposes) and maps a spatial size ``n`` to
``n * stride`` ('same') or ``n * stride + max(k - stride, 0)`` ('valid'), with dilation
``k`` meaning the dilated extent; an unknown size stays unknown statically and is computed
at run time. `SeparableConv2D` keeps ``depthwise_kernel`` ``(kh, kw, in, multiplier)``
and ``pointwise_kernel`` ``(1, 1, in * multiplier, filters)``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 7, 7, 16])
...     print(tf.layers.conv2d_transpose(x, 8, 3, strides=2, padding="same").shape)
(?, 14, 14, 8)
"""

from __future__ import annotations

import copy

from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers.convolutional import _Conv
from flowgraph.layers.core import normalize_tuple
from flowgraph.ops import array_join_ops, array_shape_ops, nn_conv_ops

__all__ = [
    "Conv2DTranspose",
    "SeparableConv2D",
    "check_output_padding",
    "conv2d_transpose",
    "deconv_output_length",
    "deconv_output_shape",
    "separable_conv2d",
]


def deconv_output_length(length, kernel_size: int, padding: str, stride: int,
                         output_padding=None, dilation: int = 1):
    """Spatial size after a transposed convolution (an int, a Tensor, or None)."""
    if length is None:
        return None
    k = (kernel_size - 1) * dilation + 1
    if output_padding is None:
        if padding == "same":
            return length * stride
        return length * stride + max(k - stride, 0)
    pad = k // 2 if padding == "same" else 0
    return (length - 1) * stride + k - 2 * pad + output_padding


def deconv_output_shape(inputs, filters: int, kernel_size, strides, padding: str,
                        data_format: str, output_padding=None, dilation_rate=None):
    """The output shape of a transposed convolution of `inputs`: a 1-D int32 Tensor
    (the ``output_shape`` argument of ``tf.nn.conv2d_transpose`` / ``conv3d_transpose``)
    and the `TensorShape` known statically. Each spatial size follows
    `deconv_output_length`; a size unknown statically is computed from the input's
    dynamic shape.

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 4, None, 3])
    ...     dims, known = deconv_output_shape(x, 2, (3, 3), (2, 2), "valid",
    ...                                       "channels_last")
    ...     print(known, tf.Session().run(dims, {x: np.zeros((5, 4, 6, 3))}))
    (?, 9, ?, 2) [ 5  9 13  2]
    """
    rank = len(kernel_size)
    last = data_format == "channels_last"
    axes = range(1, rank + 1) if last else range(2, rank + 2)
    pads = [None] * rank if output_padding is None else output_padding
    dilations = [1] * rank if dilation_rate is None else dilation_rate
    dyn = array_shape_ops.shape(inputs)
    static = inputs.shape
    sizes, known = [], []
    for i, a in enumerate(axes):
        args = (kernel_size[i], padding, strides[i], pads[i], dilations[i])
        n = static[a].value
        known.append(deconv_output_length(n, *args))
        sizes.append(known[-1] if n is not None else deconv_output_length(dyn[a], *args))
    dims = [dyn[0], *sizes, filters] if last else [dyn[0], filters, *sizes]
    known = [static[0], *known, filters] if last else [static[0], filters, *known]
    return array_join_ops.stack(dims), TensorShape(known)


def check_output_padding(output_padding, strides, what: str):
    """`output_padding` (None, an int or a pair) as a pair, each entry below its stride.

    >>> check_output_padding(1, (2, 2), "Conv2DTranspose")
    (1, 1)
    >>> check_output_padding((0, 2), (2, 2), "Conv2DTranspose")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Conv2DTranspose: output_padding (0, 2) must be smaller than strides (2, 2)...
    """
    if output_padding is None:
        return None
    output_padding = normalize_tuple(output_padding, len(strides), "output_padding")
    if any(p >= s for p, s in zip(output_padding, strides)):
        raise ValueError(f"{what}: output_padding {output_padding} must be smaller than "
                         f"strides {strides} in each dimension")
    return output_padding


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution layer; see `conv2d_transpose`.

    `output_padding` (int or pair, each less than its stride) adds rows/columns at the
    far end, choosing among the output sizes that convolve back to the input size.
    """

    rank = 2

    # TF 1.x's positional order; `output_padding` and `dilation_rate` (Keras's) come last.
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias: bool = True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable: bool = True, name=None,
                 output_padding=None, dilation_rate=(1, 1), **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        self.output_padding = check_output_padding(output_padding, self.strides,
                                                   self._base_name)

    _rank_error = "Inputs should have rank {want}. Received input shape: {shape}"

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]
    def _convolve(self, inputs):
        last = self.data_format == "channels_last"
        out_shape, known = deconv_output_shape(
            inputs, self.filters, self.kernel_size, self.strides, self.padding,
            self.data_format, self.output_padding, self.dilation_rate)
        fmt = "NHWC" if last else "NCHW"
        spatial = [1, *self.strides, 1] if last else [1, 1, *self.strides]
        dil = [1, *self.dilation_rate, 1] if last else [1, 1, *self.dilation_rate]
        y = nn_conv_ops.conv2d_transpose(inputs, self.kernel, out_shape, spatial,
                                         padding=self.padding.upper(), data_format=fmt,
                                         dilations=dil, name="conv2d_transpose")
        y.set_shape(known)
        return y


class SeparableConv2D(_Conv):
    """Depthwise-separable 2-D convolution layer; see `separable_conv2d`."""

    rank = 2
    # Keras's separable layers keep an unused `kernel_*` trio, at the Conv defaults
    _unused_kernel = {"kernel_initializer": {"class_name": "GlorotUniform",
                                             "config": {"seed": None, "dtype": "float32"}},
                      "kernel_regularizer": None, "kernel_constraint": None}
    _config_only = {"groups": 1, **_unused_kernel}

    def get_config(self) -> dict:
        return {**super().get_config(), **copy.deepcopy(self._unused_kernel)}

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                 activation=None, use_bias: bool = True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None,
                 depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable: bool = True,
                 name=None, **kwargs) -> None:
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        if not isinstance(depth_multiplier, int) or depth_multiplier < 1:
            raise ValueError(f"{self._base_name}: depth_multiplier must be a positive integer,"
                             f" got {depth_multiplier!r}")
        self.depth_multiplier = depth_multiplier
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    _rank_error = ("Inputs to `{name}` should have rank {want}. Received input shape: "
                   "{shape}")
    _channel_error = ("The channel dimension of the inputs to `{name}` should be defined. "
                      "Found `None` (input shape {shape}).")

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        ones = [1] * self.rank
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [*ones, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._add_bias()
    def _convolve(self, inputs):
        last = self.data_format == "channels_last"
        strides = [1, *self.strides, 1] if last else [1, 1, *self.strides]
        return nn_conv_ops.separable_conv2d(
            inputs, self.depthwise_kernel, self.pointwise_kernel, strides,
            self.padding.upper(), rate=list(self.dilation_rate),
            data_format="NHWC" if last else "NCHW", name="separable_conv2d")


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias: bool = True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable: bool = True, name=None, reuse=None):
    """Transposed 2-D convolution layer (deconvolution): upsamples by `strides`.

    Parameters are those of `tf.layers.conv2d` (without `dilation_rate`); the kernel is
    ``(kh, kw, filters, in_channels)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 4, 5, 3])
    ...     print(tf.layers.conv2d_transpose(x, 2, (3, 2), strides=(2, 3)).shape)
    (?, 9, 15, 2)
    """
    layer = Conv2DTranspose(filters, kernel_size, strides=strides, padding=padding,
                            data_format=data_format, activation=activation,
                            use_bias=use_bias, kernel_initializer=kernel_initializer,
                            bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer,
                            bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer,
                            kernel_constraint=kernel_constraint,
                            bias_constraint=bias_constraint, trainable=trainable, name=name,
                            _scope=name, _reuse=reuse)
    return layer.apply(inputs)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias: bool = True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable: bool = True, name=None, reuse=None):
    """Depthwise-separable 2-D convolution layer: a depthwise convolution with
    `depth_multiplier` filters per input channel, then a 1x1 convolution to `filters`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    ...     y = tf.layers.separable_conv2d(x, 5, 3, depth_multiplier=2, padding="same")
    ...     print(y.shape, [v.shape.as_list() for v in tf.trainable_variables()])
    (?, 8, 8, 5) [[3, 3, 3, 2], [1, 1, 6, 5], [5]]
    """
    layer = SeparableConv2D(filters, kernel_size, strides=strides, padding=padding,
                            data_format=data_format, dilation_rate=dilation_rate,
                            depth_multiplier=depth_multiplier, activation=activation,
                            use_bias=use_bias, depthwise_initializer=depthwise_initializer,
                            pointwise_initializer=pointwise_initializer,
                            bias_initializer=bias_initializer,
                            depthwise_regularizer=depthwise_regularizer,
                            pointwise_regularizer=pointwise_regularizer,
                            bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer,
                            depthwise_constraint=depthwise_constraint,
                            pointwise_constraint=pointwise_constraint,
                            bias_constraint=bias_constraint, trainable=trainable, name=name,
                            _scope=name, _reuse=reuse)
    return layer.apply(inputs)
