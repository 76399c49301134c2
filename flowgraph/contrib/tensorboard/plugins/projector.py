"""The embedding projector's configuration (``tf.contrib.tensorboard.plugins.projector``,
later ``tensorboard.plugins.projector``): which variables TensorBoard's projector shows,
with their metadata (labels) and sprite images.

`ProjectorConfig`, `EmbeddingInfo` and `SpriteMetadata` are the messages of
TensorBoard's ``projector_config.proto`` (package ``tensorboard``, proto3), with the same
field numbers, so their bytes and their text format are TensorBoard's.
`visualize_embeddings` writes a config's text format to ``projector_config.pbtxt`` in a
log directory, where TensorBoard looks for it next to the checkpoints.

Example
-------
>>> import os, tempfile
>>> from flowgraph.contrib.tensorboard.plugins import projector
>>> config = projector.ProjectorConfig()
>>> embedding = config.embeddings.add()
>>> embedding.tensor_name = "embed_matrix:0"
>>> embedding.metadata_path = "vocab.tsv"
>>> logdir = tempfile.mkdtemp()
>>> projector.visualize_embeddings(logdir, config)
>>> print(open(os.path.join(logdir, "projector_config.pbtxt")).read(), end="")
embeddings {
  tensor_name: "embed_matrix:0"
  metadata_path: "vocab.tsv"
}
"""

from __future__ import annotations

import os

from flowgraph.framework.proto_codec import Message
from flowgraph.framework.proto_text import message_to_text

__all__ = ["PROJECTOR_FILENAME", "EmbeddingInfo", "ProjectorConfig", "SpriteMetadata",
           "visualize_embeddings"]

PROJECTOR_FILENAME = "projector_config.pbtxt"

# The dimensions are uint32 in the .proto; uint64 has the same (varint) encoding for them.


class SpriteMetadata(Message):
    """A sprite image of the points: its path and one thumbnail's [width, height]."""

    PROTO_NAME = "tensorboard.SpriteMetadata"
    IMPLICIT_PRESENCE = True
    FIELDS = ((1, "image_path", "string", False), (2, "single_image_dim", "uint64", True))


class EmbeddingInfo(Message):
    """One embedding: the tensor's name, its metadata (TSV labels) and sprite."""

    PROTO_NAME = "tensorboard.EmbeddingInfo"
    IMPLICIT_PRESENCE = True
    FIELDS = ((1, "tensor_name", "string", False), (2, "metadata_path", "string", False),
              (3, "bookmarks_path", "string", False), (4, "tensor_shape", "uint64", True),
              (5, "sprite", SpriteMetadata, False), (6, "tensor_path", "string", False))


class ProjectorConfig(Message):
    """The projector's configuration: the embeddings and where their checkpoint is."""

    PROTO_NAME = "tensorboard.ProjectorConfig"
    IMPLICIT_PRESENCE = True
    FIELDS = ((1, "model_checkpoint_path", "string", False),
              (2, "embeddings", EmbeddingInfo, True),
              (3, "model_checkpoint_dir", "string", False))


def visualize_embeddings(logdir, config: ProjectorConfig) -> None:
    """Write `config` as text to ``projector_config.pbtxt`` in `logdir`.

    `logdir` is a directory path or, as TF1 programs pass it, a summary ``FileWriter``
    (its log directory is used)."""
    get_logdir = getattr(logdir, "get_logdir", None)
    if get_logdir is not None:
        logdir = get_logdir()
    if logdir is None:
        raise ValueError("Expected logdir to be a path, but got None")
    if not isinstance(config, ProjectorConfig):
        raise TypeError(f"visualize_embeddings: config must be a ProjectorConfig, got "
                        f"{type(config).__name__}")
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, PROJECTOR_FILENAME), "w", encoding="utf-8") as f:
        f.write(message_to_text(config))
