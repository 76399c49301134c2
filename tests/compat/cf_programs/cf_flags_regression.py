# ruff: noqa: E402, E701, E702, E741, UP031
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import tempfile

import numpy as np

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_float("learning_rate", 0.1, "Initial learning rate.")
flags.DEFINE_integer("max_steps", 20, "Number of steps to run trainer.", lower_bound=1)
flags.DEFINE_string("train_dir", None, "Directory for checkpoints.")
flags.DEFINE_multi_integer("hidden", [4], "Hidden sizes.")
flags.DEFINE_enum("opt", "sgd", ["sgd", "momentum"], "Optimizer.")
flags.mark_flag_as_required("train_dir")
def main(argv):
    print("extra args", argv[1:])
    rng = np.random.RandomState(1)
    xs = rng.rand(32, 2).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0]], np.float32) + 0.5
    x = tf.constant(xs); y = tf.constant(ys)
    h = x
    for i, n in enumerate(FLAGS.hidden):
        h = tf.layers.dense(h, n, kernel_initializer=tf.constant_initializer(0.1), name="h%d" % i)
    pred = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(0.1), name="out")
    loss = tf.losses.mean_squared_error(y, pred)
    opt = (tf.train.GradientDescentOptimizer(FLAGS.learning_rate) if FLAGS.opt == "sgd"
           else tf.train.MomentumOptimizer(FLAGS.learning_rate, 0.9))
    train = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(FLAGS.max_steps):
            _, l = sess.run([train, loss])
        print("final loss", round(float(l), 4), "steps", sess.run(tf.train.get_global_step()))
        path = tf.train.Saver().save(sess, tf.io.gfile.join(FLAGS.train_dir, "model.ckpt"))
        print(os.path.basename(path), tf.io.gfile.exists(path + ".index"))
d = tempfile.mkdtemp()
ff = os.path.join(d, "flags.txt")
with open(ff, "w") as f:
    f.write("--max_steps=15\n--hidden=3\n--hidden=2\n")
tf.app.run(main, argv=["train.py", "--train_dir=" + d, "--flagfile=" + ff, "--opt=momentum",
                       "--learning_rate=0.05", "--verbose_extra"])
