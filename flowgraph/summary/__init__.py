"""The `tf.summary` namespace: re-exports only (see `summary_ops`, `writer`, `event_format`)."""

from flowgraph.summary.event_format import (
    Event,
    HistogramProto,
    SessionLog,
    Summary,
    SummaryMetadata,
    TaggedRunMetadata,
    summary_iterator,
)
from flowgraph.summary.summary_ops import (
    histogram,
    image,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)
from flowgraph.summary.writer import FileWriter, FileWriterCache

__all__ = [
    "Event",
    "FileWriter",
    "FileWriterCache",
    "HistogramProto",
    "SessionLog",
    "Summary",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]
