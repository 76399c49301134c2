"""`tf.contrib.learn.monitors`: `ValidationMonitor`, the one monitor TF1's tutorials pass
to ``fit(monitors=[...])``, as a session hook.

Every `every_n_steps` training steps, when a checkpoint newer than the last one it saw
exists, it evaluates the estimator on its data and remembers the best value of
`early_stopping_metric`; after `early_stopping_rounds` steps without improvement it stops
training. Checkpoints are what it evaluates, so give the estimator a
``RunConfig(save_checkpoints_steps=...)`` (or ``save_checkpoints_secs``) small enough.

Example
-------
>>> monitor = ValidationMonitor(x=[[0.0]], y=[0.0], every_n_steps=10)
>>> monitor.best_step is None, monitor.early_stopped
(True, False)
"""

from __future__ import annotations

from flowgraph.train import checkpoint_state as _ckpt
from flowgraph.train import training_util
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["ValidationMonitor"]


class ValidationMonitor(SessionRunHook):
    """Evaluate on validation data during `fit`, with optional early stopping."""

    def __init__(self, x=None, y=None, input_fn=None, batch_size=None, eval_steps=None,
                 every_n_steps=100, metrics=None, hooks=None, early_stopping_rounds=None,
                 early_stopping_metric="loss", early_stopping_metric_minimize=True,
                 name=None, check_interval_secs=5):
        if x is None and input_fn is None:
            raise ValueError("ValidationMonitor: either x or input_fn must be provided.")
        self.x, self.y, self.input_fn, self.batch_size = x, y, input_fn, batch_size
        self.eval_steps, self.every_n_steps = eval_steps, every_n_steps
        self.metrics, self.hooks, self.name = metrics, hooks, name
        self.early_stopping_rounds = early_stopping_rounds
        self.early_stopping_metric = early_stopping_metric
        self.early_stopping_metric_minimize = early_stopping_metric_minimize
        self.estimator = None  # set by the estimator's fit
        self.best_step = None
        self.best_value = None
        self.best_metrics = None
        self.early_stopped = False
        self._latest_path = None
        self._last_step = None

    def set_estimator(self, estimator) -> None:
        self.estimator = estimator

    def begin(self):
        if self.estimator is None:
            raise ValueError("ValidationMonitor: pass it to a contrib.learn estimator's "
                             "fit(monitors=[...]), which tells it what to evaluate")
        self._global_step = training_util.get_global_step()

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._last_step is not None and step - self._last_step < self.every_n_steps:
            return
        self._last_step = step
        path = _ckpt.latest_checkpoint(self.estimator.model_dir)
        if path is None or path == self._latest_path:
            return
        self._latest_path = path
        if self.input_fn is not None:
            results = self.estimator.evaluate(input_fn=self.input_fn, steps=self.eval_steps,
                                              metrics=self.metrics, hooks=self.hooks,
                                              name=self.name)
        else:
            results = self.estimator.evaluate(x=self.x, y=self.y, batch_size=self.batch_size,
                                              steps=self.eval_steps, metrics=self.metrics,
                                              hooks=self.hooks, name=self.name)
        if self.early_stopping_rounds is None:
            return
        if self.early_stopping_metric not in results:
            raise ValueError(f"ValidationMonitor: early_stopping_metric "
                             f"{self.early_stopping_metric!r} is not among the evaluation "
                             f"results {sorted(results)}")
        value = float(results[self.early_stopping_metric])
        better = self.best_value is None or (
            value < self.best_value if self.early_stopping_metric_minimize
            else value > self.best_value)
        if better:
            self.best_value, self.best_step = value, int(results["global_step"])
            self.best_metrics = results
        elif step - self.best_step >= self.early_stopping_rounds:
            self.early_stopped = True
            run_context.request_stop()
