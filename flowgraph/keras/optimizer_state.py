"""The variables of a Keras optimizer in one graph, named and ordered as TF 2.15's
graph-mode tf.keras makes them, and the `tf.train` optimizers that update them.

A Keras optimizer (`flowgraph.keras.optimizers`) trains through a `tf.train` optimizer
made for each graph (`make`). Its state in that graph is:

* ``training/<Name>/iter`` (int64, the steps taken), then the hyperparameters as float32
  variables in alphabetical order (``beta_1``, ``beta_2``, ``decay``, ``learning_rate``,
  ``momentum``, ``rho``: those the optimizer has), so that ``K.set_value`` changes them
  between steps;
* one slot per trainable weight and slot kind, ``training/<Name>/<weight>/<slot>``,
  all weights of one kind before the next kind (Adam: every ``m``, then every ``v``).

``optimizer.weights`` is ``[iter, *slots]`` in that order (TF's `get_weights`), the
``optimizer_weights`` of an HDF5 model file and the ``.OPTIMIZER_SLOT`` entries of a
TensorFlow-format `save_weights`. The updates are Keras's: Adam's bias correction from
``iter`` (no beta-power variables), SGD's momentum ``m = momentum * m - lr * g;
w += m`` (so a learning-rate change does not rescale the velocity), RMSprop without
momentum ``w -= lr * g / (sqrt(rms) + epsilon)``, Adagrad with ``epsilon``, and
``lr / (1 + decay * iter)`` when `decay` is set. Where TF's Keras applies a fused op, so
does this: ``ResourceApplyKerasMomentum`` (SGD with momentum on resource variables; its
``Sparse`` form for `IndexedSlices`), ``ApplyAdagradV2``, ``ApplyAdaMax`` (dense
gradients) and ``ResourceApplyAdamWithAmsgrad`` (``Adam(amsgrad=True)``, slot ``vhat``).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     m = keras.Sequential([keras.layers.Dense(1, input_shape=(2,), name="d")])
...     m.compile(keras.optimizers.Adam(0.1), "mse")
...     _ = m.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
...     print([w.name for w in m.optimizer.weights])
['training/Adam/iter:0', 'training/Adam/d/kernel/m:0', 'training/Adam/d/bias/m:0', \
'training/Adam/d/kernel/v:0', 'training/Adam/d/bias/v:0']
"""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.graph import name_scope
from flowgraph.ops import (
    array_index_ops,
    array_ops,
    math_ops,
    scatter_ops,
    segment_ops,
    state_ops,
    training_ops,
)
from flowgraph.ops.array_gen_ops import unique
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.variables import Variable
from flowgraph.train import adadelta, adagrad, adam, ftrl, gradient_descent, rmsprop
from flowgraph.train.optimizer import Optimizer, _var_key

__all__ = ["HYPERS", "make", "slots_of"]

# The hyperparameter variables of each optimizer (besides ``iter``), as TF creates them.
HYPERS = {"Adam": ("beta_1", "beta_2", "decay", "learning_rate"),
          "SGD": ("decay", "learning_rate", "momentum"),
          "RMSprop": ("decay", "learning_rate", "momentum", "rho"),
          "Adagrad": ("decay", "learning_rate"),
          "Adadelta": ("decay", "learning_rate", "rho"),
          "Adamax": ("beta_1", "beta_2", "decay", "learning_rate"),
          "Nadam": ("beta_1", "beta_2", "decay", "learning_rate"),
          "Ftrl": ("beta", "decay", "l1_regularization_strength",
                   "l2_regularization_strength", "l2_shrinkage_regularization_strength",
                   "learning_rate", "learning_rate_power")}


def slots_of(kind: str, config: dict) -> list[tuple[str, str]]:
    """``[(Keras slot name, tf.train slot name)]`` of an optimizer, in creation order."""
    if kind == "Adam" and config.get("amsgrad"):
        return [("m", "m"), ("v", "v"), ("vhat", "vhat")]
    if kind in ("Adam", "Adamax", "Nadam"):
        return [("m", "m"), ("v", "v")]
    if kind == "Ftrl":
        return [("accumulator", "accum"), ("linear", "linear")]
    if kind == "SGD":
        return [("momentum", "momentum")] if config.get("momentum") else []
    if kind == "RMSprop":
        slots = [("rms", "rms")]
        if config.get("momentum"):
            slots.append(("momentum", "momentum"))
        if config.get("centered"):
            slots.append(("mg", "mg"))
        return slots
    if kind == "Adagrad":
        return [("accumulator", "accumulator")]
    if kind == "Adadelta":
        return [("accum_grad", "accum"), ("accum_var", "accum_update")]
    raise ValueError(f"unknown Keras optimizer kind {kind!r}")


class _KerasState:
    """Mixin over a `tf.train` optimizer: Keras's slot names, order and ``iter``."""

    # Repeated rows of a sparse gradient are summed, then the Keras update runs (tf.train's
    # plain SGD, a base of `_SGD`, scatters them straight into the variable instead,
    # which would skip the momentum).
    _apply_sparse_duplicate_indices = Optimizer._apply_sparse_duplicate_indices
    _resource_apply_sparse_duplicate_indices = \
        Optimizer._resource_apply_sparse_duplicate_indices

    def _keras_init(self, keras_opt, kind: str, hypers: dict, iterations,
                    prefix: str) -> None:
        self._keras_opt = keras_opt
        self._kind = kind
        self._prefix = prefix          # "training/Adam/" in fit, "Adam/" by get_updates
        self._hypers = hypers          # name -> variable
        self._iterations = iterations  # int64 variable
        self._keras_slots: list = []   # creation order
        self._keras_labels: dict = {}  # id(slot) -> (weight or None, "<weight>/<slot>")
        self._slot_names = slots_of(kind, keras_opt._config)

    def _create_slots(self, var_list) -> None:
        for keras_name, tf_name in self._slot_names:
            for v in var_list:
                self._keras_slot(v, keras_name, tf_name, self._slot_initial(tf_name))

    def _slot_initial(self, tf_name: str) -> float:
        if tf_name == "accumulator":
            return float(self._keras_opt._config["initial_accumulator_value"])
        return 0.0

    def _keras_slot(self, var, keras_name: str, tf_name: str, value: float):
        named = self._slot_dict(tf_name)
        key = _var_key(var)
        if key not in named:
            graph = var.op.graph
            dtype = var.dtype.base_dtype
            shape = var.shape

            def initial():
                return array_ops.fill(shape.as_list(), math_ops.cast(value, dtype)) \
                    if shape.is_fully_defined() else \
                    array_ops.zeros_like(var.initialized_value()) + value

            with graph.as_default(), graph.control_dependencies(None), name_scope(None), \
                    graph.colocate_with(var.op):
                slot = Variable(initial, name=f"{self._prefix}{var.op.name}/{keras_name}",
                                trainable=False, dtype=dtype,
                                use_resource=var.op.type == "VarHandleOp")
            named[key] = slot
            self._keras_slots.append(slot)
            self._keras_labels[id(slot)] = (var, f"{var.op.name}/{keras_name}")
        return named[key]

    def _decayed(self, lr):
        """``lr / (1 + decay * iter)`` when the optimizer decays (TF's `_decayed_lr`)."""
        if not float(self._keras_opt._config.get("decay") or 0.0):
            return lr
        decay = self._hypers["decay"]
        it = math_ops.cast(self._iterations, dtypes.float32)
        return math_ops.divide(lr, math_ops.add(1.0, math_ops.multiply(decay, it)))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        # `iterations` set to the global step: the step counts once, as `global_step`
        self._counts_itself = global_step is None or global_step is not self._iterations
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _finish(self, update_ops, name_scope):
        if not getattr(self, "_counts_itself", True):
            return group(*update_ops, name=name_scope)
        graph = self._iterations.op.graph
        with graph.control_dependencies(update_ops):
            step = state_ops.assign_add(self._iterations, 1)
        return group(*update_ops, step, name=name_scope)


def _dense(grad):
    """An IndexedSlices gradient as a dense tensor (the Keras updates that move only the
    rows with a gradient give the same result on it)."""
    if hasattr(grad, "indices"):
        return segment_ops.unsorted_segment_sum(grad.values, grad.indices,
                                             grad.dense_shape[0])
    return grad


class _Adam(_KerasState, adam.AdamOptimizer):
    def _get_beta_accumulators(self):
        t = math_ops.cast(math_ops.add(self._iterations, 1), dtypes.float32)
        return (math_ops.pow(self._beta1_t, t), math_ops.pow(self._beta2_t, t))

    def _inputs(self, var):
        b1p, b2p = self._get_beta_accumulators()
        return {"var": var, "m": self.get_slot(var, "m"), "v": self.get_slot(var, "v"),
                "beta1_power": self._cast(b1p, var), "beta2_power": self._cast(b2p, var),
                "lr": self._cast(self._lr_t, var), "beta1": self._cast(self._beta1_t, var),
                "beta2": self._cast(self._beta2_t, var),
                "epsilon": self._cast(self._epsilon_t, var)}

    def _apply_dense(self, grad, var):
        if not self._keras_opt._config.get("amsgrad"):
            return super()._apply_dense(grad, var)
        if not training_ops._is_resource(var):
            raise NotImplementedError(
                f"Adam(amsgrad=True) updates resource variables only (TensorFlow's "
                f"ResourceApplyAdamWithAmsgrad); '{var.op.name}' is a reference variable")
        return training_ops.apply_op(
            "ApplyAdamWithAmsgrad",
            {**self._inputs(var), "vhat": self.get_slot(var, "vhat"), "grad": _dense(grad)},
            self._use_locking)

    def _apply_sparse(self, grad, var):
        if self._keras_opt._config.get("amsgrad"):
            return self._apply_dense(grad, var)  # every row's moments decay: dense
        return super()._apply_sparse(grad, var)


class _Adamax(_KerasState, gradient_descent.GradientDescentOptimizer):
    """Keras's Adamax: ``m = b1 m + (1 - b1) g; v = max(b2 v, |g|);
    w -= lr / (1 - b1^t) * m / (v + epsilon)`` (t counts from 1)."""

    def _apply_dense(self, grad, var):
        if not hasattr(grad, "indices"):
            return self._fused_dense(grad, var)
        grad = _dense(grad)
        c = self._keras_opt._config
        b1 = self._cast(self._hypers["beta_1"].value(), var)
        b2 = self._cast(self._hypers["beta_2"].value(), var)
        t = self._cast(math_ops.cast(math_ops.add(self._iterations, 1), dtypes.float32), var)
        lr = math_ops.divide(self._cast(self._learning_rate_tensor, var),
                             math_ops.subtract(1.0, math_ops.pow(b1, t)))
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = math_ops.add(math_ops.multiply(b1, m.value()),
                           math_ops.multiply(math_ops.subtract(1.0, b1), grad))
        v_t = math_ops.maximum(math_ops.multiply(b2, v.value()), math_ops.abs(grad))
        step = math_ops.divide(math_ops.multiply(lr, m_t),
                               math_ops.add(v_t, float(c.get("epsilon") or 1e-7)))
        with var.op.graph.control_dependencies([state_ops.assign(m, m_t),
                                                state_ops.assign(v, v_t)]):
            return state_ops.assign_sub(var, step)

    def _fused_dense(self, grad, var):
        """TensorFlow's ``ApplyAdaMax`` (``ResourceApplyAdaMax``), as TF's Keras Adamax
        applies a dense gradient."""
        b1 = self._cast(self._hypers["beta_1"].value(), var)
        t = self._cast(math_ops.cast(math_ops.add(self._iterations, 1), dtypes.float32), var)
        eps = float(self._keras_opt._config.get("epsilon") or 1e-7)
        return training_ops.apply_op(
            "ApplyAdaMax",
            {"var": var, "m": self.get_slot(var, "m"), "v": self.get_slot(var, "v"),
             "beta1_power": math_ops.pow(b1, t),
             "lr": self._cast(self._learning_rate_tensor, var), "beta1": b1,
             "beta2": self._cast(self._hypers["beta_2"].value(), var),
             "epsilon": self._cast(eps, var), "grad": grad}, self._use_locking)

    _apply_sparse = _apply_dense


class _Nadam(_Adamax):
    """Keras's Nadam: Adam with the momentum schedule ``mu_t = b1 (1 - 0.5 *
    0.96 ** (decay t))``, whose running product is the ``momentum_cache`` variable;
    ``decay`` (0.004) shapes that schedule and leaves the learning rate alone."""

    def _decayed(self, lr):
        return lr

    def _prepare(self) -> None:
        super()._prepare()
        if getattr(self, "_m_cache", None) is None:
            graph = self._iterations.op.graph
            with graph.as_default(), graph.control_dependencies(None), name_scope(None):
                self._m_cache = Variable(1.0, dtype=dtypes.float32, trainable=False,
                                         name=f"{self._prefix}momentum_cache",
                                         use_resource=True)
            self._keras_slots.insert(0, self._m_cache)
            self._keras_labels[id(self._m_cache)] = (None, "momentum_cache")
        t = math_ops.cast(math_ops.add(self._iterations, 1), dtypes.float32)
        b1 = self._hypers["beta_1"].value()

        decay = float(self._keras_opt._config.get("decay") or 0.0)  # the schedule decay

        def mu(step):
            return math_ops.multiply(b1, math_ops.subtract(1.0, math_ops.multiply(
                0.5, math_ops.pow(0.96, math_ops.multiply(decay, step)))))

        self._mu_t, self._mu_next, self._t = mu(t), mu(math_ops.add(t, 1.0)), t
        self._schedule_new = math_ops.multiply(
            array_ops.identity(self._m_cache.value()), self._mu_t)

    def _apply_dense(self, grad, var):
        grad = _dense(grad)
        c = self._keras_opt._config
        cast = self._cast
        b1 = cast(self._hypers["beta_1"].value(), var)
        b2 = cast(self._hypers["beta_2"].value(), var)
        mu_t, mu_next = cast(self._mu_t, var), cast(self._mu_next, var)
        sched_new = cast(self._schedule_new, var)
        sched_next = math_ops.multiply(sched_new, mu_next)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = math_ops.divide(grad, math_ops.subtract(1.0, sched_new))
        m_t = math_ops.add(math_ops.multiply(b1, m.value()),
                           math_ops.multiply(math_ops.subtract(1.0, b1), grad))
        m_prime = math_ops.divide(m_t, math_ops.subtract(1.0, sched_next))
        v_t = math_ops.add(math_ops.multiply(b2, v.value()),
                           math_ops.multiply(math_ops.subtract(1.0, b2), math_ops.square(grad)))
        v_prime = math_ops.divide(v_t, math_ops.subtract(
            1.0, math_ops.pow(b2, cast(self._t, var))))
        m_bar = math_ops.add(math_ops.multiply(math_ops.subtract(1.0, mu_t), g_prime),
                             math_ops.multiply(mu_next, m_prime))
        step = math_ops.divide(math_ops.multiply(cast(self._learning_rate_tensor, var), m_bar),
                               math_ops.add(math_ops.sqrt(v_prime),
                                            float(c.get("epsilon") or 1e-7)))
        with var.op.graph.control_dependencies([state_ops.assign(m, m_t),
                                                state_ops.assign(v, v_t)]):
            return state_ops.assign_sub(var, step)

    _apply_sparse = _apply_dense

    def _finish(self, update_ops, name_scope):
        with self._iterations.op.graph.control_dependencies(update_ops):
            cache = state_ops.assign(self._m_cache, self._schedule_new)
        return super()._finish([*update_ops, cache], name_scope)


class _Ftrl(_KerasState, ftrl.FtrlOptimizer):
    """TF's FTRL kernels; Keras's slot names (``accumulator``, ``linear``), made per
    variable in turn."""

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            for keras_name, tf_name in self._slot_names:
                self._keras_slot(v, keras_name, tf_name, self._slot_initial(tf_name))

    def _slot_initial(self, tf_name: str) -> float:
        if tf_name == "accum":
            return float(self._keras_opt._config["initial_accumulator_value"])
        return 0.0


class _SGD(_KerasState, gradient_descent.GradientDescentOptimizer):
    """Keras's SGD: with momentum ``m = momentum * m - lr * g; w += m`` (Nesterov:
    ``w += momentum * m - lr * g``); only the rows of a sparse gradient move."""

    def _prepare(self) -> None:
        super()._prepare()
        self._momentum_t = self._hypers["momentum"].value()

    def _velocity(self, m, grad, var, lr, mom):
        m_t = math_ops.subtract(math_ops.multiply(m, mom), math_ops.multiply(lr, grad))
        step = math_ops.subtract(math_ops.multiply(m_t, mom), math_ops.multiply(lr, grad)) \
            if self._keras_opt._config.get("nesterov") else m_t
        return m_t, step

    def _fused(self, op_type: str, inputs: dict, var):
        """TensorFlow's ``Resource(Sparse)ApplyKerasMomentum`` on a resource variable."""
        return training_ops.apply_op(
            op_type, {"var": var, "accum": self.get_slot(var, "momentum"),
                      "lr": self._cast(self._learning_rate_tensor, var),
                      "momentum": self._cast(self._momentum_t, var), **inputs},
            self._use_locking, use_nesterov=bool(self._keras_opt._config.get("nesterov")))

    def _apply_dense(self, grad, var):
        if not self._slot_names:
            return super()._apply_dense(grad, var)
        if training_ops._is_resource(var):
            return self._fused("ApplyKerasMomentum", {"grad": grad}, var)
        lr = self._cast(self._learning_rate_tensor, var)
        mom = self._cast(self._momentum_t, var)
        m = self.get_slot(var, "momentum")
        m_t, step = self._velocity(m.value(), grad, var, lr, mom)
        graph = var.op.graph
        with graph.control_dependencies([state_ops.assign(m, m_t)]):
            return state_ops.assign_add(var, step)

    def _apply_sparse(self, grad, var):
        if not self._slot_names:
            return super()._apply_sparse(grad, var)
        rows, where = unique(grad.indices)
        values = segment_ops.unsorted_segment_sum(grad.values, where, array_ops.shape(rows)[0])
        if training_ops._is_resource(var):
            return self._fused("SparseApplyKerasMomentum", {"grad": values, "indices": rows},
                               var)
        lr = self._cast(self._learning_rate_tensor, var)
        mom = self._cast(self._momentum_t, var)
        m = self.get_slot(var, "momentum")
        m_t, step = self._velocity(array_index_ops.gather(m.value(), rows), values, var, lr, mom)
        graph = var.op.graph
        with graph.control_dependencies([scatter_ops.scatter_update(m, rows, m_t)]):
            return scatter_ops.scatter_add(var, rows, step)


class _RMSprop(_KerasState, rmsprop.RMSPropOptimizer):
    """With momentum, TF's RMSProp kernels; without, Keras's
    ``rms = rho * rms + (1 - rho) * g * g; w -= lr * g / (sqrt(rms) + epsilon)``."""

    def _apply_dense(self, grad, var):
        if self._keras_opt._config.get("momentum"):
            return super()._apply_dense(grad, var)
        grad = _dense(grad)
        rho = self._cast(self._decay_tensor, var)
        lr = self._cast(self._learning_rate_tensor, var)
        eps = self._cast(self._epsilon_tensor, var)
        if self._keras_opt._config.get("centered"):
            mg = self.get_slot(var, "mg")
            mg_t = math_ops.add(math_ops.multiply(rho, mg.value()),
                                math_ops.multiply(math_ops.subtract(1.0, rho), grad))
        rms = self.get_slot(var, "rms")
        rms_t = math_ops.add(math_ops.multiply(rho, rms.value()),
                             math_ops.multiply(math_ops.subtract(1.0, rho),
                                               math_ops.square(grad)))
        updates = [state_ops.assign(rms, rms_t)]
        denom = rms_t
        if self._keras_opt._config.get("centered"):
            updates.append(state_ops.assign(mg, mg_t))
            denom = math_ops.subtract(rms_t, math_ops.square(mg_t))
        step = math_ops.divide(math_ops.multiply(lr, grad),
                               math_ops.add(math_ops.sqrt(denom), eps))
        with var.op.graph.control_dependencies(updates):
            return state_ops.assign_sub(var, step)

    def _apply_sparse(self, grad, var):
        if self._keras_opt._config.get("momentum"):
            return super()._apply_sparse(grad, var)
        return self._apply_dense(grad, var)


class _Adagrad(_KerasState, adagrad.AdagradOptimizer):
    """Keras's Adagrad: ``acc += g * g; w -= lr * g / (sqrt(acc) + epsilon)``."""

    def _v2_inputs(self, var) -> dict:
        return {"var": var, "accum": self.get_slot(var, "accumulator"),
                "lr": self._cast(self._learning_rate_tensor, var),
                "epsilon": self._cast(float(self._keras_opt._config["epsilon"] or 1e-7), var)}

    def _apply_dense(self, grad, var):
        return training_ops.apply_op("ApplyAdagradV2", {**self._v2_inputs(var), "grad": grad},
                                     self._use_locking)

    def _apply_sparse(self, grad, var):
        rows, where = unique(grad.indices)
        values = segment_ops.unsorted_segment_sum(grad.values, where, array_ops.shape(rows)[0])
        return training_ops.apply_op(
            "SparseApplyAdagradV2", {**self._v2_inputs(var), "grad": values, "indices": rows},
            self._use_locking)


class _Adadelta(_KerasState, adadelta.AdadeltaOptimizer):
    pass


def make(keras_opt, kind: str, graph, scope: str = "training/"):
    """The `tf.train` optimizer updating `keras_opt`'s state in `graph` (its ``iter``
    and hyperparameter variables made here, under ``<scope><kind>/``)."""
    c = keras_opt._config
    hypers = {}
    prefix = f"{scope}{c.get('name') or kind}/"  # named after the optimizer's `name`
    with graph.as_default(), graph.control_dependencies(None), name_scope(None), \
            name_scope(prefix):
        iterations = keras_opt.__dict__.get("_iterations_set", {}).get(graph)
        if iterations is None:
            iterations = Variable(0, dtype=dtypes.int64, trainable=False, name="iter",
                                  use_resource=True)
        for name in HYPERS[kind]:
            if name == "learning_rate":
                hypers[name] = keras_opt._lr_variable(graph, prefix)
                continue
            value = float(c.get(name) or 0.0)
            if name == "learning_rate_power":
                value = float(c[name])
            hypers[name] = Variable(value, dtype=dtypes.float32, trainable=False, name=name,
                                    use_resource=True)
    state = (iterations, hypers)
    lr_var = hypers["learning_rate"]
    opt = None

    schedule = keras_opt._schedule

    def lr():
        if schedule is not None:  # evaluated at the step being taken
            return opt._decayed(math_ops.cast(schedule(iterations.value()), dtypes.float32))
        return opt._decayed(lr_var.value())

    eps = float(c.get("epsilon") or 1e-7)
    if kind == "Adam":
        opt = _Adam(lr, beta1=lambda: hypers["beta_1"].value(),
                    beta2=lambda: hypers["beta_2"].value(), epsilon=eps)
    elif kind == "SGD":
        opt = _SGD(lr)
    elif kind == "RMSprop":
        opt = _RMSprop(lr, decay=lambda: hypers["rho"].value(),
                       momentum=lambda: hypers["momentum"].value(), epsilon=eps,
                       centered=bool(c.get("centered")))
    elif kind == "Adagrad":
        opt = _Adagrad(lr, initial_accumulator_value=c["initial_accumulator_value"])
    elif kind == "Adadelta":
        opt = _Adadelta(lr, rho=lambda: hypers["rho"].value(), epsilon=eps)
    elif kind in ("Adamax", "Nadam"):
        opt = (_Adamax if kind == "Adamax" else _Nadam)(lr)
    elif kind == "Ftrl":
        opt = _Ftrl(lr, learning_rate_power=float(c["learning_rate_power"]),
                    initial_accumulator_value=float(c["initial_accumulator_value"]),
                    l1_regularization_strength=float(c["l1_regularization_strength"]),
                    l2_regularization_strength=float(c["l2_regularization_strength"]),
                    l2_shrinkage_regularization_strength=float(
                        c["l2_shrinkage_regularization_strength"]),
                    beta=float(c["beta"]))
    else:
        raise ValueError(f"unknown Keras optimizer kind {kind!r}")
    opt._keras_init(keras_opt, kind, hypers, iterations, prefix)
    return opt, state

