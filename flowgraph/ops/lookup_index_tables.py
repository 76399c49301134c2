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

import collections
import functools

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.array_shape_ops import size as _size
from flowgraph.ops.lookup_ops import (
    BucketedIds,
    BucketedTableAPI,
    KeyValueTensorInitializer,
    StaticHashTable,
    TextFileIndex,
    TextFileInitializer,
    check_id_table_dtypes,
)
from flowgraph.ops.math_ops import cast
from flowgraph.ops.string_hash_ops import to_hash_bucket_fast
from flowgraph.ops.string_legacy_hash_ops import (
    string_to_hash_bucket,
    string_to_hash_bucket_strong,
)

__all__ = [
    "FastHashSpec",
    "HasherSpec",
    "IdTableWithHashBuckets",
    "StrongHashSpec",
    "index_table_from_file",
    "index_table_from_tensor",
    "index_to_string_table_from_file",
    "index_to_string_table_from_tensor",
]


class HasherSpec(collections.namedtuple("HasherSpec", ["hasher", "key"])):
    """Which hash puts unknown keys in buckets: ``"fasthash"`` (FarmHash
    Fingerprint64), ``"legacy"`` (``tf.string_to_hash_bucket``) or ``"stronghash"``
    (keyed SipHash, `key` two integers).

    Example
    -------
    >>> FastHashSpec.hasher, StrongHashSpec([1, 2]).key
    ('fasthash', [1, 2])
    """

    __slots__ = ()


FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """The keyed hash (``tf.strings.to_hash_bucket_strong``) with a two-integer `key`."""

    __slots__ = ()

    def __new__(cls, key):
        if len(key) != 2:
            raise ValueError(f"`key` must have size 2, received {len(key)}")
        if not isinstance(key[0], int) or not isinstance(key[1], int):
            raise TypeError(f"Invalid key {key}. Must be unsigned integer values.")
        return super().__new__(cls, "stronghash", key)


def _hasher(spec):
    if not isinstance(spec, HasherSpec):
        raise TypeError(f"`hasher_spec` must be of type HasherSpec, got {type(spec)}.")
    if spec.hasher == "fasthash":
        return to_hash_bucket_fast
    if spec.hasher == "legacy":
        return string_to_hash_bucket
    if spec.hasher == "stronghash":
        return functools.partial(string_to_hash_bucket_strong, key=spec.key)
    raise ValueError(f"Found unknown hasher {spec.hasher} in `hasher_spec`")


class IdTableWithHashBuckets(BucketedTableAPI):
    """An id table (`table`: keys to int64 ids) whose unknown keys go to one of
    `num_oov_buckets` hash buckets after its ids, TF1's ``tf.contrib.lookup`` class.
    With ``table=None``, every key gets its bucket.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = IdTableWithHashBuckets(None, num_oov_buckets=10)
    >>> with tf.Session() as sess:
    ...     print(sess.run(t.lookup(tf.constant(["a", "hello"]))))
    [9 6]
    """

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None,
                 key_dtype=None) -> None:
        if table is not None:
            key_dtype = check_id_table_dtypes(
                table.key_dtype, table.value_dtype, key_dtype,
                "Invalid `value_dtype`: expected {} but got {}.")
        else:
            if num_oov_buckets <= 0:
                raise ValueError("`oov_buckets` must be > 0 if no `table` is supplied.")
            key_dtype = _dtypes.string if key_dtype is None else _dtypes.as_dtype(key_dtype)
        if not key_dtype.is_integer and key_dtype != _dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got "
                            f"{key_dtype}.")
        self._buckets = BucketedIds(table, int(num_oov_buckets), _hasher(hasher_spec),
                                    name, "hash_bucket")
        self.key_dtype = key_dtype.base_dtype
        self.value_dtype = _dtypes.int64

    @property
    def init(self):
        return self.initializer

    def lookup(self, keys, name=None):
        """int64 ids of `keys` (a Tensor or `SparseTensor`)."""
        if self._buckets.num_oov_buckets == 0:
            values = keys.values if hasattr(keys, "dense_shape") else keys
            if values.dtype.base_dtype != self.key_dtype:
                raise TypeError(f"Dtype of argument `keys` must be {self.key_dtype}, "
                                f"received: {values.dtype}")
            if self._buckets.table.key_dtype == _dtypes.int64:
                keys = cast(keys, _dtypes.int64)
            return self._buckets.table.lookup(keys, name=name)
        return self._buckets.lookup(keys, self.key_dtype, name)


def _key_dtype(dtype, what: str):
    d = _dtypes.as_dtype(dtype).base_dtype
    if not d.is_integer and d != _dtypes.string:
        raise TypeError(f"{what}: Dtype for `keys` should be either integer or string, got "
                        f"{d.name}")
    return d


def _id_table(initializer, num_oov_buckets: int, default_value, hasher_spec, key_dtype):
    """TensorFlow's id table: a hash table in a ``hash_table`` scope, wrapped in hash
    buckets when there are any."""
    with name_scope(None, "hash_table"):
        table = StaticHashTable(initializer(), default_value)
    if num_oov_buckets:
        table = IdTableWithHashBuckets(table, num_oov_buckets,
                                       hasher_spec=hasher_spec or FastHashSpec,
                                       key_dtype=key_dtype)
    return table


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
        raise ValueError("`vocabulary_list` must be specified.")
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater or equal than 0, got "
                         f"{num_oov_buckets}.")
    dtype = _key_dtype(dtype, what)
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Invalid `dtype`: Expected "
                             f"{'integer' if dtype.is_integer else 'non-integer'}, got "
                             f"{keys.dtype}.")
        if not dtype.is_integer and keys.dtype.base_dtype != dtype:
            raise ValueError(f"Invalid `dtype`: Expected {dtype}, got {keys.dtype}.")
        ids = cast(_range(_size(keys)), _dtypes.int64)

        def initializer():
            table_keys = cast(keys, _dtypes.int64) if keys.dtype.is_integer else keys
            return KeyValueTensorInitializer(table_keys, ids, table_keys.dtype.base_dtype,
                                             _dtypes.int64, name="table_init")

        return _id_table(initializer, int(num_oov_buckets), default_value, hasher_spec,
                         dtype)


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
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got "
                         f"{num_oov_buckets}.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size} for "
                         f"vocabulary_file: {vocabulary_file}.")
    kd = _key_dtype(key_dtype, what)
    with name_scope(name, "string_to_index"):
        def initializer():
            return TextFileInitializer(
                vocabulary_file, _dtypes.int64 if kd.is_integer else kd, key_column_index,
                _dtypes.int64, value_column_index, vocab_size=vocab_size,
                delimiter=delimiter, name="table_init")

        return _id_table(initializer, int(num_oov_buckets), default_value, hasher_spec, kd)


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
        raise ValueError("`vocabulary_list` argument must be specified.")
    with name_scope(name, "index_to_string"):
        values = convert_to_tensor(vocabulary_list, dtype=_dtypes.string)
        ids = cast(_range(_size(values)), _dtypes.int64)
        init = KeyValueTensorInitializer(ids, values, _dtypes.int64, _dtypes.string,
                                         name="table_init")
        return StaticHashTable(init, default_value)


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
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    with name_scope(name, "index_to_string"):
        init = TextFileInitializer(vocabulary_file, _dtypes.int64, key_column_index,
                                   _dtypes.string, value_column_index, vocab_size=vocab_size,
                                   delimiter=delimiter, name="table_init")
        return StaticHashTable(init, default_value)
