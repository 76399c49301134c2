"""Keras cropping, zero padding and up-sampling over 1 and 3 spatial axes, and the
locally connected layers (graph mode): `Cropping1D`, `Cropping3D`, `ZeroPadding1D`,
`ZeroPadding3D`, `UpSampling1D`, `UpSampling3D`, `LocallyConnected1D`,
`LocallyConnected2D`; re-exported by `flowgraph.keras.layers`.

A locally connected layer is a convolution whose weights differ at each output
position: ``kernel`` ``(positions, kernel_size * in_channels, filters)`` and ``bias``
``(*output_spatial_shape, filters)``. As TensorFlow's first implementation, each
position's patch is sliced and flattened (row-major over the window, then channels),
the patches stacked to ``(positions, batch, features)`` and multiplied by the kernel in
one batched matmul.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((6, 2))
...     layer = keras.layers.LocallyConnected1D(3, 2)
...     print(layer(keras.layers.ZeroPadding1D(1)(x)).shape, layer.kernel.shape)
(?, 7, 3) (7, 4, 3)
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from flowgraph.keras import constraints as _constraints
from flowgraph.keras.layers import Layer, _check_ndim, _data_format, get_activation
from flowgraph.layers.core import normalize_padding, normalize_tuple
from flowgraph.ops import array_join_ops, array_shape_ops, math_ops

__all__ = [
    "Cropping1D",
    "Cropping3D",
    "LocallyConnected1D",
    "LocallyConnected2D",
    "UpSampling1D",
    "UpSampling3D",
    "ZeroPadding1D",
    "ZeroPadding3D",
]


def _pairs(value, rank: int, what: str, layer: str) -> tuple:
    """`value` (an int, or `rank` entries, each an int or a pair) as `rank` (before, after)
    pairs."""
    if isinstance(value, numbers.Integral):
        return ((int(value), int(value)),) * rank
    items = tuple(value)
    if rank == 1:
        return (normalize_tuple(items, 2, what),)
    if len(items) != rank:
        raise ValueError(f"{layer}: `{what}` should have {rank} elements (an int or a pair "
                         f"each). Received: {value!r}")
    ordinal = ("1st", "2nd", "3rd")
    return tuple(normalize_tuple(v, 2, f"{ordinal[i]} entry of {what}")
                 for i, v in enumerate(items))


def _spatial_axes(layer) -> list[int]:
    """The spatial axes of `layer`'s ``rank + 2``-D input."""
    first = getattr(layer, "data_format", "channels_last") == "channels_first"
    return list(range(2, layer._rank + 2)) if first else list(range(1, layer._rank + 1))


class _StepsConfig:
    """The config of a 1-D layer built on its 3-D base (``ZeroPadding1D``,
    ``Cropping1D``, ``UpSampling1D``): TF's has no ``data_format`` and gives
    ``_steps_arg`` as its one entry."""

    _config_omits = ("data_format",)
    _steps_arg: str

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("data_format")
        return {**config, self._steps_arg: getattr(self, self._steps_arg)[0]}


# -- padding, cropping ------------------------------------------------------------------------
class ZeroPadding3D(Layer):
    """Add zeros before and after each spatial axis: an int, one int per axis, or one
    ``(before, after)`` pair per axis."""

    _rank = 3

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.padding = _pairs(padding, self._rank, "padding", type(self).__name__)
        self.data_format = _data_format(data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": self.padding,
                "data_format": self.data_format}

    def call(self, inputs):
        _check_ndim(self, inputs.shape, ndim=self._rank + 2)
        pads = [[0, 0]] * (self._rank + 2)
        for axis, pair in zip(_spatial_axes(self), self.padding, strict=True):
            pads[axis] = list(pair)
        return array_join_ops.pad(inputs, pads)


class ZeroPadding1D(_StepsConfig, ZeroPadding3D):
    """Add zeros at the start and the end of the steps axis (an int or a pair)."""

    _rank = 1
    _steps_arg = "padding"

    def __init__(self, padding=1, **kwargs) -> None:
        super().__init__(padding, data_format="channels_last", **kwargs)


class Cropping3D(Layer):
    """Remove entries at the borders of each spatial axis (same forms as
    `ZeroPadding3D`)."""

    _rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, self._rank, "cropping", type(self).__name__)
        self.data_format = _data_format(data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": self.cropping,
                "data_format": self.data_format}

    def call(self, inputs):
        shape = _check_ndim(self, inputs.shape, ndim=self._rank + 2)
        index = [slice(None)] * (self._rank + 2)
        for axis, (before, after) in zip(_spatial_axes(self), self.cropping, strict=True):
            size = shape[axis].value
            if size is not None and before + after >= size:
                raise ValueError(f"{type(self).__name__} ({self.name}): cropping "
                                 f"{(before, after)} removes all {size} entries of axis "
                                 f"{axis} (input shape {shape})")
            index[axis] = slice(before, -after if after else None)
        return inputs[tuple(index)]


class Cropping1D(_StepsConfig, Cropping3D):
    """Remove steps at the start and the end (an int or a pair)."""

    _rank = 1
    _steps_arg = "cropping"

    def __init__(self, cropping=(1, 1), **kwargs) -> None:
        super().__init__(cropping, data_format="channels_last", **kwargs)


# -- up-sampling --------------------------------------------------------------------------------
def repeat_along(x, rep: int, axis: int):
    """Each entry of `x` along `axis` `rep` times (``np.repeat``): TensorFlow's Split ->
    ConcatV2 when the axis's size is known."""
    size = x.shape[axis].value
    if rep == 1:
        return x
    if size is None:
        from flowgraph.keras.backend_ops import repeat_elements

        return repeat_elements(x, rep, axis)
    parts = array_join_ops.split(x, size, axis=axis) if size > 1 else [x]
    return array_join_ops.concat([p for p in parts for _ in range(rep)], axis)


class UpSampling3D(Layer):
    """Repeat the entries of each spatial axis `size` times (nearest neighbour)."""

    _rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.size = normalize_tuple(size, self._rank, "size")
        self.data_format = _data_format(data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}

    def call(self, inputs):
        _check_ndim(self, inputs.shape, ndim=self._rank + 2)
        out = inputs
        for axis, rep in zip(_spatial_axes(self), self.size, strict=True):
            out = repeat_along(out, rep, axis)
        return out


class UpSampling1D(_StepsConfig, UpSampling3D):
    """Repeat each step `size` times."""

    _rank = 1
    _steps_arg = "size"

    def __init__(self, size=2, **kwargs) -> None:
        super().__init__(size, data_format="channels_last", **kwargs)


# -- locally connected ----------------------------------------------------------------------------
class LocallyConnected2D(Layer):
    """A 2-D convolution without weight sharing (`padding` 'valid' only, as TensorFlow's
    first implementation)."""

    _rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 implementation=1, **kwargs) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        name = type(self).__name__
        if not isinstance(filters, numbers.Integral) or filters <= 0:
            raise ValueError(f"{name}: `filters` must be a positive integer, got {filters!r}.")
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, self._rank, "kernel_size")
        self.strides = normalize_tuple(strides, self._rank, "strides")
        self.padding = normalize_padding(padding)
        if self.padding != "valid":
            raise ValueError(f'Invalid border mode for {name} (only "valid" is supported if '
                             f"implementation is 1): {self.padding}")
        self.data_format = _data_format(data_format)
        self._activation_id = activation
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.implementation = int(implementation)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "activation": self._activation_id, "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer,
                "kernel_regularizer": self.kernel_regularizer,
                "bias_regularizer": self.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
                "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint,
                "implementation": self.implementation}

    def build(self, input_shape) -> None:
        shape = _check_ndim(self, input_shape, ndim=self._rank + 2)
        last = self.data_format == "channels_last"
        dims = shape.as_list()
        channels = dims[-1] if last else dims[1]
        spatial = [dims[a] for a in _spatial_axes(self)]
        if channels is None or any(d is None for d in spatial):
            raise ValueError(f"{type(self).__name__} ({self.name}) needs known spatial and "
                             f"channel dimensions; got input shape {shape}")
        self._out_dims = []
        for n, k, s in zip(spatial, self.kernel_size, self.strides, strict=True):
            if n < k:
                raise ValueError(f"{type(self).__name__} ({self.name}): the input's spatial "
                                 f"size {n} is smaller than the kernel size {k} (input "
                                 f"shape {shape})")
            self._out_dims.append((n - k) // s + 1)
        positions = int(np.prod(self._out_dims))
        features = int(np.prod(self.kernel_size)) * channels
        self.kernel = self.add_weight("kernel", [positions, features, self.filters],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        bias_shape = [*self._out_dims, self.filters] if last else \
            [self.filters, *self._out_dims]
        self.bias = self.add_weight("bias", bias_shape, initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        last = self.data_format == "channels_last"
        axes = _spatial_axes(self)
        features = self.kernel.shape[1].value
        patches = []
        for position in itertools.product(*(range(n) for n in self._out_dims)):
            index = [slice(None)] * (self._rank + 2)
            for axis, i, k, s in zip(axes, position, self.kernel_size, self.strides,
                                     strict=True):
                index[axis] = slice(i * s, i * s + k)
            patches.append(array_shape_ops.reshape(inputs[tuple(index)], [1, -1, features]))
        stacked = array_join_ops.concat(patches, 0)              # (positions, batch, feat)
        out = math_ops.matmul(stacked, self.kernel)               # (positions, batch, filters)
        out = array_shape_ops.reshape(out, [*self._out_dims, -1, self.filters])
        r = self._rank
        perm = [r, *range(r), r + 1] if last else [r, r + 1, *range(r)]
        out = array_shape_ops.transpose(out, perm)
        if self.use_bias:
            out = math_ops.add(out, self.bias)
        return self.activation(out)


class LocallyConnected1D(LocallyConnected2D):
    """A 1-D convolution without weight sharing: ``kernel`` ``(output_length,
    kernel_size * in_channels, filters)``, ``bias`` ``(output_length, filters)``."""

    _rank = 1

