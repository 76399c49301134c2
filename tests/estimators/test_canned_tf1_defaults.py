"""TF1's canned estimators, checked against numbers recorded from TensorFlow 2.15's
``tf.compat.v1.estimator`` (tensorflow_estimator 2.15) with the tf-oracle.

The v1 classes sum a batch's loss (``loss_reduction=SUM``), so the evaluation ``loss`` is
the summed loss per batch averaged over batches, while ``average_loss`` is the
per-example mean. Linear and baseline models start from zeros, so ten Ftrl steps give
the same numbers in both frameworks.
"""

import inspect

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators.canned import optimizers

# inspect.signature of each tf.compat.v1.estimator class (activation functions elided).
TF1_SIGNATURES = {
    "DNNClassifier": "hidden_units feature_columns model_dir=None n_classes=2 weight_column=None "
                     "label_vocabulary=None optimizer='Adagrad' activation_fn dropout=None "
                     "input_layer_partitioner=None config=None warm_start_from=None "
                     "loss_reduction='weighted_sum' batch_norm=False",
    "DNNRegressor": "hidden_units feature_columns model_dir=None label_dimension=1 "
                    "weight_column=None optimizer='Adagrad' activation_fn dropout=None "
                    "input_layer_partitioner=None config=None warm_start_from=None "
                    "loss_reduction='weighted_sum' batch_norm=False",
    "DNNEstimator": "head hidden_units feature_columns model_dir=None optimizer='Adagrad' "
                    "activation_fn dropout=None input_layer_partitioner=None config=None "
                    "warm_start_from=None batch_norm=False",
    "LinearClassifier": "feature_columns model_dir=None n_classes=2 weight_column=None "
                        "label_vocabulary=None optimizer='Ftrl' config=None partitioner=None "
                        "warm_start_from=None loss_reduction='weighted_sum' sparse_combiner='sum'",
    "LinearRegressor": "feature_columns model_dir=None label_dimension=1 weight_column=None "
                       "optimizer='Ftrl' config=None partitioner=None warm_start_from=None "
                       "loss_reduction='weighted_sum' sparse_combiner='sum'",
    "LinearEstimator": "head feature_columns model_dir=None optimizer='Ftrl' config=None "
                       "partitioner=None sparse_combiner='sum' warm_start_from=None",
    "DNNLinearCombinedClassifier": "model_dir=None linear_feature_columns=None "
        "linear_optimizer='Ftrl' dnn_feature_columns=None dnn_optimizer='Adagrad' "
        "dnn_hidden_units=None dnn_activation_fn dnn_dropout=None n_classes=2 "
        "weight_column=None label_vocabulary=None input_layer_partitioner=None config=None "
        "warm_start_from=None loss_reduction='weighted_sum' batch_norm=False "
        "linear_sparse_combiner='sum'",
    "DNNLinearCombinedRegressor": "model_dir=None linear_feature_columns=None "
        "linear_optimizer='Ftrl' dnn_feature_columns=None dnn_optimizer='Adagrad' "
        "dnn_hidden_units=None dnn_activation_fn dnn_dropout=None label_dimension=1 "
        "weight_column=None input_layer_partitioner=None config=None warm_start_from=None "
        "loss_reduction='weighted_sum' batch_norm=False linear_sparse_combiner='sum'",
    "DNNLinearCombinedEstimator": "head model_dir=None linear_feature_columns=None "
        "linear_optimizer='Ftrl' dnn_feature_columns=None dnn_optimizer='Adagrad' "
        "dnn_hidden_units=None dnn_activation_fn dnn_dropout=None "
        "input_layer_partitioner=None config=None batch_norm=False "
        "linear_sparse_combiner='sum'",
    "BaselineClassifier": "model_dir=None n_classes=2 weight_column=None label_vocabulary=None "
                          "optimizer='Ftrl' config=None loss_reduction='weighted_sum'",
    "BaselineRegressor": "model_dir=None label_dimension=1 weight_column=None optimizer='Ftrl' "
                         "config=None loss_reduction='weighted_sum'",
    "BaselineEstimator": "head model_dir=None optimizer='Ftrl' config=None",
}


def _signature(cls) -> str:
    parts = []
    for p in inspect.signature(cls).parameters.values():
        if p.default is inspect.Parameter.empty or callable(p.default):
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={p.default!r}")
    return " ".join(parts)


@pytest.mark.parametrize("name", sorted(TF1_SIGNATURES))
def test_signature_and_defaults_match_tf1(name):
    cls = getattr(tf.estimator, name)
    assert _signature(cls) == TF1_SIGNATURES[name]
    params = inspect.signature(cls).parameters
    for act in ("activation_fn", "dnn_activation_fn"):
        if act in params:
            assert params[act].default is tf.nn.relu


def test_loss_reduction_default_is_tf1_sum():
    assert tf.losses.Reduction.SUM == "weighted_sum"


def test_optimizer_names_and_default_learning_rates():
    assert optimizers.optimizer_names() == ("Adagrad", "Adam", "Ftrl", "RMSProp", "SGD")
    # tensorflow_estimator's _LEARNING_RATE constants for the v1 canned models
    assert optimizers.DNN_LEARNING_RATE == 0.05
    assert optimizers.LINEAR_LEARNING_RATE == 0.2
    assert optimizers.BASELINE_LEARNING_RATE == 0.3
    assert optimizers.COMBINED_DNN_LEARNING_RATE == 0.001
    assert optimizers.COMBINED_LINEAR_LEARNING_RATE == 0.005
    assert optimizers.default_linear_learning_rate(100, 0.2) == pytest.approx(0.1)
    assert optimizers.default_linear_learning_rate(2, 0.005) == 0.005


def test_feature_column_defaults_match_tf1():
    c = tf.feature_column.numeric_column("x")
    assert (c.shape, c.default_value, c.dtype, c.normalizer_fn) == ((1,), None, tf.float32,
                                                                    None)
    cat = tf.feature_column.categorical_column_with_vocabulary_list("c", ["a", "b"])
    assert (cat.default_value, cat.num_oov_buckets) == (-1, 0)
    emb = tf.feature_column.embedding_column(cat, 3)
    assert (emb.combiner, emb.max_norm, emb.trainable) == ("mean", None, True)
    h = tf.feature_column.categorical_column_with_hash_bucket("h", 10)
    assert h.dtype == tf.string


# -- ten training steps, then evaluation: TensorFlow 2.15's numbers ----------------------
_RNG = np.random.RandomState(0)
_X1 = _RNG.randn(24).astype(np.float32)
_X2 = _RNG.randn(24).astype(np.float32)
_Y_REG = (2.0 * _X1 - _X2 + 0.5 + 0.1 * _RNG.randn(24)).astype(np.float32)
_Y_BIN = (_X1 + _X2 > 0).astype(np.int64)
_Y_MC = np.digitize(_X1, [-0.5, 0.5]).astype(np.int64)

TF_RESULTS = {
    "LinearRegressor": {"average_loss": 1.71823, "label/mean": 1.29386, "loss": 13.74586,
                        "prediction/mean": 0.99818},
    "LinearClassifier2": {"accuracy": 0.95833, "accuracy_baseline": 0.66667, "auc": 1.0,
                          "auc_precision_recall": 1.0, "average_loss": 0.35576,
                          "label/mean": 0.66667, "loss": 2.84607, "precision": 0.94118,
                          "prediction/mean": 0.62664, "recall": 1.0},
    "LinearClassifier3": {"accuracy": 0.79167, "average_loss": 0.57016, "loss": 4.56132},
    "BaselineRegressor": {"average_loss": 5.56045, "label/mean": 1.29386, "loss": 44.48359,
                          "prediction/mean": 0.97575},
    "BaselineClassifier2": {"accuracy": 0.66667, "accuracy_baseline": 0.66667, "auc": 0.5,
                            "auc_precision_recall": 0.83333, "average_loss": 0.63766,
                            "label/mean": 0.66667, "loss": 5.10127, "precision": 0.66667,
                            "prediction/mean": 0.64387, "recall": 1.0},
    "BaselineClassifier3": {"accuracy": 0.41667, "average_loss": 1.03434, "loss": 8.27473},
    "CombinedRegressor": {"average_loss": 6.8971, "label/mean": 1.29386, "loss": 55.17683,
                          "prediction/mean": 0.03244},
    "CombinedClassifier2": {"accuracy": 0.91667, "accuracy_baseline": 0.66667, "auc": 0.97656,
                            "auc_precision_recall": 0.98897, "average_loss": 0.67645,
                            "label/mean": 0.66667, "loss": 5.41161, "precision": 0.88889,
                            "prediction/mean": 0.50614, "recall": 1.0},
}


def _input_fn(y, repeat):
    def fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x1": _X1, "x2": _X2}, y)).batch(8)
        return ds.repeat() if repeat else ds
    return fn


def _cols():
    return [tf.feature_column.numeric_column("x1"), tf.feature_column.numeric_column("x2")]


_CASES = {
    "LinearRegressor": (lambda d: tf.estimator.LinearRegressor(_cols(), model_dir=d), _Y_REG),
    "LinearClassifier2": (lambda d: tf.estimator.LinearClassifier(_cols(), model_dir=d),
                          _Y_BIN),
    "LinearClassifier3": (lambda d: tf.estimator.LinearClassifier(_cols(), n_classes=3,
                                                                  model_dir=d), _Y_MC),
    "BaselineRegressor": (lambda d: tf.estimator.BaselineRegressor(model_dir=d), _Y_REG),
    "BaselineClassifier2": (lambda d: tf.estimator.BaselineClassifier(model_dir=d), _Y_BIN),
    "BaselineClassifier3": (lambda d: tf.estimator.BaselineClassifier(n_classes=3,
                                                                      model_dir=d), _Y_MC),
    "CombinedRegressor": (lambda d: tf.estimator.DNNLinearCombinedRegressor(
        model_dir=d, linear_feature_columns=_cols()), _Y_REG),
    "CombinedClassifier2": (lambda d: tf.estimator.DNNLinearCombinedClassifier(
        model_dir=d, linear_feature_columns=_cols()), _Y_BIN),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_ten_steps_match_tensorflow(case, tmp_path):
    make, y = _CASES[case]
    est = make(str(tmp_path))
    est.train(_input_fn(y, True), steps=10)
    got = est.evaluate(_input_fn(y, False))
    want = TF_RESULTS[case]
    assert got["global_step"] == 10
    assert set(got) == set(want) | {"global_step"}
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=2e-4, abs=2e-5), key


def test_dnn_loss_is_the_batch_sum(tmp_path):
    """Random initial weights differ from TensorFlow's, so check the v1 relation instead:
    with full batches of 8, ``loss`` is 8 times ``average_loss``; and training under the
    default equals training under an explicit SUM."""
    results = []
    for i, reduction in enumerate((None, tf.losses.Reduction.SUM)):
        kwargs = {} if reduction is None else {"loss_reduction": reduction}
        est = tf.estimator.DNNRegressor(
            [4], _cols(), model_dir=str(tmp_path / str(i)),
            config=tf.estimator.RunConfig(tf_random_seed=3), **kwargs)
        est.train(_input_fn(_Y_REG, True), steps=5)
        results.append(est.evaluate(_input_fn(_Y_REG, False)))
    default, explicit = results
    assert default["loss"] == pytest.approx(8 * default["average_loss"], rel=1e-5)
    assert default["loss"] == pytest.approx(explicit["loss"], rel=1e-6)
