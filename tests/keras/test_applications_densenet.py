"""tf.keras.applications.DenseNet121/169/201 against TF 2.15 (values from the tf-oracle),
its 'torch'-mode preprocess_input, and a fresh-process HDF5 save/load round trip."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from applications_util import A, build, check_forward, check_summary, fill_weights

import flowgraph as tf

CASES = [
    ("DenseNet121", {}, "densenet121", 8062504, 7978856, 429, 606,
     ["zero_padding2d", "conv1/conv"], ["avg_pool", "predictions"], [None, 1000]),
    ("DenseNet169", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "max"},
     "densenet169", 12642880, 12484480, 596, 844, ["zero_padding2d", "conv1/conv"],
     ["relu", "max_pool"], [None, 1664]),
    ("DenseNet201", {"input_shape": (32, 32, 3), "classes": 10}, "densenet201", 18341194,
     18112138, 709, 1006, ["zero_padding2d", "conv1/conv"], ["avg_pool", "predictions"],
     [None, 10]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_architecture_matches_tf(case):
    check_summary(case)


def test_dense_block_names_match_tf():
    model, _ = build("DenseNet121", include_top=False, input_shape=(32, 32, 3))
    names = [layer.name for layer in model.layers]
    assert names[7:14] == ["conv2_block1_0_bn", "conv2_block1_0_relu", "conv2_block1_1_conv",
                           "conv2_block1_1_bn", "conv2_block1_1_relu", "conv2_block1_2_conv",
                           "conv2_block1_concat"]
    assert "pool2_pool" in names and "pool4_conv" in names and "pool5_conv" not in names


def test_forward_matches_tf():
    check_forward("DenseNet121", 32, [9.4532, -10.468, 12.23, 16.023, 26.624, 1.69, -17.273,
                                      7.2971, 8.3748, -2.5409])


def test_preprocess_input_torch_mode_as_tf():
    x = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) * 10
    got = A.densenet.preprocess_input(x.copy())
    assert got.dtype == np.float32
    np.testing.assert_allclose(got[0, 0, 0], [-2.1179, -1.86064, -1.45586], atol=1e-4)
    np.testing.assert_allclose(got[1, 1, 1], [1.47829, 1.81583, 2.20427], atol=1e-4)
    first = A.densenet.preprocess_input(x.copy().transpose(0, 3, 1, 2),
                                        data_format="channels_first")
    np.testing.assert_allclose(first, got.transpose(0, 3, 1, 2), atol=1e-5)
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.float32, [None, 2, 2, 3])
        y = A.densenet.preprocess_input(ph)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {ph: x})[1, 1, 1],
                                       [1.47829, 1.81583, 2.20427], atol=1e-4)


_LOAD = """
import sys
import numpy as np
import flowgraph as tf
model = tf.keras.models.load_model(sys.argv[1])
x = np.load(sys.argv[2])
np.save(sys.argv[3], model.predict(x))
print(model.name, len(model.layers), model.count_params())
"""


@pytest.mark.slow
def test_hdf5_save_then_load_in_a_fresh_process(tmp_path):
    model, graph = build("DenseNet121", input_shape=(32, 32, 3), classes=4)
    x = np.random.RandomState(0).uniform(0, 1, (2, 32, 32, 3)).astype(np.float32)
    with graph.as_default():
        fill_weights(model)
        want = model.predict(x)
        model.save(str(tmp_path / "densenet.h5"))
    np.save(tmp_path / "x.npy", x)
    out = subprocess.run([sys.executable, "-c", _LOAD, str(tmp_path / "densenet.h5"),
                          str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["densenet121", "429", "7041604"]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_imagenet_weights_offline_error_then_local_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with tf.Graph().as_default(), pytest.raises(FileNotFoundError) as err:
        A.DenseNet121(include_top=False, input_shape=(32, 32, 3))
    message = str(err.value)
    assert "densenet121" in message and "does not download" in message
    assert ("https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
            "densenet121_weights_tf_dim_ordering_tf_kernels_notop.h5") in message
    assert "weights=" in message
    source, graph = build("DenseNet121", include_top=False, input_shape=(32, 32, 3))
    with graph.as_default():
        fill_weights(source, seed=3)
        saved = source.get_weights()
        source.save_weights(str(tmp_path / "local.h5"))
    with tf.Graph().as_default():
        loaded = A.DenseNet121(weights=str(tmp_path / "local.h5"), include_top=False,
                               input_shape=(32, 32, 3)).get_weights()
    assert len(loaded) == len(saved) == 604
    for a, b in zip(saved, loaded, strict=True):
        np.testing.assert_array_equal(a, b)
