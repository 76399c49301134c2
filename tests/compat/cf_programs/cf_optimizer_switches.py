# ruff: noqa: E701
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
# Graph-rewrite and threading switches set process-wide, then a session without config.
tf.config.experimental.set_visible_devices([], "GPU")
tf.config.optimizer.set_experimental_options(
    {"constant_folding": False, "arithmetic_optimization": False})
tf.config.optimizer.set_jit(True)
tf.config.threading.set_inter_op_parallelism_threads(2)
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.set_soft_device_placement(True)
print(tf.config.optimizer.get_experimental_options())
print(tf.config.optimizer.get_jit(), tf.config.threading.get_inter_op_parallelism_threads(),
      tf.config.threading.get_intra_op_parallelism_threads(), tf.config.get_soft_device_placement())
a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
with tf.device("/gpu:0"):
    b = tf.matmul(a, a) * 1.0 + 0.0
with tf.Session() as sess:
    print(sess.run(b))
tf.config.optimizer.set_jit(False)
print(repr(tf.config.optimizer.get_jit()))
