"""`tf.keras.datasets.cifar100`: 32x32 colour images in 100 (or 20 coarse) classes.

Reads the binary version (``cifar-100-binary.tar.gz``, or its ``cifar-100-binary``
folder) from ``$KERAS_HOME/datasets``; Keras' pickled Python batches are refused.

Example
-------
>>> import flowgraph as tf
>>> callable(tf.keras.datasets.cifar100.load_data)
True
"""

from __future__ import annotations

from flowgraph.keras.datasets import _cifar

__all__ = ["load_data"]


def load_data(label_mode="fine"):
    """``(x_train, y_train), (x_test, y_test)``: uint8 images ``(n, 32, 32, 3)`` and int64
    labels ``(n, 1)``, ``label_mode`` ``'fine'`` (100 classes) or ``'coarse'`` (20)."""
    return _cifar.load_cifar100(label_mode)
