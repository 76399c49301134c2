"""`AdagradOptimizer`: ``accum += grad**2; var -= lr * grad / sqrt(accum)``.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, 2.0], name="w")
>>> opt = tf.train.AdagradOptimizer(0.1)
>>> _ = opt.minimize(tf.reduce_sum(w))
>>> opt.get_slot(w, "accumulator").op.name
'w/Adagrad'
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import training_ops
from flowgraph.train.optimizer import Optimizer

__all__ = ["AdagradOptimizer"]


class AdagradOptimizer(Optimizer):
    """Adagrad (TF1's form: no epsilon; the accumulator starts at
    `initial_accumulator_value`, which must be positive).

    Parameters
    ----------
    learning_rate : float, Tensor or callable
    initial_accumulator_value : float
        Default 0.1.
    use_locking : bool
    name : str
        Default ``"Adagrad"``.
    """

    def __init__(self, learning_rate, initial_accumulator_value: float = 0.1,
                 use_locking: bool = False, name: str = "Adagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._constant_slot(v, self._initial_accumulator_value, "accumulator",
                                self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")

    def _inputs(self, var):
        return {"var": var, "accum": self.get_slot(var, "accumulator"),
                "lr": self._cast(self._learning_rate_tensor, var)}

    def _apply_dense(self, grad, var):
        return training_ops.apply_op("ApplyAdagrad", {**self._inputs(var), "grad": grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            "SparseApplyAdagrad",
            {**self._inputs(var), "grad": grad.values, "indices": grad.indices},
            self._use_locking)
