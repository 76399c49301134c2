"""What contrib users do across processes: export or train here, load in a fresh one.

`tf.contrib.predictor` serves a SavedModel another process exported; slim fine-tuning
restores a checkpoint another process trained (`assign_from_checkpoint_fn`, with the
head excluded).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

import flowgraph as tf

slim = tf.contrib.slim


def _run_fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_predictor_serves_in_a_fresh_process_what_this_one_exported(tmp_path):
    export_dir = str(tmp_path / "export")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable([[1.0], [2.0], [3.0]], name="w")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": tf.matmul(x, w)})
    printed = _run_fresh(f"""
        import flowgraph as tf
        predict = tf.contrib.predictor.from_saved_model({export_dir!r})
        print(sorted(predict.feed_tensors), sorted(predict.fetch_tensors))
        print(predict({{"x": [[1.0, 1.0, 1.0], [0.0, 0.5, 2.0]]}})["y"].ravel().tolist())
    """)
    assert printed.splitlines() == ["['x'] ['y']", "[6.0, 7.0]"]


def _net(x):
    with slim.arg_scope([slim.fully_connected], weights_regularizer=slim.l2_regularizer(0.01)):
        h = slim.fully_connected(x, 8, scope="fc1")
        return slim.fully_connected(h, 2, activation_fn=None, scope="logits")


def test_slim_fine_tuning_restores_in_a_fresh_process_what_this_one_trained(tmp_path):
    rs = np.random.RandomState(0)
    xs = rs.rand(16, 4).astype(np.float32)
    ys = (xs.sum(1) > 2).astype(np.int64)
    logdir = str(tmp_path / "train")
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        logits = _net(tf.constant(xs))
        slim.losses.softmax_cross_entropy(logits, slim.one_hot_encoding(tf.constant(ys), 2))
        train_op = slim.learning.create_train_op(slim.losses.get_total_loss(),
                                                 tf.train.GradientDescentOptimizer(0.1))
        slim.learning.train(train_op, logdir, number_of_steps=3, save_summaries_secs=10000,
                            save_interval_secs=10000)
    ckpt = tf.train.latest_checkpoint(logdir)
    trained = {name: tf.train.load_variable(ckpt, name)
               for name in ("fc1/weights", "fc1/biases")}
    printed = _run_fresh(f"""
        import numpy as np
        import flowgraph as tf
        slim = tf.contrib.slim
        with tf.Graph().as_default():
            with slim.arg_scope([slim.fully_connected]):
                h = slim.fully_connected(tf.zeros([1, 4]), 8, scope="fc1")
                slim.fully_connected(h, 5, activation_fn=None, scope="logits")  # a new head
            restore = slim.get_variables_to_restore(exclude=["logits"])
            init_fn = slim.assign_from_checkpoint_fn({ckpt!r}, restore)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                init_fn(sess)
                for v in restore:
                    np.save({str(tmp_path)!r} + "/" + v.op.name.replace("/", "_") + ".npy",
                            sess.run(v))
                print([v.op.name for v in restore])
    """)
    assert printed.strip() == "['fc1/weights', 'fc1/biases']"
    for name, value in trained.items():
        restored = np.load(tmp_path / (name.replace("/", "_") + ".npy"))
        np.testing.assert_array_equal(restored, value)
