"""The base of `tf.distribute`: the default (single-replica) strategy, `OneDeviceStrategy`,
replica contexts and input contexts, and the functions telling graph-building code
which strategy and replica it builds for (`flowgraph/compat/distribute.py` re-exports
them as ``tf.distribute``; `flowgraph/strategies/mirrored.py` builds on them).

Outside any strategy scope TensorFlow runs every program under a *default strategy*
with one replica: `get_strategy()` returns it, `has_strategy()` is False,
`get_replica_context()` returns its replica context (replica 0 of 1), and
``strategy.run(fn)`` / ``strategy.reduce(op, value, axis)`` / ``scope()`` work as
identities on one replica. `OneDeviceStrategy` places the ops built in its scope on
its device.
"""

from __future__ import annotations

import contextlib
import enum
from typing import NamedTuple

from flowgraph.framework import distribute_context
from flowgraph.framework.graph import device as _device
from flowgraph.ops import math_reduce


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

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """`fn` called for the one replica, in its replica context."""
        return self._call_each(fn, args, kwargs)[0]

    def _call_each(self, fn, args=(), kwargs=None) -> list:
        strategy = self._strategy
        with distribute_context.replica_scope(strategy, 0, ReplicaContext(strategy)):
            return [fn(*args, **(kwargs or {}))]

    def read_var(self, var):
        return var.value() if hasattr(var, "value") else var

    def reduce_to(self, reduce_op, value, destinations, options=None):
        return value

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return [v for v, _ in value_destination_pairs]

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
        distribute_context.push_strategy(self)
        try:
            if self._device is None:
                yield self
            else:
                with _device(self._device):
                    yield self
        finally:
            distribute_context.pop_strategy()

    def run(self, fn, args=(), kwargs=None, options=None):
        """Call `fn` once, for the one replica."""
        if self is _default or distribute_context.current_replica() is not None:
            return fn(*args, **(kwargs or {}))
        return self._extended._call_each(fn, args, kwargs)[0]

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        """Combine `value` across replicas (one: itself), then across `axis` if given."""
        op = ReduceOp(reduce_op.value if isinstance(reduce_op, ReduceOp) else reduce_op)
        values = getattr(value, "values", None)
        if isinstance(values, tuple):  # a PerReplica of the one replica
            value = values[0]
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
        values = getattr(value, "values", None)
        return values if isinstance(values, tuple) else (value,)

    unwrap = experimental_local_results

    def experimental_run(self, fn, input_iterator=None):
        """TF1's V1 API: `fn` on the next element of `input_iterator`."""
        args = () if input_iterator is None else (input_iterator.get_next(),)
        return self.run(fn, args=args)

    def group(self, value, name=None):
        from flowgraph.ops.control_flow_ops import group

        if isinstance(value, list | tuple):
            return group(*value, name=name)
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
        with distribute_context.replica_scope(None, 0, None):
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


def refuse(name: str):
    """A strategy class whose constructor raises NotImplementedError naming `name`."""
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"tf.distribute.{name} is not available in flowgraph: train with "
            "MirroredStrategy (one replica per local device), OneDeviceStrategy, or "
            "between-graph replication (tf.train.replica_device_setter and "
            "tf.train.Server; docs/distributed.md).")

    return type(name.rsplit(".", 1)[-1], (Strategy,), {"__init__": __init__,
                                                      "__doc__": f"Refused: {name}."})


_default = _DefaultStrategy()
_global: list[Strategy] = []


def get_strategy() -> Strategy:
    """The current strategy: the innermost `scope()`, the one set by
    `experimental_set_strategy`, or the default strategy."""
    current = distribute_context.current_strategy()
    if current is not None:
        return current
    replica = distribute_context.current_replica()
    if replica is not None:
        return replica[0]
    return _global[-1] if _global else _default


def has_strategy() -> bool:
    """Whether a strategy other than the default one is current."""
    return get_strategy() is not _default


def in_cross_replica_context() -> bool:
    """True in a strategy's scope outside the functions it runs per replica (and in
    their `merge_call`); False under the default strategy and inside a replica."""
    if distribute_context.current_replica() is not None:
        return False
    return has_strategy()


def get_replica_context() -> ReplicaContext | None:
    """The context of the replica whose function is running; the default strategy's
    replica context outside every scope; None in cross-replica context."""
    replica = distribute_context.current_replica()
    if replica is not None:
        return replica[2]
    if has_strategy():
        return None
    return ReplicaContext(get_strategy())


def get_cross_replica_context():
    """The current strategy in cross-replica context, else None."""
    return get_strategy() if in_cross_replica_context() else None


def get_loss_reduction() -> ReduceOp:
    """How the optimizer combines the replicas' losses: SUM, except inside an
    Estimator's distributed training, where a mean loss (every `tf.losses` reduction
    but SUM) is averaged over the replicas (MEAN), as TensorFlow 1.x does."""
    if not getattr(get_strategy(), "_scale_loss_for_estimator", False):
        return ReduceOp.SUM
    from flowgraph.framework.graph import get_default_graph

    last = get_default_graph().__dict__.get("_last_loss_reduction")
    return ReduceOp.SUM if last in ("weighted_sum", "sum") else ReduceOp.MEAN


def experimental_set_strategy(strategy: Strategy | None) -> None:
    """Make `strategy` current outside every scope (None: back to the default)."""
    _global.clear()
    if strategy is not None:
        _global.append(strategy)


