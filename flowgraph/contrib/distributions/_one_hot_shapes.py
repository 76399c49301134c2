"""The parameters and shapes shared by distributions over one-hot vectors
(`OneHotCategorical`, `ExpRelaxedOneHotCategorical`): class logits and probabilities
whose last dimension is the event.

Example
-------
>>> import flowgraph as tf
>>> d = tf.contrib.distributions.OneHotCategorical(logits=[[0.0, 1.0, 2.0]])
>>> d.batch_shape.as_list(), d.event_shape.as_list()
([1], [3])
"""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions._class_params import ClassParameters


class OneHotEventShapes(ClassParameters):
    """Mixin: the class parameters, and the last dimension of the logits as the event."""

    def _batch_shape_tensor(self):
        return o.shape(self._logits)[:-1]

    def _event_shape(self):
        return self._logits.shape.with_rank_at_least(1)[-1:]

    def _event_shape_tensor(self):
        return o.shape(self._logits)[-1:]
