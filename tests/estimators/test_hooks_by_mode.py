"""Hooks in every mode: evaluate(hooks=), predict(hooks=), and the EstimatorSpec's
training_chief_hooks / training_hooks / evaluation_hooks / prediction_hooks; and an
Estimator export read back with the TF1 loader (`tf.saved_model.loader.load`)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators import export as ex
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.model_fn import EstimatorSpec, ModeKeys

X = np.arange(30, dtype=np.float32).reshape(10, 3) / 10.0
Y = X @ np.array([[1.0], [-2.0], [0.5]], np.float32)


class Recorder(tf.train.SessionRunHook):
    """Counts the calls of each hook method; remembers the fetched values."""

    def __init__(self, name: str, log: list, fetch=None) -> None:
        self.name, self.log, self.fetch, self.values = name, log, fetch, []

    def begin(self):
        # As in TF, the default graph is the session's graph in `begin` (not
        # necessarily in `before_run`): resolve fetched tensors here.
        self.log.append((self.name, "begin"))
        if self.fetch is not None:
            self.tensor = tf.get_default_graph().get_tensor_by_name(self.fetch)

    def after_create_session(self, session, coord):
        self.log.append((self.name, "after_create_session"))

    def before_run(self, run_context):
        self.log.append((self.name, "before_run"))
        if self.fetch is not None:
            return tf.train.SessionRunArgs(self.tensor)
        return None

    def after_run(self, run_context, run_values):
        self.log.append((self.name, "after_run"))
        if self.fetch is not None:
            self.values.append(run_values.results)

    def end(self, session):
        self.log.append((self.name, "end"))


def _count(log, name, what):
    return sum(1 for n, w in log if n == name and w == what)


# The Estimator deep-copies `params` (as TF does), so the model_fn finds its log here.
LOGS: dict[str, list] = {}


def _model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    pred = tf.identity(tf.matmul(features["x"], w), name="pred")
    log = LOGS[params["log"]]
    spec_hooks = {
        "training_chief_hooks": [Recorder("chief", log)],
        "training_hooks": [Recorder("train", log)],
        "evaluation_hooks": [Recorder("eval", log)],
        "prediction_hooks": [Recorder("predict", log, fetch="pred:0")],
    }
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"y": pred},
                             prediction_hooks=spec_hooks["prediction_hooks"])
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return EstimatorSpec(mode, loss=loss, train_op=train_op,
                         training_chief_hooks=spec_hooks["training_chief_hooks"],
                         training_hooks=spec_hooks["training_hooks"],
                         evaluation_hooks=spec_hooks["evaluation_hooks"])


def _input(batches: int):
    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(5)
        return ds.repeat(batches // 2) if batches > 2 else ds
    return input_fn


def _features():
    # predict runs until the input is exhausted, so it reads a finite dataset
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(5)


@pytest.fixture
def estimator(tmp_path):
    log: list = []
    LOGS[str(tmp_path)] = log
    yield Estimator(_model_fn, model_dir=str(tmp_path / "m"), params={"log": str(tmp_path)}), log
    del LOGS[str(tmp_path)]


def test_spec_training_hooks_and_chief_hooks_run_in_train(estimator):
    est, log = estimator
    call_hook = Recorder("call", log)
    est.train(_input(4), steps=3, hooks=[call_hook])
    for name in ("chief", "train", "call"):
        assert _count(log, name, "begin") == 1 and _count(log, name, "end") == 1
        assert _count(log, name, "before_run") == 3 == _count(log, name, "after_run")
    assert not any(n in ("eval", "predict") for n, _ in log)


def test_evaluate_runs_call_hooks_and_spec_evaluation_hooks(estimator):
    est, log = estimator
    est.train(_input(2), steps=1)
    log.clear()
    eval_hook = Recorder("call", log, fetch="pred:0")
    metrics = est.evaluate(_input(2), hooks=[eval_hook])
    assert metrics["global_step"] == 1
    for name in ("call", "eval"):
        assert _count(log, name, "begin") == 1 and _count(log, name, "end") == 1
        # two batches of 5; the third run ends the input (TF calls before_run for it)
        assert _count(log, name, "after_run") == 2
    assert [v.shape for v in eval_hook.values] == [(5, 1), (5, 1)]
    assert not any(n in ("chief", "train", "predict") for n, _ in log)


def test_predict_runs_call_hooks_and_spec_prediction_hooks(estimator):
    est, log = estimator
    est.train(_input(2), steps=2)
    log.clear()
    call_hook = Recorder("call", log)
    preds = list(est.predict(_features, hooks=[call_hook]))
    assert len(preds) == 10
    for name in ("call", "predict"):
        assert _count(log, name, "begin") == 1 and _count(log, name, "end") == 1
        assert _count(log, name, "before_run") >= 1
    spec_hook_values = [v for v in log if v[0] == "predict"]
    assert spec_hook_values and not any(n in ("chief", "train", "eval") for n, _ in log)


def test_estimator_export_loads_with_the_tf1_loader(estimator, tmp_path):
    est, _ = estimator
    est.train(_input(4), steps=20)
    receiver = ex.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")})
    path = est.export_saved_model(str(tmp_path / "export"), receiver)
    w = est.get_variable_value("w")
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], path)
        sig = meta.signature_def["serving_default"]
        x_name, y_name = sig.inputs["x"].name, sig.outputs["y"].name
        assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 3]
        got = sess.run(y_name, {x_name: X})
    np.testing.assert_allclose(got, X @ w, rtol=1e-5)
    expected = np.stack([p["y"] for p in est.predict(_features)])
    np.testing.assert_allclose(got, expected, rtol=1e-5)
