"""Writes the queue-runner .meta fixture of tests/train/test_meta_graph_collections.py with
real TensorFlow (run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``): a
linear model fed by a FIFOQueue that a QueueRunner fills from constants, trained two
steps and saved by a Saver that is also in the ``savers`` collection."""

import importlib
import os
import sys

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rows = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2) / 4, name="rows")
queue = tf.FIFOQueue(8, [tf.float32], shapes=[[2]], name="input_queue")
tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue_many([rows])]))
x = queue.dequeue_many(2, name="batch")
w = tf.Variable([[0.5], [-0.25]], name="w")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0), name="loss")
step = tf.train.get_or_create_global_step()
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
tf.add_to_collection("train_op", train)
saver = tf.train.Saver(max_to_keep=2)
tf.add_to_collection(tf.GraphKeys.SAVERS, saver)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(s, coord)
    for _ in range(2):
        s.run(train)
    saver.save(s, os.path.join(out, "model.ckpt"), global_step=step)
    print("w", s.run(w).ravel().tolist())
    coord.request_stop()
    coord.join(threads)
