"""DNNLinearCombinedClassifier / Regressor / Estimator."""

import doctest
import logging

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.estimators import canned
from flowgraph.estimators.canned import dnn_linear_combined
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig

logging.getLogger("tensorflow").setLevel(logging.WARNING)


def _config():
    return RunConfig(tf_random_seed=1, save_summary_steps=None, log_step_count_steps=None)


def _input(x, y=None, batch_size=32, train=True):
    return numpy_input_fn(x, y, batch_size=batch_size, num_epochs=None if train else 1,
                          shuffle=train)


def _data(n=200, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2).astype(np.float32)
    site = rng.choice(["a", "b", "c"], n).astype(object)
    y = ((x[:, 0] * x[:, 1] > 0) ^ (site == "a")).astype(np.int64)
    return {"x": x, "site": site}, y


def _columns():
    site = fc.categorical_column_with_vocabulary_list("site", ["a", "b", "c"])
    return [site], [fc.numeric_column("x", [2]), fc.indicator_column(site)]


def test_both_parts_with_their_own_optimizers(tmp_path):
    features, y = _data()
    wide, deep = _columns()
    est = canned.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[8],
        model_dir=str(tmp_path), config=_config())
    est.train(_input(features, y), steps=3)
    names = est.get_variable_names()
    for name in ("dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/kernel/Adagrad",
                 "dnn/logits/kernel", "linear/linear_model/site/weights",
                 "linear/linear_model/site/weights/Ftrl", "linear/linear_model/bias_weights"):
        assert name in names, name
    assert not any(n.startswith("dnn/") and "Ftrl" in n for n in names)
    assert est.get_variable_value("global_step") == 3  # one increment per step


def test_wide_and_deep_learns(tmp_path):
    features, y = _data(600)
    wide, deep = _columns()
    est = canned.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, linear_optimizer=lambda: tf.train.FtrlOptimizer(0.3),
        dnn_feature_columns=deep, dnn_optimizer=lambda: tf.train.AdamOptimizer(0.01),
        dnn_hidden_units=[16, 8], model_dir=str(tmp_path), config=_config())
    est.train(_input(features, y), steps=800)
    metrics = est.evaluate(_input(features, y, batch_size=200, train=False))
    assert metrics["accuracy"] > 0.9


@pytest.mark.parametrize("part", ["linear", "dnn"])
def test_one_part_only(part, tmp_path):
    features, y = _data(50)
    wide, deep = _columns()
    kwargs = ({"linear_feature_columns": wide} if part == "linear" else
              {"dnn_feature_columns": deep, "dnn_hidden_units": [4]})
    est = canned.DNNLinearCombinedRegressor(model_dir=str(tmp_path), config=_config(),
                                            **kwargs)
    est.train(_input(features, y.astype(np.float32)), steps=2)
    prefixes = {n.split("/")[0] for n in est.get_variable_names()} - {"global_step"}
    assert prefixes == {part}
    assert est.get_variable_value("global_step") == 2


def test_batch_norm_updates_run(tmp_path):
    features, y = _data(64)
    wide, deep = _columns()
    est = canned.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[4],
        batch_norm=True, model_dir=str(tmp_path), config=_config())
    est.train(_input(features, y), steps=3)
    assert np.any(est.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_mean") != 0)


def test_errors(tmp_path):
    _, deep = _columns()
    with pytest.raises(ValueError, match="Either linear_feature_columns or dnn_feature"):
        canned.DNNLinearCombinedRegressor(linear_feature_columns=[], dnn_feature_columns=None)
    est = canned.DNNLinearCombinedClassifier(dnn_feature_columns=deep,
                                             model_dir=str(tmp_path), config=_config())
    features, y = _data(10)
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        est.train(_input(features, y), steps=1)


def test_estimator_with_head(tmp_path):
    features, y = _data(20)
    wide, _ = _columns()
    est = canned.DNNLinearCombinedEstimator(tf.estimator.RegressionHead(label_dimension=2),
                                            linear_feature_columns=wide,
                                            model_dir=str(tmp_path), config=_config())
    est.train(_input(features, np.stack([y, y], 1).astype(np.float32)), steps=1)
    assert est.get_variable_value("linear/linear_model/site/weights").shape == (3, 2)


def test_module_doctest(monkeypatch):
    monkeypatch.setattr(tf, "feature_column", fc, raising=False)
    for name in canned.__all__:
        monkeypatch.setattr(tf.estimator, name, getattr(canned, name), raising=False)
    result = doctest.testmod(dnn_linear_combined, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
