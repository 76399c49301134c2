"""The `tf.contrib` namespace, reduced to the parts TF1 model code commonly imports.

Only re-exports: `tf.contrib.layers` holds the TF1 regularizers and initializers.
"""

from flowgraph.contrib import layers

__all__ = ["layers"]
