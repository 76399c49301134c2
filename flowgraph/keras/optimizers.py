"""`tf.keras.optimizers`: Keras optimizer objects, carried out by `tf.train` optimizers.

A Keras optimizer here only stores its hyperparameters (Keras' names and defaults:
``learning_rate`` or its old alias ``lr``, ``rho``, ``beta_1``, ...); `to_tf_optimizer`
makes the equivalent `tf.train` optimizer, a new one for every graph that trains the
model, reading the learning rate from a variable of that graph
(``training/<Optimizer>/learning_rate``, what ``optimizer.lr`` returns). `get` accepts
a name (``'sgd'``, ``'adam'``, ``'rmsprop'``, ``'adagrad'``, ``'adadelta'``), a Keras
optimizer, or a `tf.train.Optimizer` instance (used as is).

Example
-------
>>> from flowgraph.keras import optimizers
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     opt = optimizers.to_tf_optimizer(optimizers.get("adam"))
...     print(type(opt).__name__, opt._lr.name)
AdamOptimizer training/Adam/learning_rate:0
"""

from __future__ import annotations

import copy
import functools
import weakref

from flowgraph.train.optimizer import Optimizer as _TFOptimizer

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "Optimizer", "RMSprop", "get",
           "to_tf_optimizer"]


class Optimizer:
    """Base of the Keras optimizers: stores the hyperparameters (see `get_config`)."""

    _defaults: dict = {}

    def __init__(self, learning_rate=None, **kwargs) -> None:
        lr = kwargs.pop("lr", None)
        if learning_rate is None:
            learning_rate = lr if lr is not None else self._defaults["learning_rate"]
        for key in ("decay", "clipnorm", "clipvalue"):
            if kwargs.pop(key, 0) not in (0, None):
                raise NotImplementedError(f"{type(self).__name__}: `{key}` is not supported "
                                          f"by flowgraph's Keras optimizers; use a "
                                          f"tf.train optimizer with a learning-rate schedule "
                                          f"or clipping instead.")
        unknown = sorted(set(kwargs) - set(self._defaults))
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) {unknown}")
        self._config = {**self._defaults, **kwargs, "learning_rate": learning_rate}

    def get_config(self) -> dict:
        """The hyperparameters; ``learning_rate`` is the current value of the default
        graph's learning-rate variable once there is one (schedules change it)."""
        config = dict(self._config)
        var = self.__dict__.get("_lr_vars", {}).get(_default_graph())
        if var is not None:
            from flowgraph.keras import backend

            config["learning_rate"] = backend.get_value(var)  # np.float32, as TF's
        return config

    # The learning rate lives in a variable per graph (``training/SGD/learning_rate``, as
    # TF's graph-mode Keras names it), so that `K.set_value(model.optimizer.lr, ...)`,
    # `LearningRateScheduler` and `ReduceLROnPlateau` change it between steps.
    def _lr_variable(self, graph=None):
        from flowgraph.framework import dtypes
        from flowgraph.framework.graph import get_default_graph, name_scope
        from flowgraph.ops.variables import Variable

        graph = graph or get_default_graph()
        cache = self.__dict__.setdefault("_lr_vars", weakref.WeakKeyDictionary())
        var = cache.get(graph)
        if var is None:
            with graph.as_default(), graph.control_dependencies(None), name_scope(None), \
                    name_scope(f"training/{type(self).__name__}"):
                var = Variable(float(self._config["learning_rate"]), dtype=dtypes.float32,
                               trainable=False, name="learning_rate")
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
        return state

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        new.__dict__.update(copy.deepcopy(self.__getstate__(), memo))
        return new

    def _make(self) -> _TFOptimizer:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._config.items())
        return f"{type(self).__name__}({args})"


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum."""

    _defaults = {"learning_rate": 0.01, "momentum": 0.0, "nesterov": False}

    def _make(self):
        from flowgraph.train import gradient_descent, momentum

        c = self._config
        if c["momentum"]:
            return momentum.MomentumOptimizer(self._lr_variable(), c["momentum"],
                                              use_nesterov=c["nesterov"])
        return gradient_descent.GradientDescentOptimizer(self._lr_variable())


class Adam(Optimizer):
    """Adam (Keras defaults: learning_rate 0.001, beta_1 0.9, beta_2 0.999, epsilon
    1e-7)."""

    _defaults = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7,
                 "amsgrad": False}

    def _make(self):
        from flowgraph.train import adam

        c = self._config
        if c["amsgrad"]:
            raise NotImplementedError("Adam(amsgrad=True) is not supported by flowgraph.")
        return adam.AdamOptimizer(self._lr_variable(), beta1=c["beta_1"], beta2=c["beta_2"],
                                  epsilon=c["epsilon"] or 1e-7)


class RMSprop(Optimizer):
    """RMSprop (Keras defaults: learning_rate 0.001, rho 0.9, epsilon 1e-7)."""

    _defaults = {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0, "epsilon": 1e-7,
                 "centered": False}

    def _make(self):
        c = self._config
        return _keras_rmsprop_class()(self._lr_variable(), decay=c["rho"],
                                        momentum=c["momentum"], epsilon=c["epsilon"] or 1e-7,
                                        centered=c["centered"])


def _default_graph():
    from flowgraph.framework.graph import get_default_graph

    return get_default_graph()


@functools.cache
def _keras_rmsprop_class():
    """`tf.train.RMSPropOptimizer` with Keras's mean-square slot, which starts at zeros
    (TF1's starts at ones, so the first steps differ a lot)."""
    from flowgraph.train import rmsprop

    class KerasRMSProp(rmsprop.RMSPropOptimizer):
        def _create_slots(self, var_list) -> None:
            for v in var_list:
                self._zeros_slot(v, "rms", self._name)
                if self._centered:
                    self._zeros_slot(v, "mg", self._name)
                self._zeros_slot(v, "momentum", self._name)

    return KerasRMSProp


class Adagrad(Optimizer):
    """Adagrad (Keras defaults: learning_rate 0.001, initial_accumulator_value 0.1)."""

    _defaults = {"learning_rate": 0.001, "initial_accumulator_value": 0.1, "epsilon": 1e-7}

    def _make(self):
        from flowgraph.train import adagrad

        c = self._config
        return adagrad.AdagradOptimizer(
            self._lr_variable(), initial_accumulator_value=c["initial_accumulator_value"])


class Adadelta(Optimizer):
    """Adadelta (Keras defaults: learning_rate 0.001, rho 0.95, epsilon 1e-7)."""

    _defaults = {"learning_rate": 0.001, "rho": 0.95, "epsilon": 1e-7}

    def _make(self):
        from flowgraph.train import adadelta

        c = self._config
        return adadelta.AdadeltaOptimizer(self._lr_variable(), rho=c["rho"],
                                          epsilon=c["epsilon"] or 1e-7)


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta}


def get(identifier):
    """A Keras optimizer for a name, a config dict (``{'class_name', 'config'}``) or an
    optimizer; `tf.train` optimizers are returned as they are."""
    if isinstance(identifier, Optimizer | _TFOptimizer):
        return identifier
    if isinstance(identifier, dict) and "class_name" in identifier:
        cls = _BY_NAME.get(str(identifier["class_name"]).lower())
        if cls is not None:
            return cls(**identifier.get("config", {}))
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}. Use one of "
                     f"{sorted(_BY_NAME)}, a tf.keras.optimizers object or a tf.train "
                     f"optimizer.")


def to_tf_optimizer(optimizer) -> _TFOptimizer:
    """The `tf.train` optimizer doing what `optimizer` (anything `get` accepts) does."""
    optimizer = get(optimizer)
    return optimizer if isinstance(optimizer, _TFOptimizer) else optimizer._make()
