"""tf.keras.applications.ResNetRS50..420 against TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("ResNetRS50", {}, "resnet-rs-50", 35745288, 35691912, 274, 346,
     ["rescaling", "normalization"], ["top_dropout", "predictions"], [None, 1000]),
    ("ResNetRS200", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "max"},
     "resnet-rs-200", 91337248, 91160992, 1088, 1294, ["rescaling", "normalization"],
     ["BlockGroup5__block_2__output_act", "max_pool"], [None, 2048]),
    ("ResNetRS101", {"input_shape": (32, 32, 3), "classes": 10,
                     "include_preprocessing": False}, "resnet-rs-101", 61695786, 61590186, 527,
     669, ["zero_padding2d", "stem_1_stem_conv_1"], ["top_dropout", "predictions"],
     [None, 10]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


@pytest.mark.slow  # every variant's full build: the default run checks a few
def test_default_variants_match_tf():
    for ctor, params in [("ResNetRS152", 86773256), ("ResNetRS270", 130104520),
                         ("ResNetRS350", 164268360), ("ResNetRS420", 192262216)]:
        assert build(ctor)[0].count_params() == params, ctor


@pytest.mark.slow
def test_block_names_as_tf():
    model, _ = build("ResNetRS200", include_top=False, input_shape=(32, 32, 3))
    names = [layer.name for layer in model.layers]
    assert names[17:21] == ["BlockGroup2__block_0__conv_1", "BlockGroup2__block_0_batch_norm_1",
                            "BlockGroup2__block_0__act_1", "BlockGroup2__block_0__conv_2"]
    assert "BlockGroup3__block_0__projection_pooling" in names
    drop = model.get_layer("BlockGroup4__block_3__drop")
    assert drop.noise_shape == (None, 1, 1, 1) and drop.rate == pytest.approx(0.1 * 4 / 5)


@pytest.mark.slow
def test_forward_matches_tf():
    check_forward("ResNetRS50", 32, [0.13376, 0.1845, 0.43952, 0.10174, -0.84523, -0.19454,
                                     -0.42089, 0.13381, -0.20282, -0.018243])


def test_weights_argument_as_tf(tmp_path, monkeypatch):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"For ResNetRS50 the following weight variants "
                                             r"are available \['imagenet-i160'\]"):
            A.ResNetRS50(weights="foo")
        with pytest.raises(ValueError, match=r"any of \['imagenet-i160'\] with `include_top` "
                                             r"as true, `classes` should be 1000. Received "
                                             r"classes=10"):
            A.ResNetRS50(classes=10)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with tf.Graph().as_default(), pytest.raises(FileNotFoundError,
                                                match=r"resnet-rs-152-i256_notop\.h5"):
        A.ResNetRS152(include_top=False, input_shape=(32, 32, 3))


def test_preprocess_input_is_the_identity():
    x = np.ones((1, 2, 2, 3), np.float32)
    assert A.resnet_rs.preprocess_input(x) is x
