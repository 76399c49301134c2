"""InceptionV3 (Szegedy et al., 2016): factorized inception modules ``mixed0``..``mixed10``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.InceptionV3(weights=None, input_shape=(75, 75, 3),
...                                               classes=10)
...     print(model.output.shape.as_list(), model.count_params())
[None, 10] 21823274
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common

__all__ = ["InceptionV3", "decode_predictions", "preprocess_input"]


def conv_bn(x, filters, rows, cols, padding="same", strides=(1, 1), name=None):
    """Convolution without bias, BatchNorm without scale, ReLU: Keras' ``conv2d_bn``,
    the layers named ``<name>_conv``/``<name>_bn``/``<name>`` or automatically."""
    conv_name, bn_name = (name + "_conv", name + "_bn") if name else (None, None)
    x = L.Conv2D(filters, (rows, cols), strides=strides, padding=padding, use_bias=False,
                 name=conv_name)(x)
    x = L.BatchNormalization(axis=3, scale=False, name=bn_name)(x)
    return L.Activation("relu", name=name)(x)


def _avg_branch(x, filters):
    x = L.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return conv_bn(x, filters, 1, 1)


def _module_a(x, pool_filters, name):
    b1 = conv_bn(x, 64, 1, 1)
    b5 = conv_bn(conv_bn(x, 48, 1, 1), 64, 5, 5)
    b3 = conv_bn(conv_bn(conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    return L.Concatenate(axis=3, name=name)([b1, b5, b3, _avg_branch(x, pool_filters)])


def _module_c(x, width, name):
    """The 17x17 module with 1x7/7x1 factorized branches of ``width`` channels."""
    b1 = conv_bn(x, 192, 1, 1)
    b7 = conv_bn(x, width, 1, 1)
    b7 = conv_bn(conv_bn(b7, width, 1, 7), 192, 7, 1)
    bd = conv_bn(x, width, 1, 1)
    for rows, cols in ((7, 1), (1, 7), (7, 1)):
        bd = conv_bn(bd, width, rows, cols)
    bd = conv_bn(bd, 192, 1, 7)
    return L.Concatenate(axis=3, name=name)([b1, b7, bd, _avg_branch(x, 192)])


def _module_e(x, i):
    b1 = conv_bn(x, 320, 1, 1)
    b3 = conv_bn(x, 384, 1, 1)
    b3 = L.Concatenate(axis=3, name=f"mixed9_{i}")([conv_bn(b3, 384, 1, 3),
                                                    conv_bn(b3, 384, 3, 1)])
    bd = conv_bn(conv_bn(x, 448, 1, 1), 384, 3, 3)
    bd = L.Concatenate(axis=3)([conv_bn(bd, 384, 1, 3), conv_bn(bd, 384, 3, 1)])
    return L.Concatenate(axis=3, name=f"mixed{9 + i}")([b1, b3, bd, _avg_branch(x, 192)])


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """Inception v3: default input 299x299, at least 75x75; ``weights=None`` trains from
    scratch, ``pooling`` ``'avg'``/``'max'`` applies without the top."""
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = conv_bn(x, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv_bn(x, 32, 3, 3, padding="valid")
    x = conv_bn(x, 64, 3, 3)
    x = L.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv_bn(x, 80, 1, 1, padding="valid")
    x = conv_bn(x, 192, 3, 3, padding="valid")
    x = L.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for i, pool_filters in enumerate((32, 64, 64)):
        x = _module_a(x, pool_filters, f"mixed{i}")
    b3 = conv_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    bd = conv_bn(conv_bn(x, 64, 1, 1), 96, 3, 3)
    bd = conv_bn(bd, 96, 3, 3, strides=(2, 2), padding="valid")
    x = L.Concatenate(axis=3, name="mixed3")(
        [b3, bd, L.MaxPooling2D((3, 3), strides=(2, 2))(x)])
    for i, width in enumerate((128, 160, 160, 192)):
        x = _module_c(x, width, f"mixed{4 + i}")
    b3 = conv_bn(conv_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    b7 = conv_bn(conv_bn(conv_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    b7 = conv_bn(b7, 192, 3, 3, strides=(2, 2), padding="valid")
    x = L.Concatenate(axis=3, name="mixed8")(
        [b3, b7, L.MaxPooling2D((3, 3), strides=(2, 2))(x)])
    for i in range(2):
        x = _module_e(x, i)
    x = _common.top(x, include_top, pooling, classes, classifier_activation,
                    named_pooling=False)
    model = _common.build_model(inputs, x, "inception_v3")
    suffix = "" if include_top else "_notop"
    _common.load_weights(model, weights,
                         f"inception_v3_weights_tf_dim_ordering_tf_kernels{suffix}.h5",
                         "inception_v3")
    return model


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
