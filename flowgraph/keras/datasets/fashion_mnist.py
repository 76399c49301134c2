"""`tf.keras.datasets.fashion_mnist`: 28x28 clothing images from the four IDX ``.gz``
files Keras caches in ``$KERAS_HOME/datasets/fashion-mnist/``.

Example
-------
>>> import flowgraph as tf
>>> callable(tf.keras.datasets.fashion_mnist.load_data)
True
"""

from __future__ import annotations

import gzip
import os

import numpy as np

from flowgraph.keras.datasets._files import KERAS_URL, locate

__all__ = ["load_data"]

_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def _read(path: str, header: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=header)


def load_data():
    """``(x_train, y_train), (x_test, y_test)``: uint8 images ``(n, 28, 28)`` and labels."""
    paths = [locate("fashion_mnist", os.path.join("fashion-mnist", f), KERAS_URL + f)
             for f in _FILES]
    y_train, y_test = _read(paths[0], 8), _read(paths[2], 8)
    x_train = _read(paths[1], 16).reshape(len(y_train), 28, 28)
    x_test = _read(paths[3], 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
