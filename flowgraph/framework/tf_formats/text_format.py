"""Protobuf's text format, written for flowgraph's hand-written messages (`event_format`),
so that ``tf.train.write_graph(..., as_text=True)`` gives a ``.pbtxt`` TensorFlow reads.

The writer lives in `flowgraph.framework.proto_text` (``str(message)`` uses it); this
module is its public name. Fields appear in field-number order, one per line, nested
messages in braces, map entries (sorted by key) as ``attr { key: ... value { ... } }``;
DataType enums by name (``DT_FLOAT``), bytes and strings C-escaped with octal escapes for
non-printable bytes; floats in their shortest form (``2`` for 2.0, as TensorFlow prints).

Example
-------
>>> from flowgraph.framework.event_format import NodeDef, AttrValue
>>> print(message_to_text(NodeDef(name="x", op="Placeholder",
...                               attr={"dtype": AttrValue(type=1)})), end="")
name: "x"
op: "Placeholder"
attr {
  key: "dtype"
  value {
    type: DT_FLOAT
  }
}
"""

from __future__ import annotations

from flowgraph.framework.proto_text import datatype_name, message_to_text

__all__ = ["datatype_name", "message_to_text"]
