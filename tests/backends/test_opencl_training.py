"""Training on an OpenCL device: the digits MLP, checkpoints across devices, an Estimator.

Variables created under /gpu:0, their optimizer slots and updates live on the device
(test_opencl_variables.py asserts where they ran); ops without an OpenCL kernel stay on
the CPU under soft placement, with transfers in between.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split
from tests.backends.opencl_support import opencl_devices

opencl_devices()
SOFT = dict(allow_soft_placement=True)


def _digits():
    data, labels = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(data / 16.0, labels, seed=0)
    return (x_train.astype(np.float32), x_test.astype(np.float32), y_train, y_test)


def _mlp(device: str):
    with tf.device(device):
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = tf.layers.dense(x, 64, activation=tf.nn.relu, name="hidden1")
        h = tf.layers.dense(h, 32, activation=tf.nn.relu, name="hidden2")
        logits = tf.layers.dense(h, 10, name="logits")
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return x, y, logits, loss, accuracy


def test_digits_mlp_trains_on_the_device_and_its_checkpoint_restores_on_the_cpu(tmp_path):
    x_train, x_test, y_train, y_test = _digits()
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, y, logits, loss, accuracy = _mlp("/gpu:0")
        with tf.device("/gpu:0"):
            train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        saver = tf.train.Saver()
        rng = np.random.RandomState(0)
        with tf.Session(config=tf.ConfigProto(**SOFT)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(15):
                order = rng.permutation(len(x_train))
                for i in range(0, len(order), 64):
                    idx = order[i:i + 64]
                    sess.run(train_op, {x: x_train[idx], y: y_train[idx]})
            opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            md = tf.RunMetadata()
            acc, on_device = sess.run([accuracy, logits], {x: x_test, y: y_test},
                                      options=opts, run_metadata=md)
            saver.save(sess, path)
    assert acc >= 0.95, f"test accuracy {acc:.3f}"
    ran_on_gpu = {n.op_type for d in md.step_stats.dev_stats if d.device.endswith("GPU:0")
                  for n in d.node_stats}
    assert {"MatMul", "BiasAdd", "Relu"} <= ran_on_gpu

    with tf.Graph().as_default():
        x, y, logits, _, _ = _mlp("/cpu:0")
        saver = tf.train.Saver()
        with tf.Session(config=tf.ConfigProto(device_count={"GPU": 0})) as sess:
            saver.restore(sess, path)
            on_cpu = sess.run(logits, {x: x_test})
    np.testing.assert_allclose(on_cpu, on_device, rtol=1e-4, atol=1e-4)


def test_an_estimator_with_a_device_scope_in_its_model_fn_trains(tmp_path, capsys):
    x_train, x_test, y_train, y_test = _digits()

    def model_fn(features, labels, mode):
        with tf.device("/gpu:0"):
            h = tf.layers.dense(features["x"], 32, activation=tf.nn.relu)
            logits = tf.layers.dense(h, 10)
            loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
            train_op = tf.train.AdamOptimizer(0.01).minimize(
                loss, global_step=tf.train.get_global_step())
            accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                          eval_metric_ops={"accuracy": accuracy})

    def input_fn(x, y, epochs, shuffle):
        return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=64,
                                                  num_epochs=epochs, shuffle=shuffle)

    # The Estimator's default session config has soft placement on, as in TensorFlow.
    config = tf.estimator.RunConfig(
        session_config=tf.ConfigProto(log_device_placement=True, **SOFT))
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=config)
    est.train(input_fn(x_train, y_train, 10, True))
    placed = capsys.readouterr().out
    assert any("MatMul" in line and "device:GPU:0  (requested" in line
               for line in placed.splitlines())
    metrics = est.evaluate(input_fn(x_test, y_test, 1, False))
    assert metrics["accuracy"] >= 0.9

    plain = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    assert plain.evaluate(input_fn(x_test, y_test, 1, False))["accuracy"] == \
        pytest.approx(metrics["accuracy"], abs=1e-6)
