"""`tf.keras.layers`: Keras layers in graph mode, and the bookkeeping of the functional API.

A Keras layer is named when it is constructed (``dense``, ``dense_1``, ... unique per
graph; `Input` layers ``input_1``, ``input_2``, ...). Its weights are created on the
first call, by ``build(input_shape)``, as ``<layer name>/<weight name>`` (``dense/kernel``,
``dense/bias``) whatever name scope is open; its ops go into a fresh name scope per call.

Calling a layer on *Keras tensors* (outputs of `Input` or of other layers called on Keras
tensors) records a `Node`: the layer, the input tensors, the output tensors and the
keyword arguments of the call. Each output tensor gets ``_keras_history = (layer,
node_index, tensor_index)``; `Model` walks these back from its outputs to its inputs to
learn the layer graph, and replays the nodes to apply the model to new tensors.

Layers whose behaviour differs in training (`Dropout`, `BatchNormalization`) take
``training=``; when it is not given they read `backend.learning_phase()`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.layers.Input(shape=(4,))
...     y = keras.layers.Dense(3, activation="relu")(x)
...     print(x.name, y.shape, [w.name for w in y._keras_history[0].weights])
input_1:0 (?, 3) ['dense/kernel:0', 'dense/bias:0']
"""

from __future__ import annotations

import contextlib
import inspect
import numbers
import re

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras import backend
from flowgraph.keras import constraints as _constraints
from flowgraph.keras import regularizers as _regularizers
from flowgraph.keras.layer_members import LayerMembersMixin
from flowgraph.layers.core import normalize_padding, normalize_tuple, smart_cond
from flowgraph.layers.input_spec import assert_input_compatibility
from flowgraph.ops import (
    array_join_ops,
    array_ops,
    array_shape_ops,
    init_ops,
    math_ops,
    math_reduce,
    nn_norm_ops,
    nn_ops,
    random_ops,
)
from flowgraph.ops import variables as _variables

__all__ = [
    "Activation",
    "Add",
    "AveragePooling2D",
    "BatchNormalization",
    "Concatenate",
    "Conv2D",
    "Dense",
    "Dropout",
    "Flatten",
    "Input",
    "InputLayer",
    "Layer",
    "MaxPooling2D",
    "Reshape",
]


# As TF's `tf.keras.layers.enable_v2_dtype_behavior` sets it: with v2 behaviour a layer's
# dtype defaults to floatx and floating inputs are cast to it; with v1 (TF1 programs'
# default) a layer takes the dtype of its first input.
V2_DTYPE_BEHAVIOR = [False]


# -- identifiers ------------------------------------------------------------------------------
def _linear(x):
    return x


_ACTIVATIONS = {
    "linear": _linear, "relu": nn_ops.relu, "softmax": nn_ops.softmax,
    "sigmoid": math_ops.sigmoid, "tanh": math_ops.tanh, "elu": nn_ops.elu,
    "selu": nn_ops.selu, "softplus": nn_ops.softplus, "softsign": nn_ops.softsign,
    "exponential": math_ops.exp,
}


def get_activation(identifier):
    """A callable for an activation name (``'relu'``, ``'softmax'``, ...), a callable, or
    None (linear)."""
    if identifier is None:
        return _linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _ACTIVATIONS:
        return _ACTIVATIONS[identifier]
    from flowgraph.keras import activations  # the rest of Keras' names ("gelu", "swish")

    return activations.get(identifier)


_INITIALIZERS = {
    "glorot_uniform": init_ops.GlorotUniform, "glorot_normal": init_ops.GlorotNormal,
    "zeros": init_ops.Zeros, "zero": init_ops.Zeros, "ones": init_ops.Ones,
    "one": init_ops.Ones, "he_normal": init_ops.he_normal, "he_uniform": init_ops.he_uniform,
    "lecun_normal": init_ops.lecun_normal, "lecun_uniform": init_ops.lecun_uniform,
    "random_normal": lambda: init_ops.RandomNormal(0.0, 0.05),
    "random_uniform": lambda: init_ops.RandomUniform(-0.05, 0.05),
    "uniform": lambda: init_ops.RandomUniform(-0.05, 0.05),
    "normal": lambda: init_ops.RandomNormal(0.0, 0.05),
    "truncated_normal": lambda: init_ops.TruncatedNormal(0.0, 0.05),
    "orthogonal": init_ops.Orthogonal, "identity": init_ops.Identity,
    "constant": init_ops.Constant, "variance_scaling": init_ops.VarianceScaling,
}
# TF 2.15's Keras also takes its class names as strings ('HeNormal', 'Identity', ...)
_INITIALIZER_CLASS_NAMES = {
    "GlorotUniform": "glorot_uniform", "GlorotNormal": "glorot_normal", "Zeros": "zeros",
    "Ones": "ones", "HeNormal": "he_normal", "HeUniform": "he_uniform",
    "LecunNormal": "lecun_normal", "LecunUniform": "lecun_uniform",
    "RandomNormal": "random_normal", "RandomUniform": "random_uniform",
    "TruncatedNormal": "truncated_normal", "Orthogonal": "orthogonal",
    "Identity": "identity", "Constant": "constant", "VarianceScaling": "variance_scaling",
}


def initializer_name(identifier) -> str | None:
    """The snake-case Keras name of a string initializer identifier (``'HeNormal'`` ->
    ``'he_normal'``), None for anything else or an unknown name."""
    if not isinstance(identifier, str):
        return None
    name = _INITIALIZER_CLASS_NAMES.get(identifier, identifier)
    return name if name in _INITIALIZERS else None


def get_initializer(identifier):
    """An initializer for a Keras name (``'glorot_uniform'``, ``'HeNormal'``, ...) or an
    initializer object/callable."""
    if identifier is None or callable(identifier):
        return identifier
    name = initializer_name(identifier)
    if name is not None:
        return _INITIALIZERS[name]()
    raise ValueError(f"Unknown initializer: {identifier!r}. Known: {sorted(_INITIALIZERS)}, "
                     f"or pass an initializer.")


def _snake_case(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def to_list(x) -> list:
    return list(x) if isinstance(x, list | tuple) else [x]


def is_keras_tensor(x) -> bool:
    return isinstance(x, Tensor) and hasattr(x, "_keras_history")


# -- the functional-API record ----------------------------------------------------------------
class Node:
    """One call of `layer`: ``output_tensors = layer(input_tensors, **arguments)``."""

    def __init__(self, layer, input_tensors, output_tensors, arguments, list_input) -> None:
        self.layer = layer
        self.input_tensors = list(input_tensors)
        self.output_tensors = list(output_tensors)
        self.arguments = dict(arguments)
        self.list_input = list_input
        index = len(layer._inbound_nodes)
        layer._inbound_nodes.append(self)
        for i, t in enumerate(self.output_tensors):
            t._keras_history = (layer, index, i)
        for inbound in {id(x): x for x in self.inbound_layers}.values():
            inbound.__dict__.setdefault("_outbound_nodes", []).append(self)

    @property
    def inbound_layers(self) -> list:
        return [t._keras_history[0] for t in self.input_tensors]


# -- Layer ----------------------------------------------------------------------------------

def trainable_passed_to(*attrs: str) -> property:
    """A layer's ``trainable`` property that, when set, also sets the flag on the layers
    held in `attrs` (not at construction), as Keras's wrappers do.

    >>> class Pair:
    ...     trainable = trainable_passed_to("inner")
    >>> class Inner:
    ...     trainable = True
    >>> p = Pair(); p.inner = Inner(); p.trainable = False
    >>> p.trainable, p.inner.trainable
    (False, False)
    """
    def get(self) -> bool:
        return self.__dict__.get("_trainable", True)

    def set_(self, value) -> None:
        self._trainable = bool(value)
        for attr in attrs:
            inner = self.__dict__.get(attr)
            if inner is not None:
                inner.trainable = value

    return property(get, set_)

class Layer(LayerMembersMixin):
    """Base of the Keras layers: naming, weights, call recording (the other members:
    `flowgraph.keras.layer_members`).

    Subclasses implement ``build(input_shape)`` (create weights with `add_weight`) and
    ``call(inputs, ...)``; a ``training`` parameter of ``call`` receives the learning
    phase when the caller does not pass it.

    Parameters
    ----------
    trainable : bool
    name : str, optional
        Default: the class name in snake case, made unique in the graph.
    dtype : DType or str, optional
        Of the weights and outputs (default float32).
    input_shape, batch_input_shape, batch_size :
        For the first layer of a `Sequential` model: the shape of one example (or of the
        whole batch) it expects.
    """

    def __init_subclass__(cls, **kwargs) -> None:
        # Keras's own layers end `build` with ``self.built = True``, so one built by a
        # direct `build` call (a custom wrapper's `build` building its inner layer) is
        # not built again by its first call; a user's subclass sets it itself, as there.
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is None or not cls.__module__.startswith("flowgraph."):
            return

        def built_build(self, *args, _build=build, **kwargs):
            _build(self, *args, **kwargs)
            self.built = True

        built_build.__doc__, built_build.__name__ = build.__doc__, "build"
        built_build.__qualname__ = build.__qualname__
        cls.build = built_build

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None,
                 input_shape=None, batch_input_shape=None, batch_size=None,
                 activity_regularizer=None, **kwargs) -> None:
        if "input_dim" in kwargs:
            dim = kwargs.pop("input_dim")
            input_shape = input_shape or (dim,)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                            f"{sorted(kwargs)}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Layer name must be a string; got {name!r}")
        self._name = name or backend.unique_object_name(self._default_name())
        self.trainable = bool(trainable)
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        self.activity_regularizer = activity_regularizer
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (batch_size, *tuple(input_shape))
        self.built = False
        self._v2_dtype = V2_DTYPE_BEHAVIOR[0]
        self._graph = None
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self._losses: list = []
        self._inbound_nodes: list[Node] = []

    @classmethod
    def _default_name(cls) -> str:
        return _snake_case(cls.__name__)

    # -- configuration (used by clone_model) ---------------------------------------------
    def get_config(self) -> dict:
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": None if self._dtype is None else self._dtype.name}
        if hasattr(self, "_batch_input_shape"):
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    # -- weights ----------------------------------------------------------------------------
    dtype = property(lambda self: self._dtype)

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    variables = weights

    @property
    def updates(self) -> list:
        return list(self._updates)

    @property
    def losses(self) -> list:
        # as Keras: the losses added by calls (activity penalties, add_loss) before the
        # weights' penalties
        return sorted(self._losses, key=lambda loss: hasattr(loss, "_keras_weight_penalty"))

    def add_weight(self, name: str, shape, dtype=None, initializer=None, regularizer=None,
                   trainable: bool = True, constraint=None):
        """Create weight ``<layer name>/<name>`` (call it from `build`)."""
        dtype = _dtypes.as_dtype(dtype or self._dtype or backend.floatx()).base_dtype
        init = get_initializer(initializer) or init_ops.GlorotUniform()
        constraint = _constraints.get(constraint)
        shape = [int(d) for d in shape]
        # As TF 1.x Keras: in the name scope the layer's call opened (so nested in the
        # caller's scopes, and `dense_1/` for a second layer named `dense`), or the
        # current one when `build` is called directly. A wrapper (TimeDistributed,
        # Bidirectional's `bi/forward_lstm`) creates them under the name it gives.
        scope = getattr(self, "_weight_scope", None) or \
            (self.name + "/" if "/" in self.name else None)
        with name_scope(scope) if scope else contextlib.nullcontext():
            # Keras weights are resource variables, as TF 2.15's compat.v1 makes them.
            var = _variables.Variable(lambda: init(shape, dtype=dtype), name=name,
                                      dtype=dtype, trainable=trainable, constraint=constraint,
                                      use_resource=True)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(var)
        regularizer = _regularizers.get(regularizer)  # 'l2' as well as an object
        if regularizer is not None:
            with name_scope(f"{name}/Regularizer"):
                penalty = regularizer(var)
            if isinstance(penalty, Tensor):
                penalty._keras_weight_penalty = True
            self._losses.append(penalty)
        return var

    def add_update(self, update, inputs=None) -> None:
        update = update.op if isinstance(update, Tensor) else update
        self._updates.append(update)
        # the inputs of the call that made it (TF's conditional updates)
        calling = inputs if inputs is not None else self.__dict__.get("_calling_inputs")
        if calling is not None:
            self.__dict__.setdefault("_update_inputs", {})[id(update)] = \
                {id(t) for t in to_list(calling)}

    def get_updates_for(self, inputs) -> list:
        """The updates made by calls on `inputs` (None: those made outside a call)."""
        made = self.__dict__.get("_update_inputs", {})
        if inputs is None:
            return [u for u in self._updates if id(u) not in made]
        wanted = {id(t) for t in to_list(inputs)}
        return [u for u in self._updates if made.get(id(u), set()) & wanted]

    def add_loss(self, loss) -> None:
        self._losses.append(loss)

    def count_params(self) -> int:
        return int(sum(np.prod(w.shape.as_list(), dtype=np.int64) for w in self.weights))

    def get_weights(self) -> list[np.ndarray]:
        """The current values of `weights` (NumPy arrays)."""
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        """Assign `weights` (NumPy arrays, in the order of `get_weights`)."""
        params = self.weights
        weights = list(weights)
        if len(params) != len(weights):
            raise ValueError(
                f'You called `set_weights(weights)` on layer "{self.name}" with a weight '
                f"list of length {len(weights)}, but the layer was expecting "
                f"{len(params)} weights.")
        pairs = []
        for p, w in zip(params, weights, strict=True):
            w = np.asarray(w)
            if not p.shape.is_compatible_with(w.shape):
                raise ValueError(f"Layer weight shape {tuple(p.shape.as_list())} not "
                                 f"compatible with provided weight shape {w.shape} (weight "
                                 f"{p.op.name} of layer {self.name}).")
            pairs.append((p, w))
        backend.batch_set_value(pairs)

    # -- calling ------------------------------------------------------------------------------
    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    @classmethod
    def _call_params(cls) -> set:
        params = cls.__dict__.get("_call_params_cache")
        if params is None:
            params = set(inspect.signature(cls.call).parameters)
            cls._call_params_cache = params
        return params

    def __call__(self, inputs, **kwargs):
        """Apply the layer; on Keras tensors, also record the call (a `Node`)."""
        outputs = self._invoke(inputs, kwargs)
        flat_in = to_list(inputs)
        if flat_in and all(is_keras_tensor(t) for t in flat_in):
            outs = to_list(outputs)
            outs = [array_ops.identity(o) if any(o is t for t in flat_in) else o
                    for o in outs]
            Node(self, flat_in, outs, kwargs, isinstance(inputs, list | tuple))
            outputs = outs if isinstance(outputs, list | tuple) else outs[0]
        return outputs

    def _invoke(self, inputs, kwargs):
        """Build if needed and call, without recording a Node."""
        graph = get_default_graph()
        if self._graph is not None and self._graph is not graph:
            raise ValueError(
                f"Layer '{self.name}' was built in another graph; a layer's weights live in "
                f"one graph. Use `tf.keras.models.clone_model` to make a copy in this one.")
        if isinstance(inputs, list | tuple):
            tensors = [self._convert(x) for x in inputs]
            shapes = [t.shape for t in tensors]
        else:
            tensors = self._convert(inputs)
            shapes = tensors.shape
        kwargs = dict(kwargs)
        flat = tensors if isinstance(tensors, list) else [tensors]
        if self.__dict__.get("input_spec") is not None:
            self._check_input_spec(flat)
        masks = [getattr(t, "_keras_mask", None) for t in to_list(inputs)]
        mask = masks if isinstance(inputs, list | tuple) else masks[0]
        has_mask = any(m is not None for m in masks)
        if has_mask and "mask" in self._call_params() and kwargs.get("mask") is None:
            kwargs["mask"] = mask
        if "training" in self._call_params() and kwargs.get("training") is None:
            phase = backend.learning_phase()
            kwargs["training"] = bool(phase) if isinstance(phase, int) else phase
        self._calling_inputs = inputs
        with name_scope(self.name):
            if not self.built:
                self._graph = graph
                if self._dtype is None:
                    base = flat[0].dtype.base_dtype
                    v2 = self.__dict__.get("_v2_dtype", False)
                    self._dtype = base if base.is_floating and not v2 \
                        else _dtypes.as_dtype(backend.floatx())
                    if v2:  # v2: floating inputs cast to the layer's dtype
                        tensors = [self._convert(t) for t in tensors] \
                            if isinstance(tensors, list) else self._convert(tensors)
                self.build(shapes)
                self.built = True
            try:
                outputs = self.call(tensors, **kwargs)
            finally:
                self._calling_inputs = None
            if has_mask or type(self).compute_mask is not Layer.compute_mask:
                outputs = self._set_output_masks(flat, outputs,
                                                 self.compute_mask(tensors, mask))
            activity = _regularizers.get(self.activity_regularizer)
            if activity is not None:
                for out in to_list(outputs):
                    # TF 1.x Keras: the penalty of the batch divided by its size
                    with name_scope("ActivityRegularizer"):
                        penalty = activity(out)
                        size = math_ops.cast(array_shape_ops.shape(out)[0],
                                             out.dtype.base_dtype)
                        penalty = math_ops.truediv(penalty, size)
                    penalty._keras_activity = True  # belongs to this call's outputs
                    self._losses.append(penalty)
                    self.__dict__.setdefault("_loss_inputs", {})[id(self._losses[-1])] = \
                        {id(t) for t in to_list(inputs)}
        return outputs

    def _check_input_spec(self, tensors) -> None:
        """Check `tensors` against ``self.input_spec`` (an `InputSpec` or one per input),
        a custom layer's declaration of what it accepts, with TF's messages."""
        specs = to_list(self.input_spec)
        if len(specs) != len(tensors):
            raise ValueError(f'Layer "{self.name}" expects {len(specs)} input(s), but it '
                             f"received {len(tensors)} input tensors. Inputs received: "
                             f"{tensors}")
        for i, (spec, x) in enumerate(zip(specs, tensors, strict=True)):
            assert_input_compatibility(spec, x, self.name, i)

    # -- masks ----------------------------------------------------------------------------
    supports_masking = False
    input_spec = None  # set by a layer (an InputSpec, or a list): checked on every call

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs: by default the input's, for a layer that
        ``supports_masking`` (elementwise layers, `Dense`, ...), else None. A mask is a
        boolean ``(batch, steps)`` tensor marking the steps to use, held by a tensor as
        ``_keras_mask``: `Masking` makes one; the recurrent layers and
        `GlobalAveragePooling1D` consume it."""
        return mask if self.supports_masking else None

    @staticmethod
    def _set_output_masks(inputs, outputs, masks):
        """Attach `masks` to `outputs` as ``_keras_mask`` (an output that is one of the
        inputs is copied first, so the input keeps its own mask)."""
        outs, masks = to_list(outputs), to_list(masks)
        if len(masks) != len(outs):
            masks = masks * len(outs) if len(masks) == 1 else [None] * len(outs)
        fixed = []
        for o, m in zip(outs, masks, strict=True):
            if isinstance(o, Tensor):
                if any(o is t for t in inputs):
                    o = array_ops.identity(o)
                if m is not None or getattr(o, "_keras_mask", None) is None:
                    o._keras_mask = m  # (a mask the layer's call attached stays)
            fixed.append(o)
        return fixed if isinstance(outputs, list | tuple) else fixed[0]

    def get_losses_for(self, inputs) -> list:
        """The losses made by calls on `inputs` (activity regularization); None: the
        others (the weights' regularization, `add_loss`)."""
        made = self.__dict__.get("_loss_inputs", {})
        if inputs is None:
            return [loss for loss in self._losses if id(loss) not in made]
        wanted = {id(t) for t in to_list(inputs)}
        return [loss for loss in self._losses if made.get(id(loss), set()) & wanted]

    def _convert(self, x) -> Tensor:
        t = convert_to_tensor(x, dtype=self._dtype if not isinstance(x, Tensor) else None)
        if self._dtype is not None and t.dtype.base_dtype != self._dtype and \
                (t.dtype.base_dtype.is_floating or t.dtype.base_dtype.is_integer):
            t = math_ops.cast(t, self._dtype)
        return t

    # -- functional-API accessors -------------------------------------------------------------
    def _first_node(self, what: str) -> Node:
        """As TF 2.15's Keras: a layer called several times answers for its first call."""
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {what} to return."
                                 if what == "input" else
                                 f"Layer {self.name} has no inbound nodes.")
        return self._inbound_nodes[0]

    def _node_shapes(self, what: str):
        """The `what` ('input' / 'output') shape of every call, when they all agree."""
        if not self._inbound_nodes:
            raise AttributeError(f'The layer "{self.name}" has never been called and thus '
                                 f"has no defined {what} shape.")
        shapes = {repr([tuple(t.shape.as_list()) for t in getattr(node, f"{what}_tensors")])
                  for node in self._inbound_nodes}
        if len(shapes) > 1:
            raise AttributeError(
                f'The layer "{self.name}" has multiple inbound nodes, with different {what} '
                f'shapes. Hence the notion of "{what} shape" is ill-defined for the layer. '
                f"Use `get_{what}_shape_at(node_index)` instead.")
        tensors = getattr(self._inbound_nodes[0], f"{what}_tensors")
        shapes = [tuple(t.shape.as_list()) for t in tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def input(self):
        ins = self._first_node("input").input_tensors
        return ins[0] if len(ins) == 1 else ins

    @property
    def output(self):
        outs = self._first_node("output").output_tensors
        return outs[0] if len(outs) == 1 else outs

    @property
    def output_shape(self):
        return self._node_shapes("output")

    @property
    def input_shape(self):
        return self._node_shapes("input")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


# -- Input ----------------------------------------------------------------------------------
class InputLayer(Layer):
    """The entry point of a model: a placeholder, or `input_tensor` if given."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None,
                 sparse: bool = False, name=None, batch_input_shape=None, ragged: bool = False,
                 **kwargs) -> None:
        if sparse or ragged:
            raise NotImplementedError("InputLayer(sparse=True / ragged=True) is not supported "
                                      "by flowgraph.")
        name = name or backend.unique_object_name("input", zero_based=False)
        super().__init__(name=name, dtype=dtype, **kwargs)
        if input_tensor is not None:
            input_tensor = convert_to_tensor(input_tensor)
            if dtype is None:
                self._dtype = input_tensor.dtype.base_dtype
            batch_input_shape = tuple(input_tensor.shape.as_list() or ()) \
                if input_tensor.shape.ndims is not None else None
        else:
            if batch_input_shape is None:
                if input_shape is None:
                    raise ValueError("An InputLayer needs `input_shape`, `batch_input_shape` "
                                     "or `input_tensor`.")
                batch_input_shape = (batch_size, *tuple(input_shape))
            self._dtype = self._dtype or _dtypes.as_dtype(backend.floatx())
            input_tensor = array_ops.placeholder(self._dtype, shape=list(batch_input_shape),
                                                 name=self.name)
        self._batch_input_shape = batch_input_shape
        self.built = True
        self._graph = input_tensor.graph
        Node(self, [], [input_tensor], {}, False)

    def get_config(self) -> dict:
        return {"batch_input_shape": self._batch_input_shape, "dtype": self._dtype.name,
                "name": self.name, "ragged": False, "sparse": False}


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse: bool = False,
          tensor=None, batch_shape=None, **kwargs):
    """A Keras tensor to start a functional model from: a placeholder of shape
    ``(batch_size, *shape)`` named `name` (default ``input_1``, ``input_2``, ...).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     print(keras.layers.Input(shape=(28, 28, 1), name="image").shape)
    (?, 28, 28, 1)
    """
    if kwargs:
        raise TypeError(f"Input: unexpected keyword argument(s) {sorted(kwargs)}")
    if shape is None and batch_shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `tensor` argument. "
                         "Note that `shape` does not include the batch dimension.")
    layer = InputLayer(input_shape=shape, batch_size=batch_size, name=name, dtype=dtype,
                       sparse=sparse, input_tensor=tensor, batch_input_shape=batch_shape)
    return layer._inbound_nodes[0].output_tensors[0]


# -- core layers ----------------------------------------------------------------------------
def _check_ndim(layer, shape, min_ndim=None, ndim=None) -> TensorShape:
    shape = TensorShape(shape)
    n = shape.ndims
    if n is not None and ((ndim is not None and n != ndim) or
                          (min_ndim is not None and n < min_ndim)):
        want = f"ndim={ndim}" if ndim is not None else f"min_ndim={min_ndim}"
        raise ValueError(f"Input 0 of layer {layer.name} is incompatible with the layer: "
                         f"expected {want}, found ndim={n}. Full shape received: {shape}")
    return shape


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import keras
    >>> with tf.Graph().as_default():
    ...     layer = keras.layers.Dense(2, kernel_initializer="ones")
    ...     y = layer(tf.constant([[1.0, 2.0, 3.0]]))
    ...     print(keras.backend.get_session().run(y))
    [[6. 6.]]
    """

    supports_masking = True

    def __init__(self, units, activation=None, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, numbers.Integral) or units <= 0:
            raise ValueError(f"Dense: `units` must be a positive integer, got {units!r}.")
        self.units = int(units)
        self.activation = get_activation(activation)
        self._activation_id = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)

    def get_config(self) -> dict:
        return {**super().get_config(), "units": self.units, "activation": self._activation_id,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer,
                "kernel_regularizer": self.kernel_regularizer,
                "bias_regularizer": self.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
                "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint}

    def build(self, input_shape) -> None:
        shape = _check_ndim(self, input_shape, min_ndim=2)
        last = shape[-1].value if shape.ndims else None
        if last is None:
            raise ValueError(f"The last dimension of the inputs to `Dense` should be defined. "
                             f"Found `None` (layer {self.name}, input shape {shape}).")
        self.kernel = self.add_weight("kernel", [last, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            flat = array_shape_ops.reshape(inputs, [-1, self.kernel.shape[0].value])
            out = math_ops.matmul(flat, self.kernel)
            lead = array_shape_ops.shape(inputs)[:-1]
            out = array_shape_ops.reshape(out, array_join_ops.concat([lead, [self.units]], 0))
            out.set_shape(inputs.shape[:-1].concatenate([self.units]))
        else:
            out = math_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)


class Activation(Layer):
    """Apply an activation function (a name such as ``'relu'``, or a callable)."""

    supports_masking = True

    def __init__(self, activation, **kwargs) -> None:
        super().__init__(**kwargs)
        self._activation_id = activation
        self.activation = get_activation(activation)

    def get_config(self) -> dict:
        return {**super().get_config(), "activation": self._activation_id}

    def call(self, inputs):
        return self.activation(inputs)


class Dropout(Layer):
    """While training, zero a `rate` fraction of the inputs and scale the rest by
    ``1 / (1 - rate)``; otherwise pass them through."""

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if not 0 <= float(rate) < 1:
            raise ValueError(f"Dropout: `rate` must be in [0, 1); got {rate!r}.")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}

    def _noise_shape(self, inputs):
        """The shape of the keep/drop mask (`SpatialDropout*` drop whole channels); a
        None entry of ``noise_shape`` takes the input's size there, as in Keras
        (EfficientNet drops whole samples with ``(None, 1, 1, 1)``)."""
        if self.noise_shape is None:
            return array_shape_ops.shape(inputs)
        if None not in self.noise_shape:
            return list(self.noise_shape)
        dynamic = array_shape_ops.shape(inputs)
        return array_join_ops.stack(
            [dynamic[i] if d is None else convert_to_tensor(d, dtype=dynamic.dtype)
             for i, d in enumerate(self.noise_shape)])

    def _drop(self, inputs):
        dtype = inputs.dtype.base_dtype
        shape = self._noise_shape(inputs)
        noise = random_ops.random_uniform(shape, dtype=dtype, seed=self.seed)
        keep = math_ops.cast(math_ops.greater_equal(noise, self.rate), dtype)
        return math_ops.multiply(math_ops.multiply(inputs, 1.0 / (1.0 - self.rate)), keep)

    def call(self, inputs, training=None):
        if self.rate == 0:
            return array_ops.identity(inputs)
        return smart_cond(training, lambda: self._drop(inputs),
                          lambda: array_ops.identity(inputs))


class Flatten(Layer):
    """Reshape to ``(batch, -1)``."""

    def __init__(self, data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.data_format = data_format

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format}

    def call(self, inputs):
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else None
        if self.data_format == "channels_first" and dims is not None and len(dims) > 2:
            inputs = array_shape_ops.transpose(inputs, [0, *range(2, len(dims)), 1])
        if dims is not None and all(d is not None for d in dims[1:]):
            return array_shape_ops.reshape(inputs, [-1, int(np.prod(dims[1:]))])
        batch = array_shape_ops.shape(inputs)[:1]
        return array_shape_ops.reshape(inputs, array_join_ops.concat([batch, [-1]], 0))


class Reshape(Layer):
    """Reshape each example to `target_shape` (the batch axis is kept)."""

    def __init__(self, target_shape, **kwargs) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "target_shape": self.target_shape}

    def call(self, inputs):
        batch = array_shape_ops.shape(inputs)[:1]
        out = array_shape_ops.reshape(
            inputs, array_join_ops.concat([batch, list(self.target_shape)], 0))
        known = [None if d == -1 else d for d in self.target_shape]
        rest = inputs.shape.as_list()[1:] if inputs.shape.ndims else [None]
        if -1 in self.target_shape and all(d is not None for d in rest):
            other = int(np.prod([d for d in self.target_shape if d != -1]))
            known = [int(np.prod(rest)) // other if d == -1 else d for d in self.target_shape]
        out.set_shape([inputs.shape[0].value if inputs.shape.ndims else None, *known])
        return out


# -- merging --------------------------------------------------------------------------------
class Concatenate(Layer):
    """Concatenate a list of tensors along `axis`."""

    def __init__(self, axis=-1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}

    def call(self, inputs):
        if not isinstance(inputs, list) or len(inputs) < 2:
            raise ValueError(f"A `Concatenate` layer ({self.name}) should be called on a list "
                             f"of at least 2 inputs.")
        return array_join_ops.concat(inputs, self.axis)

    def compute_mask(self, inputs, mask=None):
        """As TF: the inputs' masks (all-true for an input without one) concatenated
        along `axis`, kept where every concatenated entry is."""
        masks = to_list(mask) if mask is not None else []
        if not any(m is not None for m in masks):
            return None
        parts = []
        for x, m in zip(inputs, masks, strict=True):
            if m is None:
                parts.append(array_ops.ones_like(x, dtype=_dtypes.bool))
            elif m.shape.ndims is not None and m.shape.ndims < x.shape.ndims:
                parts.append(array_shape_ops.expand_dims(m, -1))
            else:
                parts.append(m)
        return math_reduce.reduce_all(array_join_ops.concat(parts, self.axis), axis=-1)


def merged_mask(masks):
    """The mask of an elementwise merge (`Add`, `Multiply`, ...): the steps every masked
    input keeps (None when no input has a mask)."""
    masks = [m for m in to_list(masks or []) if m is not None]
    if not masks:
        return None
    out = masks[0]
    for m in masks[1:]:
        out = math_ops.logical_and(out, m)
    return out


class Add(Layer):
    """Sum a list of tensors of the same shape."""

    def compute_mask(self, inputs, mask=None):
        return merged_mask(mask)

    def call(self, inputs):
        if not isinstance(inputs, list) or len(inputs) < 2:
            raise ValueError(f"An `Add` layer ({self.name}) should be called on a list of at "
                             f"least 2 inputs.")
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.add(out, x)
        return out


# -- convolution and pooling ------------------------------------------------------------------
def _data_format(value) -> str:
    value = value or backend.image_data_format()
    if value not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                         f"'channels_last'. Received: {value!r}")
    return value


_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


class Conv2D(Layer):
    """2-D convolution, kernel ``(kh, kw, in_channels, filters)``; channels last by
    default. The 1-D and 3-D convolutions subclass it with another `_rank` (the number
    of spatial axes)."""

    _rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), groups=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(filters, numbers.Integral) or filters <= 0:
            raise ValueError(f"{type(self).__name__}: `filters` must be a positive integer, "
                             f"got {filters!r}.")
        groups = groups or 1  # as Keras: 0 (RegNet's width // group width) means 1
        if not isinstance(groups, numbers.Integral) or groups < 1 or filters % groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number "
                             f"of groups. Received: groups={groups}, filters={filters}")
        rank = self._rank
        self.filters, self.groups = int(filters), int(groups)
        self.kernel_size = normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = _data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, rank, "dilation_rate")
        self._activation_id = activation
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": self._activation_id,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer,
                "kernel_regularizer": self.kernel_regularizer,
                "bias_regularizer": self.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
                "kernel_constraint": self.kernel_constraint,
                "bias_constraint": self.bias_constraint}

    def _fmt(self) -> str:
        return _FORMATS[self._rank][self.data_format != "channels_last"]

    def _input_channels(self, input_shape) -> int:
        """The input's channel count, after checking its rank is ``_rank + 2``
        (ValueError otherwise)."""
        shape = _check_ndim(self, input_shape, ndim=self._rank + 2)
        channels = shape[-1 if self.data_format == "channels_last" else 1].value
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs should be defined. Found "
                             f"`None` (layer {self.name}, input shape {shape}).")
        return channels

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, channels // self.groups, self.filters]

    def _grouped(self, inputs, run):
        """``run(inputs, self.kernel)``; with ``groups > 1``, the input channels and the
        kernel's filters split into ``groups`` equal parts, ``run`` on each pair, and the
        results concatenated on the channel axis (Keras' grouped convolution)."""
        if self.groups == 1:
            return run(inputs, self.kernel)
        axis = self._rank + 1 if self.data_format == "channels_last" else 1
        parts = array_join_ops.split(inputs, self.groups, axis=axis)
        kernels = array_join_ops.split(self.kernel, self.groups, axis=self._rank + 1)
        return array_join_ops.concat(
            [run(part, kernel) for part, kernel in zip(parts, kernels, strict=True)], axis)

    def _add_bias(self) -> None:
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {channels} channels (full input shape is "
                             f"{TensorShape(input_shape)}).")
        self.kernel = self.add_weight("kernel", self._kernel_shape(channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self._add_bias()

    def _spatial(self, pair) -> list[int]:
        return [1, *pair, 1] if self.data_format == "channels_last" else [1, 1, *pair]

    def call(self, inputs):
        from flowgraph.ops.nn_conv_ops import convolution

        channels = inputs.shape.as_list()[3 if self.data_format == "channels_last" else 1]
        if self.groups > 1 and self.groups == self.filters == channels and \
                self.dilation_rate == (1, 1):
            # one filter per channel (ConvNeXt): a depthwise convolution of the kernel with
            # its last two axes swapped, (kh, kw, 1, C) -> (kh, kw, C, 1)
            out = nn_ops.depthwise_conv2d(inputs, array_ops.transpose(self.kernel, [0, 1, 3, 2]),
                                          self._spatial(self.strides), self.padding.upper(),
                                          data_format=self._fmt())
        else:
            # as TensorFlow: one `Conv2D` scope; a dilated channels-last convolution runs as
            # SpaceToBatchND -> Conv2D -> BatchToSpaceND inside it
            out = self._grouped(inputs, lambda x, kernel: convolution(
                x, kernel, self.padding.upper(), strides=list(self.strides),
                dilation_rate=list(self.dilation_rate), data_format=self._fmt(),
                name="Conv2D"))
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias, data_format=self._fmt())
        return self.activation(out)


class MaxPooling2D(Layer):
    """Max over ``pool_size`` windows moved by `strides` (default: `pool_size`). The 1-D
    and 3-D poolings subclass it with another `_rank`."""

    _pool = staticmethod(nn_ops.max_pool)
    _rank = 2

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.pool_size = normalize_tuple(pool_size, self._rank, "pool_size")
        self.strides = normalize_tuple(strides if strides is not None else self.pool_size,
                                       self._rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = _data_format(data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format}

    def call(self, inputs):
        _check_ndim(self, inputs.shape, ndim=self._rank + 2)
        last = self.data_format == "channels_last"
        ksize = [1, *self.pool_size, 1] if last else [1, 1, *self.pool_size]
        strides = [1, *self.strides, 1] if last else [1, 1, *self.strides]
        return type(self)._pool(inputs, ksize, strides, self.padding.upper(),
                                data_format=_FORMATS[self._rank][not last])


class AveragePooling2D(MaxPooling2D):
    """Mean over ``pool_size`` windows moved by `strides` (default: `pool_size`)."""

    _pool = staticmethod(nn_ops.avg_pool)


# -- batch normalization --------------------------------------------------------------------
class BatchNormalization(Layer):
    """Normalize with the batch's statistics while training (and move the moving averages
    ``moving = momentum * moving + (1 - momentum) * batch``), with the moving averages
    otherwise. Weights: ``gamma``, ``beta`` (trainable), ``moving_mean``,
    ``moving_variance``. As in TensorFlow, 4-D inputs update the moving variance with the
    unbiased batch variance; the output always uses the biased one."""

    supports_masking = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer

    def get_config(self) -> dict:
        keys = ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
                "beta_regularizer", "gamma_regularizer")
        return {**super().get_config(), **{k: getattr(self, k) for k in keys}}

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        if shape.ndims is None:
            raise ValueError(f"Input has undefined rank (layer {self.name}).")
        self._ndims = shape.ndims
        self._axis = self.axis % shape.ndims
        dim = shape[self._axis].value
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined "
                             f"dimension but the layer received an input with shape {shape}.")
        self.gamma = self.add_weight("gamma", [dim], initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", [dim], initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", [dim], trainable=False,
                                           initializer=self.moving_mean_initializer)
        self.moving_variance = self.add_weight("moving_variance", [dim], trainable=False,
                                               initializer=self.moving_variance_initializer)

    def _bcast(self, v):
        if self._axis == self._ndims - 1:
            return v
        shape = [1] * self._ndims
        shape[self._axis] = -1
        return array_shape_ops.reshape(v, shape)

    def _update(self, var, value, momentum):
        with name_scope("AssignMovingAvg"):
            # a Python momentum (training known True): TF's decay is float32(1 - momentum)
            decay = (convert_to_tensor(1.0 - momentum, dtype=var.dtype.base_dtype, name="decay")
                     if isinstance(momentum, int | float) else math_ops.subtract(1.0, momentum))
            delta = math_ops.multiply(math_ops.subtract(var, value), decay)
            return var.assign_sub(delta)

    def _fused_call(self, inputs, training):
        # TensorFlow's layout: one FusedBatchNormV3 (two under a cond when the phase is a
        # tensor), whose batch variance output is already Bessel-corrected.
        channels = self.moving_mean.shape.as_list()
        beta = self.beta if self.beta is not None else \
            convert_to_tensor(np.zeros(channels, np.float32), name="Const")
        gamma = self.gamma if self.gamma is not None else \
            convert_to_tensor(np.ones(channels, np.float32), name="Const")

        def run(is_training):
            return nn_norm_ops.fused_batch_norm(
                inputs, gamma, beta, self.moving_mean, self.moving_variance,
                epsilon=self.epsilon, data_format="NHWC" if self._axis == 3 else "NCHW",
                is_training=is_training)

        if training is False:
            return run(False)[0]
        y, mean, var = smart_cond(training, lambda: run(True), lambda: run(False))
        momentum = smart_cond(training,
                              lambda: convert_to_tensor(self.momentum, dtype=var.dtype),
                              lambda: convert_to_tensor(1.0, dtype=var.dtype))
        self.add_update(self._update(self.moving_mean, mean, momentum))
        self.add_update(self._update(self.moving_variance, var, momentum))
        return y

    def call(self, inputs, training=None):
        if (self._ndims == 4 and self._axis in (1, 3)
                and inputs.dtype.base_dtype in (_dtypes.float16, _dtypes.float32)):
            return self._fused_call(inputs, training)
        axes = [i for i in range(self._ndims) if i != self._axis]
        mean, var = nn_ops.moments(inputs, axes)
        use_mean = smart_cond(training, lambda: mean, lambda: self.moving_mean.value())
        use_var = smart_cond(training, lambda: var, lambda: self.moving_variance.value())
        if training is not False:
            update_var = var
            if self._ndims == 4:
                n = math_ops.cast(math_ops.truediv(array_shape_ops.size(inputs),
                                                   array_shape_ops.size(var)), var.dtype)
                update_var = math_ops.multiply(
                    var, math_ops.truediv(n, math_ops.maximum(math_ops.subtract(n, 1.0), 1.0)))
            momentum = float(self.momentum) if training is True else smart_cond(
                training, lambda: convert_to_tensor(self.momentum, dtype=var.dtype),
                lambda: convert_to_tensor(1.0, dtype=var.dtype))
            self.add_update(self._update(self.moving_mean, mean, momentum))
            self.add_update(self._update(self.moving_variance, update_var, momentum))
        inv = math_ops.rsqrt(math_ops.add(use_var, self.epsilon))
        if self.gamma is not None:
            inv = math_ops.multiply(inv, self.gamma)
        shift = math_ops.negative(math_ops.multiply(use_mean, inv))
        if self.beta is not None:
            shift = math_ops.add(shift, self.beta)
        return math_ops.add(math_ops.multiply(inputs, self._bcast(inv)), self._bcast(shift))
