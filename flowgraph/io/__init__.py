"""The `tf.io` namespace (TF 1.15): re-exports only.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.io
>>> tf.io.FixedLenFeature([], tf.int64).dtype
tf.int64
"""

from flowgraph.io import gfile
from flowgraph.io.tf_record import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from flowgraph.ops.data_flow_ops import (
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
from flowgraph.ops.matching_files_ops import matching_files
from flowgraph.ops.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
    decode_csv,
    parse_example,
    parse_single_example,
)
from flowgraph.ops.parsing_sequence_ops import parse_single_sequence_example
from flowgraph.ops.sparse_extra_ops import serialize_sparse
from flowgraph.ops.sparse_serialize_ops import (
    decode_json_example,
    deserialize_many_sparse,
    serialize_many_sparse,
)

# Byte decoding, files and serialized tensors (issue 15).
from flowgraph.ops.string_extra_ops import (
    decode_base64,
    decode_compressed,
    decode_raw,
    encode_base64,
    parse_tensor,
    read_file,
    serialize_tensor,
    write_file,
)
