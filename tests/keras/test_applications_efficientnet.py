"""tf.keras.applications.EfficientNetB0..B7 against TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("EfficientNetB0", {}, "efficientnetb0", 5330571, 5288548, 240, 314,
     ["rescaling", "normalization"], ["top_dropout", "predictions"], [None, 1000]),
    ("EfficientNetB3", {"include_top": False, "input_shape": (33, 33, 3), "pooling": "avg"},
     "efficientnetb3", 10783535, 10696232, 385, 497, ["rescaling", "normalization"],
     ["top_activation", "avg_pool"], [None, 1536]),
    ("EfficientNetB7", {"input_shape": (32, 32, 3), "classes": 10}, "efficientnetb7", 64123297,
     63812570, 816, 1040, ["rescaling", "normalization"], ["top_dropout", "predictions"],
     [None, 10]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


@pytest.mark.slow  # every variant's full build: the default run checks a few
def test_default_variants_match_tf():
    # ctor: (params, layers, default input size) of TF 2.15's default build
    for ctor, params, n_layers, size in [("EfficientNetB1", 7856239, 342, 240),
                                         ("EfficientNetB2", 9177569, 342, 260),
                                         ("EfficientNetB4", 19466823, 477, 380),
                                         ("EfficientNetB5", 30562527, 579, 456),
                                         ("EfficientNetB6", 43265143, 669, 528)]:
        model, _ = build(ctor)
        assert (model.count_params(), len(model.layers), model.input.shape.as_list()) == \
            (params, n_layers, [None, size, size, 3]), ctor


def test_block_names_and_sample_dropout_as_tf():
    model, _ = build("EfficientNetB0", input_shape=(32, 32, 3), classes=10)
    names = [layer.name for layer in model.layers]
    assert names[7:17] == ["block1a_dwconv", "block1a_bn", "block1a_activation",
                           "block1a_se_squeeze", "block1a_se_reshape", "block1a_se_reduce",
                           "block1a_se_expand", "block1a_se_excite", "block1a_project_conv",
                           "block1a_project_bn"]
    drop = model.get_layer("block2b_drop")
    assert drop.noise_shape == (None, 1, 1, 1) and drop.rate == pytest.approx(0.2 * 2 / 16)
    assert [w.name for w in model.weights[:3]] == ["normalization/mean:0",
                                                   "normalization/variance:0",
                                                   "normalization/count:0"]


def test_forward_matches_tf_and_trains_with_sample_dropout():
    check_forward("EfficientNetB0", 32, [0.2002, -0.04726, 0.12915, 0.11007, 0.080451,
                                         -0.075643, -0.12661, -0.038893, -0.046471,
                                         0.0060953])
    model, graph = build("EfficientNetB0", input_shape=(32, 32, 3), classes=3)
    with graph.as_default():
        model.compile("sgd", "sparse_categorical_crossentropy")
        x = np.random.RandomState(0).uniform(0, 255, (4, 32, 32, 3)).astype(np.float32)
        history = model.fit(x, np.array([0, 1, 2, 0]), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_preprocess_input_is_the_identity():
    x = np.ones((1, 2, 2, 3), np.float32)
    assert A.efficientnet.preprocess_input(x) is x


def test_errors_as_tf():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Input size must be at least 32x32; Received: "
                                             r"input_shape=\(31, 31, 3\)"):
            A.EfficientNetB0(weights=None, include_top=False, input_shape=(31, 31, 3))
        with pytest.raises(ValueError, match="`classes` should be 1000"):
            A.EfficientNetB0(classes=10)
