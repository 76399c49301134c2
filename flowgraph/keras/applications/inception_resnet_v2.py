"""InceptionResNetV2 (Szegedy et al., 2017): inception branches with scaled residual
connections (``block35_*``, ``block17_*``, ``block8_*``).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.InceptionResNetV2(weights=None, include_top=False,
...                                                     input_shape=(75, 75, 3))
...     print(model.output.shape.as_list(), model.count_params())
[None, 1, 1, 1536] 54336736
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common
from flowgraph.ops import math_ops

__all__ = ["CustomScaleLayer", "InceptionResNetV2", "decode_predictions",
           "preprocess_input"]


class CustomScaleLayer(L.Layer):
    """``inputs[0] + inputs[1] * scale``: a residual branch added with a fixed weight."""

    def __init__(self, scale, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale = scale

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": self.scale}

    def call(self, inputs):
        return math_ops.add(inputs[0], math_ops.multiply(inputs[1], self.scale))

    def compute_output_shape(self, input_shape):
        return input_shape[0]


def conv_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu",
            use_bias=False, name=None):
    """Convolution, BatchNorm without scale (unless ``use_bias``) and ``activation``,
    named ``<name>``, ``<name>_bn``, ``<name>_ac`` or automatically."""
    x = L.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias,
                 name=name)(x)
    if not use_bias:
        x = L.BatchNormalization(axis=3, scale=False,
                                 name=None if name is None else name + "_bn")(x)
    if activation is not None:
        x = L.Activation(activation, name=None if name is None else name + "_ac")(x)
    return x


def _residual_block(x, scale, block_type, block_idx, activation="relu"):
    if block_type == "block35":
        branches = [conv_bn(x, 32, 1), conv_bn(conv_bn(x, 32, 1), 32, 3),
                    conv_bn(conv_bn(conv_bn(x, 32, 1), 48, 3), 64, 3)]
    elif block_type == "block17":
        branches = [conv_bn(x, 192, 1),
                    conv_bn(conv_bn(conv_bn(x, 128, 1), 160, [1, 7]), 192, [7, 1])]
    else:
        branches = [conv_bn(x, 192, 1),
                    conv_bn(conv_bn(conv_bn(x, 192, 1), 224, [1, 3]), 256, [3, 1])]
    name = f"{block_type}_{block_idx}"
    mixed = L.Concatenate(axis=3, name=name + "_mixed")(branches)
    up = conv_bn(mixed, x.shape.as_list()[-1], 1, activation=None, use_bias=True,
                 name=name + "_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = L.Activation(activation, name=name + "_ac")(x)
    return x


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None,
                      input_shape=None, pooling=None, classes=1000,
                      classifier_activation="softmax", **kwargs):
    """Inception-ResNet v2: default input 299x299, at least 75x75; ``weights=None``
    trains from scratch, ``pooling`` ``'avg'``/``'max'`` applies without the top."""
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = conv_bn(x, 32, 3, strides=2, padding="valid")
    x = conv_bn(x, 32, 3, padding="valid")
    x = conv_bn(x, 64, 3)
    x = L.MaxPooling2D(3, strides=2)(x)
    x = conv_bn(x, 80, 1, padding="valid")
    x = conv_bn(x, 192, 3, padding="valid")
    x = L.MaxPooling2D(3, strides=2)(x)
    b0 = conv_bn(x, 96, 1)
    b1 = conv_bn(conv_bn(x, 48, 1), 64, 5)
    b2 = conv_bn(conv_bn(conv_bn(x, 64, 1), 96, 3), 96, 3)
    bp = conv_bn(L.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)
    x = L.Concatenate(axis=3, name="mixed_5b")([b0, b1, b2, bp])
    for idx in range(1, 11):
        x = _residual_block(x, 0.17, "block35", idx)
    b0 = conv_bn(x, 384, 3, strides=2, padding="valid")
    b1 = conv_bn(conv_bn(conv_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid")
    bp = L.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = L.Concatenate(axis=3, name="mixed_6a")([b0, b1, bp])
    for idx in range(1, 21):
        x = _residual_block(x, 0.1, "block17", idx)
    b0 = conv_bn(conv_bn(x, 256, 1), 384, 3, strides=2, padding="valid")
    b1 = conv_bn(conv_bn(x, 256, 1), 288, 3, strides=2, padding="valid")
    b2 = conv_bn(conv_bn(conv_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid")
    bp = L.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = L.Concatenate(axis=3, name="mixed_7a")([b0, b1, b2, bp])
    for idx in range(1, 10):
        x = _residual_block(x, 0.2, "block8", idx)
    x = _residual_block(x, 1.0, "block8", 10, activation=None)
    x = conv_bn(x, 1536, 1, name="conv_7b")
    if include_top:
        _common.validate_activation(classifier_activation, weights)
    x = _common.top(x, include_top, pooling, classes, classifier_activation,
                    named_pooling=False)
    model = _common.build_model(inputs, x, "inception_resnet_v2")
    fname = ("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels"
             f"{'' if include_top else '_notop'}.h5")
    _common.load_weights(model, weights, fname, "inception_resnet_v2")
    return model


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
