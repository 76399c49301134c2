"""Monitored sessions: a `Session` with hooks, initialization, queue runners and
recovery, as TF 1.15's ``tf.train.MonitoredSession`` and friends.

A monitored session is a stack of wrappers around the raw session, outermost first,
each in the module that holds its one job:

    _RecoverableSession   recreate the session after a preemption      session_wrappers
    _CoordinatedSession   the Coordinator and its queue-runner threads  session_wrappers
    _HookedSession        the hooks around each run()                   hooked_session
    Session               the raw session, from a SessionCreator        session_manager
                          (ChiefSessionCreator: restore or initialize;
                          WorkerSessionCreator: wait for the chief)

A quiet step (no hook due, no feeds or options) skips the middle layers and does
their work itself (`flat_run`).

Creating the monitored session calls every hook's `begin()`, finalizes the graph
(`Scaffold.finalize`), creates the session, starts queue runners, then calls every
hook's `after_create_session()` (again after each recovery). Closing it without an
error calls every hook's `end()`, then stops the threads and closes the session; the
graph is un-finalized if it was not finalized before.

This module builds the stack (`MonitoredSession`, `SingularMonitoredSession`,
`MonitoredTrainingSession` with TensorFlow's default hooks); the wrappers' names stay
importable from here.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = step.assign_add(1)
...     with tf.train.MonitoredTrainingSession(
...             hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
...         while not sess.should_stop():
...             value = sess.run(train)
>>> int(value)
5
"""

from __future__ import annotations

import inspect
import logging

from flowgraph.train.flat_run import LAYERED, FlatPath
from flowgraph.train.hooked_session import _HookedSession, _overrides  # noqa: F401
from flowgraph.train.scaffold import Scaffold
from flowgraph.train.session_manager import (
    ChiefSessionCreator,
    SessionCreator,
    WorkerSessionCreator,
)
from flowgraph.train.session_wrappers import (  # noqa: F401  (the old import paths)
    _DEFAULT_MAX_WAIT_SECS,
    _PREEMPTION_ERRORS,
    _RETRY_FIRST_S,
    _RETRY_MAX_S,
    StepContext,
    _CoordinatedSession,
    _RecoverableSession,
    _WrappedSession,
)

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
]

logger = logging.getLogger("tensorflow")


USE_DEFAULT = object()
_WORKER_POLL_S = 0.2  # a non-chief's readiness polls (TensorFlow sleeps 30 s)


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, starts queue runners, tells the hooks, and stacks the
    hooked and coordinated wrappers on top."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs: float) -> None:
        self._session_creator = session_creator
        self._hooks = hooks
        self.coord = None
        self.coord_stopped = None
        self.tf_sess = None
        self.hooked_session = None
        self._stop_grace_period_secs = stop_grace_period_secs

    def create_session(self):
        from flowgraph.framework.graph import GraphKeys
        from flowgraph.train.coordinator import Coordinator
        from flowgraph.train.queue_runner import start_queue_runners

        self.tf_sess = self._session_creator.create_session()
        # No clean-stop exception types: every thread error reaches run().
        self.coord = Coordinator(clean_stop_exception_types=[])
        # `coord.should_stop` one call shorter, for `should_stop` after every step
        self.coord_stopped = self.coord._stop_event.is_set
        if self.tf_sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
            start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        self.hooked_session = _HookedSession(self.tf_sess, self._hooks)
        return _CoordinatedSession(self.hooked_session, self.coord,
                                   self._stop_grace_period_secs)


class _MonitoredSession:
    """Shared implementation of `MonitoredSession` and `SingularMonitoredSession`."""

    def __init__(self, session_creator, hooks, should_recover: bool,
                 stop_grace_period_secs: float = 120, max_wait_secs: float | None = None
                 ) -> None:
        from flowgraph.framework.graph import get_default_graph

        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        self._sess = None
        for h in self._hooks:
            h.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator=session_creator or ChiefSessionCreator(), hooks=self._hooks,
            stop_grace_period_secs=stop_grace_period_secs)
        try:
            if should_recover:
                if max_wait_secs is None:
                    max_wait_secs = getattr(session_creator, "_max_wait_secs",
                                            _DEFAULT_MAX_WAIT_SECS)
                self._sess = _RecoverableSession(self._coordinated_creator, max_wait_secs)
            else:
                self._sess = self._coordinated_creator.create_session()
        except BaseException:
            self._unfinalize()
            raise
        self._flat = FlatPath(self._coordinated_creator,
                              self._sess if should_recover else None)

    @property
    def graph(self):
        """The graph being run."""
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run `fetches` like `Session.run`, with the hooks' fetches, feeds and options
        merged into the same call."""
        if feed_dict is None and options is None and run_metadata is None:
            result = self._flat.run(fetches)  # a quiet step (flat_run.py), if it is one
            if result is not LAYERED:
                return result
        return self._sess.run(fetches, feed_dict, options, run_metadata)

    def run_step_fn(self, step_fn):
        """Call ``step_fn(step_context)`` once: ``step_context.session`` is the raw
        session, ``step_context.run_with_hooks(...)`` runs with the hooks, and
        ``step_context.request_stop()`` ends the loop (raises StopIteration, which a
        ``with`` block treats as a clean end). Returns what `step_fn` returns."""
        try:
            args = tuple(inspect.signature(step_fn).parameters)
        except (TypeError, ValueError):
            args = ()
        if args not in (("step_context",), ("self", "step_context")):
            raise ValueError("`step_fn` may either have one `step_context` argument, or "
                             "`self` and `step_context` arguments if it's an instance method. "
                             f"Got {args} instead.")
        return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)

    StepContext = StepContext  # TensorFlow's `MonitoredSession.StepContext`

    def should_stop(self) -> bool:
        """True once a hook requested a stop, a thread failed, or the session is closed."""
        # The common answer without walking the wrappers: nothing stopped, every
        # layer in place (a hooked session with a quiet run recorded is open, and so
        # are the layers above it); otherwise the layers decide, recreating a session
        # if needed.
        creator = self._coordinated_creator
        hooked = creator.hooked_session
        if (hooked is not None and hooked._quiet is not None and not hooked._should_stop
                and not creator.coord_stopped()):
            return False
        sess = self._sess
        if sess is None:
            return True
        if (hooked is not None and not hooked._should_stop and hooked._sess is not None
                and sess._sess is not None and not creator.coord.should_stop()):
            return False
        return sess.should_stop()

    def close(self) -> None:
        """Call every hook's `end()`, stop the threads and close the session."""
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback) -> bool:
        from flowgraph.framework import errors

        if exception_type is not None and issubclass(
                exception_type, errors.OutOfRangeError | StopIteration):
            exception_type = None  # the input is exhausted: a clean end
        self._close_internal(exception_type)
        return exception_type is None

    def _close_internal(self, exception_type=None) -> None:
        try:
            if not exception_type:
                if self._coordinated_creator.hooked_session is not None:
                    self._coordinated_creator.hooked_session.flush_hooks()
                for h in self._hooks:
                    h.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                self._coordinated_creator.hooked_session = None
                self._unfinalize()

    def _unfinalize(self) -> None:
        if not self._graph_was_finalized:
            self._graph._unsafe_unfinalize()

    def _is_closed(self) -> bool:
        return self._sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that runs hooks, initializes or restores the model, runs queue
    runners, and recovers from preemption (AbortedError, UnavailableError) by creating
    a new session from the latest checkpoint.

    Parameters
    ----------
    session_creator : SessionCreator, optional
        Default: ``ChiefSessionCreator()``.
    hooks : list of SessionRunHook, optional
    stop_grace_period_secs : float
        How long `close()` waits for the queue-runner threads.
    max_wait_secs : float, optional
        flowgraph extension: how long to keep retrying the creation of a session that
        fails with a preemption error (a task down or not started yet) before raising
        `DeadlineExceededError` (TensorFlow retries forever). Default: the session
        creator's `max_wait_secs` (`WorkerSessionCreator`), else 7200.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(2.0)
    ...     y = v * 3.0  # ops are created before the session finalizes the graph
    ...     with tf.train.MonitoredSession() as sess:
    ...         print(sess.run(y))
    6.0
    """

    def __init__(self, session_creator=None, hooks=None,
                 stop_grace_period_secs: float = 120, *,
                 max_wait_secs: float | None = None) -> None:
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs,
                         max_wait_secs=max_wait_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A `MonitoredSession` for a single process: always a chief, no recovery, and the
    raw session is available as `raw_session()`."""

    def __init__(self, hooks=None, scaffold=None, master: str = "", config=None,
                 checkpoint_dir=None, stop_grace_period_secs: float = 120,
                 checkpoint_filename_with_path=None) -> None:
        creator = ChiefSessionCreator(
            scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The underlying `Session`."""
        return self._tf_sess()


def MonitoredTrainingSession(  # TensorFlow's name
        master: str = "", is_chief: bool = True, checkpoint_dir: str | None = None,
        scaffold=None, hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
        save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
        stop_grace_period_secs: float = 120, log_step_count_steps: int | None = 100,
        max_wait_secs: float = 7200, save_checkpoint_steps=USE_DEFAULT,
        summary_dir: str | None = None, save_graph_def: bool = True) -> MonitoredSession:
    """A `MonitoredSession` set up for training, with TF's default hooks.

    On the chief, with a `summary_dir` (default `checkpoint_dir`): a `StepCounterHook`
    every `log_step_count_steps` steps and a `SummarySaverHook` every
    `save_summaries_steps` steps (default 100; or `save_summaries_secs`). With a
    `checkpoint_dir`: a `CheckpointSaverHook` every `save_checkpoint_secs` seconds
    (default 600; or `save_checkpoint_steps`; with `save_graph_def`, it also writes
    ``graph.pbtxt`` and a ``.meta`` per checkpoint), and the session restores the latest
    checkpoint. Non-chief workers wait for the chief to initialize the model (polling
    every 0.2 s, where TensorFlow sleeps 30 s) and get only `hooks`.

    When a task fails (`UnavailableError`, `AbortedError`: e.g. a ps was restarted), the
    session is closed and created again, restoring the latest checkpoint on the chief;
    a creation that keeps failing that way is retried for `max_wait_secs` (on every
    task; TensorFlow uses it on non-chief workers only and otherwise retries forever),
    then raises `DeadlineExceededError`.

    Example
    -------
    >>> import tempfile, flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     train = step.assign_add(1)
    ...     with tf.train.MonitoredTrainingSession(
    ...             checkpoint_dir=tempfile.mkdtemp(),
    ...             hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
    ...         while not sess.should_stop():
    ...             _ = sess.run(train)
    """
    from flowgraph.train import basic_session_run_hooks as hooks_lib

    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = _PollingWorkerSessionCreator(scaffold=scaffold, master=master,
                                               config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs,
                                max_wait_secs=max_wait_secs)

    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(hooks_lib.StepCounterHook(output_dir=summary_dir,
                                                       every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (
                save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(hooks_lib.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or (
            save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(hooks_lib.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
            scaffold=scaffold, save_graph_def=save_graph_def))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs,
                            max_wait_secs=max_wait_secs)


class _PollingWorkerSessionCreator(WorkerSessionCreator):
    """`WorkerSessionCreator` whose wait for the chief's initialization polls every
    `_WORKER_POLL_S` (also after a ps restart, until the chief has restored it)."""

    _recovery_wait_secs = _WORKER_POLL_S
