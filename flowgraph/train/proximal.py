"""The proximal optimizers of TF1: `ProximalGradientDescentOptimizer`,
`ProximalAdagradOptimizer` and `AdagradDAOptimizer` (Adagrad dual averaging), each with
TensorFlow's update rule, slots and defaults.

The updates are composed from graph ops (reads, arithmetic, `assign`) rather than fused
kernels. A dense gradient updates the whole variable; a sparse one (`IndexedSlices`) sums
its duplicate rows, then gathers, updates and scatters back only those rows, so rows
without a gradient keep their value and slots, as in TensorFlow's sparse kernels.

With ``l1`` and ``l2`` the regularization strengths and ``lr`` the (per-entry) rate, the
proximal step from ``p = var - lr * grad`` is::

    var = sign(p) * max(|p| - lr * l1, 0) / (1 + lr * l2)

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable([1.0, -2.0])
>>> opt = tf.train.ProximalGradientDescentOptimizer(0.25, l1_regularization_strength=0.2)
>>> step = opt.minimize(tf.reduce_sum(w * w))
>>> with tf.Session() as sess:
...     sess.run(w.initializer)
...     sess.run(step)
...     print(sess.run(w))
[ 0.45 -0.95]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import colocate_with, control_dependencies
from flowgraph.ops.array_gen_ops import unique
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_shape_ops import shape
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import cast, maximum, rsqrt, sign, sqrt, square
from flowgraph.ops.scatter_ops import scatter_update
from flowgraph.ops.segment_ops import unsorted_segment_sum
from flowgraph.ops.state_ops import assign
from flowgraph.train.optimizer import Optimizer

__all__ = ["AdagradDAOptimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer"]


def _prox(p, lr, l1, l2):
    return sign(p) * maximum(_abs(p) - lr * l1, 0.0) / (1.0 + lr * l2)


class _ComposedOptimizer(Optimizer):
    """An optimizer whose rule `_rule(var, grad, slots) -> (var, slots)` is written in
    graph ops on values; dense and sparse updates both apply it."""

    _SLOTS: tuple[str, ...] = ()

    def _hyper(self, var):
        return {k: self._cast(t, var) for k, t in self._tensors.items()}

    def _apply_dense(self, grad, var):
        slots = [self.get_slot(var, s) for s in self._SLOTS]
        new_var, new_slots = self._rule(var.value() if hasattr(var, "value") else var, grad,
                                        [s.value() for s in slots], self._hyper(var))
        slot_updates = [assign(s, v, use_locking=self._use_locking)
                        for s, v in zip(slots, new_slots)]
        with control_dependencies(slot_updates):
            return assign(var, new_var, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        rows, positions = unique(grad.indices)
        summed = unsorted_segment_sum(grad.values, positions, shape(rows)[0])
        slots = [self.get_slot(var, s) for s in self._SLOTS]
        new_var, new_slots = self._rule(gather(var, rows), summed,
                                        [gather(s, rows) for s in slots], self._hyper(var))
        updates = [scatter_update(s, rows, v, use_locking=self._use_locking)
                   for s, v in zip(slots, new_slots)]
        with control_dependencies(updates):
            return group(scatter_update(var, rows, new_var, use_locking=self._use_locking))

    def _rule(self, var, grad, slots, hyper):
        raise NotImplementedError  # every subclass defines its rule


class ProximalGradientDescentOptimizer(_ComposedOptimizer):
    """Gradient descent followed by the proximal step of L1/L2 regularization (FOBOS).

    Parameters
    ----------
    learning_rate : float, Tensor or callable
    l1_regularization_strength, l2_regularization_strength : float
        Default 0.0 (plain gradient descent).
    use_locking : bool
    name : str
        Default ``"ProximalGradientDescent"``.
    """

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _prepare(self) -> None:
        self._tensors = {
            "lr": convert_to_tensor(self._call_if_callable(self._learning_rate),
                                    name="learning_rate"),
            "l1": convert_to_tensor(self._call_if_callable(self._l1),
                                    name="l1_regularization_strength"),
            "l2": convert_to_tensor(self._call_if_callable(self._l2),
                                    name="l2_regularization_strength")}

    def _rule(self, var, grad, slots, hyper):
        lr = hyper["lr"]
        return _prox(var - lr * grad, lr, hyper["l1"], hyper["l2"]), []


class ProximalAdagradOptimizer(_ComposedOptimizer):
    """Adagrad's per-entry rate followed by the proximal step of L1/L2 regularization.

    Parameters
    ----------
    learning_rate : float, Tensor or callable
    initial_accumulator_value : float
        Start of the squared-gradient accumulator (slot ``"accumulator"``); positive,
        default 0.1.
    l1_regularization_strength, l2_regularization_strength : float
        Default 0.0.
    use_locking : bool
    name : str
        Default ``"ProximalAdagrad"``.
    """

    _SLOTS = ("accumulator",)

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            with colocate_with(v):
                self._constant_slot(v, self._initial, "accumulator", self._name)

    _prepare = ProximalGradientDescentOptimizer._prepare

    def _rule(self, var, grad, slots, hyper):
        (accum,) = slots
        accum = accum + square(grad)
        lr = hyper["lr"] * rsqrt(accum)
        return _prox(var - lr * grad, lr, hyper["l1"], hyper["l2"]), [accum]


class AdagradDAOptimizer(_ComposedOptimizer):
    """Adagrad dual averaging (Duchi et al.): the variable is recomputed each step from
    the sums of the gradients and of their squares, which suits sparse linear models.

    ``var = -lr * sign(g) * max(|g| - l1 * t, 0) / (l2 * t * lr + sqrt(s))`` with ``g``
    the gradient sum (slot ``"gradient_accumulator"``), ``s`` the sum of squares (slot
    ``"gradient_squared_accumulator"``) and ``t = global_step + 1``. `global_step` is
    read, not incremented (pass it to `minimize` as well to advance it).

    Parameters
    ----------
    learning_rate : float, Tensor or callable
    global_step : Variable
        The training step counter (required).
    initial_gradient_squared_accumulator_value : float
        Positive; default 0.1.
    l1_regularization_strength, l2_regularization_strength : float
        Default 0.0.
    use_locking : bool
    name : str
        Default ``"AdagradDA"``.
    """

    _SLOTS = ("gradient_accumulator", "gradient_squared_accumulator")

    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA") -> None:
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._global_step = global_step
        self._initial = initial_gradient_squared_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            with colocate_with(v):
                self._zeros_slot(v, "gradient_accumulator", self._name)
                self._constant_slot(v, self._initial, "gradient_squared_accumulator",
                                    self._name)

    def _prepare(self) -> None:
        ProximalGradientDescentOptimizer._prepare(self)
        if self._global_step is None:
            raise ValueError("AdagradDAOptimizer needs global_step (e.g. "
                             "tf.train.get_or_create_global_step())")
        self._tensors["t"] = self._global_step + 1

    def _rule(self, var, grad, slots, hyper):
        g_sum, sq_sum = slots
        g_sum = g_sum + grad
        sq_sum = sq_sum + square(grad)
        lr, t = hyper["lr"], hyper["t"]
        t = cast(t, lr.dtype)
        shrunk = sign(g_sum) * maximum(_abs(g_sum) - hyper["l1"] * t, 0.0)
        new_var = -lr * shrunk / (hyper["l2"] * t * lr + sqrt(sq_sum))
        return new_var, [g_sum, sq_sum]
