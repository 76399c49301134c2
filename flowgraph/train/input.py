"""tf.train input (being filled in)."""

__all__: list[str] = []
