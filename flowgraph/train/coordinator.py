"""tf.train coordinator (being filled in)."""

__all__: list[str] = []
