"""Protobuf's text format of flowgraph's hand-written messages (`proto_codec.Message`):
what ``str(message)`` shows and what `tf_formats.text_format` exports for ``.pbtxt``
files, and the map-key order every writer shares.

>>> from flowgraph.framework.event_format import AttrValue
>>> print(message_to_text(AttrValue(type=1)), end="")
type: DT_FLOAT
"""

from __future__ import annotations

import numpy as np

__all__ = ["datatype_name", "message_to_text", "sorted_keys"]


def sorted_keys(mapping) -> list:
    """A map's keys in TensorFlow's deterministic order: numbers by value, strings by
    their UTF-8 bytes (code point order). `protobuf_engine` and the
    binary codec (`proto_codec`) write the same order."""
    try:
        return sorted(mapping)
    except TypeError:  # str and bytes keys mixed
        return sorted(mapping, key=lambda k: k.encode("utf-8") if isinstance(k, str) else k)


_SPECIAL_DT = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}
_DTYPE_FIELDS = ("dtype", "type")


def _dtype_of(enum: int):
    from flowgraph.framework import dtypes

    return dtypes.as_dtype(enum)


def datatype_name(enum: int) -> str:
    """TensorFlow's name of a DataType enum value (``1`` -> ``DT_FLOAT``)."""
    try:
        dtype = _dtype_of(int(enum))
    except (TypeError, ValueError, KeyError):
        return str(int(enum))
    if dtype.is_ref_dtype:  # DT_FLOAT_REF: the base type's name
        return datatype_name(dtype.base_dtype.as_datatype_enum) + "_REF"
    return _SPECIAL_DT.get(dtype.name, "DT_" + dtype.name.upper())


def _text_escape(data) -> str:
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


def _round_trip_g(value: float, digits: int, more: int, width) -> str:
    """C's ``%.{digits}g``, or ``%.{digits+more}g`` where that does not read back as the
    same `width` (np.float32 or float) value: how protobuf's ``upb`` runtime prints floats
    and doubles in ``str(message)``."""
    if value != value:
        return "nan"
    text = f"{value:.{digits}g}"
    if width(float(text)) != width(value):
        text = f"{value:.{digits + more}g}"
    return text


def _text_scalar(name: str, kind, value, printed: bool = False) -> str:
    if printed and kind == "float":  # FLT_DIG digits, 9 where 6 do not round-trip
        return _round_trip_g(float(np.float32(value)), 6, 3, np.float32)
    if printed and kind == "double":  # DBL_DIG digits, 17 where 15 do not round-trip
        return _round_trip_g(float(value), 15, 2, float)
    if kind == "enum" and name in _DTYPE_FIELDS:
        return datatype_name(value)
    if kind in ("string", "bytes"):
        return _text_escape(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":  # the shortest text that reads back the same, "2" for 2.0 (C++'s)
        return _text_short(str(np.float32(value)))
    if kind == "double":
        return _text_short(repr(float(value)))
    return str(int(value))


def _text_short(text: str) -> str:
    return text[:-2] if text.endswith(".0") else text


def _text_lines(message, indent: str, printed: bool = False) -> list[str]:
    out = []
    # str(message) (protobuf's upb printer) keeps the .proto's declaration order, which
    # FIELDS follows (Summary.Value: node_name, tag, metadata, then the value oneof);
    # text_format.MessageToString sorts by field number.
    # ENUM_NAMES (field -> {value: name}) names a message's enum values, as protobuf does
    enums = getattr(type(message), "ENUM_NAMES", None) or {}
    for _number, name, kind, repeated in (message.FIELDS if printed else message._ORDERED):
        if name not in message.__dict__:
            continue
        value = message.__dict__[name]
        if isinstance(kind, tuple):  # map<K, V>
            _, kkind, vkind = kind
            for key in sorted_keys(value):  # protobuf's printer sorts map keys
                out.append(f"{indent}{name} {{")
                out.append(f"{indent}  key: {_text_scalar('key', kkind, key)}")
                out.extend(_field_text_lines("value", vkind, value[key], indent + "  ",
                                             printed))
                out.append(f"{indent}}}")
        elif repeated:
            for item in value:
                out.extend(_field_text_lines(name, kind, item, indent, printed,
                                             enums.get(name)))
        else:
            out.extend(_field_text_lines(name, kind, value, indent, printed, enums.get(name)))
    return out


def _field_text_lines(name: str, kind, value, indent: str, printed: bool,
                      enum_names=None) -> list[str]:
    if isinstance(kind, type):
        return [f"{indent}{name} {{", *_text_lines(value, indent + "  ", printed),
                f"{indent}}}"]
    if enum_names is not None and kind == "enum" and int(value) in enum_names:
        return [f"{indent}{name}: {enum_names[int(value)]}"]  # protobuf writes the name
    return [f"{indent}{name}: {_text_scalar(name, kind, value, printed)}"]


def message_to_text(message, *, printed: bool = False) -> str:
    """The text format of a message of `event_format` (or one built like it).

    ``printed=True`` gives what ``str(message)`` shows under protobuf's ``upb`` runtime:
    fields in declaration order, floats as ``%.6g`` (``%.9g`` where that does not read
    back the same) and doubles as ``%.15g`` (else ``%.17g``)."""
    lines = _text_lines(message, "", printed)
    return "\n".join(lines) + ("\n" if lines else "")
