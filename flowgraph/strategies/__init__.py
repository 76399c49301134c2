"""Distribution strategies in graph mode: the default strategy, `OneDeviceStrategy` and
`MirroredStrategy` (in-graph replication over the local devices). `tf.distribute`
(`flowgraph/compat/distribute.py`) and `tf.contrib.distribute` expose them; Estimator
training uses them through `RunConfig(train_distribute=...)`."""

from flowgraph.strategies.base import OneDeviceStrategy, ReduceOp, Strategy
from flowgraph.strategies.mirrored import MirroredStrategy
from flowgraph.strategies.values import Mirrored, MirroredVariable, PerReplica

__all__ = ["Mirrored", "MirroredStrategy", "MirroredVariable", "OneDeviceStrategy",
           "PerReplica", "ReduceOp", "Strategy"]
