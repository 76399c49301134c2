"""`DenseFeatures`: feature columns as a Keras layer (what `tf.feature_column.input_layer`
computes, with the columns' variables under the layer's name:
``dense_features/color_embedding/embedding_weights``). Re-exported by
`flowgraph.keras.layers`.

Called on a dict ``{feature name: tensor}``; in a functional model the dict's Keras
tensors are the layer's inputs (in key order), so ``Model(list(inputs.values()), ...)``
traces through it.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> fc = tf.feature_column
>>> with tf.Graph().as_default():
...     layer = keras.layers.DenseFeatures([fc.numeric_column("a"), fc.numeric_column("b")])
...     y = layer({"a": tf.constant([[1.0]]), "b": tf.constant([[2.0]])})
...     print(tf.Session().run(y))
[[1. 2.]]
"""

from __future__ import annotations

from collections.abc import Mapping

from flowgraph.feature_column.feature_column import (
    _collections,
    _DenseColumn,
    _normalize_feature_columns,
    dense_columns_tensor,
)
from flowgraph.framework.graph import get_default_graph
from flowgraph.keras.layers import Layer, is_keras_tensor
from flowgraph.ops.variable_scope import variable_scope

__all__ = ["DenseFeatures"]


class DenseFeatures(Layer):
    """The dense tensor ``[batch, sum of column widths]`` of `feature_columns` (numeric,
    bucketized, indicator, embedding columns), columns in name order."""

    def __init__(self, feature_columns, trainable: bool = True, name=None, partitioner=None,
                 **kwargs) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        columns = _normalize_feature_columns(feature_columns)
        for column in columns:
            if not isinstance(column, _DenseColumn):
                raise ValueError(f"Items of feature_columns must be a DenseColumn. You can "
                                 f"wrap a categorical column with an embedding_column or "
                                 f"indicator_column. Given: {column}")
        if partitioner is not None:
            raise NotImplementedError("DenseFeatures(partitioner=...) is not supported by "
                                      "flowgraph.")
        self._feature_columns = columns
        self._keys: list | None = None

    def get_config(self) -> dict:
        raise NotImplementedError(
            f"DenseFeatures ({self.name}): flowgraph's feature columns have no config "
            f"serialization; save the weights (`save_weights`) and rebuild the model in code.")

    def __call__(self, inputs, **kwargs):
        if not isinstance(inputs, Mapping):
            raise ValueError(f"We expected a dictionary here. Instead we got: {inputs!r}")
        keys = sorted(inputs)
        values = [inputs[k] for k in keys]
        if all(is_keras_tensor(v) for v in values):
            # a functional model's node: the dict's tensors, in key order
            self._keys = keys
            return super().__call__(values, **kwargs)
        self._keys = None
        return self._invoke_features(dict(inputs))

    def _invoke_features(self, features: dict):
        graph = get_default_graph()
        if self._graph is not None and self._graph is not graph:
            raise ValueError(f"Layer '{self.name}' was built in another graph.")
        self._graph = graph
        cols_to_vars: dict = {}
        # the columns' variables under the layer's name, created on the first call
        scope = self.name if not self.built else self._var_scope
        with variable_scope(scope, reuse=True if self.built else None) as vs:
            self._var_scope = vs
            out = dense_columns_tensor(features, self._feature_columns, _collections(None),
                                       trainable=self.trainable, cols_to_vars=cols_to_vars)
        if not self.built:
            self.built = True
            for column in sorted(cols_to_vars, key=lambda c: c.name):
                for var in cols_to_vars[column]:
                    target = self._trainable_weights if var.trainable else \
                        self._non_trainable_weights
                    if all(var is not w for w in target):
                        target.append(var)
        return out

    def _invoke(self, inputs, kwargs):
        if isinstance(inputs, Mapping):
            return self._invoke_features(dict(inputs))
        if self._keys is None or not isinstance(inputs, list | tuple):
            raise ValueError(f"DenseFeatures ({self.name}) is called on a dict of features.")
        return self._invoke_features(dict(zip(self._keys, inputs, strict=True)))
