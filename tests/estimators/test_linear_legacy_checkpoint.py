"""A canned linear model_dir written before session 12 (variables unpartitioned, slots
saved whole as ``.../weights/Ftrl``) keeps training now that the model partitions its
variables as TensorFlow does (slots keyed ``.../weights/part_0/Ftrl``)."""

import shutil
from pathlib import Path

import numpy as np

import flowgraph as tf

LEGACY = Path(__file__).parents[1] / "data" / "flowgraph_legacy" / "linear_classifier_session11"


def _input_fn():
    x = np.random.RandomState(0).rand(64, 2).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int64)
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=16, num_epochs=None,
                                              shuffle=False)


def test_old_linear_model_dir_keeps_training(tmp_path):
    model_dir = tmp_path / "model"
    shutil.copytree(LEGACY, model_dir)
    before = tf.train.load_variable(str(model_dir), "linear/linear_model/x/weights/Ftrl")
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", [2])],
                                        model_dir=str(model_dir))
    est.train(_input_fn(), steps=3)
    assert est.get_variable_value("global_step") == 8  # 5 before, restored
    names = est.get_variable_names()
    assert "linear/linear_model/x/weights/part_0/Ftrl" in names
    after = est.get_variable_value("linear/linear_model/x/weights/part_0/Ftrl")
    assert after.shape == before.shape == (2, 1)
    assert np.all(after > before)  # the accumulator went on from its restored value
