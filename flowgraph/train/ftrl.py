"""`FtrlOptimizer`: FTRL-Proximal (McMahan et al. 2013), in TF1's form.

Per element, with ``p = -learning_rate_power`` (0.5 by default)::

    g_s      = g + 2 * l2_shrinkage * var           # = g without shrinkage
    accum'   = accum + g * g
    linear  += g_s - (accum'**p - accum**p) / lr * var
    quad     = accum'**p / lr + 2 * l2
    var      = (sign(linear) * l1 - linear) / quad  if |linear| > l1 else 0
    accum    = accum'

Slots ``accum`` (``var/Ftrl``, starts at `initial_accumulator_value`) and ``linear``
(``var/Ftrl_1``, zeros). With ``l2_shrinkage_regularization_strength > 0`` the op is
``ApplyFtrlV2``, else ``ApplyFtrl``.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0], name="w")
>>> opt = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01)
>>> _ = opt.minimize(tf.reduce_sum(w))
>>> opt.get_slot(w, "linear").op.name
'w/Ftrl_1'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import math_ops, training_ops
from flowgraph.ops.array_shape_ops import ones
from flowgraph.train.optimizer import Optimizer

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal.

    Parameters
    ----------
    learning_rate : float, Tensor or callable
    learning_rate_power : float
        Must be <= 0 (default -0.5).
    initial_accumulator_value : float
        Must be >= 0 (default 0.1).
    l1_regularization_strength, l2_regularization_strength : float
        Must be >= 0.
    use_locking : bool
    name : str
        Default ``"Ftrl"``.
    accum_name, linear_name : str, optional
        Slot-variable suffixes (default: `name`).
    l2_shrinkage_regularization_strength : float
        Must be >= 0; an L2 penalty on the magnitude of the weights added to the
        gradient (not to the loss).
    beta : float, optional
        Adds ``beta / (2 * learning_rate)`` to the L2 strength (default 0).
    """

    def __init__(self, learning_rate, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking: bool = False,
                 name: str = "Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=None) -> None:
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value:f} needs "
                             "to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power:f} needs to be "
                             "negative or zero")
        if l1_regularization_strength < 0.0:
            raise ValueError(f"l1_regularization_strength {l1_regularization_strength:f} "
                             "needs to be positive or zero")
        if l2_regularization_strength < 0.0:
            raise ValueError(f"l2_regularization_strength {l2_regularization_strength:f} "
                             "needs to be positive or zero")
        if l2_shrinkage_regularization_strength < 0.0:
            raise ValueError("l2_shrinkage_regularization_strength "
                             f"{l2_shrinkage_regularization_strength:f} needs to be positive "
                             "or zero")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list) -> None:
        def accum_initializer(shape, dtype=_dtypes.float32, partition_info=None):
            # TF's: ones times the value (``<slot>/Initializer/ones`` and ``.../mul``)
            return ones(shape, dtype=dtype) * self._initial_accumulator_value

        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, accum_initializer, v.shape, v.dtype.base_dtype, "accum",
                self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        # TF's attribute names and ops: beta always enters the L2 strength, through
        # ``Maximum``/``mul``/``truediv``/``add`` (``l2 + beta / (2 * max(lr, 1e-36))``)
        lr = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")
        self._l1_regularization_strength_tensor = convert_to_tensor(
            self._l1_regularization_strength, name="l1_regularization_strength")
        self._adjusted_l2_regularization_strength_tensor = convert_to_tensor(
            self._l2_regularization_strength
            + self._beta / (2.0 * math_ops.maximum(lr, 1e-36)),
            name="adjusted_l2_regularization_strength")
        self._beta_tensor = convert_to_tensor(self._beta, name="beta")
        self._l2_shrinkage_regularization_strength_tensor = convert_to_tensor(
            self._l2_shrinkage_regularization_strength,
            name="l2_shrinkage_regularization_strength")
        self._learning_rate_power_tensor = convert_to_tensor(self._learning_rate_power,
                                                             name="learning_rate_power")

    def _inputs(self, var):
        d = {"var": var, "accum": self.get_slot(var, "accum"),
             "linear": self.get_slot(var, "linear"),
             "lr": self._cast(self._learning_rate_tensor, var),
             "l1": self._cast(self._l1_regularization_strength_tensor, var),
             "l2": self._cast(self._adjusted_l2_regularization_strength_tensor, var),
             "lr_power": self._cast(self._learning_rate_power_tensor, var)}
        if self._l2_shrinkage_regularization_strength > 0.0:
            d["l2_shrinkage"] = self._cast(self._l2_shrinkage_regularization_strength_tensor,
                                           var)
        return d

    def _op(self, sparse: bool) -> str:
        return ("SparseApply" if sparse else "Apply") + (
            "FtrlV2" if self._l2_shrinkage_regularization_strength > 0.0 else "Ftrl")

    def _apply_dense(self, grad, var):
        return training_ops.apply_op(self._op(False), {**self._inputs(var), "grad": grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            self._op(True), {**self._inputs(var), "grad": grad.values,
                             "indices": grad.indices}, self._use_locking)
