"""The synchronous push that aggregates: a `SyncReplicasOptimizer` step with no chief loop.

When the model variables, their accumulators, the global step and the worker's local
step all live on one task (one ps, or one process), a worker's push does everything the
chief's aggregation op would, under a lock held only by pushes (`inline_push`):

    take the counter           (a one-element queue: the lock, holding the fresh count)
    fresh = local step >= global step             (read under the lock: exact)
    if fresh: accumulators += gradients; count += 1
    if count == replicas_to_aggregate:             (this push is the last one)
        apply the accumulators' mean with the wrapped optimizer (global step + 1),
        the variable averages, zero the accumulators, issue the tokens; count = 0
    put the counter back                           (the lock is free again)
    wait for a token; local step = token

State and invariants: the counter queue holds exactly one element while no push is
between its take and its put; so pushes, and the staleness check, the addition and the
aggregation within each, are serialized, and a gradient found fresh is added to the
aggregation it was found fresh for (the chief loop's design cannot promise that with
backup workers). The last push aggregates in its own run: the step costs no call of the
chief's, and no thread hand-off on the ps between the last gradient and the tokens.

The element is put once per ps incarnation: the chief's `counter_init_op` puts it unless
a flag variable beside it is initialized, and sets the flag (it zeroes the accumulators
first: restored from a checkpoint, they may hold a partial sum). The flag belongs to no
collection, so no initializer, checkpoint or readiness check sees it: a restarted chief
(the ps kept its state) puts no second element, a restarted ps (flag and queue new) gets
one, checkpoint or not. A push that fails between take and put (an error in the wrapped
optimizer, a deadline expiring inside the aggregation) loses the element: later pushes
then wait on ``take_counter`` until their deadline, an error that names that op.

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

from flowgraph.distributed.sync_prefetch import TOKEN_WAITS
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.ops import math_ops, state_ops
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_shape_ops import fill, zeros_like
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.data_flow_ops import FIFOQueue
from flowgraph.ops.variables import Variable

__all__ = ["add_if_fresh", "inline_push"]


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
        counter_init_op = cond(state_ops.is_variable_initialized(made), no_op,
                               lambda: _put_first(graph, counter, made, accumulators),
                               name="put_first_counter")
        count = counter.dequeue(name="take_counter")
        with graph.control_dependencies([count]):
            now, mine = step.read_value(), local.read_value()
        fresh = math_ops.greater_equal(mine, now, name="is_fresh")
    added = add_if_fresh(graph, fresh, grads, accumulators)
    with graph.device(step.device), graph.colocate_with(step.op):
        total = math_ops.add(count, added, name="fresh_count")
        last = math_ops.greater_equal(total, opt._replicas_to_aggregate, name="is_last")
        left = cond(last, lambda: _aggregate(opt, pairs, accumulators, tokens),
                    lambda: identity(total), name="aggregate_if_last")
        put = counter.enqueue([left], name="put_counter")
        with graph.control_dependencies([put]):
            token = tokens.dequeue(name="wait_for_token")
    graph.add_to_collection(TOKEN_WAITS, token.op)
    return state_ops.assign(local, token, name="train_op").op, counter_init_op


def _put_first(graph, counter, made, accumulators):
    """Zero the accumulators (a checkpoint may have saved a partial sum), then put the
    counter at 0 and set the flag."""
    resets = []
    for acc in accumulators:
        with graph.colocate_with(acc.op):
            resets.append(state_ops.assign(acc, zeros_like(acc)))
    with graph.control_dependencies(resets):
        put = counter.enqueue([constant(0, _dtypes.int32)])
    with graph.control_dependencies([put]):
        return state_ops.assign(made, True).op


def _aggregate(opt, pairs, accumulators, tokens):
    """The last push's branch: the mean applied, accumulators zeroed, tokens issued;
    returns the count the counter restarts from (0)."""
    graph, step = opt._global_step.graph, opt._global_step
    scale = 1.0 / opt._replicas_to_aggregate
    averaged = []
    for (_, var), acc in zip(pairs, accumulators):
        with graph.colocate_with(acc.op):
            averaged.append((acc.read_value() * scale, var))
    update = opt._opt.apply_gradients(averaged, global_step=step)
    after = [update]
    if opt._variable_averages is not None:
        with graph.control_dependencies([update]):
            after = [opt._variable_averages.apply(opt._variables_to_average)]
    resets = []
    with graph.control_dependencies(after):
        for acc in accumulators:
            with graph.colocate_with(acc.op):
                resets.append(state_ops.assign(acc, zeros_like(acc)))
    with graph.device(step.device), graph.control_dependencies(resets):
        issued = tokens.enqueue_many([fill([opt._tokens_per_step], step.read_value())],
                                     name="issue_tokens")
    with graph.control_dependencies([issued]):
        return constant(0, _dtypes.int32)
