"""The proximal optimizers of TF1: `ProximalGradientDescentOptimizer`,
`ProximalAdagradOptimizer` and `AdagradDAOptimizer` (Adagrad dual averaging), each with
TensorFlow's update rule, slots and defaults.

Each emits TensorFlow's fused update op (``ApplyProximalGradientDescent``,
``ApplyProximalAdagrad``, ``ApplyAdagradDA``; their ``Sparse``/``Resource`` forms for
`IndexedSlices` gradients and resource variables), so a graph holds the op types TF's
optimizer writes. A sparse gradient's duplicate rows are summed first (as TF's base
optimizer does), then only those rows are updated.

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

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import colocate_with, device
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import training_ops
from flowgraph.ops.array_gen_ops import unique
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_shape_ops import shape
from flowgraph.ops.math_ops import cast
from flowgraph.ops.segment_ops import unsorted_segment_sum
from flowgraph.train.optimizer import Optimizer

__all__ = ["AdagradDAOptimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer"]


class _FusedOptimizer(Optimizer):
    """An optimizer applying op ``_OP`` (``Sparse_OP`` for sparse gradients) to the
    variable, its slots ``_SLOTS`` and the inputs of `_hyper`."""

    _OP = ""
    _SLOTS: tuple[str, ...] = ()

    def _hyper(self, var) -> dict:
        return {k: self._cast(t, var) for k, t in self._tensors.items()}

    def _inputs(self, var) -> dict:
        names = training_ops._SIGNATURES[self._OP][0]
        slots = dict(zip(names[1:], (self.get_slot(var, s) for s in self._SLOTS)))
        return {"var": var, **slots, **self._hyper(var)}

    def _apply_dense(self, grad, var):
        names = training_ops._SIGNATURES[self._OP][0]
        grad_name = "delta" if "delta" in names else "grad"
        return training_ops.apply_op(self._OP, {**self._inputs(var), grad_name: grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.apply_op(
            "Sparse" + self._OP,
            {**self._inputs(var), "grad": grad.values, "indices": grad.indices},
            self._use_locking)

    def _apply_sparse_duplicate_indices(self, grad, var):
        # the sparse kernels apply a repeated row once per occurrence: sum them first
        rows, positions = unique(grad.indices)
        summed = unsorted_segment_sum(grad.values, positions, shape(rows)[0])
        return self._apply_sparse(IndexedSlices(summed, rows, grad.dense_shape), var)


class ProximalGradientDescentOptimizer(_FusedOptimizer):
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

    _OP = "ApplyProximalGradientDescent"

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _prepare(self) -> None:
        self._tensors = {
            "lr": convert_to_tensor(self._call_if_callable(self._learning_rate),
                                    name="learning_rate"),
            "l1": convert_to_tensor(self._call_if_callable(self._l1_regularization_strength),
                                    name="l1_regularization_strength"),
            "l2": convert_to_tensor(self._call_if_callable(self._l2_regularization_strength),
                                    name="l2_regularization_strength")}
        # the attribute names TF's optimizers have (programs read them)
        self._learning_rate_tensor = self._tensors["lr"]
        self._l1_regularization_strength_tensor = self._tensors["l1"]
        self._l2_regularization_strength_tensor = self._tensors["l2"]

    def _hyper(self, var) -> dict:
        hyper = super()._hyper(var)
        return {"alpha": hyper.pop("lr"), **hyper}


class ProximalAdagradOptimizer(_FusedOptimizer):
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

    _OP = "ApplyProximalAdagrad"
    _SLOTS = ("accumulator",)

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _create_slots(self, var_list) -> None:
        # TF fills these slots from constants made next to the variable (a graph's
        # ``Const_<n>``), not from initializers
        for v in var_list:
            with colocate_with(v):
                val = constant(self._initial_accumulator_value, shape=v.shape,
                               dtype=v.dtype.base_dtype)
            self._get_or_make_slot(v, val, "accumulator", self._name)

    _prepare = ProximalGradientDescentOptimizer._prepare


class AdagradDAOptimizer(_FusedOptimizer):
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

    _OP = "ApplyAdagradDA"
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
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value)
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            with colocate_with(v):
                g_val = constant(0.0, shape=v.shape, dtype=v.dtype.base_dtype)
                gg_val = constant(self._initial_gradient_squared_accumulator_value,
                                  shape=v.shape, dtype=v.dtype.base_dtype)
            self._get_or_make_slot(v, g_val, "gradient_accumulator", self._name)
            self._get_or_make_slot(v, gg_val, "gradient_squared_accumulator", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(
            self._call_if_callable(self._learning_rate), name="learning_rate")
        self._tensors = {"lr": self._learning_rate_tensor}
        if self._global_step is None:
            raise ValueError("AdagradDAOptimizer needs global_step (e.g. "
                             "tf.train.get_or_create_global_step())")
        step = self._global_step
        if step.dtype.base_dtype != _dtypes.int64:
            step = cast(step, _dtypes.int64)
        with colocate_with(self._tensors["lr"]):
            self._global_step_on_worker = identity(step) + 1

    def _hyper(self, var) -> dict:
        hyper = super()._hyper(var)
        with device(var.device):
            hyper["global_step"] = identity(self._global_step_on_worker)
        # TF casts the L1/L2 strengths in each update (``update_<var>/Cast/x``)
        dtype = var.dtype.base_dtype
        hyper["l1"] = cast(self._call_if_callable(self._l1_regularization_strength), dtype)
        hyper["l2"] = cast(self._call_if_callable(self._l2_regularization_strength), dtype)
        return hyper

