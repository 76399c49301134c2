"""ResNet-RS 50 to 420 (Bello et al., 2021): ResNet-D bottlenecks with
squeeze-and-excitation, a four-convolution stem, and stochastic depth in the deeper
variants.

The model rescales and standardizes its own input when ``include_preprocessing=True``
(the default), so `preprocess_input` returns its input unchanged.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.ResNetRS50(weights=None, input_shape=(32, 32, 3),
...                                              classes=10)
...     print(model.name, len(model.layers), model.count_params())
resnet-rs-50 274 33716778
"""

from __future__ import annotations

import os

from flowgraph.keras import backend_ops
from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common
from flowgraph.keras.applications.efficientnet import conv_init

__all__ = ["ResNetRS50", "ResNetRS101", "ResNetRS152", "ResNetRS200", "ResNetRS270",
           "ResNetRS350", "ResNetRS420", "decode_predictions", "preprocess_input"]

# depth: blocks in each of the four groups (64, 128, 256, 512 filters).
_REPEATS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3), 200: (3, 24, 36, 3),
            270: (4, 29, 53, 4), 350: (4, 36, 72, 4), 420: (4, 44, 87, 4)}
# depth: the input sizes Keras publishes ImageNet weights for.
_WEIGHT_SIZES = {50: (160,), 101: (160, 192), 152: (192, 224, 256), 200: (256,), 270: (256,),
                 350: (256, 320), 420: (320,)}
_EPS = 1e-5
_MOMENTUM = 0.0


def _bn(name):
    return L.BatchNormalization(axis=3, momentum=_MOMENTUM, epsilon=_EPS, name=name)


def _conv(x, filters, kernel_size, strides, name):
    """A convolution padded like TF's reference ResNets: explicit symmetric zero padding
    before a strided 'valid' convolution, 'same' otherwise."""
    if strides > 1:
        begin = (kernel_size - 1) // 2
        end = kernel_size - 1 - begin
        x = L.ZeroPadding2D(padding=((begin, end), (begin, end)))(x)
    return L.Conv2D(filters, kernel_size, strides=strides,
                    padding="same" if strides == 1 else "valid", use_bias=False,
                    kernel_initializer=conv_init(), name=name)(x)


def _bottleneck(inputs, filters, strides, use_projection, survival, name):
    shortcut = inputs
    if use_projection:
        if strides == 2:
            shortcut = L.AveragePooling2D(pool_size=(2, 2), strides=(2, 2), padding="same",
                                          name=name + "_projection_pooling")(inputs)
            shortcut = _conv(shortcut, filters * 4, 1, 1, name + "_projection_conv")
        else:
            shortcut = _conv(inputs, filters * 4, 1, strides, name + "_projection_conv")
        shortcut = _bn(name + "_projection_batch_norm")(shortcut)
    x = _conv(inputs, filters, 1, 1, name + "_conv_1")
    x = L.Activation("relu", name=name + "_act_1")(_bn(name + "batch_norm_1")(x))
    x = _conv(x, filters, 3, strides, name + "_conv_2")
    x = L.Activation("relu", name=name + "_act_2")(_bn(name + "_batch_norm_2")(x))
    x = _conv(x, filters * 4, 1, 1, name + "_conv_3")
    x = _bn(name + "_batch_norm_3")(x)
    x = _blocks.squeeze_excite(x, max(1, int(filters * 4 * 0.25)), filters * 4, "relu",
                               name + "_se_", kernel_initializer=conv_init())
    if survival:
        x = L.Dropout(survival, noise_shape=(None, 1, 1, 1), name=name + "_drop")(x)
    x = L.Add()([x, shortcut])
    return L.Activation("relu", name=name + "_output_act")(x)


def _resnet_rs(depth, dropout_rate, drop_connect_rate, include_top, weights, classes,
               input_shape, input_tensor, pooling, classifier_activation,
               include_preprocessing):
    allowed = [f"imagenet-i{size}" for size in _WEIGHT_SIZES[depth]]
    if weights == "imagenet":
        weights = allowed[-1]
    if not (weights in (*allowed, None) or os.path.exists(str(weights))):
        raise ValueError(f"The `weights` argument should be either `None` (random "
                         f"initialization), `'imagenet'` (pre-training on ImageNet, with "
                         f"highest available input shape), or the path to the weights file "
                         f"to be loaded. For ResNetRS{depth} the following weight variants "
                         f"are available {allowed} (default=highest). Received "
                         f"weights={weights}")
    if weights in allowed and include_top and classes != 1000:
        raise ValueError(f"If using `weights` as `'imagenet'` or any of {allowed} with "
                         f"`include_top` as true, `classes` should be 1000. Received "
                         f"classes={classes}")
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    if include_preprocessing:
        x = L.Rescaling(scale=1.0 / 255)(x)
        if input_shape[-1] == 3:
            x = L.Normalization(mean=[0.485, 0.456, 0.406],
                                variance=[0.229**2, 0.224**2, 0.225**2], axis=3)(x)
    stem = f"stem_{backend_ops.get_uid('stem_')}"
    for i, (filters, strides) in enumerate(((32, 2), (32, 1), (64, 1), (64, 2))):
        x = _conv(x, filters, 3, strides, f"{stem}_stem_conv_{i + 1}")
        x = _bn(f"{stem}_stem_batch_norm_{i + 1}")(x)
        x = L.Activation("relu", name=f"{stem}_stem_act_{i + 1}")(x)
    groups = _REPEATS[depth]
    for i, (filters, repeats) in enumerate(zip((64, 128, 256, 512), groups, strict=True)):
        survival = drop_connect_rate * float(i + 2) / (len(groups) + 1)
        name = f"BlockGroup{i + 2}_"
        x = _bottleneck(x, filters, 1 if i == 0 else 2, True, survival, name + "_block_0_")
        for j in range(1, repeats):
            x = _bottleneck(x, filters, 1, False, survival, f"{name}_block_{j}_")
    if include_top:
        x = L.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = L.Dropout(dropout_rate, name="top_dropout")(x)
        _common.validate_activation(classifier_activation, weights)
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling, avg_name="avg_pool", max_name="max_pool")
    model_name = f"resnet-rs-{depth}"
    model = _common.build_model(inputs, x, model_name)
    if weights in allowed:
        stem = f"{model_name}-{weights.split('-')[-1]}{'' if include_top else '_notop'}"
        _common.load_weights(model, "imagenet", stem + ".h5", "resnet_rs")
    elif weights is not None:
        model.load_weights(weights)
    return model


def _variant(depth, dropout_rate, drop_connect_rate):
    def constructor(include_top=True, weights="imagenet", classes=1000, input_shape=None,
                    input_tensor=None, pooling=None, classifier_activation="softmax",
                    include_preprocessing=True):
        return _resnet_rs(depth, dropout_rate, drop_connect_rate, include_top, weights,
                          classes, input_shape, input_tensor, pooling, classifier_activation,
                          include_preprocessing)
    constructor.__name__ = constructor.__qualname__ = f"ResNetRS{depth}"
    constructor.__doc__ = (
        f"ResNet-RS-{depth}: block groups of {_REPEATS[depth]} bottlenecks, top dropout "
        f"{dropout_rate}, stochastic depth up to {drop_connect_rate}; default input "
        f"224x224 (at least 32x32). ``weights=None`` trains from scratch; ``'imagenet'`` "
        f"means the largest of the input sizes {_WEIGHT_SIZES[depth]} with weights "
        f"(``'imagenet-i<size>'`` picks one).")
    return constructor


ResNetRS50 = _variant(50, 0.25, 0.0)
ResNetRS101 = _variant(101, 0.25, 0.0)
ResNetRS152 = _variant(152, 0.25, 0.0)
ResNetRS200 = _variant(200, 0.25, 0.1)
ResNetRS270 = _variant(270, 0.25, 0.1)
ResNetRS350 = _variant(350, 0.4, 0.1)
ResNetRS420 = _variant(420, 0.4, 0.1)


def preprocess_input(x, data_format=None):
    """The identity: ResNet-RS models preprocess inside (kept for API compatibility)."""
    return x


decode_predictions = _common.decode_predictions
