"""Building blocks that several `tf.keras.applications` families share: the zero padding
that makes a strided 'valid' convolution match TF's 'same', squeeze-and-excitation, TF
1.x's ``tf_op_layer_*`` layers and a grouped ``Conv2D``.
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import backend
from flowgraph.keras import layers as L
from flowgraph.ops import array_join_ops, array_ops, math_ops
from flowgraph.ops.nn_conv_ops import convolution
from flowgraph.ops.nn_ops import bias_add, depthwise_conv2d


def correct_pad(x, kernel_size):
    """Zero padding ``((top, bottom), (left, right))`` before a stride-2 'valid'
    convolution of ``kernel_size`` so that it lines up with 'same' on even sizes."""
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    size = x.shape.as_list()[1:3]
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((half[0] - adjust[0], half[0]), (half[1] - adjust[1], half[1]))


def squeeze_excite(x, filters_se, filters, activation, name, kernel_initializer=None):
    """EfficientNet's squeeze-and-excitation: global average pooling (``se_squeeze``),
    reshape to 1x1 (``se_reshape``), a reducing and an expanding 1x1 convolution
    (``se_reduce``, ``se_expand``, sigmoid) and the product (``se_excite``)."""
    init = {} if kernel_initializer is None else {"kernel_initializer": kernel_initializer}
    se = L.GlobalAveragePooling2D(name=name + "se_squeeze")(x)
    se = L.Reshape((1, 1, filters), name=name + "se_reshape")(se)
    se = L.Conv2D(filters_se, 1, padding="same", activation=activation,
                  name=name + "se_reduce", **init)(se)
    se = L.Conv2D(filters, 1, padding="same", activation="sigmoid", name=name + "se_expand",
                  **init)(se)
    return L.Multiply(name=name + "se_excite")([x, se])


class TensorFlowOpLayer(L.Layer):
    """An elementwise add (``op='add'``) or product (``op='mul'`` or ``'Mul'``) as a
    layer: of the input and ``constant``, or of two inputs when ``constant`` is None.
    TF 1.x's Keras records such a layer when a raw op meets a Keras tensor (MobileNetV3's
    hard sigmoid ``ReLU6(x + 3) * (1 / 6)``, RegNet's residual sum); it is named
    ``tf_op_layer_<op>``, ``tf_op_layer_<op>_1``, ... per graph, as TF names them."""

    _OPS = ("add", "mul", "Mul")

    def __init__(self, op: str, constant: float | None = None, name=None, **kwargs) -> None:
        if op not in self._OPS:
            raise ValueError(f"TensorFlowOpLayer: op must be one of {self._OPS}; got {op!r}")
        name = name or backend.unique_object_name("tf_op_layer_" + op)
        super().__init__(name=name, **kwargs)
        self.op = op
        self.constant = None if constant is None else float(constant)

    def get_config(self) -> dict:
        return {**super().get_config(), "op": self.op, "constant": self.constant}

    def call(self, inputs):
        if self.constant is None:
            if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
                raise ValueError(f"TensorFlowOpLayer {self.name!r} ({self.op}) without a "
                                 f"constant expects a list of two inputs; got {inputs!r}")
            x, y = inputs
        else:
            x, y = inputs, convert_to_tensor(self.constant, dtype=inputs.dtype.base_dtype)
        return math_ops.add(x, y) if self.op == "add" else math_ops.multiply(x, y)

    def compute_output_shape(self, input_shape):
        return input_shape[0] if self.constant is None else input_shape


class Conv2D(L.Conv2D):
    """`tf.keras.layers.Conv2D` with Keras' ``groups``: the input channels split into
    ``groups`` equal parts, each convolved with its own ``filters / groups`` filters
    (kernel ``(kh, kw, in_channels / groups, filters)``), the results concatenated.
    RegNet's 3x3 convolutions are grouped."""

    def __init__(self, filters, kernel_size, groups=1, **kwargs) -> None:
        super().__init__(filters, kernel_size, **kwargs)
        groups = groups or 1  # as Keras: 0 (RegNet's width // group width) means 1
        if not isinstance(groups, int) or groups < 1 or self.filters % groups:
            raise ValueError(f"Conv2D {self.name!r}: the number of filters must be evenly "
                             f"divisible by the number of groups. Received: groups={groups}, "
                             f"filters={filters}")
        self.groups = groups

    def get_config(self) -> dict:
        return {**super().get_config(), "groups": self.groups}

    def _kernel_shape(self, channels: int) -> list[int]:
        if channels % self.groups:
            raise ValueError(f"Conv2D {self.name!r}: the number of input channels must be "
                             f"evenly divisible by the number of groups. Received "
                             f"groups={self.groups}, but the input has {channels} channels")
        return [*self.kernel_size, channels // self.groups, self.filters]

    def call(self, inputs):
        if self.groups == 1:
            return super().call(inputs)
        axis = 3 if self.data_format == "channels_last" else 1
        if self.groups == self.filters == inputs.shape.as_list()[axis] and \
                self.dilation_rate == (1, 1):
            # one filter per channel: a depthwise convolution with the kernel's last two
            # axes swapped, (kh, kw, 1, C) -> (kh, kw, C, 1)
            kernel = array_ops.transpose(self.kernel, [0, 1, 3, 2])
            strides = [1, *self.strides, 1] if axis == 3 else [1, 1, *self.strides]
            out = depthwise_conv2d(inputs, kernel, strides, self.padding.upper(),
                                   data_format=self._fmt())
            if self.use_bias:
                out = bias_add(out, self.bias, data_format=self._fmt())
            return self.activation(out)
        parts = array_join_ops.split(inputs, self.groups, axis=axis)
        kernels = array_join_ops.split(self.kernel, self.groups, axis=3)
        out = array_join_ops.concat(
            [convolution(part, kernel, self.padding.upper(), strides=list(self.strides),
                         dilation_rate=list(self.dilation_rate), data_format=self._fmt(),
                         name="Conv2D") for part, kernel in zip(parts, kernels, strict=True)],
            axis)
        if self.use_bias:
            out = bias_add(out, self.bias, data_format=self._fmt())
        return self.activation(out)
