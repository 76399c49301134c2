"""tf.keras.applications.RegNetX/Y against TF 2.15 (values from the tf-oracle), and the
grouped convolution they need."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("RegNetX002", {}, "regnetx002", 2705640, 2684792, 145, 222,
     ["regnetx002_prestem_rescaling", "regnetx002_stem_conv"], ["1_head_gap", "1head_dense"],
     [None, 1000]),
    ("RegNetY002", {}, "regnety002", 3183844, 3162996, 197, 274,
     ["regnety002_prestem_rescaling", "regnety002_stem_conv"], ["1_head_gap", "1head_dense"],
     [None, 1000]),
    # width 80 with group width 120: TF's Conv2D takes groups=0 as 1
    ("RegNetX080", {"input_shape": (32, 32, 3), "classes": 10}, "regnetx080", 37761322,
     37670858, 245, 372, ["regnetx080_prestem_rescaling", "regnetx080_stem_conv"],
     ["1_head_gap", "1head_dense"], [None, 10]),
    ("RegNetY320", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "avg"},
     "regnety320", 141492058, 141333770, 294, 405,
     ["regnety320_prestem_rescaling", "regnety320_stem_conv"],
     ["regnety320_Stage_3_YBlock_0_exit_relu", "global_average_pooling2d"], [None, 3712]),
]

# TF 2.15's count_params() of every other variant's default build
PARAMS = {"RegNetX004": 5194184, "RegNetX006": 6229320, "RegNetX008": 7296968,
          "RegNetX016": 9233640, "RegNetX032": 15359112, "RegNetX040": 22194312,
          "RegNetX064": 26283464, "RegNetX120": 46202440, "RegNetX160": 54389704,
          "RegNetX320": 107973576, "RegNetY004": 4371296, "RegNetY006": 6084920,
          "RegNetY008": 6293056, "RegNetY016": 11255102, "RegNetY032": 19502498,
          "RegNetY040": 20708928, "RegNetY064": 30665684, "RegNetY080": 39265812,
          "RegNetY120": 51918928, "RegNetY160": 83712956}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


@pytest.mark.slow  # every variant's full build: the default run checks a few
def test_every_variant_matches_tf():
    for ctor, params in PARAMS.items():
        assert build(ctor)[0].count_params() == params, ctor


def test_y_block_layers_as_tf():
    model, _ = build("RegNetY002", include_top=False, input_shape=(32, 32, 3))
    names = [(layer.name, type(layer).__name__) for layer in model.layers]
    assert names[11:17] == [
        ("regnety002_Stage_0_YBlock_0_squeeze_and_excite_gap", "GlobalAveragePooling2D"),
        ("regnety002_Stage_0_YBlock_0_squeeze_and_excite_squeeze", "Conv2D"),
        ("regnety002_Stage_0_YBlock_0_squeeze_and_excite_excite", "Conv2D"),
        ("tf_op_layer_Mul", "TensorFlowOpLayer"),
        ("regnety002_Stage_0_YBlock_0_conv_1x1_2", "Conv2D"),
        ("regnety002_Stage_0_YBlock_0_skip_1x1", "Conv2D")]
    kernel = model.get_layer("regnety002_Stage_1_YBlock_0_conv_3x3").kernel
    assert kernel.shape.as_list() == [3, 3, 8, 56]  # 7 groups of 8 channels


def test_forward_matches_tf():
    check_forward("RegNetY002", 32, [-0.094807, 0.17987, 0.23742, 0.37146, 0.20842, -0.097556,
                                     -0.32888, -0.13867, -0.72789, -0.063002])


def _grouped_reference(x, kernel, groups, stride):
    """NumPy: each group of input channels correlated (TF's 'same' zero padding) with its
    own slice of filters."""
    n, h, w, _ = x.shape
    kh, kw, cg, f = kernel.shape
    fg = f // groups
    oh, ow = (h + stride - 1) // stride, (w + stride - 1) // stride
    ph, pw = max((oh - 1) * stride + kh - h, 0), max((ow - 1) * stride + kw - w, 0)
    xp = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    out = np.zeros((n, oh, ow, f))
    for g in range(groups):
        xs, ks = xp[..., g * cg:(g + 1) * cg], kernel[..., g * fg:(g + 1) * fg]
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                patch = xs[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
                out[:, i, j, g * fg:(g + 1) * fg] = np.tensordot(patch, ks, 3)
    return out


@pytest.mark.parametrize("groups,filters,stride", [(3, 9, 1), (2, 6, 2), (6, 6, 1)])
def test_grouped_conv2d_matches_numpy(groups, filters, stride):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 6, 7, 6).astype(np.float32)
    with tf.Graph().as_default():
        layer = tf.keras.layers.Conv2D(filters, 3, groups=groups, strides=stride, padding="same",
                               use_bias=False)
        y = layer(tf.constant(x))
        assert layer.kernel.shape.as_list() == [3, 3, 6 // groups, filters]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, kernel = sess.run([y, layer.kernel])
    np.testing.assert_allclose(got, _grouped_reference(x, kernel, groups, stride), rtol=1e-4,
                               atol=1e-5)


def test_grouped_conv2d_errors():
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        tf.keras.layers.Conv2D(6, 3, groups=4)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="input has 5 channels"):
        tf.keras.layers.Conv2D(4, 3, groups=2)(tf.zeros([1, 4, 4, 5]))


def test_conv2d_of_a_channel_split_runs():
    # a split's outputs are strided views; the Winograd path must not assume C order
    x = np.random.RandomState(1).rand(2, 4, 4, 32).astype(np.float32)
    f = np.random.RandomState(2).rand(3, 3, 16, 16).astype(np.float32)
    with tf.Graph().as_default():
        first, _ = tf.split(tf.constant(x), 2, axis=3)
        y = tf.nn.conv2d(first, tf.constant(f), [1, 1, 1, 1], "SAME")
        z = tf.nn.conv2d(tf.constant(np.ascontiguousarray(x[..., :16])), tf.constant(f),
                         [1, 1, 1, 1], "SAME")
        with tf.Session() as sess:
            got, want = sess.run([y, z])
    np.testing.assert_array_equal(got, want)
