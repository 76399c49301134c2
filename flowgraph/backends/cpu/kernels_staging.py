"""CPU kernels for staging areas (``Stage``, ``Unstage``, ``StagePeek``, ``StageSize``,
``StageClear``; ops in `flowgraph/ops/staging_ops.py`).

State it keeps
--------------
An `Area` lives in the session's resource container under ``(container, shared_name)``:
a FIFO list of elements (tuples of NumPy arrays), their total bytes, and one FIFO list
of blocked waiters (puts waiting for room, gets waiting for an element, peeks waiting
for an index to exist), all changed under one lock::

    put(e1) put(e2)        elements [e1, e2]       get -> e1      peek(0) -> e2

Invariants
----------
* Waiters are served in arrival order after every change until nothing moves; each
  completes exactly once, its ``done`` called outside the lock.
* A put is admitted when the area holds fewer than ``capacity`` elements and adding it
  keeps the bytes within ``memory_limit`` (0 means no bound); an element larger than
  the memory limit by itself is an error, not a wait.
* A waiter that gives up (deadline, cancelled step) leaves the list without taking
  anything.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_data_flow import (
    QueueBase,
    _step_failed,
    _timeout_ms,
    abandon_pending,
    park_waiter,
)
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors

_PUT, _GET, _PEEK = "put", "get", "peek"


class _Wait:
    __slots__ = ("done", "index", "item", "kind", "pending", "step", "timer", "want")

    def __init__(self, step, done, kind: str, item=None, index: int = 0,
                 want: int = 0) -> None:
        self.step, self.done, self.kind, self.item, self.index = step, done, kind, item, index
        self.want = want
        self.pending = True
        self.timer = None


def _nbytes(item) -> int:
    return sum(int(a.nbytes) for a in item)


class WaitingArea:
    """What a staging area's blocking calls share: a list of waiters (each with
    ``pending``, ``timer``, ``done``, ``step`` and ``kind``), `_pump` (the subclass's:
    serves the waiters it can under the lock, returns those to complete) and `wait`,
    which parks a waiter until it is served, its step fails or its timeout passes. A
    subclass says how a waiter is served (`_serve`)."""

    def _pump(self) -> list:
        """Serve (or cancel, when their step failed) every waiter that can go now, until
        none can: the completions to fire outside the lock."""
        fired = []
        moved = True
        while moved:
            moved = False
            for w in list(self.waiters):
                if _step_failed(w.step):
                    done = self._finish(w, None, errors.CancelledError(
                        None, None, f"A {w.kind} on {self.describe()} was cancelled"))
                else:
                    done = self._serve(w)
                    if done is None:
                        continue
                fired.append(done)
                moved = True
        return fired

    def _serve(self, w):
        """The subclass's: serve `w` under the lock if it can go now (its `_finish`
        result), else None."""
        raise NotImplementedError

    def _finish(self, w, value, error):
        w.pending = False
        if w.timer is not None:
            w.timer.cancel()
        self.waiters.remove(w)
        return w.done, value, error

    _fire = staticmethod(QueueBase._fire)  # completes waiters outside the lock, as queues

    def _abandon(self, w, error) -> None:
        abandon_pending(self.lock, self.waiters, w, error)

    def wait(self, w) -> None:
        with self.lock:
            self.waiters.append(w)
            fired = self._pump()
        self._fire(fired)
        if w.pending:
            timeout_ms = _timeout_ms(w.step)
            park_waiter(self, w.step, w, timeout_ms,
                        f"Timed out after {timeout_ms} ms waiting to {w.kind} on "
                        f"{self.describe()} (RunOptions.timeout_in_ms)", lambda: w.pending)


class Area(WaitingArea):
    """One staging area: its elements and its blocked waiters."""

    def __init__(self, name: str, dtypes, capacity: int, memory_limit: int) -> None:
        self.name = name
        self.dtypes = [_dtypes.as_dtype(d).base_dtype for d in dtypes]
        self.capacity = int(capacity or 0)
        self.memory_limit = int(memory_limit or 0)
        self.lock = threading.Lock()
        self.items: list[tuple] = []
        self.bytes = 0
        self.waiters: list[_Wait] = []

    def describe(self) -> str:
        return f"StagingArea '{self.name}'"

    def signature(self):
        return (self.dtypes, self.capacity, self.memory_limit)

    def _has_room(self, item) -> bool:
        if self.capacity > 0 and len(self.items) >= self.capacity:
            return False
        return self.memory_limit <= 0 or self.bytes + _nbytes(item) <= self.memory_limit

    def _output(self, w: _Wait, item) -> tuple:
        """(value, error) handing `item` to get/peek waiter `w`."""
        if len(item) != w.want:
            return None, errors.InvalidArgumentError(
                None, None, f"{self.describe()}: the element has {len(item)} components but "
                f"this {w.kind} expects {w.want}; put whole elements")
        return (item[0] if len(item) == 1 else item), None

    def _serve(self, w: _Wait):
        if w.kind == _PUT and self._has_room(w.item):
            self.items.append(w.item)
            self.bytes += _nbytes(w.item)
            return self._finish(w, None, None)
        if w.kind == _GET and self.items:
            item = self.items.pop(0)
            self.bytes -= _nbytes(item)
            return self._finish(w, *self._output(w, item))
        if w.kind == _PEEK and w.index < len(self.items):
            return self._finish(w, *self._output(w, self.items[w.index]))
        return None


    def check_item(self, values) -> tuple:
        item = tuple(np.array(v, copy=True) for v in values)
        if self.memory_limit > 0 and _nbytes(item) > self.memory_limit:
            raise errors.ResourceExhaustedError(
                None, None, f"Stage to {self.describe()}: the element is {_nbytes(item)} "
                f"bytes, more than the area's memory_limit of {self.memory_limit} bytes, so "
                "it could never be admitted; raise memory_limit")
        return item

    def size(self) -> int:
        with self.lock:
            return len(self.items)

    def clear(self) -> None:
        with self.lock:
            self.items = []
            self.bytes = 0
            fired = self._pump()
        self._fire(fired)


class _AreaKernel:
    """Finds the area named by ``shared_name`` (creating it on first use)."""

    def __init__(self, ctx, **attrs) -> None:
        self.resources = ctx.resources
        self.container = attrs.get("container", "") or ""
        self.name = attrs.get("shared_name", "") or ctx.op.name
        self.want = (attrs["dtypes"], attrs.get("capacity", 0), attrs.get("memory_limit", 0))

    def area(self) -> Area:
        # As in TensorFlow, the area does not pin its dtypes: a put may stage fewer
        # components than a get expects, and the get then fails (`UnstageOp`).
        return self.resources.lookup_or_create(
            self.container, self.name, lambda name: Area(name, *self.want))


@cpu_kernel("Stage", is_async=True)
class StageOp(_AreaKernel):
    def __call__(self, step, done, *values):
        area = self.area()
        area.wait(_Wait(step, done, _PUT, item=area.check_item(values)))


@cpu_kernel("Unstage", is_async=True)
class UnstageOp(_AreaKernel):
    def __call__(self, step, done):
        self.area().wait(_Wait(step, done, _GET, want=len(self.want[0])))


@cpu_kernel("StagePeek", is_async=True)
class StagePeekOp(_AreaKernel):
    def __call__(self, step, done, index):
        i = int(index)
        if i < 0:
            raise errors.InvalidArgumentError(
                None, None, f"StagePeek on staging area '{self.name}': index must be >= 0, "
                f"got {i}")
        self.area().wait(_Wait(step, done, _PEEK, index=i, want=len(self.want[0])))


@cpu_kernel("StageSize")
class StageSizeOp(_AreaKernel):
    def __call__(self):
        return np.asarray(self.area().size(), dtype=np.int32)


@cpu_kernel("StageClear")
class StageClearOp(_AreaKernel):
    def __call__(self):
        self.area().clear()
