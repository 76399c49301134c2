"""TensorBoard's file formats, written by hand: protobuf wire encoding, TFRecord framing,
the `Summary` / `Event` / `GraphDef` messages, and a minimal PNG encoder.

A message class lists its fields once, as ``(number, name, kind, repeated)`` rows, and
that one table drives two engines that give the same bytes. Where the ``protobuf``
package imports (the extra ``flowgraph[protobuf]``) and ``FLOWGRAPH_PROTOBUF`` is not
``0``, `Message` serializes and parses through it (`flowgraph.framework.protobuf_engine`
builds descriptors from the table); otherwise through the hand-written codec below,
which needs no library. ``to_protobuf()`` / ``from_protobuf()`` cross over to real
protobuf messages (for ``text_format`` / ``json_format``). The table's kinds:

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

A record of an event file is ``len (uint64 LE) | masked crc32c(len) | data | masked
crc32c(data)``; CRC32C (Castagnoli) comes from `flowgraph.framework.checksum` (a
native library when one is installed).

Decoding trusts nothing in the bytes: each field's wire type must match its kind, and
no declared length may pass the end of its message; anything else (field number 0, a
group) raises `DecodeError` (a `DataLossError`, and a ValueError like protobuf's) under
either engine.

Example
-------
>>> s = Summary(value=[Summary.Value(tag="loss", simple_value=0.0)])
>>> Summary.FromString(s.SerializeToString()).value[0].simple_value
0.0
>>> frame_record(b"")[:8]
b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
"""

from __future__ import annotations

import gc
import os
import struct
from collections.abc import Iterator

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.checksum import crc32c, masked_crc32c
from flowgraph.framework.png import encode_png

__all__ = [
    "AttrValue",
    "DecodeError",
    "DeviceStepStats",
    "Event",
    "GraphDef",
    "HistogramProto",
    "LogMessage",
    "Message",
    "NodeDef",
    "NodeExecStats",
    "RunMetadata",
    "SessionLog",
    "StepStats",
    "Summary",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "TensorProto",
    "TensorShapeProto",
    "VersionDef",
    "crc32c",
    "encode_png",
    "frame_record",
    "make_tensor_proto",
    "masked_crc32c",
    "read_records",
    "shape_proto",
    "summary_iterator",
]

# -- varints and CRC32C ----------------------------------------------------------------
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


def frame_record(data: bytes) -> bytes:
    """One TFRecord: length, its masked CRC, the data, the data's masked CRC."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path: str) -> Iterator[bytes]:
    """The records of a TFRecord file; a torn last record ends the iteration silently,
    a CRC mismatch raises `DecodeError` naming the file and offset."""
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0
    while pos + 12 <= len(buf):
        header = buf[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", buf[pos + 8:pos + 12])
        if hcrc != masked_crc32c(header):
            raise DecodeError(f"corrupt record header in {path} at offset {pos}")
        end = pos + 12 + length + 4
        if end > len(buf):
            return
        data = buf[pos + 12:pos + 12 + length]
        (dcrc,) = struct.unpack("<I", buf[end - 4:end])
        if dcrc != masked_crc32c(data):
            raise DecodeError(f"corrupt record data in {path} at offset {pos}")
        yield data
        pos = end


def summary_iterator(path: str) -> Iterator[Event]:
    """The `Event`s of an event file (``tf.train.summary_iterator``)."""
    for data in read_records(path):
        try:
            yield Event.FromString(data)
        except RecursionError:
            raise DecodeError(f"an event in {path} nests messages too deeply") from None


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


def _sorted_keys(mapping) -> list:
    """A map's keys in TensorFlow's deterministic order: numbers by value, strings by
    their UTF-8 bytes (code point order). `protobuf_engine` writes the same order."""
    try:
        return sorted(mapping)
    except TypeError:  # str and bytes keys mixed
        return sorted(mapping, key=lambda k: k.encode("utf-8") if isinstance(k, str) else k)


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


class Message:
    """Base of the hand-written protobuf messages; subclasses define ``FIELDS``."""

    FIELDS: tuple = ()
    _CONTAINERS: tuple = ()

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
                                   dict if isinstance(kind, tuple) else list))
        cls._CONTAINERS = tuple(containers)  # (name, message kind or None, dict or list)

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
        # Only reached for unset singular message fields: an empty default instance.
        spec = type(self)._BY_NAME.get(name)
        if spec is not None and isinstance(spec[2], type):
            return spec[2]()
        raise AttributeError(f"{type(self).__name__} has no field named '{name}'")

    def HasField(self, name: str) -> bool:
        return name in self.__dict__ and not self._BY_NAME[name][3]

    def ClearField(self, name: str) -> None:
        _, _, _kind, repeated = self._BY_NAME[name]
        if repeated:
            self.__dict__[name].clear()
        else:
            self.__dict__.pop(name, None)

    def _present(self, name: str) -> bool:
        """Whether singular field `name` is set (a subclass may refine it)."""
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
            else:
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

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.SerializeToString() == \
            other.SerializeToString()

    def __repr__(self) -> str:
        parts = []
        for _, name, _, repeated in self.FIELDS:
            if name in self.__dict__ and (not repeated or self.__dict__[name]):
                parts.append(f"{name}={self.__dict__[name]!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


class TensorShapeProto(Message):
    PROTO_NAME = "tensorflow.TensorShapeProto"

    class Dim(Message):
        FIELDS = ((1, "size", "int64", False), (2, "name", "string", False))

    FIELDS = ((2, "dim", Dim, True), (3, "unknown_rank", "bool", False))


class TensorProto(Message):
    PROTO_NAME = "tensorflow.TensorProto"
    FIELDS = (
        (1, "dtype", "enum", False), (2, "tensor_shape", TensorShapeProto, False),
        (3, "version_number", "int32", False), (4, "tensor_content", "bytes", False),
        (5, "float_val", "float", True), (6, "double_val", "double", True),
        (7, "int_val", "int32", True), (8, "string_val", "bytes", True),
        (10, "int64_val", "int64", True), (11, "bool_val", "bool", True),
        (13, "half_val", "int32", True),
    )


class HistogramProto(Message):
    PROTO_NAME = "tensorflow.HistogramProto"
    FIELDS = (
        (1, "min", "double", False), (2, "max", "double", False),
        (3, "num", "double", False), (4, "sum", "double", False),
        (5, "sum_squares", "double", False), (6, "bucket_limit", "double", True),
        (7, "bucket", "double", True),
    )


class SummaryMetadata(Message):
    PROTO_NAME = "tensorflow.SummaryMetadata"

    class PluginData(Message):
        FIELDS = ((1, "plugin_name", "string", False), (2, "content", "bytes", False))

    FIELDS = ((1, "plugin_data", PluginData, False), (2, "display_name", "string", False),
              (3, "summary_description", "string", False))


class _Image(Message):
    FIELDS = ((1, "height", "int32", False), (2, "width", "int32", False),
              (3, "colorspace", "int32", False), (4, "encoded_image_string", "bytes", False))


class _Audio(Message):
    FIELDS = ((1, "sample_rate", "float", False), (2, "num_channels", "int64", False),
              (3, "length_frames", "int64", False), (4, "encoded_audio_string", "bytes", False),
              (5, "content_type", "string", False))


class _Value(Message):
    FIELDS = (
        (7, "node_name", "string", False), (1, "tag", "string", False),
        (9, "metadata", SummaryMetadata, False), (2, "simple_value", "float", False),
        (3, "obsolete_old_style_histogram", "bytes", False),
        (4, "image", _Image, False), (5, "histo", HistogramProto, False),
        (6, "audio", _Audio, False), (8, "tensor", TensorProto, False),
    )


class Summary(Message):
    """A set of tagged values; ``value.add(tag=..., simple_value=...)`` as in protobuf."""

    PROTO_NAME = "tensorflow.Summary"

    Image = _Image
    Audio = _Audio
    Value = _Value
    FIELDS = ((1, "value", _Value, True),)


for _cls, _name in ((_Image, "Image"), (_Audio, "Audio"), (_Value, "Value")):
    _cls.__name__ = _name
    _cls.__qualname__ = f"Summary.{_name}"


class SessionLog(Message):
    PROTO_NAME = "tensorflow.SessionLog"
    STATUS_UNSPECIFIED = 0
    START = 1
    STOP = 2
    CHECKPOINT = 3
    FIELDS = ((1, "status", "enum", False), (2, "checkpoint_path", "string", False),
              (3, "msg", "string", False))


class LogMessage(Message):
    PROTO_NAME = "tensorflow.LogMessage"
    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50
    FIELDS = ((1, "level", "enum", False), (2, "message", "string", False))


class TaggedRunMetadata(Message):
    PROTO_NAME = "tensorflow.TaggedRunMetadata"
    FIELDS = ((1, "tag", "string", False), (2, "run_metadata", "bytes", False))


class Event(Message):
    PROTO_NAME = "tensorflow.Event"
    FIELDS = (
        (1, "wall_time", "double", False), (2, "step", "int64", False),
        (3, "file_version", "string", False), (4, "graph_def", "bytes", False),
        (5, "summary", Summary, False), (6, "log_message", LogMessage, False),
        (7, "session_log", SessionLog, False),
        (8, "tagged_run_metadata", TaggedRunMetadata, False),
        (9, "meta_graph_def", "bytes", False),
    )


class AttrValue(Message):
    PROTO_NAME = "tensorflow.AttrValue"

    class ListValue(Message):
        FIELDS = ((2, "s", "bytes", True), (3, "i", "int64", True), (4, "f", "float", True),
                  (5, "b", "bool", True), (6, "type", "enum", True),
                  (7, "shape", TensorShapeProto, True), (8, "tensor", TensorProto, True))

    FIELDS = ((1, "list", ListValue, False), (2, "s", "bytes", False),
              (3, "i", "int64", False), (4, "f", "float", False), (5, "b", "bool", False),
              (6, "type", "enum", False), (7, "shape", TensorShapeProto, False),
              (8, "tensor", TensorProto, False), (9, "placeholder", "string", False))


class NodeDef(Message):
    PROTO_NAME = "tensorflow.NodeDef"
    FIELDS = ((1, "name", "string", False), (2, "op", "string", False),
              (3, "input", "string", True), (4, "device", "string", False),
              (5, "attr", ("map", "string", AttrValue), True))


class VersionDef(Message):
    PROTO_NAME = "tensorflow.VersionDef"
    FIELDS = ((1, "producer", "int32", False), (2, "min_consumer", "int32", False),
              (3, "bad_consumers", "int32", True))


class GraphDef(Message):
    PROTO_NAME = "tensorflow.GraphDef"
    FIELDS = ((1, "node", NodeDef, True), (4, "versions", VersionDef, False))


class NodeExecStats(Message):
    PROTO_NAME = "tensorflow.NodeExecStats"
    FIELDS = ((1, "node_name", "string", False), (2, "all_start_micros", "int64", False),
              (3, "op_start_rel_micros", "int64", False),
              (4, "op_end_rel_micros", "int64", False),
              (5, "all_end_rel_micros", "int64", False), (8, "timeline_label", "string", False),
              (10, "thread_id", "uint64", False))


class DeviceStepStats(Message):
    PROTO_NAME = "tensorflow.DeviceStepStats"
    FIELDS = ((1, "device", "string", False), (2, "node_stats", NodeExecStats, True))


class StepStats(Message):
    PROTO_NAME = "tensorflow.StepStats"
    FIELDS = ((1, "dev_stats", DeviceStepStats, True),)


class RunMetadata(Message):
    PROTO_NAME = "tensorflow.RunMetadata"
    FIELDS = ((1, "step_stats", StepStats, False),)


# -- tensors -----------------------------------------------------------------------------
def shape_proto(dims) -> TensorShapeProto:
    """A TensorShapeProto of a list of sizes (None for unknown) or None (unknown rank)."""
    if dims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else int(d))
                                 for d in dims])


def make_tensor_proto(value) -> TensorProto:
    """A TensorProto of a NumPy value: strings as string_val, numbers as raw content.

    >>> make_tensor_proto(np.array([1, 2], np.int32)).tensor_content
    b'\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00'
    """
    from flowgraph.framework import dtypes as _dtypes

    arr = np.asarray(value)
    shape = shape_proto(arr.shape)
    if arr.dtype == object or arr.dtype.kind in "SU":
        items = [x if isinstance(x, bytes) else str(x).encode("utf-8")
                 for x in arr.reshape(-1)]
        return TensorProto(dtype=_dtypes.string.as_datatype_enum, tensor_shape=shape,
                           string_val=items)
    dtype = _dtypes.as_dtype(arr.dtype)
    content = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return TensorProto(dtype=dtype.as_datatype_enum, tensor_shape=shape,
                       tensor_content=content)
