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
    get_default_graph,
    name_scope,
)
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.lookup_common import TABLE_ATTRS, check_keys_values, table_handle_shape
from flowgraph.ops.lookup_compat import tables_initializer
from flowgraph.ops.math_ops import add, not_equal
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
        # (TensorFlow converts them where the initializer is made; the import op goes to
        # a scope of the initializer's name when the table is built)
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
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        # TensorFlow's checks, in its order and words
        kd, vd = _dtypes.as_dtype(key_dtype), _dtypes.as_dtype(value_dtype)
        whole, line = TextFileIndex.WHOLE_LINE, TextFileIndex.LINE_NUMBER
        if key_index < whole:
            raise ValueError(f"`key_index` should be >= -2, received: {key_index}.")
        if key_index == line and kd != _dtypes.int64:
            raise ValueError(f"`key_dtype` must be int64 if `key_index` is {line}, received: "
                             f"{kd}")
        if key_index == whole and not kd.is_integer and kd != _dtypes.string:
            raise ValueError("`key_dtype` should be either integer or string for `key_index` "
                             f"{whole}, received: {kd}")
        if value_index < whole:
            raise ValueError(f"`value_index` should be >= -2, received: {value_index}")
        if value_index == line and vd != _dtypes.int64:
            raise ValueError(f"`value_dtype` must be int64 for `value_index` {line}, received: "
                             f"{vd}")
        if value_index == whole and not vd.is_integer and vd != _dtypes.string:
            raise ValueError("`value_dtype` should be either integer or string for "
                             f"`value_index` {whole}, received: {vd}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self.key_dtype = _check_dtype(kd, _KEY_TYPES, "TextFileInitializer key_dtype")
        self.value_dtype = _check_dtype(vd, _VALUE_TYPES, "TextFileInitializer value_dtype")
        # TensorFlow tracks the file as an asset: a constant "asset_path" made here
        self._filename = filename if isinstance(filename, Tensor) else convert_to_tensor(
            filename, dtype=_dtypes.string, name="asset_path")
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
            filename = self._filename
            op = make_op("InitializeTableFromTextFileV2", [table.resource_handle, filename], {
                "key_index": self.key_index, "value_index": self.value_index,
                "vocab_size": -1 if self.vocab_size is None else int(self.vocab_size),
                "delimiter": self.delimiter, "offset": self.value_index_offset},
                name="InitializeTableFromTextFileV2")
        if constant_value(filename) is not None:
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
        # TensorFlow's layout: the default value, the table op (named `name`) and the
        # initializer's ops where the table is made; the table's name is its op's
        self._default = convert_to_tensor(default_value, dtype=self.value_dtype)
        if self._default.shape.ndims not in (None, 0):
            raise ValueError(f"{type(self).__name__}: default_value must be a scalar, "
                             f"got shape {self._default.shape}")
        self.resource_handle = make_tensor("HashTableV2", [], {
            "key_dtype": self.key_dtype, "value_dtype": self.value_dtype},
            name=name or "hash_table")
        self._name = self.resource_handle.op.name.rsplit("/", 1)[-1]
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
        table = self.for_graph(get_default_graph())
        if table is not self:
            return table.size(name)
        deps = [self._init_op] if self._self_initializing else []
        with name_scope(name, f"{self._name}_Size"), control_dependencies(deps):
            return make_tensor("LookupTableSizeV2", [self.resource_handle],
                               name="LookupTableSizeV2")

    def lookup(self, keys, name=None):
        """The values of `keys` (a Tensor or `SparseTensor`), `default_value` for missing
        keys; the result has the keys' shape (a SparseTensor for a SparseTensor)."""
        if isinstance(keys, SparseTensor):
            values = self.lookup(keys.values, name=name)
            return SparseTensor(keys.indices, values, keys.dense_shape)
        if not isinstance(keys, Tensor):
            keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        if keys.dtype.base_dtype != self.key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self.key_dtype}, "
                            f"received: {keys.dtype} (table '{self._name}', keys "
                            f"'{keys.name}')")
        table = self.for_graph(keys.graph)
        if table is not self:
            return table.lookup(keys, name=name)
        inputs = [self.resource_handle, keys, self._default]
        deps = [self._init_op] if self._self_initializing else []
        with name_scope(name, f"{self._name}_Lookup"), control_dependencies(deps):
            return make_tensor("LookupTableFindV2", inputs, {"value_dtype": self.value_dtype},
                               name="LookupTableFindV2")

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
                                  name=self._name)
            copy._self_initializing = True
            self._copies[graph] = copy
        return copy


HashTable = StaticHashTable


class BucketedTableAPI:
    """The members a table of ids with hash buckets (``self._buckets``, a `BucketedIds`)
    shares with TensorFlow's: its name, initializer, resource handle and size."""

    @property
    def name(self) -> str:
        return self._buckets.name

    @property
    def initializer(self):
        return self._buckets.initializer()

    @property
    def resource_handle(self):
        table = self._buckets.table
        return None if table is None else table.resource_handle

    def size(self, name=None):
        """Table entries plus OOV buckets (an int64 scalar tensor)."""
        return self._buckets.size(name)


class StaticVocabularyTable(BucketedTableAPI):
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
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        table = None
        if initializer is not None:
            lookup_key_dtype = check_id_table_dtypes(
                initializer.key_dtype, initializer.value_dtype, lookup_key_dtype,
                "Invalid `value_dtype`, expected {} but got {}.")
            table = StaticHashTable(initializer, -1)
        else:
            lookup_key_dtype = _dtypes.string
        self._buckets = BucketedIds(table, int(num_oov_buckets), to_hash_bucket_fast,
                                    name, "hash_bucket")
        self.key_dtype = _dtypes.as_dtype(lookup_key_dtype).base_dtype
        self.value_dtype = _dtypes.int64

    def lookup(self, keys, name=None):
        """int64 ids of `keys` (a Tensor or `SparseTensor`)."""
        return self._buckets.lookup(keys, self.key_dtype, name)


def check_id_table_dtypes(key_dtype, value_dtype, lookup_key_dtype, value_message: str):
    """The key dtype lookups take for an id table with hash buckets over a table of
    `key_dtype` -> `value_dtype`, checked as TensorFlow checks them."""
    supported = (_dtypes.int64, _dtypes.string)
    lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype or key_dtype).base_dtype
    if key_dtype not in supported:
        raise TypeError(f"Invalid `key_dtype`, expected one of {supported}, but got "
                        f"{key_dtype}.")
    if key_dtype.is_integer != lookup_key_dtype.is_integer:
        raise TypeError("Invalid `key_dtype`, expected "
                        f"{'integer' if lookup_key_dtype.is_integer else 'non-integer'} but "
                        f"got {key_dtype}.")
    if value_dtype != _dtypes.int64:
        raise TypeError(value_message.format(_dtypes.int64, value_dtype))
    return lookup_key_dtype


class BucketedIds:
    """The lookup of an id table with ``num_oov_buckets`` hash buckets after its
    entries (`StaticVocabularyTable`, TF1's ``IdTableWithHashBuckets``), built as
    TensorFlow builds it: in a ``<name>_Lookup`` scope, the keys' buckets
    (``hash_bucket``), the table's ids, ``Add`` of the table size to the buckets, and
    ``SelectV2`` of the ids found (``NotEqual`` to the default) or the buckets. Without
    a table, the buckets alone."""

    def __init__(self, table, num_oov_buckets: int, hasher, name, default_name: str):
        if name:
            name = name.rstrip("/")
        name = name or (table.name if table is not None else default_name)
        self.table = table
        self.num_oov_buckets = num_oov_buckets
        self.hasher = hasher  # (strings, num_buckets, name) -> int64 buckets
        self.name = name.split("/")[-1]

    def initializer(self):
        if self.table is not None:
            return self.table.initializer
        from flowgraph.ops.control_flow_ops import no_op

        with name_scope(None, "init"):
            return no_op()

    def size(self, name=None):
        with name_scope(name, f"{self.name}_Size"):
            if self.table is None:
                tsize = convert_to_tensor(0, dtype=_dtypes.int64)
            else:
                tsize = self.table.size()  # (its copy, in a tf.data function)
            return tsize + self.num_oov_buckets

    def lookup(self, keys, key_dtype, name=None):
        values = keys.values if isinstance(keys, SparseTensor) else keys
        if not isinstance(values, Tensor):
            values = convert_to_tensor(values, dtype=key_dtype, name="keys")
        if values.dtype.base_dtype != key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {key_dtype}, received: "
                            f"{values.dtype} (table '{self.name}', keys '{values.name}')")
        table = self.table
        if table is not None and table.key_dtype == _dtypes.int64:
            from flowgraph.ops.math_ops import cast

            values = cast(values, _dtypes.int64)
        with name_scope(name, f"{self.name}_Lookup"):
            text = values if values.dtype.base_dtype == _dtypes.string else as_string(values)
            ids = self.hasher(text, self.num_oov_buckets, name="hash_bucket")
            if table is not None:
                buckets = ids
                # (in a tf.data function's graph: the table's copy there, which fills
                # itself before its first use)
                graph_table = table.for_graph(values.graph)
                found = graph_table.lookup(values)
                buckets = add(buckets, graph_table.size())
                ids = where_v2(not_equal(found, graph_table.default_value), found, buckets)
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, ids, keys.dense_shape)
        return ids


# tf.lookup.experimental (the mutable tables).
from flowgraph.ops import lookup_experimental as experimental  # noqa: E402, F401
