"""CPU kernels for `tf.CriticalSection`'s mutex.

State it keeps
--------------
A `_Mutex` in the session's resource container: ``held`` and a FIFO of waiting lock
attempts, under one lock. ``MutexLock`` is asynchronous: it takes the mutex or parks
its ``done`` callback; ``ConsumeMutexLock`` releases the mutex and hands it to the
next waiter. A held lock that its step never consumed (the step failed or was
cancelled) is released when its value is freed, as TensorFlow frees it with the lock
tensor.
"""

from __future__ import annotations

import collections
import threading

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


class _Mutex:
    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.held = False
        self.waiters: collections.deque = collections.deque()

    def acquire(self, done) -> None:
        with self.lock:
            if not self.held:
                self.held = True
                granted = True
            else:
                self.waiters.append(done)
                granted = False
        if granted:
            done(_Held(self))

    def release(self) -> None:
        with self.lock:
            if self.waiters:
                nxt = self.waiters.popleft()
            else:
                self.held = False
                nxt = None
        if nxt is not None:
            nxt(_Held(self))

    def close_resource(self) -> None:
        with self.lock:
            waiters, self.waiters = list(self.waiters), collections.deque()
        for done in waiters:
            done(None, errors.CancelledError(None, None, f"Mutex '{self.name}' was destroyed"))


class _Held:
    """The value of a `MutexLock` output: proof of holding the mutex, released once."""

    __slots__ = ("mutex", "released")

    def __init__(self, mutex: _Mutex) -> None:
        self.mutex = mutex
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.mutex.release()

    def __del__(self) -> None:
        # A lock nobody consumed (its step failed or was cancelled) is freed with its
        # value, as TensorFlow frees it with the lock tensor.
        self.release()


@cpu_kernel("MutexV2")
class MutexOp:
    def __init__(self, ctx, **attrs) -> None:
        self.resources = ctx.resources
        self.container = attrs.get("container", "") or ""
        self.name = attrs.get("shared_name", "") or ctx.op.name

    def __call__(self):
        return self.resources.lookup_or_create(self.container, self.name, _Mutex)


@cpu_kernel("MutexLock", is_async=True)
def mutex_lock(step, done, mutex):
    mutex.acquire(done)


@cpu_kernel("ConsumeMutexLock")
def consume_mutex_lock(held):
    if isinstance(held, _Held):
        held.release()
