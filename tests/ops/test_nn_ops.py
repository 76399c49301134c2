"""tf.nn activations, softmax, bias_add and l2_normalize against NumPy references."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.errors import InvalidArgumentError

RNG = np.random.default_rng(1)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.minimum(np.maximum(x, 0), 6),
    "elu": lambda x: np.where(x < 0, np.exp(x) - 1, x),
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1)),
    "softplus": lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.2 * x),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_activation_matches_numpy(sess, name, dtype):
    x = (RNG.standard_normal((3, 5)) * 4).astype(dtype)
    x[0, :3] = [0.0, 7.5, -30.0]
    y = getattr(tf.nn, name)(x)
    out = sess.run(y)
    assert out.dtype == dtype and y.dtype == tf.as_dtype(dtype)
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(out, ACTIVATIONS[name](x.astype(np.float64)), rtol=tol,
                               atol=tol)


def test_activation_tf_values(sess):
    # Printed by TensorFlow 2.15 (tf-oracle).
    np.testing.assert_allclose(sess.run(tf.nn.selu([-2.0, -0.5, 0.0, 1.5])),
                               [-1.5201665, -0.6917582, 0.0, 1.5760515], rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.nn.elu([-1.0, 0.0, 2.0])), [-0.63212055, 0, 2])
    np.testing.assert_allclose(sess.run(tf.nn.softplus([-100.0, 0.0, 100.0])),
                               [0.0, 0.6931472, 100.0], rtol=1e-6, atol=1e-30)


def test_activation_shapes_and_op_types():
    x = tf.placeholder(tf.float32, [None, 3])
    for name, op_type in [("relu", "Relu"), ("relu6", "Relu6"), ("elu", "Elu"),
                          ("selu", "Selu"), ("softplus", "Softplus"),
                          ("softsign", "Softsign"), ("leaky_relu", "LeakyRelu")]:
        y = getattr(tf.nn, name)(x)
        assert y.op.type == op_type and y.shape.as_list() == [None, 3]
    assert tf.nn.relu(tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.nn.relu(x, name="act").op.name == "act"


def test_integer_activations(sess):
    ints = np.array([-3, 2, 9], np.int32)
    np.testing.assert_array_equal(sess.run(tf.nn.relu(ints)), [0, 2, 9])
    np.testing.assert_array_equal(sess.run(tf.nn.relu6(ints)), [0, 2, 6])
    leaky = tf.nn.leaky_relu(ints, alpha=0.5)
    assert leaky.dtype == tf.float32  # as in TensorFlow: integers are cast to float32
    np.testing.assert_array_equal(sess.run(leaky), [-1.5, 2.0, 9.0])
    for fn in (tf.nn.elu, tf.nn.selu, tf.nn.softplus, tf.nn.softsign):
        with pytest.raises(TypeError, match="int32 not in list of allowed values"):
            fn(ints)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
def test_softmax_and_log_softmax(sess, axis):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32) * 30  # large: needs the shift
    ref = _softmax(x.astype(np.float64), axis)
    out, log_out = sess.run([tf.nn.softmax(x, axis=axis), tf.nn.log_softmax(x, axis=axis)])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(log_out, np.log(ref), rtol=1e-5, atol=1e-4)
    assert out.dtype == log_out.dtype == np.float32


def test_softmax_dim_alias_and_errors(sess):
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    np.testing.assert_allclose(sess.run(tf.nn.softmax(x, dim=0)), _softmax(x, 0), rtol=1e-6)
    y = tf.nn.softmax(tf.placeholder(tf.float64, [None, 5]))
    assert y.shape.as_list() == [None, 5] and y.dtype == tf.float64 and y.op.type == "Softmax"
    with pytest.raises(ValueError, match="both"):
        tf.nn.softmax(x, axis=0, dim=0)
    with pytest.raises(InvalidArgumentError, match=r"range \[-2, 2\)"):
        tf.nn.softmax(x, axis=2)
    with pytest.raises(ValueError, match="rank at least 1"):
        tf.nn.log_softmax(tf.constant(1.0))
    with pytest.raises(TypeError, match="int32"):
        tf.nn.softmax(tf.constant([1, 2]))


@pytest.mark.parametrize("data_format,shape,channel", [
    (None, (2, 3), -1), ("NHWC", (2, 4, 3, 5), -1), ("NCHW", (2, 5, 4, 3), 1),
    ("NWC", (2, 4, 5), -1), ("NCW", (2, 5, 4), 1)])
def test_bias_add(sess, data_format, shape, channel):
    x = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(shape[channel]).astype(np.float32)
    bshape = [1] * len(shape)
    bshape[channel] = -1
    out = sess.run(tf.nn.bias_add(x, b, data_format=data_format))
    np.testing.assert_allclose(out, x + b.reshape(bshape), rtol=1e-6)
    assert out.dtype == np.float32


def test_bias_add_shapes_and_errors(sess):
    v = tf.placeholder(tf.float32, [None, 4])
    y = tf.nn.bias_add(v, [1.0, 2.0, 3.0, 4.0])
    assert y.shape.as_list() == [None, 4] and y.op.type == "BiasAdd"
    y2 = tf.nn.bias_add(tf.placeholder(tf.float32, [2, None]), tf.zeros([5]))
    assert y2.shape.as_list() == [2, 5]
    np.testing.assert_array_equal(sess.run(tf.nn.bias_add([[1, 2]], [3, 4])), [[4, 6]])
    with pytest.raises(ValueError, match=r"\(4,\).*\(2, 3\).*3 vs 4"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([4]))
    with pytest.raises(ValueError, match="1-D"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([1, 3]))
    with pytest.raises(ValueError, match="rank at least 2"):
        tf.nn.bias_add(tf.zeros([3]), tf.zeros([3]))
    with pytest.raises(ValueError, match="rank at least 3"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([3]), data_format="NCHW")
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([3]), data_format="HWC")
    p = tf.placeholder(tf.float32)
    with pytest.raises(InvalidArgumentError, match=r"\(2,\).*\(1, 3\)"):
        sess.run(tf.nn.bias_add(p, [3.0, 4.0]), {p: [[1.0, 2.0, 3.0]]})


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 2], -1])
def test_l2_normalize(sess, axis):
    x = RNG.standard_normal((3, 4, 2)).astype(np.float32)
    x[0] = 0.0
    red = None if axis is None else tuple(np.atleast_1d(axis))
    ref = x / np.sqrt(np.maximum((x.astype(np.float64) ** 2).sum(axis=red, keepdims=True),
                                 1e-12))
    out = sess.run(tf.nn.l2_normalize(x, axis=axis))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)


def test_l2_normalize_values_and_errors(sess):
    np.testing.assert_allclose(sess.run(tf.nn.l2_normalize([[3.0, 4.0], [0.0, 0.0]], dim=1)),
                               [[0.6, 0.8], [0.0, 0.0]])
    big_eps = tf.nn.l2_normalize(np.array([0.3, 0.4]), epsilon=1.0)
    np.testing.assert_allclose(sess.run(big_eps), [0.3, 0.4])
    assert tf.nn.l2_normalize(tf.placeholder(tf.float32, [None, 3]), 1).shape.as_list() == \
        [None, 3]
    with pytest.raises(TypeError, match="int32"):
        tf.nn.l2_normalize(tf.constant([[3, 4]]), 1)
    # TF 2.15: the error of its Sum op
    with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 dim"):
        tf.nn.l2_normalize(tf.zeros([2, 3]), axis=2)


@pytest.mark.parametrize("axes,keep", [([0], False), ([0, 2], False), ([1], True)])
def test_moments(sess, axes, keep):
    x = RNG.standard_normal((4, 3, 5)).astype(np.float32) * 3 + 1
    mean, var = tf.nn.moments(x, axes, keep_dims=keep)
    m, v = sess.run([mean, var])
    np.testing.assert_allclose(m, x.mean(axis=tuple(axes), keepdims=keep), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(v, x.var(axis=tuple(axes), keepdims=keep), rtol=1e-5)
    assert mean.shape.as_list() == list(m.shape) and m.dtype == np.float32


def test_moments_shapes_and_float16(sess):
    mean, var = tf.nn.moments(tf.placeholder(tf.float32, [None, 3, 2]), [0, 1])
    assert mean.shape.as_list() == [2] and var.shape.as_list() == [2]
    m, v = tf.nn.moments(tf.placeholder(tf.float64, [None, 3]), [0], keepdims=True)
    assert m.shape.as_list() == v.shape.as_list() == [1, 3] and m.dtype == tf.float64
    h = np.array([[1.0, 2.0], [3.0, 6.0]], np.float16)
    hm, hv = sess.run(tf.nn.moments(h, [0]))
    assert hm.dtype == hv.dtype == np.float16
    np.testing.assert_array_equal(hm, [2, 4])
    np.testing.assert_array_equal(hv, [1, 4])
    with pytest.raises(ValueError, match="both"):
        tf.nn.moments(h, [0], keep_dims=True, keepdims=True)


def test_scalar_inputs_give_0d_arrays():
    from flowgraph.backends.cpu import kernels_nn

    x = np.array(-1.5, np.float32)
    for fn in (kernels_nn.relu, kernels_nn.relu6, kernels_nn.elu, kernels_nn.selu,
               kernels_nn.softplus, kernels_nn.softsign, kernels_nn.l2_normalize):
        out = fn(x)
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    assert isinstance(kernels_nn.leaky_relu(x, alpha=0.2), np.ndarray)
