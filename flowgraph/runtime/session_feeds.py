"""Feed values as a `Session` hands them to a run: string feeds as UTF-8 bytes, and a
fetched tensor that is also fed given back as fed (TensorFlow's client does both).

>>> import numpy as np
>>> string_feed(np.array(["h\u00e9"], dtype=object), None).tolist()
[b'h\xc3\xa9']
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import errors

__all__ = ["return_fed_values", "string_feed"]


def string_feed(arr: np.ndarray, t) -> np.ndarray:
    """A string feed as an object array of bytes: a Python/NumPy str as its UTF-8 bytes
    (as in TensorFlow); any other element (an int, a float, None) is TensorFlow's
    InternalError."""
    kinds = set(map(type, arr.flat))
    if kinds <= {bytes}:
        return arr
    for k in kinds:
        if not issubclass(k, bytes | str):
            raise errors.InternalError(
                None, None, f"Cannot feed tensor '{t.name}' of dtype string: unsupported "
                f"object type {k.__name__} (feed bytes or str)")
    return np.array([v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in arr.flat],
                    dtype=object).reshape(arr.shape)


def return_fed_values(values: list, fetched: list, feed_tensors, feed_values) -> bool:
    """A fetched tensor that is also fed gives back the value fed, as converted for the
    feed (so a fed scalar comes back as a 0-d array), as TensorFlow's client does.
    Whether any was."""
    found = False
    for i, t in enumerate(fetched):
        if t in feed_tensors:
            values[i] = feed_values[feed_tensors.index(t)]
            found = True
    return found
