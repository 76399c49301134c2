"""TrainSpec / EvalSpec validation and train_and_evaluate in local mode, end to end."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split
from flowgraph.estimators import (
    Estimator,
    EstimatorSpec,
    EvalSpec,
    ModeKeys,
    RunConfig,
    TrainSpec,
    train_and_evaluate,
)
from flowgraph.estimators.inputs import numpy_input_fn


def _digits():
    x, y = load_digits()
    return train_test_split((x / 16.0).astype(np.float32), y, test_fraction=0.25, seed=0)


def _accuracy(labels, predictions):
    try:
        from flowgraph import metrics  # tf.metrics
    except ImportError:
        metrics = None
    if metrics is not None and hasattr(metrics, "accuracy"):
        return metrics.accuracy(labels=labels, predictions=predictions)
    from flowgraph.estimators.estimator_util import mean_metric  # until tf.metrics lands

    return mean_metric(tf.cast(tf.equal(labels, predictions), tf.float32), "accuracy")


def _minimize(loss, lr):
    return tf.train.GradientDescentOptimizer(lr).minimize(
        loss, global_step=tf.train.get_global_step())


def dnn_fn(features, labels, mode, params):
    h = tf.layers.dense(features["pixels"], 64, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    classes = tf.argmax(logits, 1)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"class": classes,
                                                "probabilities": tf.nn.softmax(logits)})
    onehot = tf.one_hot(labels, 10)
    loss = tf.reduce_mean(-tf.reduce_sum(onehot * tf.nn.log_softmax(logits), axis=1))
    train_op = _minimize(loss, params["lr"]) if mode == ModeKeys.TRAIN else None
    return EstimatorSpec(mode, loss=loss, train_op=train_op,
                         eval_metric_ops={"accuracy": _accuracy(labels, classes)})


def test_specs_validate():
    f = lambda: None  # noqa: E731
    assert TrainSpec(f).max_steps is None and TrainSpec(f, 5).hooks == ()
    spec = EvalSpec(f)
    assert (spec.steps, spec.name, spec.start_delay_secs, spec.throttle_secs) == (
        100, None, 120, 600)
    with pytest.raises(TypeError, match="`input_fn` must be callable"):
        TrainSpec(3)
    with pytest.raises(ValueError, match="Must specify max_steps > 0"):
        TrainSpec(f, max_steps=0)
    with pytest.raises(ValueError, match="Must specify steps > 0"):
        EvalSpec(f, steps=0)
    with pytest.raises(ValueError, match="throttle_secs >= 0"):
        EvalSpec(f, throttle_secs=-1)
    with pytest.raises(TypeError, match="`exporters` must be an Exporter"):
        EvalSpec(f, exporters=[object()])
    with pytest.raises(TypeError, match="must be a SessionRunHook"):
        EvalSpec(f, hooks=[1])


class RecordingExporter:
    name = "recorder"

    def __init__(self):
        self.calls = []

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        self.calls.append((export_path, checkpoint_path, eval_result["global_step"],
                           is_the_final_export))
        return export_path


def test_train_and_evaluate_digits_end_to_end(tmp_path):
    x, xt, y, yt = _digits()
    config = RunConfig(model_dir=str(tmp_path), tf_random_seed=3, save_checkpoints_steps=300,
                       log_step_count_steps=1000)
    est = Estimator(dnn_fn, config=config, params={"lr": 0.3})
    exporter = RecordingExporter()
    train_spec = TrainSpec(numpy_input_fn({"pixels": x}, y, batch_size=32, num_epochs=None,
                                          shuffle=True), max_steps=900)
    eval_spec = EvalSpec(numpy_input_fn({"pixels": xt}, yt, batch_size=128, shuffle=False),
                         steps=None, exporters=exporter, throttle_secs=0)
    metrics, exports = train_and_evaluate(est, train_spec, eval_spec)
    assert metrics["global_step"] == 900 and metrics["accuracy"] >= 0.95
    # evaluated after each checkpoint but the first (steps 300, 600, 900): one export each
    assert [c[2] for c in exporter.calls] == [300, 600, 900]
    assert [c[3] for c in exporter.calls] == [False, False, True]
    assert exporter.calls[-1][0] == str(tmp_path / "export" / "recorder")
    assert exports == [exporter.calls[-1][0]]
    # max_steps reached: a second call trains no further and re-reports the last eval
    metrics2, _ = train_and_evaluate(est, train_spec, eval_spec)
    assert metrics2["global_step"] == 900
    preds = list(est.predict(numpy_input_fn({"pixels": xt}, shuffle=False)))
    assert len(preds) == len(xt) and preds[0]["probabilities"].shape == (10,)
    predicted = np.array([p["class"] for p in preds])
    assert abs(np.mean(predicted == yt) - metrics["accuracy"]) < 1e-6


def test_throttle_skips_evaluations(tmp_path):
    x, xt, y, yt = _digits()
    config = RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=10,
                       log_step_count_steps=1000)
    est = Estimator(dnn_fn, config=config, params={"lr": 0.1})
    evaluated = []
    real = est.evaluate

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        evaluated.append(result["global_step"])
        return result

    est.evaluate = spy
    train_spec = TrainSpec(numpy_input_fn({"pixels": x}, y, batch_size=16, num_epochs=None,
                                          shuffle=True), max_steps=40)
    eval_spec = EvalSpec(numpy_input_fn({"pixels": xt}, yt, batch_size=256, shuffle=False),
                         steps=1, throttle_secs=3600)
    train_and_evaluate(est, train_spec, eval_spec)
    assert evaluated == [10, 40]  # first after-save eval, then only the final one


def test_several_eval_specs_each_get_a_directory(tmp_path):
    x, xt, y, yt = _digits()
    config = RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=25,
                       log_step_count_steps=1000)
    est = Estimator(dnn_fn, config=config, params={"lr": 0.1})
    train_spec = TrainSpec(numpy_input_fn({"pixels": x}, y, batch_size=32, num_epochs=None,
                                          shuffle=True), max_steps=50)
    specs = [EvalSpec(numpy_input_fn({"pixels": xt}, yt, batch_size=256, shuffle=False),
                      steps=None, name="test", throttle_secs=0),
             EvalSpec(numpy_input_fn({"pixels": x}, y, batch_size=256, shuffle=False),
                      steps=2, name="train", throttle_secs=0)]
    metrics, exports = train_and_evaluate(est, train_spec, specs)
    assert set(metrics) == {"test", "train"} and exports == {"test": [], "train": []}
    assert metrics["test"]["global_step"] == metrics["train"]["global_step"] == 50
    from flowgraph.estimators.early_stopping import read_eval_metrics

    for name in ("test", "train"):
        steps = list(read_eval_metrics(est.eval_dir(name)))
        assert steps == [25, 50] and (tmp_path / f"eval_{name}").is_dir()
    with pytest.raises(ValueError, match="distinct name"):
        train_and_evaluate(est, train_spec, [specs[0], specs[0]])


def test_type_checks(tmp_path):
    est = Estimator(dnn_fn, model_dir=str(tmp_path), params={"lr": 0.1})
    spec = EvalSpec(lambda: None)
    with pytest.raises(TypeError, match="`estimator` must have type"):
        train_and_evaluate(object(), TrainSpec(lambda: None), spec)
    with pytest.raises(TypeError, match="`train_spec` must have type"):
        train_and_evaluate(est, spec, spec)
    with pytest.raises(TypeError, match="`eval_spec` must have type"):
        train_and_evaluate(est, TrainSpec(lambda: None), TrainSpec(lambda: None))
