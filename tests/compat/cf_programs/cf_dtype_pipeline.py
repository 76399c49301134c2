# ruff: noqa: E402, E701, E741
"""A TF1-era program run by tests/compat/test_module_gapfill.py (TF_MODULE picks the library)."""
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np

# Preprocessing with tf.dtypes ops and static-shape helpers from tf.compat.
images = tf.placeholder(tf.float32, [None, 4, 4, 1], name="images")
batch = tf.compat.dimension_value(images.shape[0])
height = tf.compat.dimension_value(tf.compat.dimension_at_index(images.shape, 1))
print(batch, height)
scaled = images * 255.0
as_bytes = tf.dtypes.saturate_cast(scaled, tf.uint8)
as_int = tf.dtypes.cast(scaled, tf.int32)
labels = tf.dtypes.as_string(tf.reduce_max(as_int, axis=[1, 2, 3]))
cplx = tf.dtypes.complex(tf.reduce_mean(images, axis=[1, 2, 3]), tf.zeros([tf.shape(images)[0]]))
data = np.linspace(-0.5, 1.5, 32, dtype=np.float32).reshape(2, 4, 4, 1)
with tf.Session() as sess:
    b, i, l, c = sess.run([as_bytes, as_int, labels, cplx], {images: data})
print(b.reshape(2, -1)[:, [0, 5, 10, 15]].tolist(), i.dtype, l.tolist(), c.dtype)
print(tf.dtypes.experimental.int4, tf.dtypes.experimental.float8_e5m2.is_floating)
print(tf.compat.forward_compatible(2020, 1, 1),
      tf.io.gfile.join("gs://bucket/data", "train", "part-0"))
