"""DNNClassifier / DNNRegressor / DNNEstimator."""

import doctest
import logging

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.estimators import canned
from flowgraph.estimators.canned import dnn
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig

logging.getLogger("tensorflow").setLevel(logging.WARNING)


def _config():
    return RunConfig(tf_random_seed=1, save_summary_steps=None, log_step_count_steps=None)


def _input(x, y=None, batch_size=32, train=True):
    return numpy_input_fn(x, y, batch_size=batch_size, num_epochs=None if train else 1,
                          shuffle=train)


def _three_classes(n=300, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(3, size=n)
    centers = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.5]], np.float32)
    x = (centers[y] + 0.5 * rng.randn(n, 2)).astype(np.float32)
    return x, y


def test_variable_names_match_tensorflow(tmp_path):
    x, y = _three_classes(40)
    color = np.array(["a", "b"] * 20, dtype=object)
    columns = [fc.numeric_column("x", [2]),
               fc.embedding_column(fc.categorical_column_with_vocabulary_list("c", ["a", "b"]),
                                   3)]
    est = canned.DNNClassifier([5, 4], columns, n_classes=3, batch_norm=True, dropout=0.1,
                               model_dir=str(tmp_path), config=_config())
    est.train(_input({"x": x, "c": color}, y, batch_size=8), steps=2)
    shapes = dict(tf.train.list_variables(str(tmp_path)))
    expected = {
        "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights": [2, 3],
        "dnn/hiddenlayer_0/kernel": [5, 5], "dnn/hiddenlayer_0/bias": [5],
        "dnn/hiddenlayer_0/batchnorm_0/gamma": [5],
        "dnn/hiddenlayer_0/batchnorm_0/moving_mean": [5],
        "dnn/hiddenlayer_1/kernel": [5, 4], "dnn/hiddenlayer_1/batchnorm_1/beta": [4],
        "dnn/logits/kernel": [4, 3], "dnn/logits/bias": [3],
        "dnn/logits/kernel/t_0/Adagrad": [4, 3], "global_step": [],
    }
    for name, shape in expected.items():
        assert shapes[name] == shape, name
    # batch-norm moving averages are updated by training
    assert np.any(est.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_mean") != 0)


def test_multiclass_dnn_learns(tmp_path):
    x, y = _three_classes()
    est = canned.DNNClassifier([16], [fc.numeric_column("x", [2])], n_classes=3,
                               model_dir=str(tmp_path), config=_config())
    est.train(_input({"x": x}, y), steps=400)
    metrics = est.evaluate(_input({"x": x}, y, batch_size=100, train=False))
    assert sorted(metrics) == ["accuracy", "average_loss", "global_step", "loss"]
    assert metrics["accuracy"] > 0.95 and metrics["global_step"] == 400
    pred = next(est.predict(_input({"x": x[:1]}, batch_size=1, train=False)))
    assert pred["probabilities"].shape == (3,)


def test_dnn_regressor_with_custom_activation_and_optimizer(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.uniform(-2, 2, (400, 1)).astype(np.float32)
    y = np.sin(x[:, 0]).astype(np.float32)
    est = canned.DNNRegressor([32, 32], [fc.numeric_column("x")], activation_fn=tf.nn.tanh,
                              optimizer=lambda: tf.train.AdamOptimizer(0.01),
                              model_dir=str(tmp_path), config=_config())
    est.train(_input({"x": x}, y), steps=600)
    metrics = est.evaluate(_input({"x": x}, y, batch_size=400, train=False))
    assert metrics["average_loss"] < 0.01
    assert "dnn/logits/kernel/t_0/Adam" in est.get_variable_names()  # TF 2.15's key


def test_dropout_only_while_training(tmp_path):
    x, y = _three_classes(60)
    est = canned.DNNClassifier([8], [fc.numeric_column("x", [2])], n_classes=3, dropout=0.5,
                               model_dir=str(tmp_path), config=_config())
    est.train(_input({"x": x}, y), steps=5)

    def logits():
        return np.concatenate([p["logits"] for p in est.predict(
            _input({"x": x}, batch_size=60, train=False), yield_single_examples=False)])

    np.testing.assert_array_equal(logits(), logits())


def test_dnn_estimator_with_multi_label_head(tmp_path):
    x, y = _three_classes(30)
    labels = np.eye(3, dtype=np.int64)[y]
    est = canned.DNNEstimator(tf.estimator.MultiLabelHead(n_classes=3), [4],
                              [fc.numeric_column("x", [2])], model_dir=str(tmp_path),
                              config=_config())
    est.train(_input({"x": x}, labels), steps=3)
    assert est.get_variable_value("dnn/logits/kernel").shape == (4, 3)


def test_summaries_per_layer():
    with tf.Graph().as_default():
        with tf.variable_scope("dnn"):
            dnn.dnn_logit_fn_builder(2, [3], [fc.numeric_column("x")], tf.nn.relu, None)(
                {"x": tf.zeros([4, 1])}, "train")
        names = sorted(t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES))
    # TF's tags: the layer's scope name, under the enclosing name scope
    suffixes = ["dnn/hiddenlayer_0/activation", "dnn/hiddenlayer_0/fraction_of_zero_values",
                "dnn/logits/activation", "dnn/logits/fraction_of_zero_values"]
    assert len(names) == 4 and all(n.endswith(s) for n, s in zip(names, suffixes))


@pytest.mark.parametrize("hidden", [None, "64", [0], [3, -1], [2.5]])
def test_bad_hidden_units(hidden):
    with pytest.raises(ValueError, match="hidden_units"):
        canned.DNNClassifier(hidden, [fc.numeric_column("x")])


def test_other_errors():
    with pytest.raises(ValueError, match="dropout"):
        canned.DNNRegressor([2], [fc.numeric_column("x")], dropout=1.5)
    with pytest.raises(ValueError, match="features should be a dictionary"):
        dnn.dnn_model_fn(tf.zeros([2, 1]), None, "infer", tf.estimator.RegressionHead(), [2],
                         [fc.numeric_column("x")])
    with pytest.raises(ValueError, match="Unsupported optimizer name"):
        dnn.dnn_model_fn({"x": tf.zeros([2, 1])}, None, "infer",
                         tf.estimator.RegressionHead(), [2], [fc.numeric_column("x")],
                         optimizer="Nesterov")


def test_module_doctest(monkeypatch):
    monkeypatch.setattr(tf, "feature_column", fc, raising=False)
    for name in canned.__all__:
        monkeypatch.setattr(tf.estimator, name, getattr(canned, name), raising=False)
    result = doctest.testmod(dnn, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
