"""Xception (Chollet, 2017): depthwise-separable convolutions with residual shortcuts.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.Xception(weights=None, include_top=False,
...                                            input_shape=(71, 71, 3), pooling="avg")
...     print(model.output.shape.as_list(), model.count_params())
[None, 2048] 20861480
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common

__all__ = ["Xception", "decode_predictions", "preprocess_input"]


def _bn(name=None):
    return L.BatchNormalization(axis=-1, name=name)


def _sep(x, filters, name, act_first=True):
    """``[relu ->] separable 3x3 -> BN`` named ``<name>``, ``<name>_bn``, ``<name>_act``."""
    if act_first:
        x = L.Activation("relu", name=name + "_act")(x)
    x = L.SeparableConv2D(filters, 3, padding="same", use_bias=False, name=name)(x)
    return _bn(name + "_bn")(x)


def _downsample(x, filters_1, filters_2, block, first_act=True):
    """Two separable convolutions and a strided max pooling, plus a strided 1x1 shortcut."""
    residual = L.Conv2D(filters_2, 1, strides=2, padding="same", use_bias=False)(x)
    residual = _bn()(residual)
    x = _sep(x, filters_1, f"block{block}_sepconv1", act_first=first_act)
    if not first_act:
        x = L.Activation("relu", name=f"block{block}_sepconv2_act")(x)
        x = L.SeparableConv2D(filters_2, 3, padding="same", use_bias=False,
                              name=f"block{block}_sepconv2")(x)
        x = _bn(f"block{block}_sepconv2_bn")(x)
    else:
        x = _sep(x, filters_2, f"block{block}_sepconv2")
    x = L.MaxPooling2D(3, strides=2, padding="same", name=f"block{block}_pool")(x)
    return L.Add()([x, residual])


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax"):
    """Xception: entry flow (3 downsampling blocks), 8 middle-flow residual blocks of
    728 channels, exit flow to 2048 channels. Default input 299x299, at least 71x71;
    ``weights=None`` trains from scratch."""
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 299, 71, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.Conv2D(32, 3, strides=2, use_bias=False, name="block1_conv1")(x)
    x = L.Activation("relu", name="block1_conv1_act")(_bn("block1_conv1_bn")(x))
    x = L.Conv2D(64, 3, use_bias=False, name="block1_conv2")(x)
    x = L.Activation("relu", name="block1_conv2_act")(_bn("block1_conv2_bn")(x))
    x = _downsample(x, 128, 128, 2, first_act=False)
    x = _downsample(x, 256, 256, 3)
    x = _downsample(x, 728, 728, 4)
    for block in range(5, 13):
        residual = x
        for i in (1, 2, 3):
            x = _sep(x, 728, f"block{block}_sepconv{i}")
        x = L.Add()([x, residual])
    x = _downsample(x, 728, 1024, 13)
    for i, filters in ((1, 1536), (2, 2048)):
        x = L.SeparableConv2D(filters, 3, padding="same", use_bias=False,
                              name=f"block14_sepconv{i}")(x)
        x = L.Activation("relu", name=f"block14_sepconv{i}_act")(
            _bn(f"block14_sepconv{i}_bn")(x))
    x = _common.top(x, include_top, pooling, classes, classifier_activation,
                    named_pooling=False)
    model = _common.build_model(inputs, x, "xception")
    suffix = "" if include_top else "_notop"
    _common.load_weights(model, weights,
                         f"xception_weights_tf_dim_ordering_tf_kernels{suffix}.h5", "xception")
    return model


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
