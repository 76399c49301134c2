"""The `tf.contrib` namespace, reduced to the parts TF1 model code commonly imports.

`tf.contrib.layers` holds the TF1 regularizers, initializers, functional layers and
`optimize_loss`. `tf.contrib.lookup` aliases `tf.lookup` and TF1's vocabulary-table
helpers (`index_table_from_tensor`, ...).
"""

from flowgraph.contrib import feature_column, layers, lookup, rnn

__all__ = ["feature_column", "layers", "lookup", "rnn"]
