"""A mixin for optimizers that wrap another (``self._optimizer``): the slots and variables
are the wrapped optimizer's, as TF's loss-scale and moving-average optimizers report them.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable(1.0)
...     opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
...         tf.train.AdamOptimizer(0.1), loss_scale=8.0)
...     _ = opt.minimize(w * w)
...     print(sorted(opt.get_slot_names()))
['m', 'v']
"""

from __future__ import annotations


class DelegatesSlots:
    """`get_slot`, `get_slot_names` and `variables` of ``self._optimizer``."""

    def get_slot(self, var, name: str):
        """The wrapped optimizer's slot `name` of `var`."""
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self) -> list[str]:
        """The wrapped optimizer's slot names."""
        return self._optimizer.get_slot_names()

    def variables(self):
        """The wrapped optimizer's variables."""
        return self._optimizer.variables()
