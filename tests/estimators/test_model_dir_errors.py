"""An Estimator whose model_dir is a file: constructed without error, and the first
write fails with FailedPreconditionError naming the path, as in TensorFlow (checked
with the tf-oracle: "<path> is not a directory")."""

from __future__ import annotations

import pytest

import flowgraph as tf


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_sum(tf.square(w * features["x"] - labels))
    step = tf.train.get_or_create_global_step()
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(step, 1))


def test_a_file_as_model_dir_fails_at_the_first_write(tmp_path):
    path = tmp_path / "afile"
    path.write_text("x")
    est = tf.estimator.Estimator(_model_fn, model_dir=str(path))
    with pytest.raises(tf.errors.FailedPreconditionError, match="is not a directory") as info:
        est.train(lambda: ({"x": tf.constant([[1.0]])}, tf.constant([[1.0]])), steps=1)
    assert str(path) in str(info.value)
    assert path.read_text() == "x"  # nothing was lost
