"""A TensorFlow-written LSTM training graph (`dynamic_rnn` + Adam, tests/data/tf_formats/
rnn_train_meta/make_fixture.py) imports with `import_meta_graph` and trains on with
TensorFlow's loss: TF 1's while-loop gradient (stack push/pop ordered by
``ControlTrigger``) runs as written. And ``ControlTrigger`` itself: never dead."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import flowgraph as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "rnn_train_meta")


def test_a_tensorflow_lstm_training_graph_trains_on_with_tensorflows_loss(caplog):
    caplog.set_level(logging.WARNING)
    xs = np.random.RandomState(0).rand(4, 5, 3).astype(np.float32)
    ys = np.arange(4, dtype=np.float32)
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(os.path.join(HERE, "model.ckpt.meta"))
        types = {op.type for op in graph.get_operations()}
        assert {"ControlTrigger", "StackPushV2", "StackPopV2"} <= types
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(HERE, "model.ckpt"))
            for _ in range(3):
                sess.run("train", {"x:0": xs, "y:0": ys})
            loss = sess.run("loss:0", {"x:0": xs, "y:0": ys})
    assert loss == pytest.approx(2.832028865814209, rel=1e-5)  # TensorFlow 2.15's
    assert not [r for r in caplog.records if "left out" in r.getMessage()]


def test_control_trigger_runs_after_a_dead_predecessor():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        counter = tf.Variable(0, name="counter")
        _, on_true = tf.raw_ops.Switch(data=tf.constant(1), pred=pred)
        dead_when_false = tf.identity(on_true)
        trigger = tf.raw_ops.ControlTrigger()
        trigger._add_control_input(dead_when_false.op)
        with tf.control_dependencies([trigger]):
            bump = tf.assign_add(counter, 1)
        plain = tf.no_op()
        plain._add_control_input(dead_when_false.op)
        with tf.control_dependencies([plain]):
            skipped = tf.assign_add(counter, 100)
        with tf.Session() as sess:
            sess.run(counter.initializer)
            sess.run(bump, {pred: False})
            assert sess.run(counter) == 1
            with pytest.raises(tf.errors.InvalidArgumentError, match="is dead"):
                sess.run(skipped, {pred: False})  # after a NoOp instead: dead
            sess.run([bump, skipped], {pred: True})
            assert sess.run(counter) == 102
