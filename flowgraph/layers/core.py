"""`tf.layers` core: the `Layer` base, `dense`, `dropout`, `flatten`.

A layer owns a *variable scope*, captured the first time it is needed, exactly as TF1's
``tf.layers`` do:

* unnamed: ``variable_scope(None, default_name="dense")`` -> ``dense``, ``dense_1``, ...
  (unique among scopes open in the current variable scope);
* ``name="x"``: ``variable_scope("x")``; an existing ``x/kernel`` is then an error unless
  ``reuse=True`` (or the enclosing scope reuses).

Its variables are ``<scope>/kernel`` etc. (via `tf.get_variable`, so enclosing
variable scopes apply: their initializer, regularizer and reuse). Its ops go into the
name scope opened when the scope was captured (``scope.original_name_scope``), so they
read ``dense/MatMul``; ops of a reusing call go into a fresh name scope (``dense_1/``).
Weight regularizer losses and activity losses are added to
``GraphKeys.REGULARIZATION_LOSSES``; state updates (batch norm) to ``UPDATE_OPS``.

A Python bool `training` picks a branch when the graph is built; a bool tensor picks it
at run time with `tf.cond` when the control-flow ops provide it, else with
`tf.where` (both branches computed).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 3])
...     h = tf.layers.dense(x, 4, activation=tf.nn.relu)
...     y = tf.layers.dense(h, 2)
...     print(h.name, y.shape, [v.name for v in tf.trainable_variables()][2:])
dense/Relu:0 (?, 2) ['dense_1/kernel:0', 'dense_1/bias:0']
"""

from __future__ import annotations

import importlib
import numbers
import re

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import GraphKeys, add_to_collection, name_scope
from flowgraph.framework.object_names import unique_object_name
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers import experimental as _experimental
from flowgraph.layers.input_spec import InputSpec, assert_input_compatibility
from flowgraph.layers.layer_api import LayerAPI, serialize_activation, serialize_fn
from flowgraph.layers.layer_api import serialize_initializer as _ser_init
from flowgraph.ops import (
    array_index_ops,
    array_join_ops,
    array_ops,
    array_shape_ops,
    init_ops,
    math_ops,
    nn_impl,
    nn_ops,
)
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.math_tensordot import tensordot

__all__ = ["Dense", "Dropout", "Flatten", "Layer", "dense", "dropout", "flatten"]


# -- helpers shared by the layer modules ---------------------------------------------------
def find_cond():
    """`tf.cond` if the control-flow ops provide it, else None."""
    for module in ("flowgraph.ops.control_flow_cond", "flowgraph.ops.control_flow_ops"):
        try:
            cond = getattr(importlib.import_module(module), "cond", None)
        except ImportError:
            continue
        if cond is not None:
            return cond
    return None


def static_bool(pred):
    """A Python bool for `pred` if known at graph-construction time, else None."""
    if isinstance(pred, bool | np.bool_):
        return bool(pred)
    if isinstance(pred, numbers.Integral):
        return bool(pred)
    if isinstance(pred, Tensor):
        if pred.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"`training` must be a Python bool or a bool tensor, got "
                            f"{pred.dtype.name} tensor {pred.name}.")
        value = constant_value(pred)
        return None if value is None else bool(value)
    raise TypeError(f"`training` must be a Python bool or a bool tensor, got {pred!r}.")


def smart_cond(pred, true_fn, false_fn):
    """`true_fn()` or `false_fn()` chosen by `pred`: statically when it is known,
    else with `tf.cond`, else (no cond op yet) with a `tf.where` over both results."""
    known = static_bool(pred)
    if known is not None:
        return true_fn() if known else false_fn()
    cond = find_cond()
    if cond is not None:
        return cond(pred, true_fn, false_fn)
    a, b = true_fn(), false_fn()
    return array_index_ops.where_v2(pred, a, b)


def normalize_tuple(value, n: int, name: str) -> tuple[int, ...]:
    """`value` (an int or n ints) as a tuple of n ints."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: "
                         f"{value!r}") from None
    if len(values) != n or not all(isinstance(v, numbers.Integral) for v in values):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: "
                         f"{value!r}")
    return tuple(int(v) for v in values)


def normalize_padding(value, allow_causal: bool = False) -> str:
    padding = str(value).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be one of {', '.join(allowed)}. "
                         f"Received: {value!r}")
    return padding


def normalize_data_format(value) -> str:
    fmt = str(value or "channels_last").lower()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                         f"'channels_last'. Received: {value!r}")
    return fmt


def _snake_case(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return s.replace("2_d", "2d").replace("1_d", "1d").replace("3_d", "3d")


# -- Layer ----------------------------------------------------------------------------------
class Layer(LayerAPI):
    """Base of the `tf.layers` classes: variable-scope handling, weights, losses and
    updates. Subclasses implement ``build(input_shape)`` and ``call(inputs, ...)``.
    The Keras `Layer` members (`get_config`, `count_params`, `get_weights`, ...) come
    from `flowgraph.layers.layer_api.LayerAPI`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     layer = tf.layers.Dense(3, name="proj")
    ...     a = layer(tf.ones([2, 4]))
    ...     b = layer(tf.ones([5, 4]))  # shares proj/kernel
    ...     print(len(tf.global_variables()), b.shape)
    2 (5, 3)
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None,
                 activity_regularizer=None, _scope=None, _reuse=None, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                            f"{sorted(kwargs)}")
        self.trainable = bool(trainable)
        self.built = False
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._activity_regularizer = activity_regularizer
        if _experimental.keras_style():
            for what, value in (("scope", _scope), ("reuse", _reuse)):
                if value is not None and value is not False:
                    raise ValueError(f"{what} argument not allowed when keras style layers "
                                     f"are enabled, but saw: {value}")
        self._reuse = _reuse
        self._base_name = name or _snake_case(type(self).__name__)
        # As TensorFlow: an unnamed layer is labelled ``dense_1``, ``dense_2``, ... (one
        # counter per graph, shared with Keras); its variable scope still comes from
        # the base name (``dense``, ``dense_1``, ... among the open scopes).
        self._name = name or unique_object_name(self._base_name, zero_based=False)
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._losses: list = []
        self._updates: list = []
        self._scope = None
        self._current_scope = None
        self.input_spec = None  # an InputSpec checked on every call (layers/input_spec.py)
        if _scope:
            with vs.variable_scope(_scope) as captured:
                self._scope = captured

    # -- properties -------------------------------------------------------------------
    dtype = property(lambda self: self._dtype)
    scope_name = property(lambda self: self._scope.name if self._scope else None)
    losses = property(lambda self: list(self._losses))
    updates = property(lambda self: list(self._updates))
    activity_regularizer = property(lambda self: self._activity_regularizer)

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    # -- building ---------------------------------------------------------------------
    def build(self, input_shape: TensorShape) -> None:
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def add_weight(self, name: str, shape, dtype=None, initializer=None, regularizer=None,
                   trainable: bool = True, constraint=None, **kwargs):
        """`tf.get_variable(name, ...)` in the layer's scope; the regularizer's loss is
        added (once, when the variable is created) to ``REGULARIZATION_LOSSES``."""
        scope = self._current_scope
        full_name = f"{scope.name}/{name}" if scope.name else name
        existed = full_name in vs._var_store()._vars
        var = vs.get_variable(name, shape=shape, dtype=dtype or self._dtype or _dtypes.float32,
                              initializer=initializer, trainable=trainable and self.trainable,
                              constraint=constraint, **kwargs)
        if trainable and self.trainable:
            self._trainable_weights.append(var)
        else:
            self._non_trainable_weights.append(var)
        if regularizer is not None and not existed:
            with name_scope(f"{name}/Regularizer"):
                loss = regularizer(var)
            if loss is not None:
                self.add_loss(loss)
        return var

    def add_loss(self, loss) -> None:
        self._losses.append(loss)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, update) -> None:
        """Record a state update (an op, or a tensor whose op is recorded)."""
        self._updates.append(update.op if isinstance(update, Tensor) else update)

    # -- calling ----------------------------------------------------------------------
    def _set_scope(self) -> None:
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(self._base_name) as captured:
                    self._scope = captured
            else:
                with vs.variable_scope(None, default_name=self._base_name) as captured:
                    self._scope = captured

    def __call__(self, inputs, *args, **kwargs):
        self._set_scope()
        reuse = True if self.built else self._reuse
        n_updates = len(self._updates)
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as sc:
            self._current_scope = sc
            with name_scope(sc.original_name_scope):
                inputs = self._convert_inputs(inputs)
                assert_input_compatibility(self.input_spec, inputs, self.name)
                if not self.built:
                    if self._dtype is None:
                        self._dtype = inputs.dtype.base_dtype
                    self.build(inputs.shape)
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    self._add_activity_loss(outputs)
        for update in self._updates[n_updates:]:
            add_to_collection(GraphKeys.UPDATE_OPS, update)
        return outputs

    apply = __call__

    def _convert_inputs(self, inputs) -> Tensor:
        t = convert_to_tensor(inputs)
        if self._dtype is not None and t.dtype.base_dtype != self._dtype and \
                t.dtype.base_dtype.is_floating:
            t = math_ops.cast(t, self._dtype)
        return t

    def _add_activity_loss(self, outputs) -> None:
        with name_scope("ActivityRegularizer"):
            loss = self._activity_regularizer(outputs)
            if loss is None:
                return
            batch = math_ops.cast(array_shape_ops.shape(outputs)[0], loss.dtype)
            self.add_loss(math_ops.truediv(loss, batch))

    def get_losses_for(self, inputs) -> list:
        return self.losses

    def get_updates_for(self, inputs) -> list:
        return self.updates


# -- Dense -----------------------------------------------------------------------------------
class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis of `inputs` (rank >= 2;
    leading axes are kept). See `dense`."""

    def __init__(self, units, activation=None, use_bias: bool = True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable: bool = True, name=None, **kwargs) -> None:
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, numbers.Integral) or units <= 0:
            raise ValueError(f"dense: `units` must be a positive integer, got {units!r}.")
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer or init_ops.zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    supports_masking = True
    _computes_output_shape = True

    def get_config(self) -> dict:
        return {**super().get_config(), "units": self.units,
                "activation": serialize_activation(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": _ser_init(self.kernel_initializer),
                "bias_initializer": _ser_init(self.bias_initializer),
                "kernel_regularizer": serialize_fn(self.kernel_regularizer),
                "bias_regularizer": serialize_fn(self.bias_regularizer),
                "activity_regularizer": serialize_fn(self.activity_regularizer),
                "kernel_constraint": serialize_fn(self.kernel_constraint),
                "bias_constraint": serialize_fn(self.bias_constraint)}

    def compute_output_shape(self, input_shape) -> TensorShape:
        shape = TensorShape(input_shape)
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"Shape {shape} must have rank at least 2")
        if shape.ndims is not None and shape[-1].value is None:
            raise ValueError(f"The last dimension of the input shape of a Dense layer "
                             f"should be defined. Found None. Received: "
                             f"input_shape={shape}")
        return super().compute_output_shape(shape)

    def build(self, input_shape) -> None:
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is not None and input_shape.ndims < 2:
            raise ValueError(f"Input 0 of layer {self._base_name} is incompatible with the "
                             f"layer: expected min_ndim=2, found ndim={input_shape.ndims}. "
                             f"Full shape received: {input_shape}")
        last = input_shape[-1].value if input_shape.ndims else None
        if last is None:
            raise ValueError(f"The last dimension of the inputs to `Dense` should be "
                             f"defined. Found `None` (input shape {input_shape}).")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight("kernel", [last, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units],
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"dense: the rank of the inputs must be known, got {inputs}.")
        if rank > 2:
            outputs = _contract_last_axis(inputs, self.kernel, self.units)
        else:
            outputs = math_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


def _contract_last_axis(inputs, kernel, units: int):
    """``tensordot(inputs, kernel, [[rank - 1], [0]])`` (TensorFlow's graph: one MatMul
    between reshapes), with the static shape ``inputs.shape[:-1] + [units]``."""
    shape = inputs.shape.as_list()
    outputs = tensordot(inputs, kernel, [[len(shape) - 1], [0]])
    outputs.set_shape([*shape[:-1], units])
    return outputs


def dense(inputs, units, activation=None, use_bias: bool = True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable: bool = True, name=None, reuse=None):
    """Densely connected layer: ``activation(inputs @ kernel + bias)``.

    Parameters
    ----------
    inputs : Tensor
        Rank >= 2, last dimension known; any batch size. Higher ranks contract the last
        axis (``[batch, time, in] -> [batch, time, units]``).
    units : int
        Output dimension.
    activation : callable or None
        E.g. ``tf.nn.relu``; None is linear.
    kernel_initializer : initializer
        Default: the variable scope's, else `glorot_uniform_initializer`.
    bias_initializer : initializer
        Default `zeros_initializer`.
    kernel_regularizer, bias_regularizer, activity_regularizer : callable
        Their losses go to ``GraphKeys.REGULARIZATION_LOSSES`` (the activity loss is
        divided by the batch size).
    name, reuse :
        Variables are ``<name>/kernel`` and ``<name>/bias``; default names are ``dense``,
        ``dense_1``, ...; ``reuse=True`` shares the variables of an earlier call with the
        same name.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 5, 3])
    ...     y = tf.layers.dense(x, 4, name="proj")
    ...     print(y.shape, tf.global_variables()[0].name)
    (?, 5, 4) proj/kernel:0
    """
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                  trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


# -- Dropout -----------------------------------------------------------------------------
class Dropout(Layer):
    """Zero a `rate` fraction of the inputs and scale the rest by ``1 / (1 - rate)``
    while training. See `dropout`."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    supports_masking = True

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}

    def compute_output_shape(self, input_shape):
        return input_shape  # TF returns it as given (a tuple stays a tuple)

    def _noise_shape(self, inputs):
        if self.noise_shape is None:
            return array_shape_ops.shape(inputs)
        dims = list(self.noise_shape)
        if all(d is not None for d in dims):
            return dims
        dynamic = array_shape_ops.shape(inputs)
        parts = [dynamic[i] if d is None else d for i, d in enumerate(dims)]
        return array_join_ops.stack(parts)

    def _drop(self, inputs):
        rate = self.rate
        if isinstance(rate, numbers.Real) and not 0 <= rate < 1:
            raise ValueError(f"dropout: rate must be a scalar tensor or a float in the "
                             f"range [0, 1), got {rate}")
        # TensorFlow's layer calls tf.nn.dropout: the same ops ("dropout/SelectV2")
        noise_shape = None if self.noise_shape is None else self._noise_shape(inputs)
        return nn_impl.dropout(inputs, noise_shape=noise_shape, seed=self.seed, rate=rate)

    def call(self, inputs, training=False):
        if isinstance(self.rate, numbers.Real) and self.rate == 0:
            return array_ops.identity(inputs)  # TF's layer: no mask, no seed taken
        return smart_cond(training, lambda: self._drop(inputs),
                          lambda: array_ops.identity(inputs))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout: while `training`, each element is zeroed with probability `rate` and the
    others are scaled by ``1 / (1 - rate)``; otherwise the inputs pass unchanged.

    Parameters
    ----------
    rate : float in [0, 1)
        The fraction dropped (not TF's `keep_prob`).
    noise_shape : list of int or None
        Shape of the keep mask, broadcast over `inputs`; None entries take the input's
        dimension (e.g. ``[None, 1, None]`` drops whole time steps per channel).
    seed : int
        Op seed of the mask (with the graph seed, as for `tf.random_uniform`).
    training : bool or bool tensor
        Python bool: decided when the graph is built; tensor: decided at run time.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.ones([4, 1000])
    ...     y = tf.layers.dropout(x, rate=0.25, training=True, seed=3)
    ...     v = tf.Session().run(y)
    ...     print(np.unique(v.astype(float).round(3)).tolist(), abs(v.mean() - 1) < 0.05)
    [0.0, 1.333] True
    """
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


# -- Flatten -----------------------------------------------------------------------------
class Flatten(Layer):
    """Reshape to ``[batch, -1]``. See `flatten`."""

    def __init__(self, data_format=None, name=None, **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        self.data_format = normalize_data_format(data_format)

    _computes_output_shape = True

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format}

    def call(self, inputs):
        if self.data_format == "channels_first" and (inputs.shape.ndims or 0) > 2:
            rank = inputs.shape.ndims
            inputs = array_shape_ops.transpose(inputs, [0, *range(2, rank), 1])
        shape = inputs.shape
        if shape.ndims is not None and all(d is not None for d in shape.as_list()[1:]):
            rest = int(np.prod(shape.as_list()[1:])) if shape.ndims > 1 else 1
            outputs = array_shape_ops.reshape(inputs, [-1, rest])
        else:
            batch = array_shape_ops.shape(inputs)[:1]
            outputs = array_shape_ops.reshape(inputs, array_join_ops.concat([batch, [-1]], 0))
        if shape.ndims is not None:
            dims = shape.as_list()
            rest = None if any(d is None for d in dims[1:]) else int(np.prod(dims[1:]))
            outputs.set_shape([dims[0] if dims else None, rest])
        return outputs


def flatten(inputs, name=None, data_format="channels_last"):
    """Flatten all but the first (batch) dimension: ``[N, d1, d2, ...] -> [N, d1*d2*...]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.layers.flatten(tf.placeholder(tf.float32, [None, 2, 3, 4])).shape)
    (?, 24)
    """
    return Flatten(data_format=data_format, name=name).apply(inputs)

