"""`tf.contrib.training`: `HParams` (hparam.py) and `create_train_op` with its gradient
transforms (training.py).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.training.HParams(batch_size=32).parse("batch_size=64").batch_size
64
"""

from flowgraph.contrib.training.hparam import HParams, parse_values
from flowgraph.contrib.training.training import (
    add_gradients_summaries,
    clip_gradient_norms,
    clip_gradient_norms_fn,
    create_train_op,
    multiply_gradients,
)

__all__ = [
    "HParams",
    "add_gradients_summaries",
    "clip_gradient_norms",
    "clip_gradient_norms_fn",
    "create_train_op",
    "multiply_gradients",
    "parse_values",
]
