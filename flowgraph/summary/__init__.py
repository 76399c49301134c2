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
from flowgraph.summary.summary_extra import (
    SummaryDescription,
    all_v2_summary_ops,
    audio,
    get_summary_description,
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
    "SummaryDescription",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "all_v2_summary_ops",
    "audio",
    "get_summary_description",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]

# TF1's setup call for TF-2-style writers (TF1 misc names).
from flowgraph.summary.summary_initialize import initialize

__all__ += ["initialize"]
