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
    backend,
    estimator,
    layers,
    losses,
    metrics,
    models,
    optimizers,
)
from flowgraph.keras.layers import Input
from flowgraph.keras.models import Model, Sequential

__all__ = [
    "Input",
    "Model",
    "Sequential",
    "backend",
    "estimator",
    "layers",
    "losses",
    "metrics",
    "models",
    "optimizers",
]
