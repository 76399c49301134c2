"""protobuf's Message API on flowgraph's record classes (``tf.ConfigProto``,
``tf.GPUOptions``, ``tf.RunOptions``, ...), with TensorFlow's wire format.

Those classes hold their fields as plain attributes (with flowgraph's defaults and a few
flowgraph-only fields); `RecordMessage` gives them what TF1 programs call on a protobuf
message: ``SerializeToString``, ``FromString``, ``ParseFromString``, ``MergeFrom``,
``CopyFrom``, ``ByteSize``, ``ListFields``, ``ClearField``, ``Clear``, ... A subclass
names its fields on the wire in ``WIRE_FIELDS`` (``(number, name, kind, repeated)``, as
`flowgraph.framework.proto_codec.Message.FIELDS`; a kind may be another `RecordMessage`
class) and the bytes are written by the codec message built from them (proto3: a field
at its default is not written), so they are the bytes TensorFlow writes for the same
message. Fields outside ``WIRE_FIELDS`` (flowgraph extensions) are kept by ``CopyFrom``
and ``MergeFrom`` but not written.

Example
-------
>>> class Opts(RecordMessage):
...     PROTO_NAME = "example.Opts"
...     WIRE_FIELDS = ((1, "threads", "int32", False),)
...     def __init__(self, threads=0):
...         self.threads = threads
...     def _record_fields(self):
...         return {"threads": 0}
>>> Opts(threads=3).SerializeToString()
b'\\x08\\x03'
>>> Opts.FromString(b'\\x08\\x03').threads
3
"""

from __future__ import annotations

import copy

from flowgraph.framework.proto_codec import FieldInfo, Message

__all__ = ["RecordMessage"]


class RecordMessage:
    """Mixin: protobuf's Message methods on a class of plain attributes.

    Subclasses set ``PROTO_NAME`` and ``WIRE_FIELDS`` and define `_record_fields`
    (every field name -> a fresh default value)."""

    PROTO_NAME: str = ""
    WIRE_FIELDS: tuple = ()

    # -- hooks ---------------------------------------------------------------------------------
    def _record_fields(self) -> dict:
        raise NotImplementedError

    def _set_field(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    # -- the codec message of this record -------------------------------------------------------
    @classmethod
    def _wire_class(cls) -> type:
        wire = cls.__dict__.get("_fg_wire_class")
        if wire is None:
            fields = tuple(
                (number, name, kind._wire_class() if _is_record_class(kind) else kind, rep)
                for number, name, kind, rep in cls.WIRE_FIELDS)
            # the record's enum constants (``OptimizerOptions.L0``) come along, so the
            # text format reads enum values by name
            enums = {k: v for k, v in vars(cls).items() if k.isupper() and
                     isinstance(v, int) and not isinstance(v, bool) and not hasattr(Message, k)}
            wire = type(f"{cls.__name__}Wire", (Message,),
                        {**enums, "PROTO_NAME": cls.PROTO_NAME, "FIELDS": fields,
                         "ENUM_NAMES": getattr(cls, "ENUM_NAMES", None),
                         "IMPLICIT_PRESENCE": True, "__module__": cls.__module__})
            type.__setattr__(cls, "_fg_wire_class", wire)
        return wire

    def _to_wire(self) -> Message:
        wire = self._wire_class()()
        defaults = self._record_fields()
        for _, name, kind, repeated in self.WIRE_FIELDS:
            value = getattr(self, name)
            if _is_record_class(kind):
                if repeated:
                    getattr(wire, name).extend(v._to_wire() for v in value)
                elif value is not None and value != defaults[name]:
                    setattr(wire, name, value._to_wire())
            elif isinstance(kind, type):  # a codec message (e.g. a ClusterDef)
                if repeated:
                    getattr(wire, name).extend(value)
                elif value is not None:
                    setattr(wire, name, value)
            elif repeated and isinstance(kind, tuple):
                getattr(wire, name).update(value)
            elif repeated:
                getattr(wire, name).extend(value)
            elif value != defaults[name]:
                setattr(wire, name, value)  # the codec drops TensorFlow's default
        return wire

    def _merge_wire(self, wire: Message) -> None:
        for _, name, kind, repeated in self.WIRE_FIELDS:
            if name not in wire.__dict__:
                continue
            value = wire.__dict__[name]
            if repeated:
                if not value:
                    continue
                if _is_record_class(kind):
                    value = [_from_wire(kind, v) for v in value]
                mine = getattr(self, name)
                if isinstance(mine, dict):
                    mine.update(value)
                else:
                    mine.extend(value)
            elif _is_record_class(kind):
                mine = getattr(self, name)
                if mine is None:
                    mine = kind()
                    self._set_field(name, mine)
                mine._merge_wire(value)
            else:
                self._set_field(name, value)

    # -- protobuf's methods ----------------------------------------------------------------------
    def __str__(self) -> str:
        """protobuf's text format, as ``print(config)`` shows a TensorFlow message."""
        return str(self._to_wire())

    def SerializeToString(self, deterministic: bool | None = None) -> bytes:
        """TensorFlow's bytes for this message (map entries sorted by key, so always
        deterministic)."""
        return self._to_wire().SerializeToString()

    def SerializePartialToString(self, deterministic: bool | None = None) -> bytes:
        """As `SerializeToString` (proto3 messages have no required fields)."""
        return self.SerializeToString()

    def ByteSize(self) -> int:
        """The length of `SerializeToString`'s bytes."""
        return len(self.SerializeToString())

    def MergeFromString(self, data: bytes) -> int:
        """Merge the fields `data` holds in (protobuf's rule); returns ``len(data)``.
        Raises ``DecodeError`` for bytes that are not this message."""
        wire = self._wire_class()()
        wire.MergeFromString(bytes(data))
        self._merge_wire(wire)
        return len(data)

    def ParseFromString(self, data: bytes) -> int:
        self.Clear()
        return self.MergeFromString(data)

    @classmethod
    def FromString(cls, data: bytes):
        msg = cls()
        msg.MergeFromString(data)
        return msg

    def _check_same(self, other, method: str) -> None:
        if type(other) is not type(self):
            raise TypeError(
                f"Parameter to {method}() must be instance of same class: expected "
                f"{self.PROTO_NAME} got {_type_name(other)}.")

    def CopyFrom(self, other) -> None:
        """Make this message a copy of `other` (a message of the same class)."""
        if other is self:
            return
        self._check_same(other, "CopyFrom")
        for name in self._record_fields():
            self._set_field(name, copy.deepcopy(getattr(other, name)))

    def MergeFrom(self, other) -> None:
        """Merge `other` in: its set scalars replace these, repeated fields are appended,
        map entries replace, sub-messages are merged."""
        self._check_same(other, "MergeFrom")
        for name, default in self._record_fields().items():
            value = getattr(other, name)
            mine = getattr(self, name)
            if isinstance(value, RecordMessage):
                if value == default:
                    continue
                if isinstance(mine, RecordMessage):
                    mine.MergeFrom(value)
                else:
                    self._set_field(name, copy.deepcopy(value))
            elif isinstance(value, dict) and isinstance(mine, dict):
                mine.update(copy.deepcopy(value))
            elif isinstance(value, list) and isinstance(mine, list):
                mine.extend(copy.deepcopy(value))
            elif value is not None and value != default:
                self._set_field(name, copy.deepcopy(value))

    def Clear(self) -> None:
        """Reset every field to its default."""
        for name, default in self._record_fields().items():
            self._set_field(name, default)

    def ClearField(self, name: str) -> None:
        defaults = self._record_fields()
        if name not in defaults:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        self._set_field(name, defaults[name])

    def ListFields(self) -> list:
        """``(field, value)`` for each field that would be written, in field-number
        order; `field` has protobuf's ``name`` and ``number``."""
        wire = self._to_wire()
        present = set(wire.__dict__)
        out = []
        for number, name, _, repeated in sorted(self.WIRE_FIELDS, key=lambda f: f[0]):
            if name in present and (not repeated or getattr(self, name)):
                out.append((FieldInfo(name, number), getattr(self, name)))
        return out

    def IsInitialized(self) -> bool:
        """Always true: proto3 messages have no required fields."""
        return True

    def WhichOneof(self, group: str):
        raise ValueError(f'Protocol message {type(self).__name__} has no "{group}" field.')


def _is_record_class(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, RecordMessage)


def _from_wire(cls, wire):
    msg = cls()
    msg._merge_wire(wire)
    return msg


def _type_name(obj) -> str:
    return getattr(obj, "PROTO_NAME", "") or type(obj).__name__
