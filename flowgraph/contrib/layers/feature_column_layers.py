"""TF 1.x's first feature-column layers in `tf.contrib.layers`:
`input_from_feature_columns` (the dense input of a DNN), `weighted_sum_from_feature_columns`
(a linear model), `joint_weighted_sum_from_feature_columns` (a linear model of sparse
columns with one weight table for all) and `safe_embedding_lookup_sparse`.

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

from flowgraph.contrib.framework.variables import model_variable
from flowgraph.feature_column.feature_column import (
    _CategoricalColumn,
    _LazyBuilder,
    input_layer,
    linear_model,
)
from flowgraph.framework import dtypes
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import array_ops, math_ops, nn_ops, sparse_ops
from flowgraph.ops.embedding_ops import safe_embedding_lookup_sparse as _safe_lookup
from flowgraph.ops.init_ops import zeros_initializer
from flowgraph.ops.variable_scope import variable_scope

__all__ = ["input_from_feature_columns", "joint_weighted_sum_from_feature_columns",
           "safe_embedding_lookup_sparse", "weighted_sum_from_feature_columns"]


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


def joint_weighted_sum_from_feature_columns(columns_to_tensors, feature_columns,
                                            num_outputs, weight_collections=None,
                                            trainable=True, scope=None):
    """A linear model of sparse columns that keeps one ``weights`` table for all of them:
    ``(predictions [batch, num_outputs], [weights], bias_weight)``.

    Each column's ids are shifted past the buckets of the columns before it (in the order
    of their names), the shifted ids of an example are concatenated, and the example's
    prediction is the sum of their rows of the ``[total buckets, num_outputs]`` table plus
    the bias: the same value as `weighted_sum_from_feature_columns` with per-column
    tables, in one lookup. Only categorical columns without weights are accepted (a
    real-valued column has no ids: bucketize it).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     color = tf.contrib.layers.sparse_column_with_keys("color", ["r", "g"])
    ...     pred, weights, bias = tf.contrib.layers.joint_weighted_sum_from_feature_columns(
    ...         {"color": tf.constant([["g"], ["r"]])}, [color], num_outputs=1)
    ...     print(weights[0].name, weights[0].shape.as_list(), pred.shape.as_list())
    joint_weighted_sum_from_feature_columns/weights:0 [2, 1] [2, 1]
    """
    with variable_scope(scope, default_name="joint_weighted_sum_from_feature_columns",
                        values=list(columns_to_tensors.values())):
        builder = _LazyBuilder(columns_to_tensors)
        pieces, offset = [], 0
        for column in sorted(set(feature_columns), key=lambda c: c.name):
            if not isinstance(column, _CategoricalColumn):
                raise NotImplementedError(
                    f"joint_weighted_sum_from_feature_columns: column {column.name!r} is "
                    f"not a sparse (categorical) column; use "
                    f"weighted_sum_from_feature_columns for real-valued columns, or "
                    f"bucketize them")
            pair = column._get_sparse_tensors(builder, weight_collections=weight_collections,
                                              trainable=trainable)
            if pair.weight_tensor is not None:
                raise NotImplementedError(
                    f"joint_weighted_sum_from_feature_columns: column {column.name!r} has "
                    f"weights per id; use weighted_sum_from_feature_columns")
            ids = pair.id_tensor
            ids = sparse_ops.sparse_reshape(ids, array_ops.stack([ids.dense_shape[0], -1]))
            values = math_ops.cast(ids.values, dtypes.int64)
            if offset:
                values = values + offset
            pieces.append(SparseTensor(ids.indices, values, ids.dense_shape))
            offset += column._num_buckets
        weights = model_variable("weights", shape=[offset, num_outputs],
                                 initializer=zeros_initializer(), trainable=trainable,
                                 collections=weight_collections)
        joint = pieces[0] if len(pieces) == 1 else sparse_ops.sparse_concat(1, pieces)
        no_bias = _safe_lookup(weights, joint, combiner="sum", name="_weights")
        bias = model_variable("bias_weight", shape=[num_outputs],
                              initializer=zeros_initializer(), trainable=trainable,
                              collections=weight_collections)
        predictions = nn_ops.bias_add(no_bias, bias)
    return predictions, [weights], bias


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner=None, default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """`tf.nn.safe_embedding_lookup_sparse` with TF 1.x contrib's default: no `combiner`
    means ``"mean"``."""
    return _safe_lookup(embedding_weights, sparse_ids, sparse_weights=sparse_weights,
                        combiner="mean" if combiner is None else combiner,
                        default_id=default_id, name=name,
                        partition_strategy=partition_strategy, max_norm=max_norm)
