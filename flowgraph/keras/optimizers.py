"""`tf.keras.optimizers`: Keras optimizer objects, carried out by `tf.train` optimizers.

A Keras optimizer stores its hyperparameters (Keras' names and defaults:
``learning_rate`` or its old alias ``lr``, ``rho``, ``beta_1``, ...); `to_tf_optimizer`
makes, once per graph that trains the model, the `tf.train` optimizer that updates its
variables there: ``training/<Optimizer>/iter``, the hyperparameters (``learning_rate``
is what ``optimizer.lr`` returns) and the slots, named and updated as TF 2.15's
graph-mode Keras does (`flowgraph.keras.optimizer_state`); ``optimizer.weights``,
``get_weights`` and ``iterations`` read them. `get` accepts a name (``'sgd'``,
``'adam'``, ``'rmsprop'``, ``'adagrad'``, ``'adadelta'``), a Keras optimizer, or a
`tf.train.Optimizer` instance (used as is).

Example
-------
>>> from flowgraph.keras import optimizers
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     adam = optimizers.get("adam")
...     opt = optimizers.to_tf_optimizer(adam)
...     print(isinstance(opt, tf.train.AdamOptimizer), adam.lr.name)
True training/Adam/learning_rate:0
"""

from __future__ import annotations

import copy
import weakref

from flowgraph.train.optimizer import Optimizer as _TFOptimizer

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "Adamax", "Ftrl", "Nadam", "Optimizer",
           "RMSprop", "deserialize", "get", "serialize", "to_tf_optimizer"]


class Optimizer:
    """Base of the Keras optimizers: stores the hyperparameters (see `get_config`)."""

    _defaults: dict = {}

    def __init__(self, learning_rate=None, **kwargs) -> None:
        lr = kwargs.pop("lr", None)
        if learning_rate is None:
            learning_rate = lr if lr is not None else self._defaults["learning_rate"]
        if isinstance(learning_rate, dict):
            from flowgraph.keras import optimizers_schedules

            learning_rate = optimizers_schedules.deserialize(learning_rate)
        name = kwargs.pop("name", None) or self._kind
        decay = float(kwargs.pop("decay", self._default_decay) or 0.0)
        if decay < 0:
            raise ValueError(f"decay cannot be less than 0. Received: decay={decay}.")
        for key in ("clipnorm", "clipvalue"):
            if kwargs.pop(key, 0) not in (0, None):
                raise NotImplementedError(f"{type(self).__name__}: `{key}` is not supported "
                                          f"by flowgraph's Keras optimizers; use a "
                                          f"tf.train optimizer with a learning-rate schedule "
                                          f"or clipping instead.")
        unknown = sorted(set(kwargs) - set(self._defaults))
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) {unknown}")
        self._config = {"name": name, "learning_rate": learning_rate, "decay": decay,
                        **{k: v for k, v in self._defaults.items() if k != "learning_rate"},
                        **kwargs}

    _kind = "Optimizer"
    _default_decay = 0.0

    @property
    def _schedule(self):
        """The learning-rate schedule given as ``learning_rate``, or None."""
        lr = self._config["learning_rate"]
        return None if isinstance(lr, int | float) or not callable(lr) else lr

    def get_config(self) -> dict:
        """The hyperparameters (TF's keys: ``name``, ``learning_rate``, ``decay``, ...);
        values are those of the default graph's variables once there are (schedules and
        ``K.set_value`` change them)."""
        config = dict(self._config)
        if self._schedule is not None:
            from flowgraph.keras import optimizers_schedules

            config["learning_rate"] = optimizers_schedules.serialize(self._schedule)
        var = self.__dict__.get("_lr_vars", {}).get(_default_graph())
        if var is not None and self._schedule is None:
            from flowgraph.keras import backend

            config["learning_rate"] = backend.get_value(var)  # np.float32, as TF's
        state = self._graph_state()
        if state is not None:
            from flowgraph.keras import backend

            for key, v in state[1][1].items():
                if key != "learning_rate":
                    config[key] = backend.get_value(v)
        return config

    # -- the state of the default graph (flowgraph.keras.optimizer_state) ---------------
    def _graph_state(self, graph=None):
        """``(tf.train optimizer, (iterations, hyperparameter variables))`` of `graph`,
        None before the model trained there."""
        return self.__dict__.get("_states", {}).get(graph or _default_graph())

    def _require_state(self, what: str):
        state = self._graph_state()
        if state is None:
            raise ValueError(f"{type(self).__name__}.{what}: the optimizer has no variables "
                             f"in this graph yet; they are made when the model first trains "
                             f"(fit, train_on_batch).")
        return state

    @property
    def iterations(self):
        """The int64 step counter ``training/<Name>/iter`` of the default graph (or the
        variable assigned to ``iterations`` before training, e.g. the global step)."""
        override = self.__dict__.get("_iterations_set", {}).get(_default_graph())
        if override is not None and self._graph_state() is None:
            return override
        return self._require_state("iterations")[1][0]

    @iterations.setter
    def iterations(self, variable) -> None:
        if self._graph_state() is not None:
            raise RuntimeError("Cannot set `iterations` to a new Variable after the "
                               "Optimizer weights have been created")
        self.__dict__.setdefault("_iterations_set", weakref.WeakKeyDictionary())[
            _default_graph()] = variable

    @property
    def weights(self) -> list:
        """``[iterations, *slots]``, TF's order (empty before the first training)."""
        state = self._graph_state()
        if state is None:
            return []
        return [state[1][0], *state[0]._keras_slots]

    def variables(self) -> list:
        return self.weights

    def get_weights(self) -> list:
        from flowgraph.keras import backend

        return backend.batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        from flowgraph.keras import backend

        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on optimizer "
                             f"{self._config['name']} with a weight list of length "
                             f"{len(weights)}, but the optimizer was expecting "
                             f"{len(params)} weights. Provided weights: {weights!r:.80}")
        backend.batch_set_value(list(zip(params, weights, strict=True)))

    # The learning rate lives in a variable per graph (``training/SGD/learning_rate``, as
    # TF's graph-mode Keras names it), so that `K.set_value(model.optimizer.lr, ...)`,
    # `LearningRateScheduler` and `ReduceLROnPlateau` change it between steps.
    def _lr_variable(self, graph=None, prefix: str | None = None):
        from flowgraph.framework import dtypes
        from flowgraph.framework.graph import get_default_graph, name_scope
        from flowgraph.ops.variables import Variable

        graph = graph or get_default_graph()
        cache = self.__dict__.setdefault("_lr_vars", weakref.WeakKeyDictionary())
        var = cache.get(graph)
        if var is None:
            with graph.as_default(), graph.control_dependencies(None), name_scope(None), \
                    name_scope(prefix or f"training/{self._config.get('name') or self._kind}/"):
                initial = self._config["learning_rate"]
                if self._schedule is not None:  # the schedule's start; steps read it
                    initial = getattr(initial, "initial_learning_rate", 0.0)
                var = Variable(float(initial), dtype=dtypes.float32,
                               trainable=False, name="learning_rate", use_resource=True)
            cache[graph] = var
        return var

    @property
    def lr(self):
        """The learning-rate variable of the default graph (read it with
        ``K.get_value``; the initial value is ``get_config()['learning_rate']``)."""
        return self._lr_variable()

    @lr.setter
    def lr(self, value) -> None:
        self._config["learning_rate"] = float(value)
        from flowgraph.keras import backend

        backend.set_value(self._lr_variable(), float(value))

    learning_rate = lr

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lr_vars", None)
        state.pop("_states", None)
        state.pop("_iterations_set", None)
        return state

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        new.__dict__.update(copy.deepcopy(self.__getstate__(), memo))
        return new

    def get_gradients(self, loss, params) -> list:
        """The gradients of `loss` for `params`; ValueError when one has none."""
        from flowgraph.ops.gradients import gradients

        grads = gradients(loss, list(params))
        if any(g is None for g in grads):
            raise ValueError(f"An operation has `None` for gradient. Please make sure that "
                             f"all of your ops have a gradient defined (i.e. are "
                             f"differentiable). Variables without one: "
                             f"{[p.name for p, g in zip(params, grads) if g is None]}")
        return grads

    def get_updates(self, loss, params) -> list:
        """``[update op]`` applying one step on `loss` for `params` (the TF1 Keras API
        behind custom loops: ``K.function(inputs, outputs, updates=...)``). Made outside
        `fit`, the variables are named ``Adam/iter``, ``Adam/<weight>/m``, ... (under the
        current name scope), as in TF."""
        from flowgraph.framework.graph import get_default_graph

        scope = get_default_graph().get_name_scope()
        tf_opt = self._make(scope=f"{scope}/" if scope else "")
        grads = self.get_gradients(loss, params)
        return [tf_opt.apply_gradients(list(zip(grads, params, strict=True)))]

    def _make(self, scope: str = "training/") -> _TFOptimizer:
        """The `tf.train` optimizer updating this optimizer's variables in the default
        graph (made there under `scope`, named as TF's graph-mode Keras names them)."""
        from flowgraph.keras import optimizer_state

        graph = _default_graph()
        state = self._graph_state(graph)
        if state is None:
            state = optimizer_state.make(self, self._kind, graph, scope)
            self.__dict__.setdefault("_states", weakref.WeakKeyDictionary())[graph] = state
        return state[0]

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._config.items() if k != "name")
        return f"{type(self).__name__}({args})"


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum."""

    _kind = "SGD"
    _defaults = {"learning_rate": 0.01, "momentum": 0.0, "nesterov": False}


class Adam(Optimizer):
    """Adam (Keras defaults: learning_rate 0.001, beta_1 0.9, beta_2 0.999, epsilon
    1e-7)."""

    _kind = "Adam"
    _defaults = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7,
                 "amsgrad": False}


class RMSprop(Optimizer):
    """RMSprop (Keras defaults: learning_rate 0.001, rho 0.9, epsilon 1e-7)."""

    _kind = "RMSprop"
    _defaults = {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0, "epsilon": 1e-7,
                 "centered": False}


def _default_graph():
    from flowgraph.framework.graph import get_default_graph

    return get_default_graph()


class Adagrad(Optimizer):
    """Adagrad (Keras defaults: learning_rate 0.001, initial_accumulator_value 0.1)."""

    _kind = "Adagrad"
    _defaults = {"learning_rate": 0.001, "initial_accumulator_value": 0.1, "epsilon": 1e-7}


class Adadelta(Optimizer):
    """Adadelta (Keras defaults: learning_rate 0.001, rho 0.95, epsilon 1e-7)."""

    _kind = "Adadelta"
    _defaults = {"learning_rate": 0.001, "rho": 0.95, "epsilon": 1e-7}


class Adamax(Optimizer):
    """Adamax, Adam's infinity-norm variant (Keras defaults: learning_rate 0.001, beta_1
    0.9, beta_2 0.999, epsilon 1e-7): ``m = b1 m + (1 - b1) g; v = max(b2 v, |g|);
    w -= lr / (1 - b1^t) * m / (v + epsilon)``."""

    _kind = "Adamax"
    _defaults = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat, 2016), Keras' momentum schedule
    ``b1 (1 - 0.5 * 0.96 ** (decay t))`` kept in ``momentum_cache``; ``decay`` (alias
    ``schedule_decay``, 0.004) shapes that schedule, not the learning rate."""

    _kind = "Nadam"
    _defaults = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
    _default_decay = 0.004

    def __init__(self, learning_rate=None, **kwargs) -> None:
        if "schedule_decay" in kwargs:
            kwargs["decay"] = kwargs.pop("schedule_decay")
        super().__init__(learning_rate, **kwargs)


class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), carried out by `tf.train.FtrlOptimizer`
    (Keras defaults: learning_rate 0.001, learning_rate_power -0.5,
    initial_accumulator_value 0.1, no regularization)."""

    _kind = "Ftrl"
    _defaults = {"learning_rate": 0.001, "learning_rate_power": -0.5,
                 "initial_accumulator_value": 0.1, "l1_regularization_strength": 0.0,
                 "l2_regularization_strength": 0.0,
                 "l2_shrinkage_regularization_strength": 0.0, "beta": 0.0}

    def __init__(self, learning_rate=None, **kwargs) -> None:
        super().__init__(learning_rate, **kwargs)
        c = self._config
        if c["initial_accumulator_value"] < 0.0:
            raise ValueError(f"`initial_accumulator_value` needs to be positive or zero. "
                             f"Received: initial_accumulator_value="
                             f"{c['initial_accumulator_value']}.")
        if c["learning_rate_power"] > 0.0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero. "
                             f"Received: learning_rate_power={c['learning_rate_power']}.")
        for key in ("l1_regularization_strength", "l2_regularization_strength",
                    "l2_shrinkage_regularization_strength"):
            if c[key] < 0.0:
                raise ValueError(f"`{key}` needs to be positive or zero. Received: "
                                 f"{key}={c[key]}.")


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax, "nadam": Nadam, "ftrl": Ftrl}


def serialize(optimizer) -> dict:
    """``{'class_name': ..., 'config': ...}`` of a Keras optimizer."""
    if not isinstance(optimizer, Optimizer):
        raise ValueError(f"Could not serialize {optimizer!r}: not a tf.keras optimizer.")
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """The optimizer described by `serialize`'s dict (custom classes looked up in
    `custom_objects` and the registered custom objects)."""
    from flowgraph.keras.utils import get_custom_objects

    if not isinstance(config, dict) or "class_name" not in config:
        raise TypeError(f"optimizers.deserialize expects a dict {{'class_name': ..., "
                        f"'config': {{...}}}}; got {type(config).__name__} {config!r:.80}.")
    name = str(config["class_name"])
    cls = _BY_NAME.get(name.lower()) or {**get_custom_objects(),
                                         **(custom_objects or {})}.get(name)
    if cls is None:
        raise ValueError(f"Unknown optimizer: '{name}'. Please ensure you are using a "
                         f"`keras.utils.custom_object_scope` and that this object is "
                         f"included in the scope.")
    kwargs = dict(config.get("config", {}))
    if hasattr(cls, "from_config"):
        return cls.from_config(kwargs)
    return cls(**kwargs)


def get(identifier):
    """A Keras optimizer for a name, a config dict (``{'class_name', 'config'}``) or an
    optimizer; `tf.train` optimizers are returned as they are."""
    if isinstance(identifier, Optimizer | _TFOptimizer):
        return identifier
    if isinstance(identifier, dict) and "class_name" in identifier:
        if str(identifier["class_name"]).lower() in _BY_NAME:
            return deserialize(identifier)
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}. Use one of "
                     f"{sorted(_BY_NAME)}, a tf.keras.optimizers object or a tf.train "
                     f"optimizer.")


def tf_optimizer_iterations(opt: _TFOptimizer):
    """The step counter TF's graph-mode Keras gives a `tf.train` optimizer passed to
    `compile` (its ``TFOptimizer`` wrapper's ``TFOptimizer/iterations``: an int64
    resource variable made at compile time in the root name scope, the `global_step`
    of the optimizer's updates)."""
    from flowgraph.framework import dtypes
    from flowgraph.framework.graph import get_default_graph, name_scope
    from flowgraph.ops.variables import Variable

    graph = get_default_graph()
    made = opt.__dict__.setdefault("_keras_iterations", weakref.WeakKeyDictionary())
    var = made.get(graph)
    if var is None:
        with graph.control_dependencies(None), name_scope(None), name_scope("TFOptimizer"):
            var = Variable(0, dtype=dtypes.int64, trainable=False, name="iterations",
                           use_resource=True)
        made[graph] = var
    return var


def to_tf_optimizer(optimizer) -> _TFOptimizer:
    """The `tf.train` optimizer doing what `optimizer` (anything `get` accepts) does."""
    optimizer = get(optimizer)
    return optimizer if isinstance(optimizer, _TFOptimizer) else optimizer._make()
