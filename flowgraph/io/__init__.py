"""The `tf.io` namespace (TF 1.15): re-exports only.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.io
>>> tf.io.FixedLenFeature([], tf.int64).dtype
tf.int64
"""

# Image codecs, file globbing and graph writing (TF 1.15's tf.io names).
from flowgraph.framework.tf_formats.graph_util import write_graph
from flowgraph.io import gfile
from flowgraph.io.match_filenames import match_filenames_once
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
from flowgraph.ops.image_codec_ops import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    encode_jpeg,
    extract_jpeg_shape,
    is_jpeg,
)
from flowgraph.ops.image_ops import decode_image, decode_jpeg, decode_png, encode_png
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

# Features parsed into RaggedTensors (TF1 misc names).
from flowgraph.ops.parsing_ragged_feature import RaggedFeature
from flowgraph.ops.parsing_sequence_batch_ops import parse_sequence_example
from flowgraph.ops.parsing_sequence_ops import parse_single_sequence_example
from flowgraph.ops.proto_ops import decode_proto, encode_proto  # needs protobuf to run
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
