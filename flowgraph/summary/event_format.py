"""TensorBoard's file formats (`Summary`, `Event`, TFRecord framing, PNG), re-exported.

The code lives in `flowgraph.framework.event_format` so that the CPU summary kernels can
use it without importing the `tf.summary` layer; this module keeps the historical import
path working.

Example
-------
>>> Summary.FromString(Summary(value=[Summary.Value(tag="a")]).SerializeToString()).value[0].tag
'a'
"""

from flowgraph.framework.event_format import (
    AttrValue,
    DeviceStepStats,
    Event,
    GraphDef,
    HistogramProto,
    LogMessage,
    Message,
    NodeDef,
    NodeExecStats,
    RunMetadata,
    SessionLog,
    StepStats,
    Summary,
    SummaryMetadata,
    TaggedRunMetadata,
    TensorProto,
    TensorShapeProto,
    VersionDef,
    crc32c,
    encode_png,
    frame_record,
    make_tensor_proto,
    masked_crc32c,
    read_records,
    shape_proto,
    summary_iterator,
)

__all__ = [
    "AttrValue",
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
