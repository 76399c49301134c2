"""tf.layers / tf.keras.layers transposed and separable convolutions: shapes, variable
names and shapes, values against tf.nn, output sizes as TensorFlow computes them."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("padding,strides,kernel,in_hw,out_hw", [
    ("valid", (2, 3), (3, 2), (4, 5), (9, 15)),   # n * s + max(k - s, 0)
    ("valid", 1, 3, (4, 5), (6, 7)),
    ("same", 2, 3, (4, 5), (8, 10)),              # n * s
    ("same", (1, 2), (2, 4), (3, 3), (3, 6)),
])
def test_conv2d_transpose_layer_shapes_and_values(sess, padding, strides, kernel, in_hw,
                                                  out_hw):
    x = tf.placeholder(tf.float32, [None, *in_hw, 3])
    y = tf.layers.conv2d_transpose(x, 2, kernel, strides=strides, padding=padding,
                                   bias_initializer=tf.constant_initializer(0.5))
    assert y.shape.as_list() == [None, *out_hw, 2]
    assert [v.name for v in tf.global_variables()] == ["conv2d_transpose/kernel:0",
                                                       "conv2d_transpose/bias:0"]
    kernel_var = tf.global_variables()[0]
    k = kernel if isinstance(kernel, tuple) else (kernel, kernel)
    assert kernel_var.shape.as_list() == [*k, 2, 3]  # (kh, kw, filters, in_channels)
    sess.run(tf.global_variables_initializer())
    xv = RNG.standard_normal((2, *in_hw, 3)).astype(np.float32)
    s = strides if isinstance(strides, tuple) else (strides, strides)
    ref = tf.nn.conv2d_transpose(xv, kernel_var, [2, *out_hw, 2], [1, *s, 1],
                                 padding.upper()) + 0.5
    got, want = sess.run([y, ref], {x: xv})
    assert got.shape == (2, *out_hw, 2)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_conv2d_transpose_unknown_spatial_size_is_computed_at_run_time(sess):
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    y = tf.layers.conv2d_transpose(x, 4, 3, strides=2)
    assert y.shape.as_list() == [None, None, None, 4]
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {x: np.ones((1, 5, 2, 3))}).shape == (1, 11, 5, 4)


def test_conv2d_transpose_channels_first_and_gradients(sess):
    x = tf.placeholder(tf.float32, [2, 3, 4, 4])
    layer = tf.layers.Conv2DTranspose(5, 2, strides=2, data_format="channels_first")
    y = layer(x)
    assert y.shape.as_list() == [2, 5, 8, 8]
    g = tf.gradients(tf.reduce_sum(y), [x, layer.kernel, layer.bias])
    sess.run(tf.global_variables_initializer())
    values = sess.run(g, {x: np.ones((2, 3, 4, 4))})
    assert [v.shape for v in values] == [(2, 3, 4, 4), (2, 2, 5, 3), (5,)]
    assert values[2] == pytest.approx(np.full(5, 2 * 8 * 8))


def test_separable_conv2d_layer_matches_nn(sess):
    x = tf.placeholder(tf.float32, [None, 8, 7, 3])
    y = tf.layers.separable_conv2d(x, 5, 3, strides=2, depth_multiplier=2,
                                   activation=tf.nn.relu)
    assert y.shape.as_list() == [None, 3, 3, 5]
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["separable_conv2d/depthwise_kernel:0",
                     "separable_conv2d/pointwise_kernel:0", "separable_conv2d/bias:0"]
    dw, pw, b = tf.trainable_variables()
    sess.run(tf.global_variables_initializer())
    xv = RNG.standard_normal((2, 8, 7, 3)).astype(np.float32)
    ref = tf.nn.relu(tf.nn.separable_conv2d(xv, dw, pw, [1, 2, 2, 1], "VALID") + b)
    got, want = sess.run([y, ref], {x: xv})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_layer_aliases_and_errors():
    assert tf.layers.Deconvolution2D is tf.layers.Conv2DTranspose
    assert tf.layers.SeparableConvolution2D is tf.layers.SeparableConv2D
    with pytest.raises(ValueError, match="rank 4"):
        tf.layers.conv2d_transpose(tf.zeros([2, 3, 3]), 2, 2)
    with pytest.raises(ValueError, match="output_padding"):
        tf.layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="depth_multiplier"):
        tf.layers.SeparableConv2D(2, 3, depth_multiplier=0)


def test_keras_conv2d_transpose_and_separable_train(sess):
    model = keras.Sequential([
        keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same", activation="relu",
                                     input_shape=(4, 4, 2)),
        keras.layers.SeparableConv2D(2, 3, padding="same"),
        keras.layers.Flatten(),
        keras.layers.Dense(1),
    ])
    assert [w.shape for w in model.get_weights()][:2] == [(3, 3, 3, 2), (3,)]
    model.compile("sgd", "mse")
    x = RNG.standard_normal((8, 4, 4, 2)).astype(np.float32)
    model.fit(x, np.ones((8, 1)), epochs=2, verbose=0)
    assert model.predict(x).shape == (8, 1)


def test_keras_conv2d_transpose_output_padding():
    x = keras.Input((5, 5, 2))
    assert keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same",
                                        output_padding=1)(x).shape.as_list() == [None, 10, 10,
                                                                                 4]
    assert keras.layers.Conv2DTranspose(4, 3, strides=2)(x).shape.as_list() == [None, 11, 11,
                                                                               4]
    layer = keras.layers.Conv2DTranspose(4, 3, output_padding=None)
    assert layer.get_config()["output_padding"] is None
