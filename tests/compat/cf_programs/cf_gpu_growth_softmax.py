# ruff: noqa: E402, E701, E741
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np

# The opening of countless TF1 training scripts, then a softmax regression.
gpus = tf.config.experimental.list_physical_devices("GPU")
for gpu in gpus:
    tf.config.experimental.set_memory_growth(gpu, True)
tf.config.experimental.set_visible_devices([], "GPU")
print("visible GPUs:", tf.config.experimental.get_visible_devices("GPU"))
rng = np.random.RandomState(0)
xs = rng.randn(64, 4).astype(np.float32)
ys = (xs[:, 0] + xs[:, 1] > 0).astype(np.int64)
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.int64, [None])
w = tf.Variable(tf.zeros([4, 2]))
b = tf.Variable(tf.zeros([2]))
logits = tf.matmul(x, w) + b
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(30):
        _, l = sess.run([train, loss], {x: xs, y: ys})
        if step % 10 == 0:
            print(step, round(float(l), 4))
    print("accuracy", sess.run(acc, {x: xs, y: ys}))
print([d.name for d in tf.config.list_logical_devices()])
