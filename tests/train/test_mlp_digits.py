"""A TF1 MLP on digits, end to end: train in a plain Session loop, save, restore, predict.

Two hidden `tf.layers.dense` ReLU layers, `tf.losses.sparse_softmax_cross_entropy`, Adam,
mini-batches fed through placeholders; then `tf.train.Saver` writes a checkpoint, a fresh
graph built by the same code restores it, and its predictions must be identical.
"""

from __future__ import annotations

import os

import numpy as np

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split


def _build():
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.dense(x, 64, activation=tf.nn.relu, name="hidden1")
    h = tf.layers.dense(h, 32, activation=tf.nn.relu, name="hidden2")
    logits = tf.layers.dense(h, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    predictions = tf.argmax(logits, 1)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, y), tf.float32))
    return x, y, logits, loss, predictions, accuracy


def test_mlp_trains_saves_and_restores_identically(tmp_path):
    data, labels = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(data / 16.0, labels, seed=0)
    path = os.path.join(str(tmp_path), "model.ckpt")

    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, y, logits, loss, predictions, accuracy = _build()
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        saver = tf.train.Saver()
        rng = np.random.RandomState(0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, {x: x_train, y: y_train})
            for _ in range(15):
                order = rng.permutation(len(x_train))
                for i in range(0, len(order), 64):
                    idx = order[i:i + 64]
                    sess.run(train_op, {x: x_train[idx], y: y_train[idx]})
            last, acc = sess.run([loss, accuracy], {x: x_test, y: y_test})
            before_logits, before = sess.run([logits, predictions], {x: x_test})
            saved = saver.save(sess, path, global_step=15)

    assert last < first / 5
    assert acc >= 0.95, f"test accuracy {acc:.3f}"
    assert os.path.exists(os.path.join(str(tmp_path), "checkpoint"))

    with tf.Graph().as_default():
        x, y, logits, _, predictions, accuracy = _build()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            assert tf.train.latest_checkpoint(str(tmp_path)) == saved
            saver.restore(sess, saved)
            after_logits, after, restored_acc = sess.run(
                [logits, predictions, accuracy], {x: x_test, y: y_test})

    np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(after_logits, before_logits)
    assert restored_acc == acc
