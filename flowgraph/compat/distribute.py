"""`tf.distribute`: the default (single-replica) strategy, replica contexts, input
contexts and cluster resolvers, as a TF 1.x program in graph mode meets them.

Outside any strategy scope TensorFlow runs every program under a *default strategy*
with one replica: `get_strategy()` returns it, `has_strategy()` is False,
`get_replica_context()` returns its replica context (replica 0 of 1), and
``strategy.run(fn)`` / ``strategy.reduce(op, value, axis)`` / ``scope()`` work as
identities on one replica. Library code written for strategies (Keras, Estimator model
functions) uses exactly this. `OneDeviceStrategy` places the ops built in its scope on
its device. `MirroredStrategy` replicates the graph over the local devices
(`flowgraph/strategies/mirrored.py`); the cluster strategies of
`tf.distribute.experimental` run on the local devices as TensorFlow runs them without
a cluster, and refuse a ``TF_CONFIG`` cluster: flowgraph's multi-machine training is
`tf.train.replica_device_setter` with `tf.train.Server` (between-graph replication,
docs/distributed.md).

Example
-------
>>> import flowgraph as tf
>>> strategy = tf.distribute.get_strategy()
>>> tf.distribute.has_strategy(), strategy.num_replicas_in_sync
(False, 1)
>>> ctx = tf.distribute.get_replica_context()
>>> ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync
(0, 1)
"""

from __future__ import annotations

import enum
import types

from flowgraph.distributed.cluster_resolver import (
    ClusterResolver,
    GCEClusterResolver,
    KubernetesClusterResolver,
    SimpleClusterResolver,
    SlurmClusterResolver,
    TFConfigClusterResolver,
    TPUClusterResolver,
    UnionResolver,
)
from flowgraph.distributed.server import Server
from flowgraph.strategies.base import (
    CrossDeviceOps,
    HierarchicalCopyAllReduce,
    InputContext,
    InputReplicationMode,
    NcclAllReduce,
    OneDeviceStrategy,
    ReduceOp,
    ReductionToOneDevice,
    ReplicaContext,
    RunOptions,
    Strategy,
    StrategyExtended,
    experimental_set_strategy,
    get_cross_replica_context,
    get_loss_reduction,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
    refuse,
)
from flowgraph.strategies.local_cluster import (
    CentralStorageStrategy,
    MultiWorkerMirroredStrategy,
    ParameterServerStrategy,
)
from flowgraph.strategies.mirrored import MirroredStrategy

__all__ = ["CrossDeviceOps", "HierarchicalCopyAllReduce", "InputContext",
           "InputReplicationMode", "MirroredStrategy", "NcclAllReduce", "OneDeviceStrategy",
           "ReduceOp", "ReductionToOneDevice", "ReplicaContext", "RunOptions", "Server",
           "Strategy", "StrategyExtended", "cluster_resolver", "experimental",
           "experimental_set_strategy", "get_cross_replica_context", "get_loss_reduction",
           "get_replica_context",
           "get_strategy", "has_strategy", "in_cross_replica_context"]


cluster_resolver = types.SimpleNamespace(
    ClusterResolver=ClusterResolver, SimpleClusterResolver=SimpleClusterResolver,
    TFConfigClusterResolver=TFConfigClusterResolver, UnionResolver=UnionResolver,
    GCEClusterResolver=GCEClusterResolver,
    KubernetesClusterResolver=KubernetesClusterResolver,
    SlurmClusterResolver=SlurmClusterResolver, TPUClusterResolver=TPUClusterResolver)


class CommunicationImplementation(enum.Enum):
    """Collective communication implementations (`MultiWorkerMirroredStrategy` accepts one)."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class CommunicationOptions:
    """Options of collective communication (accepted and kept)."""

    def __init__(self, bytes_per_pack: int = 0, timeout_seconds=None,
                 implementation=CommunicationImplementation.AUTO) -> None:
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation


experimental = types.SimpleNamespace(
    CentralStorageStrategy=CentralStorageStrategy,
    MultiWorkerMirroredStrategy=MultiWorkerMirroredStrategy,
    ParameterServerStrategy=ParameterServerStrategy,
    TPUStrategy=refuse("experimental.TPUStrategy"),
    CollectiveCommunication=CommunicationImplementation,
    CommunicationImplementation=CommunicationImplementation,
    CommunicationOptions=CommunicationOptions, CollectiveHints=CommunicationOptions)


def __dir__():
    return list(__all__)
