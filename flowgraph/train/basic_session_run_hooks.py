"""The basic hooks of ``tf.train`` (TF 1.15): this module holds the step-based ones and
re-exports the rest, which live by concern in ``basic_hooks_*.py``:

| module | hooks |
| --- | --- |
| here | `StopAtStepHook`, `GlobalStepWaiterHook` |
| `basic_hooks_timers` | `SecondOrStepTimer` |
| `basic_hooks_checkpoint` | `CheckpointSaverHook`, `CheckpointSaverListener` |
| `basic_hooks_summary` | `SummarySaverHook`, `StepCounterHook`, `ProfilerHook` |
| `basic_hooks_logging` | `LoggingTensorHook`, `NanTensorHook`, `FinalOpsHook`, `FeedFnHook` |

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = step.assign_add(1)
...     with tf.train.MonitoredSession(
...             hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
...         while not sess.should_stop():
...             last = sess.run(train)
>>> int(last)
3
"""

from __future__ import annotations

import logging
import time

from flowgraph.train.basic_hooks_checkpoint import CheckpointSaverHook, CheckpointSaverListener
from flowgraph.train.basic_hooks_logging import (
    FeedFnHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
)
from flowgraph.train.basic_hooks_summary import ProfilerHook, StepCounterHook, SummarySaverHook
from flowgraph.train.basic_hooks_timers import SecondOrStepTimer, global_step_read
from flowgraph.train.hook_schedule import NOW_AFTER, FixedRequest, Wake
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "ProfilerHook",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]

logger = logging.getLogger("tensorflow")


class StopAtStepHook(FixedRequest, SessionRunHook):
    """Requests a stop once the global step reaches `last_step`, or `num_steps` steps
    after the step the session started at (exactly one of them).

    Example
    -------
    >>> import flowgraph as tf
    >>> hook = tf.train.StopAtStepHook(last_step=1000)
    """

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step_tensor = global_step_read("StopAtStepHook")
        self._args = SessionRunArgs(self._global_step_tensor)

    def after_create_session(self, session, coord) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context) -> SessionRunArgs:
        return self._args

    def after_run(self, run_context, run_values) -> None:
        # The read may come before or after this step's increment: +1 is the optimistic
        # value; confirm with a fresh read before stopping.
        if run_values.results + 1 >= self._last_step:
            step = run_context.session.run(self._global_step_tensor)
            if step >= self._last_step:
                run_context.request_stop()

    # Schedule (flowgraph.train.hook_schedule): acts only once the step nears the last.
    def _wake(self) -> Wake:
        if self._last_step is None:
            return NOW_AFTER
        return Wake(after_step=self._last_step - 1)


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step` (used to
    start replicas gradually in asynchronous distributed training)."""

    def __init__(self, wait_until_step: int) -> None:
        self._wait_until_step = wait_until_step

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step_tensor = global_step_read("_GlobalStepWaiterHook")

    def before_run(self, run_context) -> None:
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logger.info("Waiting for global step %d before starting training.",
                    self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logger.info("Waiting for global step %d before starting training. Current "
                            "step is %d.", self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)
