"""Runnable examples (``python -m flowgraph.examples.<name>``)."""
