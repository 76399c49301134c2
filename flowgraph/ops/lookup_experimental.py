"""The `tf.lookup.experimental` namespace: re-exports only (see
`flowgraph/ops/lookup_mutable.py`).

Example
-------
>>> import flowgraph as tf
>>> sorted(tf.lookup.experimental.__all__)
['DenseHashTable', 'MutableHashTable']
"""

from flowgraph.ops.lookup_mutable import DenseHashTable, MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]
