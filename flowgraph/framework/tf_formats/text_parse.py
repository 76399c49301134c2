"""Protobuf's text format read into flowgraph's hand-written messages (`event_format`):
the inverse of `text_format.message_to_text`, for ``.pbtxt`` graphs and text ``.meta``
files written by TensorFlow or by flowgraph.

Grammar accepted: ``name: value`` for scalars, ``name { ... }`` (or ``name: { ... }``,
or ``< ... >``) for messages, map entries as ``name { key: K value: V }``, repeated
scalars as repeated lines or ``name: [a, b]``, ``#`` comments. Strings are C-escaped
(octal, hex and the usual letters) and adjacent strings concatenate; enums are numbers
or names (``DT_FLOAT``, or a constant of the message class such as ``V2``). Fields the
message class does not declare are skipped, as the binary reader skips them; nesting
is bounded.

Example
-------
>>> from flowgraph.framework.event_format import NodeDef
>>> node = parse_text('name: "x" op: "Placeholder" attr { key: "dtype" '
...                   'value { type: DT_FLOAT } }', NodeDef)
>>> node.name, node.attr["dtype"].type
('x', 1)
"""

from __future__ import annotations

import re

from flowgraph.framework.event_format import DecodeError

__all__ = ["TextParseError", "parse_text"]

_MAX_DEPTH = 64
_TOKEN = re.compile(r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?)
              |-?(?:inf|infinity|nan)\b)
    |(?P<id>[A-Za-z_][A-Za-z0-9_.]*)|(?P<sym>[:{}<>\[\],;])""", re.X | re.I)
_RANGES = {"int32": (-(1 << 31), 1 << 31), "enum": (-(1 << 31), 1 << 31),
           "int64": (-(1 << 63), 1 << 63), "uint64": (0, 1 << 64)}
_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92,
            "'": 39, '"': 34, "?": 63}


class TextParseError(DecodeError):
    """Text that is not a message of the expected type (a DataLossError and ValueError)."""


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TextParseError(f"unexpected character {text[pos]!r} at offset {pos}")
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup), pos))
        pos = m.end()
    return out


def _unescape(token: str) -> bytes:
    body, out, i = token[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group()
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif nxt in "xX":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            if digits is None:
                raise TextParseError(f"bad hex escape in {token[:40]}")
            out.append(int(digits.group(), 16))
            i += 2 + len(digits.group())
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            raise TextParseError(f"unknown escape \\{nxt} in {token[:40]}")
    return bytes(out)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "", -1)

    def take(self, value: str | None = None):
        tok = self.peek()
        if tok[0] == "end":
            raise TextParseError(f"unexpected end of the text (expected {value or 'a value'})")
        if value is not None and tok[1] != value:
            raise TextParseError(f"expected {value!r} at offset {tok[2]}, found {tok[1]!r}")
        self.i += 1
        return tok

    def message(self, cls, close: str | None, depth: int):
        if depth > _MAX_DEPTH:
            raise TextParseError(f"messages nest deeper than {_MAX_DEPTH} levels")
        msg = cls()
        while True:
            kind, value, pos = self.peek()
            if close is None and kind == "end":
                return msg
            if value == close and kind == "sym":
                self.take()
                return msg
            if kind != "id":
                raise TextParseError(f"expected a field name at offset {pos}, found {value!r}")
            self.take()
            spec = cls._BY_NAME.get(value)
            if spec is None:
                self.skip_value()
            else:
                self.field(msg, spec, depth)
            if self.peek()[1] in (",", ";"):
                self.take()

    def field(self, msg, spec, depth: int) -> None:
        _, name, kind, repeated = spec
        if isinstance(kind, tuple):  # a map entry
            _, kkind, vkind = kind
            entry = self.sub_message(_entry_class(kkind, vkind), depth)
            key = entry.key if "key" in entry.__dict__ else _default(kkind)
            value = entry.__dict__.get("value")
            msg.__dict__[name][key] = value if value is not None else (
                vkind() if isinstance(vkind, type) else _default(vkind))
            return
        if isinstance(kind, type):
            values = self.list_of(lambda: self.sub_message(kind, depth))
        else:
            if self.peek()[1] == ":":
                self.take()
            values = self.list_of(lambda: self.scalar(kind, type(msg)))
        if repeated:
            msg.__dict__[name].extend(values)
        elif values:
            if isinstance(kind, type) and name in msg.__dict__:
                msg.__dict__[name].MergeFromString(values[-1].SerializeToString())
            else:
                setattr(msg, name, values[-1])

    def skip_value(self) -> None:
        """Skip the value of a field this message class does not declare."""
        if self.peek()[1] == ":":
            self.take()
        opener = self.peek()[1]
        if opener not in ("{", "<", "["):
            if self.take()[0] == "str":
                while self.peek()[0] == "str":
                    self.take()
            return
        level = 0
        while True:
            value = self.take()[1]
            if value in ("{", "<", "["):
                level += 1
            elif value in ("}", ">", "]"):
                level -= 1
                if level == 0:
                    return

    def list_of(self, one) -> list:
        if self.peek()[1] != "[":
            return [one()]
        self.take("[")
        out = []
        while self.peek()[1] != "]":
            out.append(one())
            if self.peek()[1] == ",":
                self.take()
        self.take("]")
        return out

    def sub_message(self, cls, depth: int):
        if self.peek()[1] == ":":
            self.take()
        opener = self.take()[1]
        if opener not in ("{", "<"):
            raise TextParseError(f"expected '{{' to open a {cls.__name__}, found {opener!r}")
        return self.message(cls, "}" if opener == "{" else ">", depth + 1)

    def scalar(self, kind: str, owner):
        tok_kind, value, pos = self.take()
        if kind in ("string", "bytes"):
            if tok_kind != "str":
                raise TextParseError(f"expected a string at offset {pos}, found {value!r}")
            raw = _unescape(value)
            while self.peek()[0] == "str":
                raw += _unescape(self.take()[1])
            return raw.decode("utf-8", "replace") if kind == "string" else raw
        if kind == "bool":
            if value.lower() in ("true", "t", "1"):
                return True
            if value.lower() in ("false", "f", "0"):
                return False
            raise TextParseError(f"expected true or false at offset {pos}, found {value!r}")
        if kind == "enum" and tok_kind == "id":
            return _enum_value(value, owner, pos)
        if tok_kind != "num":
            raise TextParseError(f"expected a number at offset {pos}, found {value!r}")
        try:
            if kind in ("float", "double"):
                if value.lower().lstrip("+-").startswith("0x"):
                    return float(int(value, 16))
                if value[-1] in "fF" and not value.lower().endswith("inf"):
                    value = value[:-1]  # the C suffix of 1.5f
                return float(value)
            number = int(value, 0)
        except ValueError:
            raise TextParseError(f"expected an integer at offset {pos}, found {value!r}") \
                from None
        low, high = _RANGES.get(kind, (-(1 << 63), 1 << 64))
        if not low <= number < high:
            raise TextParseError(f"integer {value} at offset {pos} is out of range for a "
                                 f"{kind} field")
        return number


def _default(kind):
    return {"string": "", "bytes": b"", "bool": False}.get(kind, 0)


_ENTRY_CLASSES: dict = {}


def _entry_class(kkind, vkind):
    from flowgraph.framework.event_format import Message

    key = (kkind, vkind)
    if key not in _ENTRY_CLASSES:
        _ENTRY_CLASSES[key] = type("MapEntry", (Message,), {
            "FIELDS": ((1, "key", kkind, False), (2, "value", vkind, False))})
    return _ENTRY_CLASSES[key]


# TensorFlow's DataType enum (types.proto), including those flowgraph has no dtype for;
# a reference type is its base + 100 (DT_FLOAT_REF = 101).
_DATATYPES = {name: i for i, name in enumerate(
    "INVALID FLOAT DOUBLE INT32 UINT8 INT16 INT8 STRING COMPLEX64 INT64 BOOL QINT8 QUINT8 "
    "QINT32 BFLOAT16 QINT16 QUINT16 UINT16 COMPLEX128 HALF RESOURCE VARIANT UINT32 UINT64 "
    "FLOAT8_E5M2 FLOAT8_E4M3FN".split())}
_DATATYPES.update(INT4=29, UINT4=30)


def _enum_value(name: str, owner, pos: int) -> int:
    if name.startswith("DT_"):
        base = name[3:]
        ref = base.endswith("_REF")
        number = _DATATYPES.get(base[:-4] if ref else base)
        if number is not None:
            return number + (100 if ref else 0)
    value = getattr(owner, name, None)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TextParseError(f"unknown enum value {name} at offset {pos}")


def parse_text(text: str, cls):
    """A message of class `cls` from its protobuf text format; TextParseError (a
    DataLossError and a ValueError) naming the offset when the text is not one."""
    return _Parser(text).message(cls, None, 0)
