"""tf.nn.conv2d_transpose, conv1d, atrous_conv2d, separable_conv2d and tf.norm: values
from TensorFlow 2.15 (tests/ops/data/tf_conv_family.py, run once with the tf-oracle),
NumPy identities, finite-difference gradients and error messages."""

import pathlib

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf

DATA = np.load(pathlib.Path(__file__).parent / "data" / "tf_conv_family.npz")
RNG = np.random.default_rng(0)


def _c(name):
    return tf.constant(DATA["in_" + name])


def test_values_and_gradients_match_tensorflow(sess):
    x4, f_t = _c("x4"), _c("f_t")
    out = {
        "tr_same_s2": tf.nn.conv2d_transpose(x4, f_t, [2, 6, 8, 5], [1, 2, 2, 1], "SAME"),
        "tr_same_s2_odd": tf.nn.conv2d_transpose(x4, f_t, [2, 5, 7, 5], [1, 2, 2, 1],
                                                 "SAME"),
        "tr_valid_s1": tf.nn.conv2d_transpose(x4, f_t, [2, 5, 5, 5], [1, 1, 1, 1], "VALID"),
        "tr_valid_s2": tf.nn.conv2d_transpose(x4, f_t, [2, 7, 8, 5], [1, 2, 2, 1], "VALID"),
        "c1_same_s2": tf.nn.conv1d(_c("x1"), _c("f1"), 2, "SAME"),
        "c1_valid_d2": tf.nn.conv1d(_c("x1"), _c("f1"), 1, "VALID", dilations=2),
        "atrous2_same": tf.nn.atrous_conv2d(_c("xa"), _c("fa"), 2, "SAME"),
        "atrous3_valid": tf.nn.atrous_conv2d(_c("xa"), _c("fa"), 3, "VALID"),
        "sep_same": tf.nn.separable_conv2d(_c("xs"), _c("dw"), _c("pw"), [1, 1, 1, 1],
                                           "SAME"),
        "sep_s2_valid": tf.nn.separable_conv2d(_c("xs"), _c("dw"), _c("pw"), [1, 2, 2, 1],
                                               "VALID"),
        "sep_rate2": tf.nn.separable_conv2d(_c("xs"), _c("dw"), _c("pw"), [1, 1, 1, 1],
                                            "SAME", rate=[2, 2]),
    }
    for key in ("tr_same_s2", "tr_valid_s2"):
        shape = out[key].shape.as_list()
        w = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(np.float32)
        out[key + "_gx"], out[key + "_gf"] = tf.gradients(tf.reduce_sum(out[key] * w),
                                                          [x4, f_t])
    got = sess.run(out)
    for key, value in got.items():
        assert out[key].shape.as_list() == list(DATA[key].shape), key
        np.testing.assert_allclose(value, DATA[key], rtol=1e-4, atol=1e-4, err_msg=key)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("padding,strides,out_hw", [("SAME", 2, (7, 6)), ("VALID", 2, (8, 7)),
                                                    ("VALID", 1, (5, 4))])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(sess, fmt, padding, strides, out_hw):
    """<conv2d(y, f), x> == <y, conv2d_transpose(x, f)> for every x, y."""
    f = RNG.standard_normal((3, 2, 4, 3))
    y = RNG.standard_normal((2, *out_hw, 4))
    if fmt == "NCHW":
        y = y.transpose(0, 3, 1, 2)
    conv = tf.nn.conv2d(y, f, strides, padding, data_format=fmt)
    x = RNG.standard_normal(conv.shape.as_list())
    tr = tf.nn.conv2d_transpose(x, f, list(y.shape), strides, padding, data_format=fmt)
    assert tr.shape.as_list() == list(y.shape)
    conv_v, tr_v = sess.run([conv, tr])
    assert np.sum(conv_v * x) == pytest.approx(np.sum(y * tr_v), rel=1e-9)


def test_conv2d_transpose_gradients_by_finite_differences():
    f = RNG.standard_normal((3, 3, 2, 3))
    x = RNG.standard_normal((2, 3, 2, 3))
    check_gradient(lambda a, b: tf.nn.conv2d_transpose(a, b, [2, 6, 4, 2], [1, 2, 2, 1],
                                                       "SAME"), [x, f])
    check_gradient(lambda a, b: tf.nn.conv2d_transpose(a, b, [2, 7, 5, 2], 2, "VALID"),
                   [x, f])


def test_conv1d_atrous_separable_gradients_by_finite_differences():
    check_gradient(lambda a, b: tf.nn.conv1d(a, b, 2, "SAME"),
                   [RNG.standard_normal((2, 7, 3)), RNG.standard_normal((3, 3, 2))])
    check_gradient(lambda a, b: tf.nn.atrous_conv2d(a, b, 2, "SAME"),
                   [RNG.standard_normal((1, 6, 5, 2)), RNG.standard_normal((2, 2, 2, 2))])
    check_gradient(lambda a, b, c: tf.nn.separable_conv2d(a, b, c, [1, 1, 1, 1], "VALID"),
                   [RNG.standard_normal((1, 5, 4, 2)), RNG.standard_normal((2, 2, 2, 2)),
                    RNG.standard_normal((1, 1, 4, 3))])


def test_conv1d_ncw_equals_nwc(sess):
    x = RNG.standard_normal((2, 9, 3))
    f = RNG.standard_normal((3, 3, 4))
    nwc = tf.nn.conv1d(x, f, 2, "SAME")
    ncw = tf.nn.conv1d(x.transpose(0, 2, 1), f, 2, "SAME", data_format="NCW")
    a, b = sess.run([nwc, ncw])
    np.testing.assert_allclose(a, b.transpose(0, 2, 1), rtol=1e-12)


def test_conv2d_transpose_runtime_output_shape(sess):
    x = tf.placeholder(tf.float32, [None, 3, 4, 3])
    f = tf.constant(DATA["in_f_t"])
    out_shape = tf.stack([tf.shape(x)[0], 6, 8, 5])
    y = tf.nn.conv2d_transpose(x, f, out_shape, [1, 2, 2, 1])
    assert y.shape.as_list() == [None, 6, 8, 5]
    assert sess.run(y, {x: DATA["in_x4"]}).shape == (2, 6, 8, 5)


def test_errors_name_the_problem():
    x = tf.zeros([1, 3, 3, 2])
    with pytest.raises(ValueError, match="must match the filter's last dimension"):
        tf.nn.conv2d_transpose(x, tf.zeros([2, 2, 4, 3]), [1, 6, 6, 4], 2)
    with pytest.raises(ValueError, match=r"output_shape\[3\] = 5 must match"):
        tf.nn.conv2d_transpose(x, tf.zeros([2, 2, 4, 2]), [1, 6, 6, 5], 2)
    with pytest.raises(ValueError, match="rate 0 cannot be less than one"):
        tf.nn.atrous_conv2d(x, tf.zeros([2, 2, 2, 1]), 0, "SAME")
    with pytest.raises(ValueError, match="in_channels \\* multiplier"):
        tf.nn.separable_conv2d(x, tf.zeros([2, 2, 2, 2]), tf.zeros([1, 1, 3, 1]), [1] * 4,
                               "SAME")
    with pytest.raises(ValueError, match="data_format must be 'NWC' or 'NCW'"):
        tf.nn.conv1d(tf.zeros([1, 4, 2]), tf.zeros([2, 2, 1]), 1, "SAME", data_format="NHW")


def test_conv2d_transpose_wrong_output_shape_fails_at_run_time(sess):
    y = tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 2]), tf.zeros([2, 2, 4, 2]),
                               tf.constant([1, 9, 9, 4]), 2)
    with pytest.raises(Exception, match=r"(?i)conv"):
        sess.run(y)


# -- tf.norm --------------------------------------------------------------------------
X = np.array([[[1., -2., 3.], [4., 5., -6.]], [[0.5, 0., -1.], [2., 2., 2.]]], np.float32)
NORMS = [  # (ord, axis, TensorFlow 2.15's result)
    ("euclidean", None, 10.2103),
    ("euclidean", -1, [[3.7417, 8.775], [1.118, 3.4641]]),
    ("euclidean", (1, 2), [9.5394, 3.6401]),
    ("fro", [0, 2], [3.9051, 9.434]),
    (1, None, 28.5),
    (1, 0, [[1.5, 2.0, 4.0], [6.0, 7.0, 8.0]]),
    (1, (1, 2), [9.0, 3.0]),
    (1, (-1, -2), [15.0, 6.0]),
    (2, 0, [[1.118, 2.0, 3.1623], [4.4721, 5.3852, 6.3246]]),
    (np.inf, None, 6.0),
    (np.inf, -1, [[3.0, 6.0], [1.0, 2.0]]),
    (np.inf, (1, 2), [15.0, 6.0]),
    (np.inf, [0, 2], [6.0, 15.0]),
    (3, None, 7.7536),
    (0.5, -1, [[17.1915, 44.6967], [2.9142, 18.0]]),
]


@pytest.mark.parametrize("ord,axis,expected", NORMS)
def test_norm_matches_tensorflow(sess, ord, axis, expected):
    got = tf.norm(X, ord=ord, axis=axis)
    kept = tf.linalg.norm(X, ord=ord, axis=axis, keepdims=True)
    expected = np.asarray(expected, np.float32)
    assert got.shape.as_list() == list(expected.shape)
    g, k = sess.run([got, kept])
    np.testing.assert_allclose(g, expected, rtol=2e-4)
    assert k.ndim == 3 and k.size == expected.size
    np.testing.assert_allclose(k.reshape(-1), expected.reshape(-1), rtol=2e-4)


def test_norm_gradients_by_finite_differences():
    x = RNG.standard_normal((3, 4)) + 0.1
    for ord, axis in (("euclidean", None), (1, (0, 1)), (np.inf, (0, 1)), (3, 1),
                      ("fro", (0, 1)), (np.inf, 0)):
        check_gradient(lambda a, o=ord, ax=axis: tf.norm(a, ord=o, axis=ax), [x])


def test_norm_errors_match_tf1():
    with pytest.raises(ValueError, match="supported vector norm"):
        tf.norm(X, ord="fro", axis=1)
    with pytest.raises(ValueError, match="supported matrix norm"):
        tf.norm(X, ord=2, axis=(1, 2))  # TF 1.x has no spectral norm
    with pytest.raises(ValueError, match="supported vector norm"):
        tf.norm(X, ord=-1)
    with pytest.raises(ValueError, match="tuple of 2 unique integers"):
        tf.norm(X, axis=(0, 1, 2))
    with pytest.raises(ValueError, match="out of range"):
        tf.norm(X, axis=3)
