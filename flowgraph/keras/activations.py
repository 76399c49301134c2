"""`tf.keras.activations`: the activation functions layers accept by name, with Keras's
arguments (``relu(x, alpha, max_value, threshold)``, ``softmax(x, axis)``, ...), and
`get` / `serialize` / `deserialize` between names and functions.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     y = tf.keras.activations.hard_sigmoid(tf.constant([-3.0, 0.0, 1.0]))
...     print(tf.Session().run(y).round(2))
[0.  0.5 0.7]
>>> tf.keras.activations.serialize(tf.keras.activations.get("relu"))
'relu'
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import backend_ops as _K
from flowgraph.ops import math_ops, nn_ops

__all__ = ["deserialize", "elu", "exponential", "get", "hard_sigmoid", "linear",
           "mish", "relu", "selu", "serialize", "sigmoid", "softmax", "softplus", "softsign",
           "swish", "tanh"]


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """``max(x, 0)``; `alpha`: slope below `threshold`; `max_value`: a cap."""
    return _K.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def elu(x, alpha=1.0):
    """``x`` if positive, else ``alpha * (exp(x) - 1)``."""
    return _K.elu(x, alpha)


def softmax(x, axis=-1):
    """Softmax along `axis`."""
    return nn_ops.softmax(x, axis=axis)


def selu(x):
    """Scaled ELU (self-normalizing networks)."""
    return nn_ops.selu(x)


def softplus(x):
    return nn_ops.softplus(x)


def softsign(x):
    return nn_ops.softsign(x)


def sigmoid(x):
    return math_ops.sigmoid(x)


def tanh(x):
    return math_ops.tanh(x)


def exponential(x):
    return math_ops.exp(x)


def linear(x):
    """The identity (what ``activation=None`` means)."""
    return x


def hard_sigmoid(x):
    """``clip(0.2 * x + 0.5, 0, 1)``: a piecewise-linear sigmoid."""
    return math_ops.clip_by_value(math_ops.add(math_ops.multiply(x, 0.2), 0.5), 0.0, 1.0)


def swish(x):
    """``x * sigmoid(x)``."""
    return math_ops.multiply(x, math_ops.sigmoid(x))


def mish(x):
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    x = _K._t(x)
    return math_ops.multiply(x, math_ops.tanh(nn_ops.softplus(x)))


def _gelu(x, approximate=False):
    """The Gaussian error linear unit ``x * Phi(x)`` (``approximate``: its tanh form).
    Reached by name only (``activation="gelu"``): TF 2.15's v1 module has no attribute."""
    x = _K._t(x)
    dtype = x.dtype.base_dtype

    def c(value):
        return convert_to_tensor(value, dtype=dtype)

    if approximate:
        cube = math_ops.multiply(math_ops.multiply(math_ops.multiply(
            c(0.044715), x), x), x)
        inner = math_ops.multiply(c(0.7978845608028654), math_ops.add(x, cube))
        return math_ops.multiply(math_ops.multiply(c(0.5), x),
                                 math_ops.add(c(1.0), math_ops.tanh(inner)))
    scaled = math_ops.truediv(x, c(1.4142135623730951))
    return math_ops.multiply(math_ops.multiply(c(0.5), x),
                             math_ops.add(c(1.0), math_ops.erf(scaled)))


_gelu.__name__ = "gelu"

_BY_NAME = {f.__name__: f for f in (relu, elu, softmax, selu, softplus, softsign, sigmoid,
                                     tanh, exponential, linear, hard_sigmoid, swish, mish,
                                     _gelu)}


def get(identifier):
    """The activation function for a name, a callable (returned as is) or None (linear)."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"Unknown activation function: {identifier!r}. Known: "
                     f"{sorted(_BY_NAME)}, or pass a callable.")


def serialize(activation) -> str:
    """The name of an activation function."""
    name = getattr(activation, "__name__", None)
    if name is None:
        raise ValueError(f"Cannot serialize {activation!r}: it has no __name__.")
    return name


def deserialize(name, custom_objects=None):
    """The activation function called `name` (or found in `custom_objects`)."""
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    return get(name)
