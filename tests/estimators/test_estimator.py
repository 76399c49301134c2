"""Estimator: train/evaluate/predict, resuming, max_steps, summaries, warm start."""

import glob
import logging
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig
from flowgraph.estimators.inputs import numpy_input_fn
from tests.estimators.toy_models import sgd

X = np.random.default_rng(0).uniform(-1, 1, (8, 3)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.25).astype(np.float32)


def linear_fn(features, labels, mode, params):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.reshape(tf.matmul(features["x"], w) + b, [-1])
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"pred": pred, "twice": pred * 2.0})
    loss = tf.reduce_mean(tf.square(pred - labels))
    abs_err = tf.reduce_mean(tf.abs(pred - labels))
    from flowgraph.estimators.estimator_util import mean_metric

    return EstimatorSpec(mode, loss=loss, train_op=sgd(loss, params.get("lr", 0.2)),
                         eval_metric_ops={"mae": mean_metric(abs_err, "mae")})


def train_input(epochs=None):
    return numpy_input_fn({"x": X}, Y, batch_size=4, num_epochs=epochs, shuffle=False)


def make(tmp_path, **kwargs):
    config = RunConfig(model_dir=str(tmp_path), tf_random_seed=7, save_checkpoints_steps=None,
                       save_checkpoints_secs=600, log_step_count_steps=10)
    return Estimator(linear_fn, config=config, params={"lr": 0.2}, **kwargs)


def step_of(est):
    return int(est.get_variable_value("global_step"))


def test_train_resumes_and_honours_max_steps(tmp_path):
    est = make(tmp_path)
    assert est.latest_checkpoint() is None
    est.train(train_input(), steps=30)
    assert step_of(est) == 30 and est.latest_checkpoint().endswith("model.ckpt-30")
    w30 = est.get_variable_value("w")
    est.train(train_input(), steps=20)
    assert step_of(est) == 50 and not np.allclose(est.get_variable_value("w"), w30)
    calls = []

    def counting_input():
        calls.append(1)
        return train_input()()

    est.train(counting_input, max_steps=50)
    assert calls == [] and step_of(est) == 50
    est.train(counting_input, max_steps=65)
    assert calls == [1] and step_of(est) == 65
    assert sorted(est.get_variable_names()) == ["b", "global_step", "w"]


def test_train_until_input_ends(tmp_path):
    est = make(tmp_path)
    est.train(train_input(epochs=3))
    assert step_of(est) == 6  # 8 rows / batch 4 * 3 epochs


def test_train_argument_errors(tmp_path):
    est = make(tmp_path)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        est.train(train_input(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="Must specify steps > 0"):
        est.train(train_input(), steps=0)
    with pytest.raises(TypeError, match="SessionRunHook"):
        est.train(train_input(), steps=1, hooks=[object()])


def test_evaluate_returns_metrics_and_writes_summaries(tmp_path):
    est = make(tmp_path)
    # TF 2.15: no checkpoint yet -> the freshly initialized model is evaluated
    assert est.evaluate(train_input(epochs=1))["global_step"] == 0
    est.train(train_input(), steps=200)
    result = est.evaluate(train_input(epochs=1))
    assert set(result) == {"loss", "mae", "global_step"} and result["global_step"] == 200
    assert type(result["global_step"]) is np.int64  # as TF 2.15's evaluate returns it
    assert result["loss"] < 1e-3 and result["mae"] < 0.03
    named = est.evaluate(train_input(epochs=1), steps=1, name="holdout")
    assert named["global_step"] == 200
    for eval_dir in (est.eval_dir(), est.eval_dir("holdout")):
        assert eval_dir in (os.path.join(str(tmp_path), "eval"),
                            os.path.join(str(tmp_path), "eval_holdout"))
        files = glob.glob(os.path.join(eval_dir, "events.out.tfevents.*"))
        assert files
        tags = {(e.step, v.tag) for f in files for e in tf.train.summary_iterator(f)
                for v in e.summary.value}
        assert {(200, "loss"), (200, "mae")} <= tags


def test_evaluate_older_checkpoint(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=5)
    first = est.latest_checkpoint()
    est.train(train_input(), steps=5)
    assert est.evaluate(train_input(epochs=1), checkpoint_path=first)["global_step"] == 5


def test_predict_per_example_and_batches(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=200)
    predict_input = numpy_input_fn({"x": X}, batch_size=3, shuffle=False)
    preds = list(est.predict(predict_input))
    assert len(preds) == 8 and set(preds[0]) == {"pred", "twice"}
    np.testing.assert_allclose([p["pred"] for p in preds], Y, atol=0.05)
    only = list(est.predict(predict_input, predict_keys=["twice"]))
    assert set(only[0]) == {"twice"}
    batches = list(est.predict(predict_input, yield_single_examples=False))
    assert [len(b["pred"]) for b in batches] == [3, 3, 2]
    with pytest.raises(ValueError, match="Expected to run at least one output"):
        list(est.predict(predict_input, predict_keys=["nope"]))


def test_predict_single_tensor_and_without_checkpoint(tmp_path, caplog):
    def fn(features, mode):
        v = tf.get_variable("v", [], initializer=tf.ones_initializer())
        return EstimatorSpec(mode, predictions=features * v)

    est = Estimator(fn, model_dir=str(tmp_path))
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        out = list(est.predict(numpy_input_fn(np.arange(3, dtype=np.float32), batch_size=2,
                                              shuffle=False)))
    assert [float(v) for v in out] == [0.0, 1.0, 2.0]
    assert "running initialization to predict" in caplog.text


def test_input_fn_and_model_fn_arguments(tmp_path):
    seen = {}

    def input_fn(params, mode, config):
        seen["input"] = (params["k"], mode, config.tf_random_seed)
        return {"x": tf.constant(X)}, tf.constant(Y)

    def model_fn(features, labels, mode, params, config):
        seen["model"] = (params["k"], mode, config.model_dir)
        return linear_fn(features, labels, mode, {"lr": 0.1})

    est = Estimator(model_fn, model_dir=str(tmp_path), params={"k": 3},
                    config=RunConfig(tf_random_seed=5))
    est.train(input_fn, steps=2)
    assert seen == {"input": (3, "train", 5), "model": (3, "train", str(tmp_path))}
    assert est.params == {"k": 3} and est.params is not est.params


def test_constructor_checks(tmp_path, caplog):
    with pytest.raises(ValueError, match="has following not expected args: \\['extra'\\]"):
        Estimator(lambda features, labels, extra: None)
    with pytest.raises(ValueError, match="does not include params argument"):
        Estimator(lambda features, labels: None, params={"a": 1})
    with pytest.raises(ValueError, match="must include features argument"):
        Estimator(lambda labels: None)
    with pytest.raises(ValueError, match="model_fn must be provided"):
        Estimator(None)
    with pytest.raises(ValueError, match="are set both in constructor and `RunConfig`"):
        Estimator(linear_fn, model_dir=str(tmp_path), config=RunConfig(model_dir="/tmp/x"))
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        est = Estimator(linear_fn, params={})
    assert os.path.isdir(est.model_dir) and est.config.model_dir == est.model_dir
    assert "Using temporary folder as model directory: " + est.model_dir in caplog.text


def test_model_fn_errors(tmp_path):
    est = Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="should return an EstimatorSpec"):
        est.train(train_input(), steps=1)

    def no_labels(features, mode):
        return None

    with pytest.raises(ValueError, match="does not take labels, but input_fn returns labels"):
        Estimator(no_labels, model_dir=str(tmp_path)).train(train_input(), steps=1)

    def forgets_train_op(features, labels, mode):
        return EstimatorSpec(mode, loss=tf.reduce_sum(features["x"]))

    with pytest.raises(ValueError, match="model_fn 'forgets_train_op' returned None"):
        Estimator(forgets_train_op, model_dir=str(tmp_path)).train(train_input(), steps=1)


def test_logging_like_tf(tmp_path, caplog):
    est = make(tmp_path)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est.train(train_input(), steps=12)
    text = caplog.text
    for line in ("Calling model_fn.", "Done calling model_fn.", "Create CheckpointSaverHook.",
                 "Saving checkpoints for 12 into", "Loss for final step:", "step = 11"):
        assert line in text, line


def test_seed_makes_runs_reproducible(tmp_path):
    def fn(features, labels, mode):
        w = tf.get_variable("w", [3, 2])  # random init
        loss = tf.reduce_mean(tf.matmul(features["x"], w))
        return EstimatorSpec(mode, loss=loss, train_op=sgd(loss, 0.01))

    values = []
    for d in ("a", "b"):
        est = Estimator(fn, model_dir=str(tmp_path / d), config=RunConfig(tf_random_seed=11))
        est.train(train_input(), steps=1)
        values.append(est.get_variable_value("w"))
    np.testing.assert_array_equal(values[0], values[1])


def test_warm_start_from_another_model_dir(tmp_path):
    source = make(tmp_path / "src")
    source.train(train_input(), steps=150)
    warm = Estimator(linear_fn, model_dir=str(tmp_path / "dst"), params={"lr": 1e-9},
                     warm_start_from=str(tmp_path / "src"))
    warm.train(train_input(), steps=1)
    np.testing.assert_allclose(warm.get_variable_value("w"), source.get_variable_value("w"),
                               atol=1e-6)
    assert step_of(warm) == 1  # global_step is not trainable: not warm-started
    from flowgraph.estimators import WarmStartSettings

    only_b = Estimator(linear_fn, model_dir=str(tmp_path / "dst2"), params={"lr": 1e-9},
                       warm_start_from=WarmStartSettings(str(tmp_path / "src"),
                                                         vars_to_warm_start="b"))
    only_b.train(train_input(), steps=1)
    np.testing.assert_allclose(only_b.get_variable_value("b"), source.get_variable_value("b"),
                               atol=1e-6)
    assert np.abs(only_b.get_variable_value("w")).max() < 1e-6


def test_keyboard_interrupt_saves_a_checkpoint(tmp_path):
    from flowgraph.train.session_run_hook import SessionRunHook

    class InterruptAtSeven(SessionRunHook):
        def begin(self):
            self.n = 0

        def after_run(self, run_context, run_values):
            self.n += 1
            if self.n == 7:
                raise KeyboardInterrupt

    est = make(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        est.train(train_input(), steps=100, hooks=[InterruptAtSeven()])
    assert est.latest_checkpoint().endswith("model.ckpt-7") and step_of(est) == 7


def test_saving_listeners_and_nan_guard(tmp_path):
    from flowgraph.estimators.estimator_util import train_api

    api = train_api()
    saves = []

    class Listener(api.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            saves.append(global_step_value)

    est = make(tmp_path)
    est.train(train_input(), steps=3, saving_listeners=[Listener()])
    assert saves == [0, 3]
    nobody = Estimator(linear_fn, params={}, config=RunConfig(
        model_dir=str(tmp_path / "n"), save_checkpoints_secs=None))
    with pytest.raises(ValueError, match="There should be a CheckpointSaverHook"):
        nobody.train(train_input(), steps=1, saving_listeners=[Listener()])

    def nan_fn(features, labels, mode):
        loss = tf.reduce_mean(features["x"]) * np.float32(np.nan)
        return EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(
            tf.train.get_global_step(), 1))

    with pytest.raises(api.NanLossDuringTrainingError):
        Estimator(nan_fn, model_dir=str(tmp_path / "nan")).train(train_input(), steps=2)


def test_export_saved_model_delegates(tmp_path, monkeypatch):
    import sys
    import types

    calls = []
    fake = types.ModuleType("flowgraph.estimators.export_impl")
    fake.export_saved_model = lambda est, base, fn, **kw: calls.append((est, base, kw)) or "p"
    monkeypatch.setitem(sys.modules, "flowgraph.estimators.export_impl", fake)
    est = make(tmp_path)
    assert est.export_saved_model("/tmp/exp", lambda: None) == "p"
    assert calls[0][2]["experimental_mode"] == ModeKeys.PREDICT


def test_estimator_alias_module():
    import flowgraph.estimator
    import flowgraph.estimators

    assert flowgraph.estimator is flowgraph.estimators
    assert flowgraph.estimator.experimental.stop_if_no_decrease_hook is not None
    assert flowgraph.estimator.inputs.numpy_input_fn is numpy_input_fn


def test_input_fn_returning_a_dataset(tmp_path):
    data = pytest.importorskip("flowgraph.data")

    def input_fn():
        ds = data.Dataset.from_tensor_slices(({"x": X}, Y))
        return ds.batch(4).repeat(2)

    est = make(tmp_path)
    est.train(input_fn)
    assert step_of(est) == 4  # 2 batches * 2 epochs, then end of input
    result = est.evaluate(lambda: data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(8))
    assert result["global_step"] == 4

    def features_only():
        return data.Dataset.from_tensor_slices({"x": X}).batch(5)

    assert len(list(est.predict(features_only))) == 8


def test_progress_bar_on_a_terminal(tmp_path, monkeypatch):
    from flowgraph.estimators import estimator_train

    bars = []

    class FakeBar:
        def __init__(self, total, **kwargs):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            self.closed = True

    monkeypatch.setattr(estimator_train, "_tqdm_or_none", lambda: FakeBar)
    make(tmp_path).train(train_input(), steps=9)
    assert [(b.total, b.n, b.closed) for b in bars] == [(9, 9, True)]
    monkeypatch.undo()
    monkeypatch.setenv("CI", "1")
    assert estimator_train._tqdm_or_none() is None
