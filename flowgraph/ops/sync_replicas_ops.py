"""The synchronous push of `tf.train.SyncReplicasOptimizer` as two ops of flowgraph's own
(TensorFlow has neither): `SyncReplicasPush` and `SyncReplicasFinish`.

`flowgraph.distributed.sync_inline` builds a push that aggregates on the task holding
the optimizer's state from them. Once the push took the counter (a queue's dequeue,
which blocks, keeps deadlines and can be cancelled), one `SyncReplicasPush` does what
used to be some forty ops and two conds::

    lock state = [push id, count]            (who holds the counter, for its recovery)
    fresh = local step >= global step        (read now, under the counter: exact)
    total = count + fresh
    total <  replicas_to_aggregate:  accumulators += gradients if fresh
        outputs: aggregating DEAD, count total, means DEAD
    total >= replicas_to_aggregate:  nothing written
        outputs: aggregating True, count DEAD, means (accumulator + gradient) * (1 / n)

Its untaken outputs are dead, as a `Switch`'s are (so it is registered as control
flow): the wrapped optimizer's update reads the means and runs only on the push that
aggregates, and a `Merge` picks the count to put back. `SyncReplicasFinish` ends an
aggregation: it zeroes the accumulators and returns ``num_tokens`` copies of the global
step, the tokens to enqueue. The mean is computed with NumPy's own add and multiply
loops in the variable's dtype, so it is bitwise what ``(acc + grad) * (1 / n)`` gives
as graph ops.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     local = tf.Variable(0, dtype=tf.int64)
...     lock = tf.Variable([0, 0], dtype=tf.int64)
...     acc = tf.Variable([0.0, 0.0])
...     push = sync_replicas_push(tf.constant(0), tf.constant(7, tf.int64), lock, step,
...                               local, [acc], [tf.constant([2.0, 4.0])], 2)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         print(sess.run(push.count), sess.run(acc), sess.run(lock))
1 [2. 4.] [7 0]
"""

from __future__ import annotations

from typing import NamedTuple

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op

__all__ = ["SyncPush", "sync_replicas_finish", "sync_replicas_push"]

_SCALAR = TensorShape([])


def _push_dtypes(op):
    n = op.attrs["N"]
    return [_dtypes.bool, _dtypes.int32] + [t.dtype.base_dtype for t in op.inputs[5 + n:]]


@register_op("SyncReplicasPush", attrs={"N": 1, "replicas_to_aggregate": 1},
             num_outputs=lambda op: 2 + op.attrs["N"], dtype_fn=_push_dtypes,
             ref_inputs="all", stateful=True, control_flow="switch")
def _push_shape(op, count, push_id, lock, step, local, *rest):
    n = op.attrs["N"]
    if len(rest) != 2 * n:
        raise op.shape_error(f"expected {n} accumulators and {n} gradients, found "
                             f"{len(rest)} inputs after the local step")
    for k in (0, 1):
        if not op.inputs[k].shape.is_compatible_with(_SCALAR):
            raise op.shape_error(f"input {k} ({'count' if k == 0 else 'push id'}) must "
                                 f"be a scalar, found shape {op.inputs[k].shape}")
    means = []
    for i, (acc, grad) in enumerate(zip(rest[:n], rest[n:])):
        if not acc.is_compatible_with(grad):
            raise op.shape_error(f"accumulator {i} has shape {acc} but gradient {i} has "
                                 f"shape {grad}")
        means.append(acc.merge_with(grad))
    return [_SCALAR, _SCALAR, *means]


@register_op("SyncReplicasFinish", attrs={"N": 1, "num_tokens": 1},
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype], ref_inputs="all",
             stateful=True)
def _finish_shape(op, step, *accumulators):
    return [TensorShape([op.attrs["num_tokens"]])]


not_differentiable("SyncReplicasPush", "SyncReplicasFinish")


class SyncPush(NamedTuple):
    """The outputs of a `SyncReplicasPush`: ``aggregating`` (live, True, only on the
    push that completes the step), ``count`` (live otherwise: the fresh count to put
    back) and ``means`` (live with ``aggregating``)."""

    aggregating: Tensor
    count: Tensor
    means: list


def _ref(variable):
    ref = getattr(variable, "_ref", None)
    return ref() if callable(ref) else variable


def sync_replicas_push(count, push_id, lock_state, global_step, local_step, accumulators,
                       gradients, replicas_to_aggregate: int, name: str | None = None):
    """One synchronous push (see the module docstring): `count` fresh gradients are in
    `accumulators` so far; `lock_state` (int64 ``[2]``) records ``[push_id, count]``.
    Returns a `SyncPush`."""
    accumulators, gradients = list(accumulators), list(gradients)
    if len(accumulators) != len(gradients) or not accumulators:
        raise ValueError(f"sync_replicas_push: one gradient per accumulator (and at least "
                         f"one), got {len(accumulators)} accumulators and "
                         f"{len(gradients)} gradients")
    refs = [_ref(v) for v in [lock_state, global_step, local_step, *accumulators]]
    op = make_op("SyncReplicasPush", [count, push_id, *refs, *gradients],
                 {"N": len(gradients), "replicas_to_aggregate": int(replicas_to_aggregate)},
                 name=name or "SyncReplicasPush")
    return SyncPush(op.outputs[0], op.outputs[1], list(op.outputs[2:]))


def sync_replicas_finish(global_step, accumulators, num_tokens: int,
                         name: str | None = None) -> Tensor:
    """Zero `accumulators`, then return `num_tokens` copies of `global_step`'s value."""
    accumulators = list(accumulators)
    return make_op("SyncReplicasFinish", [_ref(global_step), *map(_ref, accumulators)],
                   {"N": len(accumulators), "num_tokens": int(num_tokens)},
                   name=name or "SyncReplicasFinish").outputs[0]
