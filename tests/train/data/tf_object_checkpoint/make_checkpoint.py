"""Writes the TensorFlow-made object-based checkpoint beside this script (``ck-1.*``),
which tests/train/test_checkpoint_object.py restores in flowgraph.

Run once under TensorFlow 2.15 (the tf-oracle's environment):
    /tmp/tf-oracle-venv/bin/python tests/train/data/tf_object_checkpoint/make_checkpoint.py
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
here = os.path.dirname(os.path.abspath(__file__))
v = tf.Variable([1.0, 2.0], name="v")
dense = tf.keras.layers.Dense(2, name="dense")
y = dense(tf.constant([[1.0, 2.0, 3.0]]))
opt = tf.train.AdamOptimizer(0.1)
train = opt.minimize(tf.reduce_sum(y * y) + tf.reduce_sum(v * v))
ckpt = tf.train.Checkpoint(model=dense, optimizer=opt, inner=tf.train.Checkpoint(v=v))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(dense.kernel.assign(np.arange(6, dtype=np.float32).reshape(3, 2) / 10))
    sess.run(dense.bias.assign([0.5, -0.5]))
    sess.run(train)
    path = ckpt.save(os.path.join(here, "ck"), session=sess)
    os.remove(os.path.join(here, "checkpoint"))
    for w in (v, dense.kernel, dense.bias, opt.get_slot(dense.kernel, "m")):
        print(w.op.name, sess.run(w).tolist())
