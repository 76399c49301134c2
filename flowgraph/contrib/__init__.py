"""The `tf.contrib` namespace, reduced to the parts TF1 model code commonly imports.

`tf.contrib.layers` holds the TF1 regularizers, initializers, functional layers and
`optimize_loss`. `tf.contrib.lookup` aliases `tf.lookup` and TF1's vocabulary-table
helpers (`index_table_from_tensor`, ...). `tf.contrib.distributions` is the
`flowgraph.distributions` module itself (TF 1.x's ``tf.contrib.distributions`` and
``tf.distributions`` held the same classes; TensorFlow 2.15 has no ``contrib``).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.distributions.Normal is tf.distributions.Normal
True
"""

from flowgraph import distributions
from flowgraph.contrib import feature_column, layers, lookup, rnn

__all__ = ["distributions", "feature_column", "layers", "lookup", "rnn"]
