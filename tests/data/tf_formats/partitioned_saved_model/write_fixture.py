"""Writes this directory's SavedModel with TensorFlow 2.15 (tf.compat.v1); run with the
tf-oracle's Python: ``/tmp/tf-oracle-venv/bin/python write_fixture.py``.

``emb`` [10, 3] in 3 parts (``fixed_size_partitioner(3)``, random values, graph seed
3) and ``b`` [3]; ``y = embedding_lookup(emb, ids) + b`` (default "mod" partition strategy) and
``s = sum(concat(emb parts) * 2)``, exported with ``simple_save``; TensorFlow's outputs
for ``IDS`` are kept in expected.npz.
"""

import os
import shutil

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT = os.path.join(HERE, "1")
IDS = np.array([0, 4, 9, 5, 4], np.int64)

shutil.rmtree(EXPORT, ignore_errors=True)
with tf.Graph().as_default():
    tf.set_random_seed(3)
    ids = tf.placeholder(tf.int64, [None], name="ids")
    emb = tf.get_variable("emb", [10, 3], initializer=tf.random_uniform_initializer(),
                          partitioner=tf.fixed_size_partitioner(3))
    b = tf.get_variable("b", [3], initializer=tf.constant_initializer([0.5, -1.0, 2.0]))
    y = tf.add(tf.nn.embedding_lookup(emb, ids), b, name="y")
    s = tf.reduce_sum(tf.concat(list(emb), 0) * 2.0, name="s")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        y_value, s_value = sess.run([y, s], {ids: IDS})
        tf.saved_model.simple_save(sess, EXPORT, {"ids": ids}, {"y": y, "s": s})
np.savez(os.path.join(HERE, "expected.npz"), ids=IDS, y=y_value, s=s_value)
print(y_value, s_value)
