# ruff: noqa: E701, UP031
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
# Split the host into logical CPUs and pin a two-tower model on them.
cpus = tf.config.list_physical_devices("CPU")
tf.config.experimental.set_visible_devices([], "GPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
x = tf.placeholder(tf.float32, [None, 3], name="x")
towers = []
for i in range(2):
    with tf.device("/cpu:%d" % i), tf.variable_scope("tower_%d" % i):
        w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.5 * (i + 1)))
        towers.append(tf.matmul(x, w))
out = tf.add_n(towers)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sorted(d.name for d in sess.list_devices()))
    print(sess.run(out, {x: [[1.0, 2.0, 3.0]]}))
print(tf.config.list_logical_devices("CPU"))
try:
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()])
except RuntimeError as e:
    print("RuntimeError:", e)
