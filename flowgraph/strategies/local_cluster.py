"""The cluster strategies of TF1's `tf.distribute.experimental` (and `tf.contrib.distribute`)
as TensorFlow runs them without a cluster: on this process's devices.

- `MultiWorkerMirroredStrategy` (contrib: `CollectiveAllReduceStrategy`): with one
  worker it is `MirroredStrategy` over the local devices;
- `CentralStorageStrategy` and, without ``ps`` tasks, `ParameterServerStrategy`: one
  replica per compute device, every variable stored once on the parameter device (the
  CPU), gradients summed over the replicas and applied once.

With a ``TF_CONFIG`` naming several workers or ``ps`` tasks they refuse: multi-machine
training in flowgraph is between-graph replication (`tf.train.replica_device_setter`,
and an Estimator given ``TF_CONFIG`` without ``train_distribute``; docs/distributed.md).
"""

from __future__ import annotations

import json
import os

from flowgraph.framework import distribute_context
from flowgraph.framework.graph import get_default_graph
from flowgraph.strategies import values
from flowgraph.strategies.mirrored import (
    MirroredExtended,
    MirroredStrategy,
    _canonical_device,
    default_devices,
)

__all__ = ["CentralStorageStrategy", "MultiWorkerMirroredStrategy",
           "ParameterServerStrategy"]


def _cluster() -> dict:
    return json.loads(os.environ.get("TF_CONFIG", "{}") or "{}").get("cluster", {})


def _refuse_cluster(name: str, why: str) -> None:
    raise NotImplementedError(
        f"{name} over a cluster ({why} in TF_CONFIG) is not available in flowgraph: use "
        "between-graph replication (tf.train.replica_device_setter with tf.train.Server, "
        "or an Estimator with TF_CONFIG and no train_distribute; docs/distributed.md).")


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """Synchronous all-reduce training; on one worker, `MirroredStrategy` over the
    local devices (TF's behaviour without a cluster).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.distribute.experimental.MultiWorkerMirroredStrategy().num_replicas_in_sync
    1
    """

    def __init__(self, communication=None, cluster_resolver=None,
                 communication_options=None, devices=None) -> None:
        cluster = _cluster()
        workers = len(cluster.get("worker", [])) + len(cluster.get("chief", []))
        if workers > 1:
            _refuse_cluster(type(self).__name__, f"{workers} workers")
        super().__init__(devices)
        self._communication = communication


class CentralExtended(MirroredExtended):
    """Replicas on the compute devices, each variable once on the parameter device."""

    def __init__(self, strategy, devices, parameter_device) -> None:
        super().__init__(strategy, devices)
        self._parameter_device = parameter_device

    parameter_devices = property(lambda self: (self._parameter_device,))

    def _create_variable(self, next_creator, **kwargs):
        replica = distribute_context.current_replica()
        if replica is not None and values.is_sync_on_read(kwargs):
            return super()._create_variable(next_creator, **kwargs)  # per-replica counts
        graph = get_default_graph()
        if replica is not None and replica[1] > 0 and self._shared_vars is not None:
            return super()._create_variable(next_creator, **kwargs)  # replica 0's
        with graph.colocate_with(None, ignore_existing=True), \
                graph.device(self._parameter_device), \
                distribute_context.replica_scope(None, 0, None):
            v = next_creator(**kwargs)
        if replica is not None and self._shared_vars is not None:
            import re

            scope = re.sub(r"(^|/)replica_\d+(/|$)", r"\1", graph.get_name_scope())
            self._shared_vars.setdefault((scope, kwargs.get("name") or "Variable"),
                                         []).append(v)
        return v

    def variable_created_in_scope(self, v) -> bool:
        return True

    def read_var(self, var):
        return var.value() if hasattr(var, "value") else var


class CentralStorageStrategy(MirroredStrategy):
    """One replica per compute device (default: every GPU, else the CPU), variables
    stored once on `parameter_device` (default: the CPU).

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.distribute.experimental.CentralStorageStrategy()
    >>> s.num_replicas_in_sync, s.extended.parameter_devices
    (1, ('/replica:0/task:0/device:CPU:0',))
    """

    def __init__(self, compute_devices=None, parameter_device=None) -> None:
        super().__init__(compute_devices)
        param = _canonical_device(parameter_device or "/cpu:0")
        self._extended = CentralExtended(self, self._extended.worker_devices, param)


class ParameterServerStrategy(CentralStorageStrategy):
    """Without ``ps`` tasks in ``TF_CONFIG``, TF's local mode: `CentralStorageStrategy`
    on this process's devices."""

    def __init__(self, cluster_resolver=None, num_gpus_per_worker=None) -> None:
        if _cluster().get("ps"):
            _refuse_cluster(type(self).__name__, "ps tasks")
        devices = None
        if num_gpus_per_worker is not None:
            devices = [f"/gpu:{i}" for i in range(num_gpus_per_worker)] or ["/cpu:0"]
        super().__init__(devices if devices is not None else default_devices())
