"""Hooks that look at values: logging tensors, the NaN-loss guard, final ops, feeds.

`LoggingTensorHook` prints ``loss = 0.31, step = 200 (0.48 sec)`` through the
``tensorflow`` logger every N iterations or seconds; `NanTensorHook` raises
`NanLossDuringTrainingError` (or just stops) when the loss becomes NaN;
`FinalOpsHook` evaluates ops once when the session ends (the Estimator's evaluation
metrics); `FeedFnHook` feeds the dict returned by a function on every run.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     loss = tf.constant(float("nan"))
...     try:
...         with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
...             _ = sess.run(loss)
...     except tf.train.NanLossDuringTrainingError as e:
...         print(e)
NaN loss during training.
"""

from __future__ import annotations

import logging

import numpy as np

from flowgraph.train.basic_hooks_timers import NeverTriggerTimer, SecondOrStepTimer
from flowgraph.train.hook_schedule import NOW, FixedRequest, Wake
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = [
    "FeedFnHook",
    "FinalOpsHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
]

logger = logging.getLogger("tensorflow")


def _as_graph_element(obj):
    """`obj` (a tensor, or a tensor/op name) as an element of the default graph; a bare
    op name means its output 0 and must not be ambiguous."""
    from flowgraph.framework.graph import get_default_graph

    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to "
                             f"current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError, IndexError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs "
                     "(at least 2).")


class LoggingTensorHook(SessionRunHook):
    """Logs tensor values every `every_n_iter` runs or `every_n_secs` seconds, and/or
    at the end.

    Parameters
    ----------
    tensors : dict or list
        Tag -> tensor (or tensor name); a list logs each item under its own name.
        Dict tags are logged in sorted order, list items in their order.
    every_n_iter, every_n_secs : int, optional
        At most one of them (counted in `run` calls of this session, not global steps).
    at_end : bool
        Also log the values when the session ends.
    formatter : callable, optional
        ``formatter(dict tag -> value) -> str`` replaces the default
        ``tag = value, ...`` line.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.constant(0.25, name="loss")
    ...     hook = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=100)
    """

    def __init__(self, tensors, every_n_iter: int | None = None,
                 every_n_secs: float | None = None, at_end: bool = False,
                 formatter=None) -> None:
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (NeverTriggerTimer() if only_log_at_end else
                       SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))
        self._log_at_end = at_end

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(tensor)
                                 for tag, tensor in self._tensors.items()}
        self._args = SessionRunArgs(self._current_tensors)

    def before_run(self, run_context) -> SessionRunArgs | None:
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return self._args if self._should_trigger else None

    def _log_tensors(self, tensor_values: dict) -> None:
        if not self._formatter and not logger.isEnabledFor(logging.INFO):
            # Nothing would be printed: skip formatting the values (a user's formatter
            # is still called, as TensorFlow calls it).
            self._timer.update_last_triggered_step(self._iter_count)
            return
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                logger.info(self._formatter(tensor_values))
                return
            stats = ", ".join(f"{tag} = {tensor_values[tag]!s}" for tag in self._tag_order)
            if elapsed_secs is not None:
                logger.info("%s (%.3f sec)", stats, elapsed_secs)
            else:
                logger.info("%s", stats)
        finally:
            np.set_printoptions(**original)

    def after_run(self, run_context, run_values) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))

    # Schedule (flowgraph.train.hook_schedule): acts every N runs or seconds.
    _pure_before_run = False
    _idle_request = None

    def _catch_up(self, runs: int, step) -> None:
        self._iter_count += runs

    def _wake(self) -> Wake:
        timer = self._timer
        if type(timer) is NeverTriggerTimer:
            return Wake()
        if type(timer) is not SecondOrStepTimer or timer.last_triggered_step() is None:
            return NOW
        if timer._every_secs is not None:
            return Wake(before_time=timer._last_triggered_time + timer._every_secs)
        return Wake(before_runs=max(0, timer.last_triggered_step() + timer._every_steps
                                    - self._iter_count))


class NanLossDuringTrainingError(RuntimeError):
    """Raised by `NanTensorHook` when the loss is NaN."""

    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(FixedRequest, SessionRunHook):
    """Watches `loss_tensor`: on NaN, raises `NanLossDuringTrainingError` (default) or,
    with ``fail_on_nan_loss=False``, logs a warning and requests a stop."""

    def __init__(self, loss_tensor, fail_on_nan_loss: bool = True) -> None:
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss
        self._args = SessionRunArgs(loss_tensor)

    def before_run(self, run_context) -> SessionRunArgs:
        return self._args

    def after_run(self, run_context, run_values) -> None:
        loss = run_values.results
        if loss != loss:  # only NaN is unequal to itself (and this skips np.isnan's cost)
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logger.error(message)
                raise NanLossDuringTrainingError
            logger.warning(message)
            run_context.request_stop()

    # Schedule (flowgraph.train.hook_schedule): acts on a NaN only.
    def _wake(self) -> Wake:
        return Wake(nan=True)


class FeedFnHook(SessionRunHook):
    """Feeds ``feed_fn()`` (a dict tensor -> value) on every run."""

    def __init__(self, feed_fn) -> None:
        self.feed_fn = feed_fn

    def before_run(self, run_context) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` (any fetch structure) when the session ends; the values are
    then in `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None) -> None:
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session) -> None:
        if self._final_ops is None:
            return
        from flowgraph.framework import errors

        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            logger.warning(
                "An OutOfRangeError or StopIteration was raised while FinalOpsHook ran its "
                "ops. The final ops must not depend on the input pipeline: e.g. a metric's "
                "value_op should only read variables (its update_op consumes the input). "
                "Running it read another batch from an exhausted input.")
            raise
