"""The session wrappers a monitored session stacks on the raw session: forwarding,
recovery from preemption, and coordination with queue-runner threads.

    _RecoverableSession   on AbortedError/UnavailableError (a preempted task) close
    │                     everything, create a new session (restoring the latest
    │                     checkpoint) and retry the same run() call; creation itself
    │                     is retried (pauses of 0.05 s doubling to 0.5 s) until
    │                     `max_wait_secs`, then DeadlineExceededError
    _CoordinatedSession   owns the Coordinator and its queue-runner threads; an
    │                     exception reported by a thread is raised from run()
    _HookedSession        (`flowgraph.train.hooked_session`) the hooks around each run()
    Session               the raw session

Each layer's `should_stop` is its own `_check_stop` or the wrapped layer's.

Example
-------
>>> class _Raw:
...     graph = None
...     def run(self, fetches, *args):
...         return fetches
>>> _WrappedSession(_Raw()).run(3), _WrappedSession(_Raw()).should_stop()
(3, False)
"""

from __future__ import annotations

import logging
import time

__all__ = ["StepContext", "raise_thread_preemption"]

logger = logging.getLogger("tensorflow")


def _preemption_errors() -> tuple:
    from flowgraph.framework import errors

    return (errors.AbortedError, errors.UnavailableError)


_PREEMPTION_ERRORS = _preemption_errors()
_DEFAULT_MAX_WAIT_SECS = 7200.0
_RETRY_FIRST_S = 0.05  # first pause between session-creation attempts; doubles
_RETRY_MAX_S = 0.5  # a returning ps is noticed within this (plus gRPC's reconnect)


class StepContext:
    """What `MonitoredSession.run_step_fn` passes to `step_fn`: the raw `session`,
    `run_with_hooks(...)` and `request_stop()`."""

    def __init__(self, session, run_with_hooks_fn) -> None:
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        raise StopIteration("step_fn has requested the iterations to stop.")


class _WrappedSession:
    """Forwards to a wrapped session; `should_stop` combines this layer's `_check_stop`
    with the wrapped layer's."""

    def __init__(self, sess) -> None:
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self) -> bool:
        return False

    def close(self) -> None:
        if self._sess:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                logger.warning("An error occurred when attempting to close the session. This "
                               "may be due to a preemption in a connected worker or parameter "
                               "server. Error: %s", e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        run_with_hooks = run_with_hooks or self.run
        return step_fn(StepContext(raw_session, run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Recreates the session whenever a preemption error interrupts a call."""

    def __init__(self, sess_creator, max_wait_secs: float = _DEFAULT_MAX_WAIT_SECS) -> None:
        self._sess_creator = sess_creator
        self._max_wait_secs = max_wait_secs
        super().__init__(self._create_session())

    def _create_session(self):
        """A new session; preemption errors (a task down, restarting or not started
        yet) are retried with growing pauses until `max_wait_secs` have passed."""
        from flowgraph.distributed.remote_session import no_start_wait
        from flowgraph.framework import errors

        start, pause, attempts = time.monotonic(), _RETRY_FIRST_S, 0
        while True:
            attempts += 1
            try:
                # (it retries for max_wait_secs itself: sessions must not wait inside)
                with no_start_wait():
                    return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                left = self._max_wait_secs - (time.monotonic() - start)
                if left <= 0:
                    raise errors.DeadlineExceededError(
                        None, None,
                        f"MonitoredSession could not create a session within "
                        f"max_wait_secs={self._max_wait_secs:g} s ({attempts} attempts); the "
                        f"last one failed with {type(e).__name__}: {e}") from e
                logger.info("An error was raised while a session was being created. This may "
                            "be due to a preemption of a connected worker or parameter server. "
                            "A new session will be created in %.2f s. Error: %s",
                            min(pause, left), e)
                time.sleep(min(pause, left))
                pause = min(2 * pause, _RETRY_MAX_S)

    def _check_stop(self) -> bool:
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except _PREEMPTION_ERRORS as e:
            logger.info("An error was raised while considering whether the session is "
                        "complete. This may be due to a preemption in a connected worker or "
                        "parameter server. The current session will be closed and a new "
                        "session will be created. Error: %s", e)
            self.close()
            self._sess = self._create_session()
            return False  # a fresh session: keep going
        except Exception:  # should_stop reports, it does not raise
            return True

    def _on_preemption(self, e) -> None:
        logger.info("An error was raised. This may be due to a preemption in a connected "
                    "worker or parameter server. The current session will be closed and a new "
                    "session will be created. Error: %s", e)
        self.close()
        self._sess = None

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict, options, run_metadata)
            except _PREEMPTION_ERRORS as e:
                self._on_preemption(e)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run_step_fn(step_fn, self._sess_creator.tf_sess,
                                              self._sess.run)
            except _PREEMPTION_ERRORS as e:
                self._on_preemption(e)


class _CoordinatedSession(_WrappedSession):
    """Stops when the coordinator does, and raises the exceptions its threads report."""

    def __init__(self, sess, coord, stop_grace_period_secs: float = 120) -> None:
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        # request_stop(ex) records `ex` and sets the stop flag together.
        if not self._coord.should_stop():
            return False
        self._coord.raise_requested_exception()
        return True

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                _WrappedSession.close(self)
            except Exception:  # join() already reported the useful error
                pass

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        try:
            return self._sess.run(fetches, feed_dict, options, run_metadata)
        except _PREEMPTION_ERRORS:
            raise
        except Exception:
            raise_thread_preemption(self._coord)
            raise


def raise_thread_preemption(coord) -> None:
    """Called while a run's error is handled: a preemption error a thread reported to
    `coord` may be the root cause, and is raised instead (to be recovered from); any
    other reported error leaves the run's own error to be raised."""
    try:
        coord.raise_requested_exception()
    except _PREEMPTION_ERRORS:
        raise
    except Exception:  # the original error is the one to report
        pass
