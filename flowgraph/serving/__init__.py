"""Serving SavedModels over HTTP with TensorFlow Serving's REST protocol: re-exports only."""

from flowgraph.serving.batching import BatchingParameters
from flowgraph.serving.protocol import encode_example
from flowgraph.serving.server import ModelServer
from flowgraph.serving.wsgi import Limits

__all__ = ["BatchingParameters", "Limits", "ModelServer", "encode_example"]
