"""LinearClassifier / LinearRegressor / LinearEstimator."""

import doctest
import logging

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.estimators import canned
from flowgraph.estimators.canned import linear
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig

logging.getLogger("tensorflow").setLevel(logging.WARNING)


def _config():
    return RunConfig(tf_random_seed=1, save_summary_steps=None, log_step_count_steps=None)


def _input(x, y=None, batch_size=32, train=True):
    return numpy_input_fn(x, y, batch_size=batch_size, num_epochs=None if train else 1,
                          shuffle=train)


def _data(n=120, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 3).astype(np.float32)
    color = rng.choice(["red", "blue"], n)
    return {"x": x, "color": color.astype(object)}, x, color


def test_variable_names_and_shapes_match_tensorflow(tmp_path):
    features, x, color = _data()
    y = (x[:, 0] > 0).astype(np.int64) + (color == "red")
    columns = [fc.numeric_column("x", [3]),
               fc.categorical_column_with_vocabulary_list("color", ["red", "blue"])]
    est = canned.LinearClassifier(columns, n_classes=3, model_dir=str(tmp_path),
                                  config=_config())
    est.train(_input(features, y), steps=2)
    shapes = dict(tf.train.list_variables(str(tmp_path)))
    assert shapes["linear/linear_model/x/weights"] == [3, 3]
    assert shapes["linear/linear_model/color/weights"] == [2, 3]
    assert shapes["linear/linear_model/bias_weights"] == [3]
    # the default optimizer; TF's slot key (its default partitioner makes one part)
    assert shapes["linear/linear_model/x/weights/part_0/Ftrl"] == [3, 3]
    assert shapes["global_step"] == []


def test_linear_regressor_recovers_coefficients(tmp_path):
    _, x, _ = _data(400)
    y = x @ np.array([2.0, -1.0, 0.5], np.float32) + 3.0
    # SGD at 0.2 on the TF1 default (a batch's summed loss) diverges, as in TensorFlow.
    est = canned.LinearRegressor([fc.numeric_column("x", [3])], model_dir=str(tmp_path),
                                 optimizer="SGD", config=_config(),
                                 loss_reduction="weighted_sum_over_batch_size")
    est.train(_input({"x": x}, y), steps=600)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights")[:, 0],
                               [2.0, -1.0, 0.5], atol=0.05)
    assert est.get_variable_value("linear/linear_model/bias_weights")[0] == pytest.approx(
        3.0, abs=0.05)
    metrics = est.evaluate(_input({"x": x}, y, batch_size=100, train=False))
    assert sorted(metrics) == ["average_loss", "global_step", "label/mean", "loss",
                               "prediction/mean"]
    assert metrics["average_loss"] < 0.01


def test_binary_classifier_with_label_vocabulary_and_weights(tmp_path):
    features, x, _ = _data(300)
    labels = np.where(x[:, 0] > 0, "yes", "no").astype(object)
    features["w"] = np.where(x[:, 1] > 0, 1.0, 0.0).astype(np.float32)
    est = canned.LinearClassifier([fc.numeric_column("x", [3])], model_dir=str(tmp_path),
                                  weight_column="w", label_vocabulary=["no", "yes"],
                                  config=_config())
    est.train(_input(features, labels), steps=300)
    pred = list(est.predict(_input({"x": x}, batch_size=300, train=False)))
    assert sorted(pred[0]) == ["all_class_ids", "all_classes", "class_ids", "classes",
                               "logistic", "logits", "probabilities"]
    classes = np.array([p["classes"][0] for p in pred])
    assert (classes == np.where(x[:, 0] > 0, b"yes", b"no")).mean() > 0.95


def test_default_optimizer_rates():
    # 'Ftrl' (the default) trains at 0.2; None at min(0.2, 1/sqrt(n_columns)).
    captured = []
    orig = linear.optimizers.get_optimizer_instance

    def spy(opt, learning_rate=None):
        made = orig(opt, learning_rate)
        captured.append(made._learning_rate)
        return made

    columns = [fc.numeric_column(f"f{i}") for i in range(100)]
    head = tf.estimator.RegressionHead()
    linear.optimizers.get_optimizer_instance, saved = spy, orig
    try:
        for opt in ("Ftrl", None):
            with tf.Graph().as_default():
                tf.train.get_or_create_global_step()
                features = {f"f{i}": tf.zeros([2]) for i in range(100)}
                linear.linear_model_fn(features, tf.zeros([2, 1]), "train", head, columns, opt)
    finally:
        linear.optimizers.get_optimizer_instance = saved
    assert captured[0] == 0.2 and captured[-1] == pytest.approx(0.1)


def test_errors():
    columns = [fc.numeric_column("x")]
    head = tf.estimator.RegressionHead()
    with pytest.raises(ValueError, match="features should be a dictionary"):
        linear.linear_model_fn(tf.zeros([2, 1]), None, "infer", head, columns, "Ftrl")
    with pytest.raises(ValueError, match="sparse_combiner"):
        canned.LinearRegressor(columns, sparse_combiner="max")
    with pytest.raises(ValueError, match="units must be an int"):
        linear.linear_logit_fn_builder(1.5, columns)


def test_linear_estimator_with_poisson_head(tmp_path):
    _, x, _ = _data(200)
    y = np.exp(0.5 * x[:, 0]).astype(np.float32)
    est = canned.LinearEstimator(tf.estimator.PoissonRegressionHead(),
                                 [fc.numeric_column("x", [3])], model_dir=str(tmp_path),
                                 config=_config())
    est.train(_input({"x": x}, y), steps=50)
    pred = next(est.predict(_input({"x": x[:1]}, batch_size=1, train=False)))
    assert sorted(pred) == ["logits", "predictions"]


def test_summaries_are_tensorflows(tmp_path):
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        with tf.variable_scope("linear"):
            linear.linear_logit_fn_builder(1, [fc.numeric_column("x", [2])])(
                {"x": tf.zeros([3, 2])})
        names = sorted(t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES))
    assert names == ["linear/bias", "linear/fraction_of_zero_weights"]


def test_module_doctest(monkeypatch):
    monkeypatch.setattr(tf, "feature_column", fc, raising=False)
    for name in canned.__all__:
        monkeypatch.setattr(tf.estimator, name, getattr(canned, name), raising=False)
    result = doctest.testmod(linear, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
