"""`tf.contrib.training`: `HParams` (hparam.py), `create_train_op` with its gradient
transforms (training.py) and the queue-based `bucket`/`bucket_by_sequence_length`
(bucket_ops.py).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.training.HParams(batch_size=32).parse("batch_size=64").batch_size
64
"""

from flowgraph.contrib.training.bucket_ops import bucket, bucket_by_sequence_length
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
    "bucket",
    "bucket_by_sequence_length",
    "clip_gradient_norms",
    "clip_gradient_norms_fn",
    "create_train_op",
    "multiply_gradients",
    "parse_values",
]
