"""The one transposed-convolution output shape (`deconv_output_shape`), shared by
`tf.layers.Conv2DTranspose`, `tf.keras.layers.Conv2DTranspose` and `Conv3DTranspose`:
static where the input's sizes are known, computed at run time where they are not."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras
from flowgraph.layers.convolutional_extra import check_output_padding, deconv_output_shape


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("output_padding", [None, (1, 0)])
def test_tf_layers_and_keras_agree_statically_and_at_run_time(data_format, output_padding):
    with tf.Graph().as_default():
        shape = [None, 5, None, 2] if data_format == "channels_last" else [None, 2, 5, None]
        x = tf.placeholder(tf.float32, shape)
        args = dict(strides=(2, 3), padding="valid", output_padding=output_padding,
                    data_format=data_format)
        a = tf.layers.Conv2DTranspose(4, (3, 2), **args)(x)
        b = keras.layers.Conv2DTranspose(4, (3, 2), **args)(x)
        assert a.shape.as_list() == b.shape.as_list()
        value = np.zeros([3, 5, 7, 2] if data_format == "channels_last" else [3, 2, 5, 7],
                         np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ya, yb = sess.run([a, b], {x: value})
    h = 5 * 2 + 1 if output_padding is None else (5 - 1) * 2 + 3 + 1
    w = 7 * 3 if output_padding is None else (7 - 1) * 3 + 2
    want = [3, h, w, 4] if data_format == "channels_last" else [3, 4, h, w]
    assert list(ya.shape) == list(yb.shape) == want
    static = a.shape.as_list()
    assert static == ([None, h, None, 4] if data_format == "channels_last"
                      else [None, 4, h, None])


def test_a_3d_shape_with_an_unknown_depth():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, None, 4, 4, 1])
        dims, known = deconv_output_shape(x, 3, (2, 2, 2), (2, 2, 2), "same",
                                          "channels_last")
        assert known.as_list() == [2, None, 8, 8, 3]
        with tf.Session() as sess:
            out = sess.run(dims, {x: np.zeros([2, 5, 4, 4, 1], np.float32)})
    assert out.tolist() == [2, 10, 8, 8, 3]


def test_output_padding_must_stay_below_the_stride():
    assert check_output_padding(None, (2, 2), "layer") is None
    with pytest.raises(ValueError, match=r"conv2d_transpose: output_padding \(2, 0\)"):
        check_output_padding((2, 0), (2, 2), "conv2d_transpose")
    with pytest.raises(ValueError, match="smaller than strides"):
        keras.layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)
