"""`tf.keras.Model` (functional API), `tf.keras.Sequential` and `clone_model`.

A `Model` is built from Keras tensors: ``Model(inputs, outputs)`` walks the
``_keras_history`` of `outputs` back to `inputs` (see `flowgraph.keras.layers`) and keeps
the visited call records (`Node`) in an order where every node comes after the nodes
producing its inputs. Calling the model on new tensors replays those nodes, sharing the
weights; `clone_model` replays them with fresh copies of the layers (same names and
configuration, new weights), which is how `model_to_estimator` rebuilds a model in each
Estimator graph.

A `Sequential` model is the same machinery on a chain: each `add` calls the new layer on
the previous output as soon as the input shape is known (from ``input_shape=`` on the
first layer, an `InputLayer`, or the first call of the model).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)),
...                               keras.layers.Dense(2)])
...     print(model.input_names, model.output_names, model.count_params())
['dense_input'] ['dense_1'] 26
"""

from __future__ import annotations

import json

from flowgraph.framework.graph import name_scope
from flowgraph.keras import saving
from flowgraph.keras.layers import Input, InputLayer, Layer, Node, is_keras_tensor, to_list
from flowgraph.keras.model_members import ModelMembersMixin
from flowgraph.keras.models_sequence import SequenceInputsMixin
from flowgraph.keras.models_subclassed import SubclassedModelMixin
from flowgraph.keras.training import TrainingMixin
from flowgraph.ops import math_ops

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_config",
           "model_from_json", "model_from_yaml", "save_model"]

load_model, save_model = saving.load_model, saving.save_model  # tf.keras.models names
model_from_config, model_from_json = saving.model_from_config, saving.model_from_json


def model_from_yaml(yaml_string, custom_objects=None):
    """Removed, as in TF 2.15 (YAML loading could run arbitrary code): use
    `Model.to_json` and `model_from_json`."""
    raise RuntimeError("Method `model_from_yaml()` has been removed due to security risk "
                       "of arbitrary code execution. Please use `Model.to_json()` and "
                       "`model_from_json()` instead.")


def _map_graph(inputs: list, outputs: list) -> list[Node]:
    """The nodes computing `outputs` from `inputs`, producers before consumers."""
    input_ids = {id(t) for t in inputs}
    order: list[Node] = []
    done: set[int] = set()
    reached: list[str] = []

    # a depth-first walk (each node after its inputs) on a stack of its own: models of
    # thousands of layers are deeper than Python's recursion limit
    for output in outputs:
        stack = [(output, False)]
        while stack:
            tensor, inputs_done = stack.pop()
            if id(tensor) in input_ids:
                continue
            layer, index, _ = tensor._keras_history
            node = layer._inbound_nodes[index]
            if id(node) in done:
                continue
            if inputs_done:
                done.add(id(node))
                order.append(node)
                reached.append(layer.name)
                continue
            if isinstance(layer, InputLayer):
                raise ValueError(
                    f"Graph disconnected: cannot obtain value for tensor {tensor} at layer "
                    f'"{layer.name}". The following previous layers were accessed without '
                    f"issue: {reached}")
            stack.append((tensor, True))
            stack.extend((t, False) for t in reversed(node.input_tensors))
    return order


def _layers_by_depth(inputs: list, outputs: list, nodes: list[Node]) -> list:
    """The layers in Keras's order: deepest first (an output layer has depth 0, a layer
    feeding a layer of depth d has at least d + 1), ties in the order a depth-first walk
    from the outputs first meets them."""
    input_ids = {id(t) for t in inputs}
    first_seen: dict[int, int] = {}
    node_depth: dict[int, int] = {}
    by_id: dict[int, object] = {}

    # a depth-first walk from the outputs, on a stack of its own: models of thousands of
    # layers (EfficientNetV2L, ResNetRS420) are deeper than Python's recursion limit
    stack = [(t, 0) for t in reversed(outputs)]
    while stack:
        tensor, depth = stack.pop()
        layer, index, _ = tensor._keras_history
        first_seen.setdefault(id(layer), len(first_seen))
        by_id[id(layer)] = layer
        node = layer._inbound_nodes[index]
        if node_depth.get(id(node), -1) >= depth:
            continue
        node_depth[id(node)] = depth
        if id(tensor) in input_ids:
            continue
        stack.extend((t, depth + 1) for t in reversed(node.input_tensors))
    layer_depth: dict[int, int] = {}
    for node in [*nodes, *(x._keras_history[0]._inbound_nodes[0] for x in inputs)]:
        d = node_depth.get(id(node), 0)
        layer_depth[id(node.layer)] = max(layer_depth.get(id(node.layer), 0), d)
    order = sorted(layer_depth, key=lambda k: (-layer_depth[k], first_seen.get(k, 0)))
    return [by_id[k] for k in order]


def _shape_str(tensors) -> str:
    shapes = [tuple(t.shape.as_list()) if t.shape.ndims is not None else "?"
              for t in tensors]
    return str(shapes[0]) if len(shapes) == 1 else str(shapes)


class Model(SequenceInputsMixin, SubclassedModelMixin, TrainingMixin, ModelMembersMixin, Layer):
    """A graph of layers from input Keras tensors to output Keras tensors.

    Parameters
    ----------
    inputs : Keras tensor or list of them
        Outputs of `tf.keras.Input`.
    outputs : Keras tensor or list of them
        Computed from `inputs` by calling layers.
    name : str, optional
        Default ``model``, ``model_1``, ...

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     a = keras.Input(shape=(3,), name="a")
    ...     b = keras.Input(shape=(2,), name="b")
    ...     h = keras.layers.Concatenate()([a, b])
    ...     out = keras.layers.Dense(1, name="score")(h)
    ...     model = keras.Model([a, b], out)
    ...     print(model.input_names, model.output_names, out.shape)
    ['a', 'b'] ['score'] (?, 1)
    """

    def __init__(self, inputs=None, outputs=None, name: str | None = None,
                 trainable: bool = True) -> None:
        Layer.__init__(self, name=name, trainable=trainable)
        self._init_training()
        if inputs is None and outputs is None:
            self._init_subclassed()  # flowgraph.keras.models_subclassed
            return
        if inputs is None or outputs is None:
            raise ValueError("Model needs both `inputs` and `outputs` (the functional API), "
                             "or neither (a subclass that defines `call`).")
        self._init_network(inputs, outputs)

    def _init_network(self, inputs, outputs) -> None:
        self.inputs, self.outputs = to_list(inputs), to_list(outputs)
        for x in self.inputs:
            if not is_keras_tensor(x) or not isinstance(x._keras_history[0], InputLayer):
                raise ValueError(f"Input tensors to a Model must come from `tf.keras.Input`. "
                                 f"Received: {x!r} (missing previous layer metadata).")
        for x in self.outputs:
            if not is_keras_tensor(x):
                raise ValueError(f"Output tensors to a Model must be the output of a Keras "
                                 f"`Layer` (thus holding past layer metadata). Found: {x!r}")
        self._network_nodes = _map_graph(self.inputs, self.outputs)
        self._input_layers = [x._keras_history[0] for x in self.inputs]
        self._output_layers = [x._keras_history[0] for x in self.outputs]
        layers = _layers_by_depth(self.inputs, self.outputs, self._network_nodes)
        names = [layer.name for layer in layers]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"The name {dup[0]!r} is used {names.count(dup[0])} times in "
                             f"the model. All layer names should be unique.")
        self._network_layers = layers
        self.input_names = [layer.name for layer in self._input_layers]
        self.output_names = [layer.name for layer in self._output_layers]
        self.built = True
        self._graph = self.inputs[0].graph

    @classmethod
    def _default_name(cls) -> str:
        if cls.__module__ == __name__:
            return "model"
        return super()._default_name()  # a subclass: its class name in snake_case

    # A model's own input and output tensors, whatever other tensors it was called on.
    def _own(self, tensors: list, what: str):
        if not tensors:
            raise AttributeError(f"Model {self.name} has no {what} yet: it is not built. "
                                 f"Give its first layer an input_shape, or call build().")
        return tensors[0] if len(tensors) == 1 else list(tensors)

    @property
    def input(self):
        return self._own(self.inputs, "input")

    @property
    def output(self):
        return self._own(self.outputs, "output")

    @property
    def input_shape(self):
        shapes = [tuple(t.shape.as_list()) for t in to_list(self.input)]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [tuple(t.shape.as_list()) for t in to_list(self.output)]
        return shapes[0] if len(shapes) == 1 else shapes

    # -- configuration and files (flowgraph.keras.saving) -------------------------------------
    def get_config(self) -> dict:
        """The model's configuration: its name and layers (JSON-ready)."""
        if self._subclassed:
            return self._subclassed_config()
        if not self.inputs and not getattr(self, "_layers", None):
            return {"name": self.name}
        return saving.model_config(self)["config"]

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """A new model (fresh weights) from `get_config`'s output."""
        return saving.model_from_layers_config(cls, config, custom_objects)

    def to_yaml(self, **kwargs):
        """Removed, as in TF 2.15 (YAML loading could run arbitrary code)."""
        raise RuntimeError("Method `model.to_yaml()` has been removed due to security risk "
                           "of arbitrary code execution. Please use `model.to_json()` "
                           "instead.")

    def to_json(self, **kwargs) -> str:
        """The configuration as a JSON string (`tf.keras.models.model_from_json`)."""
        document = {**saving.model_config(self), "keras_version": "2.15.0",
                    "backend": "tensorflow"}
        return json.dumps(document, **kwargs)

    def save(self, filepath, overwrite: bool = True, include_optimizer: bool = True,
             save_format=None, signatures=None, options=None, save_traces=True) -> None:
        """Save configuration, weights and compile arguments (`tf.keras.models.load_model`
        reads them back)."""
        saving.save_model(self, filepath, overwrite, include_optimizer, save_format)

    # -- layers and weights -------------------------------------------------------------------
    @property
    def layers(self) -> list:
        if self._subclassed:
            return list(self._tracked_layers)
        return list(self._network_layers)

    def _invoke(self, inputs, kwargs):
        if self._subclassed:
            return self._subclassed_invoke(inputs, kwargs)
        return Layer._invoke(self, inputs, kwargs)

    def build(self, input_shape) -> None:
        """Subclassed models: call the model on placeholders of `input_shape`."""
        if self._subclassed:
            self._build_subclassed(input_shape)
        else:
            Layer.build(self, input_shape)

    def get_layer(self, name: str | None = None, index: int | None = None):
        """A layer by name or by index in `layers`."""
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model "
                                 f"only has {len(self.layers)} layers.")
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[la.name for la in self.layers]}.")

    def _unique(self, attr: str) -> list:
        seen, out = set(), []
        own = [self] if self._subclassed else []  # weights added with self.add_weight
        for layer in [*self.layers, *own]:
            if layer is self:
                own_values = {"weights": self._trainable_weights + self._non_trainable_weights,
                              "trainable_weights": self._trainable_weights,
                              "updates": self._updates}.get(attr, [])
                out.extend(w for w in own_values if id(w) not in seen)
                continue
            for w in getattr(layer, attr):
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    @property
    def trainable_weights(self) -> list:
        return self._unique("trainable_weights") if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    @property
    def weights(self) -> list:
        return self._unique("weights")

    trainable_variables = trainable_weights
    variables = weights

    @property
    def updates(self) -> list:
        return self._unique("updates")

    @property
    def losses(self) -> list:
        return self._unique("losses") + list(self._losses)

    # -- calling ------------------------------------------------------------------------------
    def call(self, inputs, training=None):
        xs = to_list(inputs)
        if len(xs) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} input(s) "
                             f"({self.input_names}), but it received {len(xs)} input "
                             f"tensors.")
        mapping = {}
        for orig, x in zip(self.inputs, xs, strict=True):
            if x.dtype.base_dtype != orig.dtype.base_dtype:
                x = math_ops.cast(x, orig.dtype.base_dtype)
            if not x.shape.is_compatible_with(orig.shape):
                raise ValueError(f"Input {orig._keras_history[0].name!r} of model {self.name} "
                                 f"expects shape {orig.shape}; got a tensor of shape "
                                 f"{x.shape} ({x.name}).")
            mapping[id(orig)] = x
        for node in self._network_nodes:
            ins = [mapping[id(t)] for t in node.input_tensors]
            args = dict(node.arguments)
            if "training" in node.layer._call_params() and args.get("training") is None \
                    and training is not None:
                args["training"] = training
            outs = node.layer._invoke(ins if node.list_input else ins[0], args)
            for t, o in zip(node.output_tensors, to_list(outs), strict=True):
                mapping[id(t)] = o
        outs = [mapping[id(t)] for t in self.outputs]
        return outs[0] if len(outs) == 1 else outs

    def _convert(self, x):
        from flowgraph.framework.constant_op import convert_to_tensor

        return convert_to_tensor(x)

    # -- summary ---------------------------------------------------------------------------------
    def summary(self, line_length: int | None = None, positions=None, print_fn=None,
                expand_nested: bool = False, show_trainable: bool = False) -> None:
        """Print a table of the layers: name (type), output shape, parameter count (and,
        for non-sequential models, the inbound layers), then the parameter totals;
        `expand_nested` lists a nested model's layers too, `show_trainable` adds a
        ``Trainable`` column."""
        if self._subclassed and not self.built:
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or by calling the model on a batch of data.")
        from flowgraph.keras.summary_table import print_summary

        print_summary(self, _shape_str, InputLayer, isinstance(self, Sequential), line_length,
                      positions, print_fn, expand_nested, show_trainable)


class Sequential(Model):
    """A linear stack of layers.

    Parameters
    ----------
    layers : list of Layer, optional
        Added in order with `add`.
    name : str, optional
        Default ``sequential``, ``sequential_1``, ...

    The model is built (its weights created) as soon as its input shape is known: from
    ``input_shape=`` (or ``batch_input_shape=``, ``input_dim=``) on the first layer, an
    `InputLayer` first, or otherwise the first call of the model on a tensor (or
    `build(input_shape)`, or `fit`). The automatic input is named ``<first layer>_input``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     model = keras.Sequential()
    ...     model.add(keras.layers.Dense(8, activation="relu", input_shape=(5,)))
    ...     model.add(keras.layers.Dropout(0.5))
    ...     model.add(keras.layers.Dense(3, activation="softmax"))
    ...     print([layer.name for layer in model.layers], model.outputs[0].shape)
    ['dense', 'dropout', 'dense_1'] (?, 3)
    """

    def __init__(self, layers=None, name: str | None = None) -> None:
        Layer.__init__(self, name=name)
        self._init_training()
        self._layers: list = []
        self.inputs, self.outputs = [], []
        self._network_nodes, self._network_layers = [], []
        self.input_names, self.output_names = [], []
        for layer in layers or []:
            self.add(layer)

    @classmethod
    def _default_name(cls) -> str:
        return "sequential"

    @property
    def layers(self) -> list:
        return list(self._layers)

    def add(self, layer) -> None:
        """Append `layer`; if the model has an input already, call the layer on the
        current output."""
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Found: "
                            f"{layer!r}")
        if any(layer.name == other.name for other in self._layers):
            raise ValueError(f"All layers added to a Sequential model should have unique "
                             f"names. Name {layer.name!r} is already the name of a layer in "
                             f"this model. Update the `name` argument to pass a unique name.")
        if isinstance(layer, InputLayer):
            if self._layers or self.inputs:
                raise ValueError("An InputLayer can only be the first layer of a Sequential "
                                 "model.")
            self.inputs = self.outputs = list(layer._inbound_nodes[0].output_tensors)
            self._rebuild()
            return
        if not self.inputs and not self._layers and hasattr(layer, "_batch_input_shape"):
            x = Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype,
                      name=f"{layer.name}_input")
            self.inputs = self.outputs = [x]
        elif not self.inputs and not self._layers and isinstance(layer, Model) and \
                len(layer.inputs) == 1:  # as TF: a built model first gives its input shape
            first = layer.inputs[0]
            x = Input(batch_shape=tuple(first.shape.as_list()), dtype=first.dtype,
                      name=f"{layer.name}_input")
            self.inputs = self.outputs = [x]
        if self.outputs:
            y = layer(self.outputs[0])
            if isinstance(y, list):
                raise TypeError(f"All layers in a Sequential model should have a single "
                                f"output tensor; layer {layer.name} returned {len(y)}.")
            self.outputs = [y]
        self._layers.append(layer)
        if self.inputs:
            self._rebuild()

    def pop(self) -> None:
        """Remove the last layer."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        self._layers.pop()
        if self.inputs:
            out = self.inputs[0]
            for node in self._network_nodes[:len(self._layers)]:
                out = node.output_tensors[0]
            self.outputs = [out]
            self._rebuild()

    def _rebuild(self) -> None:
        self._init_network(self.inputs, self.outputs)

    def build(self, input_shape=None) -> None:
        """Create the input (``(batch, ...)`` shape `input_shape`) and call the layers."""
        if self.inputs:
            return
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument to build an "
                             "unbuilt Sequential model.")
        if not self._layers:
            raise TypeError("Sequential.build: the model has no layers; add some first.")
        first = self._layers[0]
        x = Input(batch_shape=tuple(input_shape), dtype=first.dtype, name=f"{first.name}_input")
        self.inputs = [x]
        out = x
        for layer in self._layers:
            out = layer(out)
        self.outputs = [out]
        self._rebuild()

    def _invoke(self, inputs, kwargs):
        if not self.inputs:
            x = inputs[0] if isinstance(inputs, list | tuple) else inputs
            from flowgraph.framework.constant_op import convert_to_tensor

            x = convert_to_tensor(x)
            if x.shape.ndims is None:
                raise ValueError(f"Cannot build Sequential model {self.name} on a tensor of "
                                 f"unknown rank ({x.name}); give the first layer an "
                                 f"input_shape.")
            self._scope_deferred_weights()
            with name_scope(None):
                self.build((None, *x.shape.as_list()[1:]))
        if not self.built:
            raise ValueError(f"Sequential model {self.name} has no layers.")
        return super()._invoke(inputs, kwargs)

    def _scope_deferred_weights(self) -> None:
        """As TF's v1 Sequential built by its first call: the layers' weights go under the
        name scope of that call (``seq/dense/kernel``, ``outer/seq/dense/kernel``,
        ``model/seq/dense/kernel`` inside a subclassed model), not at the top."""
        from flowgraph.framework.graph import get_default_graph

        scope = getattr(self, "_weight_scope", None)
        if scope is None:
            current = get_default_graph().get_name_scope()
            scope = f"{current}/{self.name}/" if current else f"{self.name}/"
        for layer in self._layers:
            if not layer.built and not isinstance(layer, Model) and "/" not in layer.name \
                    and getattr(layer, "_weight_scope", None) is None:
                layer._weight_scope = f"{scope}{layer.name}/"

    def summary(self, line_length=None, positions=None, print_fn=None,
                expand_nested: bool = False, show_trainable: bool = False) -> None:
        if not self.inputs:
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or calling `fit()` with some data, or specify "
                             "an `input_shape` argument in the first layer(s) for automatic "
                             "build.")
        super().summary(line_length, positions, print_fn, expand_nested, show_trainable)


def clone_model(model: Model, input_tensors=None) -> Model:
    """A copy of `model` with new layers of the same names and configuration (and newly
    initialized weights), built on `input_tensors` (Keras or plain tensors; default: new
    `Input` placeholders). Nested models are cloned too.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    >>> with tf.Graph().as_default():
    ...     copy = keras.models.clone_model(model, tf.zeros([4, 3]))
    ...     print(copy.outputs[0].shape, [w.name for w in copy.weights])
    (4, 2) ['dense/kernel:0', 'dense/bias:0']
    """
    if not isinstance(model, Model):
        raise ValueError(f"Expected `model` argument to be a `Model` instance, got {model!r}")
    if not model.inputs:
        raise ValueError(f"Model {model.name} is not built: give its first layer an "
                         f"`input_shape`, or call it on data, before cloning it.")
    clones: dict[int, Layer] = {}

    def clone_layer(layer):
        if id(layer) not in clones:
            clones[id(layer)] = clone_model(layer) if isinstance(layer, Model) else \
                type(layer).from_config(layer.get_config())
        return clones[id(layer)]

    given = None if input_tensors is None else to_list(input_tensors)
    if given is not None and len(given) != len(model.inputs):
        raise ValueError(f"To clone model {model.name} you must pass {len(model.inputs)} "
                         f"input tensor(s) ({model.input_names}); got {len(given)}.")
    new_inputs = []
    for i, layer in enumerate(model._input_layers):
        if given is None:
            new_inputs.append(Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype,
                                    name=layer.name))
        elif is_keras_tensor(given[i]):
            new_inputs.append(given[i])
        else:
            new_inputs.append(Input(tensor=given[i], name=layer.name))
    mapping = {id(t): x for t, x in zip(model.inputs, new_inputs, strict=True)}
    for node in model._network_nodes:
        layer = clone_layer(node.layer)
        ins = [mapping[id(t)] for t in node.input_tensors]
        outs = layer(ins if node.list_input else ins[0], **node.arguments)
        for t, o in zip(node.output_tensors, to_list(outs), strict=True):
            mapping[id(t)] = o
    outputs = [mapping[id(t)] for t in model.outputs]
    if isinstance(model, Sequential):
        new = Sequential(name=model.name)
        new._layers = [clone_layer(layer) for layer in model.layers]
        new.inputs, new.outputs = new_inputs, outputs
        new._rebuild()
    else:
        new = Model(new_inputs, outputs if len(outputs) > 1 else outputs[0], name=model.name)
    new.trainable = model.trainable
    return new


saving.MODEL_CLASSES.update(Model=Model, Sequential=Sequential)
