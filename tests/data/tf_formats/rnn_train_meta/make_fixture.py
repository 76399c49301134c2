"""Writes the LSTM training .meta fixture of tests/train/test_tf_rnn_training_meta.py with
real TensorFlow (run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``): a
`dynamic_rnn` LSTM regressor with Adam, saved before training, so that its `.meta` holds
TF 1's while-loop gradient (stacks ordered by ``ControlTrigger``); prints TensorFlow's
loss after three steps from the saved state (the test's expected value)."""

import importlib
import os
import sys

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
tf.set_random_seed(0)
x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
y = tf.placeholder(tf.float32, [None], name="y")
outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), x, dtype=tf.float32)
pred = tf.squeeze(tf.layers.dense(outputs[:, -1], 1), 1, name="pred")
loss = tf.reduce_mean(tf.square(pred - y), name="loss")
train = tf.train.AdamOptimizer(0.01).minimize(loss, name="train")
xs = np.random.RandomState(0).rand(4, 5, 3).astype(np.float32)
ys = np.arange(4, dtype=np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    tf.train.Saver().save(sess, os.path.join(out, "model.ckpt"))
    for _ in range(3):
        sess.run(train, {x: xs, y: ys})
    print("loss after 3 steps", repr(float(sess.run(loss, {x: xs, y: ys}))))
