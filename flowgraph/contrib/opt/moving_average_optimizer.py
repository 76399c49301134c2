"""`tf.contrib.opt.MovingAverageOptimizer`: wrap an optimizer so that each training step
also moves an `ExponentialMovingAverage` of the trained variables (after the update,
with ``sequential_update=True``), and save the averages in place of the variables with
`swapping_saver` (a checkpoint that evaluation restores as the model's own variables).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable(1.0, name="w")
...     opt = MovingAverageOptimizer(tf.train.GradientDescentOptimizer(0.5), 0.5)
...     step = opt.minimize(w * w)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         sess.run(step)
...         print(sess.run(w), step.name)
0.0 train_with_avg
"""

from __future__ import annotations

from flowgraph.framework.graph import control_dependencies
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.variables import global_variables
from flowgraph.train.moving_averages import ExponentialMovingAverage
from flowgraph.train.optimizer import Optimizer
from flowgraph.train.saver import Saver
from flowgraph.train.wrapped_optimizer import DelegatesSlots

__all__ = ["MovingAverageOptimizer"]


class MovingAverageOptimizer(DelegatesSlots, Optimizer):
    """`opt`'s updates plus a moving average of every updated variable
    (``<var>/ExponentialMovingAverage``); the step op is ``train_with_avg``."""

    def __init__(self, opt, average_decay=0.9999, num_updates=None,
                 sequential_update: bool = True) -> None:
        # TF1 wraps `opt` without the base constructor; the name and locking are opt's
        super().__init__(opt._use_locking, opt.get_name())
        self._optimizer = opt
        self._ema = ExponentialMovingAverage(average_decay, num_updates=num_updates,
                                             zero_debias=True)
        self._swapped_variable_name_map = None
        self._sequential_update = sequential_update

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        train_op = self._optimizer.apply_gradients(grads_and_vars, global_step=global_step,
                                                   name=name)
        var_list = [v for g, v in grads_and_vars if g is not None]
        if self._sequential_update:
            with control_dependencies([train_op]):
                ma_op = self._ema.apply(var_list)
        else:
            ma_op = self._ema.apply(var_list)
        self._swapped_variable_name_map = {}
        for v in var_list:
            avg_name = self._ema.average(v).op.name
            self._swapped_variable_name_map[v.op.name] = avg_name
            self._swapped_variable_name_map[avg_name] = v.op.name
        return group(train_op, ma_op, name="train_with_avg")

    def swapping_saver(self, var_list=None, name: str = "swapping_saver", **kwargs):
        """A `Saver` writing each averaged variable's average under the variable's
        name (and the variable under the average's), so that restoring the checkpoint
        loads the averages into the model."""
        if self._swapped_variable_name_map is None:
            raise RuntimeError("Must call apply_gradients or minimize before creating "
                               "the swapping_saver")
        if var_list is None:
            var_list = global_variables()
        if not isinstance(var_list, dict):
            var_list = {v.op.name: v for v in var_list}
        swapped = {}
        for key, tensor in var_list.items():
            other = self._swapped_variable_name_map.get(key)
            if other is None:
                swapped[key] = tensor
            elif other in var_list:
                swapped[key] = var_list[other]
            else:
                raise ValueError(f"Variable to swap {other} is not part of variables to "
                                 "save. This breaks MovingAverageOptimizer.")
        return Saver(swapped, name=name, **kwargs)
