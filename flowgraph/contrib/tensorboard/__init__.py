"""``tf.contrib.tensorboard``: TensorBoard plugin helpers; of them, the embedding
projector's configuration (`flowgraph.contrib.tensorboard.plugins.projector`)."""

from flowgraph.contrib.tensorboard import plugins

__all__ = ["plugins"]
