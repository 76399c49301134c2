"""`tf.keras.utils`: NumPy helpers for preparing Keras inputs, and the registry of
custom objects (`custom_object_scope`, `get_custom_objects`) that `load_model` and
`model_from_json` look names up in besides their `custom_objects` argument.

Example
-------
>>> import flowgraph as tf
>>> tf.keras.utils.to_categorical([0, 2], 3).tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

__all__ = ["CustomObjectScope", "custom_object_scope", "get_custom_objects", "normalize",
           "to_categorical"]

_GLOBAL_CUSTOM_OBJECTS: dict = {}


def get_custom_objects() -> dict:
    """The process-wide ``{name: class or function}`` that deserialization consults;
    update it to register objects for good.

    Example
    -------
    >>> def my_act(x):
    ...     return x
    >>> get_custom_objects()["my_act"] = my_act
    >>> "my_act" in get_custom_objects()
    True
    >>> del get_custom_objects()["my_act"]
    """
    return _GLOBAL_CUSTOM_OBJECTS


class CustomObjectScope:
    """Within ``with CustomObjectScope({"name": obj}, ...):``, the given objects are
    registered (`get_custom_objects`); the registry is put back on exit."""

    def __init__(self, *args) -> None:
        for arg in args:
            if not isinstance(arg, dict):
                raise TypeError(f"CustomObjectScope takes dicts of custom objects, got "
                                f"{type(arg).__name__}: {arg!r}")
        self.custom_objects = args
        self.backup = None

    def __enter__(self):
        self.backup = dict(_GLOBAL_CUSTOM_OBJECTS)
        for objects in self.custom_objects:
            _GLOBAL_CUSTOM_OBJECTS.update(objects)
        return self

    def __exit__(self, *exc) -> None:
        _GLOBAL_CUSTOM_OBJECTS.clear()
        _GLOBAL_CUSTOM_OBJECTS.update(self.backup)


def custom_object_scope(*args) -> CustomObjectScope:
    """`CustomObjectScope` under its function name (``with custom_object_scope({...}):``)."""
    return CustomObjectScope(*args)


def _flat_class_ids(y, num_classes=None) -> tuple[np.ndarray, tuple, int]:
    """``(ids, shape, num_classes)``: integer class ids `y` flattened, the shape to give
    the encoded rows (`y`'s, less a trailing axis of 1) and `num_classes` (default
    ``max(y) + 1``); what `to_categorical` and `to_ordinal` share."""
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    if num_classes is None:
        num_classes = int(np.max(y)) + 1
    return y, shape, num_classes


def to_categorical(y, num_classes=None, dtype="float32") -> np.ndarray:
    """One-hot rows for integer class ids `y` (any shape; a trailing axis of 1 is
    dropped), with `num_classes` columns (default ``max(y) + 1``).

    Example
    -------
    >>> to_categorical([[1], [0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    y, shape, num_classes = _flat_class_ids(y, num_classes)
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
