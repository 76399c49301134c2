"""`_HookedSession`: the layer of a monitored session that calls the hooks around each
`run`, merging their fetches, feeds and options into the same `Session.run` call.

It is the hot path of every training loop, so a step costs as little as the hooks
allow:

- The merge of the caller's fetches with the hooks' requests (`hook_fetches`) is
  cached per *structure* (element identities, nesting), and when the caller passes
  the same flat tuple and every hook returns the very same request object as last
  time, the previous merge is reused without looking at anything.
- flowgraph's own periodic hooks are not called on the steps where they have nothing
  to do (`hook_schedule`): a quiet step costs a few comparisons, whatever their
  number. Every other hook (a user's, or a subclass of a built-in one) has its
  `before_run` and `after_run` called on every step, as in TensorFlow.

State kept between runs:

    _merged      structure key -> (flat elements, caller getter, getter per hook)
    _last        the caller's key, the requests and the entry of the previous run
    _last_plain  no request of `_last` has feeds or options
    _schedule    the `HookSchedule` of the built-in hooks, or None

A hook that wants other fetches returns another `SessionRunArgs` object (mutating the
fetches of one it returned before is not noticed; its feeds are read again).

Example
-------
>>> import flowgraph as tf
>>> class Record(tf.train.SessionRunHook):
...     def __init__(self, tensor):
...         self.tensor, self.seen = tensor, []
...     def before_run(self, run_context):
...         return tf.train.SessionRunArgs(self.tensor)
...     def after_run(self, run_context, run_values):
...         self.seen.append(int(run_values.results))
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = step.assign_add(1)
...     hook = Record(step)
...     with tf.train.MonitoredSession(hooks=[hook]) as sess:
...         for _ in range(3):
...             _ = sess.run(train)
>>> len(hook.seen)  # each read comes before or after its step's increment
3
"""

from __future__ import annotations

import time
from operator import is_ as _is

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.runtime.config import RunMetadata, RunOptions
from flowgraph.runtime.fetch import FetchMapper
from flowgraph.train.hook_fetches import (
    NOTHING,
    is_flat_tuple,
    merge_run_options,
    new_args,
    part_getter,
    raise_if_feeds_intersect,
    structure_key,
)
from flowgraph.train.hook_schedule import NEVER, HookSchedule, is_scheduled
from flowgraph.train.session_run_hook import SessionRunContext, SessionRunHook, SessionRunValues
from flowgraph.train.session_wrappers import _WrappedSession

__all__: list[str] = []

LAYERED = object()  # `run_quiet`: not a quiet run, take the layered path


def _immutable(fetches, last_fetches) -> bool:
    """Whether `fetches` cannot change between runs: one tensor or operation, or the
    flat tuple of them the hooked session keeps as `_last_fetches`."""
    return (fetches is last_fetches or type(fetches) is Tensor
            or type(fetches) is Operation)


def _overrides(hook, method: str) -> bool:
    return (method in getattr(hook, "__dict__", {})
            or getattr(type(hook), method, None) is not getattr(SessionRunHook, method))


class _HookedSession(_WrappedSession):
    """Runs the hooks around every `run` (see the module docstring)."""

    _MAX_CACHED_STRUCTURES = 256

    def __init__(self, sess, hooks) -> None:
        super().__init__(sess)
        self._hooks = hooks = list(hooks)
        scheduled = [i for i, h in enumerate(hooks) if is_scheduled(h)]
        self._schedule = HookSchedule(hooks, scheduled) if scheduled else None
        self._scheduled = frozenset(scheduled)
        before = [i for i, h in enumerate(hooks) if _overrides(h, "before_run")]
        self._before = [hooks[i].before_run for i in before]
        self._before_index = before
        # (position in the requests, hook index, before_run), and those always called
        self._before_all = [(n, i, hooks[i].before_run) for n, i in enumerate(before)]
        self._before_always = [(n, b) for n, i, b in self._before_all if i not in scheduled]
        self._idle_requests = [hooks[i]._idle_request if i in self._scheduled else None
                               for i in before]
        self._after = [(i, h.after_run) for i, h in enumerate(hooks)
                       if _overrides(h, "after_run")]
        self._after_always = [(i, a) for i, a in self._after if i not in self._scheduled]
        self._quiet_plan: list = []
        self._record_first = False  # see `_finish_quiet`
        self._quiet_version = -1
        self._should_stop = False
        self._args = new_args((NOTHING, NOTHING, None))
        self._merged: dict = {}
        self._last = (None, None, None)
        self._last_plain = False  # no request of `_last` has feeds or options
        self._last_fetches = NOTHING
        # (fetches, flat, caller getter, getters, args) of a quiet run (`run_quiet`)
        self._quiet = None
        # Handed to hooks when nobody asked for options/metadata (never filled).
        self._no_options = RunOptions()
        self._no_metadata = RunMetadata()

    def _check_stop(self) -> bool:
        return self._should_stop

    def flush_hooks(self) -> None:
        """Bring the built-in hooks skipped on quiet steps up to date (before `end`)."""
        if self._schedule is not None:
            self._schedule.flush()

    def close(self) -> None:
        self._quiet = None
        self.flush_hooks()
        super().close()

    def _requests(self, context):
        """The hooks' `before_run` results, in hook order, and the scheduled hooks
        called for this run (None: none)."""
        schedule = self._schedule
        if schedule is None:
            if not self._before:
                return self._idle_requests, None
            return [before_run(context) for before_run in self._before], None
        awake = schedule.due_before()
        timed = schedule.timed_before
        if awake is None and not timed:
            if not self._before_always:
                return self._idle_requests, None  # unchanged object: the merge is reused
            requests = self._idle_requests.copy()
            for n, before_run in self._before_always:
                requests[n] = before_run(context)
            return requests, None
        awake = awake or []
        requests = self._idle_requests.copy()
        scheduled = self._scheduled
        for n, i, before_run in self._before_all:
            if i in scheduled and i not in awake:
                if i not in timed or not schedule.late_before(i):
                    continue
                awake.append(i)
            requests[n] = before_run(context)
        if not awake and not self._before_always:
            return self._idle_requests, None  # nothing was called after all
        return requests, awake or None

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._should_stop or not self._sess:
            raise RuntimeError("Run called even after should_stop requested.")
        sess = self._sess
        # The caller's arguments as hooks see them: immutable, reused for the same
        # fetches without feeds (feeds are not kept past their run).
        args = self._args
        if args[0] is not fetches or feed_dict is not None:
            args = new_args((fetches, feed_dict, None))
            if feed_dict is None:
                self._args = args
        context = SessionRunContext(args, sess)
        requests, awake = self._requests(context)
        hook_feeds = hook_options = None
        last_key, last_requests, entry = self._last
        # The very same requests as last time, none with feeds or options (None cannot
        # have been filled in since): nothing to merge.
        same = last_requests is not None and (
            requests is last_requests or all(map(_is, requests, last_requests)))
        for request in () if same and self._last_plain else requests:
            if request is not None and (request[1] or request[2]):
                if request[1]:
                    if hook_feeds is None:
                        hook_feeds = dict(request[1])
                    else:
                        raise_if_feeds_intersect(hook_feeds, request[1],
                                                 "Same tensor is fed by two hooks.")
                        hook_feeds.update(request[1])
                if request[2]:
                    hook_options = [*(hook_options or ()), request[2]]
        if hook_feeds:
            if feed_dict:
                raise_if_feeds_intersect(feed_dict, hook_feeds,
                                         "Same tensor is fed by a SessionRunHook and user.")
                hook_feeds.update(feed_dict)
            feed_dict = hook_feeds
        if hook_options is not None:
            if options is None:
                options = RunOptions()
            for incoming in hook_options:
                merge_run_options(options, incoming)
        if options is not None and run_metadata is None:
            run_metadata = RunMetadata()

        # The same flat tuple of tensors/ops as last time (a training loop passing one
        # fetches tuple each step) has the same key: it cannot change, and
        # `_last_fetches` keeps it alive, so its id is not reused.
        if fetches is self._last_fetches:
            caller_key = last_key
        else:
            caller_key = structure_key(fetches)
        if caller_key is None or caller_key != last_key or not same:
            entry = self._lookup(fetches, caller_key, requests)
        flat, caller, getters = entry
        values = sess.run(flat, feed_dict, options, run_metadata)

        if options is None:
            if (requests is self._idle_requests and feed_dict is None and run_metadata is None
                    and caller_key is not None and _immutable(fetches, self._last_fetches)):
                # `run_quiet` may repeat it
                self._quiet = (fetches, flat, caller, getters, new_args((fetches, None, None)))
            options, run_metadata = self._no_options, self._no_metadata
        self._finish(context, values, getters, awake, options, run_metadata)
        return values[caller] if type(caller) is int else (caller and caller(values))

    def run_quiet(self, fetches):
        """`run(fetches)` without feeds or options when it would be a quiet run like
        the last one recorded (the same fetches object, no hook due before it, no hook
        with a `before_run` of its own); else `LAYERED`, having called nothing.

        The monitored session's flat path (`flat_run`) calls this directly; the run's
        `after_run` side is the same as `run`'s."""
        quiet = self._quiet
        if quiet is None or quiet[0] is not fetches or self._should_stop:
            return LAYERED
        schedule = self._schedule
        if schedule is not None:
            # `schedule.quiet_before()`, inline: this runs before every step. (A hook
            # timed in seconds is checked here, not at its turn among the hooks'
            # before_run calls: on a quiet step there are none, no time passes between.)
            prev = schedule.prev_step
            if (schedule.runs >= schedule.min_before_run
                    or (schedule.min_before_step != NEVER
                        and (prev is None or prev >= schedule.min_before_step))
                    or (schedule.min_before_time != NEVER
                        and time.time() >= schedule.min_before_time)):
                return LAYERED
        sess = self._sess
        values = sess.run(quiet[1], None, None, None)
        getters = quiet[3]
        if schedule is None:
            self._finish(SessionRunContext(quiet[4], sess), values, getters, None,
                         self._no_options, self._no_metadata)
        elif not self._after_always:
            # Recorded in one call when no hook is due: none to call (those timed in
            # seconds were not due at the clock read, nothing runs between it and their
            # turn).
            if not schedule.record_quiet(values, getters):
                due = schedule.due_after(values, getters, None)
                if due is None:
                    schedule.finish_run(None)
                else:
                    self._finish_due(SessionRunContext(quiet[4], sess), values, getters,
                                     due, self._no_options, self._no_metadata)
        else:
            self._finish_quiet(SessionRunContext(quiet[4], sess), values, getters)
        caller = quiet[2]
        return values[caller] if type(caller) is int else (caller and caller(values))

    def _finish(self, context, values, getters, awake, options, run_metadata) -> None:
        """The `after_run` side of a run: the hooks due (all of them without a
        schedule), the schedule's record of the run, a stop one of them requested."""
        schedule = self._schedule
        if schedule is None:
            self._after_run(context, self._after, values, getters, options, run_metadata)
            if context._stop_requested:
                self._should_stop = True
            return
        self._finish_due(context, values, getters,
                         schedule.due_after(values, getters, awake), options, run_metadata)

    def _finish_due(self, context, values, getters, due, options, run_metadata) -> None:
        """`_finish` once the schedule said which of its hooks are `due` (None: none
        but those timed in seconds, at their turn)."""
        schedule = self._schedule
        try:
            if due is None and not schedule.timed_after:
                self._after_run(context, self._after_always, values, getters, options,
                                run_metadata)
            elif due is None:
                due = self._after_quiet(context, values, getters, options, run_metadata)
            else:
                due = due or []
                self._after_run(context, self._after_calls(due), values, getters,
                                options, run_metadata)
        finally:
            schedule.finish_run(due)
        if context._stop_requested:
            self._should_stop = True

    def _finish_quiet(self, context, values, getters) -> None:
        """The `after_run` side of a flat run with hooks that are not scheduled: when
        no hook timed in seconds comes after one of them (time passes inside them), a
        run no scheduled hook is due after is recorded first, then they are called;
        otherwise as `run`."""
        schedule = self._schedule
        if self._quiet_version != schedule.version:
            self._plan_quiet(schedule)
        if self._record_first and schedule.record_quiet(values, getters):
            self._after_run(context, self._after_always, values, getters, self._no_options,
                            self._no_metadata)
            if context._stop_requested:
                self._should_stop = True
        else:
            self._finish_due(context, values, getters,
                             schedule.due_after(values, getters, None), self._no_options,
                             self._no_metadata)

    def _plan_quiet(self, schedule) -> None:
        """The `after_run` calls of a run no scheduled hook was due at the start of, for
        the schedule's current thresholds (`_after_quiet`, `_finish_quiet`)."""
        timed = schedule.timed_after
        self._quiet_plan = [(i, a, timed.get(i)) for i, a in self._after
                            if i not in self._scheduled or i in timed]
        first_always = self._after_always[0][0] if self._after_always else len(self._hooks)
        self._record_first = all(i < first_always for i in timed)
        self._quiet_version = schedule.version

    def _after_calls(self, due: list[int]):
        """The `after_run` calls of this run, in hook order: every hook not scheduled,
        the scheduled ones in `due`, and those timed in seconds that are due at their
        turn (added to `due` as they are met)."""
        schedule, scheduled = self._schedule, self._scheduled
        timed = schedule.timed_after
        for i, after_run in self._after:
            if i in scheduled and i not in due:
                if i not in timed or not schedule.late_after(i):
                    continue
                due.append(i)
            yield i, after_run

    def _after_quiet(self, context, values, getters, options, run_metadata):
        """The `after_run` calls of a run on which no scheduled hook was due at its
        start: the hooks not scheduled, and at their turn those timed in seconds, if
        due by then (returned; None if none was)."""
        schedule = self._schedule
        if self._quiet_version != schedule.version:
            self._plan_quiet(schedule)
        due = None
        new_values = tuple.__new__
        for i, after_run, due_at in self._quiet_plan:
            if due_at is not None:
                if time.time() < due_at:
                    continue
                schedule.catch_up(i)
                due = [*(due or ()), i]
            get = getters[i]
            result = values[get] if type(get) is int else (get and get(values))
            after_run(context, new_values(SessionRunValues, (result, options, run_metadata)))
        return due

    @staticmethod
    def _after_run(context, calls, values, getters, options, run_metadata) -> None:
        new_values = tuple.__new__
        for i, after_run in calls:
            get = getters[i]
            result = values[get] if type(get) is int else (get and get(values))
            after_run(context, new_values(SessionRunValues, (result, options, run_metadata)))

    def _lookup(self, fetches, caller_key, requests):
        """The merged entry for this step (cached by structure), remembered as `_last`."""
        key = None
        if caller_key is not None:
            parts = [caller_key]
            for n, request in enumerate(requests):
                if request is not None and request.fetches is not None:
                    part = structure_key(request.fetches)
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
            self._last_fetches = NOTHING
        else:
            self._last = (caller_key, requests, entry)
            self._last_plain = all(r is None or (r[1] is None and r[2] is None)
                                   for r in requests)
            if fetches is not self._last_fetches:
                self._last_fetches = fetches if is_flat_tuple(fetches) else NOTHING
        return entry

    def _merge(self, fetches, requests):
        """``(flat graph elements, caller getter, getter per hook index)``."""
        graph = self._sess.graph
        if fetches is None:
            FetchMapper.build(graph, fetches)  # raises TF's TypeError
        flat: list = []
        index: dict = {}
        caller = part_getter(graph, fetches, flat, index)
        getters = [None] * len(self._hooks)
        for n, request in enumerate(requests):
            if request is not None and request.fetches is not None:
                getters[self._before_index[n]] = part_getter(graph, request.fetches, flat,
                                                             index)
        return flat, caller, getters
