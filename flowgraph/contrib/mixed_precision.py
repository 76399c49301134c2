"""`tf.contrib.mixed_precision`: loss scaling for float16 training (TF 1.x's API).

`LossScaleOptimizer(opt, loss_scale_manager)` multiplies the loss by the manager's loss
scale before differentiating, divides the gradients by it, and applies them only when
every gradient is finite (otherwise the step, global step included, is skipped). The
manager then updates the scale: `FixedLossScaleManager` keeps it, and
`ExponentialUpdateLossScaleManager` multiplies it by `incr_ratio` after
`incr_every_n_steps` finite steps in a row and by `decr_ratio` (never below 1) after
`decr_every_n_nan_or_inf` non-finite ones since the scale last changed. TensorFlow 2.15's
``MixedPrecisionLossScaleOptimizer`` with a ``DynamicLossScale`` is the same algorithm.

Example
-------
>>> import flowgraph as tf
>>> M = tf.contrib.mixed_precision
>>> with tf.Graph().as_default():
...     w = tf.Variable(1.0)
...     opt = M.LossScaleOptimizer(tf.train.GradientDescentOptimizer(0.5),
...                                M.FixedLossScaleManager(128.0))
...     train = opt.minimize(w * w)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         _ = sess.run(train)
...         float(sess.run(w))
0.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies
from flowgraph.ops import math_ops, state_ops
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.math_reduce import reduce_all
from flowgraph.ops.variables import Variable
from flowgraph.train.optimizer import Optimizer

__all__ = [
    "ExponentialUpdateLossScaleManager",
    "FixedLossScaleManager",
    "LossScaleManager",
    "LossScaleOptimizer",
]


class LossScaleManager:
    """The interface of a loss-scale policy: `get_loss_scale` and `update_loss_scale`."""

    def get_loss_scale(self):
        """The current loss scale, a float32 scalar tensor."""
        raise NotImplementedError("LossScaleManager.get_loss_scale")

    def update_loss_scale(self, finite_grads):
        """An op updating the scale given the boolean scalar `finite_grads`."""
        raise NotImplementedError("LossScaleManager.update_loss_scale")


class FixedLossScaleManager(LossScaleManager):
    """A constant loss scale (a number >= 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> m = tf.contrib.mixed_precision.FixedLossScaleManager(64)
    >>> float(tf.Session().run(m.get_loss_scale()))
    64.0
    """

    def __init__(self, loss_scale):
        if loss_scale < 1:
            raise ValueError(f"FixedLossScaleManager: loss_scale must be at least 1, got "
                             f"{loss_scale}")
        self._loss_scale = float(loss_scale)

    def get_loss_scale(self):
        return convert_to_tensor(self._loss_scale, dtype=_dtypes.float32)

    def update_loss_scale(self, finite_grads):
        del finite_grads
        return no_op()


class ExponentialUpdateLossScaleManager(LossScaleManager):
    """A loss scale that grows by `incr_ratio` after `incr_every_n_steps` finite steps in
    a row and shrinks by `decr_ratio` (to no less than 1) after `decr_every_n_nan_or_inf`
    non-finite steps since it last changed (TF 1.x: finite steps do not reset that
    count; a non-finite one resets the finite count). State: the non-trainable
    variables ``loss_scale`` (float32), ``good_steps`` and ``bad_steps`` (int32).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     m = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(2.0 ** 15, 1000)
    ...     [v.op.name for v in tf.global_variables()]
    ['loss_scale', 'good_steps', 'bad_steps']
    """

    def __init__(self, init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf=2,
                 incr_ratio=2, decr_ratio=0.8):
        self._incr_every_n_steps = incr_every_n_steps
        self._decr_every_n_nan_or_inf = decr_every_n_nan_or_inf
        self._incr_ratio = incr_ratio
        self._decr_ratio = decr_ratio
        self._loss_scale = Variable(
            convert_to_tensor(init_loss_scale, dtype=_dtypes.float32), name="loss_scale",
            dtype=_dtypes.float32, trainable=False)
        self._num_good_steps = Variable(0, name="good_steps", dtype=_dtypes.int32,
                                        trainable=False)
        self._num_bad_steps = Variable(0, name="bad_steps", dtype=_dtypes.int32,
                                       trainable=False)

    def _reset_stats(self):
        return group(state_ops.assign(self._num_good_steps, 0).op,
                     state_ops.assign(self._num_bad_steps, 0).op)

    def get_loss_scale(self):
        return self._loss_scale.read_value()

    def update_loss_scale(self, finite_grads):
        def on_finite():
            def grow():
                bigger = self._loss_scale * self._incr_ratio
                new = cond(math_ops.is_finite(bigger), lambda: bigger,
                           lambda: self._loss_scale.read_value())
                with control_dependencies([state_ops.assign(self._loss_scale, new)]):
                    return self._reset_stats()

            return cond(self._num_good_steps + 1 >= self._incr_every_n_steps, grow,
                        lambda: state_ops.assign_add(self._num_good_steps, 1).op)

        def on_non_finite():
            def shrink():
                smaller = math_ops.maximum(1.0, self._loss_scale * self._decr_ratio)
                with control_dependencies([state_ops.assign(self._loss_scale, smaller)]):
                    return self._reset_stats()

            def count():
                # A bad step breaks the run of good ones.
                return group(state_ops.assign_add(self._num_bad_steps, 1).op,
                             state_ops.assign(self._num_good_steps, 0).op)

            return cond(self._num_bad_steps + 1 >= self._decr_every_n_nan_or_inf, shrink,
                        count)

        return cond(finite_grads, on_finite, on_non_finite)


class LossScaleOptimizer(Optimizer):
    """Wraps `opt` with loss scaling by `loss_scale_manager` (see the module docstring).

    Example
    -------
    >>> import flowgraph as tf
    >>> M = tf.contrib.mixed_precision
    >>> opt = M.LossScaleOptimizer(tf.train.AdamOptimizer(), M.FixedLossScaleManager(8))
    >>> opt.get_name()
    'LossScaleOptimizer'
    """

    def __init__(self, opt, loss_scale_manager):
        if not isinstance(opt, Optimizer):
            raise TypeError(f"LossScaleOptimizer: opt must be a tf.train.Optimizer, got "
                            f"{type(opt).__name__}")
        super().__init__(use_locking=False, name="LossScaleOptimizer")
        self._opt = opt
        self._loss_scale_manager = loss_scale_manager

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """`opt.compute_gradients` of the scaled loss, divided by the loss scale."""
        scale = self._loss_scale_manager.get_loss_scale()
        scaled_loss = loss * math_ops.cast(scale, loss.dtype.base_dtype)
        grads_and_vars = self._opt.compute_gradients(
            scaled_loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        inverse = math_ops.reciprocal(scale)
        return [(None if g is None else g * math_ops.cast(inverse, g.dtype.base_dtype), v)
                for g, v in grads_and_vars]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Apply the gradients only if all are finite; then update the loss scale."""
        grads_and_vars = list(grads_and_vars)
        finite = [reduce_all(math_ops.is_finite(g)) for g, _ in grads_and_vars
                  if g is not None]
        all_finite = reduce_all(finite)
        update_vars = cond(all_finite,
                           lambda: self._opt.apply_gradients(grads_and_vars, global_step,
                                                             name),
                           no_op)
        return group(update_vars, self._loss_scale_manager.update_loss_scale(all_finite))
