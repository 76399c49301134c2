"""The Keras `Layer` members of the `tf.layers` classes (TF 2.15's `tf.compat.v1.layers`
classes are Keras layers): configuration, parameter counts, weight values through the
default session, output shapes and masks, and the node accessors, which, as in TF 2.15's
graph mode, report a layer that is never connected.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     layer = tf.layers.Dense(3, name="proj")
...     y = layer(tf.placeholder(tf.float32, [None, 4]))
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         print(layer.count_params(), [w.shape for w in layer.get_weights()])
15 [(4, 3), (3,)]
"""

from __future__ import annotations

import functools

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import Graph
from flowgraph.framework.session_stack import get_default_session
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, init_ops, math_ops, nn_ops
from flowgraph.ops import variable_scope as vs

__all__ = ["LayerAPI", "Policy", "serialize_activation", "serialize_fn", "serialize_initializer"]

_ACTIVATIONS = {"relu": nn_ops.relu, "relu6": nn_ops.relu6, "elu": nn_ops.elu,
                "selu": nn_ops.selu, "softplus": nn_ops.softplus,
                "softsign": nn_ops.softsign, "tanh": math_ops.tanh,
                "sigmoid": math_ops.sigmoid, "softmax": nn_ops.softmax}


def serialize_activation(fn):
    """Keras's name for an activation: 'linear' for None, else the function's name."""
    if fn is None:
        return "linear"
    return fn if isinstance(fn, str) else getattr(fn, "__name__", repr(fn))


def serialize_initializer(init):
    if init is None or isinstance(init, str | dict):
        return init
    if hasattr(init, "get_config"):
        config = dict(init.get_config())
        if config.get("verify_shape") is False:  # Keras's form leaves it out
            del config["verify_shape"]
        return {"class_name": type(init).__name__, "config": config}
    return getattr(init, "__name__", repr(init))


serialize_fn = serialize_initializer  # regularizers and constraints: the same forms


def _deserialize(key: str, value):
    if key in ("activation",) and isinstance(value, str):
        if value == "linear":
            return None
        if value not in _ACTIVATIONS:
            raise ValueError(f"from_config: unknown activation {value!r}; known: "
                             f"{sorted(['linear', *_ACTIVATIONS])}")
        return _ACTIVATIONS[value]
    if key.endswith("_initializer") and isinstance(value, dict):
        cls = getattr(init_ops, value.get("class_name", ""), None)
        if not isinstance(cls, type):
            raise ValueError(f"from_config: unknown initializer {value!r} for `{key}`")
        return cls.from_config(dict(value.get("config", {})))
    return value


class Policy:
    """A layer's dtype policy: the dtype its computations and its variables use (one and
    the same: flowgraph's Keras has no mixed precision inside a layer). ``'_infer'``: the
    layer takes the dtype of its first input when it is first called."""

    def __init__(self, name: str) -> None:
        self.name = str(name)

    compute_dtype = property(lambda self: None if self.name == "_infer" else self.name)
    variable_dtype = compute_dtype

    def __eq__(self, other) -> bool:
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f'<Policy "{self.name}">'


class LayerAPI:
    """Mixed into `tf.layers.Layer`; relies on its ``weights``, ``built``, ``name``,
    ``_dtype``, ``_scope`` and ``add_weight``."""

    supports_masking = False
    # the built-in layers compute their output shape; a subclass of `tf.layers.Layer`
    # overrides `compute_output_shape` (TF's graph mode raises NotImplementedError)
    _computes_output_shape = False
    # config keys Keras writes that the constructor does not take, with the only value
    # flowgraph supports (from_config drops them at that value, rejects any other)
    _config_only: dict = {}

    # -- configuration -------------------------------------------------------------------
    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable,
                "dtype": None if self._dtype is None else self._dtype.name}

    @classmethod
    def from_config(cls, config: dict):
        kwargs = {}
        for key, value in config.items():
            if key in cls._config_only:
                if value != cls._config_only[key]:
                    raise ValueError(f"{cls.__name__}.from_config: `{key}`={value!r} is not "
                                     f"supported (only {cls._config_only[key]!r}).")
                continue
            kwargs[key] = _deserialize(key, value)
        return cls(**kwargs)

    # -- weights ---------------------------------------------------------------------------
    def count_params(self) -> int:
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on {self.name}, but the "
                             f"layer isn't built. You can build it manually via: "
                             f"`{self.name}.build(batch_input_shape)`.")
        return int(sum(int(np.prod(w.shape.as_list(), dtype=np.int64))
                       for w in self.weights))

    def _session(self, what: str):
        sess = get_default_session()
        if sess is None:
            raise ValueError(f"{type(self).__name__}.{what} on layer {self.name!r} reads "
                             f"the variables through the default session, but none is "
                             f"registered: call it inside `with sess.as_default():` (or a "
                             f"`with tf.Session() as sess:` block).")
        return sess

    def get_weights(self) -> list:
        """The current values of `weights`, as NumPy arrays (one run of the default
        session)."""
        weights = self.weights
        if not weights:
            return []
        return list(self._session("get_weights").run(weights))

    def set_weights(self, weights) -> None:
        """Load `weights` (arrays in the order of `get_weights`) into the variables,
        through the default session, adding no ops to the graph."""
        params = self.weights
        weights = list(weights)
        if len(params) != len(weights):
            raise ValueError(f'You called `set_weights(weights)` on layer "{self.name}" '
                             f"with a weight list of length {len(weights)}, but the layer "
                             f"was expecting {len(params)} weights.")
        arrays = [np.asarray(w) for w in weights]
        for p, w in zip(params, arrays, strict=True):
            if not p.shape.is_compatible_with(w.shape):
                raise ValueError(f"Layer weight shape {tuple(p.shape.as_list())} not "
                                 f"compatible with provided weight shape {w.shape}")
        sess = self._session("set_weights") if params else None
        for p, w in zip(params, arrays, strict=True):
            p.load(w.astype(p.dtype.base_dtype.as_numpy_dtype), sess)

    def add_variable(self, *args, **kwargs):
        """`add_weight` (TF's deprecated alias), also before the layer is first called:
        the variable is created in the layer's variable scope."""
        inside = self._scope is not None and \
            vs.get_variable_scope().name == self._scope.name
        if inside:  # from `build` or `call`: the scope the layer's call opened
            return self.add_weight(*args, **kwargs)
        self._set_scope()
        with vs.variable_scope(self._scope, reuse=True if self.built else self._reuse,
                               auxiliary_name_scope=False) as sc:
            self._current_scope = sc
            return self.add_weight(*args, **kwargs)

    # -- shapes, masks, dtypes ---------------------------------------------------------------
    def compute_output_shape(self, input_shape) -> TensorShape:
        """The output shape for inputs of `input_shape`, from a copy of the layer called
        on a placeholder in a scratch graph (nothing is added to the caller's graph)."""
        if not self._computes_output_shape:
            raise NotImplementedError(f"{type(self).__name__}.compute_output_shape is not "
                                      f"defined in graph mode: override it in the subclass.")
        shape = TensorShape(input_shape)
        with Graph().as_default():
            # only the structure matters: custom activations, initializers, regularizers
            # and constraints (which have no config form) stay at their defaults
            config = {k: v for k, v in self.get_config().items()
                      if k != "activation" and not k.endswith(
                          ("_initializer", "_regularizer", "_constraint"))}
            copy = type(self).from_config(config)
            x = array_ops.placeholder(self._dtype or _dtypes.float32, shape)
            return TensorShape(copy(x).shape)

    def compute_mask(self, inputs, mask=None):
        if not self.supports_masking and mask is not None:
            raise TypeError(f"Layer {self.name} does not support masking, but was passed "
                            f"an input_mask: {mask}")
        return mask if self.supports_masking else None

    @property
    def compute_dtype(self):
        """The dtype name computations run in (None until the layer is called)."""
        return None if self._dtype is None else self._dtype.name

    variable_dtype = compute_dtype  # no mixed precision: the two are the same

    @property
    def dtype_policy(self) -> Policy:
        """`Policy('_infer')` until the layer knows its dtype, then that dtype's."""
        return Policy("_infer" if self._dtype is None else self._dtype.name)

    # -- name, trainable, tf.Module members ----------------------------------------------------
    name = property(lambda self: self._name)  # read-only, as in TF 2.15

    @property
    def trainable(self) -> bool:
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value) -> None:
        self._trainable = bool(value)

    input_spec = None  # an InputSpec, set by the layer, checked on every call
    submodules = property(lambda self: ())  # a tf.layers layer holds no other layer

    @property
    def name_scope(self):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                             f"'_scope_name': a tf.layers layer has no tf.Module name scope; "
                             f"its ops go under its variable scope ({self.scope_name!r}).")

    @classmethod
    def with_name_scope(cls, method):
        """Decorate `method` to run inside ``self.name_scope`` (which a tf.layers layer
        does not have: the call raises, as in TF 2.15)."""

        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapped
    dynamic = property(lambda self: False)  # graph-mode layers: never eager-only
    stateful = property(lambda self: False)
    # `add_metric` is not provided (it needs tf.keras.metrics), so this stays empty
    metrics = property(lambda self: [])

    # TF 2.15's legacy layers keep `graph` only as a deprecated attribute that is None
    graph = property(lambda self: None)

    # -- nodes: never connected in graph mode (TF 2.15) --------------------------------------
    inbound_nodes = property(lambda self: [])
    outbound_nodes = property(lambda self: [])

    def _not_connected(self, what: str):
        raise AttributeError(f"Layer {self.name} is not connected, no {what} to return.")

    input = property(lambda self: self._not_connected("input"))
    input_mask = property(lambda self: self._not_connected("input"))

    @property
    def output(self):
        raise AttributeError(f"Layer {self.name} has no inbound nodes.")

    output_mask = output

    @property
    def input_shape(self):
        raise AttributeError(f'The layer "{self.name}" has never been called and thus has '
                             f"no defined input shape. Note that the `input_shape` property "
                             f"is only available for Functional and Sequential models.")

    @property
    def output_shape(self):
        raise AttributeError("The layer has never been called and thus has no defined "
                             "output shape.")

    def _never_called(self, what: str):
        raise RuntimeError(f"The layer has never been called and thus has no defined "
                           f"{what}.")

    def get_input_at(self, node_index):
        self._never_called("input")

    def get_output_at(self, node_index):
        self._never_called("output")

    def get_input_shape_at(self, node_index):
        self._never_called("input shape")

    def get_output_shape_at(self, node_index):
        self._never_called("output shape")

    def get_input_mask_at(self, node_index):
        self._never_called("input")

    def get_output_mask_at(self, node_index):
        self._never_called("output")
