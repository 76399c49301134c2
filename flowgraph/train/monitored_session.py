"""Monitored sessions: a `Session` with hooks, initialization, queue runners and
recovery, as TF 1.15's ``tf.train.MonitoredSession`` and friends.

A monitored session is a stack of wrappers around the raw session, outermost first:

    _RecoverableSession   on AbortedError/UnavailableError (a preempted task) close
    │                     everything, create a new session (restoring the latest
    │                     checkpoint) and retry the same run() call; creation itself
    │                     is retried (pauses of 0.05 s doubling to 0.5 s) until
    │                     `max_wait_secs`, then DeadlineExceededError
    _CoordinatedSession   owns the Coordinator and its queue-runner threads; an
    │                     exception reported by a thread is raised from run()
    _HookedSession        calls before_run/after_run of every hook around each run(),
    │                     merging their fetches, feeds and options into one call
    Session               the raw session, from a SessionCreator (ChiefSessionCreator:
                          restore or initialize; WorkerSessionCreator: wait for the chief)

Creating the monitored session calls every hook's `begin()`, finalizes the graph
(`Scaffold.finalize`), creates the session, starts queue runners, then calls every
hook's `after_create_session()` (again after each recovery). Closing it without an
error calls every hook's `end()`, then stops the threads and closes the session; the
graph is un-finalized if it was not finalized before.

`_HookedSession.run` is the hot path of every training loop. It merges the caller's
fetches and the hooks' into one list of unique graph elements and keeps the result
keyed by the *structure* of the fetches (element identities, nesting), so that a
step whose hooks ask for the same things as a previous step reuses the flattening,
and the raw session then hits its own plan cache.

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
import time
from operator import is_ as _is

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.runtime.config import RunMetadata, RunOptions
from flowgraph.runtime.fetch import FetchMapper
from flowgraph.train.scaffold import Scaffold
from flowgraph.train.session_manager import (
    ChiefSessionCreator,
    SessionCreator,
    WorkerSessionCreator,
)
from flowgraph.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
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

logger = logging.getLogger("flowgraph")


def _preemption_errors() -> tuple:
    from flowgraph.framework import errors

    return (errors.AbortedError, errors.UnavailableError)


_PREEMPTION_ERRORS = _preemption_errors()
USE_DEFAULT = object()
_DEFAULT_MAX_WAIT_SECS = 7200.0
_RETRY_FIRST_S = 0.05  # first pause between session-creation attempts; doubles
_RETRY_MAX_S = 0.5  # a returning ps is noticed within this (plus gRPC's reconnect)
_WORKER_POLL_S = 0.2  # a non-chief's readiness polls (TensorFlow sleeps 30 s)


# -- the wrapper stack ---------------------------------------------------------------------------
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
        return step_fn(_MonitoredSession.StepContext(raw_session, run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Recreates the session whenever a preemption error interrupts a call."""

    def __init__(self, sess_creator, max_wait_secs: float = _DEFAULT_MAX_WAIT_SECS) -> None:
        self._sess_creator = sess_creator
        self._max_wait_secs = max_wait_secs
        super().__init__(self._create_session())

    def _create_session(self):
        """A new session; preemption errors (a task down, restarting or not started
        yet) are retried with growing pauses until `max_wait_secs` have passed."""
        from flowgraph.framework import errors

        start, pause, attempts = time.monotonic(), _RETRY_FIRST_S, 0
        while True:
            attempts += 1
            try:
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
            # A thread's preemption error may be the root cause: raise that instead.
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # the original error is the one to report
                pass
            raise


def _overrides(hook, method: str) -> bool:
    return (method in getattr(hook, "__dict__", {})
            or getattr(type(hook), method, None) is not getattr(SessionRunHook, method))


def _structure_key(obj):
    """A hashable key identifying a fetch structure, or None. Tensors and operations
    count by id (they live as long as their graph, which outlives the cache)."""
    kind = type(obj)
    if kind is Tensor or kind is Operation:
        return id(obj)
    if kind is str:
        return obj
    if kind is dict:
        items = [dict]
        for name, value in obj.items():
            k = _structure_key(value)
            if k is None:
                return None
            items.append((name, k))
        return tuple(items)
    if isinstance(obj, list | tuple):
        parts = [kind]
        for x in obj:
            k = _structure_key(x)
            if k is None:
                return None
            parts.append(k)
        return tuple(parts)
    if hasattr(obj, "_as_graph_element") and getattr(kind, "__hash__", None):
        return (kind, obj)  # e.g. a Variable: resolves to the same tensor every time
    return None


_NOTHING = object()  # matches no fetches


def _is_flat_tuple(obj) -> bool:
    return type(obj) is tuple and all(type(x) is Tensor or type(x) is Operation for x in obj)


def _part_getter(graph, part, flat: list, index: dict):
    """How to get `part`'s result from the values of `flat` (extended with the graph
    elements `part` needs): an int (one tensor), None (one op) or a callable."""
    if type(part) is Tensor or type(part) is Operation:
        element = part
    elif (type(part) is tuple or type(part) is list) and part and all(
            type(x) is Tensor or type(x) is Operation for x in part):
        # A flat tuple or list (the Estimator's ``(train_op, loss)``): pick the values
        # straight from `flat`, None for an operation.
        FetchMapper.build(graph, part)  # raises the usual errors for foreign elements
        kind = type(part)
        picks = []
        for x in part:
            position = _position(x, flat, index)  # an operation runs, and yields None
            picks.append(position if type(x) is Tensor else None)
        return lambda values: kind([None if j is None else values[j] for j in picks])
    else:
        mapper = FetchMapper.build(graph, part)
        positions = [_position(t, flat, index) for t in mapper.unique_tensors]
        for op in mapper.unique_ops:
            _position(op, flat, index)
        rebuild = mapper.rebuild
        return lambda values: rebuild([values[j] for j in positions])
    if element.graph is not graph:
        FetchMapper.build(graph, element)  # raises the usual "not an element" error
    position = _position(element, flat, index)
    return None if type(element) is Operation else position


def _position(element, flat: list, index: dict) -> int:
    position = index.get(element)
    if position is None:
        position = index[element] = len(flat)
        flat.append(element)
    return position


class _HookedSession(_WrappedSession):
    """Runs the hooks around every `run` (see the module docstring).

    State kept between runs, to make a step cheap:

    - ``_merged``: structure key -> ``(flat, caller getter, [(after_run, getter)])``,
      where `flat` lists the unique graph elements to run and a getter is an index
      into the values of `flat` (one tensor), None (an op, or no fetches) or a
      function (a structure).
    - ``_last``: the caller's structure key, the list of `before_run` results and the
      entry of the previous run. When the caller fetches the same structure and every
      hook returned the very same object as last time (hooks that keep one
      `SessionRunArgs` and return it every step), that entry is reused without looking
      at the hooks' fetches (nor at their feeds and options, when none had any:
      ``_last_plain``). A hook that wants other fetches returns another
      `SessionRunArgs` object (mutating the fetches of one it returned before is not
      noticed).
    """

    _MAX_CACHED_STRUCTURES = 256

    def __init__(self, sess, hooks) -> None:
        super().__init__(sess)
        self._hooks = list(hooks)
        before = [i for i, h in enumerate(self._hooks) if _overrides(h, "before_run")]
        self._before = [self._hooks[i].before_run for i in before]
        self._before_index = before
        self._after = [(i, h.after_run) for i, h in enumerate(self._hooks)
                       if _overrides(h, "after_run")]
        self._should_stop = False
        self._merged: dict = {}
        self._last = (None, None, None)
        self._last_plain = False  # no request of `_last` has feeds or options
        self._last_fetches = _NOTHING
        # Handed to hooks when nobody asked for options/metadata (never filled).
        self._no_options = RunOptions()
        self._no_metadata = RunMetadata()

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._should_stop or not self._sess:
            raise RuntimeError("Run called even after should_stop requested.")
        sess = self._sess
        context = SessionRunContext(_new_args((fetches, feed_dict, None)), sess)
        requests = [before_run(context) for before_run in self._before]
        hook_feeds = hook_options = None
        last_key, last_requests, entry = self._last
        # The very same requests as last time, none with feeds or options (None cannot
        # have been filled in since): nothing to merge.
        same = last_requests is not None and all(map(_is, requests, last_requests))
        for request in () if same and self._last_plain else requests:
            if request is not None and (request[1] or request[2]):
                if request[1]:
                    if hook_feeds is None:
                        hook_feeds = dict(request[1])
                    else:
                        _raise_if_feeds_intersect(hook_feeds, request[1],
                                                  "Same tensor is fed by two hooks.")
                        hook_feeds.update(request[1])
                if request[2]:
                    hook_options = [*(hook_options or ()), request[2]]
        if hook_feeds:
            if feed_dict:
                _raise_if_feeds_intersect(feed_dict, hook_feeds,
                                          "Same tensor is fed by a SessionRunHook and user.")
                hook_feeds.update(feed_dict)
            feed_dict = hook_feeds
        if hook_options is not None:
            if options is None:
                options = RunOptions()
            for incoming in hook_options:
                _merge_run_options(options, incoming)
        if options is not None and run_metadata is None:
            run_metadata = RunMetadata()

        # The same flat tuple of tensors/ops as last time (a training loop passing one
        # fetches tuple each step) has the same key: it cannot change, and
        # `_last_fetches` keeps it alive, so its id is not reused.
        if fetches is self._last_fetches:
            caller_key = last_key
        else:
            caller_key = _structure_key(fetches)
        if caller_key is None or caller_key != last_key or not same:
            entry = self._lookup(fetches, caller_key, requests)
        flat, caller, after_calls = entry
        values = sess.run(flat, feed_dict, options, run_metadata)

        if options is None:
            options, run_metadata = self._no_options, self._no_metadata
        new_values = tuple.__new__
        for after_run, get in after_calls:
            result = values[get] if type(get) is int else (get and get(values))
            after_run(context, new_values(SessionRunValues, (result, options, run_metadata)))
        if context._stop_requested:
            self._should_stop = True
        return values[caller] if type(caller) is int else (caller and caller(values))

    def _lookup(self, fetches, caller_key, requests):
        """The merged entry for this step (cached by structure), remembered as `_last`."""
        key = None
        if caller_key is not None:
            parts = [caller_key]
            for n, request in enumerate(requests):
                if request is not None and request.fetches is not None:
                    part = _structure_key(request.fetches)
                    if part is None:
                        break
                    parts.append((n, part))
            else:
                key = tuple(parts)
        entry = self._merged.get(key) if key is not None else None
        if entry is None:
            entry = self._merge(fetches, requests)
            if key is not None:
                if len(self._merged) >= self._MAX_CACHED_STRUCTURES:
                    self._merged.clear()
                self._merged[key] = entry
        if key is None:
            self._last = (None, None, None)
            self._last_fetches = _NOTHING
        else:
            self._last = (caller_key, requests, entry)
            self._last_plain = all(r is None or (r[1] is None and r[2] is None)
                                   for r in requests)
            if fetches is not self._last_fetches:
                self._last_fetches = fetches if _is_flat_tuple(fetches) else _NOTHING
        return entry

    def _merge(self, fetches, requests):
        """``(flat graph elements, caller getter, [(after_run, getter)])``."""
        graph = self._sess.graph
        if fetches is None:
            FetchMapper.build(graph, fetches)  # raises TF's TypeError
        flat: list = []
        index: dict = {}
        caller = _part_getter(graph, fetches, flat, index)
        getters = {self._before_index[n]: _part_getter(graph, request.fetches, flat, index)
                   for n, request in enumerate(requests)
                   if request is not None and request.fetches is not None}
        return flat, caller, [(after_run, getters.get(i)) for i, after_run in self._after]


def _new_args(fields: tuple) -> SessionRunArgs:
    return tuple.__new__(SessionRunArgs, fields)


def _raise_if_feeds_intersect(feeds1, feeds2, message: str) -> None:
    common = set(feeds1) & set(feeds2)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {list(common)}")


def _merge_run_options(options, incoming) -> None:
    """Merge `incoming` into `options` (the larger value of each field wins)."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool,
                                       incoming.inter_op_thread_pool)
    options.output_partition_graphs = (options.output_partition_graphs
                                       or incoming.output_partition_graphs)
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom
        or incoming.report_tensor_allocations_upon_oom)
    if options.debug_options is None:
        options.debug_options = incoming.debug_options


# -- monitored sessions --------------------------------------------------------------------------
class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, starts queue runners, tells the hooks, and stacks the
    hooked and coordinated wrappers on top."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs: float) -> None:
        self._session_creator = session_creator
        self._hooks = hooks
        self.coord = None
        self.tf_sess = None
        self._stop_grace_period_secs = stop_grace_period_secs

    def create_session(self):
        from flowgraph.framework.graph import GraphKeys
        from flowgraph.train.coordinator import Coordinator
        from flowgraph.train.queue_runner import start_queue_runners

        self.tf_sess = self._session_creator.create_session()
        # No clean-stop exception types: every thread error reaches run().
        self.coord = Coordinator(clean_stop_exception_types=[])
        if self.tf_sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
            start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
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

    @property
    def graph(self):
        """The graph being run."""
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run `fetches` like `Session.run`, with the hooks' fetches, feeds and options
        merged into the same call."""
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

    class StepContext:
        """What `run_step_fn` passes to `step_fn`."""

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

    def should_stop(self) -> bool:
        """True once a hook requested a stop, a thread failed, or the session is closed."""
        return self._sess is None or self._sess.should_stop()

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
        summary_dir: str | None = None) -> MonitoredSession:
    """A `MonitoredSession` set up for training, with TF's default hooks.

    On the chief, with a `summary_dir` (default `checkpoint_dir`): a `StepCounterHook`
    every `log_step_count_steps` steps and a `SummarySaverHook` every
    `save_summaries_steps` steps (default 100; or `save_summaries_secs`). With a
    `checkpoint_dir`: a `CheckpointSaverHook` every `save_checkpoint_secs` seconds
    (default 600; or `save_checkpoint_steps`), and the session restores the latest
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
            scaffold=scaffold))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs,
                            max_wait_secs=max_wait_secs)


class _PollingWorkerSessionCreator(WorkerSessionCreator):
    """`WorkerSessionCreator` whose wait for the chief's initialization polls every
    `_WORKER_POLL_S` (also after a ps restart, until the chief has restored it)."""

    _recovery_wait_secs = _WORKER_POLL_S
