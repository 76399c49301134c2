"""CPU kernels for the keyed staging areas (``MapStage`` ... ``OrderedMapClear``; ops in
`flowgraph/ops/map_staging_ops.py`).

State it keeps
--------------
A `MapArea` lives in the session's resource container under ``(container,
shared_name)``: the complete tuples by key (each a list with one array per component,
None once that component was taken), the incomplete ones by key, the bytes of the
complete ones, and one FIFO list of blocked waiters (stages waiting for room, takes and
peeks waiting for a key or for any tuple), all changed under one lock::

    stage(7, [0], a)     incomplete {7: [a, -]}
    stage(7, [1], b)     complete {7: [a, b]}
    unstage(7, [1]) -> b complete {7: [a, -]}     unstage(7, [0]) -> a   complete {}

Invariants
----------
* Waiters are served in arrival order after every change until nothing moves; each
  completes exactly once, its ``done`` called outside the lock (`QueueBase._fire`).
* A complete tuple leaves the map when its last component is taken; a stage of a key
  that is already complete changes nothing (as TensorFlow's).
* A waiter that gives up (deadline, cancelled step) leaves the list having taken nothing.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_staging import WaitingArea
from flowgraph.framework import errors
from flowgraph.ops.map_staging_ops import MAP_OPS

_STAGE, _TAKE, _PEEK, _ANY = "stage", "unstage", "peek", "unstage (no key)"


class _Wait:
    __slots__ = ("done", "indices", "item", "key", "kind", "pending", "step", "timer")

    def __init__(self, step, done, kind: str, key=None, indices=(), item=None) -> None:
        self.step, self.done, self.kind, self.key = step, done, kind, key
        self.indices, self.item = indices, item
        self.pending = True
        self.timer = None


def _nbytes(parts) -> int:
    return sum(int(p.nbytes) for p in parts if p is not None)


class MapArea(WaitingArea):
    """One keyed staging area: complete and incomplete tuples, and blocked waiters."""

    def __init__(self, name: str, ordered: bool, size: int, capacity: int,
                 memory_limit: int) -> None:
        self.name = name
        self.ordered = ordered
        self.size = size
        self.capacity = int(capacity or 0)
        self.memory_limit = int(memory_limit or 0)
        self.lock = threading.Lock()
        self.complete: dict[int, list] = {}
        self.incomplete: dict[int, list] = {}
        self.bytes = 0
        self.waiters: list[_Wait] = []

    def describe(self) -> str:
        return f"{'Ordered' if self.ordered else ''}MapStagingArea '{self.name}'"

    # -- the engine ---------------------------------------------------------------------
    def _has_room(self, parts) -> bool:
        if self.capacity > 0 and len(self.complete) >= self.capacity:
            return False
        return self.memory_limit <= 0 or self.bytes + _nbytes(parts) <= self.memory_limit

    def _take(self, w: _Wait, key: int, remove: bool):
        """(value, error) for take/peek waiter `w` of the components of `key`."""
        parts = self.complete[key]
        missing = [i for i in w.indices if parts[i] is None]
        if missing:
            return None, errors.InvalidArgumentError(
                None, None, f"{w.kind} on {self.describe()}: the tensors at indices "
                f"{missing} of key {key} were already taken")
        values = [parts[i] for i in w.indices]
        if remove:
            self.bytes -= _nbytes(values)
            for i in w.indices:
                parts[i] = None
            if all(p is None for p in parts):
                del self.complete[key]
        if w.kind == _ANY:
            return (np.asarray(key, np.int64), *values), None
        return (values[0] if len(values) == 1 else tuple(values)), None

    def _first_key(self):
        if not self.complete:
            return None
        return min(self.complete) if self.ordered else next(reversed(self.complete))

    def _serve(self, w: _Wait):
        if w.kind == _STAGE and (w.key in self.complete or self._has_room(w.item)):
            if w.key not in self.complete:
                self.complete[w.key] = w.item
                self.bytes += _nbytes(w.item)
            return self._finish(w, None, None)
        if w.kind in (_TAKE, _PEEK) and w.key in self.complete:
            return self._finish(w, *self._take(w, w.key, w.kind == _TAKE))
        if w.kind == _ANY and self.complete:
            return self._finish(w, *self._take(w, self._first_key(), True))
        return None

    # -- operations ---------------------------------------------------------------------
    def stage(self, step, done, key: int, indices: list, values) -> None:
        """Stage `values` at `indices` of `key`: complete tuples wait for room, partial
        ones join (or complete) the incomplete tuple of `key`."""
        arrays = [np.array(v, copy=True) for v in values]
        with self.lock:
            parts = self.incomplete.get(key)
            if parts is None and len(set(indices)) == self.size:
                item = [None] * self.size
                for i, a in zip(indices, arrays):
                    item[i] = a
                if self.memory_limit > 0 and _nbytes(item) > self.memory_limit:
                    raise errors.ResourceExhaustedError(
                        None, None, f"MapStage to {self.describe()}: the tuple is "
                        f"{_nbytes(item)} bytes, more than the memory_limit of "
                        f"{self.memory_limit}, so it could never be admitted")
                w = _Wait(step, done, _STAGE, key=key, item=item)
            else:
                parts = parts if parts is not None else [None] * self.size
                for i, a in zip(indices, arrays):
                    if parts[i] is not None:
                        raise errors.InvalidArgumentError(
                            None, None, f"The tensor for index '{i}' for key '{key}' was "
                            f"already initialized '{self.size}'.")
                    parts[i] = a
                if any(p is None for p in parts):
                    self.incomplete[key] = parts
                    w = None
                else:
                    self.incomplete.pop(key, None)
                    w = _Wait(step, done, _STAGE, key=key, item=parts)
        if w is None:
            done(None)
        else:
            self.wait(w)

    def counts(self) -> tuple[int, int]:
        with self.lock:
            return len(self.complete), len(self.incomplete)

    def clear(self) -> None:
        with self.lock:
            self.complete.clear()
            self.incomplete.clear()
            self.bytes = 0
            fired = self._pump()
        self._fire(fired)


# -- kernels ----------------------------------------------------------------------------
class _MapKernel:
    """Finds the area named by ``shared_name`` (creating it on first use)."""

    ordered = False

    def __init__(self, ctx, **attrs) -> None:
        self.resources = ctx.resources
        self.container = attrs.get("container", "") or ""
        self.name = attrs.get("shared_name", "") or ctx.op.name
        self.n = len(attrs["dtypes"])
        self.op_type = ctx.op.type
        self.args = (attrs.get("capacity", 0), attrs.get("memory_limit", 0))

    def area(self) -> MapArea:
        area = self.resources.lookup_or_create(
            self.container, self.name,
            lambda name: MapArea(name, self.ordered, self.n, *self.args))
        if not isinstance(area, MapArea) or area.ordered != self.ordered:
            raise errors.InvalidArgumentError(
                None, None, f"{self.op_type}: shared resource '{self.name}' exists but is "
                f"not {'an ordered' if self.ordered else 'a'} map staging area; use another "
                "shared_name")
        return area

    def indices(self, indices, area: MapArea) -> list:
        idx = [int(i) for i in np.asarray(indices).reshape(-1)]
        bad = [i for i in idx if not 0 <= i < area.size]
        if bad or len(set(idx)) != len(idx):
            raise errors.InvalidArgumentError(
                None, None, f"{self.op_type} on {area.describe()}: indices {idx} must be "
                f"distinct and in [0, {area.size})")
        return idx


class _Stage(_MapKernel):
    def __call__(self, step, done, key, indices, *values):
        area = self.area()
        idx = self.indices(indices, area)
        if len(idx) != len(values):
            raise errors.InvalidArgumentError(
                None, None, f"{self.op_type}: {len(idx)} indices but {len(values)} values")
        area.stage(step, done, int(key), idx, values)


class _Unstage(_MapKernel):
    kind = _TAKE

    def __call__(self, step, done, key, indices):
        area = self.area()
        area.wait(_Wait(step, done, self.kind, key=int(key),
                        indices=self.indices(indices, area)))


class _Peek(_Unstage):
    kind = _PEEK


class _UnstageNoKey(_MapKernel):
    def __call__(self, step, done, indices):
        area = self.area()
        area.wait(_Wait(step, done, _ANY, indices=self.indices(indices, area)))


class _Size(_MapKernel):
    def __call__(self):
        return np.asarray(self.area().counts()[0], np.int32)


class _IncompleteSize(_MapKernel):
    def __call__(self):
        return np.asarray(self.area().counts()[1], np.int32)


class _Clear(_MapKernel):
    def __call__(self):
        self.area().clear()


_KERNELS = {"Stage": _Stage, "Unstage": _Unstage, "UnstageNoKey": _UnstageNoKey,
            "Peek": _Peek, "Size": _Size, "IncompleteSize": _IncompleteSize,
            "Clear": _Clear}
_ASYNC = {"Stage", "Unstage", "UnstageNoKey", "Peek"}
assert set(_KERNELS) == set(MAP_OPS)

for _prefix, _ordered in (("Map", False), ("OrderedMap", True)):
    for _name, _base in _KERNELS.items():
        _cls = type(f"{_prefix}{_name}Op", (_base,), {"ordered": _ordered})
        cpu_kernel(f"{_prefix}{_name}", is_async=_name in _ASYNC)(_cls)
