"""`tf.keras.constraints`: projections applied to a weight after each optimizer step.

A constraint is a callable ``constraint(w) -> projected w``. Give one to a layer
(``Dense(..., kernel_constraint=MaxNorm(2))``, or by name: ``"max_norm"``) and the
layer's variable carries it; the `tf.train` optimizer behind ``fit`` assigns
``constraint(var)`` to the variable right after applying its update, as TF's Keras does.

Norms are taken along ``axis`` (0 by default: for a ``Dense`` kernel of shape
``(inputs, units)`` each unit's incoming weight vector), and ``K.epsilon()`` keeps the
divisions finite.

Example
-------
>>> import flowgraph as tf
>>> w = tf.constant([[3.0, 0.5], [4.0, -0.5]])
>>> out = tf.Session().run(tf.keras.constraints.MaxNorm(2.0)(w))
>>> [round(float(v), 4) for v in out[:, 0]]
[1.2, 1.6]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import backend
from flowgraph.ops import array_index_ops, array_ops, math_ops, math_reduce

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "RadialConstraint", "UnitNorm",
           "deserialize", "get", "max_norm", "min_max_norm", "non_neg", "radial_constraint",
           "serialize", "unit_norm"]


class Constraint:
    """The base class: the identity projection."""

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _norms(w, axis):
    return math_ops.sqrt(math_reduce.reduce_sum(math_ops.square(w), axis=axis, keepdims=True))


def _const(value, like):
    return convert_to_tensor(value, dtype=like.dtype.base_dtype)


def _rescale(w, norms, desired):
    """``w * desired / (epsilon + norms)``."""
    scale = math_ops.truediv(desired, math_ops.add(_const(backend.epsilon(), w), norms))
    return math_ops.multiply(w, scale)


class MaxNorm(Constraint):
    """Scale each weight vector (along ``axis``) down to norm at most ``max_value``.

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.keras.constraints.MaxNorm(max_value=1.0, axis=1)
    >>> c.get_config()
    {'max_value': 1.0, 'axis': 1}
    """

    def __init__(self, max_value=2, axis=0) -> None:
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = math_ops.clip_by_value(norms, _const(0, w), _const(self.max_value, w))
        return _rescale(w, norms, desired)

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Zero the negative weights (``w * (w >= 0)``, so they become ``-0.0``)."""

    def __call__(self, w):
        w = convert_to_tensor(w)
        keep = math_ops.cast(math_ops.greater_equal(w, _const(0, w)), w.dtype.base_dtype)
        return math_ops.multiply(w, keep)


class UnitNorm(Constraint):
    """Scale each weight vector (along ``axis``) to norm 1.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.Session().run(tf.keras.constraints.UnitNorm()(tf.constant([[3.0], [4.0]])))
    >>> [round(float(v), 4) for v in out[:, 0]]
    [0.6, 0.8]
    """

    def __init__(self, axis=0) -> None:
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        return math_ops.truediv(w, math_ops.add(_const(backend.epsilon(), w),
                                                _norms(w, self.axis)))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Move each weight vector's norm towards ``[min_value, max_value]``: the new norm is
    ``rate * clip(norm, min_value, max_value) + (1 - rate) * norm``.

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.keras.constraints.MinMaxNorm(min_value=1.0, max_value=2.0, rate=0.5)
    >>> out = tf.Session().run(c(tf.constant([[3.0], [4.0]])))
    >>> [round(float(v), 4) for v in out[:, 0]]
    [2.1, 2.8]
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0) -> None:
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        clipped = math_ops.clip_by_value(norms, _const(self.min_value, w),
                                         _const(self.max_value, w))
        desired = math_ops.add(math_ops.multiply(_const(self.rate, w), clipped),
                               math_ops.multiply(_const(1 - self.rate, w), norms))
        return _rescale(w, norms, desired)

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


def _radial_sources(size: int) -> np.ndarray:
    """For a ``size x size`` kernel, the diagonal index each position copies (Keras' rule:
    the centre takes the value at ``[s-1, s-1]``, ring ``d`` the value at ``[s+d-1]``
    for odd sizes and ``[s+d]`` for even ones, with ``s = size // 2``)."""
    s = size // 2
    centre = (size - 1) / 2.0
    rows, cols = np.indices((size, size))
    ring = np.maximum(np.abs(rows - centre), np.abs(cols - centre))
    ring = np.floor(ring + 0.5).astype(np.int64) if size % 2 else np.floor(ring).astype(np.int64)
    source = np.where(ring == 0, s - 1, s + ring - (1 if size % 2 else 0))
    return (source * size + source).reshape(-1)


class RadialConstraint(Constraint):
    """Make each 2-D slice of a 4-D convolution kernel ``(h, h, in, out)`` radially
    symmetric: every ring around the centre takes one value of the kernel's diagonal."""

    def __call__(self, w):
        w = convert_to_tensor(w)
        shape = w.shape
        if shape.ndims != 4:
            raise ValueError(f"RadialConstraint: the weight tensor must have rank 4. "
                             f"Received weight tensor with shape: {shape}")
        h, wd, c, k = shape.as_list()
        if None in (h, wd, c, k) or h != wd or h < 2:
            raise ValueError(f"RadialConstraint: expected a square kernel of known shape "
                             f"(size >= 2), got {shape}")
        flat = array_ops.reshape(w, [h * wd, c * k])
        picked = array_index_ops.gather(flat, convert_to_tensor(_radial_sources(h),
                                                          dtype=_dtypes.int64))
        return array_ops.reshape(picked, [h, wd, c, k])


# Keras' function-style aliases.
max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm
radial_constraint = RadialConstraint

_BY_NAME = {"MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm,
            "MinMaxNorm": MinMaxNorm, "RadialConstraint": RadialConstraint,
            "Constraint": Constraint, "max_norm": MaxNorm, "non_neg": NonNeg,
            "nonneg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm,
            "radial_constraint": RadialConstraint}


def serialize(constraint) -> dict:
    """``{"class_name": ..., "config": ...}`` of a constraint.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.keras.constraints.serialize(tf.keras.constraints.NonNeg())
    {'class_name': 'NonNeg', 'config': {}}
    """
    return {"class_name": type(constraint).__name__, "config": constraint.get_config()}


def deserialize(config: dict, custom_objects=None):
    """The constraint `serialize` described (``custom_objects`` maps extra class names).

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.keras.constraints.deserialize({"class_name": "MaxNorm",
    ...                                       "config": {"max_value": 3}})
    >>> c.max_value
    3
    """
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"Unknown constraint: {name!r}. Known: {sorted(_BY_NAME)}; pass "
                         f"your own classes in `custom_objects`.")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """A constraint from None, a name (``'max_norm'``, ``'NonNeg'``, ...), a config dict or
    a callable (returned as is).

    Example
    -------
    >>> import flowgraph as tf
    >>> type(tf.keras.constraints.get("unit_norm")).__name__
    'UnitNorm'
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret constraint function identifier: {identifier!r}")
