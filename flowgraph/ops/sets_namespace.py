"""``tf.sets``: set operations along the last dimension (`flowgraph.ops.set_ops`).

Example
-------
>>> import flowgraph as tf
>>> tf.sets.intersection is tf.sets.set_intersection
True
"""

from flowgraph.ops.set_ops import set_difference, set_intersection, set_size, set_union

difference = set_difference
intersection = set_intersection
size = set_size
union = set_union

__all__ = ["difference", "intersection", "set_difference", "set_intersection", "set_size",
           "set_union", "size", "union"]
