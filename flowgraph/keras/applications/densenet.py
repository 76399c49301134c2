"""DenseNet121/169/201 (Huang et al., 2017): dense blocks of concatenated 1x1-3x3
convolutions (growth rate 32) joined by halving transition blocks.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.DenseNet121(weights=None, input_shape=(32, 32, 3),
...                                               classes=10)
...     print(model.name, model.count_params())
densenet121 7047754
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common

__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "decode_predictions",
           "preprocess_input"]

_EPS = 1.001e-5
_GROWTH = 32


def _bn_relu(x, name):
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name=name + "_bn")(x)
    return L.Activation("relu", name=name + "_relu")(x)


def _conv_block(x, name):
    y = _bn_relu(x, name + "_0")
    y = L.Conv2D(4 * _GROWTH, 1, use_bias=False, name=name + "_1_conv")(y)
    y = _bn_relu(y, name + "_1")
    y = L.Conv2D(_GROWTH, 3, padding="same", use_bias=False, name=name + "_2_conv")(y)
    return L.Concatenate(axis=3, name=name + "_concat")([x, y])


def _transition(x, name):
    channels = x.shape.as_list()[-1]
    x = _bn_relu(x, name)
    x = L.Conv2D(int(channels * 0.5), 1, use_bias=False, name=name + "_conv")(x)
    return L.AveragePooling2D(2, strides=2, name=name + "_pool")(x)


def _densenet(blocks, name, include_top, weights, input_tensor, input_shape, pooling,
              classes, classifier_activation):
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.ZeroPadding2D(padding=((3, 3), (3, 3)))(x)
    x = L.Conv2D(64, 7, strides=2, use_bias=False, name="conv1/conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name="conv1/bn")(x)
    x = L.Activation("relu", name="conv1/relu")(x)
    x = L.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = L.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks):
        for i in range(count):
            x = _conv_block(x, f"conv{stage + 2}_block{i + 1}")
        if stage < len(blocks) - 1:
            x = _transition(x, f"pool{stage + 2}")
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name="bn")(x)
    x = L.Activation("relu", name="relu")(x)
    x = _common.top(x, include_top, pooling, classes, classifier_activation)
    model = _common.build_model(inputs, x, name)
    suffix = "" if include_top else "_notop"
    _common.load_weights(model, weights,
                         f"{name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5", "densenet")
    return model


def DenseNet121(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """DenseNet-121: dense blocks of 6, 12, 24 and 16 layers; ``weights=None`` trains
    from scratch, ``pooling`` ``'avg'``/``'max'`` applies without the top."""
    return _densenet((6, 12, 24, 16), "densenet121", include_top, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation)


def DenseNet169(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """DenseNet-169: dense blocks of 6, 12, 32 and 32 layers; arguments as `DenseNet121`."""
    return _densenet((6, 12, 32, 32), "densenet169", include_top, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation)


def DenseNet201(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """DenseNet-201: dense blocks of 6, 12, 48 and 32 layers; arguments as `DenseNet121`."""
    return _densenet((6, 12, 48, 32), "densenet201", include_top, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation)


def preprocess_input(x, data_format=None):
    """Scale pixels to [0, 1], then standardize each channel with ImageNet's means and
    deviations."""
    return _common.preprocess(x, data_format, "torch")


decode_predictions = _common.decode_predictions
