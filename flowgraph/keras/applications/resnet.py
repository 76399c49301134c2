"""ResNet50/101/152 (He et al., 2015; bottleneck blocks, Keras' layer names).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.ResNet50(weights=None, include_top=False,
...                                            input_shape=(32, 32, 3))
...     print(model.count_params(), model.layers[-1].name)
23587712 conv5_block3_out
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common
from flowgraph.keras.models import Model

__all__ = ["ResNet50", "ResNet101", "ResNet152", "decode_predictions", "preprocess_input"]

_EPS = 1.001e-5


def _block(x, filters, stride=1, conv_shortcut=True, name=""):
    """A bottleneck block: 1x1, 3x3, 1x1 (4 * filters) convolutions plus the shortcut."""
    if conv_shortcut:
        shortcut = L.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = L.BatchNormalization(axis=3, epsilon=_EPS, name=name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = L.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name=name + "_1_bn")(x)
    x = L.Activation("relu", name=name + "_1_relu")(x)
    x = L.Conv2D(filters, 3, padding="same", name=name + "_2_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name=name + "_2_bn")(x)
    x = L.Activation("relu", name=name + "_2_relu")(x)
    x = L.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name=name + "_3_bn")(x)
    x = L.Add(name=name + "_add")([shortcut, x])
    return L.Activation("relu", name=name + "_out")(x)


def _stack(x, filters, blocks, stride1=2, name=""):
    x = _block(x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = _block(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _resnet(blocks, name, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation):
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(x)
    x = L.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    x = L.BatchNormalization(axis=3, epsilon=_EPS, name="conv1_bn")(x)
    x = L.Activation("relu", name="conv1_relu")(x)
    x = L.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = L.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks, strict=True)):
        x = _stack(x, filters, count, stride1=1 if stage == 0 else 2, name=f"conv{stage + 2}")
    if include_top:
        x = L.GlobalAveragePooling2D(name="avg_pool")(x)
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling, avg_name="avg_pool", max_name="max_pool")
    model = Model(inputs, x, name=name)
    suffix = "" if include_top else "_notop"
    _common.load_weights(model, weights,
                         f"{name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5", "resnet")
    return model


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
             pooling=None, classes=1000, classifier_activation="softmax"):
    """ResNet-50: stages of 3, 4, 6 and 3 bottleneck blocks; ``include_top=False`` stops
    at ``conv5_block3_out`` (``pooling`` ``'avg'``/``'max'`` adds a global pooling)."""
    return _resnet((3, 4, 6, 3), "resnet50", include_top, weights, input_tensor,
                   input_shape, pooling, classes, classifier_activation)


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax"):
    """ResNet-101: stages of 3, 4, 23 and 3 blocks; arguments as `ResNet50`."""
    return _resnet((3, 4, 23, 3), "resnet101", include_top, weights, input_tensor,
                   input_shape, pooling, classes, classifier_activation)


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
              pooling=None, classes=1000, classifier_activation="softmax"):
    """ResNet-152: stages of 3, 8, 36 and 3 blocks; arguments as `ResNet50`."""
    return _resnet((3, 8, 36, 3), "resnet152", include_top, weights, input_tensor,
                   input_shape, pooling, classes, classifier_activation)


def preprocess_input(x, data_format=None):
    """Caffe-style: RGB to BGR, minus the ImageNet channel means (no scaling)."""
    return _common.preprocess(x, data_format, "caffe")


decode_predictions = _common.decode_predictions
