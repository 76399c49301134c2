"""TensorFlow 1.x import paths kept for compatibility (``tensorflow.python.*``): the real
modules here (``client.device_lib``, ``client.timeline``) and, for the rest of
TensorFlow's paths, views of flowgraph's API (`flowgraph.python.tf_paths`)."""

from flowgraph.python import tf_paths

tf_paths.install()
