# ruff: noqa: E402, E701
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np

# XLA-annotated training step, as TF1 code wrote it for GPUs; on CPU the same graph runs.
x = tf.placeholder(tf.float32, [None, 3], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
with tf.xla.experimental.jit_scope():
    w = tf.Variable(tf.ones([3, 1]), name="w")
    pred = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.square(pred - y))
print(pred.op.get_attr("_XlaCompile"), loss.op.get_attr("_XlaCompile"))
def step(xb, yb):
    return tf.reduce_sum(tf.matmul(xb, w) - yb)
(res,) = tf.xla.experimental.compile(step, [x, y])
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
xs = np.array([[1.0, 0.0, 2.0], [0.5, 1.0, 0.0]], np.float32)
ys = np.array([[1.0], [2.0]], np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        sess.run(train, {x: xs, y: ys})
    print(np.round(sess.run([loss, res], {x: xs, y: ys}), 4).tolist())
