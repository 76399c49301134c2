"""TensorBoard's file formats, written by hand: TFRecord framing and event files, with
re-exports of the protobuf codec (`flowgraph.framework.proto_codec`: varints,
`Message`, `DecodeError`), of the messages it writes (`flowgraph.framework.event_messages`:
``Summary``, ``Event``, ``GraphDef`` ...) and of a minimal PNG encoder, so that one import
gives everything an event file needs.

A record of an event file is ``len (uint64 LE) | masked crc32c(len) | data | masked
crc32c(data)``; CRC32C (Castagnoli) comes from `flowgraph.framework.checksum` (a
native library when one is installed).

Example
-------
>>> s = Summary(value=[Summary.Value(tag="loss", simple_value=0.0)])
>>> Summary.FromString(s.SerializeToString()).value[0].simple_value
0.0
>>> frame_record(b"")[:8]
b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from flowgraph.framework import errors
from flowgraph.framework.checksum import crc32c, masked_crc32c
from flowgraph.framework.event_messages import (
    AllocationDescription,
    AllocatorMemoryUsed,
    AttrValue,
    DeviceStepStats,
    Event,
    GraphDef,
    HistogramProto,
    LogMessage,
    MemoryStats,
    NameAttrList,
    NodeDef,
    NodeExecStats,
    NodeOutput,
    RunMetadata,
    SessionLog,
    StepStats,
    Summary,
    SummaryMetadata,
    TaggedRunMetadata,
    TensorDescription,
    TensorProto,
    TensorShapeProto,
    VersionDef,
    make_tensor_proto,
    shape_proto,
)
from flowgraph.framework.png import encode_png
from flowgraph.framework.proto_codec import (
    DecodeError,
    Message,
    iter_fields,
    read_varint,
    write_length_delimited,
    write_varint,
)

__all__ = [
    "AllocationDescription",
    "AllocatorMemoryUsed",
    "AttrValue",
    "DecodeError",
    "DeviceStepStats",
    "Event",
    "GraphDef",
    "HistogramProto",
    "LogMessage",
    "MemoryStats",
    "Message",
    "NameAttrList",
    "NodeDef",
    "NodeExecStats",
    "NodeOutput",
    "RunMetadata",
    "SessionLog",
    "StepStats",
    "Summary",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "TensorDescription",
    "TensorProto",
    "TensorShapeProto",
    "VersionDef",
    "crc32c",
    "encode_png",
    "frame_record",
    "iter_fields",
    "make_tensor_proto",
    "masked_crc32c",
    "read_records",
    "read_varint",
    "shape_proto",
    "summary_iterator",
    "write_length_delimited",
    "write_varint",
]


# -- records ---------------------------------------------------------------------------
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


def _strict_records(path: str) -> Iterator[bytes]:
    # As TensorFlow's record reader: a missing file is a NotFoundError, a torn record body
    # or a damaged record a DataLossError (at TF's offsets: the record's start, or its
    # data's for a data CRC mismatch).
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    pos, n = 0, len(buf)
    while pos < n:
        if pos + 12 > n:  # a partial header reads as the end of the file
            return
        header = buf[pos:pos + 8]
        if struct.unpack("<I", buf[pos + 8:pos + 12])[0] != masked_crc32c(header):
            raise errors.DataLossError(None, None, f"corrupted record at {pos} of {path} "
                                       "(Is this even a TFRecord file?)")
        end = pos + 12 + struct.unpack("<Q", header)[0] + 4
        if end > n:
            raise errors.DataLossError(None, None, f"truncated record at {pos} of {path}")
        data = buf[pos + 12:end - 4]
        if struct.unpack("<I", buf[end - 4:end])[0] != masked_crc32c(data):
            raise errors.DataLossError(None, None,
                                       f"corrupted record at {pos + 12} of {path}")
        yield data
        pos = end


def summary_iterator(path: str) -> Iterator[Event]:
    """The `Event`s of an event file (``tf.train.summary_iterator``).

    Raises NotFoundError for a missing file and DataLossError for a truncated or
    corrupted record, as TensorFlow does.

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "events")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(frame_record(Event(step=3).SerializeToString()))
    >>> [e.step for e in summary_iterator(path)]
    [3]
    """
    for data in _strict_records(path):
        try:
            yield Event.FromString(data)
        except RecursionError:
            raise DecodeError(f"an event in {path} nests messages too deeply") from None
