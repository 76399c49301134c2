"""More Keras layers for graph mode: `Embedding`, `Lambda`, activation layers, merges
beyond `Add`/`Concatenate` (and the functional ``add``/``concatenate``/... helpers), 1-D
convolution and pooling, global pooling, up-sampling, padding and cropping, `Permute`,
`RepeatVector` and `TimeDistributed`. Re-exported by `flowgraph.keras.layers`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((5,), dtype="int32")
...     e = keras.layers.Embedding(10, 3)(x)
...     print(e.shape, keras.layers.GlobalAveragePooling1D()(e).shape)
(?, 5, 3) (?, 3)
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.keras.layers import (
    Add,
    Concatenate,
    Conv2D,
    Layer,
    MaxPooling2D,
    _check_ndim,
    merged_mask,
)
from flowgraph.keras.layers_misc import Wrapper
from flowgraph.layers.core import normalize_tuple
from flowgraph.ops import (
    array_join_ops,
    array_shape_ops,
    embedding_ops,
    math_ops,
    math_reduce,
    nn_ops,
)
from flowgraph.ops.nn_conv_ops import conv1d
from flowgraph.ops.nn_space_to_batch import dilated_by_space_to_batch

__all__ = [
    "ELU",
    "Average",
    "AveragePooling1D",
    "Conv1D",
    "Cropping2D",
    "Embedding",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "Lambda",
    "LeakyReLU",
    "MaxPooling1D",
    "Maximum",
    "Minimum",
    "Multiply",
    "Permute",
    "ReLU",
    "RepeatVector",
    "Softmax",
    "Subtract",
    "TimeDistributed",
    "UpSampling2D",
    "ZeroPadding2D",
    "add",
    "average",
    "concatenate",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
]


# -- embeddings and functions -----------------------------------------------------------------
class Embedding(Layer):
    """Rows of an ``(input_dim, output_dim)`` weight ``embeddings`` for integer inputs;
    the output shape is the input's plus ``output_dim``."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero: bool = False, input_length=None,
                 **kwargs) -> None:
        if "input_shape" not in kwargs and "batch_input_shape" not in kwargs and \
                input_length is not None:
            kwargs["input_shape"] = tuple(input_length) if isinstance(
                input_length, list | tuple) else (input_length,)
        kwargs.setdefault("dtype", _dtypes.float32)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.mask_zero = bool(mask_zero)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.input_length = input_length

    def get_config(self) -> dict:
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer,
                "embeddings_regularizer": self.embeddings_regularizer,
                "mask_zero": self.mask_zero, "input_length": self.input_length}

    def compute_mask(self, inputs, mask=None):
        """With ``mask_zero``: the ids that are not 0 (padding), the layers downstream's
        mask."""
        return math_ops.not_equal(inputs, 0) if self.mask_zero else None

    def _convert(self, x):
        return convert_to_tensor(x)  # ids stay integers

    def build(self, input_shape) -> None:
        init = self.embeddings_initializer
        if init == "uniform":  # Keras's 'uniform' is +-0.05, not TF's [0, 1)
            from flowgraph.keras.initializers import RandomUniform

            init = RandomUniform()
        self.embeddings = self.add_weight(
            "embeddings", [self.input_dim, self.output_dim], initializer=init,
            regularizer=self.embeddings_regularizer, constraint=self.embeddings_constraint)

    def call(self, inputs):
        if inputs.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
            inputs = math_ops.cast(inputs, _dtypes.int32)
        return embedding_ops.embedding_lookup(self.embeddings, inputs)


class Lambda(Layer):
    """Wrap a function of tensors as a layer: ``Lambda(lambda x: x ** 2)``."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "function": self.function,
                "output_shape": self._output_shape, "arguments": self.arguments}

    def call(self, inputs):
        return self.function(inputs, **self.arguments)


# -- activations as layers --------------------------------------------------------------------
class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, else ``alpha * x`` (Keras's default alpha is 0.3)."""

    def __init__(self, alpha=0.3, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}

    def call(self, inputs):
        return nn_ops.leaky_relu(inputs, alpha=self.alpha)


class ReLU(Layer):
    """``max(x, 0)``, capped at `max_value`; below `threshold`, ``negative_slope * (x -
    threshold)``."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope, self.threshold = float(negative_slope), float(threshold)

    def get_config(self) -> dict:
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}

    def call(self, inputs):
        if self.negative_slope == 0.0 and self.threshold == 0.0:
            out = nn_ops.relu(inputs)
        else:
            shifted = math_ops.subtract(inputs, self.threshold)
            out = _where(math_ops.greater_equal(inputs, self.threshold), inputs,
                                   math_ops.multiply(shifted, self.negative_slope))
        if self.max_value is not None:
            out = math_ops.minimum(out, self.max_value)
        return out


def _where(cond, x, y):
    from flowgraph.ops.array_index_ops import where_v2

    return where_v2(cond, x, y)


class ELU(Layer):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        out = nn_ops.elu(inputs)
        if self.alpha == 1.0:
            return out
        return _where(math_ops.greater(inputs, 0.0), out,
                                math_ops.multiply(out, self.alpha))


class Softmax(Layer):
    """Softmax along `axis`."""

    def __init__(self, axis=-1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return nn_ops.softmax(inputs, axis=self.axis)


# -- merges -----------------------------------------------------------------------------------
class _Merge(Layer):
    _min_inputs = 2

    def compute_mask(self, inputs, mask=None):
        return merged_mask(mask)

    def _check(self, inputs):
        if not isinstance(inputs, list) or len(inputs) < self._min_inputs:
            raise ValueError(f"A `{type(self).__name__}` layer ({self.name}) should be called "
                             f"on a list of at least {self._min_inputs} inputs.")

    def call(self, inputs):
        self._check(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._combine(out, x)
        return self._finish(out, len(inputs))

    def _finish(self, out, n):
        return out


class Multiply(_Merge):
    """Elementwise product of the inputs."""

    _combine = staticmethod(math_ops.multiply)


class Maximum(_Merge):
    """Elementwise maximum of the inputs."""

    _combine = staticmethod(math_ops.maximum)


class Minimum(_Merge):
    """Elementwise minimum of the inputs."""

    _combine = staticmethod(math_ops.minimum)


class Average(_Merge):
    """Elementwise mean of the inputs."""

    _combine = staticmethod(math_ops.add)

    def _finish(self, out, n):
        return math_ops.multiply(out, 1.0 / n)


class Subtract(_Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    def call(self, inputs):
        if not isinstance(inputs, list) or len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer ({self.name}) should be called on a list of "
                             f"exactly 2 inputs.")
        return math_ops.subtract(inputs[0], inputs[1])


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)

    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"``{cls.__name__}(**kwargs)(inputs)``."
    return merge


add = _functional(Add)
subtract = _functional(Subtract)
multiply = _functional(Multiply)
average = _functional(Average)
maximum = _functional(Maximum)
minimum = _functional(Minimum)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


# -- 1-D convolution and pooling --------------------------------------------------------------
class Conv1D(Conv2D):
    """1-D convolution over ``(batch, steps, channels)``: kernel ``(k, in, filters)``;
    `padding` 'valid', 'same' or 'causal' (zeros on the left only)."""

    _rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, **kwargs) -> None:
        causal = str(padding).lower() == "causal"
        super().__init__(filters, kernel_size, strides=strides,
                         padding="valid" if causal else padding, data_format="channels_last",
                         dilation_rate=dilation_rate, **kwargs)
        if causal:
            self.padding = "causal"

    def call(self, inputs):
        x = inputs
        (k,), (stride,), (rate,) = self.kernel_size, self.strides, self.dilation_rate
        padding = "VALID" if self.padding == "causal" else self.padding.upper()
        if self.padding == "causal":
            x = array_join_ops.pad(x, [[0, 0], [rate * (k - 1), 0], [0, 0]])
        with name_scope(None, "Conv1D") as scope:  # TensorFlow's names: <layer>/Conv1D/...
            def one_group(t, kernel):
                def conv(t, pad):
                    return conv1d(t, kernel, stride, pad,
                                  name=scope if self.groups == 1 else None)

                if rate == 1:
                    return conv(t, padding)
                # SpaceToBatchND -> conv1d -> BatchToSpaceND, as TensorFlow
                return dilated_by_space_to_batch(t, [rate], padding, kernel.shape.as_list(),
                                                 conv)

            out = self._grouped(x, one_group)
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)


class _Pooling1D(MaxPooling2D):
    """A 2-D pooling on an inserted axis of length 1 (TensorFlow's ExpandDims -> pool ->
    Squeeze)."""

    _rank = 1

    def __init__(self, pool_size=2, strides=None, padding="valid",
                 data_format="channels_last", **kwargs) -> None:
        super().__init__(pool_size, strides, padding, data_format, **kwargs)

    def call(self, inputs):
        _check_ndim(self, inputs.shape, ndim=3)
        last = self.data_format == "channels_last"
        axis = 1 if last else 2
        x = array_shape_ops.expand_dims(inputs, axis)
        ksize = [1, 1, *self.pool_size, 1] if last else [1, 1, 1, *self.pool_size]
        strides = [1, 1, *self.strides, 1] if last else [1, 1, 1, *self.strides]
        out = type(self)._pool(x, ksize, strides, self.padding.upper(),
                               data_format="NHWC" if last else "NCHW")
        return array_shape_ops.squeeze(out, [axis])


class MaxPooling1D(_Pooling1D):
    """Max over windows of `pool_size` steps."""

    _pool = staticmethod(nn_ops.max_pool)


class AveragePooling1D(_Pooling1D):
    """Mean over windows of `pool_size` steps."""

    _pool = staticmethod(nn_ops.avg_pool)


class _GlobalPooling(Layer):
    _axes: list = []
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"
        self.keepdims = bool(keepdims)

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}

    def call(self, inputs):
        rank = len(self._axes) + 2
        _check_ndim(self, inputs.shape, ndim=rank)
        axes = self._axes if self.data_format == "channels_last" else \
            list(range(2, rank))
        return type(self)._reduce(inputs, axis=axes, keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the steps axis; with a mask (`Masking`), over the unmasked steps."""

    _axes = [1]
    _reduce = staticmethod(math_reduce.reduce_mean)

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        steps = 1 if self.data_format == "channels_last" else 2
        weights = array_shape_ops.expand_dims(math_ops.cast(mask, inputs.dtype.base_dtype),
                                              2 if steps == 1 else 1)
        total = math_reduce.reduce_sum(math_ops.multiply(inputs, weights), axis=steps,
                                       keepdims=self.keepdims)
        return math_ops.truediv(total, math_reduce.reduce_sum(weights, axis=steps,
                                                              keepdims=self.keepdims))


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over the steps axis."""

    _axes = [1]
    _reduce = staticmethod(math_reduce.reduce_max)


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over the spatial axes."""

    _axes = [1, 2]
    _reduce = staticmethod(math_reduce.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over the spatial axes."""

    _axes = [1, 2]
    _reduce = staticmethod(math_reduce.reduce_max)


# -- resizing, padding, cropping, axes --------------------------------------------------------
def _spatial_dims(layer, inputs) -> tuple[int, int]:
    shape = _check_ndim(layer, inputs.shape, ndim=4)
    h, w = shape.as_list()[1:3]
    if h is None or w is None:
        raise ValueError(f"{type(layer).__name__} ({layer.name}) needs known height and "
                         f"width, got input shape {shape}")
    return h, w


class UpSampling2D(Layer):
    """Scale rows and columns up by `size` (nearest neighbour or bilinear), as Keras's
    ``backend.resize_images``: TF 2's ``tf.image.resize`` with half-pixel centers.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.keras.layers.UpSampling2D((2, 3))(tf.zeros([1, 2, 2, 1])).shape.as_list()
    [1, 4, 6, 1]
    """

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest",
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.size = normalize_tuple(size, 2, "size")
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(f"UpSampling2D: interpolation must be 'nearest' or 'bilinear', "
                             f"got {interpolation!r}")
        self.interpolation = interpolation
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        from flowgraph.keras.backend_nn import resize_images

        _check_ndim(self, inputs.shape, ndim=4)
        return resize_images(inputs, self.size[0], self.size[1], self.data_format,
                             interpolation=self.interpolation)


class ZeroPadding2D(Layer):
    """Zero rows above/below and columns left/right: an int, ``(rows, cols)`` or
    ``((top, bottom), (left, right))``."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.padding = _pairs(padding, "padding")

    def call(self, inputs):
        _check_ndim(self, inputs.shape, ndim=4)
        return array_join_ops.pad(inputs, [[0, 0], list(self.padding[0]),
                                           list(self.padding[1]), [0, 0]])


class Cropping2D(Layer):
    """Remove rows and columns at the borders (same forms as `ZeroPadding2D`)."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, "cropping")

    def call(self, inputs):
        h, w = _spatial_dims(self, inputs)
        (t, b), (left, r) = self.cropping
        return inputs[:, t:h - b, left:w - r, :]


def _pairs(value, what: str):
    if isinstance(value, int):
        return ((value, value), (value, value))
    a, b = value
    if isinstance(a, int) and isinstance(b, int):
        return ((a, a), (b, b))
    return (tuple(int(v) for v in a), tuple(int(v) for v in b))


class Permute(Layer):
    """Permute the non-batch axes: ``dims`` numbers them from 1."""

    def __init__(self, dims, **kwargs) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Permute: dims must be a permutation of 1..{len(self.dims)}, "
                             f"got {dims!r}")

    def call(self, inputs):
        return array_shape_ops.transpose(inputs, [0, *self.dims])


class RepeatVector(Layer):
    """``(batch, features)`` to ``(batch, n, features)``."""

    def __init__(self, n, **kwargs) -> None:
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        _check_ndim(self, inputs.shape, ndim=2)
        return array_join_ops.tile(array_shape_ops.expand_dims(inputs, 1), [1, self.n, 1])


class TimeDistributed(Wrapper):
    """Apply `layer` to every step of ``(batch, steps, ...)`` (one set of weights); a mask
    passes through."""

    supports_masking = True

    def __init__(self, layer, **kwargs) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(f"TimeDistributed needs a Layer instance, got {layer!r}")
        super().__init__(layer, **kwargs)

    def call(self, inputs):
        shape = inputs.shape
        if shape.ndims is None or shape.ndims < 3:
            raise ValueError(f"TimeDistributed ({self.name}) needs inputs of rank >= 3, got "
                             f"{shape}")
        dims = shape.as_list()
        rest = dims[2:]
        if any(d is None for d in rest):
            raise ValueError(f"TimeDistributed ({self.name}) needs known inner dimensions, "
                             f"got {shape}")
        dyn = array_shape_ops.shape(inputs)
        flat = array_shape_ops.reshape(inputs, [-1, *rest])
        self.layer._weight_scope = self.name + "/"  # as Keras: td/kernel, td/bias
        out = self.layer._invoke(flat, {})
        out_rest = out.shape.as_list()[1:]
        back = array_join_ops.concat([dyn[:2], np.asarray(out_rest, np.int32)], 0)
        y = array_shape_ops.reshape(out, back)
        y.set_shape([dims[0], dims[1], *out_rest])
        return y

