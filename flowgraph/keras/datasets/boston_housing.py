"""`tf.keras.datasets.boston_housing`: the Boston house-price regression data.

Example
-------
>>> import flowgraph as tf
>>> callable(tf.keras.datasets.boston_housing.load_data)
True
"""

from __future__ import annotations

import numpy as np

from flowgraph.keras.datasets._files import KERAS_URL, load_npz, locate

__all__ = ["load_data"]


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)`` after Keras' shuffle
    (``np.random.RandomState(seed)``); the last ``test_split`` of the rows is the test set."""
    if not 0 <= test_split < 1:
        raise AssertionError(f"boston_housing.load_data: test_split must be in [0, 1), got "
                             f"{test_split}")
    path = locate("boston_housing", path, KERAS_URL + "boston_housing.npz")
    x, y = load_npz("boston_housing", path, ("x", "y"))
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
