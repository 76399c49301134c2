# ruff: noqa
# Low-level TF1: a 3-D encoder/decoder with tf.nn.conv3d, max_pool3d, conv3d_transpose and a Saver checkpoint
import importlib, os, tempfile
import numpy as np
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
tf.set_random_seed(3)
vol = tf.placeholder(tf.float32, [None, 4, 8, 8, 1], name="volume")
w1 = tf.get_variable("w1", [3, 3, 3, 1, 4], initializer=tf.truncated_normal_initializer(stddev=0.1))
w2 = tf.get_variable("w2", [2, 2, 2, 2, 4], initializer=tf.truncated_normal_initializer(stddev=0.1))
h = tf.nn.relu(tf.nn.conv3d(vol, w1, strides=[1, 1, 1, 1, 1], padding="SAME"))
p = tf.nn.max_pool3d(h, ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
a = tf.nn.avg_pool3d(p, [1, 1, 2, 2, 1], [1, 1, 1, 1, 1], "SAME")
batch = tf.shape(vol)[0]
up = tf.nn.conv3d_transpose(a, w2, tf.stack([batch, 4, 8, 8, 2]), [1, 2, 2, 2, 1], padding="SAME")
recon = tf.reduce_sum(up, axis=-1, keepdims=True)
loss = tf.reduce_mean(tf.square(recon - vol))
step = tf.train.AdamOptimizer(0.01).minimize(loss)
print(sorted({op.type for op in tf.get_default_graph().get_operations() if "3D" in op.type}))
data = np.random.RandomState(0).rand(2, 4, 8, 8, 1).astype(np.float32)
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(15):
        _, l = sess.run([step, loss], {vol: data})
        if i % 5 == 0: print(i, round(float(l), 5))
    path = saver.save(sess, os.path.join(tempfile.mkdtemp(), "model.ckpt"))
    final = sess.run(loss, {vol: data})
with tf.Session() as sess:
    saver.restore(sess, path)
    print("restored loss equal", abs(sess.run(loss, {vol: data}) - final) < 1e-7, round(float(final), 5))
