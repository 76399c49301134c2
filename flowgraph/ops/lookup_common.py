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

from flowgraph.framework.tensor_shape import TensorShape, as_shape

__all__ = ["TABLE_ATTRS", "check_keys_values", "table_handle_shape", "table_value_shape"]

# The attributes of every table op (``HashTableV2``, ``MutableHashTableV2``, ...).
TABLE_ATTRS = {"key_dtype": None, "value_dtype": None, "container": "", "shared_name": "",
               "use_node_name_sharing": False}


def table_handle_shape(op):
    """The shape of a table op's one output, the table's scalar handle."""
    return [TensorShape([])]


def table_value_shape(op) -> TensorShape:
    """The shape of one value of the table `op` reads (input 0): a scalar but for a
    ``MutableHashTableOfTensors``, whose ``value_shape`` attribute says."""
    src = op.inputs[0].op
    while src.type in ("Identity", "RefIdentity", "Enter", "RefEnter") and src.inputs:
        src = src.inputs[0].op
    if "HashTableOfTensors" in src.type:
        return as_shape(src.attrs.get("value_shape") or [])
    return TensorShape([])


def check_keys_values(op, keys, values, note: str = "") -> None:
    """The shape check of an op writing `values` under `keys` into a table."""
    value_shape = table_value_shape(op)
    if value_shape.ndims:
        keys = keys.concatenate(value_shape) if keys.ndims is not None else keys
        note = f" plus the value shape {value_shape}"
    if not keys.is_compatible_with(values):
        raise op.shape_error(f"keys and values must have the same shape{note}, got {keys} "
                             f"and {values}")
