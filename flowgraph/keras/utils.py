"""`tf.keras.utils`: NumPy helpers for preparing Keras inputs.

Example
-------
>>> import flowgraph as tf
>>> tf.keras.utils.to_categorical([0, 2], 3).tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

__all__ = ["normalize", "to_categorical"]


def to_categorical(y, num_classes=None, dtype="float32") -> np.ndarray:
    """One-hot rows for integer class ids `y` (any shape; a trailing axis of 1 is
    dropped), with `num_classes` columns (default ``max(y) + 1``).

    Example
    -------
    >>> to_categorical([[1], [0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    if num_classes is None:
        num_classes = int(np.max(y)) + 1
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape((*shape, num_classes))


def normalize(x, axis=-1, order=2) -> np.ndarray:
    """`x` divided by its `order`-norm along `axis` (zero norms left as they are).

    Example
    -------
    >>> normalize([[3.0, 4.0]]).tolist()
    [[0.6, 0.8]]
    """
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)
