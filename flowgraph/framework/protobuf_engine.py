"""flowgraph's messages through the ``protobuf`` package: descriptors built from each
class's ``FIELDS`` table, and conversion between flowgraph objects and protobuf messages.

`flowgraph.framework.proto_codec.Message` declares its fields once, as
``(number, name, kind, repeated)`` rows. This module turns such a class into a protobuf
message class, lazily (at its first use) and once, in a private ``DescriptorPool`` (so
it never clashes with TensorFlow's or TensorBoard's compiled ``.proto`` modules):

    FIELDS row                         protobuf field (proto2)
    ---------------------------------  ---------------------------------------------
    (1, "name", "string", False)       optional string name = 1;
    (3, "input", "string", True)       repeated string input = 3;
    (5, "float_val", "float", True)    repeated float float_val = 5 [packed = true];
    (1, "dtype", "enum", False)        optional tensorflow.DataType dtype = 1;
    (1, "level", "enum", False)        optional int32 level = 1;  (unknown values kept)
    (2, "shape", TensorShapeProto, F)  optional tensorflow.TensorShapeProto shape = 2;
    (5, "attr", ("map", K, V), True)   repeated AttrEntry attr = 5;
                                         message AttrEntry { optional K key = 1;
                                                             optional V value = 2; }

Why these choices: proto2 ``optional`` writes a field that was set even to its default
(TensorBoard needs ``simple_value: 0.0``), as the hand codec does. A map is declared as
the repeated entry message it is on the wire, not with ``map_entry``: the ``upb``
runtime's deterministic map order puts ``"Tidx"`` before ``"T"``, where TensorFlow's C++
order (and so every committed TensorFlow fixture) has ``"T"`` first; listing the entries
ourselves, sorted, gives TensorFlow's bytes under every protobuf runtime. In the text
format a map and its entry list read the same. ``string`` stays ``string`` (proto2 does
not check UTF-8: invalid bytes read back as ``bytes``, which become U+FFFD, as in the
hand codec).

A class's protobuf name is its ``PROTO_NAME`` attribute (TensorFlow's, such as
``"tensorflow.GraphDef"``); a class nested in another (``TensorShapeProto.Dim``) is a
nested type of its parent's message; any other class gets a name from its module and
class name (``flowgraph.<module>.<Class>``). A top-level class whose ``PROTO_NAME`` reads as
nested (``"tensorflow.MetaGraphDef.MetaInfoDef"``) would become a message of a package of
that name, not a nested type of ``tensorflow.MetaGraphDef``: nest the class instead
(``MetaGraphDefProto.MetaInfoDef``), as TensorFlow's ``.proto`` does.

State: one private pool; ``_SCHEMAS`` maps each class to its schema (protobuf class and
a copy plan per field), built under a lock, one file per outermost class with the files
of the classes it refers to as dependencies. A schema is ``ready`` only once its whole
file is in the pool and planned, so other threads never see half of one.

Conversion walks the object tree once per call: ``serialize`` fills a protobuf message
and writes it, ``merge`` parses bytes with protobuf (its C parser checks every length
against the buffer; nothing is allocated from a declared size) and copies the fields
out. Values are set as they are, and on a TypeError coerced as the hand codec reads
them (``int(v)``, ``float(v)``, ``bool(v)``, str to UTF-8); what protobuf still cannot
hold raises `Unrepresentable`. Protobuf keeps a field whose wire type does not match
its declaration as an unknown field, where the hand codec rejects it; `merge` checks
each message's unknown fields and rejects declared numbers and groups, so both engines
refuse the same malformed bytes.

Example
-------
>>> from flowgraph.framework.event_format import NodeDef, AttrValue
>>> node = NodeDef(name="y", op="Identity", attr={"T": AttrValue(type=1)})
>>> pb = to_protobuf(node)
>>> pb.DESCRIPTOR.full_name, pb.attr[0].key, pb.attr[0].value.type
('tensorflow.NodeDef', 'T', 1)
>>> serialize(node) == node._serialize_by_hand()
True
"""

from __future__ import annotations

import re
import sys
import threading

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError as _ProtobufDecodeError
from google.protobuf.message import Message as _ProtobufMessage

from flowgraph.framework.proto_text import sorted_keys

try:
    from google.protobuf.message_factory import GetMessageClass
except ImportError:  # protobuf < 4.22
    from google.protobuf.message_factory import MessageFactory as _Factory

    def GetMessageClass(descriptor):  # protobuf's name
        return _Factory(descriptor.file.pool).GetPrototype(descriptor)

try:
    from google.protobuf.unknown_fields import UnknownFieldSet as _unknown_fields
except ImportError:  # protobuf < 4.23
    def _unknown_fields(msg):
        return msg.UnknownFields()

__all__ = ["ParseError", "Unrepresentable", "from_protobuf", "list_fields", "merge",
           "message_class", "serialize", "to_protobuf"]

_F = descriptor_pb2.FieldDescriptorProto
_TYPES = {"double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int32": _F.TYPE_INT32,
          "int64": _F.TYPE_INT64, "uint64": _F.TYPE_UINT64, "enum": _F.TYPE_INT32,
          "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES}
_PACKABLE = frozenset(("double", "float", "int32", "int64", "uint64", "enum", "bool"))
_WIRE = {"double": 1, "float": 5, "int32": 0, "int64": 0, "uint64": 0, "enum": 0, "bool": 0}

# How a field is copied (the same codes both ways).
_SCALAR, _STRING, _MESSAGE, _REPEATED, _REPEATED_STRING, _REPEATED_MESSAGE, _MAP = range(7)


class ParseError(ValueError):
    """Bytes that do not parse as the message (`proto_codec` raises its DecodeError)."""


class Unrepresentable(ValueError):
    """A value a protobuf field cannot hold (``int32`` out of range, invalid UTF-8 bytes
    in a ``string`` field); `Message.SerializeToString` then uses the hand codec."""


class _Schema:
    """One message class: its protobuf class and how each field is copied."""

    __slots__ = ("by_name", "by_number", "cls", "file", "full_name", "pb_class", "ready",
                 "wire")

    def __init__(self, cls, full_name: str, file: str) -> None:
        self.cls = cls
        self.full_name = full_name
        self.file = file
        self.pb_class = None
        self.by_name: dict = {}    # field name -> (code, kind, sub-schema / map plan)
        self.by_number: dict = {}  # field number -> (name, code, sub-schema / map plan)
        self.wire: dict = {}       # field number -> (name, its wire type)
        self.ready = False


_POOL = descriptor_pool.DescriptorPool()
_SCHEMAS: dict[type, _Schema] = {}
_NAMES: dict[str, type] = {}  # full name of a file's top-level message -> its class
_LOCK = threading.RLock()


# -- descriptors -------------------------------------------------------------------------
def _is_message(kind) -> bool:
    return isinstance(kind, type)


def _nested(cls) -> list[tuple[str, type]]:
    """The message classes nested in `cls`: class attributes whose qualified name is
    ``cls.__qualname__ + "." + attribute`` (`Summary.Value`, `TensorShapeProto.Dim`)."""
    return [(attr, value) for attr, value in vars(cls).items()
            if isinstance(value, type) and hasattr(value, "FIELDS") and value is not cls
            and value.__qualname__ == f"{cls.__qualname__}.{attr}"]


def _outermost(cls):
    """The top-level message class whose file declares `cls` (`cls` itself unless it is
    nested in another message class)."""
    parts = cls.__qualname__.split(".")
    if len(parts) == 1 or "<locals>" in parts:
        return cls
    obj, chain = sys.modules.get(cls.__module__), []
    for part in parts:
        obj = getattr(obj, part, None)
        if not (isinstance(obj, type) and hasattr(obj, "FIELDS")):
            return cls
        chain.append(obj)
    return chain[0] if chain[-1] is cls else cls


def _identifier(text: str) -> str:
    text = re.sub(r"\W", "_", text)
    return "_" + text if text[:1].isdigit() else text


def _top_name(cls) -> str:
    """`cls.PROTO_NAME`, else ``flowgraph.<module>.<class>``; unique in the pool."""
    name = cls.__dict__.get("PROTO_NAME")
    if name is None:
        module = cls.__module__.removeprefix("flowgraph.")
        qual = cls.__qualname__.replace(".<locals>.", "_locals_")
        name = ".".join(_identifier(p) for p in f"flowgraph.{module}.{qual}".split("."))
    elif name in _NAMES:
        owner = _NAMES[name]
        raise TypeError(f"{cls.__module__}.{cls.__qualname__}: PROTO_NAME {name!r} is "
                        f"already the name of {owner.__module__}.{owner.__qualname__}; "
                        f"give one of them another PROTO_NAME")
    base, i = name, 2
    while name in _NAMES:  # local classes of one name (tests define them)
        name, i = f"{base}_{i}", i + 1
    return name


def _entry_name(field: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in field.split("_")) + "Entry"


# Enum fields of these names hold TensorFlow's DataType (as `text_format` reads them).
_DATATYPE_FIELDS = ("dtype", "type")
_DATATYPE_FILE = "flowgraph_generated/tensorflow.DataType.proto"
_TF_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def _datatype_file() -> str:
    """The file declaring enum ``tensorflow.DataType`` (added to the pool once), so that
    protobuf's text format writes and reads ``DT_FLOAT``. The enum is open (proto3), so
    a proto2 field of it keeps any number, as the ``int32`` it is on the wire."""
    try:
        _POOL.FindFileByName(_DATATYPE_FILE)
        return _DATATYPE_FILE
    except KeyError:
        pass
    from flowgraph.framework import dtypes

    proto = descriptor_pb2.FileDescriptorProto(name=_DATATYPE_FILE, package="tensorflow",
                                               syntax="proto3")
    enum = proto.enum_type.add(name="DataType")
    enum.value.add(name="DT_INVALID", number=0)
    for number in [*range(1, 100), *range(101, 200)]:
        try:
            dtype = dtypes.as_dtype(number)
        except (TypeError, ValueError, KeyError):
            continue
        base = dtype.base_dtype.name  # TensorFlow's names: DT_FLOAT, DT_FLOAT_REF
        name = _TF_NAMES.get(base, "DT_" + base.upper())
        enum.value.add(name=name + "_REF" if dtype.is_ref_dtype else name, number=number)
    _POOL.Add(proto)
    return _DATATYPE_FILE


def _add_field(desc, number: int, name: str, kind, label, family: dict, deps: set) -> None:
    f = desc.field.add(name=name, number=number, label=label)
    if kind == "enum" and name in _DATATYPE_FIELDS:
        f.type, f.type_name = _F.TYPE_ENUM, ".tensorflow.DataType"
        deps.add(_datatype_file())
        if label == _F.LABEL_REPEATED:
            f.options.packed = True
    elif _is_message(kind):
        f.type = _F.TYPE_MESSAGE
        if kind in family:
            f.type_name = "." + family[kind]
        else:
            schema = _schema(kind)
            deps.add(schema.file)
            f.type_name = "." + schema.full_name
    elif kind in _TYPES:
        f.type = _TYPES[kind]
        if label == _F.LABEL_REPEATED and kind in _PACKABLE:
            f.options.packed = True
    else:
        raise TypeError(f"field '{name}' has kind {kind!r}, which has no protobuf type")


def _describe(cls, desc, full: str, family: dict, deps: set) -> None:
    for attr, sub in _nested(cls):
        _describe(sub, desc.nested_type.add(name=attr), family[sub], family, deps)
    for number, name, kind, repeated in sorted(cls.FIELDS, key=lambda f: f[0]):
        if isinstance(kind, tuple):  # ("map", K, V): repeated entry messages
            entry = desc.nested_type.add(name=_entry_name(name))
            _add_field(entry, 1, "key", kind[1], _F.LABEL_OPTIONAL, family, deps)
            _add_field(entry, 2, "value", kind[2], _F.LABEL_OPTIONAL, family, deps)
            desc.field.add(name=name, number=number, label=_F.LABEL_REPEATED,
                           type=_F.TYPE_MESSAGE, type_name=f".{full}.{entry.name}")
        else:
            label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            _add_field(desc, number, name, kind, label, family, deps)


def _family(cls, full: str, out: dict) -> dict:
    out[cls] = full
    for attr, sub in _nested(cls):
        _family(sub, f"{full}.{attr}", out)
    return out


def _schema(cls) -> _Schema:
    """The schema of message class `cls`; its file (its outermost class with every
    class nested in it) is built and added to the pool at first use."""
    schema = _SCHEMAS.get(cls)
    if schema is not None and schema.ready:
        return schema
    with _LOCK:
        schema = _SCHEMAS.get(cls)
        if schema is not None:
            if not schema.ready:
                raise TypeError(f"{cls.__qualname__}: message classes that contain each "
                                f"other from different modules cannot be described")
            return schema
        top = _outermost(cls)
        full = _top_name(top)
        family = _family(top, full, {})
        file = f"flowgraph_generated/{full}.proto"
        for member, name in family.items():
            _SCHEMAS[member] = _Schema(member, name, file)
        _NAMES[full] = top
        try:
            _build_file(top, full, family, file)
        except BaseException:
            for member in family:
                _SCHEMAS.pop(member, None)
            _NAMES.pop(full, None)
            raise
        return _SCHEMAS[cls]


def _build_file(top, full: str, family: dict, file: str) -> None:
    package, _, name = full.rpartition(".")
    deps: set = set()
    desc = descriptor_pb2.DescriptorProto(name=name)
    _describe(top, desc, full, family, deps)
    proto = descriptor_pb2.FileDescriptorProto(name=file, package=package, syntax="proto2",
                                               dependency=sorted(deps))
    proto.message_type.append(desc)
    _POOL.Add(proto)
    for member, member_name in family.items():
        _SCHEMAS[member].pb_class = GetMessageClass(_POOL.FindMessageTypeByName(member_name))
    for member in family:
        _plan(_SCHEMAS[member])
    for member in family:
        _SCHEMAS[member].ready = True


def _plan(schema: _Schema) -> None:
    for number, name, kind, repeated in schema.cls.FIELDS:
        if isinstance(kind, tuple):
            value = kind[2]
            extra = (kind[1], value, _SCHEMAS[value] if _is_message(value) else None)
            code = _MAP
        elif _is_message(kind):
            code, extra = (_REPEATED_MESSAGE if repeated else _MESSAGE), _SCHEMAS[kind]
        elif kind == "string":
            code, extra = (_REPEATED_STRING if repeated else _STRING), None
        else:
            code, extra = (_REPEATED if repeated else _SCALAR), None
        schema.by_name[name] = (code, kind, extra)
        schema.by_number[number] = (name, code, extra)
        schema.wire[number] = (name, _wire_type(kind))


# -- flowgraph object -> protobuf message ------------------------------------------------
def _coerce(kind, value):
    """`value` as the hand codec reads it for `kind` (``int(v)`` for integers, ...)."""
    if kind in ("int32", "int64", "uint64", "enum"):
        return int(value)
    if kind in ("float", "double"):
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "bytes":
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return value if isinstance(value, str) else bytes(value).decode("utf-8")


def _unrepresentable(schema: _Schema, name: str, kind, value, error) -> Unrepresentable:
    return Unrepresentable(f"field '{name}' ({kind}) of {schema.full_name} cannot hold "
                           f"{value!r:.80}: {error}")


def _set(pb, attr: str, kind, value, schema: _Schema, label: str) -> None:
    try:
        setattr(pb, attr, value)
    except (TypeError, ValueError, OverflowError):
        try:
            setattr(pb, attr, _coerce(kind, value))
        except (TypeError, ValueError, OverflowError) as e:
            raise _unrepresentable(schema, label, kind, value, e) from None


def _extend(container, schema: _Schema, name: str, kind, values) -> None:
    try:
        container.extend(values)
    except (TypeError, ValueError, OverflowError):
        del container[:]
        try:
            container.extend([_coerce(kind, v) for v in values])
        except (TypeError, ValueError, OverflowError) as e:
            raise _unrepresentable(schema, name, kind, values, e) from None


def _fill_message(pb, value, sub: _Schema) -> None:
    if type(value) is sub.cls:
        _fill(pb, value, sub)
    else:  # another class with the same wire format: go through its bytes, as the codec
        pb.SetInParent()
        pb.MergeFromString(value.SerializeToString())


def _fill_map(container, schema: _Schema, name: str, plan, mapping) -> None:
    key_kind, value_kind, sub = plan
    for key in sorted_keys(mapping):  # the hand codec's order: TensorFlow's C++ order
        entry = container.add()
        _set(entry, "key", key_kind, key, schema, name + ".key")
        if sub is None:
            _set(entry, "value", value_kind, mapping[key], schema, name + ".value")
        else:
            entry.value.SetInParent()
            _fill_message(entry.value, mapping[key], sub)


def _fill(pb, obj, schema: _Schema) -> None:
    """Copy the set fields of flowgraph message `obj` into protobuf message `pb`."""
    by_name = schema.by_name
    for name, value in obj.__dict__.items():
        spec = by_name.get(name)
        if spec is None:
            continue
        code, kind, extra = spec
        if code <= _STRING:
            _set(pb, name, kind, value, schema, name)
        elif code == _MESSAGE:
            if obj._present(name):
                child = getattr(pb, name)
                child.SetInParent()
                _fill_message(child, value, extra)
        elif not value:
            continue
        elif code == _REPEATED_MESSAGE:
            add = getattr(pb, name).add
            for item in value:
                _fill_message(add(), item, extra)
        elif code == _MAP:
            _fill_map(getattr(pb, name), schema, name, extra, value)
        else:
            _extend(getattr(pb, name), schema, name, kind, value)


# -- protobuf message -> flowgraph object ------------------------------------------------
def _wire_type(kind) -> int:
    if isinstance(kind, str) and kind in _WIRE:
        return _WIRE[kind]
    return 2  # messages, maps, strings, bytes


def _check_unknown(pb, known: dict) -> None:
    """Protobuf keeps a declared field with the wrong wire type as an unknown field; the
    hand codec rejects it, and groups (wire types 3 and 4), so this does too. `known`:
    field number -> (name, expected wire type)."""
    for field in _unknown_fields(pb):
        number, wire = field.field_number, field.wire_type
        if number in known:
            name, expected = known[number]
            raise ParseError(f"field '{name}' (number {number}) of "
                             f"{pb.DESCRIPTOR.full_name} has wire type {wire}, expected "
                             f"{expected}")
        if wire in (3, 4):
            raise ParseError(f"field {number} of {pb.DESCRIPTOR.full_name} is a group "
                             f"(wire type {wire}), which flowgraph does not read")


def _text(value) -> str:
    # A proto2 string holding invalid UTF-8 reads as bytes: U+FFFD, as the hand codec.
    return value if value.__class__ is str else value.decode("utf-8", "replace")


def _new(pb, schema: _Schema):
    obj = schema.cls()
    _copy_out(obj, pb, schema)
    return obj


def _copy_out(obj, pb, schema: _Schema) -> None:
    """Merge the fields of protobuf message `pb` into flowgraph message `obj` (the hand
    codec's merge: scalars replaced, sub-messages merged, lists extended, maps updated)."""
    by_number = schema.by_number
    if len(_unknown_fields(pb)):
        _check_unknown(pb, schema.wire)
    d = obj.__dict__
    for fd, value in pb.ListFields():
        name, code, extra = by_number[fd.number]
        if code == _SCALAR:
            d[name] = value
        elif code == _STRING:
            d[name] = _text(value)
        elif code == _MESSAGE:
            current = d.get(name)
            if current is None:
                d[name] = _new(value, extra)
            elif type(current) is extra.cls:
                _copy_out(current, value, extra)
            else:
                current.MergeFromString(value.SerializeToString())
        elif code == _REPEATED:
            d[name].extend(value)
        elif code == _REPEATED_STRING:
            d[name].extend([_text(v) for v in value])
        elif code == _REPEATED_MESSAGE:
            d[name].extend([_new(v, extra) for v in value])
        else:
            _copy_map(d[name], value, extra)


def _copy_map(target: dict, entries, plan) -> None:
    key_kind, value_kind, sub = plan
    for entry in entries:
        if len(_unknown_fields(entry)):
            _check_unknown(entry, {1: ("key", _wire_type(key_kind)),
                                   2: ("value", _wire_type(value_kind))})
        key = entry.key
        if key_kind == "string":
            key = _text(key)
        if sub is not None:
            target[key] = _new(entry.value, sub)
        else:
            value = entry.value
            target[key] = _text(value) if value_kind == "string" else value


# -- API ---------------------------------------------------------------------------------
def message_class(cls):
    """The protobuf message class of flowgraph message class `cls` (built at first use).

    Example
    -------
    >>> from flowgraph.framework.event_format import TensorShapeProto
    >>> message_class(TensorShapeProto.Dim).DESCRIPTOR.full_name
    'tensorflow.TensorShapeProto.Dim'
    """
    return _schema(cls).pb_class


def list_fields(obj, fields: list) -> list:
    """`Message.ListFields` under this engine: ``(FieldInfo, value)`` pairs of `obj` with
    protobuf's field descriptors instead, and each map as protobuf's list of entries, so
    that ``text_format.MessageToString`` prints flowgraph's messages."""
    by_number = message_class(type(obj)).DESCRIPTOR.fields_by_number
    out, pb = [], None
    for info, value in fields:
        if isinstance(value, dict):
            pb = to_protobuf(obj) if pb is None else pb
            value = getattr(pb, info.name)
        out.append((by_number[info.number], value))
    return out


def to_protobuf(obj):
    """Flowgraph message `obj` as a protobuf message (`Message.to_protobuf`); a value
    no protobuf field can hold raises `Unrepresentable` (a ValueError)."""
    schema = _schema(type(obj))
    pb = schema.pb_class()
    _fill(pb, obj, schema)
    return pb


def serialize(obj) -> bytes:
    """The bytes of flowgraph message `obj`, written by protobuf: the hand codec's."""
    return to_protobuf(obj).SerializeToString(deterministic=True)


def merge(obj, data: bytes) -> int:
    """Parse `data` with protobuf and merge it into flowgraph message `obj`; malformed
    bytes raise `ParseError` (a ValueError). Returns ``len(data)``."""
    schema = _schema(type(obj))
    try:
        pb = schema.pb_class.FromString(data)
    except _ProtobufDecodeError as e:
        detail = str(e).rpartition(": ")[2] or "corrupt"  # protobuf names its own type
        raise ParseError(f"truncated or corrupt message of {len(data)} bytes (protobuf: "
                         f"{detail}): a field cut off, a length past the end, a bad tag, "
                         f"or nesting deeper than protobuf's limit") from None
    _copy_out(obj, pb, schema)
    return len(data)


def from_protobuf(cls, msg):
    """A new `cls` from protobuf message `msg`: one of ``message_class(cls)``, or any
    protobuf message (TensorFlow's compiled ones) read through its bytes."""
    if not isinstance(msg, _ProtobufMessage):
        raise TypeError(f"{cls.__qualname__}.from_protobuf expects a protobuf message, "
                        f"got {type(msg).__name__}")
    schema = _schema(cls)
    obj = cls()
    if msg.DESCRIPTOR is schema.pb_class.DESCRIPTOR:
        _copy_out(obj, msg, schema)
    else:
        obj.MergeFromString(msg.SerializeToString(deterministic=True))
    return obj
