"""What one step of a run carries: its id, options, rendezvous and cancellation.

Kernels flagged ``needs_step`` receive the `StepContext` as their first argument (queues
wait on its cancellation event, `_Send`/`_Recv` meet in its `Rendezvous`); the session
creates one per `run` and cancels it on a timeout or when the session closes.
"""

from __future__ import annotations

import threading
from typing import Any


class Rendezvous:
    """Per-step mailbox for `_Send`/`_Recv` pairs, keyed by tensor and devices."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, Any] = {}
        self._waiters: dict[str, Any] = {}

    def send(self, key: str, value) -> None:
        with self._lock:
            waiter = self._waiters.pop(key, None)
            if waiter is None:
                self._values[key] = value
                return
        waiter(value)

    def recv(self, key: str, done) -> None:
        with self._lock:
            if key in self._values:
                value = self._values.pop(key)
            else:
                self._waiters[key] = done
                return
        done(value)


_cancel_lock = threading.Lock()


class StepContext:
    """What kernels flagged ``needs_step`` receive: step id, options, rendezvous.

    It is also the step's cancellation point: `cancel(exc)` (a timeout, a closed session)
    aborts the executor `Step`, fails every async kernel still in flight (so the caller
    stops waiting for a completion that may never come), and sets `cancellation_event()`,
    on which a blocking kernel can wait instead of sleeping blindly.
    """

    __slots__ = ("_event", "cancelled", "options", "pending_async", "rendezvous", "session",
                 "step", "step_id")

    def __init__(self, step_id: int, session, options, rendezvous: bool = True) -> None:
        self.step_id = step_id
        self.session = session
        self.options = options
        self.rendezvous = Rendezvous() if rendezvous else None
        self.step = None
        self.cancelled: BaseException | None = None
        self.pending_async: list = []
        self._event: threading.Event | None = None

    def cancellation_event(self) -> threading.Event:
        """An Event set when the step is cancelled (created on first use)."""
        ev = self._event
        if ev is None:
            with _cancel_lock:
                if self._event is None:
                    self._event = threading.Event()
                    if self.cancelled is not None:
                        self._event.set()
                ev = self._event
        return ev

    def cancel(self, exc: BaseException) -> None:
        """Abort the step with `exc` (the first error wins)."""
        with _cancel_lock:
            if self.cancelled is None:
                self.cancelled = exc
            ev = self._event
        if ev is not None:
            ev.set()
        step = self.step
        if step is not None:
            step.cancel(exc)
        for done in list(self.pending_async):
            done(None, exc)
