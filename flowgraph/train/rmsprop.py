"""`RMSPropOptimizer` (Hinton's RMSProp with momentum), in TF1's form::

    ms   = decay * ms + (1 - decay) * g * g          # slot "rms", starts at ones
    mom  = momentum * mom + lr * g / sqrt(ms + epsilon)
    var -= mom

With ``centered=True`` a slot ``mg`` (mean gradient) is kept and the denominator is
``sqrt(ms - mg**2 + epsilon)``. Slots: ``rms`` (``var/RMSProp``), ``mg``
(``var/RMSProp_1``, centered only), ``momentum``.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0], name="w")
>>> opt = tf.train.RMSPropOptimizer(0.01, centered=True)
>>> _ = opt.minimize(tf.reduce_sum(w))
>>> opt.get_slot_names()
['mg', 'momentum', 'rms']
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import init_ops, training_ops
from flowgraph.train.optimizer import Optimizer

__all__ = ["RMSPropOptimizer"]


class RMSPropOptimizer(Optimizer):
    """RMSProp.

    Parameters
    ----------
    learning_rate : float, Tensor or callable
    decay : float
        Discount of the squared-gradient average (default 0.9).
    momentum : float
        Default 0.0.
    epsilon : float
        Default 1e-10, inside the square root.
    use_locking : bool
    centered : bool
        Normalize by the estimated variance of the gradient.
    name : str
        Default ``"RMSProp"``.
    """

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking: bool = False, centered: bool = False,
                 name: str = "RMSProp") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            # TF starts ``rms`` from a ones initializer (``<slot>/Initializer/ones``)
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                v, init_ops.ones_initializer(dtype=dtype), v.shape, dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        c = self._call_if_callable
        self._learning_rate_tensor = convert_to_tensor(c(self._learning_rate),
                                                       name="learning_rate")
        self._decay_tensor = convert_to_tensor(c(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(c(self._momentum), name="momentum")
        self._epsilon_tensor = convert_to_tensor(c(self._epsilon), name="epsilon")

    def _inputs(self, var):
        d = {"var": var, "ms": self.get_slot(var, "rms"),
             "mom": self.get_slot(var, "momentum"),
             "lr": self._cast(self._learning_rate_tensor, var),
             "rho": self._cast(self._decay_tensor, var),
             "momentum": self._cast(self._momentum_tensor, var),
             "epsilon": self._cast(self._epsilon_tensor, var)}
        if self._centered:
            d["mg"] = self.get_slot(var, "mg")
        return d

    def _op(self, sparse: bool) -> str:
        return (("SparseApply" if sparse else "Apply")
                + ("CenteredRMSProp" if self._centered else "RMSProp"))

    def _apply_dense(self, grad, var):
        return training_ops.apply_op(self._op(False), {**self._inputs(var), "grad": grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            self._op(True), {**self._inputs(var), "grad": grad.values,
                             "indices": grad.indices}, self._use_locking)
