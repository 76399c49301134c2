"""The rest of `tf.keras.layers` in graph mode: `Dot` and ``dot``, `InputSpec` (checked
on every call of a layer that sets ``input_spec``), the
`Wrapper` base of `TimeDistributed` and `Bidirectional`, ``serialize`` /
``deserialize`` of a layer's ``{"class_name", "config"}``, and
``enable_v2_dtype_behavior`` / ``disable_v2_dtype_behavior``. Re-exported by
`flowgraph.keras.layers`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     a, b = tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])
...     print(keras.backend.get_session().run(keras.layers.dot([a, b], axes=1)))
[[11.]]
"""

from __future__ import annotations

import numbers

from flowgraph.keras.layers import V2_DTYPE_BEHAVIOR, Layer, trainable_passed_to
from flowgraph.layers.input_spec import InputSpec as _InputSpec
from flowgraph.ops import math_ops, math_reduce, nn_ops

__all__ = [
    "Dot",
    "InputSpec",
    "Wrapper",
    "deserialize",
    "disable_v2_dtype_behavior",
    "dot",
    "enable_v2_dtype_behavior",
    "serialize",
]


# -- Dot ----------------------------------------------------------------------------------------
class Dot(Layer):
    """Per-example dot product of two tensors along `axes` (an int for both, or one
    axis per input; axis 0, the batch, is not allowed); with `normalize`, of the
    L2-normalized inputs (their cosine similarity)."""

    def __init__(self, axes, normalize: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        if isinstance(axes, numbers.Integral):
            self.axes = int(axes)
        else:
            axes = tuple(axes)
            if len(axes) != 2 or not all(isinstance(a, numbers.Integral) for a in axes):
                raise ValueError(f"Invalid format for argument `axes`: expected a list of 2 "
                                 f"integers. Received: axes={axes!r}")
            self.axes = (int(axes[0]), int(axes[1]))
        self.normalize = bool(normalize)

    def get_config(self) -> dict:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}

    def call(self, inputs):
        from flowgraph.keras.backend_ops import batch_dot

        if not isinstance(inputs, list) or len(inputs) != 2:
            raise ValueError(f"A `Dot` layer ({self.name}) should be called on a list of 2 "
                             f"inputs.")
        x, y = inputs
        ranks = (x.shape.ndims, y.shape.ndims)
        if None in ranks:
            raise ValueError(f"Dot ({self.name}) needs inputs of known rank; got shapes "
                             f"{x.shape} and {y.shape}")
        pair = (self.axes, self.axes) if isinstance(self.axes, int) else self.axes
        axes = [a % r for a, r in zip(pair, ranks, strict=True)]
        if 0 in axes:
            raise ValueError(f"Dot ({self.name}): cannot take a dot product along the batch "
                             f"axis; got axes={self.axes}")
        if x.shape[axes[0]].value is not None and y.shape[axes[1]].value is not None and \
                x.shape[axes[0]].value != y.shape[axes[1]].value:
            raise ValueError(f"Incompatible input shapes for Dot ({self.name}): axis values "
                             f"{x.shape[axes[0]].value} (at {axes[0]}) != "
                             f"{y.shape[axes[1]].value} (at {axes[1]}). Full input shapes: "
                             f"{x.shape}, {y.shape}")
        if self.normalize:
            x = nn_ops.l2_normalize(x, axis=axes[0])
            y = nn_ops.l2_normalize(y, axis=axes[1])
        if ranks == (2, 2):
            return math_reduce.reduce_sum(math_ops.multiply(x, y), axis=axes[0],
                                          keepdims=True)
        return batch_dot(x, y, axes=tuple(axes))


def dot(inputs, axes, normalize: bool = False, **kwargs):
    """``Dot(axes, normalize, **kwargs)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


# -- InputSpec: tf.layers' class (TF's tf.keras.layers.InputSpec is the same one); a layer
# whose `input_spec` is set checks every call's inputs against it (`Layer._invoke`).
InputSpec = _InputSpec


# -- Wrapper ------------------------------------------------------------------------------------
class Wrapper(Layer):
    """A layer that applies another layer (`layer`) in its own way: the base of
    `TimeDistributed` and `Bidirectional`. Its config holds the wrapped layer's
    ``{"class_name", "config"}`` under ``layer``."""

    def __init__(self, layer, **kwargs) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a "
                             f"`tf.keras.layers.Layer` instance. Received: {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer

    trainable = trainable_passed_to("layer")  # as Keras: the wrapped layer's flag too

    # As Keras: the wrapper's own weights, then the wrapped layer's (a subclass's
    # ``add_weight`` in `build` comes before the layer's).
    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return _dedup(self._trainable_weights + self.layer.trainable_weights)

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return _dedup(self._non_trainable_weights + self.layer.non_trainable_weights)
        return _dedup(self._trainable_weights + self._non_trainable_weights
                      + self.layer.weights)

    @property
    def updates(self) -> list:
        return list(self._updates) + [u for u in self.layer.updates if u not in self._updates]

    @property
    def losses(self) -> list:
        return list(self._losses) + [x for x in self.layer.losses if x not in self._losses]

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        layer = config.pop("layer")
        if isinstance(layer, dict):
            layer = deserialize(layer, custom_objects=custom_objects)
        return cls(layer, **config)


def _dedup(weights: list) -> list:
    out: list = []
    for w in weights:
        if not any(w is o for o in out):
            out.append(w)
    return out


# -- serialization ------------------------------------------------------------------------------
def serialize(layer) -> dict:
    """``{"class_name": ..., "config": ...}`` of `layer` (a layer or a model), JSON-ready:
    what a model's config holds per layer.

    Example
    -------
    >>> from flowgraph import keras
    >>> keras.layers.serialize(keras.layers.Dropout(0.5, name="drop"))["config"]["rate"]
    0.5
    """
    from flowgraph.keras.saving import layer_config

    return layer_config(layer)


def deserialize(config: dict, custom_objects: dict | None = None):
    """The layer that `serialize` described (classes of `tf.keras.layers`, or of
    `custom_objects`)."""
    from flowgraph.keras.saving import layer_from_config

    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret serialized layer: expected a dict with "
                         f"'class_name' and 'config', got {config!r}")
    return layer_from_config({"class_name": config["class_name"],
                              "config": config.get("config", {})}, custom_objects)


# -- dtype behaviour ------------------------------------------------------------------------------
def enable_v2_dtype_behavior() -> None:
    """Layers made from now on default to `floatx` and cast floating inputs to their
    dtype (TF2's behaviour)."""
    V2_DTYPE_BEHAVIOR[0] = True


def disable_v2_dtype_behavior() -> None:
    """Layers made from now on take the dtype of their first input (TF1's behaviour,
    the default here)."""
    V2_DTYPE_BEHAVIOR[0] = False

