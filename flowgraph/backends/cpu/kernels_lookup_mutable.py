"""CPU kernels of the mutable lookup tables (`flowgraph/ops/lookup_mutable.py`). A
table is a dict in the session's resources, behind a lock; ``LookupTableFindV2``,
``LookupTableSizeV2`` and ``LookupTableImportV2`` (`kernels_lookup.py`) read it through
the same ``read``/``entries``/``fill`` interface as a static table's state."""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_lookup import (
    HashTableState,
    TableKernel,
    _key,
    values_array,
)
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


class MutableTableState:
    """The entries of one mutable table (empty at first); `reserved` holds a dense
    table's empty and deleted keys."""

    def __init__(self, name: str, key_dtype, value_dtype, reserved=()) -> None:
        self.name = name
        self.key_dtype = _dtypes.as_dtype(key_dtype).base_dtype
        self.value_dtype = _dtypes.as_dtype(value_dtype).base_dtype
        self.entries: dict = {}
        self.reserved = tuple(reserved)
        self.lock = threading.Lock()

    def check_keys(self, keys: list, what: str) -> None:
        for k in keys:
            if k in self.reserved:
                which = "empty_key" if k == self.reserved[0] else "deleted_key"
                raise errors.InvalidArgumentError(
                    None, None, f"{what}: table '{self.name}': Using the {which} as a table "
                    f"key is not allowed (key {k!r})")

    def read(self) -> dict:
        return self.entries

    def fill(self, keys, values, what: str) -> None:
        """Replace all entries (an import)."""
        keys = [_key(k) for k in keys]
        self.check_keys(keys, what)
        with self.lock:
            self.entries = dict(zip(keys, values))


def _table_op(kind: str, dense: bool):
    class TableOp(TableKernel):
        noun = "mutable lookup table"

        def __call__(self, *reserved):
            keys = tuple(_key(np.asarray(k).reshape(()).item()) for k in reserved)
            if dense and keys[0] == keys[1]:
                raise errors.InvalidArgumentError(
                    None, None, f"{kind} '{self.name}': empty_key and deleted_key must differ, "
                    f"both are {keys[0]!r}")
            return self.table(lambda name: MutableTableState(name, *self.types, reserved=keys),
                              MutableTableState)

    TableOp.__name__ = kind
    return TableOp


cpu_kernel("MutableHashTableV2")(_table_op("MutableHashTableV2", False))
cpu_kernel("MutableDenseHashTableV2")(_table_op("MutableDenseHashTableV2", True))


class TensorTableState(MutableTableState):
    """A mutable table whose values are tensors of `value_shape` (one array per key)."""

    def __init__(self, name: str, key_dtype, value_dtype, value_shape) -> None:
        super().__init__(name, key_dtype, value_dtype)
        self.value_shape = tuple(int(d) for d in value_shape)

    def rows(self, keys: np.ndarray, values, what: str) -> list:
        """`values` as one array per key, checked against the value shape."""
        values = np.asarray(values)
        want = (keys.size, *self.value_shape)
        if values.shape != want:
            raise errors.InvalidArgumentError(
                None, None, f"{what}: table '{self.name}': Expected shape {list(want)} for "
                f"value, got {list(values.shape)}")
        return list(np.array(values, copy=True).reshape(want))

    def fill(self, keys, values, what: str) -> None:
        keys = np.asarray(keys).reshape(-1)
        rows = self.rows(keys, values, what)
        with self.lock:
            self.entries = dict(zip((_key(k) for k in keys.tolist()), rows))


class MutableHashTableOfTensorsOp(TableKernel):
    noun = "mutable lookup table"

    def __init__(self, ctx, *, key_dtype, value_dtype, value_shape=(), container="",
                 shared_name="", use_node_name_sharing=False) -> None:
        super().__init__(ctx, key_dtype=key_dtype, value_dtype=value_dtype,
                         container=container, shared_name=shared_name)
        dims = value_shape.as_list() if hasattr(value_shape, "as_list") else value_shape
        self.value_shape = [int(d) for d in dims]

    def __call__(self):
        return self.table(lambda name: TensorTableState(name, *self.types, self.value_shape),
                          MutableTableState)


cpu_kernel("MutableHashTableOfTensorsV2")(MutableHashTableOfTensorsOp)


def _mutable(table, what: str) -> MutableTableState:
    if not isinstance(table, MutableTableState):
        raise errors.InvalidArgumentError(
            None, None, f"{what}: table '{getattr(table, 'name', table)}' is not a mutable "
            "table (a StaticHashTable cannot be changed)")
    return table


@cpu_kernel("LookupTableInsertV2")
def lookup_table_insert(table, keys, values):
    table = _mutable(table, "LookupTableInsertV2")
    ks = [_key(k) for k in np.asarray(keys).reshape(-1).tolist()]
    if isinstance(table, TensorTableState):
        vs = table.rows(np.asarray(keys), values, "LookupTableInsertV2")
    else:
        vs = np.asarray(values).reshape(-1).tolist()
    if len(ks) != len(vs):
        raise errors.InvalidArgumentError(
            None, None, f"LookupTableInsertV2: table '{table.name}': {len(ks)} keys but "
            f"{len(vs)} values")
    table.check_keys(ks, "LookupTableInsertV2")
    with table.lock:
        table.entries.update(zip(ks, vs))


@cpu_kernel("LookupTableRemoveV2")
def lookup_table_remove(table, keys):
    table = _mutable(table, "LookupTableRemoveV2")
    ks = [_key(k) for k in np.asarray(keys).reshape(-1).tolist()]
    table.check_keys(ks, "LookupTableRemoveV2")
    with table.lock:
        for k in ks:
            table.entries.pop(k, None)


@cpu_kernel("LookupTableExportV2")
def lookup_table_export(table, *, Tkeys, Tvalues):
    if isinstance(table, HashTableState):  # a StaticHashTable: its entries once filled
        items = list(table.read().items())
    else:
        table = _mutable(table, "LookupTableExportV2")
        with table.lock:
            items = list(table.entries.items())
    keys = values_array([k for k, _ in items], Tkeys)
    if isinstance(table, TensorTableState):
        dtype = _dtypes.as_dtype(Tvalues).as_numpy_dtype
        values = (np.stack([v for _, v in items]).astype(dtype, copy=False) if items
                  else np.zeros((0, *table.value_shape), dtype))
        return [keys, values]
    return [keys, values_array([v for _, v in items], Tvalues)]
