"""``tf.manip``: TensorFlow 1.x's namespace of tensor-manipulation ops (re-exports).

Example
-------
>>> import flowgraph as tf
>>> tf.manip.roll is tf.roll
True
"""

from flowgraph.ops.array_extra_ops import batch_to_space_nd, roll, space_to_batch_nd
from flowgraph.ops.array_index_ops import gather_nd, scatter_nd
from flowgraph.ops.array_join_ops import reverse, tile
from flowgraph.ops.array_shape_ops import reshape

__all__ = ["batch_to_space_nd", "gather_nd", "reshape", "reverse", "roll", "scatter_nd",
           "space_to_batch_nd", "tile"]
