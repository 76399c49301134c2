"""math_reduce ops (being filled in)."""

__all__: list[str] = []
