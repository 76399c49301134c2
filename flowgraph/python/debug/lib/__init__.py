"""``tensorflow.python.debug.lib``: the dump reader as ``lib.debug_data``."""

from flowgraph.python.debug import debug_data

__all__ = ["debug_data"]
