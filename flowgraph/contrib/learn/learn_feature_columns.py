"""TF1's first feature-column API (`tf.contrib.layers.real_valued_column`, ...), as the
contrib.learn tutorials build their columns, mapped onto `tf.feature_column`'s columns.

``real_valued_column("", dimension=4)`` names the features array that contrib.learn's
estimators receive as ``x`` (they pass it under the key ``''``). A sparse column's
``combiner`` applies in the linear models, which here combine by the estimator (``"sum"``,
contrib.learn's default); any other value is refused rather than silently ignored.

Example
-------
>>> import flowgraph as tf
>>> col = tf.contrib.layers.real_valued_column("", dimension=4)
>>> col.key, col.shape
('', (4,))
"""

from __future__ import annotations

from flowgraph import feature_column as _fc
from flowgraph.feature_column.feature_column import _FeatureColumn
from flowgraph.feature_column.feature_column_dense import NumericColumn, numeric_column
from flowgraph.framework import dtypes as _dtypes

__all__ = [
    "bucketized_column",
    "create_feature_spec_for_parsing",
    "crossed_column",
    "embedding_column",
    "one_hot_column",
    "real_valued_column",
    "shared_embedding_columns",
    "sparse_column_with_hash_bucket",
    "sparse_column_with_integerized_feature",
    "sparse_column_with_keys",
    "sparse_column_with_vocabulary_file",
    "weighted_sparse_column",
]


def _check_combiner(combiner: str, who: str) -> None:
    if combiner != "sum":
        raise ValueError(f"{who}: combiner={combiner!r} is not supported on the column; "
                         f"the linear estimators combine sparse columns by their "
                         f"`sparse_combiner` (contrib.learn's default 'sum')")


def real_valued_column(column_name: str, dimension: int = 1, default_value=None,
                       dtype=_dtypes.float32, normalizer=None):
    """A dense real-valued feature of `dimension` values per example.

    Example
    -------
    >>> real_valued_column("price", dimension=2).shape
    (2,)
    """
    if dimension is None:
        raise ValueError(f"real_valued_column({column_name!r}): dimension=None (a "
                         f"variable-length sparse feature) is not supported; give the "
                         f"number of values per example")
    if column_name == "":
        column = numeric_column("_", shape=(int(dimension),), default_value=default_value,
                                dtype=dtype, normalizer_fn=normalizer)
        return NumericColumn("", column.shape, column.default_value, column.dtype,
                             column.normalizer_fn)
    return numeric_column(column_name, shape=(int(dimension),), default_value=default_value,
                          dtype=dtype, normalizer_fn=normalizer)


def sparse_column_with_hash_bucket(column_name: str, hash_bucket_size: int, combiner="sum",
                                   dtype=_dtypes.string, hash_keys=None):
    """String (or integer) ids hashed into `hash_bucket_size` buckets."""
    _check_combiner(combiner, f"sparse_column_with_hash_bucket({column_name!r})")
    if hash_keys is not None:
        raise ValueError(f"sparse_column_with_hash_bucket({column_name!r}): hash_keys is "
                         f"not supported")
    return _fc.categorical_column_with_hash_bucket(column_name, hash_bucket_size, dtype=dtype)


def sparse_column_with_keys(column_name: str, keys, default_value: int = -1, combiner="sum",
                            dtype=_dtypes.string):
    """Ids looked up in the list `keys` (`default_value` for anything else)."""
    _check_combiner(combiner, f"sparse_column_with_keys({column_name!r})")
    return _fc.categorical_column_with_vocabulary_list(column_name, list(keys), dtype=dtype,
                                                       default_value=default_value)


def sparse_column_with_vocabulary_file(column_name: str, vocabulary_file: str,
                                       num_oov_buckets: int = 0, vocab_size=None,
                                       default_value: int = -1, combiner="sum",
                                       dtype=_dtypes.string):
    """Ids looked up in a vocabulary file (one entry per line; the line number is the
    id); values not in the file get `default_value`, or one of `num_oov_buckets` extra
    ids by hash when there are any.

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "colors.txt")
    >>> _ = open(path, "w").write("red\\ngreen\\n")
    >>> sparse_column_with_vocabulary_file("color", path, vocab_size=2).num_buckets
    2
    """
    who = f"sparse_column_with_vocabulary_file({column_name!r})"
    _check_combiner(combiner, who)
    if num_oov_buckets and default_value != -1:
        raise ValueError(f"{who}: give either num_oov_buckets ({num_oov_buckets}) or "
                         f"default_value ({default_value}), not both")
    return _fc.categorical_column_with_vocabulary_file(
        column_name, vocabulary_file, vocabulary_size=vocab_size,
        num_oov_buckets=num_oov_buckets,
        default_value=None if num_oov_buckets else default_value, dtype=dtype)


def sparse_column_with_integerized_feature(column_name: str, bucket_size: int,
                                           combiner="sum", dtype=_dtypes.int64):
    """Integer ids already in ``[0, bucket_size)``."""
    _check_combiner(combiner, f"sparse_column_with_integerized_feature({column_name!r})")
    return _fc.categorical_column_with_identity(column_name, bucket_size)


def weighted_sparse_column(sparse_id_column, weight_column_name: str,
                           dtype=_dtypes.float32):
    """`sparse_id_column` with a weight per id from feature `weight_column_name`."""
    return _fc.weighted_categorical_column(sparse_id_column, weight_column_name, dtype=dtype)


def embedding_column(sparse_id_column, dimension: int, combiner: str = "mean",
                     initializer=None, ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                     max_norm=None, trainable: bool = True):
    """A dense `dimension`-wide embedding of a sparse column (for the DNN part)."""
    return _fc.embedding_column(sparse_id_column, dimension, combiner=combiner,
                                initializer=initializer, ckpt_to_load_from=ckpt_to_load_from,
                                tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm,
                                trainable=trainable)


def shared_embedding_columns(sparse_id_columns, dimension: int, combiner: str = "mean",
                             shared_embedding_name=None, initializer=None,
                             ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                             max_norm=None, trainable: bool = True) -> list:
    """One embedding column per sparse column, all looking up the same
    ``[buckets, dimension]`` table (the columns must have the same number of buckets).
    `shared_embedding_name` names the table's variable, by default after the columns.

    Example
    -------
    >>> a = sparse_column_with_keys("a", ["x", "y"])
    >>> b = sparse_column_with_keys("b", ["u", "v"])
    >>> [c.dimension for c in shared_embedding_columns([a, b], dimension=3)]
    [3, 3]
    """
    if isinstance(sparse_id_columns, _FeatureColumn) or not sparse_id_columns or \
            not isinstance(sparse_id_columns, list | tuple | set):
        raise ValueError(f"shared_embedding_columns: sparse_id_columns must be a non-empty "
                         f"list of sparse columns, got {sparse_id_columns!r}")
    return _fc.shared_embedding_columns(
        list(sparse_id_columns), dimension, combiner=combiner, initializer=initializer,
        shared_embedding_collection_name=shared_embedding_name,
        ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
        max_norm=max_norm, trainable=trainable)


def one_hot_column(sparse_id_column):
    """A sparse column as a dense multi-hot vector (for the DNN part)."""
    return _fc.indicator_column(sparse_id_column)


def bucketized_column(source_column, boundaries):
    """A real-valued column split into buckets at `boundaries`."""
    return _fc.bucketized_column(source_column, list(boundaries))


def crossed_column(columns, hash_bucket_size: int, combiner="sum", ckpt_to_load_from=None,
                   tensor_name_in_ckpt=None, hash_key=None):
    """The hashed cross of sparse/bucketized `columns`."""
    _check_combiner(combiner, "crossed_column")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise ValueError("crossed_column: ckpt_to_load_from/tensor_name_in_ckpt are not "
                         "supported; warm-start the estimator instead")
    return _fc.crossed_column(list(columns), hash_bucket_size, hash_key=hash_key)


def create_feature_spec_for_parsing(feature_columns):
    """The `tf.parse_example` spec of `feature_columns` (a list, set or dict's values)."""
    if isinstance(feature_columns, dict):
        feature_columns = feature_columns.values()
    return _fc.make_parse_example_spec(list(feature_columns))
