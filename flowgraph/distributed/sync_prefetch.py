"""A synchronous worker's step in one call to its ps: the variables come with the token.

A `tf.train.SyncReplicasOptimizer` worker step (`flowgraph.distributed.sync_replicas`)
plans as three stages: R reads the variables on the ps, W computes the gradients on the
worker, A pushes them on the ps and waits there for the token that lets the worker take
its next step. `flowgraph.distributed.prefetch` already lets A's call run R after A and
bring its values back for the next step, but it accepts them only when the ps saw no
write since the read: with two workers, the other worker's push (a write) is always in
flight, so every step would read the ordinary way, and the read after A would be wasted.

For a synchronous push the token says more than a write epoch could: the worker takes
it only after the aggregation that issued it (its update, the accumulators zeroed, the
global step raised) is done, and until the worker pushes again, the model variables
change only through a later aggregation, which makes the worker's next gradient stale
(its local step, the token, is then older than the global step), so the ps drops it
whatever values it was computed from. The values R reads right after the token are thus
the values the next step needs: `SyncPrefetch` keeps them without an epoch, and the next
step runs W from them and sends A with no ``expect_epoch`` (never answered "stale").
A step costs one call to the ps instead of two.

Invariant: a step uses the values of the previous step's call of the same plan in the same
session, read after that call's token was taken; none after a failed step (`drop`).
A write to the model variables by anything other than the aggregations, between a
worker's token and its next push, reaches that worker one step later (TensorFlow's worker
would read it if it came before the step began; such a write races with synchronous
training in both).

`sync_aware` picks it: for a plan whose apply stage takes a token (an op of the graph
collection `TOKEN_WAITS`, which the optimizer fills), the `Prefetch` that
`flowgraph.distributed.prefetch.plan_prefetch` found becomes a `SyncPrefetch`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.distributed.master import delegate, plan_run, relay_through_master
>>> from flowgraph.distributed.prefetch import plan_prefetch
>>> cluster = {"ps": ["h:1"], "worker": ["h:2"]}
>>> worker = "/job:worker/replica:0/task:0"
>>> with tf.Graph().as_default() as g:
...     with tf.device(tf.train.replica_device_setter(
...             cluster=cluster, worker_device="/job:worker/task:0")):
...         step = tf.train.get_or_create_global_step()
...         w = tf.Variable(1.0, name="w")
...         x = tf.placeholder(tf.float32, [])
...         opt = tf.train.SyncReplicasOptimizer(
...             tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1)
...         train = opt.minimize(tf.square(w * x), global_step=step)
>>> plan = plan_run(g, [], [train.op], {x: 1}, worker, cluster)
>>> _ = relay_through_master(plan, [worker]), delegate(plan, [worker])
>>> type(sync_aware(plan_prefetch(plan, [worker]))).__name__
'SyncPrefetch'
"""

from __future__ import annotations

from flowgraph.distributed.prefetch import Prefetch

__all__ = ["TOKEN_WAITS", "SyncPrefetch", "sync_aware"]

# The graph collection of the ops with which a synchronous worker takes its token.
TOKEN_WAITS = "sync_replicas_token_waits"


class SyncPrefetch(Prefetch):
    """A `Prefetch` whose values, read after a token, hold without a write epoch."""

    def take(self) -> tuple[dict | None, None]:
        """The values the last call read (once), and no epoch: the apply call runs
        unconditionally."""
        with self._lock:
            values, self._values = self._values, None
        return values, None

    def wants_values(self) -> bool:
        return True

    def applied(self, stale: bool) -> None:
        """Nothing to back off from: an apply call without an epoch is never stale."""

    def keep(self, reply: dict, values: dict) -> None:
        """Keep R's values from the apply call's reply (read after its token)."""
        with self._lock:
            self._values = {key: values[key] for key in self.keys}
            self._epoch = None


def _takes_token(stage) -> bool:
    if not stage.ops:
        return False
    waits = stage.ops[0].graph.get_collection(TOKEN_WAITS)
    return bool(waits) and any(op in waits for op in stage.ops)


def sync_aware(prefetch: Prefetch | None) -> Prefetch | None:
    """`prefetch` as a `SyncPrefetch` when its apply stage takes a synchronous token
    (see the module docstring); otherwise unchanged (None stays None)."""
    if prefetch is None or type(prefetch) is not Prefetch or not _takes_token(prefetch.apply):
        return prefetch
    return SyncPrefetch(prefetch.worker, prefetch.read, prefetch.apply)
