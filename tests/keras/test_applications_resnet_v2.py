"""tf.keras.applications.ResNet50V2/101V2/152V2 against TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

CASES = [
    ("ResNet50V2", {}, "resnet50v2", 25613800, 25568360, 192, 272, ["conv1_pad", "conv1_conv"],
     ["avg_pool", "predictions"], [None, 1000]),
    ("ResNet50V2", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "avg"},
     "resnet50v2", 23564800, 23519360, 191, 270, ["conv1_pad", "conv1_conv"],
     ["post_relu", "avg_pool"], [None, 2048]),
    ("ResNet152V2", {"input_shape": (32, 32, 3), "classes": 10}, "resnet152v2", 58352138,
     58208394, 566, 816, ["conv1_pad", "conv1_conv"], ["avg_pool", "predictions"], [None, 10]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


@pytest.mark.slow
def test_variant_sizes_match_tf():
    for ctor, params in (("ResNet101V2", 44675560), ("ResNet152V2", 60380648)):
        assert build(ctor)[0].count_params() == params


def test_block_layer_names_match_tf():
    model, _ = build("ResNet50V2", include_top=False, input_shape=(32, 32, 3))
    names = [layer.name for layer in model.layers]
    assert names[5:16] == [
        "conv2_block1_preact_bn", "conv2_block1_preact_relu", "conv2_block1_1_conv",
        "conv2_block1_1_bn", "conv2_block1_1_relu", "conv2_block1_2_pad",
        "conv2_block1_2_conv", "conv2_block1_2_bn", "conv2_block1_2_relu",
        "conv2_block1_0_conv", "conv2_block1_3_conv"]
    assert "max_pooling2d" in names  # the strided block's 1x1 pooling shortcut


def test_forward_matches_tf():
    check_forward("ResNet50V2", 32, [-24.462, 24.742, -71.9, -29.363, 84.13, -39.004, -73.174,
                                     30.182, -154.0, -227.21])


def test_preprocess_input_scales_to_minus_one_one():
    x = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) * 10
    np.testing.assert_allclose(A.resnet_v2.preprocess_input(x.copy())[0, 0, 0],
                               [-1.0, -0.92157, -0.84314], atol=1e-5)
