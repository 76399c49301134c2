"""Timers deciding when periodic hooks fire, and small helpers shared by the hooks.

A `SecondOrStepTimer` fires every N seconds or every N global steps (exactly one of
the two). It remembers the step and the wall time it last fired at:

    should_trigger_for_step(step)       first call: True; same step again: False
    update_last_triggered_step(step)    -> (elapsed_secs, elapsed_steps), None at first

Example
-------
>>> t = SecondOrStepTimer(every_steps=10)
>>> t.should_trigger_for_step(0), t.update_last_triggered_step(0)
(True, (None, None))
>>> t.should_trigger_for_step(9), t.should_trigger_for_step(10)
(False, True)
"""

from __future__ import annotations

import logging
import time

from flowgraph.train.hook_schedule import NOW_AFTER, Wake

__all__ = ["SecondOrStepTimer"]

logger = logging.getLogger("tensorflow")


class _HookTimer:
    """Interface of the timers used by the hooks."""

    def reset(self) -> None:
        """Forget the last trigger."""

    def should_trigger_for_step(self, step) -> bool:
        raise NotImplementedError

    def update_last_triggered_step(self, step):
        raise NotImplementedError

    def last_triggered_step(self):
        raise NotImplementedError


class SecondOrStepTimer(_HookTimer):
    """Fires every `every_secs` seconds or every `every_steps` steps.

    Parameters
    ----------
    every_secs : float, optional
        Minimum wall time between two triggers.
    every_steps : int, optional
        Minimum number of steps between two triggers.

    Raises
    ------
    ValueError
        Neither or both of `every_secs` and `every_steps` are given.

    Example
    -------
    >>> import flowgraph as tf
    >>> t = tf.train.SecondOrStepTimer(every_steps=5)
    >>> _ = t.update_last_triggered_step(3)
    >>> t.last_triggered_step(), t.should_trigger_for_step(7), t.should_trigger_for_step(8)
    (3, False, True)
    """

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self) -> None:
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        """True if `step` is due: never triggered, or enough seconds/steps have passed
        (and `step` is not the step of the last trigger)."""
        last = self._last_triggered_step
        if last is None:
            return True
        if last == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= last + self._every_steps

    def update_last_triggered_step(self, step):
        """Record a trigger at `step` (now); returns ``(elapsed_secs, elapsed_steps)``
        since the previous trigger, ``(None, None)`` for the first one."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed_secs = elapsed_steps = None
        else:
            elapsed_secs = now - self._last_triggered_time
            elapsed_steps = step - self._last_triggered_step
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed_secs, elapsed_steps

    def last_triggered_step(self):
        return self._last_triggered_step


class NeverTriggerTimer(_HookTimer):
    """A timer that never fires."""

    def should_trigger_for_step(self, step) -> bool:
        return False

    def update_last_triggered_step(self, step):
        return None, None

    def last_triggered_step(self):
        return None


def after_wake(timer, steps_per_run: int = 1):
    """The `Wake` of a hook that asks ``timer.should_trigger_for_step(step +
    steps_per_run)`` after each run, `step` being the run's global step read: from
    that step (or that time) on, the hook may act (`flowgraph.train.hook_schedule`).

    Example
    -------
    >>> t = SecondOrStepTimer(every_steps=100)
    >>> _ = t.update_last_triggered_step(0)
    >>> after_wake(t).after_step  # a run that reads step 99 asks about step 100
    99
    """
    if type(timer) is not SecondOrStepTimer or timer._last_triggered_step is None:
        return NOW_AFTER
    if timer._every_secs is not None:
        return Wake(after_time=timer._last_triggered_time + timer._every_secs)
    return Wake(after_step=timer._last_triggered_step + timer._every_steps - steps_per_run)


def global_step_read(hook_name: str):
    """The shared read of the global step (created if needed); RuntimeError naming
    `hook_name` when the graph has no global step."""
    from flowgraph.train import training_util

    read = training_util._get_or_create_global_step_read()
    if read is None:
        raise RuntimeError(
            f"Global step should be created to use {hook_name}. Create it with "
            "tf.train.get_or_create_global_step() before building the train op (and pass "
            "it to the optimizer so that it is incremented).")
    return read


def summary_writer_for(logdir: str):
    """The cached `FileWriter` of `logdir` (TF's ``SummaryWriterCache.get``)."""
    from flowgraph.summary.writer import FileWriterCache

    return FileWriterCache.get(logdir)
