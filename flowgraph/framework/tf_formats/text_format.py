"""Protobuf's text format, written for flowgraph's hand-written messages (`event_format`),
so that ``tf.train.write_graph(..., as_text=True)`` gives a ``.pbtxt`` TensorFlow reads.

Fields appear in field-number order, one per line, nested messages in braces, map
entries as ``attr { key: ... value { ... } }``; DataType enums by name (``DT_FLOAT``),
bytes and strings C-escaped with octal escapes for non-printable bytes.

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

import numpy as np

from flowgraph.framework import dtypes as _dtypes

__all__ = ["datatype_name", "message_to_text"]

_SPECIAL_DT = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}
_DTYPE_FIELDS = ("dtype", "type")


def datatype_name(enum: int) -> str:
    """TensorFlow's name of a DataType enum value (``1`` -> ``DT_FLOAT``)."""
    try:
        name = _dtypes.as_dtype(int(enum)).name
    except (TypeError, ValueError, KeyError):
        return str(int(enum))
    return _SPECIAL_DT.get(name, "DT_" + name.upper())


def _escape(data) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    out = []
    for b in raw:
        ch = chr(b)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch in "\"'\\":
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _scalar(name: str, kind, value) -> str:
    if kind == "enum" and name in _DTYPE_FIELDS:
        return datatype_name(value)
    if kind in ("string", "bytes"):
        return _escape(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return str(np.float32(value))  # the shortest text that reads back the same
    if kind == "double":
        return repr(float(value))
    return str(int(value))


def _lines(message, indent: str) -> list[str]:
    out = []
    for _number, name, kind, repeated in message._ORDERED:
        if name not in message.__dict__:
            continue
        value = message.__dict__[name]
        if isinstance(kind, tuple):  # map<K, V>
            _, kkind, vkind = kind
            for key in value:
                out.append(f"{indent}{name} {{")
                out.append(f"{indent}  key: {_scalar('key', kkind, key)}")
                out.extend(_field_lines("value", vkind, value[key], indent + "  "))
                out.append(f"{indent}}}")
        elif repeated:
            for item in value:
                out.extend(_field_lines(name, kind, item, indent))
        else:
            out.extend(_field_lines(name, kind, value, indent))
    return out


def _field_lines(name: str, kind, value, indent: str) -> list[str]:
    if isinstance(kind, type):
        return [f"{indent}{name} {{", *_lines(value, indent + "  "), f"{indent}}}"]
    return [f"{indent}{name}: {_scalar(name, kind, value)}"]


def message_to_text(message) -> str:
    """The text format of a message of `event_format` (or one built like it)."""
    lines = _lines(message, "")
    return "\n".join(lines) + ("\n" if lines else "")
