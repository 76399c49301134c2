"""MobileNet (Howard et al., 2017): depthwise-separable convolutions, width ``alpha``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.MobileNet(weights=None, alpha=0.25,
...                                             input_shape=(32, 32, 3), classes=10)
...     print(model.name, model.count_params())
mobilenet_0.25_32 221114
"""

from __future__ import annotations

from flowgraph.keras import layers as L
from flowgraph.keras.applications import _common
from flowgraph.keras.models import Model

__all__ = ["MobileNet", "decode_predictions", "preprocess_input"]

# (pointwise filters, stride) of depthwise-separable blocks 1..13.
_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
           (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


def _separable_block(x, filters, alpha, depth_multiplier, stride, block_id):
    if stride != 1:
        x = L.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = L.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid",
                          depth_multiplier=depth_multiplier, strides=(stride, stride),
                          use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = L.BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x)
    x = L.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = L.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False,
                 name=f"conv_pw_{block_id}")(x)
    x = L.BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x)
    return L.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3,
              include_top=True, weights="imagenet", input_tensor=None, pooling=None,
              classes=1000, classifier_activation="softmax", **kwargs):
    """MobileNet v1, named ``mobilenet_<alpha>_<rows>``.

    ``alpha`` scales every layer's filters, ``depth_multiplier`` the depthwise
    convolutions'; the top is global pooling, dropout, a 1x1 convolution
    (``conv_preds``) and the activation. ``weights=None`` trains from scratch.
    """
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    _common.check_weights(weights, include_top, classes)
    default_size = _common.size_for_name(input_shape, (128, 160, 192, 224))
    input_shape = _common.obtain_input_shape(input_shape, default_size, 32, include_top,
                                             weights)
    rows = input_shape[0]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError(f"If imagenet weights are being loaded, depth multiplier must be "
                             f"1.  Received depth_multiplier={depth_multiplier}")
        if alpha not in (0.25, 0.50, 0.75, 1.0):
            raise ValueError(f"If imagenet weights are being loaded, alpha can be one of"
                             f"`0.25`, `0.50`, `0.75` or `1.0` only.  Received alpha={alpha}")
        rows = _common.warn_size(rows, input_shape[1], (128, 160, 192, 224))
    inputs, x = _common.model_input(input_tensor, input_shape)
    x = L.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2),
                 name="conv1")(x)
    x = L.BatchNormalization(axis=-1, name="conv1_bn")(x)
    x = L.ReLU(6.0, name="conv1_relu")(x)
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = _separable_block(x, filters, alpha, depth_multiplier, stride, block_id)
    if include_top:
        x = L.GlobalAveragePooling2D(keepdims=True)(x)
        x = L.Dropout(dropout, name="dropout")(x)
        x = L.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = L.Reshape((classes,), name="reshape_2")(x)
        x = L.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling)
    model = Model(inputs, x, name=f"mobilenet_{alpha:0.2f}_{rows}")
    alpha_text = {1.0: "1_0", 0.75: "7_5", 0.50: "5_0", 0.25: "2_5"}.get(alpha, str(alpha))
    fname = (f"mobilenet_{alpha_text}_{rows}_tf.h5" if include_top else
             f"mobilenet_{alpha_text}_{rows}_tf_no_top.h5")
    _common.load_weights(model, weights, fname, "mobilenet")
    return model


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
