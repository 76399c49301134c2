"""``tf.queue``: the queue classes of `flowgraph.ops.data_flow_ops` under TensorFlow's
namespace (``tf.queue.FIFOQueue`` is ``tf.FIFOQueue``).

Example
-------
>>> import flowgraph as tf
>>> tf.queue.FIFOQueue is tf.FIFOQueue
True
"""

from flowgraph.ops.data_flow_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase",
           "RandomShuffleQueue"]
