"""`tf.contrib.lookup`: TF1's lookup-table names (re-exports of `flowgraph.ops.lookup_ops`
and `flowgraph.ops.lookup_index_tables`).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.lookup.HashTable is tf.lookup.StaticHashTable
True
"""

from flowgraph.ops.lookup_index_tables import (
    FastHashSpec,
    HasherSpec,
    IdTableWithHashBuckets,
    StrongHashSpec,
    index_table_from_file,
    index_table_from_tensor,
    index_to_string_table_from_file,
    index_to_string_table_from_tensor,
)
from flowgraph.ops.lookup_mutable import DenseHashTable as MutableDenseHashTable
from flowgraph.ops.lookup_mutable import MutableHashTable
from flowgraph.ops.lookup_ops import (
    HashTable,
    KeyValueTensorInitializer,
    StaticHashTable,
    StaticVocabularyTable,
    TextFileIndex,
    TextFileInitializer,
)

__all__ = [
    "FastHashSpec",
    "HashTable",
    "HasherSpec",
    "IdTableWithHashBuckets",
    "KeyValueTensorInitializer",
    "MutableDenseHashTable",
    "MutableHashTable",
    "StaticHashTable",
    "StaticVocabularyTable",
    "StrongHashSpec",
    "TextFileIndex",
    "TextFileInitializer",
    "index_table_from_file",
    "index_table_from_tensor",
    "index_to_string",
    "index_to_string_table_from_file",
    "index_to_string_table_from_tensor",
    "string_to_index",
]


def string_to_index(tensor, mapping, default_value=-1, name=None):
    """TF1's deprecated one-call lookup: the position of each string of `tensor` in the
    vocabulary `mapping` (int64), `default_value` for the others; an
    `index_table_from_tensor` table (its initializer joins ``TABLE_INITIALIZERS``).

    Example
    -------
    >>> import flowgraph as tf
    >>> ids = string_to_index(tf.constant(["b", "zz"]), ["a", "b"])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.tables_initializer())
    ...     print(sess.run(ids))
    [ 1 -1]
    """
    table = index_table_from_tensor(mapping, default_value=default_value, name=name)
    return table.lookup(tensor)


def index_to_string(tensor, mapping, default_value="UNK", name=None):
    """TF1's deprecated one-call reverse lookup: the string of `mapping` at each int64 id
    of `tensor`, `default_value` for ids out of range (an
    `index_to_string_table_from_tensor` table).

    Example
    -------
    >>> import flowgraph as tf
    >>> words = index_to_string(tf.constant([1, 5], tf.int64), ["a", "b"])
    >>> with tf.Session() as sess:
    ...     sess.run(tf.tables_initializer())
    ...     print(sess.run(words))
    [b'b' b'UNK']
    """
    table = index_to_string_table_from_tensor(mapping, default_value=default_value, name=name)
    return table.lookup(tensor)
