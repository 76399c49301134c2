"""`Model.fit` / `evaluate` / `predict` on a `tf.keras.utils.Sequence`: the Sequence is
read as a generator of batches, ``len(sequence)`` steps per epoch (shuffled per epoch by
`fit` unless ``shuffle=False``, ``on_epoch_end`` called as each new epoch starts), the
same as TF 2.15's graph-mode Keras gives.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> class Batches(tf.keras.utils.Sequence):
...     def __len__(self):
...         return 2
...     def __getitem__(self, i):
...         return np.ones((4, 1), "f"), np.ones((4, 1), "f")
>>> with tf.Graph().as_default():
...     m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
...     m.compile("sgd", "mse")
...     print(len(m.fit(Batches(), epochs=3, verbose=0).history["loss"]))
3
"""

from __future__ import annotations

import inspect

from flowgraph.keras.training import TrainingMixin
from flowgraph.keras.utils_data import Sequence, SequenceBatches

__all__ = ["SequenceInputsMixin"]

_Y_ERROR = ("`y` argument is not supported when data is a generator or Sequence instance. "
            "Instead pass targets as the second element of the generator.")


def _bind(method, args, kwargs) -> dict:
    bound = inspect.signature(method).bind(None, *args, **kwargs)
    arguments = dict(bound.arguments)
    arguments.pop("self", None)
    extra = arguments.pop("kwargs", {})
    return {**arguments, **extra}


class SequenceInputsMixin:
    """Turns a `Sequence` given to fit / evaluate / predict into a batch generator (and,
    for a model that reads a dict of inputs in sorted key order, such as `LinearModel`,
    a dict of arrays into that list)."""

    _sorted_dict_inputs = False

    def _sorted_inputs(self, call: dict) -> dict:
        x = call.get("x")
        if self._sorted_dict_inputs and isinstance(x, dict):
            call["x"] = [x[k] for k in sorted(x)]
        return call

    def fit(self, *args, **kwargs):
        call = self._sorted_inputs(_bind(TrainingMixin.fit, args, kwargs))
        x = call.get("x")
        if isinstance(x, Sequence):
            if call.get("y") is not None:
                raise ValueError(_Y_ERROR)
            call["x"] = SequenceBatches(x, shuffle=call.pop("shuffle", True))
            call["steps_per_epoch"] = call.get("steps_per_epoch") or len(x)
        validation = call.get("validation_data")
        if isinstance(validation, Sequence):
            call["validation_data"] = SequenceBatches(validation, shuffle=False)
            call["validation_steps"] = call.get("validation_steps") or len(validation)
        return super().fit(**call)

    def evaluate(self, *args, **kwargs):
        call = self._sorted_inputs(_bind(TrainingMixin.evaluate, args, kwargs))
        x = call.get("x")
        if isinstance(x, Sequence):
            if call.get("y") is not None:
                raise ValueError(_Y_ERROR)
            call["x"] = SequenceBatches(x, shuffle=False)
            call["steps"] = call.get("steps") or len(x)
        return super().evaluate(**call)

    def predict(self, *args, **kwargs):
        call = self._sorted_inputs(_bind(TrainingMixin.predict, args, kwargs))
        x = call.get("x")
        if isinstance(x, Sequence):
            call["x"] = SequenceBatches(x, shuffle=False)
            call["steps"] = call.get("steps") or len(x)
        return super().predict(**call)
