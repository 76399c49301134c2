"""When flowgraph's own periodic hooks have something to do, so that the steps in
between cost no hook calls at all.

A training loop's built-in hooks (`StopAtStepHook`, `NanTensorHook`,
`LoggingTensorHook`, `StepCounterHook`, `SummarySaverHook`, `CheckpointSaverHook`)
act on a few steps: every N steps or seconds, at the last step, on a NaN loss. On
every other step each one returns the same `SessionRunArgs` from `before_run` and
does nothing in `after_run` but remember the step it saw. `HookSchedule` runs those
steps without calling them, and calls a hook exactly when its own code would act.

State (one schedule per hooked session):

    runs        successful runs so far
    prev_step   the global step read in the previous run, as an int (None: unknown);
                thresholds are Python numbers too (comparing NumPy scalars costs
                about a microsecond each)
    last_call   per hook: `runs` after the last run the hook was called for
    wake        per hook: the earliest run, step or time it may act (see below)
    min_*       the minimum of each threshold over the hooks, so a quiet step is a
                few comparisons whatever the number of hooks

A scheduled hook describes itself with four private members:

    _idle_request      what its before_run returns on a quiet step
    _pure_before_run   True when before_run only returns that (no state change)
    _catch_up(n, s)    apply n skipped runs, the last of which read global step s
    _wake()            thresholds from its current state, as `Wake`

Per run, the hooked session asks `due_before`, then `due_after` and `finish_run`; a
quiet step of the flat path asks `quiet_before` (inline) and `record_quiet`, which
records the run in one call when no hook is due after it and otherwise leaves the run
to `due_after`.

Invariant: a hook is never skipped on a run where its own before_run would return
something else than `_idle_request`, or its after_run would do more than what
`_catch_up` replays; it is always caught up before it is called (and before the
hooks' `end`). Waking a hook too early is harmless (it decides itself); thresholds
err that way. A threshold in seconds is checked again at the hook's turn among the
other hooks, since time passes inside them. A user's subclass of a built-in hook is
an ordinary hook, called on every step, as are all other hooks.

An Estimator's hooks (x: called), logging every 100 runs, summaries every 100 steps,
the last step 250; the global step counts the runs (its read precedes the increment):

    run            0   1  ...  99  100  101 ...  200 ... 248  249
    Logging        x   -        -   x    -        x        -    -   before_run
    SummarySaver   x   -        -   x    -        x        -    -   before_step
    StopAtStep     x   -        -   -    -        -        -    x   after_step
    NanTensor      x   -        -   -    -        -        -    -   (a NaN loss)

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = step.assign_add(1)
...     hook = tf.train.StopAtStepHook(last_step=50)
...     with tf.train.MonitoredSession(hooks=[hook]) as sess:
...         while not sess.should_stop():
...             value = sess.run(train)
>>> int(value)  # the hook was called on its last step only
50
"""

from __future__ import annotations

import time
from math import isnan
from typing import NamedTuple

__all__ = ["NEVER", "NOW", "NOW_AFTER", "FixedRequest", "HookSchedule", "Wake",
           "is_scheduled"]

NEVER = float("inf")


class Wake(NamedTuple):
    """When a hook may next act: before a run once ``runs >= before_run`` (absolute
    after the schedule adds the current run), the previous run's global step
    ``>= before_step`` or ``time.time() >= before_time``; after a run whose global
    step is ``>= after_step``, at ``time.time() >= after_time``, when its fetched value
    is NaN (`nan`) or when the global step did not change (`stall`)."""

    before_runs: float = NEVER  # runs from the next one
    before_step: float = NEVER
    before_time: float = NEVER
    after_step: float = NEVER
    after_time: float = NEVER
    nan: bool = False
    stall: bool = False


NOW = Wake(before_runs=0)  # called for the next run
NOW_AFTER = Wake(after_step=-NEVER)  # after_run called after the next run


class FixedRequest:
    """The schedule members of a built-in hook whose `before_run` always returns
    ``self._args`` (set in `begin`) and whose `after_run` does nothing on a quiet run;
    the hook still defines its own `_wake`."""

    _pure_before_run = True

    @property
    def _idle_request(self):
        return self._args

    def _catch_up(self, runs: int, step) -> None:
        pass


def is_scheduled(hook) -> bool:
    """True for an instance of a built-in hook class that describes its schedule (not
    a subclass, which may act on any step, nor one with per-instance methods), once
    its `begin` has run."""
    kind = type(hook)
    return ("_wake" in kind.__dict__ and "before_run" not in hook.__dict__
            and "after_run" not in hook.__dict__
            and hasattr(hook, "_idle_request"))  # set by `begin`


class HookSchedule:
    """Which of the scheduled hooks to call on a run (see the module docstring).

    Parameters
    ----------
    hooks : list
        All hooks of the session, in order.
    scheduled : list of int
        The indices of the scheduled ones.
    """

    def __init__(self, hooks: list, scheduled: list[int]) -> None:
        self.hooks = hooks
        self.scheduled = scheduled
        self.runs = 0
        self.prev_step = self._prev_value = None  # as an int, and as fetched
        self.last_call = dict.fromkeys(scheduled, 0)
        self.wake = dict.fromkeys(scheduled, Wake(0, -NEVER, -NEVER, -NEVER, -NEVER))
        # hooks whose quiet request is the bare global step read: its value, every run
        self.step_hooks = [i for i in scheduled if _fetches_step(hooks[i])]
        self._step = self._value = None  # the global step of the run being processed
        self.version = 0  # counts the changes of thresholds
        self._getters = None  # the merge `_index` describes
        self._refresh()

    def _refresh(self) -> None:
        wakes = self.wake.values()
        self.min_before_run = min((w.before_runs for w in wakes), default=NEVER)
        self.min_before_step = min((w.before_step for w in wakes), default=NEVER)
        self.min_before_time = min((w.before_time for w in wakes), default=NEVER)
        self.min_after_step = min((w.after_step for w in wakes), default=NEVER)
        self.min_after_time = min((w.after_time for w in wakes), default=NEVER)
        self.nan_watch = [i for i, w in self.wake.items() if w.nan]
        self.stall_watch = any(w.stall for w in wakes)
        # hooks timed in seconds, checked at their turn among the other hooks
        self.timed_before = {i: w.before_time for i, w in self.wake.items()
                             if w.before_time != NEVER}
        self.timed_after = {i: w.after_time for i, w in self.wake.items()
                            if w.after_time != NEVER and self.hooks[i]._pure_before_run}
        self.version += 1
        if self._getters is not None:
            self._index(self._getters)  # the hooks watching for NaN may have changed

    def quiet_before(self) -> bool:
        """True when no scheduled hook is due before this run: `due_before` would
        return None (without its side effects)."""
        prev = self.prev_step
        return (self.runs < self.min_before_run
                and (self.min_before_step == NEVER
                     or (prev is not None and prev < self.min_before_step))
                and (self.min_before_time == NEVER or time.time() < self.min_before_time))

    def due_before(self) -> list[int] | None:
        """The scheduled hooks to call `before_run` on for this run (caught up), or
        None when none is due (the common case)."""
        if self.quiet_before():
            return None
        runs, prev = self.runs, self.prev_step
        now = time.time()
        due = []
        for i in self.scheduled:
            w = self.wake[i]
            if (runs >= w.before_runs or now >= w.before_time
                    or (w.before_step != NEVER and (prev is None or prev >= w.before_step))):
                self.catch_up(i)
                due.append(i)
        return due

    def due_after(self, values, getters, awake: list[int] | None) -> list[int] | None:
        """The scheduled hooks to call `after_run` on for this run, in order (`awake`,
        the hooks called before it, and those due now), or None. `finish_run` records
        the run."""
        if getters is not self._getters:
            self._index(getters)
        position = self._step_position
        self._value = value = None if position is None else values[position]
        try:
            self._step = step = int(value)
        except (TypeError, ValueError):  # not one number (or no step read this run)
            self._step = step = None
        if step is None:  # no step read this run: due if any hook watches the step
            by_step = self.min_after_step != NEVER or self.stall_watch
        else:
            by_step = step >= self.min_after_step or (self.stall_watch
                                                       and step == self.prev_step)
        if (awake or by_step
                or (self.min_after_time != NEVER and time.time() >= self.min_after_time)):
            return self._after_list(values, getters, awake or (), step)
        positions = self._nan_positions
        if positions:  # `_nan` inline: this runs after every step of an Estimator
            try:
                for position in positions:
                    if isnan(values[position]):
                        return self._after_list(values, getters, (), step)
            except (TypeError, OverflowError):  # not one real number: the hook decides
                return self._after_list(values, getters, (), step)
        return None

    def record_quiet(self, values, getters) -> bool:
        """Record a run no scheduled hook is due after (`due_after` would return None
        and `finish_run(None)` follow) and return True; False, recording nothing, when
        `due_after` has to decide: a threshold reached, a NaN, a value that is not one
        number, another merge. One call for the common step (the flat path's)."""
        if getters is not self._getters:
            return False
        position = self._step_position
        if position is None:
            if self.min_after_step != NEVER or self.stall_watch:
                return False
            step = value = None
        else:
            value = values[position]
            try:
                step = int(value)
            except (TypeError, ValueError):
                return False
            if step >= self.min_after_step or (self.stall_watch and step == self.prev_step):
                return False
        if self.min_after_time != NEVER and time.time() >= self.min_after_time:
            return False
        try:
            for position in self._nan_positions:
                if isnan(values[position]):
                    return False
        except (TypeError, OverflowError):  # not one real number: the hook decides
            return False
        self._step = self.prev_step = step
        self._value = self._prev_value = value
        self.runs += 1
        return True

    def late_before(self, i: int) -> bool:
        """Whether hook `i`, timed in seconds and not due at the start of the run, is
        due at its turn (time passes in the hooks called before it); caught up if so."""
        if time.time() < self.timed_before[i]:
            return False
        self.catch_up(i)
        return True

    def late_after(self, i: int) -> bool:
        """`late_before` for `after_run`."""
        if time.time() < self.timed_after[i]:
            return False
        self.catch_up(i)
        return True

    def finish_run(self, called: list[int] | None) -> None:
        """Record the run; `called` are the scheduled hooks called for it."""
        self.prev_step, self._prev_value = self._step, self._value
        self.runs += 1
        if called:
            self.called(called)

    def _index(self, getters) -> None:
        """Where this merge puts the global step and the values watched for NaN."""
        self._getters = getters
        self._step_position = next(
            (getters[i] for i in self.step_hooks if type(getters[i]) is int), None)
        self._nan_positions = [getters[i] for i in self.nan_watch]
        if any(type(p) is not int for p in self._nan_positions):
            self._nan_positions = [None]  # values[None] raises TypeError: due

    def _after_list(self, values, getters, awake, step) -> list[int]:
        now = time.time()
        due = []
        for i in self.scheduled:
            if i in awake:
                due.append(i)
                continue
            if not self.hooks[i]._pure_before_run:
                continue  # skipped whole: its after_run would only record the step
            w = self.wake[i]
            if ((w.after_step != NEVER and (step is None or step >= w.after_step))
                    or now >= w.after_time
                    or (w.stall and (step is None or step == self.prev_step))
                    or (w.nan and _nan(values, getters[i]))):
                self.catch_up(i)
                due.append(i)
        return due

    def called(self, indices: list[int]) -> None:
        """The hooks `indices` were called for the run just recorded: take their new
        thresholds."""
        for i in indices:
            self.last_call[i] = self.runs
            w = self.hooks[i]._wake()
            self.wake[i] = Wake(self.runs + float(w.before_runs), float(w.before_step),
                                float(w.before_time), float(w.after_step),
                                float(w.after_time), w.nan, w.stall)
        self._refresh()

    def catch_up(self, i: int) -> None:
        """Replay on hook `i` the runs it was skipped for."""
        skipped = self.runs - self.last_call[i]
        if skipped > 0:
            self.hooks[i]._catch_up(skipped, self._prev_value)
            self.last_call[i] = self.runs

    def flush(self) -> None:
        """Catch every hook up (before the hooks' `end`, or when the session is
        replaced after a preemption)."""
        for i in self.scheduled:
            self.catch_up(i)


def _nan(values, get) -> bool:
    """True when the fetched value is NaN, or is not one real number (the hook then
    decides, and raises what it would raise)."""
    if type(get) is not int:
        return True
    try:
        return isnan(values[get])  # a NumPy scalar's own comparison costs far more
    except (TypeError, OverflowError):
        return True


def _fetches_step(hook) -> bool:
    request = hook._idle_request
    step = getattr(hook, "_global_step_tensor", None)
    return (request is not None and step is not None and request.fetches is step
            and not request.feed_dict and not request.options)
