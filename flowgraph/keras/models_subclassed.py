"""Subclassed Keras models: ``class M(tf.keras.Model)`` with layers assigned in
``__init__`` and the forward pass written in ``call``.

Such a model has no graph of layers to walk: the layers it uses are the ones assigned to
its attributes (directly or in lists), in assignment order, and its weights are theirs.
Calling it runs ``call`` inside the model's name scope, so the sublayers' variables are
named ``<model>/<layer>/kernel``. `fit` / `evaluate` / `predict` build it on the first
data they see: an ``input_1`` placeholder of the data's shape (batch dimension unknown)
is passed through ``call``, and its outputs are named ``output_1``, ``output_2``, ...;
`compile` before that only records its arguments.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> class Net(tf.keras.Model):
...     def __init__(self):
...         super().__init__(name="net")
...         self.hidden = tf.keras.layers.Dense(4, activation="relu")
...         self.out = tf.keras.layers.Dense(1)
...     def call(self, x):
...         return self.out(self.hidden(x))
>>> with tf.Graph().as_default():
...     net = Net()
...     print(net(tf.zeros([2, 3])).shape, [w.name for w in net.weights][:1])
(2, 1) ['net/dense/kernel:0']
"""

from __future__ import annotations

__all__ = ["SubclassedModelMixin"]


def _plain(value) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


class SubclassedModelMixin:
    """What `Model` does when it is subclassed without ``inputs`` / ``outputs``."""

    _subclassed = False

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        obj.__dict__["_init_arguments"] = (args, kwargs)  # for `get_config`
        return obj

    def _init_subclassed(self) -> None:
        object.__setattr__(self, "_tracked_layers", [])
        self._subclassed = True
        self.inputs, self.outputs = [], []
        self._network_nodes, self._network_layers = [], []
        self._input_layers, self._output_layers = [], []
        self.input_names, self.output_names = [], []
        self._pending_compile = None
        self.built = False

    def __setattr__(self, name, value) -> None:
        if self.__dict__.get("_subclassed") and not name.startswith("_"):
            from flowgraph.keras.layers import Layer

            items = value if isinstance(value, list | tuple) else [value]
            tracked = self.__dict__["_tracked_layers"]
            for item in items:
                if isinstance(item, Layer) and item is not self and \
                        all(item is not t for t in tracked):
                    tracked.append(item)
        object.__setattr__(self, name, value)

    def _subclassed_invoke(self, inputs, kwargs):
        from flowgraph.keras.layers import Layer

        call = type(self).call
        if (call.__module__, call.__qualname__) == ("flowgraph.keras.models", "Model.call"):
            raise NotImplementedError("When subclassing the `Model` class, you should "
                                      "implement a `call()` method.")

        if isinstance(inputs, list | tuple) and len(inputs) == 1 and \
                self.__dict__.get("_single_input", True):
            inputs = inputs[0]
        if "training" not in self._call_params():  # `call` without a training argument
            kwargs = {k: v for k, v in kwargs.items() if k != "training"}
        self.built = True  # the sublayers build themselves when first called
        prefix = getattr(self, "_weight_scope", None) or f"{self.name}/"
        for layer in self._tracked_layers:  # their weights: <model>/<layer>/<weight>
            if not layer.built and getattr(layer, "_weight_scope", None) is None:
                layer._weight_scope = f"{prefix}{layer.name}/"
        return Layer._invoke(self, inputs, kwargs)

    def _subclassed_config(self) -> dict:
        """The constructor's arguments, when they are plain values (what TF's Keras
        returns as a subclassed model's config); else NotImplementedError."""
        import inspect

        args, kwargs = self.__dict__.get("_init_arguments", ((), {}))
        bound = inspect.signature(type(self).__init__).bind_partial(None, *args, **kwargs)
        config = {k: v for k, v in list(bound.arguments.items())[1:]}
        if not all(_plain(v) for v in config.values()):
            raise NotImplementedError(
                f"Model {self.name} is a subclassed model whose constructor takes objects "
                f"that are not plain values: implement get_config (and from_config) in "
                f"{type(self).__name__}.")
        return config

    def _build_subclassed(self, input_shape) -> None:
        """Call the model on ``input_1`` placeholder(s) of `input_shape` so that `fit`,
        `evaluate` and `predict` have input and output tensors to feed and fetch."""
        from flowgraph.framework.graph import name_scope
        from flowgraph.framework.operation import OperatorNotAllowedInGraphError
        from flowgraph.keras.layers import Input, to_list

        if self.inputs:
            return
        shapes = input_shape if isinstance(input_shape, list) else [input_shape]
        with name_scope(None):
            xs = [Input(batch_shape=tuple(s), name=f"input_{i + 1}")
                  for i, s in enumerate(shapes)]
        self.__dict__["_single_input"] = len(xs) == 1
        try:
            outs = to_list(self(xs[0] if len(xs) == 1 else xs))
        except OperatorNotAllowedInGraphError:
            # `if training:` in `call`: TF's Keras converts the branch to a cond on the
            # learning phase (AutoGraph); flowgraph builds the inference branch here, and
            # fit / evaluate / predict call the model with a Python bool per mode anyway
            outs = to_list(self(xs[0] if len(xs) == 1 else xs, training=False))
        self.inputs, self.outputs = xs, outs
        self._input_layers = [x._keras_history[0] for x in xs]
        self.input_names = [f"input_{i + 1}" for i in range(len(xs))]
        self.output_names = [f"output_{i + 1}" for i in range(len(outs))]
        self._graph = xs[0].graph
        self.built = True
        pending, self._pending_compile = self._pending_compile, None
        if pending is not None:
            self.compile(**pending)
