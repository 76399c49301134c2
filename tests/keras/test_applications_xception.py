"""tf.keras.applications.Xception against TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import pytest
from applications_util import A, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("Xception", {}, "xception", 22910480, 22855952, 134, 236,
     ["block1_conv1", "block1_conv1_bn"], ["avg_pool", "predictions"], [None, 1000]),
    ("Xception", {"include_top": False, "input_shape": (71, 71, 3), "pooling": "max"},
     "xception", 20861480, 20806952, 133, 234, ["block1_conv1", "block1_conv1_bn"],
     ["block14_sepconv2_act", "global_max_pooling2d"], [None, 2048]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_forward_matches_tf():
    check_forward("Xception", 71, [-0.055937, -0.021006, -0.10755, 0.10169, -0.18945,
                                   -0.0061652, 0.07705, 0.084687, -0.071752, -0.041803])


def test_minimum_size_and_argument_errors_as_tf():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Input size must be at least 71x71; Received: "
                                             r"input_shape=\(64, 64, 3\)"):
            A.Xception(weights=None, include_top=False, input_shape=(64, 64, 3))
        with pytest.raises(ValueError, match="`classes` should be 1000"):
            A.Xception(weights="imagenet", classes=7)
