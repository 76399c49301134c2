"""Writes tf_conv_family.npz: inputs and TensorFlow 2.15 results of conv2d_transpose (and
its gradients), conv1d, atrous_conv2d and separable_conv2d. Run once with the tf-oracle:
``/work/shared/tools/tf-oracle tests/ops/data/tf_conv_family.py`` (from this folder)."""

import importlib
import os

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()
rng = np.random.RandomState(1)


def r(*shape):
    return rng.randn(*shape).astype(np.float32)


x4, f_t = r(2, 3, 4, 3), r(3, 2, 5, 3)
x1, f1 = r(2, 7, 3), r(3, 3, 4)
xa, fa = r(1, 9, 8, 2), r(2, 3, 2, 3)
xs, dw, pw = r(2, 6, 5, 3), r(3, 3, 3, 2), r(1, 1, 6, 4)
X4, F_T, XS = tf.constant(x4), tf.constant(f_t), tf.constant(xs)
DW, PW = tf.constant(dw), tf.constant(pw)
out = {
    "tr_same_s2": tf.nn.conv2d_transpose(X4, F_T, [2, 6, 8, 5], [1, 2, 2, 1], "SAME"),
    "tr_same_s2_odd": tf.nn.conv2d_transpose(X4, F_T, [2, 5, 7, 5], [1, 2, 2, 1], "SAME"),
    "tr_valid_s1": tf.nn.conv2d_transpose(X4, F_T, [2, 5, 5, 5], [1, 1, 1, 1], "VALID"),
    "tr_valid_s2": tf.nn.conv2d_transpose(X4, F_T, [2, 7, 8, 5], [1, 2, 2, 1], "VALID"),
    "c1_same_s2": tf.nn.conv1d(tf.constant(x1), tf.constant(f1), 2, "SAME"),
    "c1_valid_d2": tf.nn.conv1d(tf.constant(x1), tf.constant(f1), 1, "VALID", dilations=2),
    "atrous2_same": tf.nn.atrous_conv2d(tf.constant(xa), tf.constant(fa), 2, "SAME"),
    "atrous3_valid": tf.nn.atrous_conv2d(tf.constant(xa), tf.constant(fa), 3, "VALID"),
    "sep_same": tf.nn.separable_conv2d(XS, DW, PW, [1, 1, 1, 1], "SAME"),
    "sep_s2_valid": tf.nn.separable_conv2d(XS, DW, PW, [1, 2, 2, 1], "VALID"),
    "sep_rate2": tf.nn.separable_conv2d(XS, DW, PW, [1, 1, 1, 1], "SAME", rate=[2, 2]),
}
for k in ["tr_same_s2", "tr_valid_s2"]:  # gradients of a weighted sum
    shape = out[k].shape.as_list()
    w = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(np.float32)
    out[k + "_gx"], out[k + "_gf"] = tf.gradients(tf.reduce_sum(out[k] * w), [X4, F_T])
with tf.Session() as s:
    res = s.run(out)
inputs = dict(x4=x4, f_t=f_t, x1=x1, f1=f1, xa=xa, fa=fa, xs=xs, dw=dw, pw=pw)
np.savez_compressed(os.environ.get("OUT_NPZ", "tf_conv_family.npz"),
                    **{"in_" + k: v for k, v in inputs.items()}, **res)
for k in sorted(res):
    print(k, res[k].shape, float(np.sum(res[k])))
