"""Writes tf_nn_extra.npz: inputs and TensorFlow 2.15 results of the tf.nn helpers in
flowgraph/ops/nn_extra_ops.py. Run once with the tf-oracle:
``/work/shared/tools/tf-oracle tests/ops/data/tf_nn_extra.py`` (from this folder)."""

import importlib
import os

import numpy as np

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()
rng = np.random.RandomState(5)


def r(*shape):
    return rng.randn(*shape).astype(np.float32)


x4, w, b = r(2, 4, 6, 8), r(8, 3), r(3)
x2 = r(5, 8)
fw = np.abs(r(2, 4, 6, 1))
scale, offset = r(8), r(8)
mean_in, var_in = r(8), np.abs(r(8)) + 0.5
x1, f1 = r(2, 5, 3), r(3, 4, 3)
xd, fd, fd_t = r(2, 4, 5, 3), r(3, 3, 3, 2), r(3, 3, 2, 3)
X4, X2 = tf.constant(x4), tf.constant(x2)
out = {
    "xw_plus_b": tf.nn.xw_plus_b(X2, w, b),
    "relu_layer": tf.nn.relu_layer(X2, w, b),
    "swish": tf.nn.swish(X2),
    "crelu": tf.nn.crelu(X2),
    "zero_fraction": tf.nn.zero_fraction(tf.nn.relu(X2)),
    "lrn": tf.nn.lrn(X4, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75),
    "lrn_default": tf.nn.local_response_normalization(X4),
    "d2s": tf.nn.depth_to_space(X4, 2),
    "s2d": tf.nn.space_to_depth(X4, 2),
    "s2d_top": tf.space_to_depth(X4, 2),
    "maxpool1d": tf.nn.max_pool1d(tf.constant(x1), 2, 1, "VALID"),
    "avgpool1d": tf.nn.avg_pool1d(tf.constant(x1), 3, 2, "SAME"),
    "maxpool_v2": tf.nn.max_pool_v2(X4, 2, 2, "SAME"),
    "pool_avg": tf.nn.pool(X4, [2, 3], "AVG", "VALID", strides=[2, 1]),
    "conv1d_t": tf.nn.conv1d_transpose(tf.constant(x1), tf.constant(f1), [2, 10, 4], 2),
    "atrous_t": tf.nn.atrous_conv2d_transpose(tf.constant(xd), tf.constant(fd_t),
                                              [2, 4, 5, 2], 2, "SAME"),
    "dw_bp_in": tf.nn.depthwise_conv2d_backprop_input(
        [2, 4, 5, 3], tf.constant(fd), tf.constant(r(2, 4, 5, 6)), [1, 1, 1, 1], "SAME"),
    "dw_bp_f": tf.nn.depthwise_conv2d_native_backprop_filter(
        tf.constant(xd), [3, 3, 3, 2], tf.constant(r(2, 2, 3, 6)), [1, 1, 1, 1], "VALID"),
    "bn_global": tf.nn.batch_norm_with_global_normalization(
        X4, mean_in, var_in, offset, scale, 0.01, True),
    "avg_loss": tf.nn.compute_average_loss(tf.constant(r(6)), global_batch_size=8),
    "avg_loss_w": tf.nn.compute_average_loss(tf.constant(r(6)), sample_weight=r(6)),
    "scale_reg": tf.nn.scale_regularization_loss(tf.constant(2.5)),
}
y, bm, bv = tf.nn.fused_batch_norm(X4, scale, offset, epsilon=0.001)
out.update(fbn_y=y, fbn_mean=bm, fbn_var=bv)
y2, m2, v2 = tf.nn.fused_batch_norm(X4, scale, offset, mean_in, var_in, is_training=False)
out["fbn_inf_y"] = y2  # (TF's constant folding breaks fetching m2, v2)
y3, _, _ = tf.nn.fused_batch_norm(tf.transpose(X4, [0, 3, 1, 2]), scale, offset,
                                  data_format="NCHW")
out["fbn_nchw"] = y3
c, mss, vss, sh = tf.nn.sufficient_statistics(X4, [0, 1, 2])
out.update(ss_count=c, ss_mean=mss, ss_var=vss)
c2, mss2, vss2, sh2 = tf.nn.sufficient_statistics(X4, [0, 2], shift=0.5, keepdims=True)
out.update(ss2_count=c2, ss2_mean=mss2, ss2_var=vss2, ss2_shift=sh2)
out["nm_mean"], out["nm_var"] = tf.nn.normalize_moments(c2, mss2, vss2, sh2)
out["wm_mean"], out["wm_var"] = tf.nn.weighted_moments(X4, [1, 2], fw)
out["wm_mean_k"], out["wm_var_k"] = tf.nn.weighted_moments(X4, [0, 1, 2], fw, keepdims=True)
vals, idx = tf.nn.approx_max_k(X2, 3)
out.update(amax_v=vals, amax_i=idx)
for k in ("lrn", "d2s", "crelu", "swish"):
    src = X4 if k in ("lrn", "d2s") else X2
    shape = out[k].shape.as_list()
    wt = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(np.float32)
    out[k + "_grad"] = tf.gradients(tf.reduce_sum(out[k] * wt), src)[0]
with tf.Session() as s:
    res = s.run(out)
np.savez_compressed(os.environ.get("OUT_NPZ", "tf_nn_extra.npz"), in_x4=x4, in_x2=x2,
                    in_w=w, in_b=b, **res)
for k in sorted(res):
    print(k, np.shape(res[k]), float(np.sum(res[k])))
