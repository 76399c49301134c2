"""`tf.keras.regularizers`: weight penalties ``l1 * sum(|w|) + l2 * sum(w ** 2)``.

Unlike the ``tf.contrib.layers`` regularizers (`flowgraph.ops.regularizers`), the Keras
L2 penalty has no factor 1/2. An instance is a callable ``reg(weights) -> scalar``, so it
also works as `regularizer=` of `tf.get_variable` and `kernel_regularizer=` of `tf.layers`.

Example
-------
>>> import flowgraph as tf
>>> reg = tf.keras.regularizers.l2(0.1)
>>> round(float(tf.Session().run(reg(tf.constant([1.0, -3.0])))), 6)
1.0
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.ops import math_ops, math_reduce
from flowgraph.ops.nn_loss_ops import l2_loss

__all__ = ["L1", "L1L2", "L2", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2",
           "serialize"]


class Regularizer:
    """The base class: a callable from a weight tensor to a scalar penalty."""

    def __call__(self, x):
        return 0.0

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> reg = tf.keras.regularizers.L1L2(l1=0.5, l2=0.25)
    >>> float(tf.Session().run(reg(tf.constant([2.0]))))
    2.0
    """

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        # float32 values, as TF keeps them (its configs say 0.009999999776482582)
        self.l1 = float(np.float32(l1 or 0.0))
        self.l2 = float(np.float32(l2 or 0.0))

    def __call__(self, x):
        # TF's ops: a zero Const, then ``+ l1 * Sum(Abs(x))`` and ``+ 2 * l2 * L2Loss(x)``
        # (mul, add, mul_1, add_1); a variable is read inside Abs / L2Loss
        penalty = constant(0.0, dtype=_dtypes.as_dtype(getattr(x, "dtype", "float32")).base_dtype)
        if self.l1:
            penalty += _l1_term(self.l1, x)
        if self.l2:
            penalty += _l2_term(self.l2, x)
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


def _l1_term(l1: float, x):
    return l1 * math_reduce.reduce_sum(math_ops.abs(x))


def _l2_term(l2: float, x):
    return 2.0 * l2 * l2_loss(x)  # no 1/2 overall, as Keras


class L1(Regularizer):
    """An L1 penalty ``l1 * sum(|x|)`` (``tf.keras.regularizers.l1``; its config has
    ``l1`` only). Not an `L1L2` for ``isinstance``, as in TF."""

    def __init__(self, l1: float = 0.01, **kwargs) -> None:
        l1 = kwargs.pop("l", l1)
        if kwargs:
            raise TypeError(f"L1: unexpected keyword argument(s) {sorted(kwargs)}")
        self.l1, self.l2 = float(np.float32(l1 or 0.0)), 0.0

    def __call__(self, x):
        return _l1_term(self.l1, x)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(Regularizer):
    """An L2 penalty ``l2 * sum(x ** 2)`` (``tf.keras.regularizers.l2``; no 1/2, unlike
    ``tf.nn.l2_loss``)."""

    def __init__(self, l2: float = 0.01, **kwargs) -> None:
        l2 = kwargs.pop("l", l2)
        if kwargs:
            raise TypeError(f"L2: unexpected keyword argument(s) {sorted(kwargs)}")
        self.l1, self.l2 = 0.0, float(np.float32(l2 or 0.0))

    def __call__(self, x):
        return _l2_term(self.l2, x)

    def get_config(self) -> dict:
        return {"l2": self.l2}


def l1(l: float = 0.01) -> L1:  # noqa: E741 (Keras's argument name)
    """An L1 penalty ``l * sum(|x|)``."""
    return L1(l1=l)


def l2(l: float = 0.01) -> L2:  # noqa: E741
    """An L2 penalty ``l * sum(x ** 2)`` (no 1/2, unlike ``tf.nn.l2_loss``)."""
    return L2(l2=l)


def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:
    """Both penalties, summed."""
    return L1L2(l1=l1, l2=l2)


_BY_NAME = {"l1": l1, "l2": l2, "l1_l2": l1_l2}


def serialize(regularizer) -> dict:
    """``{"class_name": ..., "config": ...}`` of a regularizer."""
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}


def deserialize(config: dict):
    """The regularizer `serialize` described."""
    cls = {"L1L2": L1L2, "L1": L1, "L2": L2, "Regularizer": Regularizer,
           "l1": L1, "l2": L2, "l1_l2": L1L2}.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown regularizer: {config.get('class_name')!r}")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """A regularizer from None, a name ('l1', 'l2', 'l1_l2'), a config dict or a callable."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown regularizer {identifier!r}; known: {sorted(_BY_NAME)}")
        return _BY_NAME[identifier]()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
