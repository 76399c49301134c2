"""EfficientNetV2 B0..B3, S, M, L (Tan & Le, 2021): fused MBConv blocks in the early
stages, MBConv blocks with squeeze-and-excitation later.

With ``include_preprocessing=True`` (the default) the model rescales its own input, so
`preprocess_input` returns its input unchanged.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.EfficientNetV2B0(weights=None, input_shape=(32, 32, 3),
...                                                    classes=10)
...     print(model.name, len(model.layers), model.count_params())
efficientnetv2-b0 273 5932122
"""

from __future__ import annotations

import math

from flowgraph.keras import initializers
from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common
from flowgraph.keras.applications.efficientnet import conv_init, dense_init

__all__ = ["EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3",
           "EfficientNetV2L", "EfficientNetV2M", "EfficientNetV2S", "decode_predictions",
           "preprocess_input"]

# (repeats, filters in, filters out, expansion, se ratio, stride, fused) per stage; every
# kernel is 3x3.
_B = [(1, 32, 16, 1, 0.0, 1, True), (2, 16, 32, 4, 0.0, 2, True), (2, 32, 48, 4, 0.0, 2, True),
      (3, 48, 96, 4, 0.25, 2, False), (5, 96, 112, 6, 0.25, 1, False),
      (8, 112, 192, 6, 0.25, 2, False)]
_S = [(2, 24, 24, 1, 0.0, 1, True), (4, 24, 48, 4, 0.0, 2, True), (4, 48, 64, 4, 0.0, 2, True),
      (6, 64, 128, 4, 0.25, 2, False), (9, 128, 160, 6, 0.25, 1, False),
      (15, 160, 256, 6, 0.25, 2, False)]
_M = [(3, 24, 24, 1, 0.0, 1, True), (5, 24, 48, 4, 0.0, 2, True), (5, 48, 80, 4, 0.0, 2, True),
      (7, 80, 160, 4, 0.25, 2, False), (14, 160, 176, 6, 0.25, 1, False),
      (18, 176, 304, 6, 0.25, 2, False), (5, 304, 512, 6, 0.25, 1, False)]
_L = [(4, 32, 32, 1, 0.0, 1, True), (7, 32, 64, 4, 0.0, 2, True), (7, 64, 96, 4, 0.0, 2, True),
      (10, 96, 192, 4, 0.25, 2, False), (19, 192, 224, 6, 0.25, 1, False),
      (25, 224, 384, 6, 0.25, 2, False), (7, 384, 640, 6, 0.25, 1, False)]
_MOMENTUM = 0.9


def _round_filters(filters, width, divisor=8):
    return int(max(divisor, int(filters * width + divisor / 2) // divisor * divisor))


def _bn(name):
    return L.BatchNormalization(axis=3, momentum=_MOMENTUM, name=name)


def _block(inputs, name, f_in, f_out, expand, se_ratio, strides, fused, drop_rate):
    """An MBConv block (1x1 expansion, 3x3 depthwise ``dwconv2``) or, ``fused``, a fused
    one (3x3 expansion); squeeze-and-excitation when ``se_ratio``; a residual with
    sample dropout when the shape is kept."""
    filters = f_in * expand
    x = inputs
    if expand != 1:
        x = L.Conv2D(filters, 3 if fused else 1, strides=strides if fused else 1,
                     padding="same", use_bias=False, kernel_initializer=conv_init(),
                     name=name + "expand_conv")(x)
        x = L.Activation("swish", name=name + "expand_activation")(_bn(name + "expand_bn")(x))
    if not fused:
        x = L.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False,
                              depthwise_initializer=conv_init(), name=name + "dwconv2")(x)
        x = L.Activation("swish", name=name + "activation")(_bn(name + "bn")(x))
    if 0 < se_ratio <= 1:
        x = _blocks.squeeze_excite(x, max(1, int(f_in * se_ratio)), filters, "swish", name,
                                   kernel_initializer=conv_init())
    one_by_one = not fused or expand != 1
    x = L.Conv2D(f_out, 1 if one_by_one else 3, strides=1 if one_by_one else strides,
                 padding="same", use_bias=False, kernel_initializer=conv_init(),
                 name=name + "project_conv")(x)
    x = _bn(name + "project_bn")(x)
    if fused and expand == 1:
        x = L.Activation("swish", name=name + "project_activation")(x)
    if strides == 1 and f_in == f_out:
        if drop_rate:
            x = L.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=name + "drop")(x)
        x = L.Add(name=name + "add")([x, inputs])
    return x


def _efficientnet_v2(stages, width, depth, default_size, name, include_top, weights,
                     input_tensor, input_shape, pooling, classes, classifier_activation,
                     include_preprocessing):
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, default_size, 32, include_top,
                                             weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    if include_preprocessing:
        if name.split("-")[-1].startswith("b") and input_shape[-1] == 3:
            x = L.Rescaling(scale=1.0 / 255)(x)
            x = L.Normalization(mean=[0.485, 0.456, 0.406],
                                variance=[0.229**2, 0.224**2, 0.225**2], axis=3)(x)
        else:
            x = L.Rescaling(scale=1.0 / 128.0, offset=-1)(x)
    x = L.Conv2D(_round_filters(stages[0][1], width), 3, strides=2, padding="same",
                 use_bias=False, kernel_initializer=conv_init(), name="stem_conv")(x)
    x = L.Activation("swish", name="stem_activation")(_bn("stem_bn")(x))
    total, b = float(sum(stage[0] for stage in stages)), 0
    for i, (count, f_in, f_out, expand, se_ratio, stride, fused) in enumerate(stages):
        f_in, f_out = _round_filters(f_in, width), _round_filters(f_out, width)
        for j in range(math.ceil(depth * count)):
            x = _block(x, f"block{i + 1}{chr(j + 97)}_", f_in if j == 0 else f_out, f_out,
                       expand, se_ratio, stride if j == 0 else 1, fused, 0.2 * b / total)
            b += 1
    x = L.Conv2D(_round_filters(1280, width), 1, padding="same", use_bias=False,
                 kernel_initializer=conv_init(), name="top_conv")(x)
    x = L.Activation("swish", name="top_activation")(_bn("top_bn")(x))
    if include_top:
        x = L.GlobalAveragePooling2D(name="avg_pool")(x)
        x = L.Dropout(0.2, name="top_dropout")(x)
        x = L.Dense(classes, activation=classifier_activation, kernel_initializer=dense_init(),
                    bias_initializer=initializers.Constant(0.0), name="predictions")(x)
    else:
        x = _common.pool(x, pooling, avg_name="avg_pool", max_name="max_pool")
    model = _common.build_model(inputs, x, name)
    _common.load_weights(model, weights, f"{name}{'' if include_top else '_notop'}.h5",
                         "efficientnet_v2")
    return model


def _variant(stages, width, depth, size, suffix):
    name = "efficientnetv2-" + suffix

    def constructor(include_top=True, weights="imagenet", input_tensor=None,
                    input_shape=None, pooling=None, classes=1000,
                    classifier_activation="softmax", include_preprocessing=True):
        return _efficientnet_v2(stages, width, depth, size, name, include_top, weights,
                                input_tensor, input_shape, pooling, classes,
                                classifier_activation, include_preprocessing)
    constructor.__name__ = constructor.__qualname__ = "EfficientNetV2" + suffix.upper()
    constructor.__doc__ = (
        f"EfficientNetV2-{suffix.upper()}: width x{width}, depth x{depth}, default input "
        f"{size}x{size} (at least 32x32); ``weights=None`` trains from scratch, "
        f"``include_preprocessing`` puts the input rescaling inside the model.")
    return constructor


EfficientNetV2B0 = _variant(_B, 1.0, 1.0, 224, "b0")
EfficientNetV2B1 = _variant(_B, 1.0, 1.1, 240, "b1")
EfficientNetV2B2 = _variant(_B, 1.1, 1.2, 260, "b2")
EfficientNetV2B3 = _variant(_B, 1.2, 1.4, 300, "b3")
EfficientNetV2S = _variant(_S, 1.0, 1.0, 384, "s")
EfficientNetV2M = _variant(_M, 1.0, 1.0, 480, "m")
EfficientNetV2L = _variant(_L, 1.0, 1.0, 480, "l")


def preprocess_input(x, data_format=None):
    """The identity: EfficientNetV2 models preprocess inside (kept for API compatibility)."""
    return x


decode_predictions = _common.decode_predictions
