"""`MirroredStrategy`: in-graph replication over the local devices, one replica each.

`call_for_each_replica(fn)` builds `fn` once per device, each replica in a thread of
its own, one thread at a time (so the graph is built in a fixed order): replica *i*
builds under the name scope ``replica_i/`` (replica 0 under none) and the device scope
of device *i*, reusing the variables replica 0 created. A replica that calls
``merge_call(merge_fn, args)`` pauses; once every replica has paused, the caller's
thread runs ``merge_fn(strategy, *args)`` once, in cross-replica context, with the
replicas' arguments regrouped (`PerReplica` where they differ) and hands each replica
its part of the result. `Optimizer.apply_gradients` does exactly this: the merge sums
each variable's gradients over the replicas and applies the sum to every copy.

::

    caller ── start r0 ─ r0 runs ─ pauses in merge_call ── start r1 ─ r1 runs ─ pauses
          ── merge_fn(strategy, PerReplica(args)) ── r0 resumes to its end ── r1 resumes
"""

from __future__ import annotations

import contextlib
import logging
import re

from flowgraph.framework import distribute_context
from flowgraph.framework.graph import get_default_graph
from flowgraph.strategies import base
from flowgraph.strategies.replicas import MirroredReplicaContext, ReplicaThread
from flowgraph.strategies.values import (
    Mirrored,
    MirroredVariable,
    PerReplica,
    SyncOnReadVariable,
    is_sync_on_read,
    mirrored_collections,
    regroup,
    select_replica,
)

__all__ = ["MirroredExtended", "MirroredReplicaContext", "MirroredStrategy",
           "default_devices"]  # MirroredReplicaContext: from replicas.py


def _canonical_device(name: str) -> str:
    from flowgraph.framework.device_spec import DeviceSpec

    spec = DeviceSpec.from_string(name)
    dtype = (spec.device_type or "CPU").upper()
    index = spec.device_index or 0
    return f"/replica:0/task:0/device:{dtype}:{index}"


def default_devices() -> tuple:
    """TF's choice: every GPU, else the CPU. A CPU-type OpenCL device (PoCL) is not a
    GPU here, as TensorFlow would not see one."""
    try:
        from flowgraph.backends import list_devices

        gpus = [d for d in list_devices()
                if d.device_type == "GPU" and getattr(d, "auto_place", True)]
    except Exception:  # no backend can list devices: the CPU
        gpus = []
    if gpus:
        return tuple(_canonical_device(f"/gpu:{i}") for i in range(len(gpus)))
    return (_canonical_device("/cpu:0"),)


class MirroredExtended(base.StrategyExtended):
    """`MirroredStrategy.extended`: replicas, reductions and updates."""

    def __init__(self, strategy, devices) -> None:
        super().__init__(strategy)
        self._devices = tuple(devices)
        self._shared_vars: dict | None = None

    parameter_devices = property(lambda self: self._devices)
    worker_devices = property(lambda self: self._devices)

    # -- replicas -----------------------------------------------------------------------
    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """Build `fn` once per replica (see the module's essay); returns the replicas'
        results regrouped (`PerReplica` where they differ)."""
        return regroup(self._call_each(fn, args, kwargs))

    def _call_each(self, fn, args=(), kwargs=None) -> list:
        from flowgraph.ops.variable_scope import get_variable_scope

        if distribute_context.current_replica() is not None:
            raise RuntimeError("call_for_each_replica was called in a replica context; "
                               "call it in cross-replica context (in the strategy's "
                               "scope, outside the replica function).")
        kwargs = kwargs or {}
        graph = get_default_graph()
        # as TensorFlow: the replica threads build with their own control-dependency,
        # device and colocation stacks
        graph.switch_to_thread_local()
        scope = graph.get_name_scope()
        caller = (graph, scope + "/" if scope else "", get_variable_scope())
        n = len(self._devices)
        threads = [ReplicaThread(self._strategy, i, fn, select_replica(i, args),
                                  select_replica(i, kwargs), caller) for i in range(n)]
        saved_store, self._shared_vars = self._shared_vars, {}
        try:
            for t in threads:
                t.start()
            while True:
                for t in threads:
                    t.should_run.set()
                    t.has_paused.wait()
                    t.has_paused.clear()
                    if t.error is not None:
                        self._stop(threads)
                        raise t.error
                if all(t.done for t in threads):
                    break
                if any(t.done for t in threads):
                    self._stop(threads)
                    raise RuntimeError("Some replicas made a different number of "
                                       "replica_context().merge_call() calls.")
                self._run_merge(threads)
            return [t.result for t in threads]
        finally:
            self._shared_vars = saved_store

    @staticmethod
    def _stop(threads) -> None:
        for t in threads:
            if not t.done:
                t.merge_result = None
                t.error = t.error or RuntimeError("stopped")
                t.should_run.set()
                t.join(timeout=1.0)

    def _run_merge(self, threads) -> None:
        merge_fn, _, _ = threads[0].merge_request
        args = regroup([t.merge_request[1] for t in threads])
        kwargs = regroup([t.merge_request[2] for t in threads])
        from flowgraph.ops.variable_scope import variable_scope

        scope = threads[0].name_scope_at_merge
        graph = get_default_graph()
        # TF runs the merge under replica 0's name and variable scopes at its merge_call
        # (so slots made there are named under the variable scope, as in TF).
        with graph.name_scope(scope + "/" if scope else None), \
                variable_scope(threads[0].var_scope_at_merge):
            result = merge_fn(self._strategy, *args, **kwargs)
        for t in threads:
            t.merge_result = select_replica(t.index, result)
            t.merge_request = None

    # -- variables ----------------------------------------------------------------------
    def _create_variable(self, next_creator, **kwargs):
        """The strategy scope's variable creator: a `MirroredVariable` with a copy per
        device (replicas after the first get the first replica's variable)."""
        replica = distribute_context.current_replica()
        graph = get_default_graph()
        key = None
        if replica is not None and self._shared_vars is not None:
            scope = re.sub(r"(^|/)replica_\d+(/|$)", r"\1", graph.get_name_scope())
            key = (scope, kwargs.get("name") or "Variable")
            if replica[1] > 0:
                found = self._shared_vars.get(key)
                if found:
                    return found.pop(0)
                raise RuntimeError(f"Replica {replica[1]} created the variable "
                                   f"{key[1]!r} that replica 0 did not create.")
        collections = mirrored_collections(kwargs)
        aggregation = kwargs.get("aggregation")
        components = []
        for i, device in enumerate(self._devices):
            kw = dict(kwargs, collections=[])
            if i > 0 and components[0].dtype.is_integer and ":GPU:" in device:
                # an integer copy (the global step) stays in host memory, as TF keeps
                # integer GPU variables; OpenCL devices have no integer update kernels
                device = device.replace(device.rsplit("/", 1)[1], "device:CPU:0")
            with contextlib.ExitStack() as placed:
                if i > 0:  # a copy joins no colocation group of the primary's
                    placed.enter_context(graph.colocate_with(None, ignore_existing=True))
                placed.enter_context(graph.device(device))
                placed.enter_context(distribute_context.update_scope(None))
                if i > 0:
                    from flowgraph.ops.array_ops import identity

                    primary = components[0]
                    with graph.control_dependencies(None):
                        kw["initial_value"] = identity(primary.initial_value)
                    kw["name"] = f"{primary.op.name}/replica_{i}/"
                with contextlib.ExitStack() as stack:
                    if replica is not None:  # the copies are built in cross-replica terms
                        stack.enter_context(distribute_context.replica_scope(None, 0, None))
                    v = next_creator(**kw)
            for name in graph.get_all_collection_keys():
                ref = graph.get_collection_ref(name)
                if any(x is v for x in ref):
                    ref[:] = [x for x in ref if x is not v]
            components.append(v)
        kind = MirroredVariable
        if replica is not None and is_sync_on_read(kwargs):
            kind = SyncOnReadVariable
        mirrored = kind(components, aggregation)
        graph.add_to_collections(collections, mirrored)
        if key is not None and replica[1] == 0:
            self._shared_vars.setdefault(key, []).append(mirrored)
        return mirrored

    def colocate_vars_with(self, colocate_with_variable):
        return contextlib.nullcontext()

    def value_container(self, value):
        return value

    def variable_created_in_scope(self, v) -> bool:
        return isinstance(v, MirroredVariable)

    def read_var(self, var):
        return var._primary.value() if isinstance(var, MirroredVariable) else var

    # -- reductions ---------------------------------------------------------------------
    def _reduce(self, reduce_op, value):
        """One tensor on the first device: the replicas' values summed (or averaged)."""
        from flowgraph.ops.math_reduce import add_n

        op = base.ReduceOp(getattr(reduce_op, "value", reduce_op))
        values = value.values if isinstance(value, PerReplica) else (value,) * len(
            self._devices)
        graph = get_default_graph()
        with graph.device(self._devices[0]):
            total = values[0] if len(values) == 1 else add_n(list(values))
            if op is base.ReduceOp.MEAN and len(values) > 1:
                from flowgraph.ops import math_ops

                total = math_ops.truediv(total, float(len(values)))
        return total

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """`value`'s replicas reduced, as one value per destination device."""
        return self._broadcast(self._reduce(reduce_op, value))

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        """`reduce_to` for a list of ``(value, destinations)`` pairs, or a structure of
        per-replica values (what `all_reduce` passes)."""
        if isinstance(value_destination_pairs, list) and value_destination_pairs and all(
                isinstance(p, tuple) and len(p) == 2 for p in value_destination_pairs):
            return [self.reduce_to(reduce_op, v, d) for v, d in value_destination_pairs]
        return _map_structure(lambda v: self._broadcast(self._reduce(reduce_op, v)),
                              value_destination_pairs)

    def _broadcast(self, tensor):
        from flowgraph.ops.array_ops import identity

        if len(self._devices) == 1:
            return tensor
        graph = get_default_graph()
        copies = []
        for d in self._devices:
            with graph.device(d):
                copies.append(identity(tensor))
        return Mirrored(copies)

    def broadcast_to(self, tensor, destinations):
        return self._broadcast(tensor)

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """``fn(copy, *args_i)`` for each device's copy of `var`, on that device."""
        kwargs = kwargs or {}
        graph = get_default_graph()
        copies = var.components if isinstance(var, MirroredVariable) else (var,)
        outs = []
        for i, c in enumerate(copies):
            with graph.colocate_with(None, ignore_existing=True), \
                    graph.device(self._devices[i]), distribute_context.update_scope(i):
                outs.append(fn(c, *select_replica(i, args), **select_replica(i, kwargs)))
        if group:
            from flowgraph.ops.control_flow_ops import group as group_ops

            return group_ops(*outs)
        return outs[0] if len(outs) == 1 else Mirrored(outs)

    def non_slot_devices(self, var_list):
        return self._devices

    def update_non_slot(self, colocate_with, fn, args=(), kwargs=None, group=True):
        out = fn(*args, **(kwargs or {}))
        if group:
            from flowgraph.ops.control_flow_ops import group as group_ops

            return group_ops(out)
        return out

    # -- the optimizer's cross-replica step ----------------------------------------------
    def apply_gradients(self, optimizer, grads_and_vars, global_step, name):
        """Sum each variable's gradients over the replicas and apply the sum to every
        copy with `optimizer`'s update (TF1's ``Optimizer._distributed_apply``)."""
        graph = get_default_graph()
        reduced = []
        for g, v in grads_and_vars:
            if g is None:
                continue
            total = self._reduce(base.ReduceOp.SUM, g)
            reduced.append((total, v))
        var_list = [v for _, v in reduced]
        with graph.control_dependencies(None):
            optimizer._create_slots(var_list)
        optimizer._alias_mirrored_slots(var_list)
        per_device = []
        with graph.name_scope(name or optimizer.get_name()) as scope:
            optimizer._prepare()
            for i, device in enumerate(self._devices):
                ops = []
                for g, v in reduced:
                    if i > 0 and not isinstance(v, MirroredVariable):
                        continue  # stored once (CentralStorageStrategy): updated once
                    copy = v.components[i] if isinstance(v, MirroredVariable) else v
                    with graph.colocate_with(None, ignore_existing=True), \
                            graph.device(device), distribute_context.update_scope(i), \
                            graph.name_scope("update_" + copy.op.name.replace("/", "_")):
                        from flowgraph.ops.array_ops import identity

                        ops.append(optimizer._update_op(identity(g), copy))
                per_device.append(ops)
            all_updates = [op for ops in per_device for op in ops]
            if global_step is None:
                finish = optimizer._finish(all_updates, scope)
                out = [finish] * len(self._devices)
            else:
                with graph.control_dependencies([optimizer._finish(all_updates, "update")]):
                    step = global_step.assign_add(1, name=scope, read_value=False)
                out = [step] * len(self._devices)
        train_ops = graph.get_collection_ref("train_op")
        if out[0] not in train_ops:
            train_ops.append(out[0])
        return Mirrored(out) if len(out) > 1 else out[0]


def _map_structure(fn, structure):
    if isinstance(structure, PerReplica):
        return fn(structure)
    if isinstance(structure, dict):
        return {k: _map_structure(fn, v) for k, v in structure.items()}
    if isinstance(structure, list | tuple):
        return type(structure)(_map_structure(fn, v) for v in structure)
    return fn(structure)


class MirroredStrategy(base.Strategy):
    """Synchronous training on the local devices: a replica per device, a copy of each
    variable per device, gradients summed over the replicas (all-reduce) before every
    copy applies them. `devices` default: every GPU, else the CPU. With one device the
    graph computes exactly what the same program computes without a strategy.

    Example
    -------
    >>> import flowgraph as tf
    >>> strategy = tf.distribute.MirroredStrategy()
    >>> strategy.num_replicas_in_sync, strategy.extended.worker_devices
    (1, ('/replica:0/task:0/device:CPU:0',))
    """

    def __init__(self, devices=None, cross_device_ops=None) -> None:
        super().__init__(None)
        if devices is None:
            devices = default_devices()
        elif isinstance(devices, str):
            devices = [devices]
        devices = tuple(_canonical_device(d) for d in devices)
        if not devices:
            raise ValueError("Got an empty `devices` list and unable to recognize any "
                             "local devices.")
        if len(set(devices)) != len(devices):
            raise ValueError(f"No duplicates allowed in `devices` argument: {devices}")
        logging.getLogger("tensorflow").info("Using MirroredStrategy with devices %s",
                                            devices)
        self._extended = MirroredExtended(self, devices)
        self._cross_device_ops = cross_device_ops
        self._scale_loss_for_estimator = False

    num_replicas_in_sync = property(lambda self: len(self._extended._devices))

    @contextlib.contextmanager
    def scope(self):
        """Make this the current strategy: variables created in it are mirrored."""
        if distribute_context.current_strategy() is self:  # already in this scope
            yield self
            return
        stack = get_default_graph().__dict__.setdefault("_variable_creator_stack", [])

        def creator(next_creator, **kwargs):
            return self._extended._create_variable(next_creator, **kwargs)

        distribute_context.push_strategy(self)
        stack.append(creator)
        try:
            yield self
        finally:
            stack.remove(creator)
            distribute_context.pop_strategy()

    @contextlib.contextmanager
    def _scale_loss_for_estimator_enabled(self):
        saved, self._scale_loss_for_estimator = self._scale_loss_for_estimator, True
        try:
            yield
        finally:
            self._scale_loss_for_estimator = saved

    def run(self, fn, args=(), kwargs=None, options=None):
        """`fn` built once per replica; per-replica arguments give each its part."""
        with self.scope():
            return self._extended.call_for_each_replica(fn, args, kwargs)

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        """`value` (per replica) reduced over the replicas, then over `axis` if given;
        a MEAN over `axis` divides by the total number of elements reduced."""
        from flowgraph.ops import array_ops, math_ops, math_reduce

        op = base.ReduceOp(getattr(reduce_op, "value", reduce_op))
        if axis is None:
            if not isinstance(value, PerReplica):
                if op is base.ReduceOp.SUM and self.num_replicas_in_sync > 1:
                    raise ValueError(f"A non-DistributedValues value {value} cannot be "
                                     f"reduced with the given reduce op {op}.")
                return value
            from flowgraph.ops.array_ops import identity

            return identity(self._extended._reduce(op, value))
        values = self.experimental_local_results(value)
        sums = [math_reduce.reduce_sum(v, axis=axis) for v in values]
        total = sums[0] if len(sums) == 1 else math_reduce.add_n(sums)
        if op is base.ReduceOp.SUM:
            return total
        counts = []
        for v in values:
            shape = array_ops.shape(v)
            dims = math_reduce.reduce_prod(array_ops.gather(shape, axis))
            counts.append(math_ops.cast(dims, total.dtype))
        count = counts[0] if len(counts) == 1 else math_reduce.add_n(counts)
        return math_ops.truediv(total, count)

    def experimental_run(self, fn, input_iterator=None):
        """TF1's V1 API: `fn` per replica on the next element of `input_iterator`."""
        args = () if input_iterator is None else (input_iterator.get_next(),)
        return self.run(fn, args=args)

    def unwrap(self, value) -> tuple:
        """TF1's name of `experimental_local_results`."""
        return self.experimental_local_results(value)

    def experimental_local_results(self, value) -> tuple:
        if isinstance(value, PerReplica):
            return value.values
        if isinstance(value, MirroredVariable):
            return value.components
        return (value,)

    def group(self, value, name=None):
        from flowgraph.ops.control_flow_ops import group, no_op

        flat = []

        def walk(v):
            if isinstance(v, PerReplica):
                for x in v.values:
                    walk(x)
            elif isinstance(v, list | tuple):
                for x in v:
                    walk(x)
            elif isinstance(v, dict):
                for x in v.values():
                    walk(x)
            elif v is not None:
                flat.append(v)

        walk(value)
        unique = []
        for v in flat:
            if all(v is not u for u in unique):
                unique.append(v)
        if not unique:
            return no_op(name=name)
        return group(*unique, name=name)

    # -- input ----------------------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        from flowgraph.strategies.input import DistributedDataset

        return DistributedDataset(dataset, self)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        from flowgraph.strategies.input import DistributedDatasetsFromFunction

        return DistributedDatasetsFromFunction(dataset_fn, self)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def make_dataset_iterator(self, dataset):
        return self.experimental_distribute_dataset(dataset).make_initializable_iterator()

    def make_input_fn_iterator(self, input_fn,
                               replication_mode=base.InputReplicationMode.PER_WORKER):
        return self.distribute_datasets_from_function(input_fn).make_initializable_iterator()

    def experimental_make_numpy_dataset(self, numpy_input, session=None):
        from flowgraph.data import Dataset

        return Dataset.from_tensor_slices(numpy_input)

    def update_config_proto(self, config_proto):
        return config_proto

    def configure(self, session_config=None, cluster_spec=None, task_type=None,
                  task_id=None):
        return None
