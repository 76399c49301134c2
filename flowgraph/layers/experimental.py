"""`tf.layers.experimental`: Keras-style variable management for `tf.layers`.

Inside `keras_style_scope()` (or for the whole program after `set_keras_style()`),
`tf.layers` objects manage their variables as Keras layers do: each layer object owns
its variables, and the variable-scope arguments that share them between layers
(``_scope=``, ``_reuse=True``) are refused with TensorFlow's error. flowgraph's layer
objects already create their variables once and reuse them on later calls, so the
scope changes only what is refused.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default(), tf.layers.experimental.keras_style_scope():
...     layer = tf.layers.Dense(2)
...     _ = layer(tf.ones([1, 3])), layer(tf.ones([4, 3]))
...     print(len(layer.variables))
2
"""

from __future__ import annotations

import contextlib

__all__ = ["keras_style_scope", "set_keras_style"]

_state = {"scope": False, "global": False}


def keras_style() -> bool:
    """Whether layers created now use Keras-style variable management."""
    return _state["scope"] or _state["global"]


@contextlib.contextmanager
def keras_style_scope():
    """Use Keras-style variable management for the `tf.layers` created in this scope."""
    previous = _state["scope"]
    _state["scope"] = True
    try:
        yield
    finally:
        _state["scope"] = previous


def set_keras_style() -> None:
    """Use Keras-style variable management for every `tf.layers` object from now on."""
    _state["global"] = True


def __dir__():
    return list(__all__)
