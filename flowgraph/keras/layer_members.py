"""The Keras `Layer` members beyond building and calling, as TF 2.15's graph mode has them:
the dtype policy, the functional-API node accessors (`get_input_at`, `inbound_nodes`,
`outbound_nodes`, `input_mask`, ...), `submodules`, `compute_output_shape` and the
`tf.Module` name-scope members (which a Keras layer in graph mode does not support).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input(shape=(3,))
...     dense = keras.layers.Dense(2, name="d")
...     y = dense(x)
...     print(dense.get_input_shape_at(0), dense.get_output_shape_at(0),
...           dense.dtype_policy.name, len(dense.inbound_nodes))
(None, 3) (None, 2) float32 1
"""

from __future__ import annotations

import functools
import itertools

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import graph as _graph
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers.layer_api import Policy

__all__ = ["ADDED_METRICS", "LayerMembersMixin", "Policy", "metric_mark"]

# every `add_metric` entry is numbered, so a model can tell the entries one of its calls
# made (the training call's, the inference call's) from the others
_METRIC_SEQUENCE = itertools.count(1)


# whether any layer has called `add_metric` in this process (models skip the walk over
# their layers until one has)
ADDED_METRICS = [False]


def metric_mark() -> int:
    """A number below every `add_metric` entry made from now on."""
    return next(_METRIC_SEQUENCE)


def _to_list(x) -> list:
    return list(x) if isinstance(x, list | tuple) else [x]


def _one_or_list(values: list):
    return values[0] if len(values) == 1 else values


def _shape_tuple(t):
    return tuple(t.shape.as_list()) if t.shape.ndims is not None else None


class LayerMembersMixin:
    """Mixed into `flowgraph.keras.layers.Layer`; relies on its ``_name``, ``_dtype``,
    ``_inbound_nodes``, ``input`` and ``get_config`` / ``from_config``."""

    # -- name, trainable, activity regularizer: class-level properties --------------------
    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value) -> None:
        raise AttributeError(f'Can\'t set the attribute "name" of layer {self._name!r}: it '
                             f"is a read-only property; give the name to the constructor.")

    @property
    def trainable(self) -> bool:
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value) -> None:
        self._trainable = bool(value)

    @property
    def activity_regularizer(self):
        return self.__dict__.get("_activity_regularizer")

    @activity_regularizer.setter
    def activity_regularizer(self, value) -> None:
        self._activity_regularizer = value

    @property
    def non_trainable_variables(self) -> list:
        return self.non_trainable_weights

    def add_variable(self, *args, **kwargs):
        """`add_weight` (TF's deprecated alias)."""
        return self.add_weight(*args, **kwargs)

    # -- dtypes ----------------------------------------------------------------------------
    @property
    def dtype_policy(self) -> Policy:
        """`Policy('_infer')` until the layer knows its dtype (given, or its first
        input's), then a policy of that dtype."""
        return Policy("_infer" if self._dtype is None else self._dtype.name)

    @property
    def compute_dtype(self):
        return None if self._dtype is None else self._dtype.name

    variable_dtype = compute_dtype
    dynamic = property(lambda self: False)  # graph-mode layers never need eager calls

    @property
    def stateful(self) -> bool:
        return self.__dict__.get("_stateful", False)

    @stateful.setter
    def stateful(self, value) -> None:
        self._stateful = bool(value)

    # -- metrics ------------------------------------------------------------------------------
    def add_metric(self, value, name=None, aggregation=None, **kwargs) -> None:
        """Report the mean of `value` (``aggregation='mean'``) as metric `name` in a model's
        `metrics_names`, `fit` logs and `evaluate` results: a scalar counts once per
        batch, a per-example tensor once per example, as a Keras `Mean` does."""
        if kwargs:
            raise TypeError(f"add_metric: unexpected keyword argument(s) {sorted(kwargs)}")
        if aggregation is not None and aggregation != "mean":
            raise ValueError(f"We currently support only `mean` sample-wise metric "
                             f"aggregation. You provided aggregation=`{aggregation}`")
        if aggregation is None:
            raise ValueError(
                "We do not support adding an aggregated metric result tensor that is not the "
                "output of a `tf.keras.metrics.Metric` metric instance (flowgraph: pass "
                "the per-batch value with aggregation='mean'). For example: "
                "`self.add_metric(tf.reduce_sum(inputs), name='mean_activation', "
                "aggregation='mean')`")
        if not name:
            raise ValueError("Please provide a name for your metric like "
                             "`self.add_metric(tf.reduce_sum(inputs), name='mean_activation', "
                             "aggregation='mean')`")
        from flowgraph.framework.constant_op import convert_to_tensor
        from flowgraph.ops import math_ops, math_reduce

        value = convert_to_tensor(value)
        # a per-example tensor (unknown leading dimension) weighs by the batch's size
        by_size = value.shape.ndims is not None and value.shape.ndims > 0 and \
            value.shape[0].value is None
        mean = math_reduce.reduce_mean(math_ops.cast(value, _dtypes.float32))
        self.__dict__.setdefault("_added_metrics", []).append(
            (metric_mark(), str(name), mean, by_size))
        ADDED_METRICS[0] = True

    # -- the tf.Module members --------------------------------------------------------------
    @property
    def name_scope(self):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                             f"'_scope_name': a Keras layer in graph mode has no tf.Module "
                             f"name scope; open one with `tf.name_scope({self.name!r})`.")

    @classmethod
    def with_name_scope(cls, method):
        """Decorate `method` to run inside ``self.name_scope`` (which a Keras layer in graph
        mode does not have: the call raises, as in TF 2.15)."""

        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapped

    @property
    def submodules(self):
        """Every layer reachable from this one's attributes, each once: those held
        directly (attributes in name order), then theirs, as `tf.Module` walks them."""
        return tuple(_walk_submodules(self, _children_by_attribute))

    # -- nodes ------------------------------------------------------------------------------
    inbound_nodes = property(lambda self: list(self._inbound_nodes))
    outbound_nodes = property(lambda self: list(self.__dict__.get("_outbound_nodes", [])))

    def _node_at(self, node_index: int, what: str):
        nodes = self._inbound_nodes
        if not nodes:
            raise RuntimeError(f"The layer has never been called and thus has no defined "
                               f"{what}.")
        if not 0 <= node_index < len(nodes):
            raise ValueError(f"Asked to get {what} at node {node_index}, but the layer has "
                             f"only {len(nodes)} inbound nodes.")
        return nodes[node_index]

    def get_input_at(self, node_index: int):
        return _one_or_list(self._node_at(node_index, "input").input_tensors)

    def get_output_at(self, node_index: int):
        return _one_or_list(self._node_at(node_index, "output").output_tensors)

    def get_input_shape_at(self, node_index: int):
        tensors = self._node_at(node_index, "input shape").input_tensors
        return _one_or_list([_shape_tuple(t) for t in tensors])

    def get_output_shape_at(self, node_index: int):
        tensors = self._node_at(node_index, "output shape").output_tensors
        return _one_or_list([_shape_tuple(t) for t in tensors])

    def get_input_mask_at(self, node_index: int):
        tensors = self._node_at(node_index, "input").input_tensors
        return _one_or_list([getattr(t, "_keras_mask", None) for t in tensors])

    def get_output_mask_at(self, node_index: int):
        tensors = self._node_at(node_index, "output").output_tensors
        return _one_or_list([getattr(t, "_keras_mask", None) for t in tensors])

    @property
    def input_mask(self):
        return _one_or_list([getattr(t, "_keras_mask", None) for t in _to_list(self.input)])

    @property
    def output_mask(self):
        return _one_or_list([getattr(t, "_keras_mask", None) for t in _to_list(self.output)])

    # -- shapes -------------------------------------------------------------------------------
    def compute_output_shape(self, input_shape):
        """The output shape for inputs of `input_shape`: a copy of the layer (from its
        config) called on a placeholder in a scratch graph, so nothing is added to the
        caller's graph. A layer subclassed outside flowgraph must override it (TF 2.15's
        graph mode raises NotImplementedError for it too)."""
        if not type(self).__module__.startswith("flowgraph.") or \
                type(self).__name__ == "Layer":
            raise NotImplementedError(
                f"{type(self).__name__}.compute_output_shape is not defined in graph mode: "
                f"override it in the subclass.")
        from flowgraph.ops import array_ops

        shapes = input_shape if _is_shape_list(input_shape) else None
        with _graph.Graph().as_default():
            copy = self._scratch_copy()
            dtype = self._dtype or _dtypes.float32
            if shapes is not None:
                x = [array_ops.placeholder(dtype, TensorShape(s)) for s in shapes]
            else:
                x = array_ops.placeholder(dtype, TensorShape(input_shape))
            outputs = [TensorShape(t.shape) for t in _to_list(copy(x))]
        return _one_or_list(outputs)

    def _scratch_copy(self):
        return type(self).from_config(self.get_config())


def _is_shape_list(shape) -> bool:
    """Whether `shape` is a list of shapes (several inputs) rather than one shape."""
    return isinstance(shape, list | tuple) and len(shape) > 0 and \
        all(isinstance(s, list | tuple | TensorShape) for s in shape)


def _children_by_attribute(layer) -> list:
    found = []
    for key in sorted(vars(layer)):
        value = vars(layer)[key]
        items = value.values() if isinstance(value, dict) else \
            value if isinstance(value, list | tuple) else [value]
        found.extend(item for item in items if isinstance(item, LayerMembersMixin))
    return found


def _walk_submodules(root, children_of) -> list:
    seen, out = {id(root)}, []

    def walk(layer):
        direct = []
        for child in children_of(layer):
            if id(child) not in seen:
                seen.add(id(child))
                out.append(child)
                direct.append(child)
        for child in direct:
            walk(child)

    walk(root)
    return out
