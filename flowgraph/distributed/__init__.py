"""Distributed execution: gRPC servers, clusters, remote sessions (docs/distributed.md).

``tf.train.ClusterSpec``, ``tf.train.Server`` and ``tf.train.replica_device_setter``
live here; ``tf.Session('grpc://host:port')`` returns a
`flowgraph.distributed.remote_session.RemoteSession`. gRPC comes from the optional
``distributed`` extra (grpcio); importing this package does not need it, starting a
server or a remote session does.

Also here: `flowgraph.distributed.sync_replicas` (``tf.train.SyncReplicasOptimizer``,
built in ``flowgraph/train/__init__.py``) and `flowgraph.distributed.launch`
(``flowgraph launch``, a local cluster of one program).
"""

from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.distributed.device_setter import (
    GreedyLoadBalancingStrategy,
    byte_size_load_fn,
    replica_device_setter,
)
from flowgraph.distributed.server import Server

__all__ = ["ClusterSpec", "GreedyLoadBalancingStrategy", "Server", "byte_size_load_fn",
           "replica_device_setter"]
