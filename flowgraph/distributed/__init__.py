"""Distributed execution: gRPC servers, clusters, remote sessions (docs/distributed.md).

``tf.train.ClusterSpec``, ``tf.train.Server`` and ``tf.train.replica_device_setter``
live here; ``tf.Session('grpc://host:port')`` returns a
`flowgraph.distributed.remote_session.RemoteSession`. gRPC comes from the optional
``distributed`` extra (grpcio); importing this package does not need it, starting a
server or a remote session does.
"""

from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.distributed.device_setter import replica_device_setter
from flowgraph.distributed.server import Server

__all__ = ["ClusterSpec", "Server", "replica_device_setter"]
