"""`tf.keras.optimizers.schedules`: learning-rate schedules, callables
``schedule(step) -> learning rate`` (a float tensor) with Keras' arguments,
``get_config`` / ``from_config`` and `serialize` / `deserialize`.

Give one as a Keras optimizer's ``learning_rate``: the optimizer evaluates it at its
``iterations`` each step. In plain graph code, call it on the global step and give the
result to a `tf.train` optimizer.

Example
-------
>>> import flowgraph as tf
>>> schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
>>> round(float(tf.Session().run(schedule(20))), 4)
0.025
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_index_ops, math_ops
from flowgraph.train import learning_rate_decay as _decay
from flowgraph.train import learning_rate_decay_extra as _decay_extra

__all__ = ["CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay",
           "LearningRateSchedule", "PiecewiseConstantDecay", "PolynomialDecay",
           "deserialize", "serialize"]


class LearningRateSchedule:
    """Base of the schedules: ``__call__(step)`` and ``get_config``."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(step).")

    def get_config(self) -> dict:
        raise NotImplementedError(f"{type(self).__name__} must implement get_config().")

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _float_step(step):
    return math_ops.cast(convert_to_tensor(step), _dtypes.float32)


class _StepDecay(LearningRateSchedule):
    """What `ExponentialDecay` and `InverseTimeDecay` share: their arguments, their
    config and the decay's progress ``step / decay_steps`` (floored with `staircase`)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name=None) -> None:
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.decay_rate, self.staircase, self.name = decay_rate, staircase, name

    def _progress(self, step):
        p = math_ops.divide(_float_step(step), float(self.decay_steps))
        return math_ops.floor(p) if self.staircase else p

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StepDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent
    floored with `staircase`)."""

    def __call__(self, step):
        with name_scope(self.name or "ExponentialDecay"):
            return math_ops.multiply(float(self.initial_learning_rate),
                                     math_ops.pow(float(self.decay_rate), self._progress(step)))


class InverseTimeDecay(_StepDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``."""

    def __call__(self, step):
        with name_scope(self.name or "InverseTimeDecay"):
            return math_ops.divide(float(self.initial_learning_rate),
                                   math_ops.add(1.0, math_ops.multiply(
                                       float(self.decay_rate), self._progress(step))))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` while ``boundaries[i-1] < step <= boundaries[i]``."""

    def __init__(self, boundaries, values, name=None) -> None:
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of "
                             f"values. Received: boundaries={boundaries} of length "
                             f"{len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        with name_scope(self.name or "PiecewiseConstant"):
            step = convert_to_tensor(step)
            return _decay.piecewise_constant(step, [type(b)(b) for b in self.boundaries],
                                             [float(v) for v in self.values])

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """From `initial_learning_rate` to `end_learning_rate` over `decay_steps` along
    ``(1 - step / decay_steps) ** power`` (restarting each period with `cycle`)."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001,
                 power=1.0, cycle=False, name=None) -> None:
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power = end_learning_rate, power
        self.cycle, self.name = cycle, name

    def __call__(self, step):
        with name_scope(self.name or "PolynomialDecay"):
            step = _float_step(step)
            steps = convert_to_tensor(float(self.decay_steps))
            if self.cycle:
                times = array_index_ops.where(math_ops.equal(step, 0.0), 1.0,
                                              math_ops.ceil(math_ops.divide(step, steps)))
                steps = math_ops.multiply(steps, times)
            else:
                step = math_ops.minimum(step, steps)
            p = math_ops.divide(step, steps)
            start, end = float(self.initial_learning_rate), float(self.end_learning_rate)
            return math_ops.add(math_ops.multiply(
                start - end, math_ops.pow(math_ops.subtract(1.0, p), float(self.power))), end)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class CosineDecay(LearningRateSchedule):
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
            step = _float_step(step)
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


class CosineDecayRestarts(LearningRateSchedule):
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
            return _decay_extra.cosine_decay_restarts(
                self.initial_learning_rate, _float_step(step), self.first_decay_steps,
                t_mul=self.t_mul, m_mul=self.m_mul, alpha=self.alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self.t_mul,
                "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}


_BY_NAME = {c.__name__: c for c in (CosineDecay, CosineDecayRestarts, ExponentialDecay,
                                    InverseTimeDecay, PiecewiseConstantDecay,
                                    PolynomialDecay)}


def serialize(learning_rate_schedule) -> dict:
    """``{'class_name': ..., 'config': ...}`` of a schedule."""
    if not isinstance(learning_rate_schedule, LearningRateSchedule):
        raise ValueError(f"Could not serialize {learning_rate_schedule!r}: not a "
                         f"LearningRateSchedule.")
    return {"class_name": type(learning_rate_schedule).__name__,
            "config": learning_rate_schedule.get_config()}


def deserialize(config, custom_objects=None):
    """The schedule described by `serialize`'s dict (custom classes from
    `custom_objects` or the registered custom objects)."""
    from flowgraph.keras.utils import get_custom_objects

    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret learning-rate schedule config: {config!r}; "
                         f"expected {{'class_name': ..., 'config': {{...}}}}.")
    name = config["class_name"]
    cls = {**_BY_NAME, **get_custom_objects(), **(custom_objects or {})}.get(name)
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: '{name}'. Please ensure you are "
                         f"using a `keras.utils.custom_object_scope` and that this object "
                         f"is included in the scope.")
    return cls.from_config(config.get("config", {}))
