"""`tf.keras.datasets.mnist`: 28x28 handwritten digits from Keras' ``mnist.npz``.

Example
-------
>>> import flowgraph as tf
>>> callable(tf.keras.datasets.mnist.load_data)
True
"""

from __future__ import annotations

from flowgraph.keras.datasets._files import KERAS_URL, load_npz, locate

__all__ = ["load_data"]


def load_data(path="mnist.npz"):
    """``(x_train, y_train), (x_test, y_test)``: uint8 images ``(n, 28, 28)`` and labels,
    from ``$KERAS_HOME/datasets/<path>`` (see `flowgraph.keras.datasets`)."""
    path = locate("mnist", path, KERAS_URL + "mnist.npz")
    x_train, y_train, x_test, y_test = load_npz("mnist", path,
                                                ("x_train", "y_train", "x_test", "y_test"))
    return (x_train, y_train), (x_test, y_test)
