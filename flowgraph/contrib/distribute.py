"""`tf.contrib.distribute` (TF 1.x): the strategies under their contrib names.

`MirroredStrategy(num_gpus=...)` mirrors over that many GPUs (none: the CPU),
`OneDeviceStrategy(device)` places everything on one device, `AllReduceCrossDeviceOps`
names an all-reduce algorithm (the replicas here reduce by summing on the first device,
which gives the same values). `CollectiveAllReduceStrategy` and
`ParameterServerStrategy` run on this process's devices as TensorFlow runs them without
a cluster (`flowgraph/strategies/local_cluster.py`) and refuse a ``TF_CONFIG`` cluster,
naming the replacement.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.distribute.MirroredStrategy(num_gpus=0).num_replicas_in_sync
1
"""

from __future__ import annotations

from flowgraph.strategies.base import (
    CrossDeviceOps,
    HierarchicalCopyAllReduce,
    NcclAllReduce,
    OneDeviceStrategy,
    ReduceOp,
    ReductionToOneDevice,
    get_cross_replica_context,
    get_loss_reduction,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)
from flowgraph.strategies.local_cluster import (
    MultiWorkerMirroredStrategy,
    ParameterServerStrategy,
)
from flowgraph.strategies.mirrored import MirroredStrategy as _Mirrored

__all__ = ["AllReduceCrossDeviceOps", "CollectiveAllReduceStrategy", "CrossDeviceOps",
           "HierarchicalCopyAllReduce", "MirroredStrategy", "NcclAllReduce",
           "OneDeviceStrategy", "ParameterServerStrategy", "ReduceOp",
           "ReductionToOneDevice", "get_cross_replica_context", "get_loss_reduction",
           "get_replica_context", "get_strategy", "has_strategy",
           "in_cross_replica_context"]


class MirroredStrategy(_Mirrored):
    """TF 1.x's contrib signature: `devices`, or `num_gpus` (0: the CPU) /
    `num_gpus_per_worker` GPUs, and `cross_device_ops`."""

    def __init__(self, devices=None, num_gpus=None, num_gpus_per_worker=None,
                 cross_device_ops=None, auto_shard_dataset=False,
                 cross_tower_ops=None) -> None:
        if devices is not None and (num_gpus or num_gpus_per_worker):
            raise ValueError("Must only specify one of `devices` and `num_gpus`.")
        count = num_gpus if num_gpus is not None else num_gpus_per_worker
        if devices is None and count is not None:
            devices = [f"/gpu:{i}" for i in range(count)] if count else ["/cpu:0"]
        super().__init__(devices, cross_device_ops=cross_device_ops or cross_tower_ops)


class AllReduceCrossDeviceOps(CrossDeviceOps):
    """An all-reduce algorithm by name (``"nccl"`` or ``"hierarchical_copy"``)."""

    def __init__(self, all_reduce_alg: str = "nccl", num_packs: int = 1) -> None:
        self.all_reduce_alg = all_reduce_alg
        self.num_packs = num_packs


class CollectiveAllReduceStrategy(MultiWorkerMirroredStrategy):
    """TF 1.x's contrib name of the collective all-reduce strategy: on one worker,
    `num_gpus_per_worker` GPUs (0: the CPU) mirrored."""

    def __init__(self, num_gpus_per_worker=0, communication=None) -> None:
        devices = [f"/gpu:{i}" for i in range(num_gpus_per_worker)] or ["/cpu:0"]
        super().__init__(communication=communication, devices=devices)
