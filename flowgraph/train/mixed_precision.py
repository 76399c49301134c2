"""`tf.mixed_precision` (TF 1.x graph mode): loss scaling for an optimizer.

`enable_mixed_precision_graph_rewrite(opt)` wraps `opt` in a
`MixedPrecisionLossScaleOptimizer` with dynamic loss scaling: gradients are computed on
``loss * scale`` and divided by ``scale``; a step whose gradients are not all finite is
skipped and halves the scale; `increment_period` finite steps in a row double it.
TensorFlow also rewrites the graph to compute in float16 on GPUs; flowgraph keeps the
graph's dtypes (its CPU kernels gain nothing from float16), so only the loss scaling
happens. The loss scales: `experimental.LossScale`, `FixedLossScale`, `DynamicLossScale`.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable([1.0, 2.0])
...     opt = tf.mixed_precision.enable_mixed_precision_graph_rewrite(
...         tf.train.GradientDescentOptimizer(0.1))
...     train = opt.minimize(tf.reduce_sum(w * w))
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         sess.run(train)
...         print(sess.run(w), sess.run(opt._loss_scale()))
[0.8 1.6] 32768.0
"""

from __future__ import annotations

import types

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.graph import control_dependencies
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import math_ops
from flowgraph.ops.array_index_ops import where
from flowgraph.ops.array_join_ops import stack
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.math_reduce import reduce_all
from flowgraph.ops.variables import Variable
from flowgraph.train.optimizer import Optimizer
from flowgraph.train.wrapped_optimizer import DelegatesSlots

__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale",
           "MixedPrecisionLossScaleOptimizer", "disable_mixed_precision_graph_rewrite",
           "enable_mixed_precision_graph_rewrite", "experimental"]


class LossScale:
    """The interface: ``loss_scale()`` is the current scale (a float32 tensor) and
    ``update(grads)`` returns ``(update_op, should_apply_gradients)``."""

    def __call__(self):
        raise NotImplementedError

    def update(self, grads):
        raise NotImplementedError

    def get_config(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class FixedLossScale(LossScale):
    """A constant loss scale.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.mixed_precision.experimental.FixedLossScale(128.0).get_config()
    {'loss_scale_value': 128.0}
    """

    def __init__(self, loss_scale_value) -> None:
        if not isinstance(loss_scale_value, int | float):
            raise ValueError(f"loss_scale_value must be a Python int or float, got "
                             f"{loss_scale_value!r}")
        self._value = float(loss_scale_value)

    def __call__(self):
        return constant(self._value, _dtypes.float32)

    def update(self, grads):
        return no_op(), constant(True)

    def get_config(self) -> dict:
        return {"loss_scale_value": self._value}


def _all_finite(grads):
    checks = [reduce_all(math_ops.is_finite(
        g.values if isinstance(g, IndexedSlices) else g)) for g in grads if g is not None]
    if not checks:
        return constant(True)
    return reduce_all(stack(checks)) if len(checks) > 1 else checks[0]


class DynamicLossScale(LossScale):
    """A loss scale that halves on non-finite gradients (never below 1) and grows by
    `multiplier` after `increment_period` finite steps in a row. Its state is two
    non-trainable global variables, ``current_loss_scale`` and ``good_steps``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     ls = tf.mixed_precision.experimental.DynamicLossScale(initial_loss_scale=8.0)
    ...     print(ls.get_config())
    {'initial_loss_scale': 8.0, 'increment_period': 2000, 'multiplier': 2.0}
    """

    def __init__(self, initial_loss_scale=2 ** 15, increment_period: int = 2000,
                 multiplier: float = 2.0) -> None:
        self._initial = float(initial_loss_scale)
        self._period = int(increment_period)
        self._multiplier = float(multiplier)
        self._scale = Variable(self._initial, trainable=False, dtype=_dtypes.float32,
                               name="current_loss_scale")
        self._good_steps = Variable(0, trainable=False, dtype=_dtypes.int64,
                                    name="good_steps")

    initial_loss_scale = property(lambda self: self._initial)
    increment_period = property(lambda self: self._period)
    multiplier = property(lambda self: self._multiplier)

    def __call__(self):
        return self._scale.value()

    def update(self, grads):
        finite = _all_finite(grads)

        def on_finite():
            scale, good = self._scale.value(), self._good_steps.value()
            grow = (good + 1) >= self._period
            grown = scale * self._multiplier
            grow_ok = math_ops.logical_and(grow, math_ops.is_finite(grown))
            new_scale = where(grow_ok, grown, scale)
            new_good = where(grow, constant(0, _dtypes.int64), good + 1)
            return _assign_both(self, new_scale, new_good)

        def on_overflow():
            new_scale = math_ops.maximum(self._scale.value() / self._multiplier, 1.0)
            return _assign_both(self, new_scale, constant(0, _dtypes.int64))

        # A cond, as TensorFlow builds it: the apply step's cond that follows is "cond_1"
        # (so a slot the wrapped optimizer creates there is "cond_1/beta1_power").
        return cond(finite, on_finite, on_overflow), finite

    def get_config(self) -> dict:
        return {"initial_loss_scale": self._initial, "increment_period": self._period,
                "multiplier": self._multiplier}


def _as_loss_scale(loss_scale) -> LossScale:
    if isinstance(loss_scale, LossScale):
        return loss_scale
    if loss_scale == "dynamic":
        return DynamicLossScale()
    if isinstance(loss_scale, int | float) and not isinstance(loss_scale, bool):
        return FixedLossScale(loss_scale)
    raise ValueError(f"Could not interpret loss scale identifier: {loss_scale}")


class MixedPrecisionLossScaleOptimizer(DelegatesSlots, Optimizer):
    """Wraps an optimizer with loss scaling (see the module docstring).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     opt = tf.mixed_precision.MixedPrecisionLossScaleOptimizer(
    ...         tf.train.GradientDescentOptimizer(0.5), loss_scale=64.0)
    ...     print(type(opt._loss_scale).__name__)
    FixedLossScale
    """

    def __init__(self, opt, loss_scale) -> None:
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        super().__init__(False, "MixedPrecisionLossScaleOptimizer")
        self._optimizer = opt
        self._loss_scale = _as_loss_scale(loss_scale)

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops: bool = False,
                          grad_loss=None) -> list:
        """The wrapped optimizer's gradients of ``loss * scale``, divided by ``scale``."""
        scale = self._loss_scale()
        loss = self._call_if_callable(loss)
        scaled = loss * math_ops.cast(scale, loss.dtype.base_dtype)
        grads_and_vars = self._optimizer.compute_gradients(
            scaled, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        return [(self._unscale(g, scale), v) for g, v in grads_and_vars]

    def variables(self) -> list:
        """The wrapped optimizer's variables, then a dynamic scale's two."""
        extra = ([self._loss_scale._scale, self._loss_scale._good_steps]
                 if isinstance(self._loss_scale, DynamicLossScale) else [])
        return list(self._optimizer.variables()) + extra

    @staticmethod
    def _unscale(grad, scale):
        if grad is None:
            return None
        if isinstance(grad, IndexedSlices):
            inv = math_ops.cast(1.0 / scale, grad.values.dtype.base_dtype)
            return IndexedSlices(grad.values * inv, grad.indices, grad.dense_shape)
        return grad * math_ops.cast(1.0 / scale, grad.dtype.base_dtype)

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None):
        """Update a dynamic loss scale and apply the gradients only if they are all finite
        (a skipped step leaves `global_step` alone, as in TensorFlow); a fixed scale
        applies them unconditionally."""
        if not isinstance(self._loss_scale, DynamicLossScale):
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        name = name if name is not None else self._optimizer.get_name()
        grads_and_vars = list(grads_and_vars)
        update, finite = self._loss_scale.update([g for g, _ in grads_and_vars])

        def apply():
            return self._optimizer.apply_gradients(grads_and_vars, global_step,
                                                   name + "-wrapped")

        step = cond(finite, lambda: _as_op(apply()), lambda: _as_op(no_op()))
        return group(step, update, name=name)


def _assign_both(loss_scale, new_scale, new_good):
    with control_dependencies([new_scale, new_good]):
        return _as_op(group(loss_scale._scale.assign(new_scale),
                            loss_scale._good_steps.assign(new_good)))


def _as_op(x):
    with control_dependencies([x]):
        return constant(True)


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """`opt` wrapped in a `MixedPrecisionLossScaleOptimizer` (TensorFlow's float16
    graph rewrite itself does not happen in flowgraph).

    Example
    -------
    >>> import flowgraph as tf
    >>> opt = tf.mixed_precision.enable_mixed_precision_graph_rewrite(
    ...     tf.train.GradientDescentOptimizer(0.1), loss_scale=8.0)
    >>> type(opt).__name__
    'MixedPrecisionLossScaleOptimizer'
    """
    if not isinstance(opt, Optimizer):
        raise ValueError('"opt" must be an instance of a tf.train.Optimizer or a '
                         f"tf.keras.optimizers.Optimizer, but got: {opt}")
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError('"opt" must not already be an instance of a '
                         "MixedPrecisionLossScaleOptimizer. "
                         "`enable_mixed_precision_graph_rewrite` will automatically wrap "
                         "the optimizer with a MixedPrecisionLossScaleOptimizer.")
    return MixedPrecisionLossScaleOptimizer(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    """No-op: there is no graph rewrite to turn off (optimizers already wrapped keep
    their loss scaling).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.mixed_precision.disable_mixed_precision_graph_rewrite()
    """


def __dir__():
    return list(__all__)


experimental = types.SimpleNamespace(LossScale=LossScale, FixedLossScale=FixedLossScale,
                                     DynamicLossScale=DynamicLossScale)
