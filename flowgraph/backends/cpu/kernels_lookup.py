"""CPU kernels of the lookup-table ops (`flowgraph/ops/lookup_ops.py`).

A table is a `HashTableState` in the session's resource container; the ``HashTableV2``
kernel outputs the object itself as the handle, which the other kernels receive.
Strings are keyed as bytes, integers as Python ints.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.asset_file import read_text_lines


def _np_type(dtype):
    return object if dtype == _dtypes.string else dtype.as_numpy_dtype


def _key(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    return int(v)


class HashTableState:
    """The entries of one table; None until an initializer has run."""

    def __init__(self, name: str, key_dtype, value_dtype) -> None:
        self.name = name
        self.key_dtype = _dtypes.as_dtype(key_dtype).base_dtype
        self.value_dtype = _dtypes.as_dtype(value_dtype).base_dtype
        self.entries: dict | None = None
        self.lock = threading.Lock()

    def fill(self, keys, values, what: str) -> None:
        """Insert all pairs (a table is filled once: later fills are no-ops, as in TF)."""
        with self.lock:
            if self.entries is not None:
                return
            entries: dict = {}
            for k, v in zip(keys, values):
                k = _key(k)
                if k in entries and entries[k] != v:
                    raise errors.FailedPreconditionError(
                        None, None, f"{what}: HashTable has different value for same key. "
                        f"Key {k!r} has {entries[k]!r} and trying to add value {v!r} "
                        f"(table '{self.name}'; keys must be unique)")
                entries[k] = v
            self.entries = entries

    def read(self) -> dict:
        entries = self.entries
        if entries is None:
            raise errors.FailedPreconditionError(
                None, None, f"Table not initialized. (table '{self.name}': run "
                "tf.tables_initializer() or the table's .initializer first; "
                "MonitoredSession and Estimators run it for you)")
        return entries


def values_array(values: list, dtype) -> np.ndarray:
    """A 1-D array of `dtype` (a DType or its attribute value) holding Python `values`."""
    out = np.empty(len(values), dtype=_np_type(_dtypes.as_dtype(dtype)))
    out[:] = values
    return out


class TableKernel:
    """The kernel of a table op (``HashTableV2``, the mutable tables' ops): its table in
    the session's resources, under ``shared_name`` or else the op's name."""

    noun = "lookup table"  # what an error calls a table of this kernel's type

    def __init__(self, ctx, *, key_dtype, value_dtype, container="", shared_name="",
                 use_node_name_sharing=False) -> None:
        self.resources = ctx.resources
        self.container = container or ""
        self.name = shared_name or ctx.op.name
        self.types = (key_dtype, value_dtype)

    def table(self, make, state_type):
        """The table (`make(name)` creates it), checked to be a `state_type`."""
        table = self.resources.lookup_or_create(self.container, self.name, make)
        if not isinstance(table, state_type):
            raise errors.InvalidArgumentError(
                None, None, f"Resource '{self.name}' exists and is a {type(table).__name__}, "
                f"not a {self.noun}; use another shared_name")
        return table


# (TensorFlow's kernels name these two as C++ does)
_TF_TYPE_NAMES = {"float32": "float", "float64": "double"}


# The key -> value dtypes TensorFlow's CPU kernel of HashTableV2 is registered for.
_HASH_TABLE_TYPES = {
    "string": ("string", "int64", "int32", "float32", "float64", "bool"),
    "int64": ("string", "int64", "int32", "float32", "float64"),
    "int32": ("string", "int32", "float32", "float64"),
}


@cpu_kernel("HashTableV2")
class HashTableOp(TableKernel):
    def __init__(self, ctx, **attrs) -> None:
        super().__init__(ctx, **attrs)
        if None in self.types:  # a hand-edited or damaged graph
            raise errors.InvalidArgumentError(
                None, None, f"HashTableV2 node {ctx.op.name} lacks its key_dtype or "
                f"value_dtype attribute; rebuild the graph with a lookup table constructor")
        key, value = (_dtypes.as_dtype(t).base_dtype.name for t in self.types)
        if value not in _HASH_TABLE_TYPES.get(key, ()):
            supported = "; ".join(f"{k} -> {', '.join(v)}"
                                  for k, v in _HASH_TABLE_TYPES.items())
            raise errors.InvalidArgumentError(
                None, None, f"No OpKernel was registered to support Op 'HashTableV2' with "
                f"key_dtype {key} and value_dtype {value} (node {ctx.op.name}); registered "
                f"key -> value dtypes: {supported}")

    def __call__(self):
        table = self.table(lambda name: HashTableState(name, *self.types), HashTableState)
        key_dtype, value_dtype = (_dtypes.as_dtype(t).base_dtype for t in self.types)
        if (table.key_dtype, table.value_dtype) != (key_dtype, value_dtype):
            # (two table ops of one shared_name are one table)
            k, v, old_k, old_v = (_TF_TYPE_NAMES.get(d.name, d.name) for d in (
                key_dtype, value_dtype, table.key_dtype, table.value_dtype))
            raise errors.InvalidArgumentError(
                None, None, f"Conflicting key/value dtypes {k}->{v} with {old_k}-{old_v} "
                f"for table {self.name}")
        return table


@cpu_kernel("LookupTableImportV2")
def lookup_table_import(table, keys, values):
    if getattr(table, "value_shape", None) is not None:  # a table of tensors: one row a key
        table.fill(np.asarray(keys), values, "LookupTableImportV2")
        return
    table.fill(np.asarray(keys).reshape(-1).tolist(), np.asarray(values).reshape(-1).tolist(),
               "LookupTableImportV2")


def _column(parts: list[str], index: int, line_no: int, dtype, path: str, offset: int = 0):
    if index == -1:
        return line_no + offset
    text = "\t".join(parts) if index == -2 else None
    if index >= 0:
        if index >= len(parts):
            raise errors.InvalidArgumentError(
                None, None, f"InitializeTableFromTextFileV2: line {line_no + 1} of {path} "
                f"has {len(parts)} columns, but column {index} is requested")
        text = parts[index]
    if dtype == _dtypes.string:
        return text.encode("utf-8")
    try:
        if dtype.is_integer:
            return int(text)
        if dtype == _dtypes.bool:
            return text.lower() in ("1", "true")
        return float(text)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"InitializeTableFromTextFileV2: line {line_no + 1} of {path}: "
            f"field {text!r} is not a valid {dtype.name}") from None


@cpu_kernel("InitializeTableFromTextFileV2")
def initialize_table_from_text_file(table, filename, *, key_index, value_index, vocab_size,
                                    delimiter, offset=0):
    path = np.asarray(filename, dtype=object).reshape(())[()]
    path = path.decode("utf-8") if isinstance(path, bytes) else str(path)
    lines = read_text_lines(path, "InitializeTableFromTextFileV2")
    if vocab_size > 0:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(
                None, None, f"InitializeTableFromTextFileV2: Invalid vocab_size in {path}: "
                f"expected {vocab_size} lines, the file has {len(lines)}")
        lines = lines[:vocab_size]
    keys, values = [], []
    for i, line in enumerate(lines):
        # WHOLE_LINE keeps the line as it is, delimiters included.
        parts = line.split(delimiter) if delimiter else line.split()
        whole = [line]
        # `offset` (TF 2's `value_index_offset`) is added to line numbers, keys' and values'.
        keys.append(_column(whole if key_index == -2 else parts,
                            key_index, i, table.key_dtype, path, offset))
        values.append(_column(whole if value_index == -2 else parts,
                              value_index, i, table.value_dtype, path, offset))
    table.fill(keys, values, "InitializeTableFromTextFileV2")


@cpu_kernel("LookupTableFindV2")
def lookup_table_find(table, keys, default_value, *, value_dtype=None):
    if value_dtype is None:
        value_dtype = np.asarray(default_value).dtype
    entries = table.read()
    value_shape = getattr(table, "value_shape", None)
    if value_shape is not None:  # a table of tensors (kernels_lookup_mutable.py)
        default = np.asarray(default_value)
        if default.shape != value_shape:
            raise errors.InvalidArgumentError(
                None, None, f"LookupTableFindV2: table '{table.name}': Expected shape "
                f"{list(value_shape)} for default value, got {list(default.shape)}")
        rows = [entries.get(_key(k), default) for k in np.asarray(keys).reshape(-1).tolist()]
        out = np.stack(rows) if rows else np.zeros((0, *value_shape), default.dtype)
        return out.astype(default.dtype, copy=False).reshape(np.shape(keys) + value_shape)
    default = np.asarray(default_value).reshape(()).item()
    flat_keys = [_key(k) for k in np.asarray(keys).reshape(-1).tolist()]
    if getattr(table, "reserved", None):  # a dense table's empty and deleted keys
        table.check_keys(flat_keys, "LookupTableFindV2")
    flat = [entries.get(k, default) for k in flat_keys]
    return values_array(flat, value_dtype).reshape(np.shape(keys))


@cpu_kernel("LookupTableSizeV2")
def lookup_table_size(table):
    return np.int64(len(table.entries or ()))
