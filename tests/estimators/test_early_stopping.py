"""Early-stopping hooks: reading eval results back, the predicates, stopping training."""

import json
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators import Estimator, EstimatorSpec, RunConfig, experimental
from flowgraph.estimators.early_stopping import read_eval_metrics
from flowgraph.estimators.estimator_util import write_eval_results
from flowgraph.estimators.inputs import numpy_input_fn


def counting_fn(features, labels, mode):
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(features) * w
    return EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1))


def make(tmp_path, is_chief=True):
    est = Estimator(counting_fn, config=RunConfig(model_dir=str(tmp_path),
                                                  log_step_count_steps=1000))
    return est


def write(est, step_to_metrics, name=None):
    for step, metrics in step_to_metrics.items():
        write_eval_results(est.eval_dir(name), {**metrics, "global_step": step}, step, None)


def test_read_eval_metrics_round_trip(tmp_path):
    est = make(tmp_path)
    write(est, {20: {"loss": 0.5, "acc": 0.0}, 10: {"loss": 1.0, "acc": 0.25}})
    got = read_eval_metrics(est.eval_dir())
    assert list(got) == [10, 20]
    assert got[10] == {"loss": 1.0, "acc": 0.25} and got[20] == {"loss": 0.5, "acc": 0.0}
    assert read_eval_metrics(str(tmp_path / "missing")) == {}


def _predicate(hook):
    return hook._should_stop_fn


@pytest.mark.parametrize("factory, args, history, expected", [
    (experimental.stop_if_higher_hook, ("acc", 0.9), {1: {"acc": 0.5}, 2: {"acc": 0.95}}, True),
    (experimental.stop_if_higher_hook, ("acc", 0.9), {1: {"acc": 0.5}, 2: {"acc": 0.9}}, False),
    (experimental.stop_if_lower_hook, ("loss", 0.1), {1: {"loss": 0.05}}, True),
    (experimental.stop_if_lower_hook, ("loss", 0.1), {1: {"loss": 0.2}}, False),
    (experimental.stop_if_no_decrease_hook, ("loss", 100),
     {100: {"loss": 1.0}, 150: {"loss": 1.1}, 200: {"loss": 1.0}}, True),
    (experimental.stop_if_no_decrease_hook, ("loss", 100),
     {100: {"loss": 1.0}, 150: {"loss": 0.9}, 200: {"loss": 1.0}}, False),
    (experimental.stop_if_no_increase_hook, ("acc", 50),
     {10: {"acc": 0.8}, 30: {"acc": 0.7}, 60: {"acc": 0.75}}, True),
    (experimental.stop_if_no_increase_hook, ("acc", 50),
     {10: {"acc": 0.8}, 30: {"acc": 0.9}, 60: {"acc": 0.75}}, False),
])
def test_predicates(tmp_path, factory, args, history, expected):
    est = make(tmp_path)
    write(est, history)
    assert _predicate(factory(est, *args))() is expected


def test_min_steps_and_eval_dir(tmp_path):
    est = make(tmp_path)
    write(est, {5: {"loss": 0.0}, 50: {"loss": 1.0}}, name="val")
    assert _predicate(experimental.stop_if_lower_hook(
        est, "loss", 0.5, eval_dir=est.eval_dir("val")))()
    assert not _predicate(experimental.stop_if_lower_hook(
        est, "loss", 0.5, eval_dir=est.eval_dir("val"), min_steps=10))()
    with pytest.raises(KeyError, match="metric 'acc' is not in the evaluation results"):
        _predicate(experimental.stop_if_higher_hook(
            est, "acc", 0.5, eval_dir=est.eval_dir("val")))()


def test_hook_stops_training(tmp_path):
    est = make(tmp_path)
    write(est, {1: {"loss": 0.0}})
    hook = experimental.stop_if_lower_hook(est, "loss", 0.5, run_every_secs=None,
                                           run_every_steps=5)
    est.train(numpy_input_fn(np.ones(4, np.float32), np.ones(4, np.float32), batch_size=2,
                             num_epochs=None, shuffle=False), steps=100, hooks=[hook])
    step = int(est.get_variable_value("global_step"))
    assert step <= 2  # the timer triggers on the first step
    # Locally the STOP flag is not checkpointed, so training on without the hook (or with
    # it) resumes fine (TF fails here: "Key signal_early_stopping/STOP not found").
    assert "signal_early_stopping/STOP" not in est.get_variable_names()
    est.train(numpy_input_fn(np.ones(4, np.float32), np.ones(4, np.float32), batch_size=2,
                             shuffle=False))
    assert int(est.get_variable_value("global_step")) == step + 2


def test_make_hook_checks(tmp_path):
    est = make(tmp_path)
    with pytest.raises(ValueError, match="Only one of `run_every_secs` and `run_every_steps`"):
        experimental.make_early_stopping_hook(est, lambda: True, run_every_secs=1,
                                              run_every_steps=1)
    with pytest.raises(TypeError, match="must be callable"):
        experimental.make_early_stopping_hook(est, 3)


def test_non_chief_polls_the_stop_variable(tmp_path, monkeypatch):
    cluster = {"chief": ["a:1"], "worker": ["b:1"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster,
                                                "task": {"type": "worker", "index": 0}}))
    est = Estimator(counting_fn, model_dir=str(tmp_path))
    hook = experimental.stop_if_lower_hook(est, "loss", 0.1)
    assert type(hook).__name__ == "_CheckForStoppingHook"
    monkeypatch.delenv("TF_CONFIG")
    assert os.path.isdir(str(tmp_path))
