"""`tf.tpu` / `tf.compat.v1.tpu`: TensorFlow's 14 names, from `flowgraph.contrib.tpu`
(which also holds TF 1.x's ``tf.contrib.tpu`` names such as `TPUEstimator`).

Example
-------
>>> import flowgraph as tf
>>> tf.tpu.core(3)
'device:TPU_REPLICATED_CORE:3'
"""

from flowgraph.contrib.tpu import (
    CrossShardOptimizer,
    PaddingSpec,
    XLAOptions,
    batch_parallel,
    bfloat16_scope,
    core,
    cross_replica_sum,
    experimental,
    initialize_system,
    outside_compilation,
    replicate,
    rewrite,
    shard,
    shutdown_system,
)

__all__ = ["CrossShardOptimizer", "PaddingSpec", "XLAOptions", "batch_parallel",
           "bfloat16_scope", "core", "cross_replica_sum", "experimental", "initialize_system",
           "outside_compilation", "replicate", "rewrite", "shard", "shutdown_system"]
