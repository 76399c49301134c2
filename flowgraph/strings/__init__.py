"""The `tf.strings` namespace: re-exports only (see `flowgraph/ops/string_hash_ops.py`)."""

from flowgraph.ops.string_hash_ops import as_string, to_hash_bucket_fast
from flowgraph.ops.string_ops import join, length, substr, to_number
from flowgraph.ops.string_split_ops import split

__all__ = ["as_string", "join", "length", "split", "substr", "to_hash_bucket_fast",
           "to_number"]

# Regular expressions, case, stripping and joining (issue 15).
from flowgraph.ops.string_extra_ops import (
    reduce_join,
    regex_full_match,
    regex_replace,
)
from flowgraph.ops.string_extra_ops import string_lower as lower
from flowgraph.ops.string_extra_ops import string_strip as strip
from flowgraph.ops.string_extra_ops import string_upper as upper

__all__ += ["lower", "reduce_join", "regex_full_match", "regex_replace", "strip", "upper"]
from flowgraph.ops.string_legacy_hash_ops import (  # noqa: E402
    string_to_hash_bucket as to_hash_bucket,
)
from flowgraph.ops.string_legacy_hash_ops import (  # noqa: E402
    string_to_hash_bucket_strong as to_hash_bucket_strong,
)

__all__ += ["to_hash_bucket", "to_hash_bucket_strong"]

from flowgraph.ops.string_format_ops import string_format as format  # noqa: E402

__all__ += ["format"]

# Unicode (round 3 of the TF1 program sweep).
from flowgraph.ops.string_unicode_ops import (  # noqa: E402
    bytes_split,
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_split,
    unicode_transcode,
)

__all__ += ["bytes_split", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode",
            "unicode_split", "unicode_transcode"]

# n-grams, segment joins, scripts (TF1 misc names).
from flowgraph.ops.string_ngram_ops import ngrams, unsorted_segment_join  # noqa: E402
from flowgraph.ops.string_script_ops import unicode_script  # noqa: E402
from flowgraph.ops.string_unicode_ops import unicode_split_with_offsets  # noqa: E402

__all__ += ["ngrams", "unicode_script", "unicode_split_with_offsets", "unsorted_segment_join"]
