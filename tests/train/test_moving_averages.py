"""tf.train.ExponentialMovingAverage (issue 15); expected values checked under TF 2.15."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf


def test_shadow_variables_names_collections_and_updates():
    with tf.variable_scope("s"):
        v = tf.Variable([0.0, 2.0], name="v")
    step = tf.Variable(0, name="step", trainable=False)
    ema = tf.train.ExponentialMovingAverage(decay=0.99, num_updates=step)
    assert ema.name == "ExponentialMovingAverage"
    assert ema.average_name(v) == "s/v/ExponentialMovingAverage"
    with tf.control_dependencies([tf.assign(v, [10.0, 2.0])]):
        update = ema.apply([v])
    shadow = ema.average(v)
    assert update.type == "NoOp" and update.name == "ExponentialMovingAverage"
    assert shadow.op.name == "s/v/ExponentialMovingAverage"
    assert shadow not in tf.trainable_variables() and shadow in tf.global_variables()
    assert tf.moving_average_variables() == [v]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update)  # decay = min(0.99, 1/10): 0 + 0.9 * (10 - 0)
        np.testing.assert_allclose(sess.run(shadow), [9.0, 2.0])
        sess.run(tf.assign(step, 100))
        sess.run(update)  # decay = 101/110
        np.testing.assert_allclose(sess.run(shadow), [9.0 + (1 - 101 / 110), 2.0],
                                   rtol=1e-6)


def test_tensor_average_starts_at_zero():
    t = tf.constant(4.0)
    ema = tf.train.ExponentialMovingAverage(0.1)
    update = ema.apply([t])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update)
        assert sess.run(ema.average(t)) == pytest.approx(3.6)


def test_errors_and_missing_average():
    v = tf.Variable(1.0)
    ema = tf.train.ExponentialMovingAverage(0.9)
    assert ema.average(v) is None
    with pytest.raises(TypeError, match="half, float, or double"):
        ema.apply([tf.Variable(1)])
    first = ema.apply([v])
    ema.apply([v])  # as in TF 2.15: the shadow variable is reused
    assert first is not None and len(tf.global_variables()) == 3


def test_variables_to_restore_loads_averages(tmp_path):
    v = tf.Variable(0.0, name="v")
    other = tf.Variable(5.0, name="other", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.5)
    update = ema.apply([v])
    names = ema.variables_to_restore()
    assert names == {"v/ExponentialMovingAverage": v, "other": other}
    path = os.path.join(str(tmp_path), "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v, 4.0))
        sess.run(update)  # shadow 2.0
        tf.train.Saver().save(sess, path)
    with tf.Graph().as_default():
        v2 = tf.Variable(0.0, name="v")
        tf.Variable(0.0, name="other", trainable=False)
        restore = tf.train.ExponentialMovingAverage(0.5).variables_to_restore()
        with tf.Session() as sess:
            tf.train.Saver(restore).restore(sess, path)
            assert sess.run(v2) == 2.0
