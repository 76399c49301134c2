"""Serving SavedModels over HTTP with TensorFlow Serving's REST protocol: re-exports only."""

from flowgraph.serving.server import ModelServer, encode_example

__all__ = ["ModelServer", "encode_example"]
