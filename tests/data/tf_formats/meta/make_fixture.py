"""Writes the .meta fixture of tests/train/test_meta_graph.py with real TensorFlow
(run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``): a one-layer ReLU
model trained three GradientDescent steps, saved with its meta graph."""

import importlib
import os
import sys

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [None, 3], name="x")
t = tf.placeholder(tf.float32, [None, 2], name="t")
w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
b = tf.Variable(np.zeros(2, np.float32), name="b")
y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
loss = tf.reduce_mean(tf.square(y - t), name="loss")
step = tf.train.get_or_create_global_step()
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
tf.add_to_collection("train_op", train)
saver = tf.train.Saver()
X = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
T = np.array([[1, 0], [0, 1]], np.float32)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    for _ in range(3):
        s.run(train, {x: X, t: T})
    prefix = saver.save(s, os.path.join(out, "model.ckpt"), global_step=step)
    print(prefix, s.run(y, {x: X}).tolist())
