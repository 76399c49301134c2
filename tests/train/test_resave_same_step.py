"""A save at a step whose checkpoint already holds exactly the same values keeps the files
(flowgraph/train/saver.py): the Estimator's second `train` call restores model.ckpt-N and
saves step N again on session creation. Kept files are fsynced before the state file
names them; anything different, or unreadable, is written again."""

from __future__ import annotations

import os

import numpy as np

import flowgraph as tf
from flowgraph.train import checkpoint_state

_DATA = ".data-00000-of-00001"


def _graph():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
        bump = tf.assign_add(v, tf.ones_like(v))
        saver = tf.train.Saver()
    return g, v, bump, saver


def _fsyncs(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    return calls


def test_same_values_keep_the_files_and_make_them_durable(tmp_path, monkeypatch):
    g, v, _, saver = _graph()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, prefix, global_step=3)
        files = [path + suffix for suffix in (_DATA, ".index", ".meta")]
        inodes = [os.stat(p).st_ino for p in files]
        calls = _fsyncs(monkeypatch)
        assert saver.save(sess, prefix, global_step=3) == path
    assert [os.stat(p).st_ino for p in files] == inodes  # not rewritten
    # this process made the data, index, .meta and state files durable and they are
    # unchanged (the state file holds no timestamps, as TensorFlow's Saver writes it):
    # nothing is synced (tests/train/test_save_syncs.py counts the other cases)
    assert len(calls) == 0
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_changed_values_are_written_again(tmp_path):
    g, v, bump, saver = _graph()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, prefix, global_step=3)
        inode = os.stat(path + _DATA).st_ino
        sess.run(bump)
        saver.save(sess, prefix, global_step=3)
        expected = sess.run(v)
    assert os.stat(path + _DATA).st_ino != inode
    np.testing.assert_array_equal(tf.train.load_variable(path, "v"), expected)


def test_a_corrupt_or_foreign_file_is_written_again(tmp_path):
    g, v, _, saver = _graph()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, prefix, global_step=1)
        with open(path + _DATA, "r+b") as f:  # same size, torn content
            f.seek(os.path.getsize(path + _DATA) // 2)
            f.write(b"\xff" * 16)
        with open(path + ".meta", "ab") as f:
            f.write(b"x")
        saver.save(sess, prefix, global_step=1)
        expected = sess.run(v)
    np.testing.assert_array_equal(tf.train.load_variable(path, "v"), expected)
    tf.train.import_meta_graph(path + ".meta")  # a readable graph again


def test_nan_values_compare_by_bits(tmp_path):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable([np.nan, 1.0], name="v")
        saver = tf.train.Saver()
    prefix = str(tmp_path / "m")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, prefix, global_step=0, write_meta_graph=False)
        inode = os.stat(path + _DATA).st_ino
        saver.save(sess, prefix, global_step=0, write_meta_graph=False)
    assert os.stat(path + _DATA).st_ino == inode


def test_estimator_second_call_keeps_its_restored_checkpoint(tmp_path):
    """The save on session creation still happens (listeners, state file, event), on the
    files the restore read."""

    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.saves = []

        def after_save(self, session, global_step_value):
            self.saves.append(global_step_value)

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    x = np.random.RandomState(0).rand(32, 3).astype(np.float32)
    y = x.sum(1, keepdims=True)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    fn = tf.estimator.inputs.numpy_input_fn(x, y, batch_size=8, num_epochs=None,
                                            shuffle=False)
    est.train(fn, steps=4)
    path = str(tmp_path / "model.ckpt-4") + _DATA
    inode = os.stat(path).st_ino
    listener = Listener()
    est.train(fn, steps=4, saving_listeners=[listener])
    assert listener.saves == [4, 8]
    assert os.stat(path).st_ino == inode
    state = checkpoint_state.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-0", "model.ckpt-4", "model.ckpt-8"]
    assert est.get_variable_value("global_step") == 8


def test_flowgraph_format_keeps_a_file_holding_the_same_values(tmp_path):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable([np.nan, 1.0], name="v")
        saver = tf.train.Saver(format="flowgraph")
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"), global_step=0, write_meta_graph=False)
        inode = os.stat(path).st_ino
        saver.save(sess, str(tmp_path / "m"), global_step=0, write_meta_graph=False)
    assert os.stat(path).st_ino == inode
