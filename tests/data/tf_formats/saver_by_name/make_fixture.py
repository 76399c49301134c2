"""Writes the fixtures of tests/train/test_saver_by_name.py and
tests/train/test_meta_graph_contexts.py with real TensorFlow 2.15 (run once:
``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``).

plain/    a reference and a resource variable, ``Saver()``, saved at step 3
sharded/  ``Saver(sharded=True, max_to_keep=2)`` over a variable pinned to the CPU and a
          variable partitioned in two (two data shards), saved at step 5
control/  a tf.cond and a tf.while_loop over a variable (``cond_context`` and
          ``while_context`` collections), saved at step 0, no gradient ops
iterator/ graph.meta: a tf.data initializable iterator (``iterators`` collection)
"""

import importlib
import os
import sys

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

out = sys.argv[1]


def plain(d):
    with tf.Graph().as_default():
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        r = tf.get_variable("r", initializer=tf.constant([5.0, 6.0]), use_resource=True)
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.add(tf.matmul(x, w), r, name="y")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            print(saver.save(s, os.path.join(d, "model.ckpt"), global_step=3))


def sharded(d):
    with tf.Graph().as_default():
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
            w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        p = tf.get_variable("p", [4, 2], initializer=tf.constant_initializer(1.5),
                            partitioner=tf.fixed_size_partitioner(2))
        tf.identity(tf.reduce_sum(w) + tf.reduce_sum(p), name="total")
        saver = tf.train.Saver(sharded=True, max_to_keep=2)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            print(saver.save(s, os.path.join(d, "model.ckpt"), global_step=5))


def control(d):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        v = tf.Variable(2.0, name="v")
        pred = tf.placeholder_with_default(True, [], name="pred")
        c = tf.cond(pred, lambda: x * v, lambda: x + v, name="cond")
        _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * v),
                               [tf.constant(0), tf.reduce_sum(c)], name="loop")
        loss = tf.identity(acc, name="loss")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            print(saver.save(s, os.path.join(d, "model.ckpt"), global_step=0))
            (grad,) = tf.gradients(loss, [v])  # after the save: not in the .meta
            feed = {x: np.arange(4, dtype=np.float32)}
            print(s.run([loss, grad], feed), s.run([loss, grad], {**feed, pred: False}))


def iterator(d):
    with tf.Graph().as_default():
        data = tf.placeholder(tf.float32, [None], name="data")
        it = tf.data.Dataset.from_tensor_slices(data).batch(2).make_initializable_iterator()
        tf.identity(it.get_next(), name="batch")
        tf.train.export_meta_graph(os.path.join(d, "graph.meta"))


for name, fn in (("plain", plain), ("sharded", sharded), ("control", control),
                 ("iterator", iterator)):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    fn(os.path.join(out, name))
