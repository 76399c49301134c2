"""The `tf.feature_column` namespace (TF 1.15): re-exports only.

See `flowgraph/feature_column/feature_column.py` for the design.
"""

from flowgraph.feature_column.feature_column import (
    input_layer,
    linear_model,
    make_parse_example_spec,
)
from flowgraph.feature_column.feature_column_categorical import (
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
    crossed_column,
    weighted_categorical_column,
)
from flowgraph.feature_column.feature_column_dense import (
    bucketized_column,
    embedding_column,
    indicator_column,
    numeric_column,
    shared_embedding_columns,
)
from flowgraph.feature_column.feature_column_sequence import (
    sequence_categorical_column_with_hash_bucket,
    sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list,
    sequence_numeric_column,
)

__all__ = [
    "bucketized_column",
    "categorical_column_with_hash_bucket",
    "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list",
    "crossed_column",
    "embedding_column",
    "indicator_column",
    "input_layer",
    "linear_model",
    "make_parse_example_spec",
    "numeric_column",
    "sequence_categorical_column_with_hash_bucket",
    "sequence_categorical_column_with_identity",
    "sequence_categorical_column_with_vocabulary_file",
    "sequence_categorical_column_with_vocabulary_list",
    "sequence_numeric_column",
    "shared_embedding_columns",
    "weighted_categorical_column",
]
