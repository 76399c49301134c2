"""TensorFlow's event-file and graph messages on flowgraph's protobuf codec
(`flowgraph.framework.proto_codec`): ``Summary``, ``Event``, ``GraphDef`` and the
messages they hold, with TensorFlow's field numbers and full names (``PROTO_NAME``), and
`make_tensor_proto` / `shape_proto` to build tensors and shapes from NumPy values.

`flowgraph.framework.event_format` re-exports every name here.

Example
-------
>>> s = Summary(value=[Summary.Value(tag="loss", simple_value=0.0)])
>>> Summary.FromString(s.SerializeToString()).value[0].simple_value
0.0
>>> shape_proto([2, None]).dim[1].size
-1
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.proto_codec import Message

__all__ = ["AllocationDescription", "AllocatorMemoryUsed", "AttrValue", "DeviceStepStats",
           "Event", "GraphDef", "HistogramProto", "LogMessage", "MemoryStats", "NameAttrList",
           "NodeDef", "NodeExecStats", "NodeOutput", "RunMetadata", "SessionLog", "StepStats",
           "Summary", "SummaryMetadata", "TaggedRunMetadata", "TensorDescription", "TensorProto",
           "TensorShapeProto", "VersionDef", "make_tensor_proto", "shape_proto"]


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
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    FIELDS = (
        (1, "min", "double", False), (2, "max", "double", False),
        (3, "num", "double", False), (4, "sum", "double", False),
        (5, "sum_squares", "double", False), (6, "bucket_limit", "double", True),
        (7, "bucket", "double", True),
    )


class SummaryMetadata(Message):
    PROTO_NAME = "tensorflow.SummaryMetadata"
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto

    class PluginData(Message):
        IMPLICIT_PRESENCE = True
        FIELDS = ((1, "plugin_name", "string", False), (2, "content", "bytes", False))

    FIELDS = ((1, "plugin_data", PluginData, False), (2, "display_name", "string", False),
              (3, "summary_description", "string", False))


class _Image(Message):
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    FIELDS = ((1, "height", "int32", False), (2, "width", "int32", False),
              (3, "colorspace", "int32", False), (4, "encoded_image_string", "bytes", False))


class _Audio(Message):
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    FIELDS = ((1, "sample_rate", "float", False), (2, "num_channels", "int64", False),
              (3, "length_frames", "int64", False), (4, "encoded_audio_string", "bytes", False),
              (5, "content_type", "string", False))


class _Value(Message):
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    FIELDS = (
        (7, "node_name", "string", False), (1, "tag", "string", False),
        (9, "metadata", SummaryMetadata, False), (2, "simple_value", "float", False),
        (3, "obsolete_old_style_histogram", "bytes", False),
        (4, "image", _Image, False), (5, "histo", HistogramProto, False),
        (6, "audio", _Audio, False), (8, "tensor", TensorProto, False),
    )
    ONEOFS = {"value": ("simple_value", "obsolete_old_style_histogram", "image", "histo",
                        "audio", "tensor")}


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
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    STATUS_UNSPECIFIED = 0
    START = 1
    STOP = 2
    CHECKPOINT = 3
    FIELDS = ((1, "status", "enum", False), (2, "checkpoint_path", "string", False),
              (3, "msg", "string", False))
    ENUM_NAMES = {"status": {0: "STATUS_UNSPECIFIED", 1: "START", 2: "STOP", 3: "CHECKPOINT"}}


class LogMessage(Message):
    """A log line in an event file: ``level`` (an enum: 10 DEBUGGING ... 50 FATAL) and
    ``message``."""

    PROTO_NAME = "tensorflow.LogMessage"
    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50
    FIELDS = ((1, "level", "enum", False), (2, "message", "string", False))
    ENUM_NAMES = {"level": {0: "UNKNOWN", 10: "DEBUGGING", 20: "INFO", 30: "WARN",
                            40: "ERROR", 50: "FATAL"}}


class TaggedRunMetadata(Message):
    PROTO_NAME = "tensorflow.TaggedRunMetadata"
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    FIELDS = ((1, "tag", "string", False), (2, "run_metadata", "bytes", False))


class Event(Message):
    PROTO_NAME = "tensorflow.Event"
    IMPLICIT_PRESENCE = True  # proto3, as in summary.proto / event.proto
    FIELDS = (
        (1, "wall_time", "double", False), (2, "step", "int64", False),
        (3, "file_version", "string", False), (4, "graph_def", "bytes", False),
        (5, "summary", Summary, False), (6, "log_message", LogMessage, False),
        (7, "session_log", SessionLog, False),
        (8, "tagged_run_metadata", TaggedRunMetadata, False),
        (9, "meta_graph_def", "bytes", False),
    )
    ONEOFS = {"what": ("file_version", "graph_def", "summary", "log_message", "session_log",
                       "tagged_run_metadata", "meta_graph_def")}


class AttrValue(Message):
    PROTO_NAME = "tensorflow.AttrValue"

    class ListValue(Message):
        FIELDS = ((2, "s", "bytes", True), (3, "i", "int64", True), (4, "f", "float", True),
                  (5, "b", "bool", True), (6, "type", "enum", True),
                  (7, "shape", TensorShapeProto, True), (8, "tensor", TensorProto, True),
                  (9, "func", "bytes", True))

    # `func` (a NameAttrList, which holds AttrValues) is kept serialized: parse it with
    # `NameAttrList.FromString`.
    FIELDS = ((1, "list", ListValue, False), (2, "s", "bytes", False),
              (3, "i", "int64", False), (4, "f", "float", False), (5, "b", "bool", False),
              (6, "type", "enum", False), (7, "shape", TensorShapeProto, False),
              (8, "tensor", TensorProto, False), (9, "placeholder", "string", False),
              (10, "func", "bytes", False))
    ONEOFS = {"value": ("list", "s", "i", "f", "b", "type", "shape", "tensor", "placeholder",
                        "func")}


class NameAttrList(Message):
    """A function and the attributes it is instantiated with (an AttrValue's ``func``)."""

    PROTO_NAME = "tensorflow.NameAttrList"
    FIELDS = ((1, "name", "string", False), (2, "attr", ("map", "string", AttrValue), True))


class NodeDef(Message):
    PROTO_NAME = "tensorflow.NodeDef"
    FIELDS = ((1, "name", "string", False), (2, "op", "string", False),
              (3, "input", "string", True), (4, "device", "string", False),
              (5, "attr", ("map", "string", AttrValue), True))


class VersionDef(Message):
    PROTO_NAME = "tensorflow.VersionDef"
    FIELDS = ((1, "producer", "int32", False), (2, "min_consumer", "int32", False),
              (3, "bad_consumers", "int32", True))


class FunctionDefLibrary(Message):
    """A GraphDef's function library. flowgraph runs no graph functions: each
    ``FunctionDef`` / ``GradientDef`` / registered gradient is kept as its serialized
    bytes, so that a GraphDef read from TensorFlow is written back unchanged."""

    PROTO_NAME = "tensorflow.FunctionDefLibrary"
    FIELDS = ((1, "function", "bytes", True), (2, "gradient", "bytes", True),
              (3, "registered_gradients", "bytes", True))


class GraphDef(Message):
    PROTO_NAME = "tensorflow.GraphDef"
    FIELDS = ((1, "node", NodeDef, True), (2, "library", FunctionDefLibrary, False),
              (3, "version", "int32", False), (4, "versions", VersionDef, False))


class AllocationDescription(Message):
    PROTO_NAME = "tensorflow.AllocationDescription"
    FIELDS = ((1, "requested_bytes", "int64", False), (2, "allocated_bytes", "int64", False),
              (3, "allocator_name", "string", False), (4, "allocation_id", "int64", False),
              (5, "has_single_reference", "bool", False), (6, "ptr", "uint64", False))


class TensorDescription(Message):
    PROTO_NAME = "tensorflow.TensorDescription"
    FIELDS = ((1, "dtype", "enum", False), (2, "shape", TensorShapeProto, False),
              (4, "allocation_description", AllocationDescription, False))


class NodeOutput(Message):
    PROTO_NAME = "tensorflow.NodeOutput"
    FIELDS = ((1, "slot", "int32", False), (3, "tensor_description", TensorDescription, False))


class AllocatorMemoryUsed(Message):
    PROTO_NAME = "tensorflow.AllocatorMemoryUsed"
    FIELDS = ((1, "allocator_name", "string", False), (2, "total_bytes", "int64", False),
              (3, "peak_bytes", "int64", False), (4, "live_bytes", "int64", False),
              (5, "allocator_bytes_in_use", "int64", False))


class MemoryStats(Message):
    PROTO_NAME = "tensorflow.MemoryStats"
    FIELDS = ((1, "temp_memory_size", "int64", False),
              (3, "persistent_memory_size", "int64", False),
              (5, "persistent_tensor_alloc_ids", "int64", True))


class NodeExecStats(Message):
    PROTO_NAME = "tensorflow.NodeExecStats"
    FIELDS = ((1, "node_name", "string", False), (2, "all_start_micros", "int64", False),
              (3, "op_start_rel_micros", "int64", False),
              (4, "op_end_rel_micros", "int64", False),
              (5, "all_end_rel_micros", "int64", False),
              (6, "memory", AllocatorMemoryUsed, True), (7, "output", NodeOutput, True),
              (8, "timeline_label", "string", False), (9, "scheduled_micros", "int64", False),
              (10, "thread_id", "uint64", False),
              (12, "memory_stats", MemoryStats, False),
              (13, "all_start_nanos", "int64", False), (14, "op_start_rel_nanos", "int64", False),
              (15, "op_end_rel_nanos", "int64", False), (16, "all_end_rel_nanos", "int64", False),
              (17, "scheduled_nanos", "int64", False))


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
