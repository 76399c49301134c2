"""The `tf.strings` namespace: re-exports only (see `flowgraph/ops/string_hash_ops.py`)."""

from flowgraph.ops.string_hash_ops import as_string, to_hash_bucket_fast

__all__ = ["as_string", "to_hash_bucket_fast"]
