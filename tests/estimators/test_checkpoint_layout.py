"""An Estimator's model_dir holds TensorFlow's checkpoint files (flowgraph/train/saver.py's
default), and a model_dir written by an older flowgraph (one-file checkpoints,
``Saver(format="flowgraph")``) restores and keeps training."""

from __future__ import annotations

import glob
import os

import numpy as np

import flowgraph as tf
from flowgraph.train import checkpoint_state
from flowgraph.train.checkpoint_utils import write_checkpoint


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_or_create_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)


def _input_fn():
    x = np.random.RandomState(0).rand(32, 3).astype(np.float32)
    return tf.estimator.inputs.numpy_input_fn(x, x.sum(1, keepdims=True), batch_size=8,
                                              num_epochs=None, shuffle=False)


def test_model_dir_has_tensorflows_files(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn(), steps=3)
    assert sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "*.index"))) == [
        "model.ckpt-0.index", "model.ckpt-3.index"]
    assert os.path.isfile(tmp_path / "model.ckpt-3.data-00000-of-00001")
    assert tf.train.checkpoint_exists(str(tmp_path / "model.ckpt-3"))
    assert dict(tf.train.list_variables(str(tmp_path)))["w"] == [3, 1]


def test_a_model_dir_of_one_file_checkpoints_restores_and_keeps_training(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn(), steps=4)
    trained = est.get_variable_value("w")
    # Rewrite model.ckpt-4 as an older flowgraph wrote it: one .npz file named PREFIX.
    prefix = str(tmp_path / "model.ckpt-4")
    reader = tf.train.NewCheckpointReader(prefix)
    tensors = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
    for path in glob.glob(prefix + ".index") + glob.glob(prefix + ".data-*"):
        os.remove(path)
    write_checkpoint(prefix, tensors)
    assert os.path.isfile(prefix) and not tf.train.checkpoint_exists(prefix + ".index")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "w"), trained)

    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(_input_fn(), steps=3)  # restores step 4 from the one-file checkpoint
    assert est.get_variable_value("global_step") == 7
    assert os.path.isfile(str(tmp_path / "model.ckpt-7.index"))
    state = checkpoint_state.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths][-2:] == [
        "model.ckpt-4", "model.ckpt-7"]
