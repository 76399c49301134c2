"""ResNet50V2/101V2/152V2 (He et al., 2016: pre-activation bottleneck blocks).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.ResNet50V2(weights=None, include_top=False,
...                                              input_shape=(32, 32, 3))
...     print(model.count_params(), model.layers[-1].name)
23564800 post_relu
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common

__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2", "decode_predictions",
           "preprocess_input"]

_EPS = 1.001e-5


def _bn(name):
    return L.BatchNormalization(axis=3, epsilon=_EPS, name=name)


def _block(x, filters, stride=1, conv_shortcut=False, name=""):
    """A pre-activation bottleneck: BN-ReLU first, the stride on the 3x3 convolution,
    and a 1x1 max pooling as the shortcut of a strided block without a projection."""
    preact = L.Activation("relu", name=name + "_preact_relu")(_bn(name + "_preact_bn")(x))
    if conv_shortcut:
        shortcut = L.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(preact)
    else:
        shortcut = L.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = L.Conv2D(filters, 1, use_bias=False, name=name + "_1_conv")(preact)
    x = L.Activation("relu", name=name + "_1_relu")(_bn(name + "_1_bn")(x))
    x = L.ZeroPadding2D(padding=((1, 1), (1, 1)), name=name + "_2_pad")(x)
    x = L.Conv2D(filters, 3, strides=stride, use_bias=False, name=name + "_2_conv")(x)
    x = L.Activation("relu", name=name + "_2_relu")(_bn(name + "_2_bn")(x))
    x = L.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    return L.Add(name=name + "_out")([shortcut, x])


def _stack(x, filters, blocks, stride1=2, name=""):
    x = _block(x, filters, conv_shortcut=True, name=name + "_block1")
    for i in range(2, blocks):
        x = _block(x, filters, name=f"{name}_block{i}")
    return _block(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _resnet_v2(blocks, name, include_top, weights, input_tensor, input_shape, pooling,
               classes, classifier_activation):
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(x)
    x = L.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    x = L.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = L.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks, strict=True)):
        x = _stack(x, filters, count, stride1=1 if stage == 3 else 2, name=f"conv{stage + 2}")
    x = L.Activation("relu", name="post_relu")(_bn("post_bn")(x))
    x = _common.top(x, include_top, pooling, classes, classifier_activation)
    model = _common.build_model(inputs, x, name)
    suffix = "" if include_top else "_notop"
    _common.load_weights(model, weights,
                         f"{name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5", "resnet")
    return model


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
               pooling=None, classes=1000, classifier_activation="softmax"):
    """ResNet-50 v2: stages of 3, 4, 6 and 3 pre-activation blocks, ending in
    ``post_bn``/``post_relu``; ``weights=None`` trains from scratch."""
    return _resnet_v2((3, 4, 6, 3), "resnet50v2", include_top, weights, input_tensor,
                      input_shape, pooling, classes, classifier_activation)


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """ResNet-101 v2: stages of 3, 4, 23 and 3 blocks; arguments as `ResNet50V2`."""
    return _resnet_v2((3, 4, 23, 3), "resnet101v2", include_top, weights, input_tensor,
                      input_shape, pooling, classes, classifier_activation)


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """ResNet-152 v2: stages of 3, 8, 36 and 3 blocks; arguments as `ResNet50V2`."""
    return _resnet_v2((3, 8, 36, 3), "resnet152v2", include_top, weights, input_tensor,
                      input_shape, pooling, classes, classifier_activation)


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
