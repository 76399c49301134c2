"""Sequence feature columns (TF 1.15's ``tf.feature_column.sequence_*`` and
``tf.contrib.feature_column.sequence_input_layer``): per-time-step features of variable
length, such as the words of a sentence, for RNNs.

A sequence categorical column reads a SparseTensor ``[batch, max_len]`` of ids (or
strings) like its non-sequence twin; a sequence numeric column a SparseTensor of
``[batch, max_len * prod(shape)]`` values. Wrapped in `embedding_column` or
`indicator_column`, they are consumed by `sequence_input_layer`, which returns
``(input_layer [batch, max_len, sum of dims], sequence_length [batch])``: step ``t`` of
example ``b`` holds the embedding (or one-hot vector, or values) of its ``t``-th element,
zeros past its length. (`tf.feature_column.input_layer` has no time axis: use
`sequence_input_layer` for them.)

Example
-------
>>> import flowgraph as tf
>>> fc = tf.feature_column
>>> words = fc.sequence_categorical_column_with_identity("words", num_buckets=5)
>>> ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 4, 2], tf.int64), [2, 2])
>>> layer, length = tf.contrib.feature_column.sequence_input_layer(
...     {"words": ids}, [fc.indicator_column(words)])
>>> with tf.Session() as sess:
...     print(sess.run(length).tolist(), sess.run(layer).shape)
[2, 1] (2, 2, 5)
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.parsing_ops import VarLenFeature
from flowgraph.ops.segment_ops import unsorted_segment_max
from flowgraph.ops.sparse_ops import sparse_tensor_to_dense
from flowgraph.ops.variable_scope import get_variable, variable_scope

from .feature_column import _CategoricalColumn, _FeatureColumn, _LazyBuilder
from .feature_column_categorical import (
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
)
from .feature_column_dense import EmbeddingColumn, IndicatorColumn, _restore

__all__ = ["concatenate_context_input", "sequence_categorical_column_with_hash_bucket",
           "sequence_categorical_column_with_identity",
           "sequence_categorical_column_with_vocabulary_file",
           "sequence_categorical_column_with_vocabulary_list", "sequence_input_layer",
           "sequence_numeric_column"]


class SequenceCategoricalColumn(
        _CategoricalColumn,
        collections.namedtuple("SequenceCategoricalColumn", ["categorical_column"])):
    """A categorical column whose ids are a sequence per example (keeps their order)."""

    _is_sequence = True

    @property
    def name(self) -> str:
        return self.categorical_column.name

    @property
    def _parse_example_spec(self) -> dict:
        return self.categorical_column._parse_example_spec

    @property
    def _num_buckets(self) -> int:
        return self.categorical_column._num_buckets

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return self.categorical_column._get_sparse_tensors(inputs, weight_collections,
                                                           trainable)


def _sequence(column):
    return SequenceCategoricalColumn(column)


def sequence_categorical_column_with_identity(key, num_buckets, default_value=None):
    """`categorical_column_with_identity` for a sequence of integer ids per example."""
    return _sequence(categorical_column_with_identity(key, num_buckets, default_value))


def sequence_categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=_dtypes.string):
    """`categorical_column_with_hash_bucket` for a sequence of values per example."""
    return _sequence(categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


def sequence_categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                                     default_value=-1, num_oov_buckets=0):
    """`categorical_column_with_vocabulary_list` for a sequence of values per example."""
    return _sequence(categorical_column_with_vocabulary_list(
        key, vocabulary_list, dtype, default_value, num_oov_buckets))


def sequence_categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                                     num_oov_buckets=0, default_value=None,
                                                     dtype=_dtypes.string):
    """`categorical_column_with_vocabulary_file` for a sequence of values per example."""
    return _sequence(categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, default_value, dtype))


class SequenceNumericColumn(
        _FeatureColumn,
        collections.namedtuple("SequenceNumericColumn",
                               ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    def _transform_feature(self, inputs):
        value = inputs.get(self.key)
        if not isinstance(value, SparseTensor):
            raise ValueError(f"sequence_numeric_column '{self.key}' needs a SparseTensor "
                             f"feature (e.g. VarLenFeature), got a dense {value.shape}")
        if self.normalizer_fn is not None:
            value = SparseTensor(value.indices, self.normalizer_fn(value.values),
                                 value.dense_shape)
        return value


def sequence_numeric_column(key, shape=(1,), default_value=0.0, dtype=_dtypes.float32,
                            normalizer_fn=None):
    """A sequence of real values (each of `shape`) per example; padding past an example's
    length is `default_value`.

    Example
    -------
    >>> import flowgraph as tf
    >>> col = tf.feature_column.sequence_numeric_column("temps", shape=(2,))
    >>> col.parse_example_spec["temps"].dtype.name
    'float32'
    """
    shape = tuple(int(d) for d in shape)
    if any(d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be greater than 0, got {shape}")
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError(f"dtype must be convertible to float, got {dtype.name}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable, got {normalizer_fn!r}")
    return SequenceNumericColumn(key, shape, default_value, dtype, normalizer_fn)


def _steps(sparse, per_step):
    """``[batch]`` lengths: the last used position + 1 (in steps of `per_step` values)."""
    batch = sparse.dense_shape[0]
    last = unsorted_segment_max(sparse.indices[:, 1] + 1, sparse.indices[:, 0], batch)
    last = math_ops.maximum(last, 0)  # an empty row's maximum is the dtype's lowest
    return math_ops.cast((last + per_step - 1) // per_step, _dtypes.int64)


def _dense_sequence(column, builder, trainable):
    """``(values [batch, max_len, d], lengths [batch])`` of one sequence dense column."""
    if isinstance(column, SequenceNumericColumn):
        sparse = builder.get(column)
        per_step = 1
        for d in column.shape:
            per_step *= d
        dense = sparse_tensor_to_dense(sparse, default_value=math_ops.cast(
            column.default_value, sparse.dtype.base_dtype), validate_indices=False)
        values = array_ops.reshape(math_ops.cast(dense, _dtypes.float32), [
            array_ops.shape(dense)[0], -1, per_step])
        return values, _steps(sparse, per_step)
    inner = getattr(column, "categorical_column", None)
    if not isinstance(inner, SequenceCategoricalColumn):
        raise ValueError(f"sequence_input_layer: column '{column.name}' must be a sequence "
                         "numeric column, or an embedding_column / indicator_column of a "
                         "sequence categorical column")
    ids = inner._get_sparse_tensors(builder).id_tensor
    dense_ids = sparse_tensor_to_dense(ids, default_value=-1, validate_indices=False)
    lengths = _steps(ids, 1)
    n = inner._num_buckets
    # [batch, steps, k] ids hold several ids per step: combined per step, as TF 1.x does.
    multi = ids.indices.shape.rank == 2 and ids.indices.shape[1] == 3
    if isinstance(column, IndicatorColumn):
        hot = array_ops.one_hot(dense_ids, n, on_value=1.0, off_value=0.0)
        return (math_reduce.reduce_sum(hot, axis=-2) if multi else hot), lengths
    if isinstance(column, EmbeddingColumn):
        with variable_scope(None, default_name=column.name):
            table = get_variable("embedding_weights", shape=[n, column.dimension],
                                 dtype=_dtypes.float32, initializer=column.initializer,
                                 trainable=column.trainable and trainable)
        _restore(column, table)
        valid = math_ops.logical_and(math_ops.greater_equal(dense_ids, 0),
                                     math_ops.less(dense_ids, n))
        rows = array_ops.gather(table, math_ops.maximum(math_ops.minimum(dense_ids, n - 1),
                                                        0))
        rows = rows * array_ops.expand_dims(math_ops.cast(valid, _dtypes.float32), -1)
        if multi:
            rows = _combine_step(rows, valid, column.combiner)
        return rows, lengths
    raise ValueError(f"sequence_input_layer: unsupported column '{column.name}' "
                     f"({type(column).__name__})")


def _combine_step(rows, valid, combiner):
    """``[batch, steps, k, d]`` looked-up rows -> ``[batch, steps, d]`` by `combiner`; a
    step without valid ids gives zeros."""
    total = math_reduce.reduce_sum(rows, axis=-2)
    if combiner == "sum":
        return total
    count = math_reduce.reduce_sum(math_ops.cast(valid, _dtypes.float32), axis=-1, keepdims=True)
    if combiner == "sqrtn":
        count = math_ops.sqrt(count)
    return total / math_ops.maximum(count, 1.0)


def sequence_input_layer(features, feature_columns, weight_collections=None, trainable=True):
    """The sequence columns of `features` as one ``[batch, max_len, sum of dims]`` tensor
    (columns in sorted name order) and the ``[batch]`` sequence lengths; every column must
    give the same lengths.

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> temps = fc.sequence_numeric_column("t")
    >>> value = tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], [1.0, 2.0, 3.0], [2, 2])
    >>> layer, n = tf.contrib.feature_column.sequence_input_layer({"t": value}, [temps])
    >>> with tf.Session() as sess:
    ...     print(sess.run(layer)[:, :, 0].tolist(), sess.run(n).tolist())
    [[1.0, 2.0], [3.0, 0.0]] [2, 1]
    """
    del weight_collections
    columns = sorted(feature_columns, key=lambda c: c.name)
    if not columns:
        raise ValueError("sequence_input_layer: feature_columns must not be empty")
    builder = _LazyBuilder(features)
    with variable_scope(None, default_name="sequence_input_layer"):
        outputs, lengths = [], []
        for column in columns:
            with name_scope(None, column.name):
                values, length = _dense_sequence(column, builder, trainable)
            outputs.append(values)
            lengths.append(length)
        if len(lengths) > 1:
            from flowgraph.ops.check_ops import assert_equal

            checks = [assert_equal(lengths[0], other, message="sequence_input_layer: "
                                   "columns have different sequence lengths")
                      for other in lengths[1:]]
            from flowgraph.framework.graph import control_dependencies

            with control_dependencies(checks):
                lengths[0] = array_ops.identity(lengths[0])
        layer = outputs[0] if len(outputs) == 1 else array_ops.concat(outputs, -1)
        return layer, lengths[0]


def concatenate_context_input(context_input, sequence_input):
    """Appends the per-example `context_input` ``[batch, d]`` to every step of
    `sequence_input` ``[batch, steps, e]``: ``[batch, steps, e + d]`` (both float32).

    Example
    -------
    >>> import flowgraph as tf
    >>> seq = tf.zeros([2, 3, 4])
    >>> tf.contrib.feature_column.concatenate_context_input(tf.ones([2, 5]), seq).shape
    TensorShape([Dimension(2), Dimension(3), Dimension(9)])
    """
    for what, t, rank in (("sequence_input", sequence_input, 3),
                          ("context_input", context_input, 2)):
        if t.shape.rank is not None and t.shape.rank != rank:
            raise ValueError(f"concatenate_context_input: {what} must have rank {rank}, "
                             f"got shape {t.shape}")
        if t.dtype.base_dtype != _dtypes.float32:
            raise TypeError(f"concatenate_context_input: {what} must have dtype float32, "
                            f"got {t.dtype.name}")
    steps = array_ops.shape(sequence_input)[1]
    tiled = array_ops.tile(array_ops.expand_dims(context_input, 1),
                           array_ops.concat([[1], [steps], [1]], 0))
    return array_ops.concat([sequence_input, tiled], 2)
