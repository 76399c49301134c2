"""`tf.contrib.learn.Experiment` and `learn_runner.run`, in-process only.

An Experiment pairs an estimator (contrib.learn's or `tf.estimator`'s) with train and
eval input functions; `learn_runner.run` builds one with ``experiment_fn`` and calls
the method its ``schedule`` names (``"train_and_evaluate"`` when none is given, the
local default). There is no cluster: the distributed schedules (``run_std_server``,
``continuous_eval``) are not provided.

Example
-------
>>> import numpy as np, tempfile, flowgraph as tf
>>> x = np.linspace(0, 1, 20, dtype=np.float32).reshape(-1, 1)
>>> cols = tf.contrib.learn.infer_real_valued_columns_from_input(x)
>>> def experiment_fn(output_dir):
...     est = tf.contrib.learn.LinearRegressor(cols, model_dir=output_dir)
...     fn = tf.contrib.learn.io.numpy_input_fn(x, x[:, 0], shuffle=False, num_epochs=None)
...     return tf.contrib.learn.Experiment(est, fn, fn, train_steps=5, eval_steps=1)
>>> metrics, exports = tf.contrib.learn.learn_runner.run(experiment_fn, tempfile.mkdtemp())
>>> int(metrics["global_step"]), exports
(5, [])
"""

from __future__ import annotations

import os
import sys
import types

from flowgraph.estimators.estimator_util import fn_args

__all__ = ["Experiment", "learn_runner"]


class Experiment:
    """An estimator with its train and eval input functions and step counts."""

    def __init__(self, estimator, train_input_fn, eval_input_fn, eval_metrics=None,
                 train_steps=None, eval_steps=100, train_monitors=None, eval_hooks=None,
                 local_eval_frequency=None, eval_delay_secs=120,
                 continuous_eval_throttle_secs=60, min_eval_frequency=None,
                 delay_workers_by_global_step=False, export_strategies=None,
                 train_steps_per_iteration=None, checkpoint_and_export=False,
                 saving_listeners=None, check_interval_secs=5):
        self.estimator = estimator
        self.train_input_fn = train_input_fn
        self.eval_input_fn = eval_input_fn
        self.eval_metrics = eval_metrics
        self.train_steps = train_steps
        self.eval_steps = eval_steps
        self.train_monitors = train_monitors
        self.eval_hooks = eval_hooks
        self.export_strategies = export_strategies
        self.saving_listeners = saving_listeners

    def _check(self):
        if not any(callable(getattr(self.estimator, m, None)) for m in ("fit", "train")):
            raise ValueError(f"Experiment: estimator must be a contrib.learn or "
                             f"tf.estimator Estimator; got {type(self.estimator).__name__}")

    def train(self, delay_secs=None):
        """Train for `train_steps` on `train_input_fn`; returns the estimator."""
        self._check()
        if hasattr(self.estimator, "fit"):
            return self.estimator.fit(input_fn=self.train_input_fn, steps=self.train_steps,
                                      monitors=self.train_monitors)
        return self.estimator.train(self.train_input_fn, steps=self.train_steps,
                                    hooks=self.train_monitors,
                                    saving_listeners=self.saving_listeners)

    def _evaluate(self, steps, name):
        if hasattr(self.estimator, "fit"):
            return self.estimator.evaluate(input_fn=self.eval_input_fn, steps=steps,
                                           metrics=self.eval_metrics, name=name,
                                           hooks=self.eval_hooks)
        if self.eval_metrics:
            raise ValueError("Experiment: eval_metrics needs a contrib.learn estimator; "
                             "with a tf.estimator one use tf.estimator.add_metrics")
        return self.estimator.evaluate(self.eval_input_fn, steps=steps, name=name,
                                       hooks=self.eval_hooks)

    def evaluate(self, delay_secs=None, name=None):
        """Evaluate for `eval_steps` on `eval_input_fn`; returns the metrics dict."""
        self._check()
        return self._evaluate(self.eval_steps, name)

    def _export(self):
        base = os.path.join(os.fspath(self.estimator.model_dir), "export")
        return [strategy.export(self.estimator, os.path.join(base, strategy.name))
                for strategy in self.export_strategies or []]

    def train_and_evaluate(self):
        """Train, then evaluate; returns ``(eval_result, export_results)``."""
        self.train()
        return self.evaluate(), self._export()

    def test(self):
        """One training step and one eval step (a smoke test); returns the metrics."""
        self._check()
        steps, self.train_steps = self.train_steps, 1
        try:
            self.train()
        finally:
            self.train_steps = steps
        return self._evaluate(1, "one_pass")


_SCHEDULES = ("train", "evaluate", "train_and_evaluate", "test")


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    """Build an Experiment with `experiment_fn` and run its `schedule` method.

    ``experiment_fn(output_dir)`` when `output_dir` is given, else
    ``experiment_fn(run_config, hparams)``.
    """
    if not callable(experiment_fn):
        raise TypeError(f"Experiment builder {experiment_fn!r} is not callable.")
    if output_dir is not None and (run_config is not None or hparams is not None):
        raise ValueError("learn_runner.run: output_dir cannot be combined with run_config "
                         "or hparams; experiment_fn takes either (output_dir) or "
                         "(run_config, hparams)")
    if output_dir is not None:
        experiment = experiment_fn(output_dir)
    elif run_config is not None:
        if len(fn_args(experiment_fn)) < 2:
            raise ValueError("learn_runner.run: with run_config, experiment_fn must take "
                             "(run_config, hparams)")
        experiment = experiment_fn(run_config, hparams)
    else:
        raise ValueError("Must specify either output_dir or run_config")
    if not isinstance(experiment, Experiment):
        raise TypeError(f"Experiment builder did not return an Experiment instance, got "
                        f"{type(experiment).__name__} instead.")
    schedule = schedule or "train_and_evaluate"
    if schedule not in _SCHEDULES:
        raise ValueError(f"learn_runner.run: schedule {schedule!r} is not one of "
                         f"{list(_SCHEDULES)} (no cluster schedules in flowgraph)")
    return getattr(experiment, schedule)()


learn_runner = types.ModuleType(__name__.rpartition(".")[0] + ".learn_runner",
                                "`tf.contrib.learn.learn_runner`: `run`.")
learn_runner.run = run
learn_runner.__all__ = ["run"]
sys.modules.setdefault(learn_runner.__name__, learn_runner)
