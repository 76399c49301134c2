"""Queues and other data-flow ops (being filled in)."""

__all__: list[str] = []
