"""tf.keras.applications.EfficientNetV2 B0..B3, S, M, L against TF 2.15 (values from the
tf-oracle)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("EfficientNetV2B0", {}, "efficientnetv2-b0", 7200312, 7139704, 273, 361,
     ["rescaling", "normalization"], ["top_dropout", "predictions"], [None, 1000]),
    ("EfficientNetV2S", {"include_top": False, "input_shape": (32, 32, 3),
                         "include_preprocessing": False}, "efficientnetv2-s", 20331360,
     20177488, 512, 670, ["stem_conv", "stem_bn"], ["top_bn", "top_activation"],
     [None, 1, 1, 1280]),
    ("EfficientNetV2B1", {"include_top": False, "input_shape": (32, 32, 1), "pooling": "max"},
     "efficientnetv2-b1", 6930548, 6859476, 334, 441, ["rescaling", "stem_conv"],
     ["top_activation", "max_pool"], [None, 1280]),
    # over 1,000 layers deep: the functional model's depth walk needs a deeper stack
    ("EfficientNetV2L", {"input_shape": (32, 32, 3), "classes": 10}, "efficientnetv2-l",
     117759658, 117247082, 1031, 1331, ["rescaling", "stem_conv"],
     ["top_dropout", "predictions"], [None, 10]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


@pytest.mark.slow  # every variant's full build: the default run checks a few
def test_default_variants_match_tf():
    for ctor, params, n_layers in [("EfficientNetV2B2", 10178374, 352),
                                   ("EfficientNetV2B3", 14467622, 412),
                                   ("EfficientNetV2M", 54431388, 743)]:
        model, _ = build(ctor)
        assert (model.count_params(), len(model.layers)) == (params, n_layers), ctor


def test_fused_and_mbconv_block_names_as_tf():
    model, _ = build("EfficientNetV2B0", input_shape=(32, 32, 3), classes=10)
    names = [layer.name for layer in model.layers]
    assert names[6:9] == ["block1a_project_conv", "block1a_project_bn",
                          "block1a_project_activation"]
    assert names[17:21] == ["block2b_project_conv", "block2b_project_bn", "block2b_drop",
                            "block2b_add"]
    assert "block4a_dwconv2" in names and "block4a_se_excite" in names


def test_forward_matches_tf():
    check_forward("EfficientNetV2B0", 32, [-0.080166, 0.11992, -0.038399, -0.042173,
                                           0.019007, 0.23319, -0.17331, -0.015019, 0.11784,
                                           0.30584])


def test_preprocess_input_is_the_identity():
    x = np.ones((1, 2, 2, 3), np.float32)
    assert A.efficientnet_v2.preprocess_input(x) is x



@pytest.mark.slow
def test_the_deepest_variant_builds_within_the_default_recursion_limit():
    # EfficientNetV2L is over 1,000 layers deep: the model's depth walk keeps its own
    # stack, so the default recursion limit is enough
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        with tf.Graph().as_default():
            model = A.EfficientNetV2L(weights=None, input_shape=(32, 32, 3))
    finally:
        sys.setrecursionlimit(limit)
    assert len(model.layers) == 1031
