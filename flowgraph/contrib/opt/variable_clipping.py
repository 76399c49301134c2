"""`tf.contrib.opt.VariableClippingOptimizer`: after the wrapped optimizer's update, clip
chosen variables to a maximum L2 norm along given dimensions (``[]``: each element to
``[-max_norm, max_norm]``, the weight clipping of the Wasserstein GAN paper).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable([0.5, -0.5])
...     opt = VariableClippingOptimizer(tf.train.GradientDescentOptimizer(1.0), {w: []}, 0.6)
...     train = opt.minimize(tf.reduce_sum(w * [1.0, -1.0]))
...     with tf.Session() as sess:
...         sess.run(w.initializer)
...         _ = sess.run(train)
...         sess.run(w).round(2).tolist()
[-0.5, 0.5]
"""

from __future__ import annotations

from flowgraph.framework.graph import colocate_with, control_dependencies, name_scope
from flowgraph.ops import clip_ops, state_ops
from flowgraph.ops.control_flow_ops import group
from flowgraph.train.optimizer import Optimizer

__all__ = ["VariableClippingOptimizer"]


class VariableClippingOptimizer(Optimizer):
    """Wraps `opt`; each variable of `vars_to_clip_dims` (a dict: variable -> list of
    dimensions of the norm) is clipped to `max_norm` after every update."""

    def __init__(self, opt, vars_to_clip_dims, max_norm, use_locking=False,
                 colocate_clip_ops_with_vars=False, name="VariableClipping"):
        super().__init__(use_locking, name)
        self._opt = opt
        self._vars_to_clip_dims = dict(vars_to_clip_dims)
        self._max_norm = max_norm
        self._colocate_clip_ops_with_vars = colocate_clip_ops_with_vars

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def _clip(self, var):
        # the whole variable, also after a sparse update (TF clips only the touched rows)
        value = var.read_value() if hasattr(var, "read_value") else var.value()
        clipped = clip_ops.clip_by_norm(value, self._max_norm, self._vars_to_clip_dims[var])
        with colocate_with(var.op):
            return state_ops.assign_sub(var, value - clipped, use_locking=self._use_locking)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        with name_scope(name, self._name) as name:
            update_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step)
            clips = []
            with control_dependencies([update_op]):
                for grad, var in grads_and_vars:
                    if grad is None or var not in self._vars_to_clip_dims:
                        continue
                    with name_scope("clip_" + var.op.name):
                        clips.append(self._clip(var))
            return group(update_op, *clips, name=name)
