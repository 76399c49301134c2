"""Early-stopping hooks (``tf.estimator.experimental.stop_if_*``).

A hook returned here checks the evaluation results written by `Estimator.evaluate`
(the event files of the eval directory, read with ``tf.train.summary_iterator``; the
JSON lines file `evaluate` also writes there when no event file is readable) every
`run_every_secs` seconds or `run_every_steps` steps of training, and stops training
when its condition holds. Only the chief evaluates the condition; it sets a
``signal_early_stopping/STOP`` variable that other workers' hooks poll.

Example
-------
>>> import flowgraph as tf
>>> est = tf.estimator.Estimator(lambda features, labels, mode: None)
>>> hook = stop_if_no_decrease_hook(est, "loss", max_steps_without_decrease=1000)
>>> type(hook).__name__
'_StopOnPredicateHook'
"""

from __future__ import annotations

import collections
import glob
import logging
import operator
import os

from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = [
    "make_early_stopping_hook",
    "read_eval_metrics",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]

logger = logging.getLogger("tensorflow")

_EVENT_FILE_GLOB = "events.out.tfevents.*"


def _events(eval_dir: str):
    from flowgraph.framework import errors
    from flowgraph.summary.event_format import summary_iterator

    for path in sorted(glob.glob(os.path.join(eval_dir, _EVENT_FILE_GLOB))):
        try:
            yield from summary_iterator(path)
        except (errors.DataLossError, OSError, ValueError) as e:
            logger.warning("Skipping rest of the file due to encountering data corruption "
                           "error; file path: %s; error: %s", path, e)


def _is_scalar(value) -> bool:
    # A simple_value of 0.0 may not be stored at all (proto3), so "no other payload".
    return value.HasField("simple_value") or not any(
        value.HasField(f) for f in ("tensor", "histo", "image", "audio"))


def read_eval_metrics(eval_dir: str) -> collections.OrderedDict:
    """Evaluation results in `eval_dir`: an OrderedDict global_step -> {metric: value},
    sorted by step.

    Example
    -------
    >>> import tempfile
    >>> read_eval_metrics(tempfile.mkdtemp())
    OrderedDict()
    """
    results: dict[int, dict[str, float]] = collections.defaultdict(dict)
    if os.path.isdir(eval_dir):
        for event in _events(eval_dir):
            if not event.HasField("summary"):
                continue
            metrics = {value.tag: float(value.simple_value) for value in event.summary.value
                       if _is_scalar(value)}
            if metrics:
                results[int(event.step)].update(metrics)
    return collections.OrderedDict(sorted(results.items()))


def _get_or_create_stop_var(local: bool = False):
    """The ``signal_early_stopping/STOP`` flag. In a cluster it is a global variable, so
    the chief's value reaches the workers; locally it is a local variable, which is not
    checkpointed (TF checkpoints it, so resuming a model_dir trained without the hook
    fails with "Key signal_early_stopping/STOP not found in checkpoint")."""
    from flowgraph.framework import dtypes
    from flowgraph.framework.graph import GraphKeys
    from flowgraph.ops import init_ops, variable_scope

    collection = GraphKeys.LOCAL_VARIABLES if local else GraphKeys.GLOBAL_VARIABLES
    with variable_scope.variable_scope("signal_early_stopping", values=[],
                                       reuse=variable_scope.AUTO_REUSE):
        return variable_scope.get_variable(
            "STOP", shape=[], dtype=dtypes.bool,
            initializer=init_ops.constant_initializer(False),
            collections=[collection], trainable=False)


class _StopOnPredicateHook(SessionRunHook):
    """Requests a stop when `should_stop_fn()` is true (checked on a timer)."""

    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None,
                 local: bool = False) -> None:
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        from flowgraph.train.basic_session_run_hooks import SecondOrStepTimer

        self._should_stop_fn = should_stop_fn
        self._local = local
        self._timer = SecondOrStepTimer(every_secs=run_every_secs, every_steps=run_every_steps)
        self._global_step = None
        self._stop_op = None

    def begin(self) -> None:
        from flowgraph.ops import state_ops
        from flowgraph.train.training_util import get_global_step

        self._global_step = get_global_step()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use early stopping hooks.")
        self._stop_op = state_ops.assign(_get_or_create_stop_var(self._local), True)
        self._args = SessionRunArgs(self._global_step)

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values) -> None:
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._should_stop_fn():
                logger.info("Requesting early stopping at global step %d", step)
                run_context.session.run(self._stop_op)
                run_context.request_stop()


class _CheckForStoppingHook(SessionRunHook):
    """On non-chief workers: stops once the chief has set the STOP variable."""

    def begin(self) -> None:
        self._args = SessionRunArgs(_get_or_create_stop_var())

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values) -> None:
        if run_values.results:
            logger.info("Early stopping requested, suspending run.")
            run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60,
                             run_every_steps=None):
    """A hook stopping training when `should_stop_fn()` returns True (chief), or when
    the chief has stopped (other workers)."""
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` must be set.")
    config = estimator.config
    if config.is_chief:
        return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps,
                                    local=not config.cluster_spec)
    return _CheckForStoppingHook()


def _threshold_hook(estimator, metric_name, threshold, higher_is_better, eval_dir, min_steps,
                    run_every_secs, run_every_steps):
    eval_dir = eval_dir if eval_dir is not None else estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt
    words = "greater than" if higher_is_better else "less than"

    def crossed() -> bool:
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric(metrics, metric_name, eval_dir, step)
            if better(value, threshold):
                logger.info('At step %s, metric "%s" has value %s which is %s the configured '
                            "threshold (%s) for early stopping.", step, metric_name, value,
                            words, threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, crossed, run_every_secs, run_every_steps)


def _no_improvement_hook(estimator, metric_name, max_steps_without_improvement,
                         higher_is_better, eval_dir, min_steps, run_every_secs,
                         run_every_steps):
    eval_dir = eval_dir if eval_dir is not None else estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt
    word = "increase" if higher_is_better else "decrease"

    def stalled() -> bool:
        best = best_step = None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = _metric(metrics, metric_name, eval_dir, step)
            if best is None or better(value, best):
                best, best_step = value, step
            if step - best_step >= max_steps_without_improvement:
                logger.info('No %s in metric "%s" for %s steps, which is greater than or equal '
                            "to max steps (%s) configured for early stopping.", word,
                            metric_name, step - best_step, max_steps_without_improvement)
                return True
        return False

    return make_early_stopping_hook(estimator, stalled, run_every_secs, run_every_steps)


def _metric(metrics: dict, name: str, eval_dir: str, step: int) -> float:
    if name not in metrics:
        raise KeyError(f"Early stopping: metric {name!r} is not in the evaluation results of "
                       f"step {step} in {eval_dir} (it has: {sorted(metrics)}).")
    return metrics[name]


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):
    """Stop training once `metric_name` of an evaluation is above `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, True, eval_dir, min_steps,
                           run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):
    """Stop training once `metric_name` of an evaluation is below `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, False, eval_dir, min_steps,
                           run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None):
    """Stop training when `metric_name` has not increased for
    `max_steps_without_increase` global steps of evaluations."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase, True,
                                eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None):
    """Stop training when `metric_name` has not decreased for
    `max_steps_without_decrease` global steps of evaluations.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.Estimator(lambda features, labels, mode: None)
    >>> hook = tf.estimator.experimental.stop_if_no_decrease_hook(
    ...     est, "loss", 500, run_every_secs=None, run_every_steps=100)
    """
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease, False,
                                eval_dir, min_steps, run_every_secs, run_every_steps)
