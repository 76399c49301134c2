"""CPU kernels of `flowgraph/ops/proto_ops.py`, on the protobuf package's descriptors
and message classes."""

from __future__ import annotations

import functools
import os

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


@functools.lru_cache(maxsize=32)
def _pool(source: str):
    from google.protobuf import descriptor_pb2, descriptor_pool

    if source == "local://":
        return descriptor_pool.Default()
    if source.startswith("bytes://"):
        raw = source[len("bytes://"):].encode("latin-1")
    else:
        if not os.path.isfile(source):
            raise _invalid(f"descriptor_source {source!r} is neither 'local://', "
                           "'bytes://...' nor a readable FileDescriptorSet file")
        with open(source, "rb") as f:
            raw = f.read()
    fds = descriptor_pb2.FileDescriptorSet()
    try:
        fds.ParseFromString(raw)
    except Exception as err:
        raise _invalid(f"descriptor_source {source[:60]!r} does not hold a serialized "
                       f"FileDescriptorSet: {err}") from err
    pool = descriptor_pool.DescriptorPool()
    for file in fds.file:
        pool.Add(file)
    return pool


def _message_class(source: str, message_type: str):
    from google.protobuf import message_factory

    try:
        desc = _pool(source).FindMessageTypeByName(message_type)
    except KeyError as err:
        raise _invalid(f"No descriptor found for message type {message_type} in "
                       f"descriptor_source {source[:60]!r}") from err
    return message_factory.GetMessageClass(desc)


def _fields(cls, field_names, message_type: str):
    out = []
    for name in field_names:
        field = cls.DESCRIPTOR.fields_by_name.get(name)
        if field is None:
            raise _invalid(f"Unknown field: {name} in message type {message_type}")
        out.append(field)
    return out


_STRING_TYPES = (9, 12, 11, 10)  # string, bytes, message, group


def _check_type(field, dtype, message_type: str) -> None:
    from google.protobuf.descriptor import FieldDescriptor as F

    allowed = {
        F.TYPE_DOUBLE: {"float64", "float32"}, F.TYPE_FLOAT: {"float32", "float64"},
        F.TYPE_INT64: {"int64"}, F.TYPE_SINT64: {"int64"}, F.TYPE_SFIXED64: {"int64"},
        F.TYPE_UINT64: {"int64", "uint64"}, F.TYPE_FIXED64: {"int64", "uint64"},
        F.TYPE_INT32: {"int32", "int64"}, F.TYPE_SINT32: {"int32", "int64"},
        F.TYPE_SFIXED32: {"int32", "int64"}, F.TYPE_ENUM: {"int32", "int64"},
        F.TYPE_UINT32: {"int64", "uint32"}, F.TYPE_FIXED32: {"int64", "uint32"},
        F.TYPE_BOOL: {"bool"}, F.TYPE_STRING: {"string"}, F.TYPE_BYTES: {"string"},
        F.TYPE_MESSAGE: {"string"}, F.TYPE_GROUP: {"string"}}[field.type]
    if dtype.name not in allowed:
        raise _invalid(f"Unexpected output type for {message_type}.{field.name}: "
                       f"{dtype.name}; the field's type allows {sorted(allowed)}")


def _repeated(field) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf >= 5; `label` before
    return bool(flag) if flag is not None else field.label == field.LABEL_REPEATED


def _field_values(msg, field) -> list:
    if _repeated(field):
        values = list(getattr(msg, field.name))
    elif msg.HasField(field.name):
        values = [getattr(msg, field.name)]
    else:
        values = []
    if field.type in (field.TYPE_MESSAGE, field.TYPE_GROUP):
        values = [v.SerializeToString() for v in values]
    elif field.type == field.TYPE_STRING:
        values = [v.encode() for v in values]
    return values


def _default(field):
    if field.type in (field.TYPE_MESSAGE, field.TYPE_GROUP):
        return b""
    if _repeated(field):
        return b"" if field.type in _STRING_TYPES else 0
    value = field.default_value
    return value.encode() if isinstance(value, str) else value


@cpu_kernel("DecodeProtoV2", fresh=True)
def decode_proto(data, *, message_type, field_names, output_types, descriptor_source,
                 message_format, sanitize):
    from google.protobuf import message as _message
    from google.protobuf import text_format

    cls = _message_class(descriptor_source, message_type)
    fields = _fields(cls, field_names, message_type)
    dtypes = [_dtypes.as_dtype(t) for t in output_types]
    for f, d in zip(fields, dtypes, strict=True):
        _check_type(f, d, message_type)
    flat = np.asarray(data, dtype=object).reshape(-1)
    per_field = [[] for _ in fields]
    for raw in flat:
        msg = cls()
        try:
            if message_format == "text":
                text_format.Parse(raw.decode() if isinstance(raw, bytes) else raw, msg)
            else:
                msg.ParseFromString(raw)
        except (_message.DecodeError, text_format.ParseError, UnicodeDecodeError) as err:
            raise errors.DataLossError(
                None, None, f"DecodeProtoV2: could not parse a {message_type} message "
                f"({message_format} format): {err}") from err
        for i, f in enumerate(fields):
            per_field[i].append(_field_values(msg, f))
    batch = np.shape(data)
    sizes = np.array([[len(v[j]) for v in per_field] for j in range(flat.size)], np.int32)
    outputs = [sizes.reshape(*batch, len(fields))]
    for f, d, values in zip(fields, dtypes, per_field, strict=True):
        width = max((len(v) for v in values), default=0)
        np_dtype = object if d == _dtypes.string else d.as_numpy_dtype
        out = np.full((flat.size, width), _default(f), dtype=np_dtype)
        for j, v in enumerate(values):
            if v:
                out[j, :len(v)] = v
        outputs.append(out.reshape(*batch, width))
    return tuple(outputs)


@cpu_kernel("EncodeProto", fresh=True)
def encode_proto(sizes, *values, field_names, message_type, descriptor_source,
                 Tinput_types):
    cls = _message_class(descriptor_source, message_type)
    fields = _fields(cls, field_names, message_type)
    batch = sizes.shape[:-1]
    if sizes.shape[-1] != len(fields):
        raise _invalid(f"EncodeProto: sizes has {sizes.shape[-1]} columns for "
                       f"{len(fields)} fields")
    flat_sizes = sizes.reshape(-1, len(fields))
    flat_values = [np.asarray(v).reshape(flat_sizes.shape[0], -1) for v in values]
    out = np.empty(flat_sizes.shape[0], dtype=object)
    for j in range(flat_sizes.shape[0]):
        msg = cls()
        for i, f in enumerate(fields):
            n = int(flat_sizes[j, i])
            if n > flat_values[i].shape[1]:
                raise _invalid(f"EncodeProto: sizes asks for {n} values of field {f.name} "
                               f"but its tensor has {flat_values[i].shape[1]}")
            items = flat_values[i][j, :n].tolist()
            if f.type in (f.TYPE_MESSAGE, f.TYPE_GROUP):
                for raw in items:
                    target = getattr(msg, f.name).add() if _repeated(f) \
                        else getattr(msg, f.name)
                    target.MergeFromString(raw)
                continue
            if f.type == f.TYPE_STRING:
                items = [v.decode() if isinstance(v, bytes) else v for v in items]
            if _repeated(f):
                getattr(msg, f.name).extend(items)
            elif items:
                setattr(msg, f.name, items[-1])
        out[j] = msg.SerializeToString()
    return out.reshape(batch)
