"""TensorFlow's ``tensorflow.core.*`` message modules (``framework.graph_pb2``,
``protobuf.config_pb2``, ``example.example_pb2``...), as views of flowgraph's message
classes (`flowgraph.python.tf_paths`).

>>> from flowgraph.core.example import example_pb2
>>> example_pb2.Example().features.feature["x"].float_list.value.append(1.0)
"""

from flowgraph.python import tf_paths

tf_paths.install()
