"""`AdadeltaOptimizer` (Zeiler 2012), in TF1's form::

    accum        = rho * accum + (1 - rho) * g * g
    update       = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g
    accum_update = rho * accum_update + (1 - rho) * update * update
    var         -= learning_rate * update

Slots ``accum`` (``var/Adadelta``) and ``accum_update`` (``var/Adadelta_1``), zeros.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0], name="w")
>>> opt = tf.train.AdadeltaOptimizer()
>>> _ = opt.minimize(tf.reduce_sum(w))
>>> opt.get_slot(w, "accum_update").op.name
'w/Adadelta_1'
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import training_ops
from flowgraph.train.optimizer import Optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(Optimizer):
    """Adadelta.

    Parameters
    ----------
    learning_rate : float, Tensor or callable
        Default 0.001 (TF1's default; the paper uses 1.0).
    rho : float
        Decay rate (default 0.95).
    epsilon : float
        Default 1e-8.
    use_locking : bool
    name : str
        Default ``"Adadelta"``.
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8,
                 use_locking: bool = False, name: str = "Adadelta") -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self) -> None:
        c = self._call_if_callable
        self._lr_t = convert_to_tensor(c(self._lr), name="lr")
        self._rho_t = convert_to_tensor(c(self._rho), name="rho")
        self._epsilon_t = convert_to_tensor(c(self._epsilon), name="epsilon")

    def _inputs(self, var):
        return {"var": var, "accum": self.get_slot(var, "accum"),
                "accum_update": self.get_slot(var, "accum_update"),
                "lr": self._cast(self._lr_t, var), "rho": self._cast(self._rho_t, var),
                "epsilon": self._cast(self._epsilon_t, var)}

    def _apply_dense(self, grad, var):
        return training_ops.apply_op("ApplyAdadelta", {**self._inputs(var), "grad": grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            "SparseApplyAdadelta",
            {**self._inputs(var), "grad": grad.values, "indices": grad.indices},
            self._use_locking)
