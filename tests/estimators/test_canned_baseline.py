"""Baseline estimators and the pieces every canned estimator shares (heads, optimizers)."""

import doctest
import logging

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.estimators import canned
from flowgraph.estimators.canned import baseline, optimizers
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig

logging.getLogger("tensorflow").setLevel(logging.WARNING)


@pytest.fixture
def tf_namespace(monkeypatch):
    """`tf.estimator.<Canned>` and `tf.feature_column` as the docs use them (until the
    package exports are in place, set them here)."""
    monkeypatch.setattr(tf, "feature_column", fc, raising=False)
    for name in canned.__all__:
        monkeypatch.setattr(tf.estimator, name, getattr(canned, name), raising=False)


def _config():
    return RunConfig(tf_random_seed=1, save_summary_steps=None, log_step_count_steps=None)


def _train(est, x, y, steps, batch_size=16):
    est.train(numpy_input_fn(x, y, batch_size=batch_size, num_epochs=None, shuffle=True),
              steps=steps)
    return est


def test_baseline_classifier_learns_the_class_prior(tmp_path):
    y = np.array([1] * 70 + [0] * 30)
    x = {"x": np.zeros((100, 2), np.float32)}
    est = _train(canned.BaselineClassifier(model_dir=str(tmp_path), config=_config()), x, y,
                 400)
    assert est.get_variable_names() == sorted(
        ["baseline/bias", "baseline/bias/Ftrl", "baseline/bias/Ftrl_1", "global_step"])
    pred = next(est.predict(numpy_input_fn(x, batch_size=100, shuffle=False),
                            yield_single_examples=False))
    np.testing.assert_allclose(pred["logistic"], 0.7, atol=0.03)
    metrics = est.evaluate(numpy_input_fn(x, y, batch_size=50, shuffle=False))
    assert metrics["accuracy"] == pytest.approx(0.7)


def test_baseline_multiclass_with_vocabulary(tmp_path):
    y = np.array(["a"] * 20 + ["b"] * 50 + ["c"] * 30)
    x = {"x": np.zeros(100, np.float32)}
    est = canned.BaselineClassifier(model_dir=str(tmp_path), n_classes=3,
                                    label_vocabulary=["a", "b", "c"], config=_config())
    _train(est, x, y, 400, batch_size=25)
    pred = next(est.predict(numpy_input_fn(x, batch_size=100, shuffle=False)))
    np.testing.assert_allclose(pred["probabilities"], [0.2, 0.5, 0.3], atol=0.05)
    assert pred["classes"] == [b"b"]


def test_baseline_regressor_learns_the_weighted_mean(tmp_path):
    x = {"x": np.zeros(40, np.float32), "w": np.array([1.0, 3.0] * 20, np.float32)}
    y = np.array([0.0, 4.0] * 20, np.float32)
    est = canned.BaselineRegressor(model_dir=str(tmp_path), weight_column="w",
                                   config=_config())
    _train(est, x, y, 500, batch_size=40)
    assert est.get_variable_value("baseline/bias")[0] == pytest.approx(3.0, abs=0.1)


def test_baseline_estimator_takes_any_head(tmp_path):
    head = tf.estimator.MultiLabelHead(n_classes=2)
    est = canned.BaselineEstimator(head, model_dir=str(tmp_path), config=_config())
    _train(est, {"x": np.zeros(8, np.float32)}, np.array([[1, 0]] * 8), 5, batch_size=8)
    assert est.get_variable_value("baseline/bias").shape == (2,)


def test_baseline_checks_batch_sizes(tmp_path):
    est = canned.BaselineRegressor(model_dir=str(tmp_path), config=_config())

    def input_fn():
        return {"a": tf.zeros([3]), "b": tf.zeros([4])}, tf.zeros([3])

    with pytest.raises(tf.errors.InvalidArgumentError):
        est.train(input_fn, steps=1)


def test_head_choice_follows_n_classes():
    from flowgraph.estimators.head import BinaryClassHead, MultiClassHead

    assert isinstance(baseline.binary_or_multi_class_head(2, None, None, "sum"),
                      BinaryClassHead)
    assert isinstance(baseline.binary_or_multi_class_head(5, None, None, "sum"),
                      MultiClassHead)
    with pytest.raises(ValueError, match="n_classes"):
        canned.BaselineClassifier(n_classes=1)


# -- optimizers ----------------------------------------------------------------------------
@pytest.mark.parametrize("name,cls", [("Adagrad", "AdagradOptimizer"), ("Adam", "AdamOptimizer"),
                                      ("Ftrl", "FtrlOptimizer"),
                                      ("RMSProp", "RMSPropOptimizer"),
                                      ("SGD", "GradientDescentOptimizer")])
def test_optimizer_names(name, cls):
    opt = optimizers.get_optimizer_instance(name, learning_rate=0.25)
    lr = getattr(opt, "_learning_rate", getattr(opt, "_lr", None))
    assert type(opt).__name__ == cls and lr == 0.25


def test_optimizer_instances_and_callables_pass_through():
    opt = tf.train.AdamOptimizer(0.1)
    assert optimizers.get_optimizer_instance(opt) is opt
    made = optimizers.get_optimizer_instance(lambda: tf.train.FtrlOptimizer(0.5))
    assert isinstance(made, tf.train.FtrlOptimizer)


def test_optimizer_errors():
    with pytest.raises(ValueError, match="Unsupported optimizer name: Nope"):
        optimizers.get_optimizer_instance("Nope", 0.1)
    with pytest.raises(ValueError, match="learning_rate must be specified"):
        optimizers.get_optimizer_instance("Adam")
    with pytest.raises(ValueError, match="not an Optimizer instance"):
        optimizers.get_optimizer_instance(3.0)
    with pytest.raises(ValueError, match="it returned"):
        optimizers.get_optimizer_instance(lambda: "Adam")


def test_default_learning_rates_are_tensorflows():
    assert optimizers.DNN_LEARNING_RATE == 0.05
    assert optimizers.BASELINE_LEARNING_RATE == 0.3
    assert optimizers.default_linear_learning_rate(100, 0.2) == pytest.approx(0.1)
    assert optimizers.default_linear_learning_rate(4, 0.2) == 0.2
    assert optimizers.default_linear_learning_rate(4, 0.005) == 0.005


def test_module_doctests(tf_namespace):
    for module in (baseline, optimizers, canned):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
