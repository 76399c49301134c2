"""tf.layers conv1d/conv2d and pooling: NumPy references, shapes, naming, fans."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.layers import convolutional


def _conv2d_ref(x, k, stride=(1, 1), dilation=(1, 1)):
    """VALID NHWC cross-correlation."""
    kh, kw = k.shape[:2]
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh = (x.shape[1] - eh) // stride[0] + 1
    ow = (x.shape[2] - ew) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0]:i * stride[0] + eh:dilation[0],
                      j * stride[1]:j * stride[1] + ew:dilation[1], :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=[[1, 2, 3], [0, 1, 2]])
    return out


def test_conv2d_reference_shapes_and_names(sess):
    x = tf.placeholder(tf.float32, [None, 7, 9, 3])
    y = tf.layers.conv2d(x, 4, (2, 3), strides=(2, 1), activation=tf.nn.relu,
                         bias_initializer=tf.constant_initializer(0.1))
    assert y.shape.as_list() == [None, 3, 7, 4] and y.name == "conv2d/Relu:0"
    assert [v.name for v in tf.global_variables()] == ["conv2d/kernel:0", "conv2d/bias:0"]
    sess.run(tf.global_variables_initializer())
    k, b = sess.run(tf.global_variables())
    assert k.shape == (2, 3, 3, 4)
    xv = np.random.RandomState(0).randn(2, 7, 9, 3).astype(np.float32)
    ref = np.maximum(_conv2d_ref(xv, k, (2, 1)) + b, 0)
    np.testing.assert_allclose(sess.run(y, {x: xv}), ref, rtol=1e-4, atol=1e-5)


def test_conv2d_same_dilation_channels_first(sess):
    x = tf.placeholder(tf.float32, [None, 7, 9, 3])
    same = tf.layers.conv2d(x, 5, 3, padding="SAME", strides=2, use_bias=False)
    dil = tf.layers.conv2d(x, 2, 3, dilation_rate=2, use_bias=False)
    assert same.shape.as_list() == [None, 4, 5, 5]
    assert dil.shape.as_list() == [None, 3, 5, 2]
    xc = tf.placeholder(tf.float32, [None, 3, 7, 9])
    cf = tf.layers.conv2d(xc, 4, 3, data_format="channels_first")
    assert cf.shape.as_list() == [None, 4, 5, 7]
    sess.run(tf.global_variables_initializer())
    xv = np.random.RandomState(1).randn(2, 7, 9, 3).astype(np.float32)
    kd = sess.run(tf.global_variables()[1])
    np.testing.assert_allclose(sess.run(dil, {x: xv}), _conv2d_ref(xv, kd, dilation=(2, 2)),
                               rtol=1e-4, atol=1e-5)
    kc, bc = sess.run(tf.global_variables()[2:])
    got = sess.run(cf, {xc: xv.transpose(0, 3, 1, 2)})
    ref = _conv2d_ref(xv, kc) + bc
    np.testing.assert_allclose(got, ref.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5)


def test_conv_kernel_glorot_uses_receptive_field():
    tf.layers.conv2d(tf.placeholder(tf.float32, [None, 8, 8, 16]), 32, 3)
    k = tf.global_variables()[0]
    with tf.Session() as sess:
        sess.run(k.initializer)
        kv = sess.run(k)
    limit = np.sqrt(6 / (9 * 16 + 9 * 32))
    assert np.abs(kv).max() <= limit and np.abs(kv).max() > 0.9 * limit


def test_conv1d_reference_and_causal(sess):
    x = tf.placeholder(tf.float32, [None, 10, 3])
    y = tf.layers.conv1d(x, 4, 3, dilation_rate=2)
    c = tf.layers.conv1d(x, 2, 3, padding="causal", use_bias=False)
    assert y.shape.as_list() == [None, 6, 4] and c.shape.as_list() == [None, 10, 2]
    assert y.op.name == "conv1d/BiasAdd"
    sess.run(tf.global_variables_initializer())
    k, b, kc = sess.run(tf.global_variables())
    xv = np.random.RandomState(2).randn(2, 10, 3).astype(np.float32)
    ref = _conv2d_ref(xv[:, None], k[None], dilation=(1, 2))[:, 0] + b
    np.testing.assert_allclose(sess.run(y, {x: xv}), ref, rtol=1e-4, atol=1e-5)
    padded = np.pad(xv, [(0, 0), (2, 0), (0, 0)])
    ref_c = _conv2d_ref(padded[:, None], kc[None])[:, 0]
    np.testing.assert_allclose(sess.run(c, {x: xv}), ref_c, rtol=1e-4, atol=1e-5)


def test_conv_reuse_and_regularizer():
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    tf.layers.conv2d(x, 3, 2, name="c", kernel_regularizer=tf.contrib.layers.l2_regularizer(1.0))
    tf.layers.conv2d(x, 3, 2, name="c", reuse=True)
    assert len(tf.global_variables()) == 2
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.conv2d(x, 3, 2, name="c")


def test_conv_argument_errors():
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    with pytest.raises(ValueError, match="padding"):
        tf.layers.conv2d(x, 3, 2, padding="full")
    with pytest.raises(ValueError, match="kernel_size"):
        tf.layers.conv2d(x, 3, (2, 2, 2))
    with pytest.raises(ValueError, match="data_format"):
        tf.layers.conv2d(x, 3, 2, data_format="NHWC")
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        tf.layers.conv2d(tf.ones([2, 5, 2]), 3, 2)
    with pytest.raises(ValueError, match="channel dimension"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 5, 5, None]), 3, 2)


def test_pooling_reference(sess):
    xv = np.random.RandomState(3).randn(2, 5, 7, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 7, 3])
    mp = tf.layers.max_pooling2d(x, 2, 2)
    ap = tf.layers.average_pooling2d(x, (2, 3), (1, 2), padding="same")
    assert mp.shape.as_list() == [None, 2, 3, 3] and mp.op.name == "max_pooling2d/MaxPool"
    assert ap.shape.as_list() == [None, 5, 4, 3] and ap.op.name == "average_pooling2d/AvgPool"
    ref = xv[:, :4, :6].reshape(2, 2, 2, 3, 2, 3).max(axis=(2, 4))
    np.testing.assert_allclose(sess.run(mp, {x: xv}), ref)
    out = sess.run(ap, {x: xv})
    # SAME with window 2x3, stride (1, 2): rows pad 0 before/1 after, cols 1 before/1 after
    np.testing.assert_allclose(out[:, 0, 0], xv[:, 0:2, 0:2].mean(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_allclose(out[:, 4, 3], xv[:, 4:5, 5:7].mean(axis=(1, 2)), rtol=1e-5)


def test_pooling1d(sess):
    xv = np.random.RandomState(4).randn(2, 9, 3).astype(np.float32)
    mp = tf.layers.max_pooling1d(tf.constant(xv), 2, 2)
    ap = tf.layers.average_pooling1d(tf.constant(xv), 3, 3)
    cf = tf.layers.max_pooling1d(tf.constant(xv.transpose(0, 2, 1)), 2, 2,
                                 data_format="channels_first")
    np.testing.assert_allclose(sess.run(mp), xv[:, :8].reshape(2, 4, 2, 3).max(axis=2))
    np.testing.assert_allclose(sess.run(ap), xv.reshape(2, 3, 3, 3).mean(axis=2), rtol=1e-5)
    np.testing.assert_allclose(sess.run(cf).transpose(0, 2, 1),
                               xv[:, :8].reshape(2, 4, 2, 3).max(axis=2))
    with pytest.raises(ValueError, match="expected ndim=3"):
        tf.layers.max_pooling1d(tf.ones([2, 3]), 2, 2)


def test_docstring_examples():
    result = doctest.testmod(convolutional, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
