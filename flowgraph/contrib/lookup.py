"""`tf.contrib.lookup`: TF1's lookup-table names (re-exports of `flowgraph.ops.lookup_ops`
and `flowgraph.ops.lookup_index_tables`).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.lookup.HashTable is tf.lookup.StaticHashTable
True
"""

from flowgraph.ops.lookup_index_tables import (
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
    "HashTable",
    "KeyValueTensorInitializer",
    "MutableDenseHashTable",
    "MutableHashTable",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
    "index_table_from_file",
    "index_table_from_tensor",
    "index_to_string_table_from_file",
    "index_to_string_table_from_tensor",
]
