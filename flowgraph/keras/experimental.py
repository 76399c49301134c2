"""`tf.keras.experimental` (TF 1.x mode): the cosine learning-rate schedules.

A schedule is a callable ``schedule(step) -> learning rate`` (a float32 tensor), with
Keras' arguments and ``get_config``. In graph mode, feed it the global step and give
the result to a `tf.train` optimizer. TF 1.x's ``LinearModel``, ``WideDeepModel`` and
``SequenceFeatures`` (Keras models over feature columns) are not provided: use
`tf.estimator.LinearRegressor`/`DNNLinearCombinedClassifier` and friends instead.

Example
-------
>>> import flowgraph as tf
>>> schedule = tf.keras.experimental.CosineDecay(0.1, decay_steps=10)
>>> round(float(tf.Session().run(schedule(5))), 4)
0.05
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_index_ops, math_ops
from flowgraph.train import learning_rate_decay as _decay
from flowgraph.train import learning_rate_decay_extra as _decay_extra

__all__ = ["CosineDecay", "CosineDecayRestarts"]


class CosineDecay:
    """``initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * t / decay_steps)) +
    alpha)`` with ``t = min(step, decay_steps)``; with ``warmup_target``, the first
    ``warmup_steps`` rise linearly from ``initial_learning_rate`` to it, and the decay
    then starts from ``warmup_target``."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None,
                 warmup_target=None, warmup_steps=0) -> None:
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.alpha, self.name = alpha, name
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def __call__(self, step):
        with name_scope(self.name or "CosineDecay"):
            step = math_ops.cast(convert_to_tensor(step), _dtypes.float32)
            if self.warmup_target is None:
                return _decay.cosine_decay(self.initial_learning_rate, step, self.decay_steps,
                                           alpha=self.alpha)
            start, target = float(self.initial_learning_rate), float(self.warmup_target)
            warm = math_ops.add(start, math_ops.multiply(
                (target - start) / max(self.warmup_steps, 1), step))
            decayed = _decay.cosine_decay(target, math_ops.subtract(step, self.warmup_steps),
                                          self.decay_steps, alpha=self.alpha)
            return array_index_ops.where(math_ops.less(step, float(self.warmup_steps)),
                                         warm, decayed)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class CosineDecayRestarts:
    """Cosine decay with warm restarts (SGDR): the first period lasts
    ``first_decay_steps``, each next one ``t_mul`` times longer and starting ``m_mul``
    times lower; ``alpha`` is the floor, as a fraction of the period's start."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name=None) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps, self.t_mul, self.m_mul = first_decay_steps, t_mul, m_mul
        self.alpha, self.name = alpha, name

    def __call__(self, step):
        with name_scope(self.name or "SGDRDecay"):
            step = math_ops.cast(convert_to_tensor(step), _dtypes.float32)
            return _decay_extra.cosine_decay_restarts(
                self.initial_learning_rate, step, self.first_decay_steps, t_mul=self.t_mul,
                m_mul=self.m_mul, alpha=self.alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self.t_mul,
                "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


