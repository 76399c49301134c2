"""`tf.lookup`: immutable hash tables filled once per session by an initializer op.

A table is a session resource (like a queue): ``HashTableV2`` outputs a handle to the
table, looked up or created in the session's container under its ``shared_name`` (the
op's name by default). ``LookupTableImportV2`` fills it from key and value tensors,
``InitializeTableFromTextFileV2`` from a text file; both are added to the
``TABLE_INITIALIZERS`` collection, which `tf.tables_initializer` and a `Scaffold`'s
``local_init_op`` (MonitoredSession, Estimators) run. ``LookupTableFindV2`` maps keys of
any shape to values (`default_value` for missing keys); reading a table that was never
initialized is a `FailedPreconditionError`.

`StaticVocabularyTable` adds ``num_oov_buckets`` buckets for unknown keys:
``table_size + Fingerprint64(key) % num_oov_buckets`` (integer keys hashed as their
decimal text), TensorFlow's `to_hash_bucket_fast`, so ids agree with TensorFlow's.
Kernels: `flowgraph/backends/cpu/kernels_lookup.py`.

Example
-------
>>> import flowgraph as tf
>>> table = tf.lookup.StaticHashTable(
...     tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
>>> ids = table.lookup(tf.constant(["b", "zz"]))
>>> with tf.Session() as sess:
...     sess.run(tf.tables_initializer())
...     print(sess.run(ids))
[ 2 -1]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    control_dependencies,
    name_scope,
)
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_index_ops import where
from flowgraph.ops.lookup_common import TABLE_ATTRS, check_keys_values, table_handle_shape
from flowgraph.ops.lookup_compat import tables_initializer
from flowgraph.ops.math_ops import add, equal
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor
from flowgraph.ops.string_hash_ops import as_string, to_hash_bucket_fast

__all__ = [
    "HashTable",
    "KeyValueTensorInitializer",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
    "tables_initializer",
]

_KEY_TYPES = (_dtypes.string, _dtypes.int32, _dtypes.int64)
_VALUE_TYPES = (_dtypes.string, _dtypes.int32, _dtypes.int64, _dtypes.float32,
                _dtypes.float64, _dtypes.bool)


# -- op registrations --------------------------------------------------------------------
register_op("HashTableV2", attrs=TABLE_ATTRS, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True)(table_handle_shape)


@register_op("LookupTableImportV2", num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _import_shape(op, handle, keys, values):
    check_keys_values(op, keys, values)
    return []


@register_op("InitializeTableFromTextFileV2",
             attrs={"key_index": -2, "value_index": -1, "vocab_size": -1, "delimiter": "\t",
                    "offset": 0},
             num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _text_init_shape(op, handle, filename):
    if filename.ndims not in (None, 0):
        raise op.shape_error(f"filename must be a scalar, got shape {filename}")
    return []


def _find_dtype(op):
    # (TensorFlow infers the value type from default_value: tf.raw_ops sets no attribute)
    value_dtype = op.attrs.get("value_dtype")
    return [_dtypes.as_dtype(value_dtype) if value_dtype is not None
            else op.inputs[2].dtype.base_dtype]


@register_op("LookupTableFindV2", attrs={"value_dtype": None}, dtype_fn=_find_dtype,
             stateful=True)
def _find_shape(op, handle, keys, default_value):
    # one value per key: the default's shape is the table's value shape (a scalar but
    # for MutableHashTableOfTensors)
    if default_value.ndims is None:
        return [TensorShape(None)]
    return [keys.concatenate(default_value)]


@register_op("LookupTableSizeV2", dtype_fn=fixed_dtype(_dtypes.int64), stateful=True)
def _size_shape(op, handle):
    return [TensorShape([])]


not_differentiable("HashTableV2", "LookupTableImportV2", "InitializeTableFromTextFileV2",
                   "LookupTableFindV2", "LookupTableSizeV2")


# -- initializers ------------------------------------------------------------------------
def _check_dtype(dtype, allowed, what: str):
    d = _dtypes.as_dtype(dtype).base_dtype
    if d not in allowed:
        raise TypeError(f"{what}: dtype {d.name} is not supported; use one of "
                        f"{[a.name for a in allowed]}")
    return d


class TextFileIndex:
    """Special column indices of `TextFileInitializer`: the whole line, or its number.

    Example
    -------
    >>> TextFileIndex.WHOLE_LINE, TextFileIndex.LINE_NUMBER
    (-2, -1)
    """

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class KeyValueTensorInitializer:
    """Fills a table from a tensor of keys and a tensor of values of the same shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> init = tf.lookup.KeyValueTensorInitializer([1, 2], ["one", "two"])
    >>> init.key_dtype, init.value_dtype
    (tf.int32, tf.string)
    """

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None) -> None:
        with name_scope(name, "key_value_init", [keys, values]):
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name or "key_value_init"
        self.key_dtype = _check_dtype(self._keys.dtype, _KEY_TYPES,
                                      "KeyValueTensorInitializer keys")
        self.value_dtype = _check_dtype(self._values.dtype, _VALUE_TYPES,
                                        "KeyValueTensorInitializer values")

    def clone(self):
        """This initializer rebuilt in the default graph (its keys and values must be
        constants): how a table reaches a `tf.data` function's graph."""
        keys, values = constant_value(self._keys), constant_value(self._values)
        if keys is None or values is None:
            raise ValueError(
                f"Table initializer '{self._name}': a table used inside a tf.data function "
                "needs constant keys and values (flowgraph traces dataset functions into "
                "their own graph); build the keys and values from Python/NumPy values")
        return KeyValueTensorInitializer(keys, values, self.key_dtype, self.value_dtype,
                                         name=self._name)

    def initialize(self, table):
        """The op filling `table` (its handle) with these keys and values."""
        _check_table_types(table, self.key_dtype, self.value_dtype)
        with name_scope(self._name):
            return make_op("LookupTableImportV2",
                           [table.resource_handle, self._keys, self._values],
                           name="LookupTableImportV2")


class TextFileInitializer:
    """Fills a table from a text file: one entry per line, key and value taken from the
    `delimiter`-separated columns `key_index` and `value_index`, or from the whole line
    (`TextFileIndex.WHOLE_LINE`) or the line number (`TextFileIndex.LINE_NUMBER`).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     init = tf.lookup.TextFileInitializer(
    ...         "vocab.txt", tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
    ...         tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
    >>> init.value_dtype
    tf.int64
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0) -> None:
        if key_index < TextFileIndex.WHOLE_LINE or value_index < TextFileIndex.WHOLE_LINE:
            raise ValueError(f"TextFileInitializer: key_index and value_index must be >= -2, "
                             f"got {key_index} and {value_index}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"TextFileInitializer: vocab_size must be > 0, got {vocab_size}")
        self.key_dtype = _check_dtype(key_dtype, _KEY_TYPES, "TextFileInitializer key_dtype")
        self.value_dtype = _check_dtype(value_dtype, _VALUE_TYPES,
                                        "TextFileInitializer value_dtype")
        if key_index == TextFileIndex.LINE_NUMBER and not self.key_dtype.is_integer:
            raise ValueError("TextFileInitializer: key_index LINE_NUMBER needs an integer "
                             f"key_dtype, got {self.key_dtype.name}")
        if value_index == TextFileIndex.LINE_NUMBER and not self.value_dtype.is_integer:
            raise ValueError("TextFileInitializer: value_index LINE_NUMBER needs an integer "
                             f"value_dtype, got {self.value_dtype.name}")
        if (value_index == TextFileIndex.WHOLE_LINE
                and self.value_dtype != _dtypes.string):
            raise ValueError("TextFileInitializer: value_index WHOLE_LINE needs a string "
                             f"value_dtype, got {self.value_dtype.name}")
        self._filename = filename
        self.key_index, self.value_index = int(key_index), int(value_index)
        self.vocab_size = vocab_size
        self.delimiter = delimiter
        self.value_index_offset = int(value_index_offset)  # added to the line numbers
        self._name = name or "text_file_init"

    def clone(self):
        """This initializer for another graph (see `KeyValueTensorInitializer.clone`)."""
        filename = self._filename
        if isinstance(filename, Tensor):
            filename = constant_value(filename)
            if filename is None:
                raise ValueError("TextFileInitializer: a table used inside a tf.data function "
                                 "needs a constant file name")
            filename = np.asarray(filename, dtype=object).reshape(())[()]
        return TextFileInitializer(filename, self.key_dtype, self.key_index, self.value_dtype,
                                   self.value_index, self.vocab_size, self.delimiter,
                                   name=self._name,
                                   value_index_offset=self.value_index_offset)

    def initialize(self, table):
        """The op filling `table` (its handle) from the file."""
        _check_table_types(table, self.key_dtype, self.value_dtype)
        with name_scope(self._name):
            filename = convert_to_tensor(self._filename, dtype=_dtypes.string,
                                         name="asset_filepath")
            op = make_op("InitializeTableFromTextFileV2", [table.resource_handle, filename], {
                "key_index": self.key_index, "value_index": self.value_index,
                "vocab_size": -1 if self.vocab_size is None else int(self.vocab_size),
                "delimiter": self.delimiter, "offset": self.value_index_offset},
                name="InitializeTableFromTextFileV2")
        add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return op


def _check_table_types(table, key_dtype, value_dtype) -> None:
    if table.key_dtype != key_dtype or table.value_dtype != value_dtype:
        raise TypeError(f"Table '{table.name}' has key/value dtypes {table.key_dtype.name}/"
                        f"{table.value_dtype.name}, but its initializer gives "
                        f"{key_dtype.name}/{value_dtype.name}")


# -- tables ------------------------------------------------------------------------------
class StaticHashTable:
    """An immutable key -> value table filled by `initializer` when
    `tf.tables_initializer()` runs (``tf.lookup.StaticHashTable``, TF1's ``HashTable``).

    Parameters
    ----------
    initializer : KeyValueTensorInitializer or TextFileInitializer
        Where the entries come from; also fixes the key and value dtypes.
    default_value : scalar
        The value of a missing key.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.lookup.StaticHashTable(
    ...     tf.lookup.KeyValueTensorInitializer([3, 5], [0.5, 1.5]), -1.0)
    >>> with tf.Session() as sess:
    ...     sess.run(t.initializer)
    ...     print(sess.run(t.lookup(tf.constant([5, 4]))), sess.run(t.size()))
    [ 1.5 -1. ] 2
    """

    def __init__(self, initializer, default_value, name=None,
                 experimental_is_anonymous=False) -> None:
        self.key_dtype = initializer.key_dtype
        self.value_dtype = initializer.value_dtype
        self._initializer = initializer
        self._default_arg = default_value
        self._copies: dict = {}  # graph -> this table rebuilt there (tf.data functions)
        self._self_initializing = False
        with name_scope(name, "hash_table") as scope:
            self._name = scope.rstrip("/")
            self._default = convert_to_tensor(default_value, dtype=self.value_dtype,
                                              name="default_value")
            if self._default.shape.ndims not in (None, 0):
                raise ValueError(f"{type(self).__name__}: default_value must be a scalar, "
                                 f"got shape {self._default.shape}")
            self.resource_handle = make_tensor("HashTableV2", [], {
                "key_dtype": self.key_dtype, "value_dtype": self.value_dtype},
                name="hash_table")
            self._init_op = initializer.initialize(self)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, self._init_op)

    def export(self, name=None):
        """``(keys, values)``: every entry, as two vectors (in no particular order)."""
        with name_scope(name, f"{self._name}_Export"):
            op = make_op("LookupTableExportV2", [self.resource_handle],
                         {"Tkeys": self.key_dtype, "Tvalues": self.value_dtype},
                         name="LookupTableExportV2")
            return op.outputs[0], op.outputs[1]

    @property
    def name(self) -> str:
        return self._name

    @property
    def initializer(self):
        return self._init_op

    @property
    def init(self):
        return self._init_op

    @property
    def default_value(self):
        return self._default

    def size(self, name=None):
        """The number of entries (an int64 scalar tensor)."""
        return make_tensor("LookupTableSizeV2", [self.resource_handle],
                           name=name or f"{self._name}_Size")

    def lookup(self, keys, name=None):
        """The values of `keys` (a Tensor or `SparseTensor`), `default_value` for missing
        keys; the result has the keys' shape (a SparseTensor for a SparseTensor)."""
        if isinstance(keys, SparseTensor):
            values = self.lookup(keys.values, name=name)
            return SparseTensor(keys.indices, values, keys.dense_shape)
        if not isinstance(keys, Tensor):
            keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        if keys.dtype.base_dtype != self.key_dtype:
            raise TypeError(f"Table '{self._name}': keys must be {self.key_dtype.name}, got "
                            f"{keys.dtype.name} ('{keys.name}')")
        table = self.for_graph(keys.graph)
        if table is not self:
            return table.lookup(keys, name=name)
        inputs = [self.resource_handle, keys, self._default]
        if self._self_initializing:
            with control_dependencies([self._init_op]):
                return make_tensor("LookupTableFindV2", inputs,
                                   {"value_dtype": self.value_dtype},
                                   name=name or f"{self._name}_Lookup")
        return make_tensor("LookupTableFindV2", inputs, {"value_dtype": self.value_dtype},
                           name=name or f"{self._name}_Lookup")

    def for_graph(self, graph):
        """This table, or its copy in `graph` when `graph` is another one (the graph of a
        `tf.data` function, run in a session of its own): the copy fills itself from the
        same initializer before its first lookup."""
        if graph is self.resource_handle.graph:
            return self
        copy = self._copies.get(graph)
        if copy is None:
            with graph.as_default():
                copy = type(self)(self._initializer.clone(), self._default_arg,
                                  name=self._name.rsplit("/", 1)[-1])
            copy._self_initializing = True
            self._copies[graph] = copy
        return copy


HashTable = StaticHashTable


class StaticVocabularyTable:
    """A string or integer -> int64 id table with `num_oov_buckets` hash buckets for
    unknown keys: ``size + Fingerprint64(key) % num_oov_buckets``.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
    ...     ["a", "b"], tf.constant([0, 1], tf.int64)), num_oov_buckets=5)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.tables_initializer())
    ...     print(sess.run(t.lookup(tf.constant(["b", "zz", "hello"]))))
    [1 4 3]
    """

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False) -> None:
        if num_oov_buckets <= 0:
            raise ValueError(f"StaticVocabularyTable: num_oov_buckets must be > 0, got "
                             f"{num_oov_buckets}")
        if initializer.value_dtype != _dtypes.int64:
            raise TypeError(f"StaticVocabularyTable: the initializer's values must be int64, "
                            f"got {initializer.value_dtype.name}")
        self._num_oov_buckets = int(num_oov_buckets)
        with name_scope(name, "hash_table") as scope:
            self._name = scope.rstrip("/")
            self._table = StaticHashTable(initializer, -1, name="table")
        self.key_dtype = lookup_key_dtype or initializer.key_dtype
        self.value_dtype = _dtypes.int64

    @property
    def name(self) -> str:
        return self._name

    @property
    def initializer(self):
        return self._table.initializer

    @property
    def resource_handle(self):
        return self._table.resource_handle

    def size(self, name=None):
        """Table entries plus OOV buckets (an int64 scalar tensor)."""
        with name_scope(name, f"{self._name}_Size"):
            return add(self._table.size(), self._num_oov_buckets)

    def lookup(self, keys, name=None):
        """int64 ids of `keys` (a Tensor or `SparseTensor`)."""
        if isinstance(keys, SparseTensor):
            values = self.lookup(keys.values, name=name)
            return SparseTensor(keys.indices, values, keys.dense_shape)
        with name_scope(name, f"{self._name}_Lookup"):
            keys = convert_to_tensor(keys, name="keys")
            if keys.dtype.base_dtype != self._table.key_dtype:
                if keys.dtype.is_integer and self._table.key_dtype.is_integer:
                    from flowgraph.ops.math_ops import cast

                    keys = cast(keys, self._table.key_dtype)
                else:
                    raise TypeError(f"Table '{self._name}': keys must be "
                                    f"{self._table.key_dtype.name}, got {keys.dtype.name}")
            table = self._table.for_graph(keys.graph)
            ids = table.lookup(keys)
            text = keys if keys.dtype.base_dtype == _dtypes.string else as_string(keys)
            with control_dependencies([table.initializer] if table is not self._table
                                      else []):
                size = table.size()
            buckets = add(to_hash_bucket_fast(text, self._num_oov_buckets), size)
            return where(equal(ids, -1), buckets, ids)


# tf.lookup.experimental (the mutable tables).
from flowgraph.ops import lookup_experimental as experimental  # noqa: E402, F401
