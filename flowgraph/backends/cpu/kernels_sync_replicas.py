"""CPU kernels of the synchronous push (`flowgraph/ops/sync_replicas_ops.py`).

`SyncReplicasPush` writes the lock state first (so that the task can put the counter
back whatever fails after it), checks every shape before it writes an accumulator (a
push adds all its gradients or none), and returns `DEAD` for its untaken outputs. The
arithmetic is NumPy's add and multiply in the accumulator's dtype, the loops the
``AssignAdd``, ``AddV2`` and ``Mul`` kernels run, so the values are bitwise theirs.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.dead import DEAD


def _check_shapes(accumulators, gradients, op_name: str) -> list:
    values = []
    for i, (acc, grad) in enumerate(zip(accumulators, gradients)):
        value = acc.read(op_name)
        if value.shape != np.shape(grad):
            raise errors.InvalidArgumentError(
                None, None,
                f"SyncReplicasPush '{op_name}': accumulator '{acc.name}' has shape "
                f"{list(value.shape)} but gradient {i} has shape {list(np.shape(grad))}; "
                "every worker must push gradients of the variables' shapes")
        values.append(value)
    return values


@cpu_kernel("SyncReplicasPush")
def sync_replicas_push(count, push_id, lock, step, local, *rest, N, replicas_to_aggregate,
                       op):
    accumulators, gradients = rest[:N], rest[N:]
    with lock.lock:
        lock.value = np.array([push_id, count], dtype=np.int64)
    fresh = bool(local.read(op.name) >= step.read(op.name))
    total = int(count) + fresh
    current = _check_shapes(accumulators, gradients, op.name)
    if total >= replicas_to_aggregate:
        means = []
        for value, grad in zip(current, gradients):
            mean = np.add(value, grad)
            scale = np.asarray(1.0 / replicas_to_aggregate, dtype=mean.dtype)
            means.append(np.multiply(mean, scale, out=mean) if mean.ndim else mean * scale)
        return (np.True_, DEAD, *means)
    if fresh:
        for acc, value, grad in zip(accumulators, current, gradients):
            with acc.lock:
                if _writable(value):
                    np.add(value, grad, out=value, dtype=value.dtype)
                else:
                    acc.value = np.add(value, grad, dtype=value.dtype)
    return (DEAD, np.int32(total), *(DEAD,) * N)


def _writable(value) -> bool:
    """Whether an accumulator's storage can be updated in place: an array of its own
    (the accumulators are written only by these kernels, `Assign`, which copies, and a
    restore, whose arrays may be read-only views)."""
    return isinstance(value, np.ndarray) and value.ndim > 0 and value.flags.writeable \
        and value.flags.c_contiguous and value.base is None


@cpu_kernel("SyncReplicasFinish")
def sync_replicas_finish(step, *accumulators, N, num_tokens, op):
    for acc in accumulators:
        with acc.lock:
            value = acc.read(op.name)
            if _writable(value):
                value.fill(0)
            else:
                acc.value = np.zeros_like(value)
    value = np.asarray(step.read(op.name))
    return np.full([num_tokens], value, dtype=value.dtype)
