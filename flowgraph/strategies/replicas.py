"""The replicas of `MirroredStrategy.call_for_each_replica`: one thread per replica,
run in lock-step with the caller (see `flowgraph/strategies/mirrored.py`), and the
replica context their functions see.
"""

from __future__ import annotations

import threading

from flowgraph.framework import distribute_context
from flowgraph.framework.graph import get_default_graph
from flowgraph.strategies import base

__all__ = ["MirroredReplicaContext", "ReplicaThread"]


class MirroredReplicaContext(base.ReplicaContext):
    """The context of one replica of a `MirroredStrategy`."""

    def __init__(self, strategy, replica_id: int, thread) -> None:
        super().__init__(strategy, replica_id)
        self._thread = thread

    @property
    def replica_id_in_sync_group(self):
        from flowgraph.framework.constant_op import constant

        graph = get_default_graph()
        with graph.device(self._strategy.extended.worker_devices[self._replica_id]):
            return constant(self._replica_id, name="replica_id_in_sync_group")

    @property
    def devices(self):
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Pause this replica until every replica reaches its merge_call; then
        ``merge_fn(strategy, *regrouped args)`` runs once, in cross-replica context,
        and each replica continues with its part of the result."""
        return self._thread.merge(merge_fn, args, kwargs or {})

    def all_reduce(self, reduce_op, value, options=None):
        """`value` reduced over the replicas (SUM or MEAN), on every replica."""
        op = base.ReduceOp(getattr(reduce_op, "value", reduce_op))

        def merge(strategy, per_replica):
            return strategy.extended.batch_reduce_to(op, per_replica)

        from flowgraph.ops.gradient_compat import identity_n
        from flowgraph.strategies.input import flatten, pack

        reduced = self.merge_call(merge, args=(value,))
        flat = flatten(reduced)
        return pack(reduced, identity_n(flat)) if flat else reduced  # TF's IdentityN

    def all_gather(self, value, axis, options=None):
        """The replicas' values concatenated along `axis`, on every replica."""
        def merge(strategy, per_replica):
            from flowgraph.ops.array_ops import concat

            values = strategy.experimental_local_results(per_replica)
            with get_default_graph().device(strategy.extended.worker_devices[0]):
                return concat(list(values), axis)

        return self.merge_call(merge, args=(value,))


class ReplicaThread(threading.Thread):
    """Builds one replica's part of `call_for_each_replica`, in lock-step with the
    caller: it runs only between `should_run` and `has_paused`."""

    def __init__(self, strategy, index, fn, args, kwargs, caller) -> None:
        super().__init__(name=f"replica_{index}", daemon=True)
        self.strategy, self.index = strategy, index
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.caller = caller
        self.should_run, self.has_paused = threading.Event(), threading.Event()
        self.done, self.result, self.error = False, None, None
        self.merge_request = None
        self.merge_result = None
        self.name_scope_at_merge = ""
        self.var_scope_at_merge = None

    def run(self) -> None:
        self.should_run.wait()
        self.should_run.clear()
        graph, scope, var_scope = self.caller
        devices = self.strategy.extended.worker_devices
        try:
            from flowgraph.ops.variable_scope import variable_scope

            ctx = MirroredReplicaContext(self.strategy, self.index, self)
            replica_scope = scope + (f"replica_{self.index}/" if self.index else "")
            with graph.as_default(), graph.name_scope(replica_scope or None), \
                    variable_scope(var_scope, reuse=True if self.index else None), \
                    graph.device(devices[self.index]), \
                    distribute_context.replica_scope(self.strategy, self.index, ctx):
                self.result = self.fn(*self.args, **self.kwargs)
        except BaseException as e:  # re-raised by the caller
            self.error = e
        self.done = True
        self.has_paused.set()

    def merge(self, merge_fn, args, kwargs):
        from flowgraph.ops.variable_scope import get_variable_scope

        self.merge_request = (merge_fn, args, kwargs)
        self.name_scope_at_merge = get_default_graph().get_name_scope()
        self.var_scope_at_merge = get_variable_scope()
        self.has_paused.set()
        self.should_run.wait()
        self.should_run.clear()
        result, self.merge_result = self.merge_result, None
        return result
