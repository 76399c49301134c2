"""`tf.keras` for TF1 graph mode: layers, `Sequential` and functional `Model`s, compile /
fit / evaluate / predict on NumPy arrays, and `tf.keras.estimator.model_to_estimator`.

Re-exports only; see `flowgraph.keras.layers`, `models`, `training`, `estimator`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     model = keras.Sequential([keras.layers.Dense(3, input_shape=(2,))])
...     print(len(model.get_weights()), model.get_weights()[0].shape)
2 (2, 3)
"""

from flowgraph.keras import (
    activations,
    applications,
    backend,
    callbacks,
    constraints,
    datasets,
    estimator,
    experimental,
    export,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    optimizers,
    preprocessing,
    regularizers,
    utils,
)
from flowgraph.keras.layers import Input
from flowgraph.keras.models import Model, Sequential

__all__ = [
    "Input",
    "Model",
    "Sequential",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "constraints",
    "datasets",
    "estimator",
    "experimental",
    "export",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "optimizers",
    "preprocessing",
    "regularizers",
    "utils",
]

# Layers defined beside `layers` (they subclass its classes) join the tf.keras.layers
# namespace here, so that no module of flowgraph.keras imports the other in a cycle.
from flowgraph.keras import layers_conv as _layers_conv

for _name in _layers_conv.__all__:
    setattr(layers, _name, getattr(_layers_conv, _name))
layers.Convolution2DTranspose = _layers_conv.Conv2DTranspose
layers.SeparableConvolution2D = _layers_conv.SeparableConv2D

from flowgraph.keras import layers_extra as _layers_extra  # noqa: E402

for _name in _layers_extra.__all__:
    setattr(layers, _name, getattr(_layers_extra, _name))
layers.Convolution1D = _layers_extra.Conv1D
layers.GlobalAvgPool1D = _layers_extra.GlobalAveragePooling1D
layers.GlobalAvgPool2D = _layers_extra.GlobalAveragePooling2D

# tf.keras.layers gap-fill: 1-D/3-D convolutions and poolings, reshaping over 1/3 axes,
# locally connected, noise/activation/masking layers, Dot, InputSpec, Wrapper, serialize.
from flowgraph.keras import layers_conv_nd as _layers_conv_nd  # noqa: E402
from flowgraph.keras import layers_misc as _layers_misc  # noqa: E402
from flowgraph.keras import layers_noise as _layers_noise  # noqa: E402
from flowgraph.keras import layers_reshape_nd as _layers_reshape_nd  # noqa: E402

for _module in (_layers_conv_nd, _layers_misc, _layers_noise, _layers_reshape_nd):
    for _name in _module.__all__:
        setattr(layers, _name, getattr(_module, _name))
for _alias, _name in _layers_conv_nd.ALIASES.items():
    setattr(layers, _alias, getattr(layers, _name))
from flowgraph.keras import layers_experimental as _layers_experimental  # noqa: E402

layers.experimental = _layers_experimental.experimental

from flowgraph.keras import layers_norm as _layers_norm  # noqa: E402

layers.LayerNormalization = _layers_norm.LayerNormalization

from flowgraph.keras import layers_attention as _layers_attention  # noqa: E402
from flowgraph.keras import layers_convlstm as _layers_convlstm  # noqa: E402
from flowgraph.keras import layers_cudnn as _layers_cudnn  # noqa: E402
from flowgraph.keras import layers_features as _layers_features  # noqa: E402
from flowgraph.keras import layers_preprocessing as _layers_preprocessing  # noqa: E402
from flowgraph.keras import layers_recurrent as _layers_recurrent  # noqa: E402
from flowgraph.keras import layers_rnn_cells as _layers_rnn_cells  # noqa: E402

for _module in (_layers_rnn_cells, _layers_recurrent, _layers_preprocessing,
                _layers_attention, _layers_convlstm, _layers_features, _layers_cudnn):
    for _name in _module.__all__:
        setattr(layers, _name, getattr(_module, _name))

# The tensor functions of tf.keras.backend (K.mean, K.function, ...) live beside the
# per-graph state in `backend`, which they import.
from flowgraph.keras import backend_ops as _backend_ops  # noqa: E402

for _name in _backend_ops.__all__:
    setattr(backend, _name, getattr(_backend_ops, _name))
from flowgraph.keras import backend_nn as _backend_nn  # noqa: E402

for _name in _backend_nn.__all__:
    setattr(backend, _name, getattr(_backend_nn, _name))
backend.__all__ = sorted({*backend.__all__, *_backend_ops.__all__, *_backend_nn.__all__})

# Loss and metric classes (and the less common functions) join tf.keras.losses / metrics.
from flowgraph.keras import losses_extra as _losses_extra  # noqa: E402
from flowgraph.keras import metrics_classes as _metrics_classes  # noqa: E402

for _name in _losses_extra.__all__:
    setattr(losses, _name, getattr(_losses_extra, _name))
from flowgraph.keras import metrics_stateful as _metrics_stateful  # noqa: E402

for _name in _metrics_classes.__all__:
    setattr(metrics, _name, getattr(_metrics_classes, _name))
for _name in _metrics_stateful.__all__:
    setattr(metrics, _name, getattr(_metrics_stateful, _name))
from flowgraph.keras import losses_focal as _losses_focal  # noqa: E402
from flowgraph.keras import metrics_extra as _metrics_extra  # noqa: E402

for _name in _metrics_extra.__all__:
    setattr(metrics, _name, getattr(_metrics_extra, _name))
for _name in _losses_focal.__all__:
    setattr(losses, _name, getattr(_losses_focal, _name))
metrics.binary_focal_crossentropy = _losses_focal.binary_focal_crossentropy
metrics.categorical_focal_crossentropy = _losses_focal.categorical_focal_crossentropy
for _name in ("mean_squared_error", "mse", "MSE", "mean_absolute_error", "mae", "MAE",
              "binary_crossentropy", "categorical_crossentropy",
              "sparse_categorical_crossentropy"):
    setattr(metrics, _name, getattr(losses, _name))
for _name in ("hinge", "squared_hinge", "categorical_hinge", "kld", "KLD",
              "kullback_leibler_divergence", "kl_divergence", "poisson", "logcosh", "log_cosh",
              "cosine_proximity", "cosine", "mape", "MAPE", "mean_absolute_percentage_error",
              "msle", "MSLE", "mean_squared_logarithmic_error"):
    setattr(metrics, _name, getattr(_losses_extra, _name))

# tf.keras.optimizers.schedules / .legacy are modules of their own.
from flowgraph.keras import optimizers_legacy as _optimizers_legacy  # noqa: E402
from flowgraph.keras import optimizers_schedules as _optimizers_schedules  # noqa: E402

optimizers.schedules = _optimizers_schedules
optimizers.legacy = _optimizers_legacy

# (de)serialization by registered name joins tf.keras.utils / losses / metrics.
from flowgraph.keras import saving_registry as _registry  # noqa: E402

for _name in _registry.__all__:
    setattr(utils, _name, getattr(_registry, _name))
from flowgraph.keras import utils_data as _utils_data  # noqa: E402
from flowgraph.keras import utils_files as _utils_files  # noqa: E402

for _module in (_utils_data, _utils_files):
    for _name in _module.__all__:
        setattr(utils, _name, getattr(_module, _name))
losses.serialize, losses.deserialize = _registry.serialize_loss, _registry.deserialize_loss
metrics.serialize, metrics.deserialize = _registry.serialize_metric, _registry.deserialize_metric

# activations that layers also accept by name (Dense(activation="mish"), and when a saved
# model is loaded)
for _name in ("mish", "hard_sigmoid", "swish"):
    layers._ACTIVATIONS.setdefault(_name, getattr(activations, _name))

# LinearModel / WideDeepModel subclass Model: tf.keras.experimental and tf.keras.models.
from flowgraph.keras import linear_models as _linear_models  # noqa: E402

for _module in (experimental, models):
    _module.LinearModel = _linear_models.LinearModel
    _module.WideDeepModel = _linear_models.WideDeepModel

# `fit`'s History is a callback defined beside `fit` (training imports callbacks).
from flowgraph.keras.training import History as _History  # noqa: E402

callbacks.History = _History
