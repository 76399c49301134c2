"""The `tf.strings` namespace: re-exports only (see `flowgraph/ops/string_hash_ops.py`)."""

from flowgraph.ops.string_hash_ops import as_string, to_hash_bucket_fast
from flowgraph.ops.string_ops import join, length, split, substr, to_number

__all__ = ["as_string", "join", "length", "split", "substr", "to_hash_bucket_fast",
           "to_number"]
