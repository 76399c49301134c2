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

from flowgraph.keras import layers_norm as _layers_norm  # noqa: E402

layers.LayerNormalization = _layers_norm.LayerNormalization

from flowgraph.keras import layers_recurrent as _layers_recurrent  # noqa: E402

for _name in _layers_recurrent.__all__:
    setattr(layers, _name, getattr(_layers_recurrent, _name))

# The tensor functions of tf.keras.backend (K.mean, K.function, ...) live beside the
# per-graph state in `backend`, which they import.
from flowgraph.keras import backend_ops as _backend_ops  # noqa: E402

for _name in _backend_ops.__all__:
    setattr(backend, _name, getattr(_backend_ops, _name))
backend.__all__ = sorted({*backend.__all__, *_backend_ops.__all__})

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
for _name in ("mean_squared_error", "mse", "MSE", "mean_absolute_error", "mae", "MAE",
              "binary_crossentropy", "categorical_crossentropy",
              "sparse_categorical_crossentropy"):
    setattr(metrics, _name, getattr(losses, _name))
for _name in ("hinge", "squared_hinge", "categorical_hinge", "kld", "KLD",
              "kullback_leibler_divergence", "kl_divergence", "poisson", "logcosh", "log_cosh",
              "cosine_proximity", "cosine", "mape", "MAPE", "mean_absolute_percentage_error",
              "msle", "MSLE", "mean_squared_logarithmic_error"):
    setattr(metrics, _name, getattr(_losses_extra, _name))

# `fit`'s History is a callback defined beside `fit` (training imports callbacks).
from flowgraph.keras.training import History as _History  # noqa: E402

callbacks.History = _History
