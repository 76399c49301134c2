"""nn_ops ops (being filled in)."""

__all__: list[str] = []
