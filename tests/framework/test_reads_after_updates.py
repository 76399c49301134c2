"""An op made inside ``control_dependencies([update])`` that reads a variable the update
writes sees the updated value, whatever order the executor picks, as in TensorFlow
(where the ``v/read`` snapshot aliases the variable's buffer). Expected values were
printed by TensorFlow 2.15 (``tf.compat.v1``) running the same programs."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _graph():
    gs = tf.Variable(0, dtype=tf.int64)
    inc = tf.assign_add(gs, 1)
    dec = tf.assign_sub(gs, 3)
    w = tf.Variable(1.0)
    with tf.control_dependencies([inc]):
        n = tf.cast(gs, tf.float32)
        decay = tf.minimum(0.9, (1.0 + n) / (10.0 + n))
        up = tf.assign_sub(w, decay)
        ident = tf.identity(gs)
    with tf.control_dependencies([dec]):
        after_dec = gs * 2
    return gs, {"n": n, "decay": decay, "up": up, "ident": ident, "after_dec": after_dec}


# (fetches, TensorFlow's values, global step after the run)
CASES = [
    (["n"], [1.0], 1),
    (["decay"], [0.18182], 1),
    (["up", "n"], [0.81818, 1.0], 1),
    (["n", "up"], [1.0, 0.81818], 1),
    (["decay", "ident"], [0.18182, 1.0], 1),
    (["after_dec"], [-6.0], -3),
]


@pytest.mark.parametrize("fetch_names, expected, step", CASES)
def test_reads_inside_control_dependencies_see_the_update(fetch_names, expected, step):
    with tf.Graph().as_default():
        gs, tensors = _graph()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([tensors[k] for k in fetch_names])
            np.testing.assert_allclose([float(v) for v in got], expected, rtol=1e-4)
            assert int(sess.run(gs)) == step


def test_moving_average_decay_uses_the_incremented_step():
    """The usual TF1 pattern: the EMA's ``num_updates`` is the global step that the
    training op (its control dependency) increments."""
    with tf.Graph().as_default():
        gs = tf.Variable(0, dtype=tf.int64)
        inc = tf.assign_add(gs, 1)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=gs)
        w = tf.Variable(1.0)
        with tf.control_dependencies([inc]):
            update = ema.apply([w])
        average = ema.average(w)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(w, 5.0))
            seen = []
            for _ in range(3):
                sess.run(update)
                seen.append(sess.run([average, gs]))
    np.testing.assert_allclose([a for a, _ in seen], [4.272727, 4.818182, 4.944056],
                               rtol=1e-6)
    assert [int(s) for _, s in seen] == [1, 2, 3]


def test_reads_outside_or_of_other_variables_keep_the_snapshot():
    """Only a variable the control dependencies may write is read again: other inputs,
    and ops made outside the context, keep the ``v/read`` snapshot (no extra op)."""
    with tf.Graph().as_default():
        gs = tf.Variable(0, dtype=tf.int64)
        other = tf.Variable(2.0)
        inc = tf.assign_add(gs, 1)
        outside = tf.cast(gs, tf.float32)
        with tf.control_dependencies([inc]):
            inside_other = other * 3.0
            inside_step = tf.cast(gs, tf.float32)
        assert outside.op.inputs[0] is gs.value()
        assert inside_other.op.inputs[0] is other.value()
        fresh = inside_step.op.inputs[0]
        assert fresh is not gs.value() and fresh.op.type == "Identity"
        assert fresh.op.inputs[0] is gs._ref() and inc.op in fresh.op.control_inputs
        assert inc.op in inside_step.op.control_inputs


def test_gradients_flow_through_the_fresh_read():
    """The gradient reaches the variable through the fresh read and agrees with the
    forward value (w = 4 after the bump). TensorFlow 2.15 prints 16.0 and 6.0 here: its
    gradient reads the snapshot from before the update, its forward product the
    updated buffer; flowgraph keeps the two consistent."""
    with tf.Graph().as_default():
        w = tf.Variable(3.0)
        bump = tf.assign_add(w, 1.0)
        with tf.control_dependencies([bump]):
            y = w * w
        (grad,) = tf.gradients(y, [w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            y_value, g_value = sess.run([y, grad])
    assert y_value == 16.0 and g_value == 8.0
