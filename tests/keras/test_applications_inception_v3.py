"""tf.keras.applications.InceptionV3 against TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("InceptionV3", {}, "inception_v3", 23851784, 23817352, 313, 378,
     ["conv2d", "batch_normalization"], ["avg_pool", "predictions"], [None, 1000]),
    ("InceptionV3", {"include_top": False, "input_shape": (80, 90, 3), "pooling": "avg"},
     "inception_v3", 21802784, 21768352, 312, 376, ["conv2d", "batch_normalization"],
     ["mixed10", "global_average_pooling2d"], [None, 2048]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_mixed_names_as_tf():
    model, _ = build("InceptionV3", include_top=False, input_shape=(75, 75, 3))
    names = {layer.name for layer in model.layers}
    assert {f"mixed{i}" for i in range(11)} | {"mixed9_0", "mixed9_1"} <= names
    assert model.output.shape.as_list() == [None, 1, 1, 2048]


def test_forward_matches_tf():
    check_forward("InceptionV3", 75, [0.22728, -0.15688, -0.13669, 0.022742, -0.18012,
                                      -0.14409, -0.060914, -0.17083, -0.099134, 0.18093])


def test_minimum_size_as_tf():
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match=r"Input size must be at least 75x75; Received: "
                              r"input_shape=\(74, 74, 3\)"):
        A.InceptionV3(weights=None, include_top=False, input_shape=(74, 74, 3))
