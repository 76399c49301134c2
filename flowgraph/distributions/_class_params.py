"""`logits`, `probs` and `event_size` of a distribution over classes parameterized by
``self._logits``/``self._probs`` (classes on the last dimension): `Categorical` and the
one-hot distributions of `tf.contrib.distributions`.

Example
-------
>>> import flowgraph as tf
>>> d = tf.distributions.Categorical(logits=[[0.0, 1.0], [2.0, 0.0]])
>>> d.batch_shape.as_list(), d.logits.shape.as_list()
([2], [2, 2])
"""

from __future__ import annotations


class ClassParameters:
    """Mixin reading ``self._logits``, ``self._probs`` and ``self._event_size``."""

    @property
    def event_size(self):
        """The number of classes (an int32 scalar)."""
        return self._event_size

    @property
    def logits(self):
        """Unnormalized log-probabilities per class."""
        return self._logits

    @property
    def probs(self):
        """Probabilities per class."""
        return self._probs

    def _batch_shape(self):
        return self._logits.shape.with_rank_at_least(1)[:-1]
