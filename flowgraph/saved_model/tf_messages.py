"""TensorFlow's ``MetaGraphDef`` and ``TensorInfo`` messages (the protobufs of a
TensorFlow SavedModel and of a ``.meta`` file, with TensorFlow's field numbers), as
``tf.MetaGraphDef`` and ``tf.TensorInfo``; they live in
`flowgraph.framework.tf_formats.meta_graph_messages`.

Example
-------
>>> import flowgraph as tf
>>> mg = tf.MetaGraphDef(graph_def=tf.GraphDef(node=[tf.NodeDef(name="x", op="NoOp")]))
>>> tf.MetaGraphDef.FromString(mg.SerializeToString()).graph_def.node[0].name
'x'
"""

from flowgraph.framework.tf_formats.meta_graph_messages import (
    MetaGraphDefProto as MetaGraphDef,
)
from flowgraph.framework.tf_formats.meta_graph_messages import TensorInfoProto as TensorInfo

__all__ = ["MetaGraphDef", "TensorInfo"]
