"""`tf.keras.experimental.LinearModel` and `WideDeepModel` (also in `tf.keras.models`):
a linear model ``activation(sum_i x_i @ kernel_i + bias)`` over one input or a list of
inputs, and the wide & deep combination ``activation(linear(x_wide) + dnn(x_deep))``
(Cheng et al., 2016), trained with one optimizer or a pair ``[linear_optimizer,
dnn_optimizer]`` (each updates its own model's weights, from one gradient computation).

Both are subclassed models: `fit` builds them on the first data, weights named
``linear_model/kernel``, ``linear_model/kernel_1`` (one per input), ``linear_model/bias``.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     model = tf.keras.experimental.LinearModel(units=1, kernel_initializer="ones")
...     model.compile("sgd", "mse")
...     _ = model.fit(np.ones((4, 2), "f"), np.ones((4, 1), "f"), verbose=0)
...     print([w.name for w in model.weights])
['linear_model/kernel:0', 'linear_model/bias:0']
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.keras import activations, optimizers
from flowgraph.keras.models import Model
from flowgraph.ops import math_ops

__all__ = ["LinearModel", "WideDeepModel"]


class LinearModel(Model):
    """``activation(sum_i inputs_i @ kernel_i + bias)``: one kernel per input (a
    tensor, a list, or a dict read in sorted key order), one bias."""

    _sorted_dict_inputs = True

    def __init__(self, units=1, activation=None, use_bias=True, kernel_initializer="zeros",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self._kernels, self._bias = None, None

    def _parts(self, inputs) -> list:
        if isinstance(inputs, dict):
            return [convert_to_tensor(inputs[k]) for k in sorted(inputs)]
        if isinstance(inputs, list | tuple):
            return [convert_to_tensor(x) for x in inputs]
        return [convert_to_tensor(inputs)]

    def _make_weights(self, parts) -> None:
        self._kernels = []
        for i, x in enumerate(parts):
            if x.shape.ndims is None or x.shape.ndims < 2:
                raise ValueError(f"Input {i} of layer \"{self.name}\" is incompatible with "
                                 f"the layer: expected min_ndim=2, found ndim="
                                 f"{x.shape.ndims}. Full shape received: {x.shape}")
            width = x.shape.as_list()[-1]
            self._kernels.append(self.add_weight(
                "kernel", [width, self.units], initializer=self.kernel_initializer,
                regularizer=self.kernel_regularizer))
        if self.use_bias:
            self._bias = self.add_weight("bias", [self.units],
                                         initializer=self.bias_initializer,
                                         regularizer=self.bias_regularizer)

    def call(self, inputs):
        parts = self._parts(inputs)
        if self._kernels is None:
            self._make_weights(parts)
        if len(parts) != len(self._kernels):
            raise ValueError(f"LinearModel {self.name} was built for {len(self._kernels)} "
                             f"input(s); got {len(parts)}.")
        out = None
        for x, kernel in zip(parts, self._kernels, strict=True):
            x = math_ops.cast(x, kernel.dtype.base_dtype)
            term = math_ops.matmul(x, kernel)
            out = term if out is None else math_ops.add(out, term)
        if self._bias is not None:
            out = math_ops.add(out, self._bias)
        return self.activation(out) if self.activation is not None else out

    def get_config(self) -> dict:
        from flowgraph.keras.saving_registry import serialize_keras_object

        def init(value):
            from flowgraph.keras.initializers import get

            obj = get(value)
            return serialize_keras_object(obj) if hasattr(obj, "get_config") else obj

        def reg(value):
            from flowgraph.keras import regularizers

            obj = regularizers.get(value)
            return None if obj is None else serialize_keras_object(obj)

        return {"units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": init(self.kernel_initializer),
                "bias_initializer": init(self.bias_initializer),
                "kernel_regularizer": reg(self.kernel_regularizer),
                "bias_regularizer": reg(self.bias_regularizer),
                "name": self.name, "trainable": self.trainable, "dtype": "float32"}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from flowgraph.keras import initializers, regularizers

        config = dict(config)
        config.pop("dtype", None)
        for key in ("kernel_initializer", "bias_initializer"):
            if isinstance(config.get(key), dict):
                config[key] = initializers.deserialize(config[key])
        for key in ("kernel_regularizer", "bias_regularizer"):
            if isinstance(config.get(key), dict):
                config[key] = regularizers.get(config[key])
        return cls(**config)


class _PairOptimizer(optimizers.Optimizer):
    """`WideDeepModel`'s ``[linear_optimizer, dnn_optimizer]``: one gradient computation,
    each optimizer applying its model's gradients."""

    _kind = "WideDeep"

    def __init__(self, linear, dnn, model) -> None:
        self.__dict__["_config"] = {"name": "WideDeep", "learning_rate": 0.0}
        self.linear, self.dnn, self._model = optimizers.get(linear), optimizers.get(dnn), model

    def _make(self, scope: str = "training/"):
        return _PairApply(self, scope)

    def get_config(self) -> dict:
        return {"linear": optimizers.serialize(self.linear),
                "dnn": optimizers.serialize(self.dnn)}


class _PairApply:
    """The `minimize` `fit` calls, split between the two optimizers."""

    def __init__(self, pair: _PairOptimizer, scope: str) -> None:
        self._pair, self._scope = pair, scope
        self._keras_slots: list = []

    def minimize(self, loss, var_list=None, **kwargs):
        from flowgraph.ops.control_flow_ops import group
        from flowgraph.ops.gradients import gradients

        model = self._pair._model
        linear_ids = {id(v) for v in model.linear_model.trainable_weights}
        var_list = list(var_list)
        grads = gradients(loss, var_list)
        ops = []
        for opt, mine in ((self._pair.linear, True), (self._pair.dnn, False)):
            pairs = [(g, v) for g, v in zip(grads, var_list, strict=True)
                     if g is not None and (id(v) in linear_ids) == mine]
            if pairs:
                tf_opt = optimizers.to_tf_optimizer(opt)
                ops.append(tf_opt.apply_gradients(pairs))
                self._keras_slots.extend(getattr(tf_opt, "_keras_slots", []))
        return group(*ops)


class WideDeepModel(Model):
    """``activation(linear_model(x_linear) + dnn_model(x_dnn))``; called on a list
    ``[x_linear, x_dnn]``, or on one input both models read."""

    def __init__(self, linear_model, dnn_model, activation=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.linear_model = linear_model
        self.dnn_model = dnn_model
        self.activation = activations.get(activation)

    def call(self, inputs):
        if isinstance(inputs, list | tuple) and len(inputs) == 2:
            linear_in, dnn_in = inputs
        else:
            linear_in = dnn_in = inputs
        with name_scope(None):
            dnn_out = self.dnn_model(dnn_in)
        out = math_ops.add(self.linear_model(linear_in), dnn_out)
        return self.activation(out) if self.activation is not None else out

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, **kwargs) -> None:
        """As `Model.compile`; `optimizer` may be ``[linear_optimizer, dnn_optimizer]``."""
        if isinstance(optimizer, list | tuple):
            if len(optimizer) != 2:
                raise ValueError(f"WideDeepModel.compile: give one optimizer or two "
                                 f"([linear_optimizer, dnn_optimizer]); got {len(optimizer)}.")
            optimizer = _PairOptimizer(optimizer[0], optimizer[1], self)
        super().compile(optimizer, loss, metrics, **kwargs)

    def get_config(self) -> dict:
        from flowgraph.keras.saving_registry import serialize_keras_object

        return {"linear_model": serialize_keras_object(self.linear_model),
                "dnn_model": serialize_keras_object(self.dnn_model),
                "activation": activations.serialize(self.activation), "name": self.name,
                "trainable": self.trainable, "dtype": "float32"}
