"""What the op definitions of the static tables (`lookup_ops.py`) and the mutable ones
(`lookup_mutable.py`) share: the table ops' attributes, the shape of a table's handle,
and the shape check of an op writing keys and values into a table.

Example
-------
>>> from flowgraph.ops.lookup_common import TABLE_ATTRS
>>> sorted(TABLE_ATTRS)
['container', 'key_dtype', 'shared_name', 'use_node_name_sharing', 'value_dtype']
"""

from __future__ import annotations

from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["TABLE_ATTRS", "check_keys_values", "table_handle_shape"]

# The attributes of every table op (``HashTableV2``, ``MutableHashTableV2``, ...).
TABLE_ATTRS = {"key_dtype": None, "value_dtype": None, "container": "", "shared_name": "",
               "use_node_name_sharing": False}


def table_handle_shape(op):
    """The shape of a table op's one output, the table's scalar handle."""
    return [TensorShape([])]


def check_keys_values(op, keys, values, note: str = "") -> None:
    """The shape check of an op writing `values` under `keys` into a table."""
    if not keys.is_compatible_with(values):
        raise op.shape_error(f"keys and values must have the same shape{note}, got {keys} "
                             f"and {values}")
