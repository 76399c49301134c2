"""`tf.contrib.training`: `HParams` (hparam.py), `create_train_op` with its gradient
transforms (training.py), the queue-based `bucket`/`bucket_by_sequence_length`
(bucket_ops.py) and the ps strategies of `tf.train.replica_device_setter`
(`GreedyLoadBalancingStrategy`, `RandomStrategy`, `byte_size_load_fn`).

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.training.HParams(batch_size=32).parse("batch_size=64").batch_size
64
"""

from flowgraph.contrib.training.bucket_ops import bucket, bucket_by_sequence_length
from flowgraph.contrib.training.hparam import HParams, parse_values
from flowgraph.contrib.training.train_loop import train
from flowgraph.contrib.training.training import (
    add_gradients_summaries,
    clip_gradient_norms,
    clip_gradient_norms_fn,
    create_train_op,
    multiply_gradients,
)
from flowgraph.distributed.device_setter import (
    GreedyLoadBalancingStrategy,
    RandomStrategy,
    byte_size_load_fn,
)

__all__ = [
    "GreedyLoadBalancingStrategy",
    "HParams",
    "RandomStrategy",
    "add_gradients_summaries",
    "bucket",
    "bucket_by_sequence_length",
    "byte_size_load_fn",
    "clip_gradient_norms",
    "clip_gradient_norms_fn",
    "create_train_op",
    "multiply_gradients",
    "parse_values",
    "train",
]
