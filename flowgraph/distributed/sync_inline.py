"""The synchronous push that aggregates: a `SyncReplicasOptimizer` step with no chief loop.

When the model variables, their accumulators, the global step and the worker's local
step all live on one task (one ps, or one process), a worker's push does everything the
chief's aggregation op would, under a lock held only by pushes (`inline_push`):

    take the counter           (a one-element queue: the lock, holding the fresh count)
    push = SyncReplicasPush(count, push id, lock state, global step, local step,
                            accumulators, gradients)
        lock state = [push id, count]              (who holds the lock: see below)
        fresh = local step >= global step          (read under the lock: exact)
        total = count + fresh
        total < replicas_to_aggregate: accumulators += gradients if fresh
                                       outputs the count `total`, the rest dead
        else (this push is the last one):          outputs the means, the count dead
    the aggregation branch, dead unless the push outputs the means:
        apply the means with the wrapped optimizer (global step + 1), the variable
        averages; SyncReplicasFinish: zero the accumulators, the tokens; issue them;
        restart the count at 0
    put the counter back (Merge: the live count)
    wait for a token; local step = token

`SyncReplicasPush` (`flowgraph/ops/sync_replicas_ops.py`) is one kernel call for the
check, the count, the additions and the means; its untaken outputs are dead, as a
`Switch`'s. The aggregation branch is an `AggregationBranch`: every op built in it
reads the means or another op of the branch, or gets a control input from the pivot
(an `Identity` of the push's flag), so on a push that does not aggregate the whole
branch is dead without a `Switch` per tensor it reads (with the two `tf.cond`s this
replaced, the push stage of a 3-layer MLP had 133 ops on the ps, 35 of them switches;
now 32). The values are bitwise the same (`tests/ops/test_sync_replicas_ops.py`).

State and invariants: the counter queue holds exactly one element while no push is
between its take and its put; so pushes, and the staleness check, the addition and the
aggregation within each, are serialized, and a gradient found fresh is added to the
aggregation it was found fresh for (the chief loop's design cannot promise that with
backup workers). The last push aggregates in its own run: the step costs no call of the
chief's, and no thread hand-off on the ps between the last gradient and the tokens.
The last push adds its gradients to the mean without storing them first, so until its
aggregation succeeds the accumulators hold the sum of exactly `count` gradients. The
accumulators are updated and zeroed in place (they are written by nothing else).

The element is put once per ps incarnation: the chief's `counter_init_op` puts it unless
a flag variable beside it is initialized, and sets the flag (it zeroes the accumulators
first: restored from a checkpoint, they may hold a partial sum). The flag belongs to no
collection, so no initializer, checkpoint or readiness check sees it: a restarted chief
(the ps kept its state) puts no second element, a restarted ps (flag and queue new) gets
one, checkpoint or not.

A push that fails between take and put (an error in the wrapped optimizer, a deadline
expiring inside the aggregation) would lose the element, and every later push would
wait on ``take_counter`` until its deadline. So each push writes who took the element,
and the count it took, into a lock-state variable right after taking it: the push's id
is a ``PlaceholderWithDefault`` (`PUSH_ID`, 0 when not fed, read only by the push op)
that the ps's task feeds with an id of its own per stage run
(`flowgraph.distributed.worker`). When a run fails,
the task looks at the lock (`CounterLock.restore`): an empty counter queue whose state
names the failed run means that run held the element, and the task puts it back with
the count it took. Nothing else was written by a failed aggregation before the wrapped
optimizer's update (accumulators, tokens and counts are written after it), so the next
push finds the state as it was before the failed one and, if it is the last, aggregates.
A push that fails after its addition but before its put (a cancellation in between)
leaves its gradient in the sum uncounted. Sessions of a single process have no task to
do this: their failed push still loses the element (the next push's deadline names
``take_counter``).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     w = tf.Variable(1.0)
...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5),
...                                          replicas_to_aggregate=1)
...     train = opt.minimize(tf.square(w), global_step=step)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         _ = sess.run(opt.local_step_init_op)
...         sess.run(opt.get_init_tokens_op(1))  # with the counter
...         _ = sess.run(train)  # the only gradient needed: aggregated in this run
...         final_w, final_step = sess.run([w, step])
>>> print(final_w, int(final_step))
0.0 1
"""

from __future__ import annotations

import re

import numpy as np

from flowgraph.distributed.sync_prefetch import TOKEN_WAITS
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.graph import Graph
from flowgraph.ops import state_ops
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_ops import placeholder, placeholder_with_default
from flowgraph.ops.array_shape_ops import zeros
from flowgraph.ops.control_flow_cond import ControlFlowContext, cond, merge
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.data_flow_ops import FIFOQueue
from flowgraph.ops.sync_replicas_ops import sync_replicas_finish, sync_replicas_push
from flowgraph.ops.variables import Variable
from flowgraph.runtime.session import Session

__all__ = ["PUSH_ID", "AggregationBranch", "CounterLock", "add_if_fresh", "inline_push"]

PUSH_ID = "sync_push_id"  # the op a task feeds with its id of a push's stage run


def add_if_fresh(graph, fresh, grads, accumulators):
    """Add the gradients to the accumulators only if `fresh`, in a `cond` on their task
    (nothing computed for a stale one); returns how many fresh gradients it added (0 or
    1, int32), once the additions are done."""

    def accumulate():
        adds = []
        for grad, acc in zip(grads, accumulators):
            with graph.colocate_with(acc.op):
                adds.append(state_ops.assign_add(acc, grad, use_locking=True))
        with graph.control_dependencies(adds):
            return constant(1, _dtypes.int32)

    with graph.device(accumulators[0].device):
        return cond(fresh, accumulate, lambda: constant(0, _dtypes.int32),
                    name="accumulate_if_fresh")


def inline_push(opt, pairs, grads, accumulators, tokens):
    """The worker's train op for `opt` (a `SyncReplicasOptimizer` whose state lives on
    one task) and the chief's op putting the counter: ``(train_op, counter_init_op)``."""
    graph, step = opt._global_step.graph, opt._global_step
    local = opt._local_step
    with graph.device(step.device), graph.colocate_with(step.op):
        counter = FIFOQueue(-1, [_dtypes.int32], shapes=[[]],
                            shared_name=f"{opt._name}_counter_q", name="sync_counter_q")
        with graph.control_dependencies(None):
            made = Variable(False, trainable=False, collections=[],
                            name="sync_counter_made")
            lock = Variable(zeros([2], _dtypes.int64), trainable=False, collections=[],
                            name="sync_lock_state")
        counter_init_op = cond(state_ops.is_variable_initialized(made), no_op,
                               lambda: _put_first(graph, counter, made, accumulators),
                               name="put_first_counter")
        count = counter.dequeue(name="take_counter")
        push_id = placeholder_with_default(constant(0, _dtypes.int64), [], name=PUSH_ID)
        push = sync_replicas_push(count, push_id, lock, step, local, accumulators, grads,
                                  opt._replicas_to_aggregate, name="push")
        pivot = identity(push.aggregating, name="aggregating")
        branch = AggregationBranch(graph, pivot.op, [push.aggregating.op])
        restart = branch.build(lambda: _aggregate(opt, pairs, push.means, accumulators,
                                                  tokens))
        left, _ = merge([restart, push.count], name="count_left")
        put = counter.enqueue([left], name="put_counter")
        with graph.control_dependencies([put]):
            token = tokens.dequeue(name="wait_for_token")
    graph.add_to_collection(TOKEN_WAITS, token.op)
    return state_ops.assign(local, token, name="train_op"), counter_init_op


class AggregationBranch(ControlFlowContext):
    """The ops that run only on the push that aggregates: those built by `build`, gated
    by the push's dead-or-live outputs instead of by `Switch` ops.

    Every op built inside reads the push's means, another op built inside, or gets a
    control input from `pivot` (live only when the push aggregates); deadness follows
    data and control edges, so on any other push the whole branch is dead without a
    `Switch` per tensor it reads from outside (a `tf.cond` would add one per gradient,
    variable and slot). Variables created inside (slots, moving averages) are lifted out
    as a `tf.cond` lifts them."""

    def __init__(self, graph, pivot, inside) -> None:
        super().__init__(graph, "sync_aggregation")
        self.pivot = pivot
        self.inside.update([pivot, *inside])

    def gate(self, t):
        return t  # a reader built inside is dead with the branch (see the class docstring)

    def control_pivot(self):
        return self.pivot

    def build(self, fn):
        """Call `fn` with the branch open; returns its result."""
        result, new_ops = self.capture(fn)
        self.inside.update(new_ops)
        self.ops.extend(new_ops)
        for op in new_ops:
            if getattr(op, "_control_flow_context", None) is None:
                op._control_flow_context = self
            if not any(t.op in self.inside for t in op._inputs) and \
                    not any(c in self.inside for c in op._control_inputs):
                op._add_control_input(self.pivot)
        return result


class CounterLock:
    """The counter of one optimizer's pushes in a stage graph a task imported, and how
    to put it back after a push that held it failed (see the module docstring).

    `find` returns one per `PUSH_ID` op of the graph (none for graphs without pushes).
    """

    __slots__ = ("_putter", "container", "push_id", "queue_name", "state")

    def __init__(self, push_id_op) -> None:
        self.push_id = push_id_op.outputs[0]
        (push,) = self.push_id.consumers()
        if push.type != "SyncReplicasPush":
            raise ValueError(f"{push_id_op.name} feeds {push.type}, not a push")
        self.state = push.inputs[2]  # the lock-state variable: [push id, count]
        take = push.inputs[0].op
        queue_op = take.inputs[0].op
        self.queue_name = queue_op.attrs.get("shared_name") or queue_op.name
        self.container = queue_op.attrs.get("container") or ""
        self._putter = None  # (session, count placeholder, enqueue op), made on first use

    @staticmethod
    def find(graph) -> list:
        found = []
        for op in graph.get_operations():
            if op.type == "PlaceholderWithDefault" and re.fullmatch(
                    rf"{PUSH_ID}(_\d+)?", op.name.rsplit("/", 1)[-1]):
                try:
                    found.append(CounterLock(op))
                except (ValueError, IndexError, AttributeError):
                    continue  # an op of that name that is not a push's (a user's own)
        return found

    def restore(self, session, resources, run_id: int) -> bool:
        """Put the counter back if the stage run `run_id` (its `PUSH_ID`) failed while
        holding it: the queue (in `resources`, the task's resource manager) is empty and
        the lock state names that run. `session` runs the stage graph (and names the
        task's resources). Returns whether it put the counter back."""
        queue = resources.lookup(self.container, self.queue_name)
        if queue is None or queue.size() != 0:
            return False
        holder, count = (int(v) for v in session.run(self.state))
        if holder != run_id or queue.size() != 0:
            return False
        if self._putter is None:
            # (the stage's own put waits on the push's additions: a graph of its own)
            graph = Graph()
            with graph.as_default():
                counter = FIFOQueue(-1, [_dtypes.int32], shapes=[[]],
                                    shared_name=self.queue_name, name="counter")
                value = placeholder(_dtypes.int32, [], name="count")
                put = counter.enqueue([value])
            self._putter = (Session(session.sess_str, graph=graph), value, put)
        putter, value, put = self._putter
        putter.run(put, {value: np.int32(count)})
        return True

    def close(self) -> None:
        if self._putter is not None:
            self._putter[0].close()
            self._putter = None


def _put_first(graph, counter, made, accumulators):
    """Zero the accumulators (a checkpoint may have saved a partial sum), then put the
    counter at 0 and set the flag."""
    resets = []
    for acc in accumulators:  # (also their initialization: they are in no collection)
        with graph.colocate_with(acc.op):  # built here, so that the cond gates it
            resets.append(state_ops.assign(acc, zeros(acc.shape, acc.dtype.base_dtype)))
    with graph.control_dependencies(resets):
        put = counter.enqueue([constant(0, _dtypes.int32)])
    with graph.control_dependencies([put]):
        return state_ops.assign(made, True).op


def _aggregate(opt, pairs, means, accumulators, tokens):
    """The aggregating push's branch: the means applied with the wrapped optimizer (and
    the variable averages), then the accumulators zeroed and the tokens issued; returns
    the count the counter restarts from (0)."""
    graph, step = opt._global_step.graph, opt._global_step
    update = opt._opt.apply_gradients([(mean, var) for mean, (_, var) in zip(means, pairs)],
                                      global_step=step)
    after = [update]
    if opt._variable_averages is not None:
        with graph.control_dependencies([update]):
            after = [opt._variable_averages.apply(opt._variables_to_average)]
    with graph.device(step.device), graph.control_dependencies(after):
        issued = tokens.enqueue_many(
            [sync_replicas_finish(step, accumulators, opt._tokens_per_step,
                                  name="zero_and_make_tokens")], name="issue_tokens")
    with graph.control_dependencies([issued]):
        return constant(0, _dtypes.int32)
