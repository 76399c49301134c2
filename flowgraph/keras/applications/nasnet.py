"""NASNetMobile and NASNetLarge (Zoph et al., 2018): stacks of the searched NASNet-A
normal and reduction cells.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.NASNetMobile(weights=None, input_shape=(32, 32, 3),
...                                                classes=10)
...     print(model.name, len(model.layers), model.count_params())
NASNet 771 4280286
"""

from __future__ import annotations

from flowgraph.framework.graph import name_scope
from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common

__all__ = ["NASNetLarge", "NASNetMobile", "decode_predictions", "preprocess_input"]


def _bn(name):
    return L.BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)


def _conv1x1(x, filters, name):
    return L.Conv2D(filters, (1, 1), padding="same", use_bias=False, name=name,
                    kernel_initializer="he_normal")(x)


def _separable(ip, filters, kernel_size=(3, 3), strides=(1, 1), block_id=""):
    """ReLU, separable convolution, BN, twice (the first strided, zero padded)."""
    with name_scope(f"separable_conv_block_{block_id}"):
        x = L.Activation("relu")(ip)
        if strides == (2, 2):
            x = L.ZeroPadding2D(padding=_blocks.correct_pad(x, kernel_size),
                                name=f"separable_conv_1_pad_{block_id}")(x)
        x = L.SeparableConv2D(filters, kernel_size, strides=strides,
                              name=f"separable_conv_1_{block_id}",
                              padding="valid" if strides == (2, 2) else "same",
                              use_bias=False, kernel_initializer="he_normal")(x)
        x = _bn(f"separable_conv_1_bn_{block_id}")(x)
        x = L.Activation("relu")(x)
        x = L.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}",
                              padding="same", use_bias=False, kernel_initializer="he_normal")(x)
        return _bn(f"separable_conv_2_bn_{block_id}")(x)


def _adjust(p, ip, filters, block_id):
    """The previous cell's output ``p`` matched to ``ip``: halved (two offset strided
    1x1 convolutions) when its size differs, projected when its channels do."""
    if p is None:
        return ip
    p_shape, ip_shape = p.shape.as_list(), ip.shape.as_list()
    with name_scope("adjust_block"):
        if p_shape[-2] != ip_shape[-2]:
            with name_scope(f"adjust_reduction_block_{block_id}"):
                p = L.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
                p1 = L.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                        name=f"adjust_avg_pool_1_{block_id}")(p)
                p1 = _conv1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
                p2 = L.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
                p2 = L.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
                p2 = L.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                        name=f"adjust_avg_pool_2_{block_id}")(p2)
                p2 = _conv1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
                p = L.Concatenate(axis=-1)([p1, p2])
                p = _bn(f"adjust_bn_{block_id}")(p)
        elif p_shape[-1] != filters:
            with name_scope(f"adjust_projection_block_{block_id}"):
                p = L.Activation("relu")(p)
                p = _conv1x1(p, filters, f"adjust_conv_projection_{block_id}")
                p = _bn(f"adjust_bn_{block_id}")(p)
    return p


def _normal_cell(ip, p, filters, block_id):
    with name_scope(f"normal_A_block_{block_id}"):
        p = _adjust(p, ip, filters, block_id)
        h = L.Activation("relu")(ip)
        h = _bn(f"normal_bn_1_{block_id}")(_conv1x1(h, filters, f"normal_conv_1_{block_id}"))
        with name_scope("block_1"):
            x1 = L.Add(name=f"normal_add_1_{block_id}")([
                _separable(h, filters, (5, 5), block_id=f"normal_left1_{block_id}"),
                _separable(p, filters, block_id=f"normal_right1_{block_id}")])
        with name_scope("block_2"):
            x2 = L.Add(name=f"normal_add_2_{block_id}")([
                _separable(p, filters, (5, 5), block_id=f"normal_left2_{block_id}"),
                _separable(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")])
        with name_scope("block_3"):
            x3 = L.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                    name=f"normal_left3_{block_id}")(h)
            x3 = L.Add(name=f"normal_add_3_{block_id}")([x3, p])
        with name_scope("block_4"):
            x4_1 = L.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                      name=f"normal_left4_{block_id}")(p)
            x4_2 = L.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                      name=f"normal_right4_{block_id}")(p)
            x4 = L.Add(name=f"normal_add_4_{block_id}")([x4_1, x4_2])
        with name_scope("block_5"):
            x5 = _separable(h, filters, block_id=f"normal_left5_{block_id}")
            x5 = L.Add(name=f"normal_add_5_{block_id}")([x5, h])
        x = L.Concatenate(axis=-1, name=f"normal_concat_{block_id}")([p, x1, x2, x3, x4, x5])
    return x, ip


def _reduction_cell(ip, p, filters, block_id):
    with name_scope(f"reduction_A_block_{block_id}"):
        p = _adjust(p, ip, filters, block_id)
        h = L.Activation("relu")(ip)
        h = _bn(f"reduction_bn_1_{block_id}")(
            _conv1x1(h, filters, f"reduction_conv_1_{block_id}"))
        h3 = L.ZeroPadding2D(padding=_blocks.correct_pad(h, 3),
                             name=f"reduction_pad_1_{block_id}")(h)
        with name_scope("block_1"):
            x1 = L.Add(name=f"reduction_add_1_{block_id}")([
                _separable(h, filters, (5, 5), (2, 2), f"reduction_left1_{block_id}"),
                _separable(p, filters, (7, 7), (2, 2), f"reduction_right1_{block_id}")])
        with name_scope("block_2"):
            x2_1 = L.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                  name=f"reduction_left2_{block_id}")(h3)
            x2_2 = _separable(p, filters, (7, 7), (2, 2), f"reduction_right2_{block_id}")
            x2 = L.Add(name=f"reduction_add_2_{block_id}")([x2_1, x2_2])
        with name_scope("block_3"):
            x3_1 = L.AveragePooling2D((3, 3), strides=(2, 2), padding="valid",
                                      name=f"reduction_left3_{block_id}")(h3)
            x3_2 = _separable(p, filters, (5, 5), (2, 2), f"reduction_right3_{block_id}")
            x3 = L.Add(name=f"reduction_add3_{block_id}")([x3_1, x3_2])
        with name_scope("block_4"):
            x4 = L.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                    name=f"reduction_left4_{block_id}")(x1)
            x4 = L.Add()([x2, x4])
        with name_scope("block_5"):
            x5_1 = _separable(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}")
            x5_2 = L.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                  name=f"reduction_right5_{block_id}")(h3)
            x5 = L.Add(name=f"reduction_add4_{block_id}")([x5_1, x5_2])
        x = L.Concatenate(axis=-1, name=f"reduction_concat_{block_id}")([x2, x3, x4, x5])
    return x, ip


def _nasnet(input_shape, penultimate_filters, num_blocks, stem_filters, skip_reduction,
            multiplier, include_top, weights, input_tensor, pooling, classes, default_size,
            classifier_activation):
    _common.check_weights(weights, include_top, classes)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError(f"When specifying the input shape of a NASNet and loading "
                         f"`ImageNet` weights, the input_shape argument must be static (no "
                         f"None entries). Got: `input_shape={input_shape}`.")
    input_shape = _common.obtain_input_shape(input_shape, default_size, 32, include_top,
                                             weights)
    if penultimate_filters % (24 * multiplier**2):
        raise ValueError(f"For NASNet-A models, the `penultimate_filters` must be a multiple "
                         f"of 24 * (`filter_multiplier` ** 2). Current value: "
                         f"{penultimate_filters}")
    inputs, x = _common.model_input(input_tensor, input_shape)
    filters = penultimate_filters // 24
    x = L.Conv2D(stem_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False,
                 name="stem_conv1", kernel_initializer="he_normal")(x)
    x = _bn("stem_bn1")(x)
    x, p = _reduction_cell(x, None, filters // multiplier**2, "stem_1")
    x, p = _reduction_cell(x, p, filters // multiplier, "stem_2")
    for stage in range(3):
        if stage:
            x, p0 = _reduction_cell(x, p, filters * multiplier**stage,
                                    f"reduce_{stage * num_blocks}")
            p = p if skip_reduction else p0
        first = stage * num_blocks + (1 if stage else 0)
        for i in range(num_blocks):
            x, p = _normal_cell(x, p, filters * multiplier**stage, str(first + i))
    x = L.Activation("relu")(x)
    if include_top:
        x = L.GlobalAveragePooling2D()(x)
        _common.validate_activation(classifier_activation, weights)
        x = L.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.pool(x, pooling)
    model = _common.build_model(inputs, x, "NASNet")
    if weights == "imagenet" and default_size not in (224, 331):
        raise ValueError("ImageNet weights can only be loaded with NASNetLarge or "
                         "NASNetMobile")
    stem = "nasnet_mobile" if default_size == 224 else "nasnet_large"
    _common.load_weights(model, weights, f"{stem}{'' if include_top else '_no_top'}.h5",
                         "nasnet")
    return model


def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None,
                 pooling=None, classes=1000, classifier_activation="softmax"):
    """NASNet-A Mobile (4 @ 1056): 3 x 4 normal cells between reduction cells, default
    input 224x224 (at least 32x32); ``weights=None`` trains from scratch."""
    return _nasnet(input_shape, 1056, 4, 32, False, 2, include_top, weights, input_tensor,
                   pooling, classes, 224, classifier_activation)


def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None,
                pooling=None, classes=1000, classifier_activation="softmax"):
    """NASNet-A Large (6 @ 4032): 3 x 6 normal cells, default input 331x331 (at least
    32x32); arguments as `NASNetMobile`."""
    return _nasnet(input_shape, 4032, 6, 96, True, 2, include_top, weights, input_tensor,
                   pooling, classes, 331, classifier_activation)


def preprocess_input(x, data_format=None):
    """Scale pixels from [0, 255] to [-1, 1]."""
    return _common.preprocess(x, data_format, "tf")


decode_predictions = _common.decode_predictions
