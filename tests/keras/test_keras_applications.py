"""tf.keras.applications with weights=None: architecture, layer and weight names and
parameter counts equal TF 2.15's (recorded with the tf-oracle); weights from local files;
preprocess_input / decode_predictions."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flowgraph as tf

A = tf.keras.applications


def _build(ctor, **kwargs):
    graph = tf.Graph()
    with graph.as_default():
        model = getattr(A, ctor)(weights=None, **kwargs)
    return model, graph


# ctor, kwargs, name, params, trainable, layers, first 4, last 4, input, output, weights
CASES = [
    ("MobileNet", {}, "mobilenet_1.00_224", 4253864, 4231976, 91,
     ["input_1", "conv1", "conv1_bn", "conv1_relu"],
     ["dropout", "conv_preds", "reshape_2", "predictions"], [None, 224, 224, 3],
     [None, 1000], 137),
    ("MobileNet", dict(alpha=0.5, input_shape=(96, 96, 3), classes=10), "mobilenet_0.50_96",
     834666, 823722, 91, None, None, [None, 96, 96, 3], [None, 10], 137),
    ("MobileNet", dict(include_top=False, input_shape=(64, 64, 3), pooling="avg"),
     "mobilenet_1.00_64", 3228864, 3206976, 87, None,
     ["conv_pw_13", "conv_pw_13_bn", "conv_pw_13_relu", "global_average_pooling2d"],
     [None, 64, 64, 3], [None, 1024], 135),
    ("MobileNetV2", {}, "mobilenetv2_1.00_224", 3538984, 3504872, 156,
     ["input_1", "Conv1", "bn_Conv1", "Conv1_relu"],
     ["Conv_1_bn", "out_relu", "global_average_pooling2d", "predictions"],
     [None, 224, 224, 3], [None, 1000], 262),
    ("MobileNetV2", dict(alpha=0.35, input_shape=(96, 96, 3), classes=7),
     "mobilenetv2_0.35_96", 419175, 405095, 156, None, None, [None, 96, 96, 3], [None, 7],
     262),
    ("MobileNetV2", dict(include_top=False, input_shape=(64, 64, 3), pooling="max",
                         alpha=1.3), "mobilenetv2_1.30_64", 3766048, 3721792, 155, None,
     ["Conv_1", "Conv_1_bn", "out_relu", "global_max_pooling2d"], [None, 64, 64, 3],
     [None, 1664], 260),
    ("ResNet50", {}, "resnet50", 25636712, 25583592, 177,
     ["input_1", "conv1_pad", "conv1_conv", "conv1_bn"],
     ["conv5_block3_add", "conv5_block3_out", "avg_pool", "predictions"],
     [None, 224, 224, 3], [None, 1000], 320),
    ("ResNet50", dict(include_top=False, input_shape=(64, 64, 3)), "resnet50", 23587712,
     23534592, 175, None,
     ["conv5_block3_3_conv", "conv5_block3_3_bn", "conv5_block3_add", "conv5_block3_out"],
     [None, 64, 64, 3], [None, 2, 2, 2048], 318),
    ("VGG16", {}, "vgg16", 138357544, 138357544, 23,
     ["input_1", "block1_conv1", "block1_conv2", "block1_pool"],
     ["flatten", "fc1", "fc2", "predictions"], [None, 224, 224, 3], [None, 1000], 32),
    ("VGG16", dict(include_top=False, input_shape=(48, 48, 3), pooling="avg"), "vgg16",
     14714688, 14714688, 20, None,
     ["block5_conv2", "block5_conv3", "block5_pool", "global_average_pooling2d"],
     [None, 48, 48, 3], [None, 512], 26),
    ("VGG16", dict(classes=5, input_shape=(32, 32, 3)), "vgg16", 33617733, 33617733, 23,
     None, None, [None, 32, 32, 3], [None, 5], 32),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_architecture_matches_tf(case):
    ctor, kwargs, name, params, trainable, n_layers, first, last, shape_in, shape_out, \
        n_weights = case
    model, _ = _build(ctor, **kwargs)
    assert model.name == name
    assert model.count_params() == params
    assert sum(int(np.prod(w.shape.as_list())) for w in model.trainable_weights) == trainable
    assert len(model.layers) == n_layers and len(model.weights) == n_weights
    if first:
        assert [layer.name for layer in model.layers[:4]] == first
    if last:
        assert [layer.name for layer in model.layers[-4:]] == last
    assert model.input.shape.as_list() == shape_in
    assert model.output.shape.as_list() == shape_out


def test_full_layer_and_weight_names_resnet50_block():
    model, _ = _build("ResNet50")
    names = [layer.name for layer in model.layers]
    # Keras' depth order puts the shortcut branch after the main branch's convolutions.
    assert names[7:19] == [
        "conv2_block1_1_conv", "conv2_block1_1_bn", "conv2_block1_1_relu",
        "conv2_block1_2_conv", "conv2_block1_2_bn", "conv2_block1_2_relu",
        "conv2_block1_0_conv", "conv2_block1_3_conv", "conv2_block1_0_bn",
        "conv2_block1_3_bn", "conv2_block1_add", "conv2_block1_out"]
    assert [w.name for w in model.weights][:4] == [
        "conv1_conv/kernel:0", "conv1_conv/bias:0", "conv1_bn/gamma:0", "conv1_bn/beta:0"]
    mobile, _ = _build("MobileNetV2")
    assert [w.name for w in mobile.weights][5:8] == [
        "expanded_conv_depthwise/depthwise_kernel:0", "expanded_conv_depthwise_BN/gamma:0",
        "expanded_conv_depthwise_BN/beta:0"]


@pytest.mark.slow
def test_more_variants_match_tf():
    for ctor, kwargs, name, params, n_layers, last in [
        ("MobileNet", dict(alpha=0.25, input_shape=(32, 32, 3), classes=10),
         "mobilenet_0.25_32", 221114, 91, "predictions"),
        ("MobileNetV2", dict(alpha=0.35, input_shape=(32, 32, 3), classes=10),
         "mobilenetv2_0.35_32", 423018, 156, "predictions"),
        ("VGG19", dict(include_top=False, input_shape=(32, 32, 3), pooling="max"), "vgg19",
         20024384, 23, "global_max_pooling2d"),
        ("MobileNet", dict(depth_multiplier=2, alpha=0.75, input_shape=(128, 128, 3),
                           include_top=False), "mobilenet_0.75_128", 3647352, 86,
         "conv_pw_13_relu"),
    ]:
        model, _ = _build(ctor, **kwargs)
        assert (model.name, model.count_params(), len(model.layers),
                model.layers[-1].name) == (name, params, n_layers, last)


def test_input_tensor_and_pooling_none():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 40, 40, 3])
        model = A.VGG16(weights=None, include_top=False, input_tensor=x)
        assert model.count_params() == 14714688
        assert model.output.shape.as_list() == [None, 1, 1, 512]
        model = A.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3),
                           pooling="nope")
        assert model.output.shape.as_list() == [None, 1, 1, 2048]


def test_argument_errors_as_tf():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"`classes` should be 1000"):
            A.VGG16(weights="imagenet", classes=10)
        with pytest.raises(ValueError, match="The `weights` argument should be either `None`"):
            A.VGG16(weights="foo")
        with pytest.raises(ValueError, match="Input size must be at least 32x32"):
            A.ResNet50(weights=None, include_top=False, input_shape=(16, 16, 3))
        with pytest.raises(ValueError, match="you should specify a static `input_shape`"):
            A.VGG16(weights=None, input_shape=(None, None, 3))
        assert A.MobileNet(weights=None, input_shape=(50, 50, 3)).name == "mobilenet_1.00_50"
        assert A.MobileNetV2(weights=None, alpha=0.9).name == "mobilenetv2_0.90_224"


def test_imagenet_weights_missing_then_from_cache_and_path(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    kwargs = dict(alpha=0.25, include_top=False, input_shape=(128, 128, 3))
    fname = "mobilenet_2_5_128_tf_no_top.h5"
    with tf.Graph().as_default():
        with pytest.raises(FileNotFoundError) as e:
            A.MobileNet(**kwargs)
    msg = str(e.value)
    assert str(tmp_path / "models" / fname) in msg
    assert "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/" in msg
    with tf.Graph().as_default():
        source = A.MobileNet(weights=None, **kwargs)
        saved = source.get_weights()
        (tmp_path / "models").mkdir()
        source.save_weights(str(tmp_path / "models" / fname))
    with tf.Graph().as_default():
        loaded = A.MobileNet(weights="imagenet", **kwargs).get_weights()
    with tf.Graph().as_default():
        by_path = A.MobileNet(weights=str(tmp_path / "models" / fname), **kwargs).get_weights()
    assert len(saved) == len(loaded) == len(by_path) == 135
    for a, b, c in zip(saved, loaded, by_path, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


X = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) * 10


def test_preprocess_input_as_tf():
    tf_mode = A.mobilenet.preprocess_input(X.copy())
    assert tf_mode.dtype == np.float32
    np.testing.assert_allclose(tf_mode[0, 0, 0], [-1.0, -0.9216, -0.8431], atol=1e-4)
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(X.copy()), tf_mode)
    caffe = A.vgg16.preprocess_input(X.copy())
    np.testing.assert_allclose(caffe[0, 0, 0], [-83.939, -106.779, -123.68], atol=1e-3)
    np.testing.assert_allclose(caffe[1, 1, 1], [126.061, 103.221, 86.32], atol=1e-3)
    np.testing.assert_allclose(A.resnet50.preprocess_input(X.copy()), caffe)
    first = A.resnet50.preprocess_input(X.copy().transpose(0, 3, 1, 2),
                                        data_format="channels_first")
    np.testing.assert_allclose(first, caffe.transpose(0, 3, 1, 2), atol=1e-4)
    np.testing.assert_allclose(A.mobilenet.preprocess_input(np.array([[0, 255]], np.uint8)),
                               [[-1.0, 1.0]])
    np.testing.assert_allclose(A.resnet50.preprocess_input(np.array([[[1, 2, 3]]], np.int64)),
                               [[[-100.939, -114.779, -122.68]]], atol=1e-3)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 4, 3])
        y, z = A.vgg16.preprocess_input(x), A.mobilenet.preprocess_input(x)
        feed = np.broadcast_to(np.array([0.0, 1.0, 2.0], np.float32), (1, 4, 4, 3))
        with tf.Session() as sess:
            got_y, got_z = sess.run([y, z], {x: feed})
    np.testing.assert_allclose(got_y[0, 0, 0], [-101.939, -115.779, -123.68], atol=1e-3)
    np.testing.assert_allclose(got_z[0, 0, 0], [-1.0, -0.99216, -0.98431], atol=1e-4)


def test_decode_predictions(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    preds = np.zeros((2, 1000), np.float32)
    preds[0, [3, 7, 9]] = [0.5, 0.3, 0.2]
    preds[1, 999] = 0.9
    with pytest.raises(FileNotFoundError, match=r"imagenet_class_index\.json"):
        A.vgg16.decode_predictions(preds, top=2)
    with pytest.raises(ValueError, match=r"expects a batch of predictions .*\(2, 10\)"):
        A.vgg16.decode_predictions(np.zeros((2, 10)), top=2)
    (tmp_path / "models").mkdir()
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    (tmp_path / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    out = A.mobilenet.decode_predictions(preds, top=2)
    assert [(c, n) for c, n, _ in out[0]] == [("n00000003", "class_3"), ("n00000007", "class_7")]
    assert out[0][0][2] == pytest.approx(0.5) and out[1][0][:2] == ("n00000999", "class_999")


@pytest.mark.slow
def test_small_mobilenet_trains_from_scratch():
    rng = np.random.RandomState(0)
    x = rng.rand(16, 32, 32, 3).astype(np.float32)
    y = (x[:, :, :, 0].mean(axis=(1, 2)) > 0.5).astype(np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        model = A.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3), classes=2)
        model.compile(tf.keras.optimizers.Adam(0.001), "sparse_categorical_crossentropy")
        history = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
        probs = model.predict(x[:2])
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    np.testing.assert_allclose(probs.sum(axis=1), [1.0, 1.0], rtol=1e-5)


def test_hdf5_round_trip_rebuilds_depthwise_layers(tmp_path):
    path = str(tmp_path / "mobilenet.h5")
    x = np.random.RandomState(0).rand(2, 32, 32, 3).astype(np.float32)
    with tf.Graph().as_default():
        model = A.MobileNet(weights=None, alpha=0.25, input_shape=(32, 32, 3), classes=3)
        model.save(path)
        expected = model.predict(x)
    with tf.Graph().as_default():
        restored = tf.keras.models.load_model(path)
        assert restored.name == "mobilenet_0.25_32"
        assert type(restored.get_layer("conv_dw_1")).__name__ == "DepthwiseConv2D"
        np.testing.assert_allclose(restored.predict(x), expected, rtol=1e-5)
