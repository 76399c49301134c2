"""`tf.io.decode_proto` / `tf.io.encode_proto`: protocol buffer messages as tensors, one
output per field (kernels, on the optional `protobuf` package:
`flowgraph/backends/cpu/kernels_proto.py`).

The message type is looked up by its full name in ``descriptor_source``: ``local://``
(the default) is the protobuf package's default descriptor pool (every message type the
program has imported), a path names a file holding a serialized ``FileDescriptorSet``,
and ``bytes://<serialized FileDescriptorSet>`` gives it inline. Decoding gives
``sizes`` ``[batch..., len(field_names)]`` (how many values each field has) and, per
field, ``[batch..., max size]`` values padded with the field's default; message-typed
fields come back serialized. Without the protobuf package the wrappers raise ImportError.

Example
-------
>>> import flowgraph as tf
>>> from google.protobuf import descriptor_pb2
>>> fds = descriptor_pb2.FileDescriptorSet()
>>> fds.file.add().CopyFrom(descriptor_pb2.FileDescriptorProto.FromString(
...     descriptor_pb2.DESCRIPTOR.serialized_pb))
>>> src = "bytes://" + fds.SerializeToString().decode("latin-1")
>>> msg = descriptor_pb2.FieldDescriptorProto(name="x", number=3).SerializeToString()
>>> sizes, (name, number) = tf.io.decode_proto(
...     [msg], "google.protobuf.FieldDescriptorProto", ["name", "number"],
...     [tf.string, tf.int32], descriptor_source=src)
>>> with tf.Session() as sess:
...     print(sess.run(sizes).tolist(), sess.run(number).tolist())
[[1, 1]] [[3]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["decode_proto", "encode_proto"]


def require_protobuf(what: str) -> None:
    """Raise ImportError naming `what` when the protobuf package is missing."""
    try:
        import google.protobuf  # noqa: F401
    except ImportError as err:
        raise ImportError(f"{what} needs the protobuf package for its message descriptors: "
                          "pip install 'flowgraph[protobuf]' (or protobuf>=4.21)") from err


@register_op("DecodeProtoV2",
             attrs={"message_type": "", "field_names": [], "output_types": [],
                    "descriptor_source": "local://", "message_format": "binary",
                    "sanitize": False},
             num_outputs=lambda op: 1 + len(op.attrs["output_types"]),
             dtype_fn=lambda op: [_dtypes.int32, *(_dtypes.as_dtype(t)
                                                   for t in op.attrs["output_types"])])
def _decode_proto_shape(op, bytes_shape):
    batch = bytes_shape.as_list() if bytes_shape.ndims is not None else None
    n = len(op.attrs["field_names"])
    if batch is None:
        return [TensorShape(None)] * (1 + n)
    return [TensorShape([*batch, n])] + [TensorShape([*batch, None])] * n


@register_op("EncodeProto",
             attrs={"field_names": [], "message_type": "", "descriptor_source": "local://",
                    "Tinput_types": []},
             dtype_fn=fixed_dtype(_dtypes.string))
def _encode_proto_shape(op, sizes, *values):
    if sizes.ndims is None:
        return [TensorShape(None)]
    if sizes.ndims < 1:
        raise op.shape_error(f"sizes must have rank >= 1 ([batch..., fields]), got {sizes}")
    return [TensorShape(sizes.as_list()[:-1])]


not_differentiable("DecodeProtoV2", "EncodeProto")


def decode_proto(bytes, message_type, field_names, output_types,
                 descriptor_source="local://", message_format="binary", sanitize=False,
                 name=None):
    """Decode the serialized messages `bytes` of type `message_type`; returns
    ``(sizes, values)`` with one values tensor per field of `field_names`."""
    require_protobuf("tf.io.decode_proto")
    if message_format not in ("binary", "text"):
        raise ValueError(f"message_format must be 'binary' or 'text', got {message_format!r}")
    if len(field_names) != len(output_types):
        raise ValueError(f"field_names ({len(field_names)}) and output_types "
                         f"({len(output_types)}) must have the same length")
    data = convert_to_tensor(bytes, dtype=_dtypes.string, name="bytes")
    op = make_op("DecodeProtoV2", [data], {
        "message_type": str(message_type), "field_names": [str(f) for f in field_names],
        "output_types": [_dtypes.as_dtype(t) for t in output_types],
        "descriptor_source": str(descriptor_source), "message_format": message_format,
        "sanitize": bool(sanitize)}, name=name or "DecodeProtoV2")
    return op.outputs[0], list(op.outputs[1:])


def encode_proto(sizes, values, field_names, message_type, descriptor_source="local://",
                 name=None):
    """Serialize messages of type `message_type` from `sizes` ``[batch..., fields]`` and
    one values tensor per field (``[batch..., >= size]``); returns ``[batch...]``
    strings."""
    require_protobuf("tf.io.encode_proto")
    if len(field_names) != len(values):
        raise ValueError(f"field_names ({len(field_names)}) and values ({len(values)}) "
                         "must have the same length")
    sizes_t = convert_to_tensor(sizes, dtype=_dtypes.int32, name="sizes")
    value_ts = [convert_to_tensor(v) for v in values]
    return make_tensor("EncodeProto", [sizes_t, *value_ts], {
        "field_names": [str(f) for f in field_names], "message_type": str(message_type),
        "descriptor_source": str(descriptor_source),
        "Tinput_types": [v.dtype.base_dtype for v in value_ts]}, name=name or "EncodeProto")
