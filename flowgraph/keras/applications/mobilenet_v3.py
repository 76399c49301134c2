"""MobileNetV3 Small and Large (Howard et al., 2019): inverted residual blocks with
hard-swish activations and squeeze-and-excitation (``minimalistic=True``: ReLU, 3x3
kernels, no squeeze-and-excitation).

The model rescales its own input to [-1, 1] when ``include_preprocessing=True`` (the
default), so `preprocess_input` returns its input unchanged. As in TF 1.x's Keras, the
hard sigmoid ``ReLU6(x + 3) / 6`` appears as ``tf_op_layer_add``/``tf_op_layer_mul``
layers around a ``re_lu``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.MobileNetV3Small(weights=None, input_shape=(32, 32, 3),
...                                                    classes=10)
...     print(model.name, len(model.layers), model.count_params())
MobilenetV3small 239 1540218
"""

from __future__ import annotations

import warnings

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common
from flowgraph.keras.applications.mobilenet_v2 import _make_divisible as _depth

__all__ = ["MobileNetV3Large", "MobileNetV3Small", "decode_predictions", "preprocess_input"]

# (expansion, filters, kernel ('k': the model's kernel), stride, squeeze-excite, hard-swish)
_SMALL = [(1, 16, 3, 2, True, False), (72.0 / 16, 24, 3, 2, False, False),
          (88.0 / 24, 24, 3, 1, False, False), (4, 40, "k", 2, True, True),
          (6, 40, "k", 1, True, True), (6, 40, "k", 1, True, True), (3, 48, "k", 1, True, True),
          (3, 48, "k", 1, True, True), (6, 96, "k", 2, True, True), (6, 96, "k", 1, True, True),
          (6, 96, "k", 1, True, True)]
_LARGE = [(1, 16, 3, 1, False, False), (4, 24, 3, 2, False, False),
          (3, 24, 3, 1, False, False), (3, 40, "k", 2, True, False),
          (3, 40, "k", 1, True, False), (3, 40, "k", 1, True, False),
          (6, 80, 3, 2, False, True), (2.5, 80, 3, 1, False, True),
          (2.3, 80, 3, 1, False, True), (2.3, 80, 3, 1, False, True),
          (6, 112, 3, 1, True, True), (6, 112, 3, 1, True, True),
          (6, 160, "k", 2, True, True), (6, 160, "k", 1, True, True),
          (6, 160, "k", 1, True, True)]


def _bn(name):
    return L.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)


def _relu(x):
    return L.ReLU()(x)


def _hard_sigmoid(x):
    x = _blocks.TensorFlowOpLayer("add", 3.0)(x)
    x = L.ReLU(6.0)(x)
    return _blocks.TensorFlowOpLayer("mul", 1.0 / 6.0)(x)


def _hard_swish(x):
    return L.Multiply()([x, _hard_sigmoid(x)])


def _se_block(inputs, filters, se_ratio, prefix):
    x = L.GlobalAveragePooling2D(keepdims=True, name=prefix + "squeeze_excite/AvgPool")(inputs)
    x = L.Conv2D(_depth(filters * se_ratio), 1, padding="same",
                 name=prefix + "squeeze_excite/Conv")(x)
    x = L.ReLU(name=prefix + "squeeze_excite/Relu")(x)
    x = L.Conv2D(filters, 1, padding="same", name=prefix + "squeeze_excite/Conv_1")(x)
    x = _hard_sigmoid(x)
    return L.Multiply(name=prefix + "squeeze_excite/Mul")([inputs, x])


def _inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation,
                        block_id):
    shortcut = x
    infilters = x.shape.as_list()[-1]
    prefix = f"expanded_conv_{block_id}/" if block_id else "expanded_conv/"
    if block_id:
        x = L.Conv2D(_depth(infilters * expansion), 1, padding="same", use_bias=False,
                     name=prefix + "expand")(x)
        x = activation(_bn(prefix + "expand/BatchNorm")(x))
    if stride == 2:
        x = L.ZeroPadding2D(padding=_blocks.correct_pad(x, kernel_size),
                            name=prefix + "depthwise/pad")(x)
    x = L.DepthwiseConv2D(kernel_size, strides=stride,
                          padding="same" if stride == 1 else "valid", use_bias=False,
                          name=prefix + "depthwise")(x)
    x = activation(_bn(prefix + "depthwise/BatchNorm")(x))
    if se_ratio:
        x = _se_block(x, _depth(infilters * expansion), se_ratio, prefix)
    x = L.Conv2D(filters, 1, padding="same", use_bias=False, name=prefix + "project")(x)
    x = _bn(prefix + "project/BatchNorm")(x)
    if stride == 1 and infilters == filters:
        x = L.Add(name=prefix + "Add")([shortcut, x])
    return x


def _mobilenet_v3(blocks, last_point_ch, model_type, input_shape, alpha, minimalistic,
                  include_top, weights, input_tensor, classes, pooling, dropout_rate,
                  classifier_activation, include_preprocessing):
    _common.check_weights(weights, include_top, classes)
    if input_shape is None:
        input_shape = (None, None, 3)
        if input_tensor is not None and input_tensor.shape.ndims == 4:
            input_shape = tuple(input_tensor.shape.as_list()[1:])
    rows, cols = input_shape[0], input_shape[1]
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received "
                         f"`input_shape={input_shape}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in (0.75, 1.0)) or (minimalistic and alpha != 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of "
                             "`0.75`, `1.0` for non minimalistic or `1.0` for minimalistic "
                             "only.")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. "
                          "Weights for input shape (224, 224) will be loaded as the default.",
                          stacklevel=3)
    inputs, x = _common.model_input(input_tensor, input_shape)
    kernel, activation, se_ratio = (3, _relu, None) if minimalistic else \
        (5, _hard_swish, 0.25)
    if include_preprocessing:
        x = L.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = L.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                 name="Conv")(x)
    x = activation(_bn("Conv/BatchNorm")(x))
    for block_id, (expansion, filters, k, stride, se, swish) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha),
                                kernel if k == "k" else k, stride, se_ratio if se else None,
                                activation if swish else _relu, block_id)
    last_conv_ch = _depth(x.shape.as_list()[-1] * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = L.Conv2D(last_conv_ch, 1, padding="same", use_bias=False, name="Conv_1")(x)
    x = activation(_bn("Conv_1/BatchNorm")(x))
    if include_top:
        x = L.GlobalAveragePooling2D(keepdims=True)(x)
        x = L.Conv2D(last_point_ch, 1, padding="same", use_bias=True, name="Conv_2")(x)
        x = activation(x)
        if dropout_rate > 0:
            x = L.Dropout(dropout_rate)(x)
        x = L.Conv2D(classes, 1, padding="same", name="Logits")(x)
        x = L.Flatten()(x)
        _common.validate_activation(classifier_activation, weights)
        x = L.Activation(classifier_activation, name="Predictions")(x)
    else:
        x = _common.pool(x, pooling, avg_name="avg_pool", max_name="max_pool")
    model = _common.build_model(inputs, x, "MobilenetV3" + model_type)
    stem = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    _common.load_weights(model, weights, f"weights_mobilenet_v3_{stem}"
                         f"{'.h5' if include_top else '_no_top_v2.h5'}", "mobilenet_v3")
    return model


def MobileNetV3Small(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
                     weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                     dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True):
    """MobileNetV3-Small: 11 inverted residual blocks, 1024 channels before the classifier
    (a 1x1 convolution ``Logits`` then ``Predictions``); any input of at least 32x32.
    ``weights=None`` trains from scratch."""
    return _mobilenet_v3(_SMALL, 1024, "small", input_shape, alpha, minimalistic,
                         include_top, weights, input_tensor, classes, pooling, dropout_rate,
                         classifier_activation, include_preprocessing)


def MobileNetV3Large(input_shape=None, alpha=1.0, minimalistic=False, include_top=True,
                     weights="imagenet", input_tensor=None, classes=1000, pooling=None,
                     dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True):
    """MobileNetV3-Large: 15 inverted residual blocks, 1280 channels before the
    classifier; arguments as `MobileNetV3Small`."""
    return _mobilenet_v3(_LARGE, 1280, "large", input_shape, alpha, minimalistic,
                         include_top, weights, input_tensor, classes, pooling, dropout_rate,
                         classifier_activation, include_preprocessing)


def preprocess_input(x, data_format=None):
    """The identity: MobileNetV3 models preprocess inside (kept for API compatibility)."""
    return x


decode_predictions = _common.decode_predictions
