"""`AdamOptimizer` (Kingma & Ba), in TF1's form.

Per step t (``beta1_power = beta1**t``, ``beta2_power = beta2**t``)::

    lr_t = learning_rate * sqrt(1 - beta2_power) / (1 - beta1_power)
    m    = beta1 * m + (1 - beta1) * g
    v    = beta2 * v + (1 - beta2) * g * g
    var -= lr_t * m / (sqrt(v) + epsilon)          # epsilon outside the sqrt

Slots ``m`` and ``v`` are ``var/Adam`` and ``var/Adam_1``; ``beta1_power`` and
``beta2_power`` are float32 variables of the optimizer (``variables()``), advanced after
all updates of a step. A sparse gradient follows TF1 too: ``m`` and ``v`` of every row
decay (rows without a gradient see ``g = 0``) and every row moves, in one fused pass.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0], name="w")
>>> opt = tf.train.AdamOptimizer(0.1)
>>> _ = opt.minimize(tf.reduce_sum(w))
>>> [v.op.name for v in opt.variables()]
['beta1_power', 'beta2_power', 'w/Adam', 'w/Adam_1']
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.ops import training_ops
from flowgraph.ops.control_flow_ops import group
from flowgraph.train.optimizer import Optimizer

__all__ = ["AdamOptimizer"]


class AdamOptimizer(Optimizer):
    """Adam.

    Parameters
    ----------
    learning_rate : float, Tensor or callable
        Default 0.001.
    beta1, beta2 : float, Tensor or callable
        Decay rates of the moment estimates (defaults 0.9, 0.999).
    epsilon : float
        Default 1e-8; added to ``sqrt(v)`` (TF1's "epsilon hat").
    use_locking : bool
    name : str
        Default ``"Adam"``.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking: bool = False, name: str = "Adam") -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self):
        graph = get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=graph),
                self._get_non_slot_variable("beta2_power", graph=graph))

    def _create_slots(self, var_list) -> None:
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._call_if_callable(self._beta1), "beta1_power",
                                       first)
        self._create_non_slot_variable(self._call_if_callable(self._beta2), "beta2_power",
                                       first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self) -> None:
        c = self._call_if_callable
        self._lr_t = convert_to_tensor(c(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(c(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(c(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(c(self._epsilon), name="epsilon")

    def _inputs(self, var):
        b1p, b2p = self._get_beta_accumulators()
        return {"var": var, "m": self.get_slot(var, "m"), "v": self.get_slot(var, "v"),
                "beta1_power": self._cast(b1p.value(), var),
                "beta2_power": self._cast(b2p.value(), var),
                "lr": self._cast(self._lr_t, var), "beta1": self._cast(self._beta1_t, var),
                "beta2": self._cast(self._beta2_t, var),
                "epsilon": self._cast(self._epsilon_t, var)}

    def _apply_dense(self, grad, var):
        return training_ops.apply_op("ApplyAdam", {**self._inputs(var), "grad": grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            "SparseApplyAdam",
            {**self._inputs(var), "grad": grad.values, "indices": grad.indices},
            self._use_locking)

    def _finish(self, update_ops, name_scope):
        b1p, b2p = self._get_beta_accumulators()
        graph = b1p.op.graph
        with graph.control_dependencies(update_ops), graph.colocate_with(b1p.op):
            update_b1 = b1p.assign(b1p * self._beta1_t, use_locking=self._use_locking)
            update_b2 = b2p.assign(b2p * self._beta2_t, use_locking=self._use_locking)
        return group(*update_ops, update_b1, update_b2, name=name_scope)
