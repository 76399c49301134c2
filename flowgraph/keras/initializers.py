"""`tf.keras.initializers`: TF1's initializer classes under Keras's names and defaults
(random initializers draw with standard deviation / range 0.05, as Keras's do).

Example
-------
>>> import flowgraph as tf
>>> init = tf.keras.initializers.Constant(0.5)
>>> tf.Session().run(init([2])).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

from flowgraph.ops import init_ops

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "Identity", "Initializer", "Ones",
           "Orthogonal", "RandomNormal", "RandomUniform", "TruncatedNormal",
           "VarianceScaling", "Zeros", "constant", "deserialize", "get", "glorot_normal",
           "glorot_uniform", "he_normal", "he_uniform", "identity", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "random_normal", "random_uniform",
           "serialize", "truncated_normal", "uniform", "zeros"]

Initializer = init_ops.Initializer
Zeros = init_ops.Zeros
Ones = init_ops.Ones
Constant = init_ops.Constant
VarianceScaling = init_ops.VarianceScaling
Orthogonal = init_ops.Orthogonal
Identity = init_ops.Identity
GlorotUniform = init_ops.GlorotUniform
GlorotNormal = init_ops.GlorotNormal
he_normal = init_ops.he_normal
he_uniform = init_ops.he_uniform
lecun_normal = init_ops.lecun_normal
lecun_uniform = init_ops.lecun_uniform


class RandomNormal(init_ops.RandomNormal):
    """Normal draws; Keras's default standard deviation is 0.05."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=None, **kwargs) -> None:
        super().__init__(mean, stddev, seed=seed, **({"dtype": dtype} if dtype else {}))


class RandomUniform(init_ops.RandomUniform):
    """Uniform draws in ``[minval, maxval)``; Keras's default range is ±0.05."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=None, **kwargs) -> None:
        super().__init__(minval, maxval, seed=seed, **({"dtype": dtype} if dtype else {}))


class TruncatedNormal(init_ops.TruncatedNormal):
    """Normal draws re-drawn beyond two standard deviations; Keras's default is 0.05."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=None, **kwargs) -> None:
        super().__init__(mean, stddev, seed=seed, **({"dtype": dtype} if dtype else {}))


zeros, ones, constant, identity, orthogonal = Zeros, Ones, Constant, Identity, Orthogonal
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
normal = random_normal = RandomNormal
uniform = random_uniform = RandomUniform
truncated_normal = TruncatedNormal


def serialize(initializer) -> dict:
    """``{'class_name': ..., 'config': ...}`` of an initializer (its registered name
    for a registered class)."""
    from flowgraph.keras.saving_registry import get_registered_name

    return {"class_name": get_registered_name(type(initializer)),
            "config": initializer.get_config()}


def deserialize(config, custom_objects=None):
    """The initializer a name (``'glorot_uniform'``) or `serialize`'s dict describes."""
    from flowgraph.keras.saving_registry import deserialize_keras_object

    table = {n: globals()[n] for n in __all__ if n not in ("get", "serialize", "deserialize")}
    obj = deserialize_keras_object(config, table, custom_objects, "initializer")
    return obj() if isinstance(obj, type) else obj


def get(identifier):
    """An initializer from None, a Keras name ('glorot_uniform', 'zeros', ...) or an
    initializer object."""
    from flowgraph.keras.layers import get_initializer

    return get_initializer(identifier)
