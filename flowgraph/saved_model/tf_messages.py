"""TensorFlow's ``MetaGraphDef`` and ``TensorInfo`` messages (the protobufs of a
TensorFlow SavedModel, with TensorFlow's field numbers), as ``tf.MetaGraphDef`` and
``tf.TensorInfo``; `flowgraph.saved_model.tf_saved_model` reads SavedModels with them.

Example
-------
>>> import flowgraph as tf
>>> mg = tf.MetaGraphDef(graph_def=tf.GraphDef(node=[tf.NodeDef(name="x", op="NoOp")]))
>>> tf.MetaGraphDef.FromString(mg.SerializeToString()).graph_def.node[0].name
'x'
"""

from flowgraph.saved_model.tf_saved_model import MetaGraphDefProto as MetaGraphDef
from flowgraph.saved_model.tf_saved_model import TensorInfoProto as TensorInfo

__all__ = ["MetaGraphDef", "TensorInfo"]
