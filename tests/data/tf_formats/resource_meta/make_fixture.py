"""Writes the resource-variable fixtures of tests/framework/test_tf_resource_variables.py
with real TensorFlow (run once: ``/tmp/tf-oracle-venv/bin/python make_fixture.py OUT_DIR``):
a model whose variables are resource variables (``use_resource=True``: ``VarHandleOp``,
``ReadVariableOp``, ``AssignVariableOp``, ``ResourceApplyGradientDescent``,
``ResourceGather``), trained three GradientDescent steps, saved as a checkpoint with its
meta graph and as a SavedModel (``saved_model/``); prints its predictions and the next
step's loss."""

import importlib
import os
import sys

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = tf.placeholder(tf.float32, [None, 3], name="x")
ids = tf.placeholder(tf.int32, [None], name="ids")
t = tf.placeholder(tf.float32, [None, 2], name="t")
with tf.variable_scope("model", use_resource=True):
    w = tf.get_variable("w", initializer=np.arange(6, dtype=np.float32).reshape(3, 2) / 10)
    b = tf.get_variable("b", initializer=np.zeros(2, np.float32))
    emb = tf.get_variable("emb", initializer=np.ones((4, 2), np.float32) / 4)
y = tf.nn.relu(tf.matmul(x, w) + b + tf.gather(emb, ids), name="y")
loss = tf.reduce_mean(tf.square(y - t), name="loss")
step = tf.train.get_or_create_global_step()
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
tf.add_to_collection("train_op", train)
saver = tf.train.Saver()
X = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
IDS = np.array([1, 3], np.int32)
T = np.array([[1, 0], [0, 1]], np.float32)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    for _ in range(3):
        s.run(train, {x: X, ids: IDS, t: T})
    prefix = saver.save(s, os.path.join(out, "model.ckpt"), global_step=step)
    print(prefix, s.run(y, {x: X, ids: IDS}).tolist())
    s.run(train, {x: X, ids: IDS, t: T})
    print("loss after a 4th step", s.run(loss, {x: X, ids: IDS, t: T}))
    saver.restore(s, prefix)
    tf.saved_model.simple_save(s, os.path.join(out, "saved_model"), {"x": x, "ids": ids},
                               {"y": y})
