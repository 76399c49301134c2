"""Dense feature columns: features that become float tensors [batch, d].

    numeric            the value itself (optionally normalized), d = prod(shape)
    bucketized         one-hot of the bucket of each value, d = prod(shape) * (len(b) + 1);
                       also categorical (ids bucket + i * (len(b) + 1) for element i)
    indicator          multi-hot (or weight-sum) over a categorical column's ids
    embedding          the combined embedding rows of a categorical column's ids
    shared embedding   embeddings of several categorical columns from one table

Embedding tables are variables ``<scope>/<column>_embedding/embedding_weights``
(shared: ``<scope>/<a>_<b>_shared_embedding/embedding_weights``), read with
`safe_embedding_lookup_sparse` so their gradients are `IndexedSlices`.

Example
-------
>>> import flowgraph as tf
>>> fc = tf.feature_column
>>> fc.embedding_column(fc.categorical_column_with_hash_bucket("q", 1000), 8).name
'q_embedding'
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import add_to_collection, get_collection
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.embedding_ops import embedding_lookup_sparse, safe_embedding_lookup_sparse
from flowgraph.ops.init_ops import truncated_normal_initializer
from flowgraph.ops.parsing_ops import FixedLenFeature
from flowgraph.ops.sparse_ops import bucketize, sparse_tensor_to_dense
from flowgraph.ops.variable_scope import get_variable

from .feature_column import _CategoricalColumn, _DenseColumn

__all__ = [
    "bucketized_column",
    "embedding_column",
    "indicator_column",
    "numeric_column",
    "shared_embedding_columns",
]


# -- numeric ------------------------------------------------------------------------------
class NumericColumn(
        _DenseColumn,
        collections.namedtuple("NumericColumn", ["key", "shape", "default_value", "dtype",
                                                  "normalizer_fn"])):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(self.shape)

    def _transform_feature(self, inputs):
        t = inputs.get(self.key)
        if isinstance(t, SparseTensor):
            raise ValueError(
                f"The corresponding Tensor of numerical column must be a Tensor. "
                f"SparseTensor is not supported. key: {self.key}. {self._where()} expects "
                f"a dense [batch, {', '.join(map(str, self.shape))}] value, but feature "
                f"'{self.key}' is sparse (a SparseTensor, or a ragged list whose rows have "
                f"different lengths). Pad every row to shape {list(self.shape)}, or use a "
                f"categorical column for variable-length features.")
        if not (t.dtype.is_floating or t.dtype.is_integer or t.dtype.base_dtype ==
                _dtypes.bool):
            raise ValueError(f"{self._where()}: feature '{self.key}' has dtype "
                             f"{t.dtype.name}; a numeric column needs numbers.")
        if self.normalizer_fn is not None:
            t = self.normalizer_fn(t)
        return math_ops.cast(t, _dtypes.float32)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return inputs.get(self)


def numeric_column(key: str, shape=(1,), default_value=None, dtype=_dtypes.float32,
                   normalizer_fn=None):
    """A real-valued feature of `shape` per example (input [batch, *shape]), as float32.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.feature_column.numeric_column("x", shape=2).shape
    (2,)
    """
    if not isinstance(key, str) or not key:
        raise ValueError(f"numeric_column: key must be a non-empty string, got {key!r}")
    shape = (int(shape),) if isinstance(shape, int | np.integer) else tuple(
        int(d) for d in shape)
    if any(d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: "
                         f"{key}")
    d = _dtypes.as_dtype(dtype).base_dtype
    if not (d.is_floating or d.is_integer):
        raise ValueError(f"dtype must be convertible to float. dtype: {d.name}, key: {key}")
    default_value = _check_default_value(shape, default_value, d, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, d, normalizer_fn)


def _check_default_value(shape, default_value, dtype, key):
    """`default_value` as a nested tuple of `shape` (a scalar is repeated)."""
    if default_value is None:
        return None
    if hasattr(default_value, "tolist"):
        default_value = default_value.tolist()
    if isinstance(default_value, int | float) and not isinstance(default_value, bool):
        if isinstance(default_value, float) and not dtype.is_floating:
            raise TypeError(f"default_value must be compatible with dtype. default_value: "
                            f"{default_value}, dtype: {dtype.name}, key: {key}")
        value = dtype.as_numpy_dtype(default_value).item()
        return _nested(np.full(shape, value))
    arr = np.asarray(default_value)
    if arr.shape != tuple(shape):
        raise ValueError(f"The shape of default_value must be equal to given shape. "
                         f"default_value: {default_value}, shape: {shape}, key: {key}")
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not dtype.is_floating):
        raise TypeError(f"default_value must be compatible with dtype. default_value: "
                        f"{default_value}, dtype: {dtype.name}, key: {key}")
    return _nested(arr.astype(dtype.as_numpy_dtype))


def _nested(arr: np.ndarray):
    if arr.ndim == 0:
        return arr.item()
    return tuple(_nested(a) for a in arr)


# -- bucketized ---------------------------------------------------------------------------
class BucketizedColumn(
        _DenseColumn, _CategoricalColumn,
        collections.namedtuple("BucketizedColumn", ["source_column", "boundaries"])):
    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def _parse_example_spec(self) -> dict:
        return self.source_column._parse_example_spec

    def _transform_feature(self, inputs):
        return bucketize(inputs.get(self.source_column), self.boundaries)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([*self.source_column.shape, len(self.boundaries) + 1])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        ids = inputs.get(self)
        return array_ops.one_hot(math_ops.cast(ids, _dtypes.int64), len(self.boundaries) + 1,
                                 on_value=1.0, off_value=0.0)

    @property
    def _num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        ids = inputs.get(self)
        batch = array_ops.shape(ids)[0]
        dim = self.source_column.shape[0]
        rows = array_ops.reshape(array_ops.tile(array_ops.expand_dims(
            array_ops.range(0, batch), 1), array_ops.stack([1, dim])), [-1])
        cols = array_ops.tile(array_ops.range(0, dim), array_ops.stack([batch]))
        values = array_ops.reshape(ids, [-1]) + (len(self.boundaries) + 1) * cols
        indices = math_ops.cast(array_ops.transpose(array_ops.stack([rows, cols])),
                                _dtypes.int64)
        shape = math_ops.cast(array_ops.stack([batch, dim]), _dtypes.int64)
        return _CategoricalColumn.IdWeightPair(
            SparseTensor(indices, math_ops.cast(values, _dtypes.int64), shape), None)


def bucketized_column(source_column, boundaries):
    """Bucket ids of a numeric column: value v falls in bucket ``i`` when
    ``boundaries[i-1] <= v < boundaries[i]``. Dense: one-hot; categorical: its ids.

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> fc.bucketized_column(fc.numeric_column("age"), [18, 65]).num_buckets
    3
    """
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column!r}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: "
                         f"{source_column}")
    if isinstance(boundaries, list | tuple) and not boundaries:
        raise ValueError(f"boundaries must not be empty. boundaries: {list(boundaries)}")
    if not boundaries or not isinstance(boundaries, list | tuple) or any(
            b2 <= b1 for b1, b2 in itertools.pairwise(boundaries)):
        raise ValueError(f"boundaries must be a sorted list (strictly increasing). "
                         f"boundaries: {boundaries}")
    # Kept as given (TensorFlow's repr shows `(1, 2)`); Bucketize casts them to float.
    return BucketizedColumn(source_column, tuple(boundaries))


# -- indicator ----------------------------------------------------------------------------
class IndicatorColumn(
        _DenseColumn, collections.namedtuple("IndicatorColumn", ["categorical_column"])):
    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def _parse_example_spec(self) -> dict:
        return self.categorical_column._parse_example_spec

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([1, self.categorical_column._num_buckets])

    def _transform_feature(self, inputs):
        pair = self.categorical_column._get_sparse_tensors(inputs)
        ids, weights = pair.id_tensor, pair.weight_tensor
        n = self.categorical_column._num_buckets
        if weights is not None:
            # Sum of the weights of each id, per example (ids outside [0, n) drop out).
            batch = ids.dense_shape[0]
            valid = math_ops.logical_and(
                math_ops.greater_equal(ids.values, math_ops.cast(0, ids.dtype.base_dtype)),
                math_ops.less(ids.values, math_ops.cast(n, ids.dtype.base_dtype)))
            keep = array_ops.reshape(array_ops.where(valid), [-1])
            rows = array_ops.gather(ids.indices[:, 0], keep)
            cols = math_ops.cast(array_ops.gather(ids.values, keep), _dtypes.int64)
            return array_ops.scatter_nd(array_ops.stack([rows, cols], axis=1),
                                        array_ops.gather(weights.values, keep),
                                        array_ops.stack([batch, math_ops.cast(n, _dtypes.int64)]))
        dense_ids = sparse_tensor_to_dense(ids, default_value=-1, validate_indices=False)
        one_hot = array_ops.one_hot(dense_ids, n, on_value=1.0, off_value=0.0)
        return math_reduce.reduce_sum(one_hot, axis=[-2])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        refuse_sequence("indicator_column", self)
        return inputs.get(self)


def indicator_column(categorical_column):
    """Multi-hot [batch, num_buckets] of a categorical column's ids (counts for repeated
    ids; the weight sums for a weighted column).

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> fc.indicator_column(fc.categorical_column_with_identity("n", 4)).name
    'n_indicator'
    """
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. "
                         f"Given: {categorical_column!r}")
    return IndicatorColumn(categorical_column)


def refuse_sequence(kind: str, column) -> None:
    """A sequence categorical column has a time axis that `input_layer` would drop: TF
    refuses it there (`sequence_input_layer` reads it without this method)."""
    if getattr(column.categorical_column, "_is_sequence", False):
        raise ValueError(
            f"In {kind}: {column.name}. categorical_column must not be of type "
            f"_SequenceCategoricalColumn. Suggested fix: read sequence columns with "
            f"tf.contrib.feature_column.sequence_input_layer, or use the non-sequence "
            f"categorical column (e.g. categorical_column_with_identity) here.")


# -- embedding -----------------------------------------------------------------------------
def _check_embedding_args(fn, column, dimension, combiner, initializer, ckpt, tensor_name):
    if not isinstance(column, _CategoricalColumn):
        raise ValueError(f"{fn}: categorical_column must be a categorical column. Given: "
                         f"{column!r}")
    if dimension is None or int(dimension) < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"{fn}: combiner must be one of 'mean', 'sqrtn' or 'sum', got "
                         f"{combiner!r}")
    if (ckpt is None) != (tensor_name is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` "
                         "or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of "
                         f"column_name: {getattr(column, 'name', column)}")


def _default_initializer(dimension: int):
    return truncated_normal_initializer(mean=0.0, stddev=1.0 / math.sqrt(dimension))


def _lookup(column, inputs, table):
    pair = column.categorical_column._get_sparse_tensors(inputs)
    name = f"{column.name}_weights"
    if not column.use_safe_embedding_lookup:
        # As TF: the ids are trusted (none negative, no example without ids).
        return embedding_lookup_sparse(table, pair.id_tensor, pair.weight_tensor,
                                       combiner=column.combiner, name=name,
                                       max_norm=column.max_norm)
    return safe_embedding_lookup_sparse(table, pair.id_tensor,
                                        sparse_weights=pair.weight_tensor,
                                        combiner=column.combiner, name=name,
                                        max_norm=column.max_norm)


def _restore(column, table):
    if column.ckpt_to_load_from is not None:
        from flowgraph.train.checkpoint_utils import init_from_checkpoint

        init_from_checkpoint(column.ckpt_to_load_from, {column.tensor_name_in_ckpt: table})


class EmbeddingColumn(
        _DenseColumn,
        collections.namedtuple("EmbeddingColumn", [
            "categorical_column", "dimension", "combiner", "initializer",
            "ckpt_to_load_from", "tensor_name_in_ckpt", "max_norm", "trainable",
            "use_safe_embedding_lookup"])):
    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    @property
    def _parse_example_spec(self) -> dict:
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([self.dimension])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        refuse_sequence("embedding_column", self)
        table = get_variable(
            "embedding_weights", shape=[self.categorical_column._num_buckets, self.dimension],
            dtype=_dtypes.float32, initializer=self.initializer,
            trainable=self.trainable and (trainable is None or trainable),
            collections=weight_collections)
        _restore(self, table)
        return _lookup(self, inputs, table)


def embedding_column(categorical_column, dimension: int, combiner: str = "mean",
                     initializer=None, ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                     max_norm=None, trainable: bool = True,
                     use_safe_embedding_lookup: bool = True):
    """A `dimension`-wide embedding of a categorical column: the `combiner` ('mean',
    'sqrtn' or 'sum') of the table rows of each example's ids, zeros for examples without
    ids. The table (``<column>_embedding/embedding_weights``) starts from `initializer`
    (default: truncated normal, stddev ``1/sqrt(dimension)``) or from a checkpoint.

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> fc.embedding_column(fc.categorical_column_with_identity("n", 10), 4).variable_shape
    TensorShape([Dimension(4)])
    """
    _check_embedding_args("embedding_column", categorical_column, dimension, combiner,
                          initializer, ckpt_to_load_from, tensor_name_in_ckpt)
    return EmbeddingColumn(categorical_column, int(dimension), combiner,
                           initializer or _default_initializer(int(dimension)),
                           ckpt_to_load_from, tensor_name_in_ckpt, max_norm, bool(trainable),
                           bool(use_safe_embedding_lookup))


class _SharedEmbeddingColumn(
        _DenseColumn,
        collections.namedtuple("_SharedEmbeddingColumn", [
            "categorical_column", "dimension", "combiner", "initializer",
            "shared_embedding_collection_name", "ckpt_to_load_from", "tensor_name_in_ckpt",
            "max_norm", "trainable", "use_safe_embedding_lookup"])):
    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self) -> str:
        return self.shared_embedding_collection_name

    @property
    def _parse_example_spec(self) -> dict:
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([self.dimension])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        refuse_sequence("shared_embedding_columns", self)
        shape = [self.categorical_column._num_buckets, self.dimension]
        shared = get_collection(self.shared_embedding_collection_name)
        if shared:
            if len(shared) > 1:
                raise ValueError(f"Collection {self.shared_embedding_collection_name} can "
                                 f"only contain one variable. Suggested fix A: Choose a "
                                 f"unique name for this collection. Suggested fix B: remove "
                                 f"all other variables from this collection.")
            table = shared[0]
            if table.shape.as_list() != shape:
                raise ValueError(f"Shared embedding collection "
                                 f"{self.shared_embedding_collection_name} contains variable "
                                 f"{table.name} of unexpected shape {table.shape}. Expected "
                                 f"shape is {shape}.")
        else:
            table = get_variable(
                "embedding_weights", shape=shape, dtype=_dtypes.float32,
                initializer=self.initializer,
                trainable=self.trainable and (trainable is None or trainable),
                collections=weight_collections)
            add_to_collection(self.shared_embedding_collection_name, table)
            _restore(self, table)
        return _lookup(self, inputs, table)


def shared_embedding_columns(categorical_columns, dimension: int, combiner: str = "mean",
                             initializer=None, shared_embedding_collection_name=None,
                             ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                             trainable: bool = True,
                             use_safe_embedding_lookup: bool = True) -> list:
    """Embedding columns, one per categorical column (same type and number of buckets),
    all reading one table ``<a>_<b>_shared_embedding/embedding_weights`` (names sorted).

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> a = fc.categorical_column_with_identity("a", 5)
    >>> b = fc.categorical_column_with_identity("b", 5)
    >>> [c.name for c in fc.shared_embedding_columns([b, a], 3)]
    ['b_shared_embedding', 'a_shared_embedding']
    """
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("shared_embedding_columns: categorical_columns must not be empty")
    for c in columns:
        _check_embedding_args("shared_embedding_columns", c, dimension, combiner, initializer,
                              ckpt_to_load_from, tensor_name_in_ckpt)
    first = columns[0]
    base = getattr(first, "categorical_column", first) \
        if type(first).__name__ == "WeightedCategoricalColumn" else first
    for c in columns[1:]:
        other = getattr(c, "categorical_column", c) \
            if type(c).__name__ == "WeightedCategoricalColumn" else c
        if type(other) is not type(base):
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same type, or be weighted_categorical_column of the "
                             f"same type. Given column: {first} of type: "
                             f"{type(first).__name__} does not match given column: {c} of "
                             f"type: {type(c).__name__}")
        if c._num_buckets != first._num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same number of buckets. Given column: {first} with "
                             f"buckets: {first._num_buckets} does not match column: {c} "
                             f"with buckets: {c._num_buckets}")
    if not shared_embedding_collection_name:
        names = sorted(c.name for c in columns)
        shared_embedding_collection_name = "_".join(names) + "_shared_embedding"
    init = initializer or _default_initializer(int(dimension))
    return [_SharedEmbeddingColumn(c, int(dimension), combiner, init,
                                   shared_embedding_collection_name, ckpt_to_load_from,
                                   tensor_name_in_ckpt, max_norm, bool(trainable),
                                   bool(use_safe_embedding_lookup))
            for c in columns]
