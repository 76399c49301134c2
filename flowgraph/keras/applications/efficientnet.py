"""EfficientNetB0..B7 (Tan & Le, 2019): MBConv blocks with squeeze-and-excitation,
scaled in width, depth and input size per variant.

The model starts with its own preprocessing (``Rescaling`` to [0, 1] and a
``Normalization`` layer whose statistics come with the ImageNet weights), so
`preprocess_input` returns its input unchanged.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.EfficientNetB0(weights=None, input_shape=(32, 32, 3),
...                                                  classes=10)
...     print(model.name, len(model.layers), model.count_params())
efficientnetb0 240 4062381
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.keras import initializers
from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common

__all__ = ["EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3",
           "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7",
           "decode_predictions", "preprocess_input"]

# (kernel, repeats, filters in, filters out, expansion, stride) of the seven stages; every
# block has squeeze-and-excitation with ratio 0.25.
_STAGES = [(3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2),
           (3, 3, 40, 80, 6, 2), (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2),
           (3, 1, 192, 320, 6, 1)]
_IMAGENET_STD = np.array([0.229, 0.224, 0.225])


def conv_init():
    return initializers.VarianceScaling(scale=2.0, mode="fan_out",
                                        distribution="truncated_normal")


def dense_init():
    return initializers.VarianceScaling(scale=1.0 / 3.0, mode="fan_out",
                                        distribution="uniform")


def _round_filters(filters, width, divisor=8):
    filters *= width
    new = max(divisor, int(filters + divisor / 2) // divisor * divisor)
    return int(new + divisor if new < 0.9 * filters else new)


def _mbconv(inputs, activation, drop_rate, name, filters_in, filters_out, kernel_size,
            strides, expand_ratio):
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = L.Conv2D(filters, 1, padding="same", use_bias=False,
                     kernel_initializer=conv_init(), name=name + "expand_conv")(x)
        x = L.BatchNormalization(axis=3, name=name + "expand_bn")(x)
        x = L.Activation(activation, name=name + "expand_activation")(x)
    if strides == 2:
        x = L.ZeroPadding2D(padding=_blocks.correct_pad(x, kernel_size),
                            name=name + "dwconv_pad")(x)
    x = L.DepthwiseConv2D(kernel_size, strides=strides,
                          padding="valid" if strides == 2 else "same", use_bias=False,
                          depthwise_initializer=conv_init(), name=name + "dwconv")(x)
    x = L.BatchNormalization(axis=3, name=name + "bn")(x)
    x = L.Activation(activation, name=name + "activation")(x)
    x = _blocks.squeeze_excite(x, max(1, int(filters_in * 0.25)), filters, activation, name,
                               kernel_initializer=conv_init())
    x = L.Conv2D(filters_out, 1, padding="same", use_bias=False,
                 kernel_initializer=conv_init(), name=name + "project_conv")(x)
    x = L.BatchNormalization(axis=3, name=name + "project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = L.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=name + "drop")(x)
        x = L.Add(name=name + "add")([x, inputs])
    return x


def _efficientnet(width, depth, default_size, dropout_rate, name, include_top, weights,
                  input_tensor, input_shape, pooling, classes, classifier_activation,
                  kwargs):
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, default_size, 32, include_top,
                                             weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.Rescaling(1.0 / 255.0)(x)
    x = L.Normalization(axis=3)(x)
    if weights == "imagenet":
        x = L.Rescaling(list(1.0 / np.sqrt(_IMAGENET_STD)))(x)
    x = L.ZeroPadding2D(padding=_blocks.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = L.Conv2D(_round_filters(32, width), 3, strides=2, padding="valid", use_bias=False,
                 kernel_initializer=conv_init(), name="stem_conv")(x)
    x = L.BatchNormalization(axis=3, name="stem_bn")(x)
    x = L.Activation("swish", name="stem_activation")(x)
    repeats = [math.ceil(depth * stage[1]) for stage in _STAGES]
    total, b = float(sum(repeats)), 0
    for i, ((kernel, _, f_in, f_out, expand, stride), count) in enumerate(
            zip(_STAGES, repeats, strict=True)):
        f_in, f_out = _round_filters(f_in, width), _round_filters(f_out, width)
        for j in range(count):
            x = _mbconv(x, "swish", 0.2 * b / total, f"block{i + 1}{chr(j + 97)}_",
                        f_in if j == 0 else f_out, f_out, kernel, stride if j == 0 else 1,
                        expand)
            b += 1
    x = L.Conv2D(_round_filters(1280, width), 1, padding="same", use_bias=False,
                 kernel_initializer=conv_init(), name="top_conv")(x)
    x = L.BatchNormalization(axis=3, name="top_bn")(x)
    x = L.Activation("swish", name="top_activation")(x)
    if include_top:
        x = L.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = L.Dropout(dropout_rate, name="top_dropout")(x)
        x = L.Dense(classes, activation=classifier_activation, kernel_initializer=dense_init(),
                    name="predictions")(x)
    else:
        x = _common.pool(x, pooling, avg_name="avg_pool", max_name="max_pool")
    model = _common.build_model(inputs, x, name)
    _common.load_weights(model, weights, f"{name}{'' if include_top else '_notop'}.h5",
                         "efficientnet")
    return model


def _variant(width, depth, size, dropout, name, doc):
    def constructor(include_top=True, weights="imagenet", input_tensor=None,
                    input_shape=None, pooling=None, classes=1000,
                    classifier_activation="softmax", **kwargs):
        return _efficientnet(width, depth, size, dropout, name, include_top, weights,
                             input_tensor, input_shape, pooling, classes,
                             classifier_activation, kwargs)
    constructor.__name__ = constructor.__qualname__ = "EfficientNet" + name[-2:].upper()
    constructor.__doc__ = doc
    return constructor


_DOC = ("EfficientNet-{v}: width x{w}, depth x{d}, default input {s}x{s} (at least 32x32), "
        "top dropout {r}; ``weights=None`` trains from scratch, ``pooling`` ``'avg'``/"
        "``'max'`` applies without the top.")
EfficientNetB0 = _variant(1.0, 1.0, 224, 0.2, "efficientnetb0",
                          _DOC.format(v="B0", w=1.0, d=1.0, s=224, r=0.2))
EfficientNetB1 = _variant(1.0, 1.1, 240, 0.2, "efficientnetb1",
                          _DOC.format(v="B1", w=1.0, d=1.1, s=240, r=0.2))
EfficientNetB2 = _variant(1.1, 1.2, 260, 0.3, "efficientnetb2",
                          _DOC.format(v="B2", w=1.1, d=1.2, s=260, r=0.3))
EfficientNetB3 = _variant(1.2, 1.4, 300, 0.3, "efficientnetb3",
                          _DOC.format(v="B3", w=1.2, d=1.4, s=300, r=0.3))
EfficientNetB4 = _variant(1.4, 1.8, 380, 0.4, "efficientnetb4",
                          _DOC.format(v="B4", w=1.4, d=1.8, s=380, r=0.4))
EfficientNetB5 = _variant(1.6, 2.2, 456, 0.4, "efficientnetb5",
                          _DOC.format(v="B5", w=1.6, d=2.2, s=456, r=0.4))
EfficientNetB6 = _variant(1.8, 2.6, 528, 0.5, "efficientnetb6",
                          _DOC.format(v="B6", w=1.8, d=2.6, s=528, r=0.5))
EfficientNetB7 = _variant(2.0, 3.1, 600, 0.5, "efficientnetb7",
                          _DOC.format(v="B7", w=2.0, d=3.1, s=600, r=0.5))


def preprocess_input(x, data_format=None):
    """The identity: EfficientNet models preprocess inside (kept for API compatibility)."""
    return x


decode_predictions = _common.decode_predictions
