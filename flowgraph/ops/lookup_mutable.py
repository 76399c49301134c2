"""Mutable lookup tables, ``tf.lookup.experimental.MutableHashTable`` and
``DenseHashTable``, with TensorFlow's op types: ``MutableHashTableV2``,
``MutableDenseHashTableV2`` (the table resources), ``LookupTableInsertV2``,
``LookupTableRemoveV2`` and ``LookupTableExportV2``; lookups, sizes and imports use the
ops of `flowgraph/ops/lookup_ops.py`. Kernels:
`flowgraph/backends/cpu/kernels_lookup_mutable.py`.

A table lives in the session's resources (one per op name, or per ``shared_name``),
starts empty, and changes when an insert or remove op runs. Values are scalars, but for a
``MutableHashTable`` with a non-scalar ``default_value`` (``MutableHashTableOfTensorsV2``).
A table made with ``checkpoint=True`` (the default) joins ``SAVEABLE_OBJECTS``: a
`tf.train.Saver` writes its entries as ``<name>-keys`` and ``<name>-values``.
``DenseHashTable`` reserves two keys, ``empty_key`` and ``deleted_key``, that may not be
inserted, looked up or removed (TensorFlow's open-addressing table needs them).

Example
-------
>>> import flowgraph as tf
>>> t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
>>> ins = t.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
>>> with tf.Session() as sess:
...     _ = sess.run(ins)
...     print(sess.run(t.lookup(tf.constant(["b", "z"]))).tolist(), sess.run(t.size()))
[2, -1] 2
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, add_to_collection, name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.lookup_common import TABLE_ATTRS, table_handle_shape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["DenseHashTable", "MutableHashTable"]

register_op("MutableHashTableV2", attrs=TABLE_ATTRS, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True)(table_handle_shape)


@register_op("MutableDenseHashTableV2",
             attrs={**TABLE_ATTRS, "value_shape": [], "initial_num_buckets": 131072,
                    "max_load_factor": 0.8},
             dtype_fn=fixed_dtype(_dtypes.string), stateful=True)
def _dense_shape(op, empty_key, deleted_key):
    return table_handle_shape(op)


@register_op("LookupTableInsertV2", num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _insert_shape(op, handle, keys, values):
    # (TensorFlow checks keys against values when the insert runs, not here)
    return []


@register_op("LookupTableRemoveV2", num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _remove_shape(op, handle, keys):
    return []


@register_op("LookupTableExportV2", attrs={"Tkeys": None, "Tvalues": None}, num_outputs=2,
             dtype_fn=lambda op: [op.attrs["Tkeys"], op.attrs["Tvalues"]], stateful=True)
def _export_shape(op, handle):
    # (TensorFlow's graphs leave both unknown, but for the keys of a v1 (ref) handle)
    v1 = op.inputs[0].dtype.is_ref_dtype
    return [TensorShape([None]) if v1 else TensorShape(None), TensorShape(None)]


register_op("MutableHashTableOfTensorsV2", attrs={**TABLE_ATTRS, "value_shape": []},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(table_handle_shape)


not_differentiable("MutableHashTableV2", "MutableHashTableOfTensorsV2",
                   "MutableDenseHashTableV2", "LookupTableInsertV2",
                   "LookupTableRemoveV2", "LookupTableExportV2")


class _MutableTable:
    """What both tables share: lookup, insert, remove, size and export ops."""

    _tensor_values = False  # whether a non-scalar default makes a table of tensors

    def _setup(self, key_dtype, value_dtype, default_value, name: str):
        self.key_dtype = _dtypes.as_dtype(key_dtype).base_dtype
        self.value_dtype = _dtypes.as_dtype(value_dtype).base_dtype
        self._default = convert_to_tensor(default_value, dtype=self.value_dtype,
                                          name="default_value")
        if self._default.shape.ndims not in (None, 0) and not self._tensor_values:
            raise ValueError(f"{type(self).__name__}: flowgraph's mutable tables hold scalar "
                             f"values; default_value has shape {self._default.shape}")

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_value(self):
        return self._default

    def _keys(self, keys):
        keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
        if keys.dtype.base_dtype != self.key_dtype:
            raise TypeError(f"Table '{self._name}': keys must be {self.key_dtype.name}, got "
                            f"{keys.dtype.base_dtype.name}")
        return keys

    def size(self, name=None):
        """The number of entries (an int64 scalar)."""
        with name_scope(name, f"{self._name}_Size"):
            return make_tensor("LookupTableSizeV2", [self.resource_handle],
                               name="LookupTableSizeV2")

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The values of `keys`; `default_value` for missing keys."""
        with name_scope(name, f"{self._name}_lookup_table_find"):
            keys = self._keys(keys)
            return make_tensor("LookupTableFindV2", [self.resource_handle, keys, self._default],
                               {"value_dtype": self.value_dtype}, name="LookupTableFindV2")

    def insert(self, keys, values, name=None):
        """An op that sets ``table[keys[i]] = values[i]``."""
        with name_scope(name, f"{self._name}_lookup_table_insert"):
            keys = self._keys(keys)
            values = convert_to_tensor(values, dtype=self.value_dtype, name="values")
            return make_op("LookupTableInsertV2", [self.resource_handle, keys, values],
                           name="LookupTableInsertV2")

    def remove(self, keys, name=None):
        """An op that deletes `keys` (missing keys are ignored)."""
        with name_scope(name, f"{self._name}_lookup_table_remove"):
            return make_op("LookupTableRemoveV2", [self.resource_handle, self._keys(keys)],
                           name="LookupTableRemoveV2")

    def export(self, name=None):
        """``(keys, values)``: every entry, as two vectors (in no particular order)."""
        with name_scope(name, f"{self._name}_lookup_table_export_values"):
            op = make_op("LookupTableExportV2", [self.resource_handle],
                         {"Tkeys": self.key_dtype, "Tvalues": self.value_dtype},
                         name="LookupTableExportV2")
            return op.outputs[0], op.outputs[1]

    def _table_attrs(self, checkpoint: bool) -> dict:
        # (a checkpointed table is shared by its node name, as TensorFlow's)
        return {"key_dtype": self.key_dtype, "value_dtype": self.value_dtype,
                "use_node_name_sharing": bool(checkpoint)}

    def _checkpointed(self, checkpoint: bool, name: str) -> None:
        """Name the table after its op (the last part of the op's name) and, with
        `checkpoint`, add its saveable to ``SAVEABLE_OBJECTS`` as TensorFlow does: a
        default `tf.train.Saver` then writes ``<name>-keys`` and ``<name>-values``."""
        self._name = self.resource_handle.op.name.rsplit("/", 1)[-1]
        if checkpoint:
            add_to_collection(GraphKeys.SAVEABLE_OBJECTS, _TableSaveable(self, name))


class MutableHashTable(_MutableTable):
    """A key -> value table that insert and remove ops change
    (``tf.lookup.experimental.MutableHashTable``); a non-scalar `default_value` makes
    its values tensors of that shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, -1.0)
    >>> with tf.Session() as sess:
    ...     _ = sess.run(t.insert(tf.constant([7], tf.int64), tf.constant([0.5])))
    ...     print(sess.run(t.lookup(tf.constant([7, 8], tf.int64))).tolist())
    [0.5, -1.0]
    """

    _tensor_values = True

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False) -> None:
        self._setup(key_dtype, value_dtype, default_value, name)
        attrs = self._table_attrs(checkpoint)
        value_shape = self._default.shape
        if value_shape.ndims:  # (TensorFlow's MutableHashTableOfTensors)
            attrs["value_shape"] = value_shape
            self.resource_handle = make_tensor("MutableHashTableOfTensorsV2", [], attrs,
                                               name=name)
        else:
            self.resource_handle = make_tensor("MutableHashTableV2", [], attrs, name=name)
        self._checkpointed(checkpoint, name)


class DenseHashTable(_MutableTable):
    """A mutable table with two reserved keys, `empty_key` and `deleted_key`, that may
    not be used as keys (``tf.lookup.experimental.DenseHashTable``).

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.lookup.experimental.DenseHashTable(
    ...     tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1)
    >>> with tf.Session() as sess:
    ...     _ = sess.run(t.insert(tf.constant([1, 2], tf.int64), tf.constant([10, 20], tf.int64)))
    ...     print(sess.run(t.lookup(tf.constant([1, 3], tf.int64))).tolist())
    [10, -1]
    """

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True,
                 experimental_is_anonymous=False) -> None:
        self._setup(key_dtype, value_dtype, default_value, name)
        empty = convert_to_tensor(empty_key, dtype=self.key_dtype, name="empty_key")
        deleted = convert_to_tensor(deleted_key, dtype=self.key_dtype, name="deleted_key")
        attrs = self._table_attrs(checkpoint)
        if initial_num_buckets is not None:
            attrs["initial_num_buckets"] = int(initial_num_buckets)
        self.resource_handle = make_tensor("MutableDenseHashTableV2", [empty, deleted], attrs,
                                           name=name)
        self._checkpointed(checkpoint, name)


class _SaveSpec:
    """One tensor a saveable writes: `tensor` under checkpoint key `name`."""

    def __init__(self, tensor, name: str) -> None:
        self.tensor, self.slice_spec, self.name = tensor, "", name


class _TableSaveable:
    """A mutable table's checkpoint entries, its exported keys and values under
    ``<name>-keys`` and ``<name>-values``; restoring imports them (replacing the
    table's entries)."""

    def __init__(self, table: _MutableTable, name: str) -> None:
        keys, values = table.export()
        self.name = name
        self.op = table
        self.specs = [_SaveSpec(keys, name + "-keys"), _SaveSpec(values, name + "-values")]

    def restore(self, restored_tensors, restored_shapes=None):
        with name_scope(f"{self.name}_table_restore"):
            return make_op("LookupTableImportV2",
                           [self.op.resource_handle, *restored_tensors[:2]],
                           name="LookupTableImportV2")
