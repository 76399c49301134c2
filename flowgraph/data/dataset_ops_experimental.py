"""The `tf.data.experimental` namespace (TF 1.15): AUTOTUNE and the transformation
factories TF1 programs pass to `Dataset.apply`.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(6).apply(tf.data.experimental.map_and_batch(
...     lambda x: x * 2, batch_size=4, num_parallel_calls=tf.data.experimental.AUTOTUNE))
>>> ds.output_shapes
TensorShape([Dimension(None)])
"""

from __future__ import annotations

from .dataset import AUTOTUNE
from .iterator import get_output_classes, get_output_shapes, get_output_types

__all__ = [
    "AUTOTUNE",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "map_and_batch",
    "shuffle_and_repeat",
    "unbatch",
]


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """``map(map_func)`` then ``batch(batch_size)``, for `Dataset.apply`."""
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches

    def apply(dataset):
        return dataset.map(map_func, calls).batch(batch_size, drop_remainder)

    return apply


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``, for `Dataset.apply`."""

    def apply(dataset):
        return dataset.shuffle(buffer_size, seed).repeat(count)

    return apply


def unbatch():
    """``Dataset.unbatch``, for `Dataset.apply`."""

    def apply(dataset):
        return dataset.unbatch()

    return apply
