"""CPU kernels for queues: the queue resources, their blocking waiters, and the queue ops.

State it keeps
--------------
A queue (`FIFOQueue`, `PaddingFIFOQueue`, `RandomShuffleQueue`, `PriorityQueue` below)
lives in the session's resource container under ``(container, shared_name)``, so every
session on the same target sees the same queue. It holds its elements (each a tuple of
NumPy arrays, one per component), a ``closed`` flag and two FIFO lists of *waiters*:
blocked enqueue attempts and blocked dequeue attempts. All of it changes under one lock.

Enqueue and dequeue kernels are asynchronous: they register a waiter and return, holding
no executor thread; whoever later makes progress possible (an enqueue, a dequeue, a
close, a timer) completes the waiter and calls its ``done`` callback::

    dequeue (thread A) ──> waiter parked ──┐          A's Session.run waits, no kernel
    enqueue (thread B) ──> element ──> _pump ──> A.done(value)   A's step continues

Invariants
----------
* Waiters are served in arrival order, enqueues before dequeues, and `_pump` runs after
  every change until nothing moves. ``dequeue_many(n)`` takes elements one at a time, so
  ``n`` may exceed the capacity.
* A waiter completes exactly once: whoever completes it flips its state from ``PENDING``
  under the lock, and calls ``done`` only after releasing it (``done`` may run the rest
  of another step, which may use this queue again).
* A waiter that gives up (its timeout, its step cancelled, the queue reset) first leaves
  the waiter list and gives back the elements it already took, then fails; no element
  is ever handed to a dead waiter. A waiter whose step failed elsewhere (and so will
  never take its result) is dropped when it reaches the head of its list.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import secrets
import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.philox import WordStream

_PENDING, _DONE = 0, 1


class _Waiter:
    """One blocked enqueue or dequeue attempt."""

    __slots__ = ("done", "is_enqueue", "is_many", "items", "pos", "state", "step", "taken",
                 "timer", "up_to", "want")

    def __init__(self, step, done, is_enqueue: bool, items=None, want: int = 1,
                 is_many: bool = False, up_to: bool = False) -> None:
        self.step = step
        self.done = done
        self.is_enqueue = is_enqueue
        self.items = items or []
        self.pos = 0
        self.want = want
        self.is_many = is_many
        self.up_to = up_to
        self.taken: list = []
        self.state = _PENDING
        self.timer = None


def _step_failed(step) -> bool:
    """True if the step that owns a waiter was cancelled or has failed.

    A failing kernel elsewhere in the step does not cancel the step's async kernels (the
    executor just stops waiting for them), so a parked waiter checks its step here
    before it is handed anything: ``error`` is set while the step unwinds and
    ``error_node`` stays set after it ended.
    """
    if getattr(step, "cancelled", None) is not None:
        return True
    ex = getattr(step, "step", None)
    return ex is not None and (getattr(ex, "error", None) is not None
                               or getattr(ex, "error_node", None) is not None)


class _CancelHook:
    """Stands in for an async kernel's `done` in the step's cancellation list."""

    __slots__ = ("queue", "waiter")

    def __init__(self, queue, waiter) -> None:
        self.queue = queue
        self.waiter = waiter

    def __call__(self, outputs=None, error=None) -> None:
        self.queue._abandon(self.waiter, error)


def park_waiter(owner, step, waiter, timeout_ms: int, timeout_message: str,
                still_pending) -> None:
    """Tie parked `waiter` to its step: the step's cancellation, or its deadline
    (`timeout_ms` > 0, failing with `timeout_message`), calls ``owner._abandon(waiter,
    error)``. The waiter then takes over the async kernel's `done` in the step's list;
    `still_pending()` (called under ``owner.lock``) says whether it is still waiting."""
    pending = getattr(step, "pending_async", None)
    if pending is not None:
        pending.append(_CancelHook(owner, waiter))
        try:
            pending.remove(waiter.done)
        except ValueError:
            pass
        cancelled = getattr(step, "cancelled", None)
        if cancelled is not None:
            owner._abandon(waiter, cancelled)
            return
    if timeout_ms > 0:
        timer = threading.Timer(timeout_ms / 1000.0, owner._abandon, args=(
            waiter, errors.DeadlineExceededError(None, None, timeout_message)))
        timer.daemon = True
        with owner.lock:
            if not still_pending():
                return
            waiter.timer = timer
            timer.start()


def abandon_pending(lock, waiters: list, w, error) -> None:
    """Withdraw waiter `w` (one with ``pending``, ``timer`` and ``done`` fields) from
    `waiters` under `lock` if it is still pending, then fail it with `error` outside the
    lock: the ``_abandon`` of staging areas and accumulators."""
    with lock:
        if not w.pending:
            return
        w.pending = False
        if w.timer is not None:
            w.timer.cancel()
        waiters.remove(w)
    w.done(None, error)


class QueueBase:
    """Storage and waiting logic shared by every queue kind."""

    kind = "Queue"

    def __init__(self, name: str, component_types, shapes, capacity: int) -> None:
        self.name = name
        self.dtypes = [_dtypes.as_dtype(d).base_dtype for d in component_types]
        self.np_dtypes = [object if d == _dtypes.string else d.as_numpy_dtype
                          for d in self.dtypes]
        self.shapes = self._shape_tuples(shapes)
        self.capacity = int(capacity) if capacity is not None else -1
        self.closed = False
        self.lock = threading.Lock()
        self._enqueuers: collections.deque = collections.deque()
        self._dequeuers: collections.deque = collections.deque()

    @staticmethod
    def _shape_tuples(shapes):
        if not shapes:
            return None
        return [tuple(s.as_list()) if hasattr(s, "as_list") else tuple(s) for s in shapes]

    def describe(self) -> str:
        return f"{self.kind} '{self.name}'"

    def signature(self):
        return (type(self), self.dtypes, self.shapes)

    # -- storage, per kind ------------------------------------------------------------
    def _size(self) -> int:
        raise NotImplementedError

    def _put(self, elem) -> None:
        raise NotImplementedError

    def _take(self):
        raise NotImplementedError

    def _give_back(self, elems: list) -> None:
        raise NotImplementedError

    def _can_take(self) -> bool:
        return self._size() > 0

    def _component(self, elem, i: int):
        return elem[i]

    # -- checking incoming values ------------------------------------------------------
    def _check_shape(self, i: int, shape: tuple, expected: tuple) -> bool:
        return shape == expected

    def elements(self, components, many: bool) -> list:
        """Validate and copy enqueued `components` into a list of element tuples."""
        if len(components) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, f"{self.describe()} expects {len(self.dtypes)} components, got "
                f"{len(components)}")
        arrays = []
        for i, (x, npd) in enumerate(zip(components, self.np_dtypes)):
            a = np.array(x, dtype=npd, copy=True)
            if many and a.ndim == 0:
                raise errors.InvalidArgumentError(
                    None, None, f"EnqueueMany to {self.describe()}: component {i} is a "
                    "scalar; each component needs a leading batch dimension")
            shape = a.shape[1:] if many else a.shape
            if self.shapes is not None and not self._check_shape(i, shape, self.shapes[i]):
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch in tuple component {i} of "
                    f"{self.describe()}. Expected {list(self.shapes[i])}, got {list(shape)}"
                    + (" (per element)" if many else ""))
            arrays.append(a)
        if not many:
            return [tuple(arrays)]
        sizes = {a.shape[0] for a in arrays}
        if len(sizes) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"EnqueueMany to {self.describe()}: components have different "
                f"batch sizes {[a.shape[0] for a in arrays]}; they must all be equal")
        n = arrays[0].shape[0]
        return [tuple(a[k, ...] for a in arrays) for k in range(n)]

    # -- building outputs -------------------------------------------------------------
    def _stack(self, i: int, parts: list):
        if parts:
            return np.stack(parts)
        return np.zeros((0, *self.shapes[i]), dtype=self.np_dtypes[i])

    def _output(self, w: _Waiter):
        elems = w.taken
        if not w.is_many:
            values = tuple(self._component(elems[0], i) for i in range(len(self.dtypes)))
        else:
            values = tuple(self._stack(i, [self._component(e, i) for e in elems])
                           for i in range(len(self.dtypes)))
        return values[0] if len(values) == 1 else values

    # -- the engine ---------------------------------------------------------------------
    def _finish(self, w: _Waiter, fired: list, value=None, error=None) -> None:
        w.state = _DONE
        if w.timer is not None:
            w.timer.cancel()
        fired.append((w.done, value, error))

    def _pump(self) -> list:
        """Serve waiters in order until nothing moves; return completions to fire."""
        fired: list = []
        moved = True
        eq, dq = self._enqueuers, self._dequeuers
        while moved:
            moved = False
            while eq:
                w = eq[0]
                if _step_failed(w.step):
                    eq.popleft()
                    self._finish(w, fired, error=errors.CancelledError(
                        None, None, f"Enqueue to {self.describe()} was cancelled"))
                    continue
                while w.pos < len(w.items) and (self.capacity < 0
                                                or self._size() < self.capacity):
                    self._put(w.items[w.pos])
                    w.pos += 1
                    moved = True
                if w.pos < len(w.items):
                    break
                eq.popleft()
                self._finish(w, fired)
            while dq:
                w = dq[0]
                if _step_failed(w.step):  # never hand elements to a dead step
                    dq.popleft()
                    self._give_back(w.taken)
                    w.taken = []
                    self._finish(w, fired, error=errors.CancelledError(
                        None, None, f"Dequeue from {self.describe()} was cancelled"))
                    moved = True
                    continue
                while len(w.taken) < w.want and self._can_take():
                    w.taken.append(self._take())
                    moved = True
                if len(w.taken) == w.want:
                    dq.popleft()
                    self._complete_dequeue(w, fired)
                    continue
                if not self.closed:
                    break
                # Closed and nothing left to take: nothing more will ever come.
                dq.popleft()
                if w.up_to and w.taken:
                    self._complete_dequeue(w, fired)
                else:
                    got = len(w.taken)
                    self._give_back(w.taken)
                    w.taken = []
                    self._finish(w, fired, error=errors.OutOfRangeError(
                        None, None, f"{self.describe()} is closed and has insufficient "
                        f"elements (requested {w.want}, current size {self._size()})"
                        + (f"; {got} were returned to the queue" if got else "")))
                moved = True
        return fired

    def _complete_dequeue(self, w: _Waiter, fired: list) -> None:
        try:
            value = self._output(w)
        except (ValueError, TypeError) as e:
            self._finish(w, fired, error=errors.InvalidArgumentError(
                None, None, f"Dequeue from {self.describe()}: the elements cannot be "
                f"batched ({e}); give the queue `shapes` or enqueue equal shapes"))
            return
        self._finish(w, fired, value)

    @staticmethod
    def _fire(fired: list) -> None:
        for done, value, error in fired:
            if error is not None:
                done(None, error)
            else:
                done(value)

    def _abandon(self, w: _Waiter, error) -> None:
        """Withdraw pending waiter `w` (timeout or cancellation), then fail it."""
        with self.lock:
            if w.state != _PENDING:
                return
            w.state = _DONE
            if w.timer is not None:
                w.timer.cancel()
            lst = self._enqueuers if w.is_enqueue else self._dequeuers
            try:
                lst.remove(w)
            except ValueError:
                pass
            if w.taken:
                self._give_back(w.taken)
                w.taken = []
            fired = self._pump()
        self._fire(fired)
        w.done(None, error)

    def _wait(self, step, w: _Waiter, what: str, op_timeout_ms: int = -1) -> None:
        """Arm timeout and step cancellation for `w`, which is parked in a list. The
        timeout is the step's (`RunOptions.timeout_in_ms`, else the session's
        `operation_timeout_in_ms`) or the op's own ``timeout_ms`` attr, whichever is
        shorter."""
        timeout_ms, source = _timeout_ms(step), "RunOptions.timeout_in_ms"
        if op_timeout_ms > 0 and (timeout_ms <= 0 or op_timeout_ms < timeout_ms):
            timeout_ms, source = op_timeout_ms, "the op's timeout_ms attr"
        park_waiter(self, step, w, timeout_ms,
                    f"Timed out after {timeout_ms} ms waiting to {what} {self.describe()} "
                    f"({source})", lambda: w.state == _PENDING)

    # -- operations -------------------------------------------------------------------
    def enqueue(self, step, done, components, many: bool) -> None:
        items = self.elements(components, many)
        w = _Waiter(step, done, True, items)
        with self.lock:
            if self.closed:
                w.state = _DONE
                closed = True
            else:
                closed = False
                self._enqueuers.append(w)
                fired = self._pump()
        if closed:
            done(None, errors.CancelledError(None, None, f"{self.describe()} is closed."))
            return
        self._fire(fired)
        if w.state == _PENDING:
            self._wait(step, w, "enqueue to")

    def dequeue(self, step, done, n: int | None, up_to: bool = False,
                timeout_ms: int = -1) -> None:
        if n is not None:
            n = int(n)
            if n < 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Dequeue from {self.describe()} requested {n} < 0 elements")
            if self.shapes is None:
                raise errors.InvalidArgumentError(
                    None, None, f"{self.describe()}: DequeueMany and DequeueUpTo require the "
                    "components to have specified shapes; pass `shapes` to the queue")
        w = _Waiter(step, done, False, want=1 if n is None else n, is_many=n is not None,
                    up_to=up_to)
        with self.lock:
            self._dequeuers.append(w)
            fired = self._pump()
        self._fire(fired)
        if w.state == _PENDING:
            self._wait(step, w, "dequeue from", int(timeout_ms))

    def close(self, cancel_pending_enqueues: bool) -> None:
        fired: list = []
        with self.lock:
            self.closed = True
            if cancel_pending_enqueues:
                while self._enqueuers:
                    w = self._enqueuers.popleft()
                    self._finish(w, fired, error=errors.CancelledError(
                        None, None, f"{self.describe()} is closed; a pending enqueue was "
                        "cancelled (close(cancel_pending_enqueues=True))."))
            fired += self._pump()
        self._fire(fired)

    def close_resource(self) -> None:
        """The container is being cleared (Session.reset): fail every waiter."""
        fired: list = []
        with self.lock:
            self.closed = True
            for lst in (self._enqueuers, self._dequeuers):
                while lst:
                    w = lst.popleft()
                    self._finish(w, fired, error=errors.CancelledError(
                        None, None, f"{self.describe()} was destroyed (Session.reset)."))
        self._fire(fired)

    def size(self) -> int:
        with self.lock:
            return self._size()


class FIFOQueue(QueueBase):
    kind = "FIFOQueue"

    def __init__(self, name, component_types, shapes, capacity) -> None:
        super().__init__(name, component_types, shapes, capacity)
        self._items: collections.deque = collections.deque()

    def _size(self) -> int:
        return len(self._items)

    def _put(self, elem) -> None:
        self._items.append(elem)

    def _take(self):
        return self._items.popleft()

    def _give_back(self, elems: list) -> None:
        self._items.extendleft(reversed(elems))


class PaddingFIFOQueue(FIFOQueue):
    kind = "PaddingFIFOQueue"

    def _check_shape(self, i: int, shape: tuple, expected: tuple) -> bool:
        return len(shape) == len(expected) and all(
            e is None or e == s for s, e in zip(shape, expected))

    def _stack(self, i: int, parts: list):
        if not parts:
            return np.zeros((0, *(d or 0 for d in self.shapes[i])), dtype=self.np_dtypes[i])
        full = tuple(max(p.shape[k] for p in parts) for k in range(parts[0].ndim))
        fill = b"" if self.np_dtypes[i] is object else 0
        out = np.full((len(parts), *full), fill, dtype=self.np_dtypes[i])
        for j, p in enumerate(parts):
            out[(j, *(slice(0, d) for d in p.shape))] = p
        return out


class RandomShuffleQueue(QueueBase):
    kind = "RandomShuffleQueue"

    def __init__(self, name, component_types, shapes, capacity, min_after_dequeue,
                 seed, seed2) -> None:
        super().__init__(name, component_types, shapes, capacity)
        self.min_after_dequeue = int(min_after_dequeue)
        self._items: list = []
        if not (seed or seed2):  # unseeded: TensorFlow draws both seeds at random
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        # TensorFlow's stream: Philox keyed by seed, counter seed2, one word per dequeue
        self._words = WordStream(int(seed), int(seed2))

    def signature(self):
        return (*super().signature(), self.min_after_dequeue)

    def _size(self) -> int:
        return len(self._items)

    def _can_take(self) -> bool:
        n = len(self._items)
        return n > 0 and (self.closed or n > self.min_after_dequeue)

    def _put(self, elem) -> None:
        self._items.append(elem)

    def _take(self):
        items = self._items
        k = self._words.next() % len(items)
        items[k], items[-1] = items[-1], items[k]
        return items.pop()

    def _give_back(self, elems: list) -> None:
        self._items.extend(elems)


class PriorityQueue(QueueBase):
    """Elements are ``(priority, *components)``; the smallest priority leaves first."""

    kind = "PriorityQueue"

    def __init__(self, name, component_types, shapes, capacity) -> None:
        # Component 0 is the int64 priority; `component_types` and `shapes` exclude it.
        super().__init__(name, [_dtypes.int64, *component_types],
                         [(), *shapes] if shapes else None, capacity)
        self._heap: list = []
        self._seq = itertools.count()

    def elements(self, components, many: bool) -> list:
        elems = super().elements(components, many)
        for e in elems:
            if e[0].shape != ():
                raise errors.InvalidArgumentError(
                    None, None, f"{self.describe()}: the priority (component 0) must be a "
                    f"scalar int64 per element, got shape {list(e[0].shape)}")
        return elems

    def _check_shape(self, i: int, shape: tuple, expected: tuple) -> bool:
        return shape == expected

    def _size(self) -> int:
        return len(self._heap)

    def _put(self, elem) -> None:
        heapq.heappush(self._heap, (int(elem[0]), next(self._seq), elem))

    def _take(self):
        return heapq.heappop(self._heap)

    def _give_back(self, elems: list) -> None:
        for e in elems:
            heapq.heappush(self._heap, e)

    def _component(self, elem, i: int):
        return elem[2][i]


def _timeout_ms(step) -> int:
    options = getattr(step, "options", None)
    t = getattr(options, "timeout_in_ms", 0) or 0
    if t <= 0:
        session = getattr(step, "session", None)
        config = getattr(session, "config", None)
        t = getattr(config, "operation_timeout_in_ms", 0) or 0
    return int(t) if t > 0 else 0


# -- queue-creating ops ------------------------------------------------------------------
class _QueueOp:
    """Looks the queue up (creating it on first use) in the session's container."""

    factory = FIFOQueue

    def __init__(self, ctx, **attrs) -> None:
        self.resources = ctx.resources
        self.container = attrs.get("container", "") or ""
        self.name = attrs.get("shared_name", "") or ctx.op.name
        self.attrs = attrs
        self._want = None

    def _make(self, name: str):
        a = self.attrs
        return self.factory(name, a["component_types"], a.get("shapes") or [],
                            a.get("capacity", -1))

    def __call__(self):
        q = self.resources.lookup_or_create(self.container, self.name, self._make)
        want = self._want
        if want is None:
            want = self._want = self._make(self.name)
        if not isinstance(q, QueueBase) or q.signature() != want.signature():
            have = (f"{q.describe()} with component types {[d.name for d in q.dtypes]} and "
                    f"shapes {q.shapes}" if isinstance(q, QueueBase) else type(q).__name__)
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{self.name}' already exists as {have}, but this "
                f"op requests a {want.kind} with component types "
                f"{[d.name for d in want.dtypes]} and shapes {want.shapes}; use another "
                "shared_name")
        return q


@cpu_kernel("FIFOQueueV2")
class FIFOQueueOp(_QueueOp):
    factory = FIFOQueue


@cpu_kernel("PaddingFIFOQueueV2")
class PaddingFIFOQueueOp(_QueueOp):
    factory = PaddingFIFOQueue


@cpu_kernel("PriorityQueueV2")
class PriorityQueueOp(_QueueOp):
    factory = PriorityQueue


@cpu_kernel("RandomShuffleQueueV2")
class RandomShuffleQueueOp(_QueueOp):
    def _make(self, name: str):
        a = self.attrs
        return RandomShuffleQueue(name, a["component_types"], a.get("shapes") or [],
                                  a.get("capacity", -1), a.get("min_after_dequeue", 0),
                                  a.get("seed", 0), a.get("seed2", 0))


# -- ops on a queue ----------------------------------------------------------------------
@cpu_kernel("QueueEnqueueV2", is_async=True)
def queue_enqueue(step, done, queue, *components):
    queue.enqueue(step, done, components, many=False)


@cpu_kernel("QueueEnqueueManyV2", is_async=True)
def queue_enqueue_many(step, done, queue, *components):
    queue.enqueue(step, done, components, many=True)


# `timeout_ms` (TensorFlow declares the attr but ignores it) bounds this op's wait; the
# step goes on without a deadline once the elements are there.
@cpu_kernel("QueueDequeueV2", is_async=True)
def queue_dequeue(step, done, queue, *, timeout_ms=-1):
    queue.dequeue(step, done, None, timeout_ms=timeout_ms)


@cpu_kernel("QueueDequeueManyV2", is_async=True)
def queue_dequeue_many(step, done, queue, n, *, timeout_ms=-1):
    queue.dequeue(step, done, n, timeout_ms=timeout_ms)


@cpu_kernel("QueueDequeueUpToV2", is_async=True)
def queue_dequeue_up_to(step, done, queue, n, *, timeout_ms=-1):
    queue.dequeue(step, done, n, up_to=True, timeout_ms=timeout_ms)


@cpu_kernel("QueueCloseV2")
def queue_close(queue, *, cancel_pending_enqueues=False):
    queue.close(bool(cancel_pending_enqueues))


@cpu_kernel("QueueSizeV2")
def queue_size(queue):
    return np.asarray(queue.size(), dtype=np.int32)


@cpu_kernel("QueueIsClosedV2")
def queue_is_closed(queue):
    return np.asarray(queue.closed, dtype=np.bool_)
