"""`tf.contrib.cluster_resolver`: TF 1.x's home of the cluster resolvers, the classes of
`tf.distribute.cluster_resolver` (`flowgraph.distributed.cluster_resolver`).

Example
-------
>>> import flowgraph as tf
>>> r = tf.contrib.cluster_resolver.TPUClusterResolver(tpu="grpc://10.0.0.2:8470")
>>> r.master()
'grpc://10.0.0.2:8470'
"""

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

UnionClusterResolver = UnionResolver  # TF 1.x's name

__all__ = ["ClusterResolver", "GCEClusterResolver", "KubernetesClusterResolver",
           "SimpleClusterResolver", "SlurmClusterResolver", "TFConfigClusterResolver",
           "TPUClusterResolver", "UnionClusterResolver", "UnionResolver"]
