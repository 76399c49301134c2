"""The hook protocol of monitored sessions (TF1's ``tf.train.SessionRunHook``).

A hook sees the life of a `MonitoredSession`:

    begin()                           graph still open: create ops here
    after_create_session(sess, coord) once per (re)created session
    before_run(run_context)  -> SessionRunArgs | None     every run() call
    after_run(run_context, run_values)                     every run() call
    end(session)                      on a clean close (not after an error)

Whatever `before_run` returns is merged into the same `Session.run` call as the
caller's fetches, and the hook receives its own results in ``run_values.results``.

Example
-------
>>> import flowgraph as tf
>>> class CountRuns(tf.train.SessionRunHook):
...     def begin(self):
...         self.count = 0
...     def after_run(self, run_context, run_values):
...         self.count += 1
...         if self.count == 3:
...             run_context.request_stop()
>>> hook = CountRuns()
>>> with tf.Graph().as_default():
...     x = tf.constant(1.0)
...     with tf.train.MonitoredSession(hooks=[hook]) as sess:
...         while not sess.should_stop():
...             _ = sess.run(x)
>>> hook.count
3
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]


class SessionRunHook:
    """Base class of hooks; every method is a no-op, override the ones you need."""

    def begin(self) -> None:
        """Called once before the session is created; the graph can still be changed."""

    def after_create_session(self, session, coord) -> None:
        """Called each time a session is created (again after a recovery), after
        initialization/restore and before the first `before_run`. The graph is
        finalized by then."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Called before each `run`; return `SessionRunArgs` to add fetches, feeds or
        options to the same `Session.run` call, or None."""
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each successful `run` with the results of this hook's fetches."""

    def end(self, session) -> None:
        """Called when the monitored session is closed without an error (the
        session can still run ops). Not called when `run` raised, except on
        OutOfRangeError/StopIteration leaving a ``with`` block."""


class SessionRunArgs(NamedTuple):
    """What a hook adds to a `run` call: `fetches` (any fetch structure, or None),
    `feed_dict` and `options` (a `RunOptions`, merged field-wise with the others)."""

    fetches: Any
    feed_dict: dict | None = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What a hook gets back: `results` (its fetches' values, or None if it fetched
    nothing), the `options` the step ran with and the step's `run_metadata`."""

    results: Any
    options: Any
    run_metadata: Any


class SessionRunContext:
    """The `run` call being made, handed to `before_run` and `after_run`.

    Parameters
    ----------
    original_args : SessionRunArgs
        The caller's ``fetches`` and ``feed_dict``.
    session : Session
        The underlying session (do not call `run` on it from `before_run`).
    """

    __slots__ = ("_original_args", "_session", "_stop_requested")

    def __init__(self, original_args: SessionRunArgs, session) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        """The caller's arguments, as `SessionRunArgs(fetches, feed_dict)`."""
        return self._original_args

    @property
    def session(self):
        """The raw session; usable from `after_run` to run extra ops."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        """True once a hook called `request_stop()` during this run."""
        return self._stop_requested

    def request_stop(self) -> None:
        """Ask the monitored session to stop: `should_stop()` is True after this run."""
        self._stop_requested = True
