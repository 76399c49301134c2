"""TF 1.x Keras's ``TensorFlowOpLayer``: the layer graph-mode Keras records when a raw
op meets a Keras tensor (``tf_op_layer_add``, ``tf_op_layer_mul``, ...). The Keras
applications build MobileNetV3's hard sigmoid, RegNet's and ConvNeXt's residual sums with
it; `flowgraph.keras.saving` resolves the class name when such a model's config is
loaded, with no ``custom_objects``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.keras.layers_tf_op import TensorFlowOpLayer
>>> with tf.Graph().as_default():
...     x = tf.keras.Input((3,))
...     y = TensorFlowOpLayer("add", 3.0)(x)
...     print(y.name.split("/")[0], y.shape)
tf_op_layer_add (?, 3)
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import backend
from flowgraph.keras.layers import Layer
from flowgraph.ops import math_ops

__all__ = ["TensorFlowOpLayer"]


class TensorFlowOpLayer(Layer):
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
