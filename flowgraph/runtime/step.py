"""What one step of a run carries: its id, options, rendezvous and cancellation.

Kernels flagged ``needs_step`` receive the `StepContext` as their first argument (queues
wait on its cancellation event, `_Send`/`_Recv` meet in its `Rendezvous`); the session
creates one per `run` and cancels it on a timeout (the `Watchdog` thread) or when the
session closes. A `FastRun` is the session's shortcut for repeating a plain run:
everything one signature needs, resolved once, so that a repeated run does a few Python
operations before the executor takes over.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import operator
import threading
import time
from typing import Any

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.resources import VariableState
from flowgraph.runtime import _executor
from flowgraph.runtime.fetch import fetch_key

logger = logging.getLogger("tensorflow")


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


class Watchdog:
    """One daemon thread that fires step deadlines (``timeout_in_ms``).

    Entries are ``[deadline, seq, fn, arg]`` in a heap; cancelling clears ``fn`` and the
    heap is compacted when more than half of it is cancelled, so a session with
    ``operation_timeout_in_ms`` set pays a heap push and a flag per run, not a thread.

    >>> fired = threading.Event()
    >>> entry = watchdog.schedule(0.01, lambda event: event.set(), fired)
    >>> fired.wait(5)
    True
    """

    def __init__(self) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._heap: list = []
        self._seq = itertools.count()
        self._cancelled = 0
        self._thread: threading.Thread | None = None

    def schedule(self, delay_s: float, fn, arg) -> list:
        entry = [time.monotonic() + delay_s, next(self._seq), fn, arg]
        with self._cv:
            heapq.heappush(self._heap, entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="flowgraph-watchdog")
                self._thread.start()
            if self._heap[0] is entry:
                self._cv.notify()
        return entry

    def cancel(self, entry: list) -> None:
        with self._cv:
            if entry[2] is None:
                return
            entry[2] = entry[3] = None
            self._cancelled += 1
            if self._cancelled > 64 and self._cancelled * 2 > len(self._heap):
                self._heap = [e for e in self._heap if e[2] is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _loop(self) -> None:
        heap = None
        while True:
            with self._cv:
                heap = self._heap
                while heap and heap[0][2] is None:
                    heapq.heappop(heap)
                    self._cancelled = max(0, self._cancelled - 1)
                if not heap:
                    self._cv.wait()
                    continue
                wait = heap[0][0] - time.monotonic()
                if wait > 0:
                    self._cv.wait(wait)
                    continue
                entry = heapq.heappop(heap)
                fn, arg = entry[2], entry[3]
                entry[2] = entry[3] = None
            try:
                fn(arg)
            except Exception as e:  # pragma: no cover - cancel callbacks do not raise
                logger.error("flowgraph watchdog callback failed: %r", e)


watchdog = Watchdog()  # the process's one deadline thread


step_ids = itertools.count(1)  # one id per step of any session in the process


def deadline_error(timeout_ms: int) -> errors.DeadlineExceededError:
    """The error a step cancelled by its deadline fails with."""
    return errors.DeadlineExceededError(
        None, None, f"Timed out after {timeout_ms} ms waiting for the step to finish "
        "(RunOptions.timeout_in_ms or ConfigProto.operation_timeout_in_ms)")


class FastRun:
    """What a repeated `Session.run` of one signature needs, resolved once.

    A signature is the fetch structure plus the feed_dict's keys in order. The session
    keeps one `FastRun` per signature whose plan needs nothing but feeding, executing and
    fetching (no memory schedule, shape variants, device transfers or deadline; a fetched
    variable is read as the general path reads it), and uses it only for runs without
    options or run metadata; anything else takes the general path (a caller that keeps
    its own, `after_run`, may give `run` a deadline). Feeds are still
    checked: an ndarray with the dtype and shape that were accepted before passes as is,
    any other value goes through the session's full conversion and its errors.

    >>> import numpy as np
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [2])
    >>> y = x * 2.0
    >>> with tf.Session() as sess:
    ...     first = sess.run(y, {x: np.ones(2, np.float32)})  # general path; caches one
    ...     again = sess.run(y, {x: np.ones(2, np.float32)})  # this signature's FastRun
    >>> again
    array([2., 2.], dtype=float32)
    """

    __slots__ = ("deref", "feed_checks", "feed_slots", "fetch_slots", "plan", "rebuild",
                 "rendezvous")

    def __init__(self, cp, feed_tensors, feed_values, rebuild) -> None:
        self.plan = cp.plan
        self.feed_slots = [cp.feed_slots[t] for t in feed_tensors]
        self.fetch_slots = cp.fetch_slots
        self.rendezvous = cp.needs_rendezvous
        self.deref = tuple(i for i, deref in enumerate(cp.deref_fetch) if deref)
        # (tensor, dtype, shape) of each feed as the session accepted it last; a string
        # (object) feed's dtype is None so that each run converts it (str -> UTF-8 bytes)
        self.feed_checks = [(t, None if v.dtype == object else v.dtype, v.shape)
                            for t, v in zip(feed_tensors, feed_values)]
        # How the fetch structure is rebuilt from the fetched values: an int (one tensor:
        # that value), or a callable
        self.rebuild = rebuild

    @staticmethod
    def rebuilder(fetches, mapper):
        """How a `FastRun` rebuilds `fetches` from the values of ``mapper.unique_tensors``:
        an index for one tensor, a direct pick for a flat list or tuple of tensors and
        operations (None for an operation), else the mapper's own rebuild."""
        kind = type(fetches)
        if kind is Tensor:
            return 0
        if (kind is list or kind is tuple) and fetches and all(
                type(f) is Tensor or type(f) is Operation for f in fetches):
            index = {t: i for i, t in enumerate(mapper.unique_tensors)}
            none = len(index)  # the None appended after the values
            picks = [index.get(f, none) if type(f) is Tensor else none for f in fetches]
            if len(picks) == 1:
                (only,) = picks

                def rebuild(values):
                    values.append(None)
                    return kind([values[only]])
            else:
                pick = operator.itemgetter(*picks)

                def rebuild(values):
                    values.append(None)
                    return kind(pick(values))
            return rebuild
        return mapper.rebuild

    @staticmethod
    def usable(cp, feed_tensors, feed_values) -> bool:
        """Whether plan `cp`, fed these (converted) values, can run through a `FastRun`."""
        return (cp.memory_schedule is None and cp.measured_sizes is None
                and getattr(cp, "shape_variants", None) is None
                and not cp.async_devices and not cp.fetch_to_host
                and all(type(v) is np.ndarray for v in feed_values)
                and len(set(feed_tensors)) == len(feed_tensors))

    @staticmethod
    def after_run(session, fetches, feed_dict: dict) -> FastRun | None:
        """The `FastRun` that repeats ``session.run(fetches, feed_dict)``, which just ran
        (with or without options), for feeds of the same keys, dtypes and shapes: the plan
        the session ran (the variant for these shapes, for a plan with shape variants),
        when it needs nothing beyond feeding, executing and fetching; else None.

        Why: `Session` keeps a `FastRun` only for plain runs of plans without shape
        variants; a caller that runs a signature many times with a deadline, or with
        shapes its graph leaves unknown (a task's stage, `flowgraph.distributed`), keys
        the result by the fed shapes itself and calls `run` directly.

        >>> import numpy as np
        >>> import flowgraph as tf
        >>> x = tf.placeholder(tf.float32, [None])
        >>> y = tf.reduce_sum(x)
        >>> with tf.Session() as sess:
        ...     feeds = {x: np.ones(3, np.float32)}
        ...     _ = sess.run(y, feeds, options=tf.RunOptions(timeout_in_ms=1000))
        ...     fast = FastRun.after_run(sess, y, feeds)
        ...     float(fast.run(sess, feeds, timeout_ms=1000))
        3.0
        """
        key = fetch_key(fetches)
        if key is None or feed_dict is None or type(feed_dict) is not dict:
            return None
        feed_tensors, feed_values = session._process_feeds(feed_dict)
        plan = session._plans.get((key, feed_tensors))
        mapper = session._fetch_mappers.get(key)
        if plan is None or mapper is None:
            return None
        variants = getattr(plan, "shape_variants", None)
        if variants is not None:
            plan = variants.plans.get(tuple(map(np.shape, feed_values)))
            if plan is None:
                return None
        if not session._fast_path_ok(plan, feed_dict, feed_tensors, feed_values):
            return None
        return FastRun(plan, feed_tensors, feed_values, FastRun.rebuilder(fetches, mapper))

    @staticmethod
    def may_run(session) -> bool:
        """Whether `session` may run a `FastRun` now: it is open."""
        return not session._closed

    def run_limited(self, session, feed_dict, timeout_ms: int = 0):
        """`run`, under the thread limits `Session.run` would apply to this run (a
        backend's contention policy, ``intra_op_parallelism_threads``), for callers that
        take a `FastRun` outside `Session.run` (`distributed.stage_graph`)."""
        limits = [limit for backend in session._backends
                  if (limit := backend.intra_op_limit(session._intra_op)) is not None]
        if not limits:
            return self.run(session, feed_dict, timeout_ms)
        with contextlib.ExitStack() as stack:
            for limit in limits:
                stack.enter_context(limit)
            return self.run(session, feed_dict, timeout_ms)

    def run(self, session, feed_dict, timeout_ms: int = 0):
        """Run the step for `session`, feeding `feed_dict` (None or a dict whose keys are
        this signature's); return the rebuilt fetch structure. With `timeout_ms` > 0 the
        step is cancelled with `DeadlineExceededError` after that long, as a run with
        ``RunOptions(timeout_in_ms=timeout_ms)`` is."""
        values = []
        if feed_dict:
            for (t, dtype, shape), value in zip(self.feed_checks, feed_dict.values()):
                if type(value) is not np.ndarray or value.dtype is not dtype \
                        or value.shape != shape:
                    value = session._convert_feed(t, value)
                values.append(value)
        context = StepContext(next(step_ids), session, None, self.rendezvous)
        step = _executor.Step(self.plan, context, session._pool, False)
        context.step = step
        alarm = watchdog.schedule(timeout_ms / 1000.0, context.cancel, deadline_error(
            timeout_ms)) if timeout_ms > 0 else None
        live = session._live_steps
        live.add(context)
        try:
            out = step.run_fetch(self.feed_slots, values, self.fetch_slots)
        finally:
            live.discard(context)
            context.step = None  # break the step <-> context cycle: free values now
            context.cancelled = None
            if alarm is not None:
                watchdog.cancel(alarm)
        for i in self.deref:  # a fetched variable (the global step): its value now
            value = out[i]
            if isinstance(value, VariableState):
                value = np.array(value.read())
                out[i] = value[()] if value.ndim == 0 else value
        rebuild = self.rebuild
        return out[rebuild] if type(rebuild) is int else rebuild(out)
