"""`tf.contrib.feature_column`: TF1's sequence feature columns and `sequence_input_layer`
(re-exports of `flowgraph.feature_column.feature_column_sequence`).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.feature_column.sequence_numeric_column("x").key
'x'
"""

from flowgraph.feature_column.feature_column_sequence import (
    concatenate_context_input,
    sequence_categorical_column_with_hash_bucket,
    sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list,
    sequence_input_layer,
    sequence_numeric_column,
)

__all__ = ["concatenate_context_input", "sequence_categorical_column_with_hash_bucket",
           "sequence_categorical_column_with_identity",
           "sequence_categorical_column_with_vocabulary_file",
           "sequence_categorical_column_with_vocabulary_list", "sequence_input_layer",
           "sequence_numeric_column"]
