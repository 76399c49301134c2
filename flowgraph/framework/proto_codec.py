"""Protobuf's wire format, written by hand: varints, length-delimited fields, and
`Message`, the base class whose ``FIELDS`` table declares a message once.

A message class lists its fields as ``(number, name, kind, repeated)`` rows, and that one
table drives two engines that give the same bytes. Where the ``protobuf`` package imports
(the extra ``flowgraph[protobuf]``) and ``FLOWGRAPH_PROTOBUF`` is not ``0``, `Message`
serializes and parses through it (`flowgraph.framework.protobuf_engine` builds
descriptors from the table); otherwise through the codec below, which needs no library.
``to_protobuf()`` / ``from_protobuf()`` cross over to real protobuf messages (for
``text_format`` / ``json_format``). The table's kinds:

    kind          wire type        notes
    ------------  ---------------  -------------------------------------------------
    double/float  1 (64) / 5 (32)  little-endian IEEE
    int32/int64/  0 (varint)       negative values as 10-byte two's complement
    uint64/enum
    bool          0 (varint)
    string/bytes  2 (length)       strings are UTF-8
    <Message>     2 (length)       a nested message
    ("map", K, V) 2 (length)       a repeated entry message {key=1, value=2}

Repeated numeric fields are written packed and read packed or not. A singular field is
written when it was set (even to 0: TensorBoard needs ``simple_value=0.0``, a oneof
member); unset fields read as their default. Map entries are written in sorted key order
(TensorFlow's C++ deterministic order: ``"T"`` before ``"Tidx"``); int32 and enum values
read back as 32-bit signed numbers, as protobuf reads them. Repeated message fields are
lists with an ``add(**fields)`` method, as in the protobuf API
(``summary.value.add(tag="x", ...)``).

Decoding trusts nothing in the bytes: each field's wire type must match its kind, and
no declared length may pass the end of its message; anything else (field number 0, a
group) raises `DecodeError` (a `DataLossError`, and a ValueError like protobuf's) under
either engine.

The messages themselves are declared in `flowgraph.framework.event_messages` (events,
summaries, graphs), `flowgraph.framework.example_proto`, `flowgraph.framework.tf_messages`
and `flowgraph.framework.tf_formats.meta_graph_messages`.

Example
-------
>>> class Pair(Message):
...     FIELDS = ((1, "name", "string", False), (2, "ids", "int64", True))
>>> data = Pair(name="a", ids=[1, 300]).SerializeToString()
>>> data
b'\\n\\x01a\\x12\\x03\\x01\\xac\\x02'
>>> Pair.FromString(data).ids
[1, 300]
"""

from __future__ import annotations

import gc
import os
import struct
from collections import namedtuple
from collections.abc import Iterator

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.proto_text import message_to_text
from flowgraph.framework.proto_text import sorted_keys as _sorted_keys

__all__ = ["DecodeError", "Message", "iter_fields", "read_varint", "write_length_delimited",
           "write_varint"]


# -- varints -----------------------------------------------------------------------------
class DecodeError(errors.DataLossError, ValueError):
    """A corrupt record or protobuf message (protobuf's DecodeError; also a ValueError)."""

    def __init__(self, message: str) -> None:
        super().__init__(None, None, message)



def write_varint(n: int) -> bytes:
    """`n` as a protobuf base-128 varint, taken modulo 2**64: a negative `n` as its
    64-bit two's complement (10 bytes), as protobuf writes int32 and int64 fields.

    >>> write_varint(1), write_varint(300), len(write_varint(-1))
    (b'\\x01', b'\\xac\\x02', 10)
    """
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def write_length_delimited(number: int, payload: bytes) -> bytes:
    """Field `number` of wire type 2 (bytes, string, sub-message, packed numbers): its
    tag, the payload's length and the payload.

    >>> write_length_delimited(1, b"ab")
    b'\\n\\x02ab'
    """
    return write_varint(number << 3 | 2) + write_varint(len(payload)) + payload


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``buf[pos:]`` and the position after it (`write_varint`'s inverse;
    a value over 63 bits or one cut off raises `DecodeError`).

    >>> read_varint(b"\\xac\\x02", 0)
    (300, 2)
    """
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint in protobuf message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes in protobuf message")


# -- messages ----------------------------------------------------------------------------
_WIRE = {"double": 1, "float": 5, "int32": 0, "int64": 0, "uint64": 0, "enum": 0,
         "bool": 0, "string": 2, "bytes": 2}
_DEFAULTS = {"double": 0.0, "float": 0.0, "int32": 0, "int64": 0, "uint64": 0, "enum": 0,
             "bool": False, "string": "", "bytes": b""}
_PACKED_NP = {"double": "<f8", "float": "<f4"}


class _Repeated(list):
    """A repeated message field: a list with protobuf's ``add(**fields)``."""

    def __init__(self, cls, items=()):
        super().__init__(items)
        self._cls = cls

    @classmethod
    def empty(cls, kind):
        """A new empty list of `kind` messages (no Python-level ``__init__``: messages
        with repeated fields are built by the hundred thousand when a graph is read)."""
        out = list.__new__(cls)
        out._cls = kind
        return out

    def add(self, **fields):
        msg = self._cls(**fields)
        self.append(msg)
        return msg


def _attaching(base):
    """`base` (list or `_Repeated`) whose first growth attaches its owner, a default
    sub-message read through `Message.__getattr__`, to that message's parent."""

    def grow(method):
        def wrapped(self, *args, **kw):
            owner = self.__dict__.pop("_fg_owner", None)
            if owner is not None:
                owner.SetInParent()
            return method(self, *args, **kw)
        wrapped.__name__ = method.__name__
        return wrapped

    names = ("append", "extend", "insert", "__iadd__", "__setitem__")
    members = {n: grow(getattr(base, n)) for n in names}
    if hasattr(base, "add"):
        members["add"] = grow(base.add)
    return type(f"_Attaching{base.__name__.lstrip('_').title()}", (base,), members)


class _AttachingList(_attaching(list)):
    def __init__(self, owner):
        super().__init__()
        self._fg_owner = owner


class _AttachingRepeated(_attaching(_Repeated)):
    def __init__(self, kind, owner):
        super().__init__(kind)
        self._fg_owner = owner


class _Map(dict):
    """A map field: a dict whose ``add()`` gives an entry that protobuf's text parser
    (``text_format.Merge``) fills, its value landing in the dict under its key; a
    missing key of a map of messages reads as a new empty message, as in protobuf."""

    __slots__ = ("_field", "_owner")

    @classmethod
    def empty(cls, owner, field: str):
        out = dict.__new__(cls)
        out._owner, out._field = owner, field
        return out

    def add(self):
        return _MapEntry(self, self._owner._BY_NAME[self._field][2][2])

    def __missing__(self, key):
        # protobuf's map of messages: reading a missing key adds an empty message there
        # (``node.attr["T"].CopyFrom(...)`` in graph-editing scripts).
        kind = self._owner._BY_NAME[self._field][2][2]
        if not isinstance(kind, type):
            raise KeyError(key)
        value = self[key] = kind()
        return value


class _MapEntry:
    """One ``key``/``value`` entry of a `_Map` being read by protobuf's text parser."""

    def __init__(self, target: _Map, kind) -> None:
        d = self.__dict__
        d["_target"], d["_set"] = target, set()
        d["key"] = None
        d["value"] = kind() if isinstance(kind, type) else _DEFAULTS[kind]

    @property
    def DESCRIPTOR(self):
        owner = _require_engine().message_class(self._target._owner).DESCRIPTOR
        return owner.fields_by_name[self._target._field].message_type

    def HasField(self, name: str) -> bool:
        return name in self._set

    def __setattr__(self, name: str, value) -> None:
        self.__dict__[name] = value
        self._set.add(name)
        if "key" in self._set:
            self._target[self.key] = self.value


def _encode_scalar(kind, value) -> tuple[int, bytes]:
    """(wire type, payload) of one value of a scalar or message kind."""
    if isinstance(kind, type):
        data = value.SerializeToString()
        return 2, write_varint(len(data)) + data
    if kind == "double":
        return 1, struct.pack("<d", value)
    if kind == "float":
        return 5, struct.pack("<f", value)
    if kind == "bool":
        return 0, b"\x01" if value else b"\x00"
    if kind in ("int32", "int64", "uint64", "enum"):
        return 0, write_varint(int(value))
    if kind == "string":
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return 2, write_varint(len(data)) + data
    if kind == "bytes":
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return 2, write_varint(len(data)) + data
    raise TypeError(f"unknown protobuf field kind {kind!r}")


def _decode_scalar(kind, wire: int, raw):
    """A value of `kind` from a wire value (int for varints, bytes otherwise)."""
    expected = 2 if isinstance(kind, type) else _WIRE[kind]
    if wire != expected:
        raise DecodeError(f"a {getattr(kind, '__name__', kind)} field has wire type {wire}, "
                          f"expected {expected}")
    if isinstance(kind, type):
        return kind.FromString(raw)
    if kind == "double":
        return struct.unpack("<d", raw)[0]
    if kind == "float":
        return struct.unpack("<f", raw)[0]
    if kind == "bool":
        return bool(raw)
    if kind == "int64":
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if kind in ("int32", "enum"):  # the low 32 bits, signed (protobuf's int32 read)
        raw &= 0xFFFFFFFF
        return raw - (1 << 32) if raw >= 1 << 31 else raw
    if kind == "uint64":
        return raw
    if kind == "string":
        return raw.decode("utf-8", "replace")
    return bytes(raw)


def iter_fields(buf: bytes) -> Iterator[tuple[int, int, object]]:
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        else:
            raise DecodeError(f"unsupported protobuf wire type {wire} (field {number})")
        if number == 0:
            raise DecodeError("field number 0 in protobuf message (no field has it)")
        if pos > n:
            raise DecodeError(f"truncated protobuf message (field {number} ends at byte "
                              f"{pos} of {n})")
        yield number, wire, value


def _unpack(kind, buf: bytes) -> list:
    if kind in _PACKED_NP:
        if len(buf) % np.dtype(_PACKED_NP[kind]).itemsize:
            raise DecodeError(f"packed {kind} field of {len(buf)} bytes")
        return np.frombuffer(buf, dtype=_PACKED_NP[kind]).astype(float).tolist()
    out, pos = [], 0
    while pos < len(buf):
        v, pos = read_varint(buf, pos)
        out.append(_decode_scalar(kind, 0, v))
    return out


# Reading a large message builds hundreds of thousands of objects, none of them garbage;
# the collector's full passes over a growing heap took half the time of reading a
# 5,000-node GraphDef, so it pauses while a message this large is read.
_GC_PAUSE_BYTES = 1 << 16

_ENGINE_UNSET = object()
_engine_module = _ENGINE_UNSET


def _protobuf_engine():
    """`flowgraph.framework.protobuf_engine` when the protobuf package imports and
    ``FLOWGRAPH_PROTOBUF`` is not ``0``; None means the hand codec. Imported at the first
    message serialized or parsed, never by ``import flowgraph``."""
    global _engine_module
    if os.environ.get("FLOWGRAPH_PROTOBUF") == "0":
        return None
    if _engine_module is _ENGINE_UNSET:
        try:
            from flowgraph.framework import protobuf_engine
        except ImportError:
            protobuf_engine = None
        _engine_module = protobuf_engine
    return _engine_module


def _require_engine():
    try:
        from flowgraph.framework import protobuf_engine
    except ImportError as e:
        raise ImportError(f"to_protobuf()/from_protobuf() need the protobuf package ({e}); "
                          f"install it with: pip install 'flowgraph[protobuf]'") from e
    return protobuf_engine


def _map_factory(owner, field: str):
    return lambda: _Map.empty(owner, field)


def _is_default(value, default) -> bool:
    """Whether a proto3 scalar holds its default (-0.0 is not +0.0: protobuf writes it)."""
    try:
        if isinstance(default, float):
            return float(value) == 0.0 and not np.signbit(float(value))
        return value == default and type(value) is not np.ndarray
    except (TypeError, ValueError):
        return False


FieldInfo = namedtuple("FieldInfo", "name number")
FieldInfo.__doc__ = "What `Message.ListFields` names a field by (protobuf's descriptor has both)."


class Message:
    """Base of the hand-written protobuf messages; subclasses define ``FIELDS``."""

    FIELDS: tuple = ()
    ONEOFS: dict = {}  # oneof group name -> its member field names, in field order
    # True for a message TensorFlow declares in a proto3 file where its bytes must match
    # TensorFlow's: a singular scalar outside a oneof set to its default (+0.0, 0, "",
    # False) is not kept, so it is neither written nor printed (``Event(step=0)`` is
    # ``b""``). Other messages keep proto2's "written when set".
    IMPLICIT_PRESENCE: bool = False
    _CONTAINERS: tuple = ()
    _IMPLICIT: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._BY_NAME = {f[1]: f for f in cls.FIELDS}
        cls._BY_NUMBER = {f[0]: f for f in cls.FIELDS}
        cls._ORDERED = tuple(sorted(cls.FIELDS, key=lambda f: f[0]))  # protobuf's order
        containers = []
        for _, name, kind, repeated in cls.FIELDS:
            if not repeated and not isinstance(kind, type):
                setattr(cls, name, _DEFAULTS[kind])
            elif repeated:
                containers.append((name, None if isinstance(kind, (tuple, str)) else kind,
                                   _map_factory(cls, name) if isinstance(kind, tuple)
                                   else list))
        cls._CONTAINERS = tuple(containers)  # (name, message kind or None, dict or list)
        in_oneof = {m for members in cls.ONEOFS.values() for m in members}
        cls._IMPLICIT = {name: _DEFAULTS[kind] for _, name, kind, repeated in cls.FIELDS
                         if cls.IMPLICIT_PRESENCE and not repeated
                         and isinstance(kind, str) and name not in in_oneof}

    def __init__(self, **fields) -> None:
        d = self.__dict__
        for name, kind, container in self._CONTAINERS:
            d[name] = container() if kind is None else _Repeated.empty(kind)
        for name, value in fields.items():
            if name not in self._BY_NAME:
                raise TypeError(f"{type(self).__name__} has no field named '{name}'")
            if value is None:
                continue
            _, _, kind, repeated = self._BY_NAME[name]
            if repeated and isinstance(kind, tuple):
                self.__dict__[name].update(value)
            elif repeated:
                self.__dict__[name].extend(value)
            else:
                setattr(self, name, value)

    def __getattr__(self, name):
        # Only reached for unset singular message fields: an empty default instance,
        # which `SetInParent` attaches (protobuf's text parser calls it).
        # Setting a field of it (``value.metadata.plugin_data.plugin_name = "text"``) or
        # growing one of its repeated fields (``value.histo.bucket.append(1.0)``) attaches
        # it too, as in protobuf.
        spec = type(self)._BY_NAME.get(name)
        if spec is not None and isinstance(spec[2], type):
            child = spec[2]()
            child.__dict__["_fg_parent"] = (self, name)
            for field, kind, _container in child._CONTAINERS:
                if type(child.__dict__[field]) is list:
                    child.__dict__[field] = _AttachingList(child)
                elif kind is not None:
                    child.__dict__[field] = _AttachingRepeated(kind, child)
            return child
        raise AttributeError(f"{type(self).__name__} has no field named '{name}'")

    def __setattr__(self, name, value) -> None:
        d = self.__dict__
        if "_fg_parent" in d:
            self.SetInParent()
        if name in self._IMPLICIT and _is_default(value, self._IMPLICIT[name]):
            d.pop(name, None)
            return
        object.__setattr__(self, name, value)

    @property
    def DESCRIPTOR(self):
        """protobuf's descriptor of this message class (needs the protobuf package), so
        that ``google.protobuf.text_format`` prints and parses flowgraph's messages."""
        try:
            engine = _require_engine()
        except ImportError as e:  # hasattr(message, "DESCRIPTOR") is False without it
            raise AttributeError(str(e)) from None
        return engine.message_class(type(self)).DESCRIPTOR

    def SetInParent(self) -> None:
        """Mark this (default) sub-message as set in its parent (protobuf's method)."""
        link = self.__dict__.pop("_fg_parent", None)
        if link is not None:
            parent, name = link
            parent.__dict__.setdefault(name, self)
            parent.SetInParent()

    def HasField(self, name: str) -> bool:
        return name in self.__dict__ and not self._BY_NAME[name][3]

    def WhichOneof(self, group: str):
        """The name of the set member of oneof `group`, or None (protobuf's method)."""
        members = self.ONEOFS.get(group)
        if members is None:
            raise ValueError(f"{type(self).__name__} has no oneof named '{group}'")
        return next((m for m in members if m in self.__dict__), None)

    def ListFields(self) -> list:
        """``(field, value)`` for each field that holds something, in field-number order
        (protobuf's method); `field` has protobuf's ``name`` and ``number``. Empty repeated
        fields and scalars at their default (outside a oneof) are left out."""
        in_oneof = {m for members in self.ONEOFS.values() for m in members}
        out = []
        for number, name, kind, repeated in self._ORDERED:
            if name not in self.__dict__:
                continue
            value = self.__dict__[name]
            if repeated:
                if not value:
                    continue
            elif isinstance(kind, type):
                if not self._present(name):
                    continue
            elif name not in in_oneof and value == _DEFAULTS[kind]:
                continue
            out.append((FieldInfo(name, number), value))
        engine = _protobuf_engine()
        return out if engine is None or not out else engine.list_fields(self, out)

    def ClearField(self, name: str) -> None:
        _, _, _kind, repeated = self._BY_NAME[name]
        if repeated:
            self.__dict__[name].clear()
        else:
            self.__dict__.pop(name, None)

    def _present(self, name: str) -> bool:
        """Whether singular message field `name` is set (a subclass may refine it: the
        `example_proto` messages hold sub-messages that were only read, not set); both
        engines write a singular message field only where this is true."""
        return name in self.__dict__

    def SerializeToString(self, deterministic: bool | None = None) -> bytes:
        """The message's bytes, the same under both engines (`deterministic` is accepted
        for protobuf's signature; the output is always deterministic)."""
        engine = _protobuf_engine()
        if engine is not None:
            try:
                return engine.serialize(self)
            except engine.Unrepresentable:
                pass  # e.g. invalid UTF-8 bytes in a string field: the codec writes them
        return self._serialize_by_hand()

    def SerializePartialToString(self, deterministic: bool | None = None) -> bytes:
        """As `SerializeToString` (these messages have no required fields)."""
        return self.SerializeToString()

    def ByteSize(self) -> int:
        """The length of the message's bytes (protobuf's method)."""
        return len(self.SerializeToString())

    def MergeFromString(self, data: bytes) -> int:
        if len(data) < _GC_PAUSE_BYTES or not gc.isenabled():
            return self._merge(data)
        gc.disable()  # see _GC_PAUSE_BYTES
        try:
            return self._merge(data)
        finally:
            gc.enable()

    def _merge(self, data: bytes) -> int:
        engine = _protobuf_engine()
        if engine is None:
            return self._merge_by_hand(data)
        try:
            return engine.merge(self, bytes(data))
        except engine.ParseError as e:
            raise DecodeError(f"Error parsing message of type {type(self).__qualname__}: "
                              f"{e}") from None

    def to_protobuf(self):
        """This message as a message of the ``protobuf`` package (its class built from
        ``FIELDS`` at first use), for ``text_format``, ``json_format`` and any protobuf
        tool. Needs the ``protobuf`` package (``pip install flowgraph[protobuf]``).

        Example
        -------
        >>> from google.protobuf import text_format
        >>> from flowgraph.framework.event_messages import VersionDef
        >>> text_format.MessageToString(VersionDef(producer=27).to_protobuf())
        'producer: 27\\n'
        """
        return _require_engine().to_protobuf(self)

    @classmethod
    def from_protobuf(cls, msg):
        """The flowgraph message of a protobuf message: one from `to_protobuf`, or any
        protobuf message of the same wire format (TensorFlow's compiled classes too).

        Example
        -------
        >>> from flowgraph.framework.event_messages import VersionDef
        >>> VersionDef.from_protobuf(VersionDef(producer=27).to_protobuf()).producer
        27
        """
        engine = _require_engine()
        try:
            return engine.from_protobuf(cls, msg)
        except engine.ParseError as e:
            raise DecodeError(f"Error parsing message of type {cls.__qualname__}: "
                              f"{e}") from None

    def _serialize_by_hand(self) -> bytes:
        out = bytearray()
        for number, name, kind, repeated in self._ORDERED:
            if name not in self.__dict__:
                continue
            value = self.__dict__[name]
            if isinstance(kind, tuple):  # map<K, V>
                _, kkind, vkind = kind
                for k in _sorted_keys(value):
                    v = value[k]
                    entry = bytearray()
                    for num, knd, item in ((1, kkind, k), (2, vkind, v)):
                        wire, payload = _encode_scalar(knd, item)
                        entry += write_varint(num << 3 | wire) + payload
                    out += write_length_delimited(number, entry)
            elif repeated and not isinstance(kind, type) and _WIRE[kind] != 2:
                if len(value):
                    if kind in _PACKED_NP:
                        payload = np.asarray(value, dtype=_PACKED_NP[kind]).tobytes()
                    else:
                        payload = b"".join(_encode_scalar(kind, v)[1] for v in value)
                    out += write_length_delimited(number, payload)
            elif repeated:
                for v in value:
                    wire, payload = _encode_scalar(kind, v)
                    out += write_varint(number << 3 | wire) + payload
            elif not isinstance(kind, type) or self._present(name):
                wire, payload = _encode_scalar(kind, value)
                out += write_varint(number << 3 | wire) + payload
        return bytes(out)

    def _merge_by_hand(self, data: bytes) -> int:
        for number, wire, raw in iter_fields(bytes(data)):
            spec = self._BY_NUMBER.get(number)
            if spec is None:
                continue  # unknown field: skipped
            _, name, kind, repeated = spec
            if isinstance(kind, tuple):
                _, kkind, vkind = kind
                if wire != 2:
                    raise DecodeError(f"map field '{name}' has wire type {wire}, expected 2")
                key, val = _DEFAULTS.get(kkind), None
                for num, w, r in iter_fields(raw):
                    if num == 1:
                        key = _decode_scalar(kkind, w, r)
                    elif num == 2:
                        val = _decode_scalar(vkind, w, r)
                if val is None:
                    val = vkind() if isinstance(vkind, type) else _DEFAULTS[vkind]
                self.__dict__[name][key] = val
            elif repeated and wire == 2 and not isinstance(kind, type) and _WIRE[kind] != 2:
                self.__dict__[name].extend(_unpack(kind, raw))
            elif repeated:
                self.__dict__[name].append(_decode_scalar(kind, wire, raw))
            elif isinstance(kind, type) and name in self.__dict__:
                self.__dict__[name].MergeFromString(raw)
            else:
                self.__dict__[name] = _decode_scalar(kind, wire, raw)
        return len(data)

    def ParseFromString(self, data: bytes) -> int:
        self.__dict__.clear()
        self.__init__()
        return self.MergeFromString(data)

    @classmethod
    def FromString(cls, data: bytes):
        msg = cls()
        msg.MergeFromString(data)
        return msg

    def CopyFrom(self, other: Message) -> None:
        self.ParseFromString(other.SerializeToString())

    def MergeFrom(self, other: Message) -> None:
        """Merge `other` in (protobuf's rule: repeated fields appended, set scalars
        replaced, sub-messages merged)."""
        self.MergeFromString(other.SerializeToString())

    def Clear(self) -> None:
        """Reset every field to its default (protobuf's method)."""
        self.ParseFromString(b"")

    def IsInitialized(self) -> bool:
        """Always true: proto3 messages have no required fields."""
        return True

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.SerializeToString() == \
            other.SerializeToString()

    def __str__(self) -> str:
        """The message in protobuf's text format (``print(node_def)``, as protobuf's)."""
        return message_to_text(self, printed=True)

    def __repr__(self) -> str:
        parts = []
        for _, name, _, repeated in self.FIELDS:
            if name in self.__dict__ and (not repeated or self.__dict__[name]):
                parts.append(f"{name}={self.__dict__[name]!r}")
        return f"{type(self).__name__}({', '.join(parts)})"
