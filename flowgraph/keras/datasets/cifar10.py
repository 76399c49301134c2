"""`tf.keras.datasets.cifar10`: 32x32 colour images in 10 classes.

Reads the binary version (``cifar-10-binary.tar.gz``, or its ``cifar-10-batches-bin``
folder) from ``$KERAS_HOME/datasets``; Keras' pickled Python batches are refused.

Example
-------
>>> import flowgraph as tf
>>> callable(tf.keras.datasets.cifar10.load_data)
True
"""

from __future__ import annotations

from flowgraph.keras.datasets import _cifar

__all__ = ["load_data"]


def load_data():
    """``(x_train, y_train), (x_test, y_test)``: uint8 images ``(n, 32, 32, 3)``
    (channels last) and uint8 labels ``(n, 1)``."""
    return _cifar.load_cifar10()
