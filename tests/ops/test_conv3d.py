"""tf.nn.conv3d / conv3d_transpose / max_pool3d / avg_pool3d (TF's Conv3D, MaxPool3D, ... ops)
and the tf.layers 3-D and 1-D separable layers: TensorFlow 2.15's values and gradients
(tests/ops/data/tf_conv3d.py, run once with the tf-oracle), finite differences, a
nested-loop NumPy reference, shapes and errors; plus tf.linalg's small helpers."""

import pathlib

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf

DATA = np.load(pathlib.Path(__file__).parent / "data" / "tf_conv3d.npz")
RNG = np.random.default_rng(0)


def test_values_and_gradients_match_tensorflow(sess):
    x, f, ft, p = (tf.constant(DATA["in_" + k]) for k in ("x", "f", "ft", "p"))
    out = {
        "c3_same_s2": tf.nn.conv3d(x, f, [1, 2, 2, 1, 1], "SAME"),
        "c3_valid_s1": tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "VALID"),
        "c3_valid_d2": tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "VALID",
                                    dilations=[1, 2, 1, 1, 1]),
        "t3_same_s2": tf.nn.conv3d_transpose(x, ft, [2, 10, 12, 8, 4], [1, 2, 2, 2, 1],
                                             "SAME"),
        "t3_valid_s1": tf.nn.conv3d_transpose(x, ft, [2, 6, 8, 5, 4], [1, 1, 1, 1, 1],
                                              "VALID"),
        "mp_same": tf.nn.max_pool3d(p, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
        "mp_valid": tf.nn.max_pool3d(p, [1, 3, 2, 2, 1], [1, 1, 2, 3, 1], "VALID"),
        "ap_same": tf.nn.avg_pool3d(p, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
        "ap_valid": tf.nn.avg_pool3d(p, [1, 3, 2, 2, 1], [1, 1, 2, 3, 1], "VALID"),
    }
    for k, wrt in (("c3_same_s2", [x, f]), ("t3_same_s2", [x, ft]), ("mp_same", [p]),
                   ("ap_same", [p])):
        shape = out[k].shape.as_list()
        w = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(np.float32)
        for j, g in enumerate(tf.gradients(tf.reduce_sum(out[k] * w), wrt)):
            out[f"{k}_g{j}"] = g
    got = sess.run(out)
    for key, value in got.items():
        assert out[key].shape.as_list() == list(DATA[key].shape), key
        np.testing.assert_allclose(value, DATA[key], rtol=1e-4, atol=1e-4, err_msg=key)


def _conv3d_ref(x, f, s):
    """VALID NDHWC cross-correlation with strides `s`, plain loops."""
    kd, kh, kw = f.shape[:3]
    od, oh, ow = ((n - k) // st + 1 for n, k, st in zip(x.shape[1:4], (kd, kh, kw), s))
    out = np.zeros((x.shape[0], od, oh, ow, f.shape[4]))
    for a in range(od):
        for b in range(oh):
            for c in range(ow):
                patch = x[:, a * s[0]:a * s[0] + kd, b * s[1]:b * s[1] + kh,
                          c * s[2]:c * s[2] + kw]
                out[:, a, b, c] = np.tensordot(patch, f, axes=[[1, 2, 3, 4], [0, 1, 2, 3]])
    return out


def test_conv3d_matches_loop_reference_and_ncdhw(sess):
    x = RNG.standard_normal((2, 5, 4, 6, 3))
    f = RNG.standard_normal((2, 3, 2, 3, 2))
    y = tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "VALID")
    y_ncdhw = tf.nn.conv3d(x.transpose(0, 4, 1, 2, 3), f, [1, 1, 2, 1, 2], "VALID",
                           data_format="NCDHW")
    a, b = sess.run([y, y_ncdhw])
    ref = _conv3d_ref(x, f, (2, 1, 2))
    np.testing.assert_allclose(a, ref, rtol=1e-10)
    np.testing.assert_allclose(b.transpose(0, 2, 3, 4, 1), ref, rtol=1e-10)


def test_gradients_by_finite_differences():
    x = RNG.standard_normal((1, 4, 3, 3, 2))
    f = RNG.standard_normal((2, 2, 2, 2, 2))
    check_gradient(lambda a, b: tf.nn.conv3d(a, b, [1, 2, 1, 1, 1], "SAME"), [x, f])
    check_gradient(lambda a, b: tf.nn.conv3d_transpose(a, b, [1, 5, 4, 4, 2], 1, "VALID"),
                   [x, f])
    check_gradient(lambda a: tf.nn.avg_pool3d(a, 2, 2, "SAME"), [x])
    check_gradient(lambda a: tf.nn.max_pool3d(a, 2, 1, "VALID"), [x])


def test_unknown_batch_height_width_but_known_depth(sess):
    x = tf.placeholder(tf.float32, [None, 4, None, None, 2])
    y = tf.nn.conv3d(x, tf.ones([2, 2, 2, 2, 3]), [1, 1, 1, 1, 1], "SAME")
    assert y.shape.as_list() == [None, 4, None, None, 3]
    assert sess.run(y, {x: np.ones((3, 4, 5, 6, 2))}).shape == (3, 4, 5, 6, 3)


def test_unknown_depth_runs_as_tensorflow(sess):
    x = tf.placeholder(tf.float32, [1, None, 4, 4, 1])
    y = tf.nn.conv3d(x, tf.ones([2, 2, 2, 1, 1]), 1, "VALID")
    assert y.op.type == "Conv3D" and y.shape.as_list() == [1, None, 3, 3, 1]
    assert sess.run(y, {x: np.ones((1, 5, 4, 4, 1))}).shape == (1, 4, 3, 3, 1)


def test_errors():
    with pytest.raises(ValueError, match="does not match the filter's in_channels"):
        tf.nn.conv3d(tf.ones([1, 3, 3, 3, 2]), tf.ones([2, 2, 2, 3, 1]), 1, "VALID")
    with pytest.raises(ValueError, match="batch and channel"):
        tf.nn.conv3d(tf.ones([1, 3, 3, 3, 1]), tf.ones([2, 2, 2, 1, 1]), [2, 1, 1, 1, 1],
                     "VALID")
    with pytest.raises(ValueError, match="does not match value's shape"):
        tf.nn.conv3d_transpose(tf.ones([1, 2, 2, 2, 1]), tf.ones([2, 2, 2, 1, 1]),
                               [1, 9, 9, 9, 1], 2)


def test_layers_3d_and_separable_1d(sess):
    x = tf.placeholder(tf.float32, [None, 6, 7, 8, 2])
    h = tf.layers.conv3d(x, 3, (3, 2, 2), strides=2, activation=tf.nn.relu)
    t = tf.layers.conv3d_transpose(h, 2, 3, strides=2, padding="same")
    m = tf.layers.max_pooling3d(x, 2, 2)
    a = tf.layers.average_pooling3d(x, 3, 2, padding="same")
    s = tf.layers.separable_conv1d(tf.placeholder(tf.float32, [None, 10, 3]), 4, 3,
                                   depth_multiplier=2, padding="causal")
    assert h.shape.as_list() == [None, 2, 3, 4, 3]
    assert t.shape.as_list() == [None, 4, 6, 8, 2]
    assert m.shape.as_list() == [None, 3, 3, 4, 2]
    assert a.shape.as_list() == [None, 3, 4, 4, 2]
    assert s.shape.as_list() == [None, 10, 4]
    shapes = {v.name: v.shape.as_list() for v in tf.global_variables()}
    assert shapes == {
        "conv3d/kernel:0": [3, 2, 2, 2, 3], "conv3d/bias:0": [3],
        "conv3d_transpose/kernel:0": [3, 3, 3, 2, 3], "conv3d_transpose/bias:0": [2],
        "separable_conv1d/depthwise_kernel:0": [3, 3, 2],
        "separable_conv1d/pointwise_kernel:0": [1, 6, 4], "separable_conv1d/bias:0": [4]}
    sess.run(tf.global_variables_initializer())
    kernel, bias = sess.run(["conv3d/kernel:0", "conv3d/bias:0"])
    xv = RNG.standard_normal((2, 6, 7, 8, 2)).astype(np.float32)
    got = sess.run(h, {x: xv})
    np.testing.assert_allclose(got, np.maximum(_conv3d_ref(xv, kernel, (2, 2, 2)) + bias, 0),
                               rtol=1e-4, atol=1e-5)


def test_conv3d_transpose_layer_unknown_sizes(sess):
    x = tf.placeholder(tf.float32, [None, 2, None, None, 3])
    y = tf.layers.conv3d_transpose(x, 2, 2, strides=2)
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {x: np.ones((1, 2, 3, 4, 3))}).shape == (1, 4, 6, 8, 2)


# -- tf.linalg helpers -------------------------------------------------------------------
def test_linalg_helpers(sess):
    a = RNG.standard_normal((2, 3, 4))
    v = RNG.standard_normal((2, 4))
    got = sess.run({"t": tf.linalg.matrix_transpose(a), "t2": tf.matrix_transpose(a),
                    "mv": tf.linalg.matvec(a, v), "eye": tf.eye(2, 3, batch_shape=[2]),
                    "l2": tf.linalg.l2_normalize(v, axis=1)})
    np.testing.assert_array_equal(got["t"], a.transpose(0, 2, 1))
    np.testing.assert_array_equal(got["t2"], a.transpose(0, 2, 1))
    np.testing.assert_allclose(got["mv"], np.einsum("bij,bj->bi", a, v))
    np.testing.assert_array_equal(got["eye"], np.broadcast_to(np.eye(2, 3), (2, 2, 3)))
    np.testing.assert_allclose(got["l2"], v / np.linalg.norm(v, axis=1, keepdims=True))
    assert tf.linalg.transpose is tf.linalg.matrix_transpose
    with pytest.raises(ValueError, match="known rank of at least 2"):
        tf.linalg.matrix_transpose(tf.zeros([3]))
