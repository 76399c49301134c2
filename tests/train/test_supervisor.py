"""tf.train.Supervisor: initialize or restore from logdir, the checkpoint at start, queue
runners on its coordinator, OutOfRangeError as a clean stop, other errors re-raised,
summaries written to logdir, the non-checkpointing configuration."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import flowgraph as tf


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(2.0, name="w")
    train = tf.group(tf.assign_add(step, 1), tf.assign_add(w, 1.0))
    tf.summary.scalar("w", w)
    return step, w, train


def test_trains_saves_and_restores(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        step, w, train = _model()
        # No checkpoint thread: its save at start would race with the explicit one.
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0)
        assert tf.get_default_graph().finalized
        with sv.managed_session() as sess:
            for _ in range(3):
                sess.run(train)
            sv.summary_computed(sess, sess.run(sv.summary_op))
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
        assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-3")
        assert glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    with tf.Graph().as_default():  # a new Supervisor resumes from the checkpoint
        step, w, train = _model()
        sv = tf.train.Supervisor(logdir=logdir)
        with sv.managed_session() as sess:
            assert sess.run(step) == 3 and sess.run(w) == pytest.approx(5.0)


def test_checkpoint_thread_saves_when_the_session_starts(tmp_path):
    # TensorFlow's checkpoint thread saves at once, then every save_model_secs; leaving
    # managed_session saves nothing more (recorded with the tf-oracle: model.ckpt-0).
    with tf.Graph().as_default():
        _, _, train = _model()
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0)
        with sv.managed_session() as sess:
            for _ in range(200):  # until the thread's first save is written
                if tf.train.latest_checkpoint(str(tmp_path)):
                    break
                sv.coord.wait_for_stop(0.05)
            for _ in range(3):
                sess.run(train)
        assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-0")


def test_queue_exhaustion_is_a_clean_stop():
    with tf.Graph().as_default():
        x = tf.train.slice_input_producer([np.arange(5)], num_epochs=1, shuffle=False)[0]
        sv = tf.train.Supervisor(logdir=None)
        seen = []
        with sv.managed_session() as sess:
            while not sv.should_stop():
                seen.append(int(sess.run(x)))
        assert seen == [0, 1, 2, 3, 4] and sv.should_stop()
        assert sv.saver is None  # no global variables, as in TensorFlow


def test_other_errors_are_reraised():
    with tf.Graph().as_default():
        _model()
        sv = tf.train.Supervisor(logdir=None, saver=None)
        assert sv.saver is None and sv.save_path is None
        with pytest.raises(ValueError, match="boom"), sv.managed_session():
            raise ValueError("boom")


def test_loop_and_stop():
    with tf.Graph().as_default():
        _model()
        sv = tf.train.Supervisor(logdir=None)
        calls = []
        sess = sv.prepare_or_wait_for_session()
        sv.loop(0.01, lambda: calls.append(1))
        sv.coord.wait_for_stop(0.1)
        sv.stop()
        sess.close()
        assert calls and sv.should_stop()
