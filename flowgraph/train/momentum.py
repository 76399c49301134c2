"""`MomentumOptimizer`: ``accum = accum * momentum + grad; var -= lr * accum``.

With ``use_nesterov=True``: ``var -= lr * (grad + momentum * accum)`` (TF1's form).

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0], name="w")
>>> opt = tf.train.MomentumOptimizer(0.1, momentum=0.9)
>>> train = opt.minimize(tf.reduce_sum(w))
>>> opt.get_slot(w, "momentum").op.name
'w/Momentum'
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import training_ops
from flowgraph.train.optimizer import Optimizer

__all__ = ["MomentumOptimizer"]


class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum (slot ``momentum``, zeros). A sparse gradient
    updates only the indexed rows of the variable and of its accumulator.

    Parameters
    ----------
    learning_rate, momentum : float, Tensor or callable
    use_locking : bool
    name : str
        Default ``"Momentum"``.
    use_nesterov : bool
        Nesterov momentum.
    """

    def __init__(self, learning_rate, momentum, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._momentum_tensor = convert_to_tensor(
            self._call_if_callable(self._momentum), name="momentum")

    def _inputs(self, var):
        return {"var": var, "accum": self.get_slot(var, "momentum"),
                "lr": self._cast(self._learning_rate_tensor, var),
                "momentum": self._cast(self._momentum_tensor, var)}

    def _apply_dense(self, grad, var):
        return training_ops.apply_op("ApplyMomentum", {**self._inputs(var), "grad": grad},
                                     self._use_locking, use_nesterov=self._use_nesterov)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            "SparseApplyMomentum",
            {**self._inputs(var), "grad": grad.values, "indices": grad.indices},
            self._use_locking, use_nesterov=self._use_nesterov)
