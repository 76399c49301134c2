"""Writes tf_conv3d.npz: inputs and TensorFlow 2.15 results of conv3d, conv3d_transpose,
max_pool3d and avg_pool3d (with gradients). Run once with the tf-oracle:
``/work/shared/tools/tf-oracle tests/ops/data/tf_conv3d.py`` (from this folder)."""

import importlib
import os

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()
rng = np.random.RandomState(3)


def r(*shape):
    return rng.randn(*shape).astype(np.float32)


x, f, ft, p = r(2, 5, 6, 4, 3), r(3, 2, 3, 3, 4), r(2, 3, 2, 4, 3), r(2, 5, 6, 7, 2)
X, F, FT, P = tf.constant(x), tf.constant(f), tf.constant(ft), tf.constant(p)
out = {
    "c3_same_s2": tf.nn.conv3d(X, F, [1, 2, 2, 1, 1], "SAME"),
    "c3_valid_s1": tf.nn.conv3d(X, F, [1, 1, 1, 1, 1], "VALID"),
    "c3_valid_d2": tf.nn.conv3d(X, F, [1, 1, 1, 1, 1], "VALID", dilations=[1, 2, 1, 1, 1]),
    "t3_same_s2": tf.nn.conv3d_transpose(X, FT, [2, 10, 12, 8, 4], [1, 2, 2, 2, 1], "SAME"),
    "t3_valid_s1": tf.nn.conv3d_transpose(X, FT, [2, 6, 8, 5, 4], [1, 1, 1, 1, 1], "VALID"),
    "mp_same": tf.nn.max_pool3d(P, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
    "mp_valid": tf.nn.max_pool3d(P, [1, 3, 2, 2, 1], [1, 1, 2, 3, 1], "VALID"),
    "ap_same": tf.nn.avg_pool3d(P, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
    "ap_valid": tf.nn.avg_pool3d(P, [1, 3, 2, 2, 1], [1, 1, 2, 3, 1], "VALID"),
}
for k, wrt in (("c3_same_s2", [X, F]), ("t3_same_s2", [X, FT]), ("mp_same", [P]),
               ("ap_same", [P])):
    shape = out[k].shape.as_list()
    w = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(np.float32)
    for j, g in enumerate(tf.gradients(tf.reduce_sum(out[k] * w), wrt)):
        out[f"{k}_g{j}"] = g
with tf.Session() as s:
    res = s.run(out)
np.savez_compressed(os.environ.get("OUT_NPZ", "tf_conv3d.npz"), in_x=x, in_f=f, in_ft=ft,
                    in_p=p, **res)
for k in sorted(res):
    print(k, res[k].shape, float(np.sum(res[k])))
