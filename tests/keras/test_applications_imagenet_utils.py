"""tf.keras.applications.imagenet_utils and the per-family modules' preprocess_input /
decode_predictions, as TF 2.15 (values from the tf-oracle)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from applications_util import A

X = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) * 10


def test_modes_as_tf():
    utils = A.imagenet_utils
    np.testing.assert_allclose(utils.preprocess_input(X.copy())[0, 0, 0],
                               [-83.939, -106.779, -123.68], atol=1e-3)
    np.testing.assert_allclose(utils.preprocess_input(X.copy(), mode="tf")[0, 0, 0],
                               [-1.0, -0.92157, -0.84314], atol=1e-5)
    np.testing.assert_allclose(
        utils.preprocess_input(np.array([[[1, 2, 3]]], np.int64), mode="torch"),
        [[[-2.10078, -2.0007, -1.75216]]], atol=1e-4)
    with pytest.raises(ValueError, match=r"Expected mode to be one of `caffe`, `tf` or `torch`\. "
                                         r"Received: mode=bogus"):
        utils.preprocess_input(X.copy(), mode="bogus")


@pytest.mark.parametrize("module", ["xception", "inception_v3", "inception_resnet_v2",
                                    "resnet_v2"])
def test_tf_mode_modules(module):
    np.testing.assert_allclose(getattr(A, module).preprocess_input(X.copy())[0, 0, 0],
                               [-1.0, -0.92157, -0.84314], atol=1e-5)


@pytest.mark.parametrize("module", ["efficientnet", "efficientnet_v2", "mobilenet_v3",
                                    "regnet", "resnet_rs", "convnext"])
def test_identity_modules(module):
    assert getattr(A, module).preprocess_input(X) is X


def test_every_module_decodes_from_the_local_class_index(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (tmp_path / "models").mkdir()
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    (tmp_path / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    preds = np.zeros((1, 1000), np.float32)
    preds[0, [5, 900]] = [0.25, 0.75]
    for module in ("imagenet_utils", "convnext", "densenet", "efficientnet", "efficientnet_v2",
                   "nasnet",
                   "inception_resnet_v2", "inception_v3", "mobilenet_v3", "regnet",
                   "resnet_rs", "resnet_v2", "xception"):
        got = getattr(A, module).decode_predictions(preds, top=2)
        assert [(c, n) for c, n, _ in got[0]] == [("n00000900", "class_900"),
                                                  ("n00000005", "class_5")], module
    with pytest.raises(ValueError, match=r"Found array with shape: \(1, 10\)"):
        A.regnet.decode_predictions(np.zeros((1, 10)))
