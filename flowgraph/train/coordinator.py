"""`tf.train.Coordinator`: stop a group of threads together, and report their errors.

Threads poll `should_stop()`; any thread may `request_stop(ex)`; the main thread
`join`s them, and the first reported exception is re-raised there. Exceptions of the
`clean_stop_exception_types` (default: `OutOfRangeError`, the "input is exhausted"
signal) stop the threads without being reported.

Example
-------
>>> import threading
>>> coord = Coordinator()
>>> def worker():
...     with coord.stop_on_exception():
...         while not coord.should_stop():
...             coord.request_stop()
>>> threads = [threading.Thread(target=worker) for _ in range(2)]
>>> for t in threads:
...     t.start()
>>> coord.join(threads)
>>> coord.should_stop()
True
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

from flowgraph.framework import errors

__all__ = ["Coordinator", "LooperThread"]

logger = logging.getLogger("tensorflow")


class Coordinator:
    """Coordinates the termination of a set of threads.

    Parameters
    ----------
    clean_stop_exception_types : tuple of exception types, optional
        Exceptions that request a stop without being re-raised by `join`
        (default: ``(tf.errors.OutOfRangeError,)``).
    """

    def __init__(self, clean_stop_exception_types=None) -> None:
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            value = ex[1]
        else:
            value = ex
        if isinstance(value, self._clean_stop_exception_types):
            return None
        return ex

    @staticmethod
    def _as_exc_info(ex):
        if isinstance(ex, tuple):
            if len(ex) != 3 or ex[1] is None:
                raise ValueError(f"ex must be an exception or a sys.exc_info() tuple, got {ex!r}")
            return ex
        if isinstance(ex, BaseException):
            return (type(ex), ex, ex.__traceback__)
        raise TypeError(f"ex must be an exception or a sys.exc_info() tuple, got {ex!r}")

    def request_stop(self, ex=None) -> None:
        """Ask every coordinated thread to stop; `ex` (if any) is re-raised by `join`.

        Only the first exception is kept. After `join`, a non-clean `ex` is raised
        immediately, since nobody would see it otherwise.
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if ex is not None:
                    _type, value, tb = self._as_exc_info(ex)
                    raise value.with_traceback(tb)
                return
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    self._exc_info_to_raise = self._as_exc_info(ex)
                    logger.info("Error reported to Coordinator: %r", self._exc_info_to_raise[1])
                self._stop_event.set()

    def clear_stop(self) -> None:
        """Forget the stop request and its exception, so the threads can run again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop has been requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager: an exception inside it requests a stop (and is swallowed).

        Example
        -------
        >>> coord = Coordinator()
        >>> with coord.stop_on_exception():
        ...     raise RuntimeError("input broke")
        >>> coord.should_stop()
        True
        """
        try:
            yield
        except BaseException as e:  # the coordinator reports it from join()
            self.request_stop(e)

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Block until a stop is requested (or `timeout` seconds pass); return should_stop."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Have `join` wait for `thread` too."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs: float = 120,
             ignore_live_threads: bool = False) -> None:
        """Wait for the threads to end; re-raise the first reported exception.

        Waits until every thread (registered ones plus `threads`) has ended or a stop
        is requested; then gives them `stop_grace_period_secs` to finish. A thread still
        alive after that is a RuntimeError naming it (a warning when
        `ignore_live_threads`), unless an exception was reported, which wins.
        """
        with self._lock:
            threads = set(self._registered_threads) | set(threads or ())
        threads = list(threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            t.join(remaining)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        if stragglers:
            message = f"Coordinator stopped with threads still running: {' '.join(stragglers)}"
            if ignore_live_threads:
                logger.warning(message)
            else:
                raise RuntimeError(message)

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raise the exception reported with `request_stop`, if any."""
        with self._lock:
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])

    def loop(self, timer_interval_secs: float, target, args=None, kwargs=None):
        """Start a `LooperThread` calling `target` every `timer_interval_secs` seconds."""
        looper = LooperThread(self, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper


class LooperThread(threading.Thread):
    """A thread that calls `target` (or `run_loop`) repeatedly until the coordinator stops.

    With ``timer_interval_secs=None`` the target is called back to back; otherwise at
    most once per interval. Exceptions are reported to the coordinator.
    """

    def __init__(self, coord: Coordinator, timer_interval_secs, target=None, args=None,
                 kwargs=None) -> None:
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord!r}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        if target is not None:
            self._run_loop = lambda: target(*self._args, **self._kwargs)
        else:
            self._run_loop = self.run_loop
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self._run_loop()
            else:
                next_time = time.monotonic()  # as TensorFlow: the first call right away
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self._run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once before the loop (override in subclasses)."""

    def stop_loop(self) -> None:
        """Called once after the loop (override in subclasses)."""

    def run_loop(self) -> None:
        """One iteration (override in subclasses when no `target` is given)."""
        raise NotImplementedError("LooperThread needs a target or a run_loop override")
