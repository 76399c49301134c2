"""Default names of layer objects, unique per graph, as TensorFlow's Keras backend hands
them out: one counter per base name and graph, shared by Keras layers (zero-based:
``dense``, ``dense_1``, ...) and TF1's `tf.layers` layers and RNN cells (one-based:
``dense_1``, ``dense_2``, ...). A name only labels the object (``layer.name``); the
variable scope of a `tf.layers` layer or a cell comes from its base name.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.framework.object_names import unique_object_name
>>> with tf.Graph().as_default():
...     print(unique_object_name("dense", zero_based=False), unique_object_name("dense"))
dense_1 dense_1
"""

from __future__ import annotations

from flowgraph.framework.graph import get_default_graph

__all__ = ["reset_object_names", "unique_object_name"]

_KEY = "_object_name_uids"


def unique_object_name(base: str, zero_based: bool = True, graph=None) -> str:
    """The next name for `base` in `graph` (default: the default graph): zero-based
    ``base``, ``base_1``, ...; otherwise ``base_1``, ``base_2``, ..."""
    uids = (graph or get_default_graph()).__dict__.setdefault(_KEY, {})
    n = uids.get(base, 0)
    uids[base] = n + 1
    if zero_based:
        return base if n == 0 else f"{base}_{n}"
    return f"{base}_{n + 1}"


def reset_object_names(graph=None) -> None:
    """Forget `graph`'s counters (Keras' ``clear_session`` / ``reset_uids``)."""
    (graph or get_default_graph()).__dict__.pop(_KEY, None)
