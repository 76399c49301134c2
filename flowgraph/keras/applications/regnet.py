"""RegNetX and RegNetY, 200MF to 32GF (Radosavovic et al., 2020): four stages of
grouped-convolution bottleneck blocks (``Y`` blocks add squeeze-and-excitation), widths
and depths from the paper's design space.

The model rescales its own input to [0, 1] when ``include_preprocessing=True`` (the
default), so `preprocess_input` returns its input unchanged. The classifier
``<n>head_dense`` has no activation (as in TF, ``classifier_activation`` is only checked
against pretrained weights).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.RegNetX002(weights=None, input_shape=(32, 32, 3),
...                                              classes=10)
...     print(model.name, len(model.layers), model.count_params())
regnetx002 145 2340330
"""

from __future__ import annotations

from flowgraph.keras import backend_ops
from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common

__all__ = [f"RegNet{t}{size}" for t in "XY" for size in
           ("002", "004", "006", "008", "016", "032", "040", "064", "080", "120", "160",
            "320")] + ["decode_predictions", "preprocess_input"]

# size: (depths, widths, group width) of the four stages.
_X = {"002": ((1, 1, 4, 7), (24, 56, 152, 368), 8),
      "004": ((1, 2, 7, 12), (32, 64, 160, 384), 16),
      "006": ((1, 3, 5, 7), (48, 96, 240, 528), 24),
      "008": ((1, 3, 7, 5), (64, 128, 288, 672), 16),
      "016": ((2, 4, 10, 2), (72, 168, 408, 912), 24),
      "032": ((2, 6, 15, 2), (96, 192, 432, 1008), 48),
      "040": ((2, 5, 14, 2), (80, 240, 560, 1360), 40),
      "064": ((2, 4, 10, 1), (168, 392, 784, 1624), 56),
      "080": ((2, 5, 15, 1), (80, 240, 720, 1920), 120),
      "120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
      "160": ((2, 6, 13, 1), (256, 512, 896, 2048), 128),
      "320": ((2, 7, 13, 1), (336, 672, 1344, 2520), 168)}
_Y = {"002": ((1, 1, 4, 7), (24, 56, 152, 368), 8),
      "004": ((1, 3, 6, 6), (48, 104, 208, 440), 8),
      "006": ((1, 3, 7, 4), (48, 112, 256, 608), 16),
      "008": ((1, 3, 8, 2), (64, 128, 320, 768), 16),
      "016": ((2, 6, 17, 2), (48, 120, 336, 888), 24),
      "032": ((2, 5, 13, 1), (72, 216, 576, 1512), 24),
      "040": ((2, 6, 12, 2), (128, 192, 512, 1088), 64),
      "064": ((2, 7, 14, 2), (144, 288, 576, 1296), 72),
      "080": ((2, 4, 10, 1), (168, 448, 896, 2016), 56),
      "120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
      "160": ((2, 4, 11, 1), (224, 448, 1232, 3024), 112),
      "320": ((2, 5, 12, 1), (232, 696, 1392, 3712), 232)}


def _bn(name):
    return L.BatchNormalization(momentum=0.9, epsilon=1e-5, name=name)


def _conv(filters, kernel, name, **kwargs):
    return L.Conv2D(filters, kernel, use_bias=False, kernel_initializer="he_normal",
                    name=name, **kwargs)


def _block(inputs, filters_out, group_width, stride, se_filters, name):
    """An X block (1x1, grouped 3x3 with the stride, 1x1; a projected shortcut when
    strided) or, with ``se_filters``, a Y block (squeeze-and-excitation after the 3x3)."""
    skip = inputs
    if stride != 1:
        skip = _conv(filters_out, (1, 1), name + "_skip_1x1", strides=stride)(inputs)
        skip = _bn(name + "_skip_bn")(skip)
    x = _conv(filters_out, (1, 1), name + "_conv_1x1_1")(inputs)
    x = L.ReLU(name=name + "_conv_1x1_1_relu")(_bn(name + "_conv_1x1_1_bn")(x))
    x = _conv(filters_out, (3, 3), name + "_conv_3x3", strides=stride,
              groups=filters_out // group_width, padding="same")(x)
    x = L.ReLU(name=name + "_conv_3x3_relu")(_bn(name + "_conv_3x3_bn")(x))
    if se_filters:
        se = L.GlobalAveragePooling2D(keepdims=True, name=name + "_squeeze_and_excite_gap")(x)
        se = L.Conv2D(se_filters, (1, 1), activation="relu", kernel_initializer="he_normal",
                      name=name + "_squeeze_and_excite_squeeze")(se)
        se = L.Conv2D(filters_out, (1, 1), activation="sigmoid",
                      kernel_initializer="he_normal",
                      name=name + "_squeeze_and_excite_excite")(se)
        x = _blocks.TensorFlowOpLayer("Mul")([se, x])
    x = _conv(filters_out, (1, 1), name + "_conv_1x1_2")(x)
    x = _bn(name + "_conv_1x1_2_bn")(x)
    return L.ReLU(name=name + "_exit_relu")(_blocks.TensorFlowOpLayer("add")([x, skip]))


def _regnet(config, block_type, model_name, include_top, include_preprocessing, weights,
            input_tensor, input_shape, pooling, classes, classifier_activation):
    depths, widths, group_width = config
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    if include_preprocessing:
        x = L.Rescaling(scale=1.0 / 255.0, name=model_name + "_prestem_rescaling")(x)
    x = L.Conv2D(32, (3, 3), strides=2, use_bias=False, padding="same",
                 kernel_initializer="he_normal", name=model_name + "_stem_conv")(x)
    x = L.ReLU(name=model_name + "_stem_relu")(_bn(model_name + "_stem_bn")(x))
    filters_in = 32
    for stage, (depth, width) in enumerate(zip(depths, widths, strict=True)):
        for i in range(depth):
            se_filters = int((filters_in if i == 0 else width) * 0.25) \
                if block_type == "Y" else 0
            x = _block(x, width, group_width, 2 if i == 0 else 1, se_filters,
                       f"{model_name}_Stage_{stage}_{block_type}Block_{i}")
        filters_in = width
    if include_top:
        head = str(backend_ops.get_uid("head"))
        x = L.GlobalAveragePooling2D(name=head + "_head_gap")(x)
        x = L.Dense(classes, name=head + "head_dense")(x)
        _common.validate_activation(classifier_activation, weights)
    else:
        x = _common.pool(x, pooling)
    model = _common.build_model(inputs, x, model_name)
    _common.load_weights(model, weights, f"{model_name}{'' if include_top else '_notop'}.h5",
                         "regnet")
    return model


def _variant(block_type, size):
    config = (_X if block_type == "X" else _Y)[size]
    default_name = f"regnet{block_type.lower()}{size}"

    def constructor(model_name=default_name, include_top=True, include_preprocessing=True,
                    weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                    classes=1000, classifier_activation="softmax"):
        return _regnet(config, block_type, model_name, include_top, include_preprocessing,
                       weights, input_tensor, input_shape, pooling, classes,
                       classifier_activation)
    constructor.__name__ = constructor.__qualname__ = f"RegNet{block_type}{size}"
    constructor.__doc__ = (
        f"RegNet{block_type}{size}: stage depths {config[0]}, widths {config[1]}, group "
        f"width {config[2]}; default input 224x224 (at least 32x32). ``weights=None`` "
        f"trains from scratch.")
    return constructor


RegNetX002, RegNetX004, RegNetX006, RegNetX008 = (_variant("X", s) for s in
                                                  ("002", "004", "006", "008"))
RegNetX016, RegNetX032, RegNetX040, RegNetX064 = (_variant("X", s) for s in
                                                  ("016", "032", "040", "064"))
RegNetX080, RegNetX120, RegNetX160, RegNetX320 = (_variant("X", s) for s in
                                                  ("080", "120", "160", "320"))
RegNetY002, RegNetY004, RegNetY006, RegNetY008 = (_variant("Y", s) for s in
                                                  ("002", "004", "006", "008"))
RegNetY016, RegNetY032, RegNetY040, RegNetY064 = (_variant("Y", s) for s in
                                                  ("016", "032", "040", "064"))
RegNetY080, RegNetY120, RegNetY160, RegNetY320 = (_variant("Y", s) for s in
                                                  ("080", "120", "160", "320"))


def preprocess_input(x, data_format=None):
    """The identity: RegNet models preprocess inside (kept for API compatibility)."""
    return x


decode_predictions = _common.decode_predictions
