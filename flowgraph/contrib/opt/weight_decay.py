"""Decoupled weight decay (Loshchilov & Hutter), TF1's ``tf.contrib.opt``
`AdamWOptimizer` / `MomentumWOptimizer`: before each update a variable shrinks by
``weight_decay * var`` (not scaled by the learning rate), then the base optimizer's update
runs on the shrunk value. `decay_var_list` (to `minimize` / `apply_gradients`) limits the
decay to some variables.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable([1.0, -2.0])
...     opt = AdamWOptimizer(weight_decay=0.1, learning_rate=0.01)
...     step = opt.minimize(tf.reduce_sum(w * 0.0))   # zero gradient: only the decay acts
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         sess.run(step)
...         print(sess.run(w))
[ 0.9 -1.8]
"""

from __future__ import annotations

from flowgraph.framework.graph import control_dependencies
from flowgraph.ops import array_index_ops, control_flow_ops, math_ops, scatter_ops
from flowgraph.train.adam import AdamOptimizer
from flowgraph.train.momentum import MomentumOptimizer

__all__ = ["AdamWOptimizer", "DecoupledWeightDecayExtension", "MomentumWOptimizer",
           "extend_with_decoupled_weight_decay"]


class DecoupledWeightDecayExtension:
    """Mix in before an `Optimizer` class: ``class MyW(DecoupledWeightDecayExtension,
    MyOptimizer)`` takes `weight_decay` (a float, tensor or callable) first."""

    def __init__(self, weight_decay, **kwargs) -> None:
        self._decay_var_list = None
        self._weight_decay = weight_decay
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None, decay_var_list=None):
        # minimize's list reaches the apply_gradients call it makes; a later call
        # without a list decays every variable again
        self._minimize_decay_list = set(decay_var_list) if decay_var_list else None
        try:
            return super().minimize(loss, global_step=global_step, var_list=var_list,
                                    gate_gradients=gate_gradients,
                                    aggregation_method=aggregation_method,
                                    colocate_gradients_with_ops=colocate_gradients_with_ops,
                                    name=name, grad_loss=grad_loss)
        finally:
            self._minimize_decay_list = None

    def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                        decay_var_list=None):
        self._decay_var_list = (set(decay_var_list) if decay_var_list
                                else getattr(self, "_minimize_decay_list", None))
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self) -> None:
        weight_decay = self._weight_decay
        self._weight_decay_t = math_ops.cast(
            weight_decay() if callable(weight_decay) else weight_decay, "float32",
            name="weight_decay")
        super()._prepare()

    def _decays(self, var) -> bool:
        return not self._decay_var_list or var in self._decay_var_list

    def _decay_weights_op(self, var):
        if not self._decays(var):
            return control_flow_ops.no_op()
        return var.assign_sub(self._cast(self._weight_decay_t, var) * var,
                              use_locking=self._use_locking)

    def _decay_weights_sparse_op(self, var, indices):
        if not self._decays(var):
            return control_flow_ops.no_op()
        rows = array_index_ops.gather(var, indices)
        return scatter_ops.scatter_add(var, indices,
                                       -self._cast(self._weight_decay_t, var) * rows,
                                       use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        with control_dependencies([self._decay_weights_op(var)]):
            return super()._apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with control_dependencies([self._decay_weights_sparse_op(var, grad.indices)]):
            return super()._apply_sparse(grad, var)


class AdamWOptimizer(DecoupledWeightDecayExtension, AdamOptimizer):
    """Adam with decoupled weight decay."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, use_locking: bool = False, name: str = "AdamW") -> None:
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1,
                         beta2=beta2, epsilon=epsilon, use_locking=use_locking, name=name)


class MomentumWOptimizer(DecoupledWeightDecayExtension, MomentumOptimizer):
    """Momentum with decoupled weight decay."""

    def __init__(self, weight_decay, learning_rate, momentum, use_locking: bool = False,
                 name: str = "MomentumW", use_nesterov: bool = False) -> None:
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum,
                         use_locking=use_locking, name=name, use_nesterov=use_nesterov)


def extend_with_decoupled_weight_decay(base_optimizer):
    """A subclass of `base_optimizer` taking `weight_decay` first (the class is named
    ``OptimizerWithDecoupledWeightDecay``, as in TF1)."""
    return type("OptimizerWithDecoupledWeightDecay",
                (DecoupledWeightDecayExtension, base_optimizer), {})
