"""``tf.contrib.tensorboard.plugins``: the embedding projector's configuration."""

from flowgraph.contrib.tensorboard.plugins import projector

__all__ = ["projector"]
