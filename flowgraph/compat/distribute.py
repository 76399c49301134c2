"""`tf.distribute`: the default (single-replica) strategy, replica contexts, input
contexts and cluster resolvers, as a TF 1.x program in graph mode meets them.

Outside any strategy scope TensorFlow runs every program under a *default strategy*
with one replica: `get_strategy()` returns it, `has_strategy()` is False,
`get_replica_context()` returns its replica context (replica 0 of 1), and
``strategy.run(fn)`` / ``strategy.reduce(op, value, axis)`` / ``scope()`` work as
identities on one replica. Library code written for strategies (Keras, Estimator model
functions) uses exactly this. `OneDeviceStrategy` places the ops built in its scope on
its device. The multi-replica strategies (`MirroredStrategy` and those of
`tf.distribute.experimental`) raise `NotImplementedError`: flowgraph's multi-machine
training is `tf.train.replica_device_setter` with `tf.train.Server` (between-graph
replication, docs/distributed.md).

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

import contextlib
import enum
import json
import os
import types
from typing import NamedTuple

from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.distributed.server import Server
from flowgraph.framework.graph import device as _device
from flowgraph.ops import math_reduce

__all__ = ["CrossDeviceOps", "HierarchicalCopyAllReduce", "InputContext",
           "InputReplicationMode", "MirroredStrategy", "NcclAllReduce", "OneDeviceStrategy",
           "ReduceOp", "ReductionToOneDevice", "ReplicaContext", "RunOptions", "Server",
           "Strategy", "StrategyExtended", "cluster_resolver", "experimental",
           "experimental_set_strategy", "get_loss_reduction", "get_replica_context",
           "get_strategy", "has_strategy", "in_cross_replica_context"]


class ReduceOp(enum.Enum):
    """How values from replicas combine."""

    SUM = "SUM"
    MEAN = "MEAN"


class InputReplicationMode(enum.Enum):
    """Whether an input function runs once per worker or once per replica."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class RunOptions(NamedTuple):
    """Options of `Strategy.run` (accepted; one replica needs none of them)."""

    experimental_enable_dynamic_batch_size: bool = True
    experimental_bucketizing_dynamic_shape: bool = False
    experimental_xla_options: object = None


class InputContext:
    """What an input function learns about its place among the input pipelines.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.distribute.InputContext(2, 1, 4).get_per_replica_batch_size(8)
    2
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1) -> None:
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    num_input_pipelines = property(lambda self: self._num_input_pipelines)
    input_pipeline_id = property(lambda self: self._input_pipeline_id)
    num_replicas_in_sync = property(lambda self: self._num_replicas_in_sync)

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size` split evenly over the replicas."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible "
                             f"by `num_replicas_in_sync` {self._num_replicas_in_sync} ")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, "
                f"total: {self._num_input_pipelines})")


class StrategyExtended:
    """The strategy's lower-level API (one replica: variables and updates as written)."""

    def __init__(self, strategy: Strategy) -> None:
        self._strategy = strategy

    parameter_devices = property(lambda self: (self._strategy._device or "/cpu:0",))
    worker_devices = property(lambda self: (self._strategy._device or "/cpu:0",))
    experimental_require_static_shapes = False

    def colocate_vars_with(self, colocate_with_variable):
        """A scope placing new variables with `colocate_with_variable`."""
        from flowgraph.framework.graph import colocate_with

        return colocate_with(colocate_with_variable)

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """``fn(var, *args, **kwargs)``."""
        return fn(var, *args, **(kwargs or {}))

    def value_container(self, value):
        return value

    def variable_created_in_scope(self, v) -> bool:
        return True


class Strategy:
    """A distribution strategy; the base of the default strategy and of
    `OneDeviceStrategy` (one replica)."""

    def __init__(self, device: str | None = None) -> None:
        self._device = device
        self._extended = StrategyExtended(self)

    extended = property(lambda self: self._extended)
    num_replicas_in_sync = property(lambda self: 1)

    @contextlib.contextmanager
    def scope(self):
        """Make this the current strategy (and, with a device, place new ops on it)."""
        _stack.append(self)
        try:
            if self._device is None:
                yield self
            else:
                with _device(self._device):
                    yield self
        finally:
            _stack.pop()

    def run(self, fn, args=(), kwargs=None, options=None):
        """Call `fn` once, for the one replica."""
        return fn(*args, **(kwargs or {}))

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        """Combine `value` across replicas (one: itself), then across `axis` if given."""
        op = ReduceOp(reduce_op.value if isinstance(reduce_op, ReduceOp) else reduce_op)
        if axis is None:
            return value
        if op is ReduceOp.SUM:
            return math_reduce.reduce_sum(value, axis=axis)
        return math_reduce.reduce_mean(value, axis=axis)

    def experimental_distribute_dataset(self, dataset, options=None):
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext())

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def make_dataset_iterator(self, dataset):
        return dataset.make_initializable_iterator()

    def make_input_fn_iterator(self, input_fn, replication_mode=InputReplicationMode.PER_WORKER):
        return input_fn(InputContext()).make_initializable_iterator()

    def experimental_local_results(self, value) -> tuple:
        return (value,)

    def group(self, value, name=None):
        from flowgraph.ops.control_flow_ops import group

        return group(value, name=name)

    def update_config_proto(self, config_proto):
        return config_proto

    def configure(self, session_config=None, cluster_spec=None, task_type=None,
                  task_id=None):
        return None


class _DefaultStrategy(Strategy):
    """The strategy in effect outside every strategy scope."""


class OneDeviceStrategy(Strategy):
    """One replica on `device`: ops built in its scope are placed there.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default(), tf.distribute.OneDeviceStrategy("/cpu:0").scope():
    ...     print(tf.constant(1.0).device)
    /device:CPU:0
    """

    def __init__(self, device: str) -> None:
        super().__init__(device)


class ReplicaContext:
    """The context of the code running for one replica."""

    def __init__(self, strategy: Strategy, replica_id_in_sync_group: int = 0) -> None:
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    strategy = property(lambda self: self._strategy)
    num_replicas_in_sync = property(lambda self: self._strategy.num_replicas_in_sync)
    replica_id_in_sync_group = property(lambda self: self._replica_id)
    devices = property(lambda self: self._strategy.extended.worker_devices)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Call ``merge_fn(strategy, *args, **kwargs)`` in the cross-replica context."""
        return merge_fn(self._strategy, *args, **(kwargs or {}))

    def all_reduce(self, reduce_op, value, options=None):
        """`value` combined over the replicas (one replica: `value`)."""
        ReduceOp(reduce_op.value if isinstance(reduce_op, ReduceOp) else reduce_op)
        return value

    def all_gather(self, value, axis, options=None):
        return value


class CrossDeviceOps:
    """The base of the cross-device reductions of the multi-replica strategies."""


class ReductionToOneDevice(CrossDeviceOps):
    def __init__(self, reduce_to_device=None, accumulation_fn=None) -> None:
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


class HierarchicalCopyAllReduce(CrossDeviceOps):
    def __init__(self, num_packs: int = 1) -> None:
        self.num_packs = num_packs


class NcclAllReduce(CrossDeviceOps):
    def __init__(self, num_packs: int = 1) -> None:
        self.num_packs = num_packs


def _refuse(name: str):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"tf.distribute.{name} is not available in flowgraph: its replicas run one "
            "graph per device with all-reduce, which flowgraph does not implement. Train "
            "on one replica (the default strategy) or with between-graph replication "
            "(tf.train.replica_device_setter and tf.train.Server; docs/distributed.md).")

    return type(name.rsplit(".", 1)[-1], (Strategy,), {"__init__": __init__,
                                                      "__doc__": f"Refused: {name}."})


MirroredStrategy = _refuse("MirroredStrategy")

_default = _DefaultStrategy()
_stack: list[Strategy] = []
_global: list[Strategy] = []


def get_strategy() -> Strategy:
    """The current strategy: the innermost `scope()`, the one set by
    `experimental_set_strategy`, or the default strategy."""
    if _stack:
        return _stack[-1]
    return _global[-1] if _global else _default


def has_strategy() -> bool:
    """Whether a strategy other than the default one is current."""
    return get_strategy() is not _default


def in_cross_replica_context() -> bool:
    """False: code outside `Strategy.run` runs in the default replica context."""
    return False


def get_replica_context() -> ReplicaContext:
    """The replica context of the current strategy (replica 0)."""
    return ReplicaContext(get_strategy())


def get_loss_reduction() -> ReduceOp:
    """How replicas combine losses: SUM, as TensorFlow 1.x's losses are summed."""
    return ReduceOp.SUM


def experimental_set_strategy(strategy: Strategy | None) -> None:
    """Make `strategy` current outside every scope (None: back to the default)."""
    _global.clear()
    if strategy is not None:
        _global.append(strategy)


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
    >>> r.master()
    'grpc://w1:2222'
    """

    def __init__(self, cluster_spec, master: str = "", task_type=None, task_id=None,
                 environment: str = "", num_accelerators=None, rpc_layer=None) -> None:
        self._spec = ClusterSpec(cluster_spec) if not isinstance(cluster_spec,
                                                                 ClusterSpec) else cluster_spec
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment = environment
        self._accelerators = num_accelerators or {}
        self.rpc_layer = rpc_layer if rpc_layer is not None else "grpc"

    def cluster_spec(self) -> ClusterSpec:
        return self._spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is None and task_id is None and self._master:
            return self._master
        return super().master(task_type, task_id, rpc_layer)

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


cluster_resolver = types.SimpleNamespace(
    ClusterResolver=ClusterResolver, SimpleClusterResolver=SimpleClusterResolver,
    TFConfigClusterResolver=TFConfigClusterResolver, UnionResolver=UnionResolver,
    GCEClusterResolver=_cloud_resolver("GCEClusterResolver"),
    KubernetesClusterResolver=_cloud_resolver("KubernetesClusterResolver"),
    SlurmClusterResolver=_cloud_resolver("SlurmClusterResolver"),
    TPUClusterResolver=_cloud_resolver("TPUClusterResolver"))


class CommunicationImplementation(enum.Enum):
    """Collective communication implementations (of the refused multi-worker strategy)."""

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
    CentralStorageStrategy=_refuse("experimental.CentralStorageStrategy"),
    MultiWorkerMirroredStrategy=_refuse("experimental.MultiWorkerMirroredStrategy"),
    ParameterServerStrategy=_refuse("experimental.ParameterServerStrategy"),
    TPUStrategy=_refuse("experimental.TPUStrategy"),
    CollectiveCommunication=CommunicationImplementation,
    CommunicationImplementation=CommunicationImplementation,
    CommunicationOptions=CommunicationOptions, CollectiveHints=CommunicationOptions)


def __dir__():
    return list(__all__)
