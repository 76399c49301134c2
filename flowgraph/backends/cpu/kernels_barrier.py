"""CPU kernels for barriers (ops in `flowgraph/ops/barrier_ops.py`).

State it keeps
--------------
A `Barrier` lives in the session's resource container under ``(container,
shared_name)``. It holds the *incomplete* elements (key -> a list of components, None
where not yet inserted, and the insertion index of the key's first insert) and a
*ready* queue: a `PriorityQueue` of ``(index, key, *components)`` whose priority is
that insertion index, so ``BarrierTakeMany`` is a dequeue from it (blocking, timeouts
and cancellation are the queue's)::

    insert(c0: a, b)      incomplete {a: [x, -], b: [y, -]}   ready []
    insert(c1: b)         incomplete {a: [x, -]}              ready [(i0, b, y, z)]
    take(1)  -> (i0, b, y, z)

Invariants
----------
* An element is in exactly one of the two places; it moves to the ready queue when
  its last component arrives, under the barrier's lock.
* The insertion index of a ``BarrierInsertMany`` call is ``INT64_MIN`` plus the number
  of calls before it (as TensorFlow's); elements first inserted by one call share it.
* Once closed, no new key enters; the ready queue is closed as soon as no incomplete
  element can still arrive (at once with ``cancel_pending_enqueues``), so takes that
  can never be served fail with `OutOfRangeError`.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_data_flow import PriorityQueue
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors

_INT64_MIN = np.iinfo(np.int64).min


class Barrier:
    """One barrier: incomplete elements by key and the queue of ready ones."""

    def __init__(self, name: str, component_types, shapes) -> None:
        self.name = name
        self.dtypes = [_dtypes.as_dtype(d).base_dtype for d in component_types]
        self.shapes = [tuple(s.as_list()) if hasattr(s, "as_list") else tuple(s)
                       for s in shapes]
        self.ready = PriorityQueue(name, [_dtypes.string, *self.dtypes],
                                   [(), *self.shapes], -1)
        self.incomplete: dict[bytes, list] = {}
        self.closed = False
        self.cancelled = False
        self.calls = 0
        self.lock = threading.Lock()

    def signature(self):
        return (self.dtypes, self.shapes)

    def insert(self, keys: list, values: np.ndarray, component: int) -> None:
        with self.lock:
            index = _INT64_MIN + self.calls
            self.calls += 1
            for k in keys:
                parts = self.incomplete.get(k)
                if parts is None:
                    if self.closed:
                        what = ("." if self.cancelled else ", but attempted to insert a "
                                f"brand new key: {k.decode(errors='replace')}.")
                        raise errors.CancelledError(
                            None, None, f"Barrier {self.name} is closed{what} Pending "
                            f"enqueues cancelled: {int(self.cancelled)}. Number of "
                            f"incomplete keys: {len(self.incomplete)}.")
                elif parts[2 + component] is not None:
                    raise errors.InvalidArgumentError(
                        None, None, f"Key {k.decode(errors='replace')} already has a value "
                        f"for component {component} in barrier {self.name}")
            if len(set(keys)) != len(keys):
                raise errors.InvalidArgumentError(
                    None, None, f"BarrierInsertMany on barrier {self.name}: a key appears "
                    "twice in one insert")
            n = len(self.dtypes)
            done = []
            for k, v in zip(keys, values):
                parts = self.incomplete.setdefault(k, [index, k] + [None] * n)
                parts[2 + component] = v
                if all(p is not None for p in parts[2:]):
                    del self.incomplete[k]
                    done.append(parts)
            elems = []
            if done:
                keys_col = np.empty(len(done), dtype=object)
                keys_col[:] = [p[1] for p in done]
                try:
                    elems = self.ready.elements(
                        [np.array([p[0] for p in done], np.int64), keys_col,
                         *[np.stack([np.asarray(p[2 + i]) for p in done])
                           for i in range(n)]], many=True)
                except (ValueError, errors.InvalidArgumentError) as e:
                    for p in done:  # they stay incomplete, as before this insert
                        p[2 + component] = None
                        self.incomplete[p[1]] = p
                    raise errors.InvalidArgumentError(
                        None, None, f"BarrierInsertMany on barrier {self.name}: completed "
                        f"elements do not match the barrier's component shapes "
                        f"{[list(x) for x in self.shapes]}: {getattr(e, 'message', e)}"
                    ) from None
            with self.ready.lock:
                for e in elems:
                    self.ready._put(e)
                fired = self.ready._pump()
            close_ready = self.closed and not self.incomplete
        self.ready._fire(fired)
        if close_ready:
            self.ready.close(False)

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.lock:
            self.closed = True
            if cancel_pending_enqueues:
                self.cancelled = True
                self.incomplete.clear()
            close_ready = not self.incomplete
        if close_ready:
            self.ready.close(cancel_pending_enqueues)


# -- kernels ----------------------------------------------------------------------------
class BarrierOp:
    """Looks the barrier up (creating it on first use) in the session's container."""

    def __init__(self, ctx, *, component_types, shapes, capacity=-1, container="",
                 shared_name="") -> None:
        self.resources = ctx.resources
        self.container = container or ""
        self.name = shared_name or ctx.op.name
        self.types, self.shapes = list(component_types), list(shapes or [])

    def __call__(self):
        if len(self.shapes) != len(self.types):
            raise errors.InvalidArgumentError(
                None, None, f"Barrier '{self.name}': All of the component shapes must be "
                f"specified ({len(self.types)} component types, {len(self.shapes)} shapes)")
        b = self.resources.lookup_or_create(
            self.container, self.name, lambda name: Barrier(name, self.types, self.shapes))
        want = ([_dtypes.as_dtype(d).base_dtype for d in self.types],
                [tuple(s.as_list()) if hasattr(s, "as_list") else tuple(s)
                 for s in self.shapes])
        if not isinstance(b, Barrier) or b.signature() != want:
            raise errors.InvalidArgumentError(
                None, None, f"Shared resource '{self.name}' exists but is not a barrier "
                f"with component types {[d.name for d in want[0]]} and shapes {want[1]}; "
                "use another shared_name")
        return b


cpu_kernel("Barrier")(BarrierOp)


def _barrier(handle, op_type: str) -> Barrier:
    if not isinstance(handle, Barrier):
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: input 0 is not a barrier handle (got "
            f"{type(handle).__name__})")
    return handle


@cpu_kernel("BarrierInsertMany")
def barrier_insert_many(handle, keys, values, *, component_index):
    b = _barrier(handle, "BarrierInsertMany")
    keys = np.asarray(keys, dtype=object).reshape(-1)
    values = np.asarray(values)
    if not 0 <= component_index < len(b.dtypes):
        raise errors.InvalidArgumentError(
            None, None, f"BarrierInsertMany: component_index {component_index} is out of "
            f"range for barrier {b.name} with {len(b.dtypes)} components")
    if values.dtype != np.dtype(b.dtypes[component_index].as_numpy_dtype):
        raise errors.InvalidArgumentError(
            None, None, f"BarrierInsertMany: component {component_index} of barrier {b.name} "
            f"is {b.dtypes[component_index].name}, got values of dtype {values.dtype}")
    if values.ndim == 0 or values.shape[0] != keys.size:
        raise errors.InvalidArgumentError(
            None, None, f"BarrierInsertMany: {keys.size} keys but values of shape "
            f"{list(values.shape)}; values need one row per key")
    b.insert([k if isinstance(k, bytes) else str(k).encode() for k in keys.tolist()],
             values, int(component_index))


@cpu_kernel("BarrierTakeMany", is_async=True)
def barrier_take_many(step, done, handle, num_elements, *, allow_small_batch=False,
                      timeout_ms=-1, **_):
    b = _barrier(handle, "BarrierTakeMany")
    n = int(num_elements)
    if n < 0:
        done(None, errors.InvalidArgumentError(
            None, None, f"BarrierTakeMany: num_elements must be >= 0, got {n}"))
        return
    with b.lock:
        if b.closed:
            ready = b.ready.size()
            deliver = min(n, ready) if allow_small_batch else n
            available = ready if allow_small_batch else ready + len(b.incomplete)
            if available < max(deliver, 1):
                done(None, errors.OutOfRangeError(
                    None, None, f"Barrier '{b.name}' is closed and has insufficient elements "
                    f"(requested {deliver}, total size {available})"))
                return
            n = deliver
    b.ready.dequeue(step, done, n, up_to=bool(allow_small_batch), timeout_ms=timeout_ms)


@cpu_kernel("BarrierClose")
def barrier_close(handle, *, cancel_pending_enqueues=False):
    _barrier(handle, "BarrierClose").close(bool(cancel_pending_enqueues))


@cpu_kernel("BarrierReadySize")
def barrier_ready_size(handle):
    return np.asarray(_barrier(handle, "BarrierReadySize").ready.size(), np.int32)


@cpu_kernel("BarrierIncompleteSize")
def barrier_incomplete_size(handle):
    b = _barrier(handle, "BarrierIncompleteSize")
    with b.lock:
        return np.asarray(len(b.incomplete), np.int32)
