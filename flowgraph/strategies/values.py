"""Values of a multi-replica strategy: `PerReplica` (one value per replica), `Mirrored`
(one equal value per device) and `MirroredVariable` (one variable per device).

A `MirroredVariable` *is* a `tf.Variable` to the rest of flowgraph: it stands in the
collections, the Saver saves it under its plain name from its first copy (the
*primary*), its initializer initializes every copy. Which copy a read means depends on
the thread building the graph (`flowgraph.framework.distribute_context.replica_index`):
replica *i* reads copy *i*, cross-replica code reads the primary, and an update for
device *i* reads and writes copy *i*. The copies stay equal because every update is
applied to each with the same all-reduced value.

::

    w (primary, CPU:0)   w/replica_1 (CPU:1)
       ^ replica 0 reads    ^ replica 1 reads
       '--- assign in cross-replica context writes both ---'
"""

from __future__ import annotations

from flowgraph.framework import distribute_context
from flowgraph.framework.graph import GraphKeys
from flowgraph.ops.variables import Variable

__all__ = ["Mirrored", "MirroredVariable", "PerReplica", "SyncOnReadVariable", "regroup",
           "select_replica"]


class PerReplica:
    """One value per replica (e.g. what each replica's function returned)."""

    def __init__(self, values) -> None:
        self._values = tuple(values)

    values = property(lambda self: self._values)

    def __repr__(self) -> str:
        inner = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{type(self).__name__}:{{\n{inner}\n}}"


class Mirrored(PerReplica):
    """One value per device, equal on all of them (an all-reduce's result)."""


def regroup(per_replica: list):
    """Merge the replicas' structures into one: equal leaves stay as they are,
    differing leaves become `PerReplica`; lists, tuples (named ones too) and dicts are
    walked."""
    first = per_replica[0]
    if isinstance(first, dict):
        return {k: regroup([d[k] for d in per_replica]) for k in first}
    if isinstance(first, list | tuple) and not isinstance(first, PerReplica):
        items = [regroup([s[i] for s in per_replica]) for i in range(len(first))]
        if hasattr(first, "_fields"):
            return type(first)(*items)
        return type(first)(items)
    if all(v is first for v in per_replica):
        return first
    return PerReplica(per_replica)


def select_replica(index: int, structure):
    """Replica `index`'s part of `structure` (PerReplica leaves give their value)."""
    if isinstance(structure, PerReplica):
        return structure.values[index]
    if isinstance(structure, dict):
        return {k: select_replica(index, v) for k, v in structure.items()}
    if isinstance(structure, list | tuple):
        items = [select_replica(index, v) for v in structure]
        if hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items)
    if isinstance(structure, MirroredVariable):
        return structure.components[index]
    return structure


class MirroredVariable(Variable):
    """A variable with one copy per device of its strategy (see the module's essay).

    Example
    -------
    >>> import flowgraph as tf
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    >>> with tf.Graph().as_default(), strategy.scope():
    ...     v = tf.Variable(1.0, name="v")
    ...     print(type(v).__name__, v.name, [c.name for c in v.components])
    MirroredVariable v:0 ['v:0']
    """

    def __init__(self, components, aggregation=None) -> None:
        primary = components[0]
        self._components = tuple(components)
        self._primary = primary
        self._aggregation = aggregation
        self._trainable = primary.trainable
        self._constraint = primary.constraint
        self._caching_device = None
        self._save_slice_info = None
        if len(components) == 1:
            self._initializer_op = primary.initializer
        else:
            from flowgraph.ops.control_flow_ops import group

            graph = primary.graph
            with graph.as_default(), graph.control_dependencies(None), \
                    graph.name_scope(primary.op.name + "/"):
                self._initializer_op = group(*[c.initializer for c in components],
                                             name="initializer")
            # A Saver restores the primary; it restores the copies from the same value.
            saved_as = (primary._as_graph_element() if hasattr(primary, "handle")
                        else primary._ref())
            graph.__dict__.setdefault("_mirrored_restores", {})[saved_as] = list(
                components[1:])

    components = property(lambda self: self._components)
    primary = property(lambda self: self._primary)
    aggregation = property(lambda self: self._aggregation)

    def _current(self):
        index = distribute_context.replica_index()
        return self._primary if index is None else self._components[index]

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_components", "_primary"):
            raise AttributeError(name)
        return getattr(self._current(), name)

    # -- graph elements: the copy of the replica (or update) building the graph ---------
    def _as_graph_element(self):
        return self._current()._as_graph_element()

    def _ref(self):
        return self._current()._ref()

    def value(self):
        return self._current().value()

    def read_value(self):
        return self._current().read_value()

    @property
    def handle(self):
        return self._current().handle

    @property
    def _variable(self):
        return self._current()._variable

    @property
    def _snapshot(self):
        return self._current()._snapshot

    @property
    def _initial_value(self):
        return self._primary.initial_value

    # -- identity: the primary's ------------------------------------------------------
    name = property(lambda self: self._primary.name)
    op = property(lambda self: self._primary.op)
    graph = property(lambda self: self._primary.graph)
    device = property(lambda self: self._primary.device)
    dtype = property(lambda self: self._primary.dtype)
    shape = property(lambda self: self._primary.shape)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._primary.initial_value)

    def get_shape(self):
        return self._primary.shape

    def eval(self, session=None):
        return self._current().eval(session=session)

    def __repr__(self) -> str:
        return (f"<MirroredVariable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name} copies={len(self._components)}>")

    __hash__ = Variable.__hash__

    # -- updates ------------------------------------------------------------------------
    def _update(self, method: str, value, use_locking=False, name=None, read_value=True):
        if distribute_context.replica_index() is not None and \
                distribute_context.update_index() is None:
            return self._update_in_replica(method, value, use_locking, name, read_value)
        if distribute_context.update_index() is not None:
            return getattr(self._current(), method)(value, use_locking=use_locking,
                                                    name=name, read_value=read_value)
        return self._update_all(method, value, use_locking, name, read_value)

    def _update_all(self, method, value, use_locking, name, read_value):
        """Cross-replica: the same update on every copy; the primary's result last."""
        from flowgraph.framework.constant_op import convert_to_tensor

        graph = self._primary.graph
        if len(self._components) > 1 and not isinstance(value, PerReplica):
            value = convert_to_tensor(value, dtype=self.dtype.base_dtype)
        others = []
        for i, c in enumerate(self._components[1:], start=1):
            v = value.values[i] if isinstance(value, PerReplica) else value
            with graph.colocate_with(None, ignore_existing=True), graph.device(c.device), \
                    distribute_context.update_scope(i):
                others.append(getattr(c, method)(v, use_locking=use_locking,
                                                 read_value=False))
        v0 = value.values[0] if isinstance(value, PerReplica) else value
        with graph.control_dependencies(others), distribute_context.update_scope(0):
            return getattr(self._primary, method)(v0, use_locking=use_locking, name=name,
                                                  read_value=read_value)

    def _update_in_replica(self, method, value, use_locking, name, read_value):
        ctx = distribute_context.current_replica()[2]
        aggregation = self._aggregation
        agg = getattr(aggregation, "name", aggregation)
        if agg in (None, "NONE") and len(self._components) > 1:
            raise ValueError(
                "You must specify an aggregation method to update a MirroredVariable in "
                "Replica Context. You can do so by passing an explicit value for argument "
                "`aggregation` to tf.Variable(..).e.g. `tf.Variable(..., "
                "aggregation=tf.VariableAggregation.SUM)`.`tf.VariableAggregation` lists "
                "the possible aggregation methods.This is required because "
                "MirroredVariable should always be kept in sync. When updating them or "
                "assigning to them in a replica context, we automatically try to aggregate "
                "the values before updating the variable. For this aggregation, we need to "
                "know the aggregation method. Another alternative is to not try to update "
                "such MirroredVariable in replica context, but in cross replica context. "
                "You can enter cross replica context by calling "
                "`tf.distribute.get_replica_context().merge_call(merge_fn, ..)`.Inside "
                "`merge_fn`, you can then update the MirroredVariable using "
                "`tf.distribute.StrategyExtended.update()`.")

        def merge(strategy, per_replica_value):
            if agg in (None, "NONE", "ONLY_FIRST_REPLICA"):
                reduced = per_replica_value.values[0] if isinstance(
                    per_replica_value, PerReplica) else per_replica_value
            else:
                reduced = strategy.extended._reduce(agg, per_replica_value)
            out = self._update_all(method, reduced, use_locking, name, read_value)
            return out

        return ctx.merge_call(merge, args=(value,))

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._update("assign", value, use_locking, name, read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._update("assign_add", delta, use_locking, name, read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._update("assign_sub", delta, use_locking, name, read_value)


def mirrored_collections(kwargs) -> list:
    """The collections a new mirrored variable joins (TF's defaults)."""
    collections = kwargs.get("collections")
    collections = list(collections) if collections is not None else [
        GraphKeys.GLOBAL_VARIABLES]
    trainable = kwargs.get("trainable")
    if (trainable is None or trainable) and GraphKeys.TRAINABLE_VARIABLES not in collections:
        collections.append(GraphKeys.TRAINABLE_VARIABLES)
    return collections


class SyncOnReadVariable(MirroredVariable):
    """A variable each replica updates on its own copy (a streaming metric's total and
    count); reading it outside an update combines the copies by its aggregation (SUM:
    their sum), on the first device. Assigning in cross-replica context gives each copy
    its share (SUM: the value over the number of copies), so the read gives the value.
    """

    def _combined(self):
        from flowgraph.ops import math_ops
        from flowgraph.ops.math_reduce import add_n

        index = distribute_context.update_index()
        if index is not None or len(self._components) == 1:
            return self._current().value()
        agg = getattr(self._aggregation, "name", self._aggregation) or "SUM"
        if agg == "ONLY_FIRST_REPLICA":
            return self._primary.value()
        graph = self._primary.graph
        with graph.device(self._primary.device):
            total = add_n([c.value() for c in self._components])
            if agg == "MEAN":
                total = math_ops.truediv(total, float(len(self._components)))
        return total

    def value(self):
        return self._combined()

    def read_value(self):
        return self._combined()

    def _as_graph_element(self):
        if distribute_context.replica_index() is None and len(self._components) > 1:
            return self._combined()
        return self._current()._as_graph_element()

    def eval(self, session=None):
        return self._combined().eval(session=session)

    def _update(self, method: str, value, use_locking=False, name=None, read_value=True):
        if distribute_context.replica_index() is not None:
            return getattr(self._current(), method)(value, use_locking=use_locking,
                                                    name=name, read_value=read_value)
        agg = getattr(self._aggregation, "name", self._aggregation) or "SUM"
        if agg == "SUM" and method == "assign" and len(self._components) > 1:
            from flowgraph.framework.constant_op import convert_to_tensor
            from flowgraph.ops import math_ops

            value = convert_to_tensor(value, dtype=self.dtype.base_dtype)
            value = math_ops.truediv(value, math_ops.cast(len(self._components),
                                                          value.dtype))
        return self._update_all(method, value, use_locking, name, read_value)


def is_sync_on_read(kwargs) -> bool:
    sync = kwargs.get("synchronization")
    if getattr(sync, "name", sync) == "ON_READ":
        return True
    return GraphKeys.METRIC_VARIABLES in (kwargs.get("collections") or ())
