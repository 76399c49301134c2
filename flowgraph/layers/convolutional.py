"""`tf.layers` convolution and pooling: `conv1d`, `conv2d`, `max_pooling1d/2d`,
`average_pooling1d/2d`.

Kernels are ``<scope>/kernel`` of shape ``kernel_size + (in_channels, filters)`` (Glorot
uniform by default, whose fans count the receptive field: ``fan_in = kh*kw*in``) and
``<scope>/bias`` of shape ``(filters,)``. Padding is 'valid' or 'same' (Conv1D also
'causal': left padding only); `data_format` is 'channels_last' (NWC / NHWC) or
'channels_first'. The 1-D layers run the 2-D ops on an inserted axis, as TensorFlow does.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 28, 28, 1])
...     h = tf.layers.conv2d(x, 8, 3, padding="same", activation=tf.nn.relu)
...     p = tf.layers.max_pooling2d(h, 2, 2)
...     print(h.shape, p.shape, tf.global_variables()[0].shape)
(?, 28, 28, 8) (?, 14, 14, 8) (3, 3, 1, 8)
"""

from __future__ import annotations

from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers.core import (
    Layer,
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
)
from flowgraph.layers.layer_api import serialize_activation, serialize_initializer
from flowgraph.ops import array_join_ops, array_shape_ops, init_ops, nn_ops
from flowgraph.ops.nn_space_to_batch import dilated_by_space_to_batch

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "Conv1D",
    "Conv2D",
    "MaxPooling1D",
    "MaxPooling2D",
    "average_pooling1d",
    "average_pooling2d",
    "conv1d",
    "conv2d",
    "max_pooling1d",
    "max_pooling2d",
]


class _Conv(Layer):
    """N-D convolution layer (N = 1 or 2)."""

    rank = 2
    _computes_output_shape = True
    _config_only = {"groups": 1}

    def get_config(self) -> dict:
        config = {**super().get_config(), "filters": self.filters,
                  "kernel_size": self.kernel_size, "strides": self.strides,
                  "padding": self.padding, "data_format": self.data_format,
                  "dilation_rate": self.dilation_rate, "groups": 1,
                  "activation": serialize_activation(self.activation),
                  "use_bias": self.use_bias,
                  "kernel_initializer": serialize_initializer(self.kernel_initializer),
                  "bias_initializer": serialize_initializer(self.bias_initializer),
                  "kernel_regularizer": serialize_initializer(self.kernel_regularizer),
                  "bias_regularizer": serialize_initializer(self.bias_regularizer),
                  "activity_regularizer": serialize_initializer(self.activity_regularizer),
                  "kernel_constraint": serialize_initializer(self.kernel_constraint),
                  "bias_constraint": serialize_initializer(self.bias_constraint)}
        if hasattr(self, "output_padding"):
            config["output_padding"] = self.output_padding
        if hasattr(self, "depth_multiplier"):
            config["depth_multiplier"] = self.depth_multiplier
            for part in ("depthwise", "pointwise"):
                for what in ("initializer", "regularizer", "constraint"):
                    value = getattr(self, f"{part}_{what}", None)
                    config[f"{part}_{what}"] = serialize_initializer(value)
        return config

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias: bool = True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable: bool = True,
                 name=None, **kwargs) -> None:
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"{self._base_name}: `filters` must be a positive integer, got "
                             f"{filters!r}.")
        self.filters = filters
        self.kernel_size = normalize_tuple(kernel_size, n, "kernel_size")
        self.strides = normalize_tuple(strides, n, "strides")
        self.padding = normalize_padding(padding, allow_causal=n == 1)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, n, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer or init_ops.zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    # The wording of the two input errors; subclasses keep TensorFlow's own wording.
    _rank_error = ("Input 0 of layer {layer} is incompatible with the layer: expected "
                   "ndim={want}, found ndim={found}. Full shape received: {shape}")
    _channel_error = ("The channel dimension of the inputs should be defined. Found `None` "
                      "(input shape {shape}, data_format {data_format}).")

    def _input_channels(self, input_shape) -> int:
        """The input's channel count, after checking its rank (ValueError otherwise)."""
        input_shape = TensorShape(input_shape)
        want = self.rank + 2
        fields = {"layer": self._base_name, "name": type(self).__name__, "want": want,
                  "found": input_shape.ndims, "shape": input_shape,
                  "data_format": self.data_format}
        if input_shape.ndims != want:
            raise ValueError(self._rank_error.format(**fields))
        channels = input_shape[self._channel_axis()].value
        if channels is None:
            raise ValueError(self._channel_error.format(**fields))
        return channels

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, channels, self.filters]

    def _add_bias(self) -> None:
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters],
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight("kernel", self._kernel_shape(channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self._add_bias()

    def _convolve(self, inputs):
        fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
        rate = list(self.dilation_rate)
        if rate == [1, 1] or fmt != "NHWC" or list(self.strides) != [1, 1]:
            return nn_ops.conv2d(inputs, self.kernel, strides=list(self.strides),
                                 padding=self.padding.upper(), data_format=fmt,
                                 dilations=rate, name="Conv2D")
        from flowgraph.framework.graph import name_scope

        # As TensorFlow: SpaceToBatchND, the undilated Conv2D, BatchToSpaceND.
        with name_scope("Conv2D") as scope:
            return dilated_by_space_to_batch(
                inputs, rate, self.padding.upper(), self.kernel.shape.as_list(),
                lambda t, pad: nn_ops.conv2d(t, self.kernel, strides=[1, 1], padding=pad,
                                             name=scope))

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.use_bias:
            fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=fmt)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


class Conv2D(_Conv):
    """2-D convolution layer; see `conv2d`."""

    rank = 2


class Conv1D(_Conv):
    """1-D convolution layer; see `conv1d`."""

    rank = 1

    def _convolve(self, inputs):
        from flowgraph.framework.graph import name_scope

        last = self.data_format == "channels_last"
        if self.padding == "causal":
            pad = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            paddings = [[0, 0], [pad, 0], [0, 0]] if last else [[0, 0], [0, 0], [pad, 0]]
            inputs = array_join_ops.pad(inputs, paddings)
        padding = "VALID" if self.padding == "causal" else self.padding.upper()
        with name_scope("Conv1D") as scope:
            def conv(t, pad, rate):
                # [N, W, C] -> [N, 1, W, C] (NCW -> NC1W) and [k, C, F] -> [1, k, C, F].
                x = array_shape_ops.expand_dims(t, 1 if last else 2)
                k = array_shape_ops.expand_dims(self.kernel, 0)
                y = nn_ops.conv2d(x, k, strides=[1, self.strides[0]], padding=pad,
                                  data_format="NHWC" if last else "NCHW",
                                  dilations=[1, rate], name=scope)
                return array_shape_ops.squeeze(y, [1 if last else 2])

            rate = self.dilation_rate[0]
            if rate == 1 or not last or self.strides[0] != 1:
                return conv(inputs, padding, rate)
            # As TensorFlow: a dilated convolution is SpaceToBatchND, the undilated
            # convolution, BatchToSpaceND.
            return dilated_by_space_to_batch(inputs, [rate], padding,
                                             self.kernel.shape.as_list(),
                                             lambda t, pad: conv(t, pad, 1))

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(
                outputs, self.bias,
                data_format="NHWC" if self.data_format == "channels_last" else "NCHW")
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None,
           use_bias: bool = True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable: bool = True, name=None,
           reuse=None):
    """2-D convolution layer: ``activation(conv2d(inputs, kernel) + bias)``.

    Parameters
    ----------
    inputs : Tensor
        ``[batch, height, width, channels]`` (channels_last) or ``[batch, channels,
        height, width]``; the channel dimension must be known.
    filters : int
        Number of output channels.
    kernel_size, strides, dilation_rate : int or pair of ints
    padding : 'valid' or 'same' (case-insensitive)
    kernel_initializer, bias_initializer, ..._regularizer, name, reuse :
        As for `dense`; variables ``conv2d/kernel``, ``conv2d/bias``, then ``conv2d_1/...``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 7, 9, 3])
    ...     print(tf.layers.conv2d(x, 4, (2, 3), strides=2).shape)
    (?, 3, 4, 4)
    """
    layer = Conv2D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate,
                   activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None,
           use_bias: bool = True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable: bool = True, name=None,
           reuse=None):
    """1-D convolution layer over ``[batch, width, channels]`` (or channels_first).
    `padding` may also be 'causal' (output t sees inputs <= t only).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 10, 3])
    ...     print(tf.layers.conv1d(x, 4, 3, dilation_rate=2).shape)
    (?, 6, 4)
    """
    layer = Conv1D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate,
                   activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


# -- pooling -------------------------------------------------------------------------------
class _Pooling(Layer):
    rank = 2
    op_name = "max"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        if strides is None:
            raise ValueError(f"{self._base_name}: `strides` must be given (an int or "
                             f"{self.rank} ints).")
        self.pool_size = normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)

    _computes_output_shape = True

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size,
                "padding": self.padding, "strides": self.strides,
                "data_format": self.data_format}

    def call(self, inputs):
        want = self.rank + 2
        if inputs.shape.ndims is not None and inputs.shape.ndims != want:
            raise ValueError(f"Input 0 of layer {self._base_name} is incompatible with the "
                             f"layer: expected ndim={want}, found ndim={inputs.shape.ndims}. "
                             f"Full shape received: {inputs.shape}")
        last = self.data_format == "channels_last"
        pool, strides = self.pool_size, self.strides
        x = inputs
        if self.rank == 1:
            x = array_shape_ops.expand_dims(x, 1 if last else 2)
            pool, strides = (1, *pool), (1, *strides)
        fn = nn_ops.max_pool if self.op_name == "max" else nn_ops.avg_pool
        fmt = "NHWC" if last else "NCHW"
        y = fn(x, list(pool), list(strides), self.padding.upper(), data_format=fmt)
        if self.rank == 1:
            y = array_shape_ops.squeeze(y, [1 if last else 2])
        return y


class MaxPooling2D(_Pooling):
    """2-D max pooling layer; see `max_pooling2d`."""


class AveragePooling2D(_Pooling):
    """2-D average pooling layer; see `average_pooling2d`."""

    op_name = "avg"


class MaxPooling1D(_Pooling):
    """1-D max pooling layer; see `max_pooling1d`."""

    rank = 1


class AveragePooling1D(_Pooling):
    """1-D average pooling layer; see `average_pooling1d`."""

    rank = 1
    op_name = "avg"


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max over ``pool_size`` windows moved by `strides` ('valid' or 'same' padding).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 5, 7, 2])
    ...     print(tf.layers.max_pooling2d(x, 2, 2).shape)
    (?, 2, 3, 2)
    """
    return MaxPooling2D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Mean over ``pool_size`` windows; with 'same' padding each window divides by its
    count of real (non-padding) elements.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 5, 7, 2])
    ...     print(tf.layers.average_pooling2d(x, 2, 2, padding="same").shape)
    (?, 3, 4, 2)
    """
    return AveragePooling2D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """1-D max pooling over ``[batch, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.layers.max_pooling1d(tf.ones([2, 9, 3]), 2, 2).shape)
    (2, 4, 3)
    """
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """1-D average pooling over ``[batch, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.layers.average_pooling1d(tf.ones([2, 9, 3]), 3, 1, "same").shape)
    (2, 9, 3)
    """
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name).apply(inputs)
