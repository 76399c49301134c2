"""TF1's vocabulary-table helpers (``tf.contrib.lookup``): id tables from a vocabulary
list or file, and string tables from ids, built on `flowgraph.ops.lookup_ops`.

Example
-------
>>> import flowgraph as tf
>>> table = index_table_from_tensor(["emerson", "lake"], num_oov_buckets=1)
>>> ids = table.lookup(tf.constant(["lake", "palmer"]))
>>> with tf.Session() as sess:
...     sess.run(tf.tables_initializer())
...     print(sess.run(ids))
[1 2]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.array_shape_ops import size as _size
from flowgraph.ops.lookup_ops import (
    KeyValueTensorInitializer,
    StaticHashTable,
    StaticVocabularyTable,
    TextFileIndex,
    TextFileInitializer,
)
from flowgraph.ops.math_ops import cast

__all__ = [
    "index_table_from_file",
    "index_table_from_tensor",
    "index_to_string_table_from_file",
    "index_to_string_table_from_tensor",
]


class _IntKeyTable(StaticHashTable):
    """A table with int64 keys that also accepts int32 keys (TF's id tables cast them)."""

    def lookup(self, keys, name=None):
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, self.lookup(keys.values, name),
                                keys.dense_shape)
        keys = convert_to_tensor(keys, name="keys")
        if keys.dtype.is_integer and keys.dtype.base_dtype != self.key_dtype:
            keys = cast(keys, self.key_dtype)
        return super().lookup(keys, name=name)


def _key_dtype(dtype, what: str):
    d = _dtypes.as_dtype(dtype).base_dtype
    if d == _dtypes.string:
        return d
    if d.is_integer:
        return _dtypes.int64
    raise TypeError(f"{what}: keys must be strings or integers, got {d.name}")


def _id_table(initializer, num_oov_buckets: int, default_value: int, what: str):
    if num_oov_buckets < 0:
        raise ValueError(f"{what}: num_oov_buckets must be >= 0, got {num_oov_buckets}")
    if num_oov_buckets:
        return StaticVocabularyTable(initializer, num_oov_buckets, name="hash_table")
    cls = _IntKeyTable if initializer.key_dtype.is_integer else StaticHashTable
    return cls(initializer, default_value)


def index_table_from_tensor(vocabulary_list, num_oov_buckets: int = 0, default_value: int = -1,
                            hasher_spec=None, dtype=_dtypes.string, name=None):
    """A table mapping each key of `vocabulary_list` to its position (int64); unknown
    keys get `default_value`, or with ``num_oov_buckets > 0`` a hash bucket after the
    vocabulary.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = index_table_from_tensor(tf.constant([10, 20], tf.int64), dtype=tf.int64)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.tables_initializer())
    ...     print(sess.run(t.lookup(tf.constant([20, 30], tf.int64))))
    [ 1 -1]
    """
    what = "index_table_from_tensor"
    if vocabulary_list is None:
        raise ValueError(f"{what}: vocabulary_list must be given")
    key_dtype = _key_dtype(dtype, what)
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list, name="vocabulary_list")
        if keys.dtype.is_integer and key_dtype.is_integer:
            keys = cast(keys, key_dtype)
        if keys.dtype.base_dtype != key_dtype:
            raise TypeError(f"{what}: vocabulary_list has dtype {keys.dtype.name}, but dtype "
                            f"is {key_dtype.name}")
        ids = _range(_size(keys, out_type=_dtypes.int64), dtype=_dtypes.int64)
        init = KeyValueTensorInitializer(keys, ids, name="table_init")
        return _id_table(init, int(num_oov_buckets), default_value, what)


def index_table_from_file(vocabulary_file=None, num_oov_buckets: int = 0, vocab_size=None,
                          default_value: int = -1, hasher_spec=None, key_dtype=_dtypes.string,
                          name=None, key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table mapping each line of `vocabulary_file` (or a column of it) to its line
    number (int64); unknown keys as in `index_table_from_tensor`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     t = index_table_from_file("vocab.txt", num_oov_buckets=2)
    >>> t.value_dtype
    tf.int64
    """
    what = "index_table_from_file"
    if not vocabulary_file:
        raise ValueError(f"{what}: vocabulary_file must be a non-empty file name")
    kd = _key_dtype(key_dtype, what)
    with name_scope(name, "string_to_index"):
        init = TextFileInitializer(vocabulary_file, kd, key_column_index, _dtypes.int64,
                                   value_column_index, vocab_size=vocab_size,
                                   delimiter=delimiter, name="table_init")
        return _id_table(init, int(num_oov_buckets), default_value, what)


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table mapping int64 ids to the strings of `vocabulary_list`; ids out of range get
    `default_value`.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = index_to_string_table_from_tensor(["a", "b"])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.tables_initializer())
    ...     print(sess.run(t.lookup(tf.constant([1, 5], tf.int64))))
    [b'b' b'UNK']
    """
    if vocabulary_list is None:
        raise ValueError("index_to_string_table_from_tensor: vocabulary_list must be given")
    with name_scope(name, "index_to_string"):
        values = convert_to_tensor(vocabulary_list, dtype=_dtypes.string,
                                   name="vocabulary_list")
        ids = _range(_size(values, out_type=_dtypes.int64), dtype=_dtypes.int64)
        init = KeyValueTensorInitializer(ids, values, name="table_init")
        return _IntKeyTable(init, default_value)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE,
                                    delimiter="\t"):
    """A table mapping line numbers (int64) to the lines of `vocabulary_file`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     t = index_to_string_table_from_file("vocab.txt")
    >>> t.value_dtype
    tf.string
    """
    with name_scope(name, "index_to_string"):
        init = TextFileInitializer(vocabulary_file, _dtypes.int64, key_column_index,
                                   _dtypes.string, value_column_index, vocab_size=vocab_size,
                                   delimiter=delimiter, name="table_init")
        return _IntKeyTable(init, default_value)
