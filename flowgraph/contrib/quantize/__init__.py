"""`tf.contrib.quantize` (TF 1.15): rewrite a graph so that its conv and fully connected
layers compute with fake-quantized weights and activations (see quantize_graph.py and
docs/contrib.md).

Example
-------
>>> import flowgraph as tf
>>> sorted(n for n in tf.contrib.quantize.__all__ if not n.startswith("experimental"))
['create_eval_graph', 'create_training_graph']
"""

from flowgraph.contrib.quantize.quantize_graph import (
    create_eval_graph,
    create_training_graph,
    experimental_create_eval_graph,
    experimental_create_training_graph,
)

__all__ = [
    "create_eval_graph",
    "create_training_graph",
    "experimental_create_eval_graph",
    "experimental_create_training_graph",
]
