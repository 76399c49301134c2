"""tf.keras.applications.InceptionResNetV2 against TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("InceptionResNetV2", {}, "inception_resnet_v2", 55873736, 55813192, 782, 898,
     ["conv2d", "batch_normalization"], ["avg_pool", "predictions"], [None, 1000]),
    ("InceptionResNetV2", {"include_top": False, "input_shape": (75, 75, 3)},
     "inception_resnet_v2", 54336736, 54276192, 780, 896, ["conv2d", "batch_normalization"],
     ["conv_7b_bn", "conv_7b_ac"], [None, 1, 1, 1536]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_residual_blocks_named_as_tf():
    model, _ = build("InceptionResNetV2", include_top=False, input_shape=(75, 75, 3))
    names = [layer.name for layer in model.layers]
    i = names.index("block35_1_mixed")
    assert names[i:i + 4] == ["block35_1_mixed", "block35_1_conv", "custom_scale_layer",
                              "block35_1_ac"]
    assert "block8_10_ac" not in names and "custom_scale_layer_39" in names
    assert model.get_layer("custom_scale_layer_10").get_config()["scale"] == 0.1


def test_custom_scale_layer_adds_the_scaled_branch():
    with tf.Graph().as_default():
        a, b = tf.constant([[1.0, 2.0]]), tf.constant([[10.0, 20.0]])
        y = A.inception_resnet_v2.CustomScaleLayer(0.17)([a, b])
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), [[2.7, 5.4]], rtol=1e-6)


@pytest.mark.slow
def test_forward_matches_tf():
    check_forward("InceptionResNetV2", 75, [-25.356, -5.6779, -2.5374, -0.1208, -35.743,
                                            -24.848, -23.803, 23.369, 11.493, -13.259])
