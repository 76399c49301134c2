"""tf.keras.applications.ConvNeXt* against TF 2.15 (values from the tf-oracle), and its
LayerScale, StochasticDepth and GELU."""

from __future__ import annotations

import math

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("ConvNeXtTiny", {}, "convnext_tiny", 28589128, 28589128, 153, 182,
     ["convnext_tiny_prestem_normalization", "convnext_tiny_stem"],
     ["convnext_tiny_head_layernorm", "convnext_tiny_head_dense"], [None, 1000]),
    ("ConvNeXtSmall", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "avg"},
     "convnext_small", 49454688, 49454688, 296, 342,
     ["convnext_small_prestem_normalization", "convnext_small_stem"],
     ["global_average_pooling2d", "layer_normalization"], [None, 768]),
    ("ConvNeXtBase", {"include_top": False, "input_shape": (32, 32, 3)}, "convnext_base",
     87566464, 87566464, 295, 342, ["convnext_base_prestem_normalization", "convnext_base_stem"],
     ["tf_op_layer_add_35", "layer_normalization"], [None, 1, 1, 1024]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_large_variants_match_tf():
    for ctor, params in [("ConvNeXtLarge", 197767336), ("ConvNeXtXLarge", 350196968)]:
        assert build(ctor)[0].count_params() == params, ctor


def test_nested_and_block_names_as_tf():
    model, _ = build("ConvNeXtTiny", input_shape=(32, 32, 3), classes=10)
    assert [w.name for w in model.weights[:3]] == [
        "convnext_tiny_stem/convnext_tiny_stem_conv/kernel:0",
        "convnext_tiny_stem/convnext_tiny_stem_conv/bias:0",
        "convnext_tiny_stem/convnext_tiny_stem_layernorm/gamma:0"]
    names = [(layer.name, type(layer).__name__) for layer in model.layers]
    assert names[3:11] == [
        ("convnext_tiny_stage_0_block_0_depthwise_conv", "Conv2D"),
        ("convnext_tiny_stage_0_block_0_layernorm", "LayerNormalization"),
        ("convnext_tiny_stage_0_block_0_pointwise_conv_1", "Dense"),
        ("convnext_tiny_stage_0_block_0_gelu", "Activation"),
        ("convnext_tiny_stage_0_block_0_pointwise_conv_2", "Dense"),
        ("convnext_tiny_stage_0_block_0_layer_scale", "LayerScale"),
        ("convnext_tiny_stage_0_block_0_identity", "Activation"),
        ("tf_op_layer_add", "TensorFlowOpLayer")]
    assert model.get_layer("convnext_tiny_stage_0_block_0_depthwise_conv").kernel.shape \
        .as_list() == [7, 7, 1, 96]


def test_forward_matches_tf():
    check_forward("ConvNeXtTiny", 32, [-0.74975, -0.2931, 0.12063, -0.76562, -1.0961, 0.64064,
                                       0.31016, -1.7197, -0.15798, 2.1067])


def test_layer_scale_stochastic_depth_and_gelu():
    x = np.array([[[-2.0, -0.5, 0.0, 1.0, 3.0]]], np.float32).reshape(1, 1, 1, 5)
    with tf.Graph().as_default():
        t = tf.constant(np.repeat(x, 4000, axis=0))
        scaled = A.convnext.LayerScale(0.5, 5)(t)
        depth = A.convnext.StochasticDepth(0.25)
        train, infer = depth(t, training=True), depth(t, training=False)
        gelu = tf.keras.activations.get("gelu")(tf.constant(x))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_scaled, got_train, got_infer, got_gelu = sess.run([scaled, train, infer, gelu])
    np.testing.assert_allclose(got_scaled, 0.5 * np.repeat(x, 4000, axis=0))
    np.testing.assert_array_equal(got_infer, np.repeat(x, 4000, axis=0))
    kept = np.any(got_train != 0, axis=(1, 2, 3))
    assert 0.7 < kept.mean() < 0.8  # whole samples dropped with probability 0.25
    np.testing.assert_allclose(got_train[kept], np.repeat(x, kept.sum(), 0) / 0.75, rtol=1e-6)
    want = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel()]
    np.testing.assert_allclose(got_gelu.ravel(), want, rtol=1e-5, atol=1e-7)


def test_classes_error_as_tf():
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="If using `weights` as `'imagenet'` with `include_top` as true, "
                              "`classes` should be 1000"):
        A.ConvNeXtTiny(classes=3)
