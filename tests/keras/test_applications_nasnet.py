"""tf.keras.applications.NASNetMobile/NASNetLarge against TF 2.15 (values from the
tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary

import flowgraph as tf

CASES = [
    ("NASNetMobile", {}, "NASNet", 5326716, 5289978, 771, 1126, ["stem_conv1", "stem_bn1"],
     ["global_average_pooling2d", "predictions"], [None, 1000]),
    ("NASNetLarge", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "max"},
     "NASNet", 84916818, 84720150, 1040, 1544, ["stem_conv1", "stem_bn1"],
     ["activation_259", "global_max_pooling2d"], [None, 4032]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_cell_weight_names_nest_in_tf_scopes():
    model, _ = build("NASNetMobile", input_shape=(32, 32, 3), classes=10)
    names = [w.name for w in model.weights]
    assert names[20] == ("reduction_A_block_stem_1/block_1/separable_conv_block_reduction_"
                         "right1_stem_1/separable_conv_1_bn_reduction_right1_stem_1/"
                         "moving_mean:0")
    assert "adjust_relu_1_stem_2" in [layer.name for layer in model.layers]


@pytest.mark.slow
def test_forward_matches_tf():
    check_forward("NASNetMobile", 32, [11.312, 0.86666, -2.959, 1.3154, 0.28006, -10.877,
                                       -0.87718, -4.3394, -1.5553, -6.8165])


def test_weights_file_names_and_preprocess(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with tf.Graph().as_default(), pytest.raises(FileNotFoundError,
                                                match=r"nasnet/nasnet_mobile_no_top\.h5"):
        A.NASNetMobile(include_top=False, input_shape=(32, 32, 3))
    x = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) * 10
    np.testing.assert_allclose(A.nasnet.preprocess_input(x.copy())[0, 0, 0],
                               [-1.0, -0.92157, -0.84314], atol=1e-5)
