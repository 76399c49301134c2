"""TF 1.x's first feature-column layers in `tf.contrib.layers`:
`input_from_feature_columns` (the dense input of a DNN), `weighted_sum_from_feature_columns`
(a linear model) and `safe_embedding_lookup_sparse`.

They take the columns of `tf.contrib.layers` (`real_valued_column`, ...) or of
`tf.feature_column`, and compute what `tf.feature_column.input_layer` and `linear_model`
compute, inside a scope named as TF 1.x's (``input_from_feature_columns``,
``weighted_sum_from_feature_columns``). The variables below that scope are named as
`tf.feature_column`'s layers name them, which is not TF 1.x's contrib layout: a checkpoint
written by TF 1.x's contrib layers needs a name map (`tf.train.init_from_checkpoint`).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     price = tf.contrib.layers.real_valued_column("price", dimension=2)
...     dense = tf.contrib.layers.input_from_feature_columns(
...         {"price": tf.constant([[1.0, 2.0]])}, [price])
...     print(dense.shape.as_list(), tf.Session().run(dense).tolist())
[1, 2] [[1.0, 2.0]]
"""

from __future__ import annotations

from flowgraph.feature_column.feature_column import input_layer, linear_model
from flowgraph.ops.embedding_ops import safe_embedding_lookup_sparse as _safe_lookup
from flowgraph.ops.variable_scope import variable_scope

__all__ = ["input_from_feature_columns", "safe_embedding_lookup_sparse",
           "weighted_sum_from_feature_columns"]


def input_from_feature_columns(columns_to_tensors, feature_columns, weight_collections=None,
                               trainable=True, scope=None, cols_to_outs=None):
    """The ``[batch, width]`` dense input the columns make of `columns_to_tensors` (a dict
    of feature name to tensor), the columns in the order of their names."""
    with variable_scope(scope, default_name="input_from_feature_columns",
                        values=list(columns_to_tensors.values())):
        return input_layer(columns_to_tensors, feature_columns,
                           weight_collections=weight_collections, trainable=trainable,
                           cols_to_output_tensors=cols_to_outs)


def weighted_sum_from_feature_columns(columns_to_tensors, feature_columns, num_outputs,
                                      weight_collections=None, trainable=True, scope=None):
    """A linear model of the columns: ``(predictions [batch, num_outputs],
    {column: [its weight variables]}, bias variable)``."""
    with variable_scope(scope, default_name="weighted_sum_from_feature_columns",
                        values=list(columns_to_tensors.values())):
        column_to_variables = {}
        predictions = linear_model(columns_to_tensors, feature_columns, units=num_outputs,
                                   weight_collections=weight_collections,
                                   trainable=trainable, cols_to_vars=column_to_variables)
    bias = column_to_variables.pop("bias")
    return predictions, column_to_variables, bias[0] if isinstance(bias, list) else bias


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner=None, default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """`tf.nn.safe_embedding_lookup_sparse` with TF 1.x contrib's default: no `combiner`
    means ``"mean"``."""
    return _safe_lookup(embedding_weights, sparse_ids, sparse_weights=sparse_weights,
                        combiner="mean" if combiner is None else combiner,
                        default_id=default_id, name=name,
                        partition_strategy=partition_strategy, max_norm=max_norm)
