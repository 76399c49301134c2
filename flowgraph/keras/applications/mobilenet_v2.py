"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks, width ``alpha``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.MobileNetV2(weights=None, alpha=0.35,
...                                               input_shape=(32, 32, 3), classes=10)
...     print(model.name, model.count_params())
mobilenetv2_0.35_32 423018
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common
from flowgraph.keras.models import Model

__all__ = ["MobileNetV2", "decode_predictions", "preprocess_input"]

# (filters, stride, expansion) of inverted residual blocks 0..16.
_BLOCKS = [(16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6),
           (64, 2, 6), (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6),
           (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6)]


def _make_divisible(v, divisor=8):
    """The multiple of ``divisor`` nearest ``v``, at least ``divisor`` and not more than
    10 % below ``v``."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _correct_pad(x, kernel_size=3):
    """Zero padding that makes a stride-2 'valid' convolution match 'same'."""
    size = x.shape.as_list()[1:3]
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = kernel_size // 2
    return ((half - adjust[0], half), (half - adjust[1], half))


def _bn(name):
    return L.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)


def _inverted_residual(inputs, expansion, stride, alpha, filters, block_id):
    channels = inputs.shape.as_list()[-1]
    out_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_" if block_id else "expanded_conv_"
    if block_id:
        x = L.Conv2D(expansion * channels, kernel_size=1, padding="same", use_bias=False,
                     name=prefix + "expand")(x)
        x = _bn(prefix + "expand_BN")(x)
        x = L.ReLU(6.0, name=prefix + "expand_relu")(x)
    if stride == 2:
        x = L.ZeroPadding2D(padding=_correct_pad(x, 3), name=prefix + "pad")(x)
    x = L.DepthwiseConv2D(kernel_size=3, strides=stride, use_bias=False,
                          padding="same" if stride == 1 else "valid",
                          name=prefix + "depthwise")(x)
    x = _bn(prefix + "depthwise_BN")(x)
    x = L.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = L.Conv2D(out_filters, kernel_size=1, padding="same", use_bias=False,
                 name=prefix + "project")(x)
    x = _bn(prefix + "project_BN")(x)
    if channels == out_filters and stride == 1:
        return L.Add(name=prefix + "add")([inputs, x])
    return x


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", **kwargs):
    """MobileNetV2, named ``mobilenetv2_<alpha>_<rows>``: 17 inverted residual blocks,
    a 1x1 convolution to 1280 (more when ``alpha > 1``) channels, global pooling and
    ``predictions``. ``weights=None`` trains from scratch.
    """
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    _common.check_weights(weights, include_top, classes)
    sizes = (96, 128, 160, 192, 224)
    default_size = _common.size_for_name(input_shape, sizes)
    input_shape = _common.obtain_input_shape(input_shape, default_size, 32, include_top,
                                             weights)
    rows = input_shape[0]
    if weights == "imagenet":
        if alpha not in (0.35, 0.50, 0.75, 1.0, 1.3, 1.4):
            raise ValueError(f"If imagenet weights are being loaded, alpha must be one of "
                             f"`0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only. Received "
                             f"`alpha={alpha}`")
        rows = _common.warn_size(rows, input_shape[1], sizes)
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                 padding="same", use_bias=False, name="Conv1")(x)
    x = _bn("bn_Conv1")(x)
    x = L.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_residual(x, expansion, stride, alpha, filters, block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = L.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn("Conv_1_bn")(x)
    x = L.ReLU(6.0, name="out_relu")(x)
    if include_top:
        x = L.GlobalAveragePooling2D()(x)
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling)
    model = Model(inputs, x, name=f"mobilenetv2_{alpha:0.2f}_{rows}")
    stem = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}"
    _common.load_weights(model, weights, stem + (".h5" if include_top else "_no_top.h5"),
                         "mobilenet_v2")
    return model


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
