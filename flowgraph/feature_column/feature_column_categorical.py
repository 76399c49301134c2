"""Categorical feature columns: features mapped to int64 ids in [0, num_buckets).

    hash bucket        id = Fingerprint64(value) % hash_bucket_size  (ints hashed as text)
    vocabulary list    id = position in the list; unknown -> default_value or an OOV bucket
    vocabulary file    the same, one vocabulary entry per line of a file
    identity           id = the integer value itself
    weighted           the ids of another column, with a float weight per id
    crossed            id = hash of each combination (Cartesian product per example)

Input values equal to '' (strings) or -1 (integers) in a dense feature mean "missing"
and are dropped, as in TensorFlow; a SparseTensor feature is used as it is.

Example
-------
>>> import flowgraph as tf
>>> fc = tf.feature_column
>>> c = fc.categorical_column_with_vocabulary_list("c", ["x", "y"], num_oov_buckets=1)
>>> c.num_buckets
3
"""

from __future__ import annotations

import collections
import os

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.parsing_ops import VarLenFeature
from flowgraph.ops.sparse_ops import DEFAULT_HASH_KEY, sparse_cross_hashed
from flowgraph.ops.string_hash_ops import as_string, to_hash_bucket_fast, vocab_lookup

from .feature_column import _CategoricalColumn, _FeatureColumn, to_sparse_input

__all__ = [
    "categorical_column_with_hash_bucket",
    "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list",
    "crossed_column",
    "weighted_categorical_column",
]


def _check_key(key, fn: str) -> None:
    if not isinstance(key, str) or not key:
        raise ValueError(f"{fn}: key must be a non-empty string (the feature name), got "
                         f"{key!r}")


def _string_or_int(dtype, what: str):
    d = _dtypes.as_dtype(dtype).base_dtype
    if d != _dtypes.string and not d.is_integer:
        raise ValueError(f"{what} dtype must be string or integer. dtype: {d!r}.")
    return d


def _sparse_ids_input(column, inputs) -> SparseTensor:
    """The column's raw feature as a SparseTensor, checked against the column's dtype."""
    raw = inputs.get(column.key)
    sp = to_sparse_input(raw)
    got = sp.dtype.base_dtype
    if got != _dtypes.string and not got.is_integer:
        raise ValueError(f"{column._where()}: feature '{column.key}' has dtype {got.name}; "
                         f"a categorical column needs strings or integers.")
    if column.dtype.is_integer != got.is_integer:
        raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: "
                         f"{column.key}, column dtype: {column.dtype.name}, tensor dtype: "
                         f"{got.name} ({column._where()}).")
    return sp


# -- hash bucket --------------------------------------------------------------------------
class HashedCategoricalColumn(
        _CategoricalColumn,
        collections.namedtuple("HashedCategoricalColumn", ["key", "hash_bucket_size",
                                                            "dtype"])):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _transform_feature(self, inputs):
        sp = _sparse_ids_input(self, inputs)
        values = sp.values if sp.dtype.base_dtype == _dtypes.string else as_string(sp.values)
        ids = to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(sp.indices, ids, sp.dense_shape)


def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                        dtype=_dtypes.string):
    """Ids ``Fingerprint64(value) % hash_bucket_size`` (FarmHash, as TensorFlow; integer
    values are hashed as their decimal text).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.feature_column.categorical_column_with_hash_bucket("word", 100).num_buckets
    100
    """
    _check_key(key, "categorical_column_with_hash_bucket")
    if hash_bucket_size is None or int(hash_bucket_size) < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    d = _string_or_int(dtype, f"column_name: {key}")
    return HashedCategoricalColumn(key, int(hash_bucket_size), d)


# -- vocabulary list / file ---------------------------------------------------------------
class VocabularyListCategoricalColumn(
        _CategoricalColumn,
        collections.namedtuple("VocabularyListCategoricalColumn", [
            "key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def _num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _transform_feature(self, inputs):
        sp = _sparse_ids_input(self, inputs)
        values = sp.values
        if values.dtype.is_integer and values.dtype.base_dtype != _dtypes.int64:
            values = math_ops.cast(values, _dtypes.int64)
        ids = vocab_lookup(values, vocabulary=list(self.vocabulary_list),
                           default_value=self.default_value,
                           num_oov_buckets=self.num_oov_buckets, column_name=self.name,
                           name=f"{self.key}_lookup")
        return SparseTensor(sp.indices, ids, sp.dense_shape)


def _check_oov(key, default_value, num_oov_buckets):
    if num_oov_buckets is None or int(num_oov_buckets) < 0:
        raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    if default_value is not None and default_value != -1 and num_oov_buckets:
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}. "
                         f"(default_value={default_value}, "
                         f"num_oov_buckets={num_oov_buckets}: an unknown value gets either "
                         f"the default id or an OOV bucket)")


def categorical_column_with_vocabulary_list(key: str, vocabulary_list, dtype=None,
                                            default_value: int = -1,
                                            num_oov_buckets: int = 0):
    """Ids by position in `vocabulary_list`. Values not in it get `default_value` (-1:
    dropped by embedding/indicator/linear use), or with ``num_oov_buckets > 0`` one of the
    ids ``len(vocabulary_list) + hash % num_oov_buckets``.

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.feature_column.categorical_column_with_vocabulary_list("c", ["a", "b"])
    >>> c.dtype.name
    'string'
    """
    _check_key(key, "categorical_column_with_vocabulary_list")
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, "
                         f"column_name: {key}")
    vocab = tuple(v.decode("utf-8") if isinstance(v, bytes) else v for v in vocabulary_list)
    if len(set(vocab)) != len(vocab):
        dups = sorted({str(v) for v in vocab if vocab.count(v) > 1})
        raise ValueError(f"Duplicate keys in vocabulary_list {list(vocab)}, column_name: "
                         f"{key} (duplicates: {dups})")
    kinds = {isinstance(v, str) for v in vocab}
    if len(kinds) > 1:
        raise ValueError(f"vocabulary_list {list(vocab)} mixes strings and numbers, "
                         f"column_name: {key}")
    vocab_dtype = _dtypes.string if kinds == {True} else _dtypes.int64
    if dtype is None:
        dtype = vocab_dtype
    d = _string_or_int(dtype, f"column_name: {key}")
    if d.is_integer != vocab_dtype.is_integer:
        raise ValueError(f"dtype {d.name} and vocabulary dtype {vocab_dtype.name} do not "
                         f"match, column_name: {key}, vocabulary: {list(vocab)}")
    if d.is_integer:
        vocab = tuple(int(v) for v in vocab)
    _check_oov(key, default_value, num_oov_buckets)
    return VocabularyListCategoricalColumn(key, vocab, d, int(default_value),
                                            int(num_oov_buckets))


class VocabularyFileCategoricalColumn(
        _CategoricalColumn,
        collections.namedtuple("VocabularyFileCategoricalColumn", [
            "key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
            "default_value", "file_format"])):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def _num_buckets(self) -> int:
        return self.vocabulary_size + self.num_oov_buckets

    def _transform_feature(self, inputs):
        sp = _sparse_ids_input(self, inputs)
        values = sp.values
        if values.dtype.is_integer and values.dtype.base_dtype != _dtypes.int64:
            values = math_ops.cast(values, _dtypes.int64)
        ids = vocab_lookup(values, vocabulary_file=self.vocabulary_file,
                           vocab_size=self.vocabulary_size,
                           default_value=-1 if self.default_value is None
                           else self.default_value,
                           num_oov_buckets=self.num_oov_buckets, column_name=self.name,
                           name=f"{self.key}_lookup")
        return SparseTensor(sp.indices, ids, sp.dense_shape)


def categorical_column_with_vocabulary_file(key: str, vocabulary_file: str,
                                            vocabulary_size: int | None = None,
                                            num_oov_buckets: int = 0, default_value=None,
                                            dtype=_dtypes.string):
    """Ids by line number in `vocabulary_file` (its first `vocabulary_size` lines; all of
    them by default). The file is read when the graph first runs in a session.

    Example
    -------
    >>> import os, tempfile
    >>> import flowgraph as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("red\\ngreen\\n")
    >>> tf.feature_column.categorical_column_with_vocabulary_file("c", path).num_buckets
    2
    """
    _check_key(key, "categorical_column_with_vocabulary_file")
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not os.path.exists(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist: {vocabulary_file}")
        with open(vocabulary_file, encoding="utf-8") as f:
            vocabulary_size = sum(1 for _ in f)
    if int(vocabulary_size) < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}: {vocabulary_size}")
    _check_oov(key, default_value, num_oov_buckets)
    d = _string_or_int(dtype, f"column_name: {key}")
    # TensorFlow keeps -1 for "no default" and a `file_format` (None: one entry a line).
    return VocabularyFileCategoricalColumn(key, str(vocabulary_file), int(vocabulary_size),
                                           int(num_oov_buckets), d,
                                           -1 if default_value is None else default_value,
                                           None)


# -- identity -----------------------------------------------------------------------------
class IdentityCategoricalColumn(
        _CategoricalColumn,
        collections.namedtuple("IdentityCategoricalColumn", ["key", "number_buckets",
                                                             "default_value"])):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(_dtypes.int64)}

    @property
    def num_buckets(self) -> int:  # TensorFlow's field is `number_buckets`
        return self[1]

    @property
    def _num_buckets(self) -> int:
        return self[1]

    def _transform_feature(self, inputs):
        sp = to_sparse_input(inputs.get(self.key))
        if not sp.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: "
                             f"{sp.dtype.name} ({self._where()})")
        values = math_ops.cast(sp.values, _dtypes.int64)
        n = math_ops.cast(self.num_buckets, _dtypes.int64)
        zero = math_ops.cast(0, _dtypes.int64)
        if self.default_value is not None:
            ok = math_ops.logical_and(math_ops.greater_equal(values, zero),
                                      math_ops.less(values, n))
            values = array_ops.where(ok, values, array_ops.fill(
                array_ops.shape(values), math_ops.cast(self.default_value, _dtypes.int64)))
        # Without a default, TensorFlow 2.15's column checks nothing here: an indicator
        # column leaves an out-of-range id's row at zero, an embedding or linear lookup
        # fails on it (negative ids are dropped by the safe lookup).
        return SparseTensor(sp.indices, values, sp.dense_shape)


def categorical_column_with_identity(key: str, num_buckets: int, default_value=None):
    """The integer feature values are the ids, in [0, num_buckets). Out-of-range values
    become `default_value`; without one (as in TensorFlow 2.15) they are not checked:
    an indicator column gives them a zero row, an embedding or linear lookup fails.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.feature_column.categorical_column_with_identity("n", 10).name
    'n'
    """
    _check_key(key, "categorical_column_with_identity")
    if num_buckets is None or int(num_buckets) < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= int(default_value) < int(num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


# -- weighted -------------------------------------------------------------------------------
class WeightedCategoricalColumn(
        _CategoricalColumn,
        collections.namedtuple("WeightedCategoricalColumn", [
            "categorical_column", "weight_feature_key", "dtype"])):
    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def _parse_example_spec(self) -> dict:
        config = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already "
                             f"exists for {self.weight_feature_key}.")
        config[self.weight_feature_key] = VarLenFeature(self.dtype)
        return config

    @property
    def _num_buckets(self) -> int:
        return self.categorical_column._num_buckets

    def _transform_feature(self, inputs):
        weights = inputs.get(self.weight_feature_key)
        if weights is None:
            raise ValueError(f"Missing weights {self.weight_feature_key}.")
        if not weights.dtype.is_floating and not weights.dtype.is_integer:
            raise ValueError(f"{self._where()}: weight feature '{self.weight_feature_key}' "
                             f"has dtype {weights.dtype.name}; expected numbers.")
        weights = to_sparse_input(weights)
        if not weights.dtype.is_floating:
            weights = SparseTensor(weights.indices, math_ops.cast(weights.values,
                                                                  _dtypes.float32),
                                   weights.dense_shape)
        return (self.categorical_column._get_sparse_tensors(inputs).id_tensor, weights)

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        ids, weights = inputs.get(self)
        return _CategoricalColumn.IdWeightPair(ids, weights)


def weighted_categorical_column(categorical_column, weight_feature_key: str,
                                dtype=_dtypes.float32):
    """`categorical_column`'s ids, each weighted by the value at the same position of the
    feature `weight_feature_key` (for embedding combiners, indicators, linear models).

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> fc.weighted_categorical_column(fc.categorical_column_with_identity("n", 4), "w").name
    'n_weighted_by_w'
    """
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column (made with "
                         f"categorical_column_with_*). Given: {categorical_column!r}")
    d = _dtypes.as_dtype(dtype).base_dtype
    if not d.is_floating and not d.is_integer:
        raise ValueError(f"dtype {d.name} is not convertible to float.")
    _check_key(weight_feature_key, "weighted_categorical_column")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, d)


# -- crossed ---------------------------------------------------------------------------------
class CrossedColumn(
        _CategoricalColumn,
        collections.namedtuple("CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):
    @property
    def name(self) -> str:
        names = []
        for key in self.keys:
            names.append(key if isinstance(key, str) else key.name)
        return "_X_".join(sorted(names))

    @property
    def _parse_example_spec(self) -> dict:
        config = {}
        for key in self.keys:
            if isinstance(key, _FeatureColumn):
                config.update(key._parse_example_spec)
            else:
                config[key] = VarLenFeature(_dtypes.string)
        return config

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _transform_feature(self, inputs):
        tensors = []
        for key in _leaf_keys(self):
            if isinstance(key, str):
                t = inputs.get(key)
                if isinstance(t, SparseTensor):
                    if not (t.dtype.base_dtype == _dtypes.string or t.dtype.is_integer):
                        raise ValueError(f"{self._where()}: feature '{key}' has dtype "
                                         f"{t.dtype.name}; crosses need strings or integers")
                elif not (t.dtype.base_dtype == _dtypes.string or t.dtype.is_integer):
                    raise ValueError(f"{self._where()}: feature '{key}' has dtype "
                                     f"{t.dtype.name}; crosses need strings or integers "
                                     f"(bucketize floats with bucketized_column)")
                tensors.append(t)
            else:
                pair = key._get_sparse_tensors(inputs)
                if pair.weight_tensor is not None:
                    raise ValueError(f"crossed_column does not support weight_tensor, but "
                                     f"the given column populates weight_tensor. Given "
                                     f"column: {key.name}")
                tensors.append(pair.id_tensor)
        tensors = [_as_int64(t) for t in tensors]
        return sparse_cross_hashed(tensors, num_buckets=self.hash_bucket_size,
                                   hash_key=DEFAULT_HASH_KEY if self.hash_key is None
                                   else self.hash_key)


def _as_int64(t):
    if isinstance(t, SparseTensor):
        if t.dtype.is_integer and t.dtype.base_dtype != _dtypes.int64:
            return SparseTensor(t.indices, math_ops.cast(t.values, _dtypes.int64),
                                t.dense_shape)
        return t
    if t.dtype.is_integer and t.dtype.base_dtype != _dtypes.int64:
        return math_ops.cast(t, _dtypes.int64)
    return t


def _leaf_keys(cross) -> list:
    out = []
    for key in cross.keys:
        out.extend(_leaf_keys(key) if isinstance(key, CrossedColumn) else [key])
    return out


def crossed_column(keys, hash_bucket_size: int, hash_key=None):
    """Ids of feature combinations: per example, every combination (Cartesian product) of
    the values of `keys` (feature names, categorical columns such as bucketized ones, or
    other crosses) is hashed to ``[0, hash_bucket_size)``, exactly as TensorFlow does.

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> b = fc.bucketized_column(fc.numeric_column("age"), [18, 65])
    >>> fc.crossed_column(["city", b], 1000).name
    'age_bucketized_X_city'
    """
    if not hash_bucket_size or int(hash_bucket_size) < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: "
                         f"{hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, str | _CategoricalColumn):
            raise ValueError(f"Unsupported key type. All keys must be either string, or "
                             f"categorical column except HashedCategoricalColumn. Given: "
                             f"{key!r}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError(f"categorical_column_with_hash_bucket is not supported for "
                             f"crossing. Hashing before crossing will increase probability "
                             f"of collision. Instead, use the feature name as a string. "
                             f"Given: {key}")
    # hash_key=None (kept as None, as TensorFlow does) hashes with DEFAULT_HASH_KEY.
    return CrossedColumn(tuple(keys), int(hash_bucket_size),
                         None if hash_key is None else int(hash_key))
