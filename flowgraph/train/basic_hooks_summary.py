"""Hooks writing to event files: summaries, steps per second, and step traces.

- `SummarySaverHook` adds the summary op to the run every N steps/seconds and writes
  its result (plus a ``SessionLog.START`` on the first run).
- `StepCounterHook` logs ``global_step/sec: X`` and writes it as a scalar summary.
- `ProfilerHook` traces one step every N steps/seconds and writes
  ``timeline-STEP.json`` (Chrome trace format) and the step's run metadata.

All of them find the global step through its shared read tensor and write through the
directory's cached `FileWriter` (``tf.summary.FileWriterCache``).

Example
-------
>>> import tempfile, flowgraph as tf
>>> logdir = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     _ = tf.summary.scalar("step_value", step)
...     train = step.assign_add(1)
...     hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=logdir,
...                                        summary_op=tf.summary.merge_all()),
...              tf.train.StopAtStepHook(last_step=4)]
...     with tf.train.MonitoredSession(hooks=hooks) as sess:
...         while not sess.should_stop():
...             _ = sess.run(train)
"""

from __future__ import annotations

import logging
import os

from flowgraph.train.basic_hooks_timers import (
    SecondOrStepTimer,
    after_wake,
    global_step_read,
    summary_writer_for,
)
from flowgraph.train.hook_schedule import NOW, Wake
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["ProfilerHook", "StepCounterHook", "SummarySaverHook"]

logger = logging.getLogger("tensorflow")


class SummarySaverHook(SessionRunHook):
    """Saves summaries every `save_steps` steps or every `save_secs` seconds.

    Parameters
    ----------
    save_steps, save_secs : int, optional
        Exactly one of them.
    output_dir : str, optional
        Where to write (through the cached FileWriter) unless `summary_writer` is given.
    summary_writer : FileWriter, optional
    scaffold : Scaffold, optional
        Its ``summary_op`` is used (exactly one of `scaffold` and `summary_op`).
    summary_op : Tensor or list of Tensor, optional
        Serialized `Summary` protos, e.g. ``tf.summary.merge_all()``.
    """

    def __init__(self, save_steps: int | None = None, save_secs: int | None = None,
                 output_dir: str | None = None, summary_writer=None, scaffold=None,
                 summary_op=None) -> None:
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = summary_writer_for(self._output_dir)
        self._next_step = None
        self._global_step_tensor = global_step_read("SummarySaverHook")
        # Most steps fetch the bare step (no dict to rebuild); summary steps a dict.
        self._plain_args = SessionRunArgs(self._global_step_tensor)
        self._summary_args = None

    def before_run(self, run_context) -> SessionRunArgs:
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        if not self._request_summary:
            return self._plain_args
        if self._summary_args is None:
            requests = {"global_step": self._global_step_tensor}
            summary_op = self._get_summary_op()
            if summary_op is not None:
                requests["summary"] = summary_op
            self._summary_args = SessionRunArgs(requests)
        return self._summary_args

    def after_run(self, run_context, run_values) -> None:
        if not self._summary_writer:
            return
        results = run_values.results
        if type(results) is dict:
            global_step = results["global_step"] + 1
        else:
            global_step, results = results + 1, {}
        if self._next_step is None or self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)
        if self._next_step is None:
            from flowgraph.summary.event_format import SessionLog

            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None) -> None:
        if self._summary_writer:
            self._summary_writer.flush()

    # Schedule (flowgraph.train.hook_schedule): acts when its timer fires; in between,
    # after_run only sets `_next_step` from the step it read.
    _pure_before_run = False

    @property
    def _idle_request(self) -> SessionRunArgs:
        return self._plain_args

    def _catch_up(self, runs: int, step) -> None:
        if self._summary_writer and step is not None:
            self._next_step = step + 2

    def _wake(self) -> Wake:
        timer = self._timer
        if (not self._summary_writer or self._next_step is None
                or type(timer) is not SecondOrStepTimer
                or timer.last_triggered_step() is None
                or timer.should_trigger_for_step(self._next_step)):
            return NOW
        if timer._every_secs is not None:
            return Wake(before_time=timer._last_triggered_time + timer._every_secs)
        # before_run asks about previous step + 2 (after_run's `_next_step`)
        return Wake(before_step=timer.last_triggered_step() + timer._every_steps - 2)

    def _get_summary_op(self):
        summary_op = self._summary_op
        if summary_op is None:
            summary_op = self._scaffold.summary_op
        if summary_op is None:
            return None
        if not isinstance(summary_op, list):
            return [summary_op]
        return summary_op


class StepCounterHook(SessionRunHook):
    """Logs and records global steps per second.

    Every `every_n_steps` steps (or `every_n_secs` seconds) it logs
    ``global_step/sec: 123.4`` and, with an `output_dir` or `summary_writer`, writes
    the value as the scalar summary ``global_step/sec``.
    """

    def __init__(self, every_n_steps: int | None = 100, every_n_secs: float | None = None,
                 output_dir: str | None = None, summary_writer=None) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1
        self._warned = 0

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = summary_writer_for(self._output_dir)
        self._global_step_tensor = global_step_read("StepCounterHook")
        self._args = SessionRunArgs(self._global_step_tensor)
        from flowgraph.train.training_util import get_global_step

        self._summary_tag = get_global_step().op.name + "/sec"

    def before_run(self, run_context) -> SessionRunArgs:
        return self._args

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step) -> None:
        steps_per_sec = elapsed_steps / elapsed_time if elapsed_time > 0 else float("inf")
        if self._summary_writer is not None:
            from flowgraph.summary.event_format import Summary

            summary = Summary(value=[Summary.Value(tag=self._summary_tag,
                                                   simple_value=float(steps_per_sec))])
            self._summary_writer.add_summary(summary, global_step)
        logger.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(
                    global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step and self._warned < 5:
            # Some optimizers (e.g. sync replicas) do not increment on every step.
            self._warned += 1
            logger.warning(
                "It seems that global step (tf.train.get_global_step) has not been "
                "increased. Current value (could be stable): %s vs previous value: %s. You "
                "could increase the global step by passing tf.train.get_global_step() to "
                "Optimizer.apply_gradients or Optimizer.minimize.",
                stale_global_step, self._last_global_step)
        self._last_global_step = stale_global_step

    def end(self, session=None) -> None:
        # The rates reach the event file when training ends (TF's writer has them on
        # disk by then, so a program that reads the file after the loop sees them).
        if self._summary_writer is not None:
            self._summary_writer.flush()

    # Schedule (flowgraph.train.hook_schedule): acts when its timer fires or the step
    # did not move (the warning); in between, after_run only records the step.
    _pure_before_run = True

    @property
    def _idle_request(self) -> SessionRunArgs:
        return self._args

    def _catch_up(self, runs: int, step) -> None:
        self._last_global_step = step

    def _wake(self):
        return after_wake(self._timer, self._steps_per_run)._replace(stall=self._warned < 5)


class ProfilerHook(SessionRunHook):
    """Traces a step every `save_steps` steps (or `save_secs` seconds) and writes it as
    ``output_dir/timeline-STEP.json`` (open in chrome://tracing or Perfetto), plus the
    step's run metadata to the event file under tag ``step_STEP``.

    Parameters
    ----------
    save_steps, save_secs : int, optional
        Exactly one of them.
    output_dir : str
        Directory of the traces and the event file.
    show_dataflow, show_memory : bool
        Passed to `Timeline.generate_chrome_trace_format`.
    """

    def __init__(self, save_steps: int | None = None, save_secs: int | None = None,
                 output_dir: str = "", show_dataflow: bool = True,
                 show_memory: bool = False) -> None:
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._file_writer = summary_writer_for(output_dir)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        from flowgraph.runtime.config import RunOptions

        self._next_step = None
        self._global_step_tensor = global_step_read("ProfilerHook")
        requests = {"global_step": self._global_step_tensor}
        self._plain_args = SessionRunArgs(requests)
        self._trace_args = SessionRunArgs(
            requests, options=RunOptions(trace_level=RunOptions.FULL_TRACE))

    def before_run(self, run_context) -> SessionRunArgs:
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        return self._trace_args if self._request_summary else self._plain_args

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = run_values.results["global_step"]
        if self._next_step is None:
            # Start counting now: the first trace comes N steps/seconds from here.
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step),
                       run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata,
                                               f"step_{int(global_step)}")
        self._next_step = global_step + 1

    def _save(self, step, save_path: str, step_stats) -> None:
        from flowgraph.runtime.timeline import Timeline

        logger.info("Saving timeline for %d into '%s'.", step, save_path)
        trace = Timeline(step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(save_path, "w") as f:
            f.write(trace)
