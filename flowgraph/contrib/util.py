"""`tf.contrib.util`: TF1's tensor-proto helpers (aliases of the core ones).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.util.make_ndarray(tf.contrib.util.make_tensor_proto([1, 2])).tolist()
[1, 2]
"""

from flowgraph.ops.tensor_compat import get_static_value as constant_value
from flowgraph.ops.tensor_compat import make_ndarray, make_tensor_proto

__all__ = ["constant_value", "make_ndarray", "make_tensor_proto"]
