"""tf.train queue_runner (being filled in)."""

__all__: list[str] = []
