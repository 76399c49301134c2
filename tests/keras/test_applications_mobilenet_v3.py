"""tf.keras.applications.MobileNetV3Small/Large against TF 2.15 (values from the
tf-oracle): TF 1.x's Keras records the hard sigmoid's raw ops as TensorFlowOpLayers."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("MobileNetV3Small", {}, "MobilenetV3small", 2554968, 2542856, 239, 210,
     ["rescaling", "Conv"], ["flatten", "Predictions"], [None, 1000]),
    ("MobileNetV3Large", {}, "MobilenetV3large", 5507432, 5483032, 273, 266,
     ["rescaling", "Conv"], ["flatten", "Predictions"], [None, 1000]),
    ("MobileNetV3Large", {"minimalistic": True, "alpha": 0.75, "include_top": False,
                          "pooling": "avg", "input_shape": (48, 48, 3)}, "MobilenetV3large",
     865520, 846432, 140, 230, ["rescaling", "Conv"], ["re_lu_30", "avg_pool"], [None, 720]),
    ("MobileNetV3Small", {"alpha": 1.25, "dropout_rate": 0, "include_preprocessing": False,
                          "classes": 5}, "MobilenetV3small", 2386045, 2370717, 237, 210,
     ["Conv", "Conv/BatchNorm"], ["flatten", "Predictions"], [None, 5]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_hard_swish_layers_named_as_tf():
    model, _ = build("MobileNetV3Small")
    names = [(layer.name, type(layer).__name__) for layer in model.layers]
    assert names[3:8] == [("Conv/BatchNorm", "BatchNormalization"),
                          ("tf_op_layer_add", "TensorFlowOpLayer"), ("re_lu", "ReLU"),
                          ("tf_op_layer_mul", "TensorFlowOpLayer"), ("multiply", "Multiply")]
    assert names[-8:-4] == [("tf_op_layer_add_27", "TensorFlowOpLayer"),
                            ("re_lu_32", "ReLU"), ("tf_op_layer_mul_27", "TensorFlowOpLayer"),
                            ("multiply_18", "Multiply")]
    assert model.input.shape.as_list() == [None, None, None, 3]


def test_forward_matches_tf_at_any_size():
    check_forward("MobileNetV3Small", 32, [0.041134, -0.019395, -0.047024, 0.072564,
                                           -0.00512, 0.054696, -0.13486, -0.05301, 0.087139,
                                           0.05455])
    model, graph = build("MobileNetV3Large", include_top=False, pooling="max")
    with graph.as_default():
        y = model.predict(np.zeros((1, 40, 56, 3), np.float32))
    assert y.shape == (1, 960)


@pytest.mark.slow
def test_errors_as_tf():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Input size must be at least 32x32; Received "
                                             r"`input_shape=\(16, 16, 3\)`"):
            A.MobileNetV3Small(weights=None, input_shape=(16, 16, 3))
        with pytest.raises(ValueError, match=r"alpha can be one of `0\.75`, `1\.0` for non "
                                             r"minimalistic or `1\.0` for minimalistic only"):
            A.MobileNetV3Large(alpha=0.5)
        with pytest.raises(ValueError, match="Only `None` and `softmax` activations"), \
                pytest.warns(UserWarning, match="Weights for input shape .224, 224. will be"):
            A.MobileNetV3Small(classifier_activation="relu")


def test_preprocess_input_is_the_identity():
    x = np.ones((1, 2, 2, 3), np.float32)
    assert A.mobilenet_v3.preprocess_input(x) is x
