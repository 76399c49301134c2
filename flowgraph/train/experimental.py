"""`tf.train.experimental`: loss scaling for mixed precision, and `PythonState`.

The loss scales and the loss-scale optimizer are those of `tf.mixed_precision`
(`flowgraph/train/mixed_precision.py`): `enable_mixed_precision_graph_rewrite(opt)`
wraps an optimizer in dynamic loss scaling (flowgraph keeps the graph's dtypes; only the
scaling happens).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     scale = tf.train.experimental.FixedLossScale(128.0)
...     print(tf.Session().run(scale()))
128.0
"""

from __future__ import annotations

import abc

from flowgraph.train.mixed_precision import (
    DynamicLossScale,
    FixedLossScale,
    LossScale,
    MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)

__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale",
           "MixedPrecisionLossScaleOptimizer", "PythonState",
           "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite"]


class PythonState(abc.ABC):
    """The interface of Python state that converts to and from a string: subclasses
    implement `serialize` (returning a string) and `deserialize` (restoring from one).

    flowgraph's object-based `tf.train.Checkpoint` does not save such objects; call
    `serialize` / `deserialize` around a save and restore yourself.

    Example
    -------
    >>> import flowgraph as tf
    >>> class Counter(tf.train.experimental.PythonState):
    ...     def __init__(self):
    ...         self.n = 0
    ...     def serialize(self):
    ...         return str(self.n)
    ...     def deserialize(self, string_value):
    ...         self.n = int(string_value)
    >>> c = Counter(); c.deserialize("7"); c.serialize()
    '7'
    """

    @abc.abstractmethod
    def serialize(self) -> str:
        """The state as a string."""

    @abc.abstractmethod
    def deserialize(self, string_value) -> None:
        """Restore the state from `string_value` (what `serialize` returned)."""


def __dir__():
    return list(__all__)
