"""Cluster resolvers (`tf.distribute.cluster_resolver`, `tf.contrib.cluster_resolver`):
where a job's tasks are, from a `ClusterSpec`, ``TF_CONFIG``, several resolvers, or (for
`TPUClusterResolver`) a TPU address.

flowgraph has no TPU and no cloud client: `TPUClusterResolver` accepts the addresses
TensorFlow resolves without a network call (``grpc://host:port``, a list of them, or
``'local'``) and raises TensorFlow's errors for the rest (no name: ValueError; a Cloud
TPU name: URLError, or RuntimeError with `zone`/`project`). The other cloud resolvers
raise NotImplementedError.

Example
-------
>>> r = TPUClusterResolver(tpu="grpc://10.0.0.1:8470")
>>> r.master(), r.cluster_spec().as_dict()
('grpc://10.0.0.1:8470', {'worker': ['10.0.0.1:8470']})
"""

from __future__ import annotations

import json
import os
import urllib.error

from flowgraph.distributed.cluster_spec import ClusterSpec

__all__ = ["ClusterResolver", "GCEClusterResolver", "KubernetesClusterResolver",
           "SimpleClusterResolver", "SlurmClusterResolver", "TFConfigClusterResolver",
           "TPUClusterResolver", "UnionResolver"]


# -- cluster resolvers -----------------------------------------------------------------
class ClusterResolver:
    """Where a job's tasks are: `cluster_spec()`, `master()`, task type and id."""

    task_type: str | None = None
    task_id: int | None = None
    rpc_layer: str | None = "grpc"
    environment = ""

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {}


class SimpleClusterResolver(ClusterResolver):
    """A resolver for a given `ClusterSpec`.

    Example
    -------
    >>> import flowgraph as tf
    >>> spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"]})
    >>> r = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker",
    ...                                                          task_id=1)
    >>> r.master("worker", 0, rpc_layer="grpc")
    'grpc://w0:2222'

    As TensorFlow's, ``master()`` without a task is the `master` given (not the task's
    address), prefixed with ``<rpc_layer>://`` only when an rpc layer is set.

    >>> r.master(), SimpleClusterResolver(spec, master="m:1", rpc_layer="grpc").master()
    ('', 'grpc://m:1')
    """

    def __init__(self, cluster_spec, master: str = "", task_type=None, task_id=None,
                 environment: str = "", num_accelerators=None, rpc_layer=None) -> None:
        self._spec = ClusterSpec(cluster_spec) if not isinstance(cluster_spec,
                                                                 ClusterSpec) else cluster_spec
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment = environment
        self._accelerators = num_accelerators or {}
        self.rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            address = self._spec.task_address(task_type, task_id)
        else:
            address = self._master
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return dict(self._accelerators)


class TFConfigClusterResolver(ClusterResolver):
    """A resolver reading the ``TF_CONFIG`` environment variable (JSON with ``cluster``
    and ``task``), as Estimator's `RunConfig` does.

    Example
    -------
    >>> import json, os
    >>> import flowgraph as tf
    >>> os.environ["TF_CONFIG"] = json.dumps({"cluster": {"ps": ["p:1"]},
    ...                                       "task": {"type": "ps", "index": 0}})
    >>> r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    >>> r.task_type, r.task_id, r.cluster_spec().as_dict()
    ('ps', 0, {'ps': ['p:1']})
    >>> del os.environ["TF_CONFIG"]
    """

    def __init__(self, task_type=None, task_id=None, rpc_layer=None,
                 environment=None) -> None:
        config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
        task = config.get("task", {})
        self.task_type = task_type if task_type is not None else task.get("type")
        self.task_id = task_id if task_id is not None else task.get("index")
        if self.task_id is not None:
            self.task_id = int(self.task_id)
        self.rpc_layer = rpc_layer if rpc_layer is not None else config.get("rpc_layer")
        self.environment = environment  # TF's: the argument only, None without it
        self._cluster = config.get("cluster", {})

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(self._cluster)


class UnionResolver(ClusterResolver):
    """The union of the cluster specs of several resolvers (the first's task wins)."""

    def __init__(self, *resolvers, **kwargs) -> None:
        if not resolvers:
            raise ValueError("At least one ClusterResolver is required.")
        self._resolvers = resolvers
        first = resolvers[0]
        self.task_type = kwargs.get("task_type", first.task_type)
        self.task_id = kwargs.get("task_id", first.task_id)
        self.rpc_layer = kwargs.get("rpc_layer", first.rpc_layer)

    def cluster_spec(self) -> ClusterSpec:
        merged: dict = {}
        for r in self._resolvers:
            for job, tasks in r.cluster_spec().as_dict().items():
                merged.setdefault(job, tasks)
        return ClusterSpec(merged)


def _cloud_resolver(name: str):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"tf.distribute.cluster_resolver.{name} queries a cloud or batch-system API "
            "that flowgraph does not include; build a SimpleClusterResolver (or set "
            "TF_CONFIG for TFConfigClusterResolver) with the addresses instead.")

    return type(name, (ClusterResolver,), {"__init__": __init__,
                                           "__doc__": f"Refused: {name}."})


class TPUClusterResolver(ClusterResolver):
    """The cluster of a TPU given by address (``grpc://host:port``, a list of them, or
    ``'local'``); a Cloud TPU name needs Google's API client, which flowgraph lacks.

    Example
    -------
    >>> TPUClusterResolver(tpu="local").master()
    ''
    >>> TPUClusterResolver()
    Traceback (most recent call last):
    ...
    ValueError: Please provide a TPU Name to connect to.
    """

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker",
                 coordinator_name=None, coordinator_address=None, credentials="default",
                 service=None, discovery_url=None) -> None:
        if isinstance(tpu, (list, tuple)):
            tpu = tpu[0] if tpu else None
        if isinstance(tpu, bytes):
            tpu = tpu.decode()
        if not tpu:
            raise ValueError("Please provide a TPU Name to connect to.")
        if tpu != "local" and not tpu.startswith("grpc://"):
            if zone is not None or project is not None:
                raise RuntimeError(
                    "Missing runtime dependency on the Google API client. Run `pip install "
                    "cloud-tpu-client` to fix. (flowgraph has no TPU: pass a "
                    "'grpc://host:port' address, or use TPUEstimator(use_tpu=False).)")
            raise urllib.error.URLError(
                f"cannot resolve Cloud TPU {tpu!r}: the Compute Engine metadata service is "
                f"not reachable (flowgraph has no TPU: pass a 'grpc://host:port' address, or "
                f"use TPUEstimator(use_tpu=False))")
        self._tpu = tpu
        self.task_type = job_name
        self.task_id = 0
        self.rpc_layer = None
        self.environment = ""
        self._job_name = job_name
        self._coordinator_name = coordinator_name
        self._coordinator_address = coordinator_address

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        return "" if self._tpu == "local" else self._tpu

    get_master = master

    def get_job_name(self) -> str:
        return self._job_name

    def cluster_spec(self) -> ClusterSpec:
        if self._tpu == "local":
            return ClusterSpec({})
        jobs = {self._job_name: [self._tpu[len("grpc://"):]]}
        if self._coordinator_address:
            jobs[self._coordinator_name or "coordinator"] = [self._coordinator_address]
        return ClusterSpec(jobs)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {"TPU": 0}


GCEClusterResolver = _cloud_resolver("GCEClusterResolver")
KubernetesClusterResolver = _cloud_resolver("KubernetesClusterResolver")
SlurmClusterResolver = _cloud_resolver("SlurmClusterResolver")
