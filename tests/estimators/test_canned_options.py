"""Canned estimators: warm_start_from and loss_reduction, on every canned class."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

X = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
Y_CLASS = (X[:, 0] + X[:, 1] > 0).astype(np.int64).reshape(-1, 1)
Y_REG = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32))
COLUMNS = [tf.feature_column.numeric_column("x", shape=[3])]


def _input(y, epochs=None):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, y, batch_size=10,
                                              num_epochs=epochs, shuffle=False)


CANNED = {
    "DNNClassifier": lambda **kw: tf.estimator.DNNClassifier([4], COLUMNS, **kw),
    "DNNRegressor": lambda **kw: tf.estimator.DNNRegressor([4], COLUMNS, **kw),
    "LinearClassifier": lambda **kw: tf.estimator.LinearClassifier(COLUMNS, **kw),
    "LinearRegressor": lambda **kw: tf.estimator.LinearRegressor(COLUMNS, **kw),
    "DNNLinearCombinedClassifier": lambda **kw: tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=COLUMNS, dnn_feature_columns=COLUMNS, dnn_hidden_units=[4],
        **kw),
}


def _labels(name):
    return Y_CLASS if "Classifier" in name else Y_REG


def _frozen(name):
    """Optimizer arguments that make a training step change no variable."""
    def sgd():
        return tf.train.GradientDescentOptimizer(0.0)

    if name.startswith("DNNLinearCombined"):
        return {"linear_optimizer": sgd, "dnn_optimizer": sgd}
    return {"optimizer": sgd}


@pytest.mark.parametrize("name", sorted(CANNED))
def test_warm_start_from_copies_every_trained_variable(name, tmp_path):
    first = CANNED[name](model_dir=str(tmp_path / "a"))
    first.train(_input(_labels(name)), steps=5)
    # One step at learning rate 0 writes a checkpoint holding the starting values.
    warm = CANNED[name](model_dir=str(tmp_path / "b"), warm_start_from=first.model_dir,
                        **_frozen(name))
    warm.train(_input(_labels(name)), steps=1)
    cold = CANNED[name](model_dir=str(tmp_path / "c"), **_frozen(name))
    cold.train(_input(_labels(name)), steps=1)
    # warm starting copies the model variables, not the step or optimizer slots
    assert warm.get_variable_value("global_step") == 1
    names = [n for n in first.get_variable_names()
             if n != "global_step" and "/Adagrad" not in n and "/Ftrl" not in n
             and "/Adam" not in n]
    assert names
    for n in names:
        np.testing.assert_array_equal(warm.get_variable_value(n), first.get_variable_value(n),
                                      err_msg=n)
    # ...which a fresh initialization does not reproduce
    assert any(not np.array_equal(cold.get_variable_value(n), first.get_variable_value(n))
               for n in names)


@pytest.mark.parametrize("name", sorted(CANNED))
def test_loss_reduction_sum_evaluates_to_batch_times_mean(name, tmp_path):
    """The same checkpoint evaluated on one batch of 10: SUM gives 10x SUM_OVER_BATCH_SIZE."""
    y = _labels(name)
    mean_est = CANNED[name](model_dir=str(tmp_path / "mean"),
                            loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)
    mean_est.train(_input(y), steps=3)
    sum_est = CANNED[name](model_dir=str(tmp_path / "sum"),
                           loss_reduction=tf.losses.Reduction.SUM)
    batch = tf.estimator.inputs.numpy_input_fn({"x": X[:10]}, y[:10], batch_size=10,
                                               num_epochs=1, shuffle=False)
    ckpt = mean_est.latest_checkpoint()
    mean_metrics = mean_est.evaluate(batch)
    sum_metrics = sum_est.evaluate(batch, checkpoint_path=ckpt)
    np.testing.assert_allclose(sum_metrics["loss"], 10 * mean_metrics["loss"], rtol=1e-5)
    np.testing.assert_allclose(sum_metrics["average_loss"], mean_metrics["average_loss"],
                               rtol=1e-5)
