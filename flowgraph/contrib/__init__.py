"""The `tf.contrib` namespace, reduced to the parts TF1 model code commonly imports.

`tf.contrib.layers` holds the TF1 regularizers, initializers, functional layers and
`optimize_loss`. There is no `tf.contrib.lookup`: flowgraph has no lookup tables (only
`tf.tables_initializer`), so there is nothing to alias.
"""

from flowgraph.contrib import layers, rnn

__all__ = ["layers", "rnn"]
