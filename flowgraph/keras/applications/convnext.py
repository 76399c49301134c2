"""ConvNeXt Tiny, Small, Base, Large and XLarge (Liu et al., 2022): 7x7 depthwise
convolutions, LayerNorm, inverted-bottleneck MLPs and learned per-channel layer scales.

With ``include_preprocessing=True`` (the default) the model standardizes its own
[0, 255] input, so `preprocess_input` returns its input unchanged. As in TF 1.x's Keras,
each block's residual sum is a ``tf_op_layer_add`` layer; the stem and downsampling
blocks are nested `Sequential` models.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.applications.ConvNeXtTiny(weights=None, input_shape=(32, 32, 3),
...                                                classes=10)
...     print(model.name, len(model.layers), model.count_params())
convnext_tiny 153 27827818
"""

from __future__ import annotations

import numpy as np

from flowgraph.keras import backend
from flowgraph.keras import layers as L
from flowgraph.keras.applications import _blocks, _common
from flowgraph.keras.models import Sequential
from flowgraph.ops import array_shape_ops, math_ops, random_ops

__all__ = ["ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny",
           "ConvNeXtXLarge", "LayerScale", "StochasticDepth", "decode_predictions",
           "preprocess_input"]

# size: (blocks per stage, channels per stage)
_CONFIGS = {"tiny": ((3, 3, 9, 3), (96, 192, 384, 768)),
            "small": ((3, 3, 27, 3), (96, 192, 384, 768)),
            "base": ((3, 3, 27, 3), (128, 256, 512, 1024)),
            "large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
            "xlarge": ((3, 3, 27, 3), (256, 512, 1024, 2048))}


class LayerScale(L.Layer):
    """Multiplies its input by a learned per-channel ``gamma`` (starting at
    ``init_values``)."""

    def __init__(self, init_values, projection_dim, **kwargs) -> None:
        super().__init__(**kwargs)
        self.init_values, self.projection_dim = init_values, projection_dim

    def get_config(self) -> dict:
        return {**super().get_config(), "init_values": self.init_values,
                "projection_dim": self.projection_dim}

    def build(self, input_shape) -> None:
        from flowgraph.keras import initializers

        self.gamma = self.add_weight("gamma", [self.projection_dim],
                                     initializer=initializers.Constant(self.init_values))
        self.built = True

    def call(self, inputs):
        return math_ops.multiply(inputs, self.gamma)


class StochasticDepth(L.Layer):
    """In training, drops each sample's residual branch with probability
    ``drop_path_rate`` (scaling the kept ones by ``1 / (1 - rate)``); the identity at
    inference."""

    def __init__(self, drop_path_rate, **kwargs) -> None:
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def get_config(self) -> dict:
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}

    def call(self, inputs, training=None):
        from flowgraph.layers.core import smart_cond
        from flowgraph.ops import array_join_ops, array_ops

        if training is None:
            training = backend.learning_phase()
        keep = 1.0 - self.drop_path_rate

        def drop():
            rank = inputs.shape.ndims
            shape = array_join_ops.concat(
                [array_shape_ops.shape(inputs)[:1], np.ones(rank - 1, np.int32)], 0)
            mask = math_ops.floor(keep + random_ops.random_uniform(shape,
                                                                   dtype=inputs.dtype))
            return math_ops.multiply(math_ops.truediv(inputs, keep), mask)

        return smart_cond(training, drop, lambda: array_ops.identity(inputs))


def _block(inputs, dim, drop_path_rate, layer_scale_init_value, name):
    x = L.Conv2D(dim, kernel_size=7, padding="same", groups=dim,
                 name=name + "_depthwise_conv")(inputs)
    x = L.LayerNormalization(epsilon=1e-6, name=name + "_layernorm")(x)
    x = L.Dense(4 * dim, name=name + "_pointwise_conv_1")(x)
    x = L.Activation("gelu", name=name + "_gelu")(x)
    x = L.Dense(dim, name=name + "_pointwise_conv_2")(x)
    if layer_scale_init_value is not None:
        x = LayerScale(layer_scale_init_value, dim, name=name + "_layer_scale")(x)
    if drop_path_rate:
        x = StochasticDepth(drop_path_rate, name=name + "_stochastic_depth")(x)
    else:
        x = L.Activation("linear", name=name + "_identity")(x)
    return _blocks.TensorFlowOpLayer("add")([inputs, x])


def _convnext(size, model_name, include_top, include_preprocessing, weights, input_tensor,
              input_shape, pooling, classes, classifier_activation):
    depths, dims = _CONFIGS[size]
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights` as `'imagenet'` with `include_top` as true, "
                         "`classes` should be 1000")
    _common.check_weights(weights, include_top, classes)
    input_shape = _common.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs, x = _common.model_input(input_tensor, input_shape)
    if include_preprocessing and input_shape[-1] == 3:
        x = L.Normalization(mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                            variance=[(0.229 * 255) ** 2, (0.224 * 255) ** 2,
                                      (0.225 * 255) ** 2],
                            name=model_name + "_prestem_normalization")(x)
    downsample = [Sequential([
        L.Conv2D(dims[0], kernel_size=4, strides=4, name=model_name + "_stem_conv"),
        L.LayerNormalization(epsilon=1e-6, name=model_name + "_stem_layernorm")],
        name=model_name + "_stem")]
    for i in range(3):
        downsample.append(Sequential([
            L.LayerNormalization(epsilon=1e-6, name=f"{model_name}_downsampling_layernorm_{i}"),
            L.Conv2D(dims[i + 1], kernel_size=2, strides=2,
                     name=f"{model_name}_downsampling_conv_{i}")],
            name=f"{model_name}_downsampling_block_{i}"))
    for seq in downsample:  # as TF: the nested layers' weights under the Sequential's name
        for layer in seq.layers:
            layer._weight_scope = f"{seq.name}/{layer.name}/"
    for i, (depth, dim) in enumerate(zip(depths, dims, strict=True)):
        x = downsample[i](x)
        for j in range(depth):
            x = _block(x, dim, 0.0, 1e-6, f"{model_name}_stage_{i}_block_{j}")
    if include_top:
        _common.validate_activation(classifier_activation, weights)
        x = L.GlobalAveragePooling2D(name=model_name + "_head_gap")(x)
        x = L.LayerNormalization(epsilon=1e-6, name=model_name + "_head_layernorm")(x)
        x = L.Dense(classes, activation=classifier_activation,
                    name=model_name + "_head_dense")(x)
    else:
        x = _common.pool(x, pooling)
        x = L.LayerNormalization(epsilon=1e-6)(x)
    model = _common.build_model(inputs, x, model_name)
    _common.load_weights(model, weights, f"{model_name}{'' if include_top else '_notop'}.h5",
                         "convnext")
    return model


def _variant(size):
    default_name = "convnext_" + size

    def constructor(model_name=default_name, include_top=True, include_preprocessing=True,
                    weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                    classes=1000, classifier_activation="softmax"):
        return _convnext(size, model_name, include_top, include_preprocessing, weights,
                         input_tensor, input_shape, pooling, classes, classifier_activation)
    name = "ConvNeXt" + ("XLarge" if size == "xlarge" else size.capitalize())
    constructor.__name__ = constructor.__qualname__ = name
    constructor.__doc__ = (
        f"{name}: stages of {_CONFIGS[size][0]} blocks with {_CONFIGS[size][1]} channels; "
        f"default input 224x224 (at least 32x32). ``weights=None`` trains from scratch; "
        f"without the top, ``pooling`` then a LayerNorm end the model.")
    return constructor


ConvNeXtTiny = _variant("tiny")
ConvNeXtSmall = _variant("small")
ConvNeXtBase = _variant("base")
ConvNeXtLarge = _variant("large")
ConvNeXtXLarge = _variant("xlarge")


def preprocess_input(x, data_format=None):
    """The identity: ConvNeXt models preprocess inside (kept for API compatibility)."""
    return x


decode_predictions = _common.decode_predictions
