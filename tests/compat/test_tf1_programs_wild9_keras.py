"""TF1 programs "from the wild", round 9, Keras in graph mode: Sequential, functional and
subclassed models of the 2017-2020 tutorials (callbacks with format-string checkpoints,
early stopping with restored weights, plateau schedules, CSV logs, LambdaCallbacks that
print batch logs, class and sample weights, multi-output models with loss weights,
`fit_generator` over `Sequence`s, `K.function` with the learning phase, h5 and TF-format
weights, custom layers with configs, masked Bidirectional LSTMs, BatchNormalization
updates, `model_to_estimator`), and the grouped / nested-name models of the Keras
applications.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. Classes of discrepancy found and
fixed: ``groups`` of the convolutions (public ``Conv1D/2D/3D(groups=)``, the key in every
convolution's config, the errors); a model with a ``TensorFlowOpLayer`` reloading without
``custom_objects``; h5 files of layer names that prefix one another (nested groups, as
Keras writes them); string initializer names ('identity', 'constant',
'variance_scaling', the class names); ``SeparableConv*``'s config keys; compiled metrics
given as strings ('acc', 'mae', ...) being running means in batch logs and across
``evaluate`` -> ``train_on_batch``; per-output losses as means of batch values;
``LambdaCallback``'s other hooks; ``fit_generator(shuffle=False)``; count-weighted
metrics of ``evaluate`` on a generator; ``if training:`` in a subclassed ``call``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras.backend
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _r(v, n=4):
    return np.round(np.asarray(v, dtype=np.float64), n).tolist()


# -- grouped convolutions are public layers ---------------------------------------------
def test_conv2d_groups_values_gradients_and_config():
    x = tf.keras.Input((5, 5, 4))
    layer = L.Conv2D(6, 3, groups=2, kernel_initializer=tf.keras.initializers.Constant(0.1),
                     name="g")
    y = layer(x)
    assert y.shape.as_list() == [None, 3, 3, 6]
    assert layer.kernel.shape.as_list() == [3, 3, 2, 6]
    grads = tf.gradients(tf.reduce_sum(y * y), [x, layer.kernel])
    xv = np.arange(100, dtype=np.float32).reshape(1, 5, 5, 4) / 100
    sess = K.get_session()
    out = sess.run([y, *grads], {x: xv})
    np.testing.assert_allclose(out[0][0, 0, 0], [0.441, 0.441, 0.441, 0.477, 0.477, 0.477],
                               atol=1e-4)
    assert round(float(out[1].sum()), 2) == 173.21
    assert round(float(out[2].sum()), 2) == 954.79
    assert layer.get_config()["groups"] == 2
    assert L.Conv2D(6, 3, groups=0).groups == 1  # as Keras: 0 means 1


def test_conv_groups_for_every_convolution_as_tf():
    shapes = {"Conv1D": (5, 4), "Conv3D": (5, 5, 5, 4)}
    got = {}
    for name in ("Conv1D", "Conv3D", "Conv2DTranspose", "SeparableConv2D",
                 "DepthwiseConv2D"):
        inp = tf.keras.Input(shapes.get(name, (5, 5, 4)))
        layer = L.DepthwiseConv2D(3, groups=2) if name == "DepthwiseConv2D" else \
            getattr(L, name)(6, 3, groups=2)
        out = layer(inp)
        got[name] = (out.shape.as_list(), [w.shape.as_list() for w in layer.weights],
                     layer.get_config()["groups"])
    # TF: grouped Conv1D/3D; the transposed, separable and depthwise ones keep `groups`
    # in their config and ignore it
    assert got == {
        "Conv1D": ([None, 3, 6], [[3, 2, 6], [6]], 2),
        "Conv3D": ([None, 3, 3, 3, 6], [[3, 3, 3, 2, 6], [6]], 2),
        "Conv2DTranspose": ([None, 7, 7, 6], [[3, 3, 6, 4], [6]], 2),
        "SeparableConv2D": ([None, 3, 3, 6], [[3, 3, 4, 1], [1, 1, 4, 6], [6]], 2),
        "DepthwiseConv2D": ([None, 3, 3, 4], [[3, 3, 4, 1], [4]], 2),
    }
    with pytest.raises(ValueError, match=r"The number of filters must be evenly divisible "
                       r"by the number of groups. Received: groups=2, filters=5"):
        L.Conv2D(5, 3, groups=2)
    with pytest.raises(ValueError, match=r"Received groups=3, but the input has 4 channels "
                       r"\(full input shape is \(\?, 5, 5, 4\)\)"):
        L.Conv2D(6, 3, groups=3)(tf.keras.Input((5, 5, 4)))


def test_conv_configs_have_tf_keys():
    keys = {n: sorted(getattr(L, n)(4, 3).get_config()) for n in ("Conv1D", "Conv2D",
                                                                   "SeparableConv2D")}
    assert "groups" in keys["Conv1D"] and "groups" in keys["Conv2D"]
    assert keys["SeparableConv2D"] == [
        "activation", "activity_regularizer", "bias_constraint", "bias_initializer",
        "bias_regularizer", "data_format", "depth_multiplier", "depthwise_constraint",
        "depthwise_initializer", "depthwise_regularizer", "dilation_rate", "dtype",
        "filters", "groups", "kernel_constraint", "kernel_initializer",
        "kernel_regularizer", "kernel_size", "name", "padding", "pointwise_constraint",
        "pointwise_initializer", "pointwise_regularizer", "strides", "trainable",
        "use_bias"]
    assert "groups" in L.DepthwiseConv2D(3).get_config()


def test_grouped_model_with_op_layer_reloads_without_custom_objects(tmp_path):
    from flowgraph.keras.layers_tf_op import TensorFlowOpLayer

    inp = tf.keras.Input((6, 6, 4))
    x = L.Conv2D(4, 3, groups=2, padding="same", name="gconv",
                 kernel_initializer=tf.keras.initializers.Constant(0.05))(inp)
    x = TensorFlowOpLayer("add")([x, inp])
    x = L.Dropout(0.3, noise_shape=(None, 1, 1, 4), name="drop")(x)
    model = tf.keras.Model(inp, x)
    config = json.loads(model.to_json())
    assert [la["class_name"] for la in config["config"]["layers"]] == [
        "InputLayer", "Conv2D", "TensorFlowOpLayer", "Dropout"]
    assert config["config"]["layers"][3]["config"]["noise_shape"] == [None, 1, 1, 4]
    again = tf.keras.models.model_from_json(model.to_json())  # no custom_objects
    assert again.get_layer("gconv").groups == 2
    path = str(tmp_path / "g.h5")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    xv = np.linspace(0, 1, 2 * 6 * 6 * 4, dtype=np.float32).reshape(2, 6, 6, 4)
    np.testing.assert_allclose(loaded.predict(xv), model.predict(xv), rtol=1e-6)


# -- h5 files of nested layer names (MobileNetV3's 'expanded_conv/depthwise/BatchNorm') --
def test_h5_layer_names_that_prefix_each_other(tmp_path):
    h5py = pytest.importorskip("h5py")
    inp = tf.keras.Input((5, 5, 2))
    a = L.Conv2D(3, 1, name="exp/depthwise",
                 kernel_initializer=tf.keras.initializers.Constant(0.5))(inp)
    b = L.BatchNormalization(name="exp/depthwise/BatchNorm")(a)
    c = L.Conv2D(2, 1, name="exp", kernel_initializer=tf.keras.initializers.Constant(0.25))(b)
    model = tf.keras.Model(inp, c)
    path = str(tmp_path / "m.h5")
    model.save(path)
    with h5py.File(path, "r") as f:
        g = f["model_weights"]
        names = []
        g.visititems(lambda n, o: names.append(n))
        # TF 2.15's layout: a '/' nests groups; 'exp' holds its own weights and the others
        assert "exp/depthwise/BatchNorm/exp/depthwise/BatchNorm/beta:0" in names
        assert "exp/depthwise/exp/depthwise/kernel:0" in names
        assert "exp/exp/kernel:0" in names
        assert [n.decode() if isinstance(n, bytes) else n
                for n in g["exp"].attrs["weight_names"]] == ["exp/kernel:0", "exp/bias:0"]
    loaded = tf.keras.models.load_model(path)
    assert [_r(w.ravel()[:2], 3) for w in loaded.get_weights()] == [
        [0.5, 0.5], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0],
        [0.25, 0.25], [0.0, 0.0]]
    model.save_weights(str(tmp_path / "w.h5"))
    model.load_weights(str(tmp_path / "w.h5"), by_name=True)


# -- initializers by string -----------------------------------------------------------------
@pytest.mark.parametrize("name,total,class_name", [
    ("identity", 3.0, "Identity"), ("Identity", 3.0, "Identity"),
    ("constant", 0.0, "Constant"), ("variance_scaling", 0.133, "VarianceScaling"),
    ("VarianceScaling", 0.133, "VarianceScaling"), ("GlorotUniform", 0.317, "GlorotUniform"),
    ("Zeros", 0.0, "Zeros"), ("RandomNormal", -0.064, "RandomNormal"),
    ("HeNormal", 0.188, "HeNormal"), ("Orthogonal", -0.603, "Orthogonal"),
    ("TruncatedNormal", 0.01, "TruncatedNormal")])
def test_string_initializers(name, total, class_name):
    tf.set_random_seed(1)
    layer = L.Dense(3, kernel_initializer=name, name="d")
    model = tf.keras.Sequential([layer])
    model.build((None, 3))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert round(float(sess.run(layer.kernel).sum()), 3) == total
    saved = next(la for la in json.loads(model.to_json())["config"]["layers"]
                 if la["class_name"] == "Dense")["config"]
    assert saved["kernel_initializer"]["class_name"] == class_name


# -- compiled metrics are running means --------------------------------------------------
def _binary_model(metrics):
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(3,),
                                         kernel_initializer=tf.keras.initializers.Constant(0.3))])
    model.compile(tf.keras.optimizers.SGD(0.5), "binary_crossentropy", metrics=metrics)
    return model


def _binary_data():
    x = np.random.RandomState(0).rand(10, 3).astype(np.float32)
    return x, (x.sum(1, keepdims=True) > 1.5).astype(np.float32)


def test_batch_logs_report_running_metrics_and_lambda_callback_hooks():
    x, y = _binary_data()
    model = _binary_model(["acc", "mae", tf.keras.metrics.BinaryAccuracy(name="ba")])
    seen = []

    def show(tag):
        return lambda b, logs: seen.append(
            (tag, b, {k: round(float(v), 4) for k, v in sorted(logs.items())
                      if k not in ("batch", "size")}))

    cb = tf.keras.callbacks.LambdaCallback(on_batch_end=show("batch"))
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False, callbacks=[cb])
    ev = tf.keras.callbacks.LambdaCallback(on_test_batch_end=show("test"))
    assert _r(model.evaluate(x, y, batch_size=4, verbose=0, callbacks=[ev])) == [
        0.4536, 0.8, 0.3453, 0.8]
    # TF: the loss is the batch's, the metrics the running result of the epoch
    assert seen == [
        ("batch", 0, {"acc": 1.0, "ba": 1.0, "loss": 0.4522, "mean_absolute_error": 0.3635}),
        ("batch", 1, {"acc": 0.875, "ba": 0.875, "loss": 0.4853,
                      "mean_absolute_error": 0.3604}),
        ("batch", 2, {"acc": 0.8, "ba": 0.8, "loss": 0.6784, "mean_absolute_error": 0.3794}),
        ("test", 0, {"acc": 1.0, "ba": 1.0, "loss": 0.3354, "mean_absolute_error": 0.2846}),
        ("test", 1, {"acc": 0.875, "ba": 0.875, "loss": 0.475,
                     "mean_absolute_error": 0.3194}),
        ("test", 2, {"acc": 0.8, "ba": 0.8, "loss": 0.6469, "mean_absolute_error": 0.3453}),
    ]


def test_train_on_batch_after_evaluate_continues_the_running_metrics():
    x, y = _binary_data()
    model = _binary_model(["acc", "mae"])
    h = model.fit(x, y, batch_size=3, epochs=2, verbose=0, shuffle=False,
                  validation_split=0.2)
    assert sorted(h.history) == ["acc", "loss", "mean_absolute_error", "val_acc", "val_loss",
                                 "val_mean_absolute_error"]
    assert _r(h.history["acc"]) == [0.875, 0.875]
    assert _r(h.history["mean_absolute_error"]) == [0.3489, 0.2585]
    assert _r(model.evaluate(x, y, batch_size=3, verbose=0)) == [0.3993, 0.8, 0.2712]
    # TF: evaluate leaves its state; train_on_batch adds this batch and resets after it
    assert _r(model.train_on_batch(x[:3], y[:3])) == [0.1749, 0.8462, 0.2456]
    assert _r(model.train_on_batch(x[3:6], y[3:6])) == [0.5679, 0.6667, 0.3509]
    assert _r(model.test_on_batch(x[:3], y[:3])) == [0.1635, 1.0, 0.1505]


def test_multi_output_losses_are_means_of_batch_values():
    a, b = tf.keras.Input((2,), name="a"), tf.keras.Input((2,), name="b")
    c = L.concatenate([a, b])
    o1 = L.Dense(1, name="reg", kernel_initializer=tf.keras.initializers.Constant(0.1))(c)
    o2 = L.Dense(3, activation="softmax", name="cls",
                 kernel_initializer=tf.keras.initializers.Constant(0.05))(c)
    model = tf.keras.Model([a, b], [o1, o2])
    model.compile(tf.keras.optimizers.SGD(0.1),
                  loss={"reg": "mse", "cls": "categorical_crossentropy"},
                  loss_weights={"reg": 1.0, "cls": 0.5},
                  metrics={"cls": ["acc"], "reg": ["mae"]})
    rng = np.random.RandomState(3)
    xa, xb = rng.rand(9, 2).astype(np.float32), rng.rand(9, 2).astype(np.float32)
    yr = xa.sum(1, keepdims=True)
    yc = np.eye(3, dtype=np.float32)[rng.randint(0, 3, 9)]
    rows = []
    cb = tf.keras.callbacks.LambdaCallback(on_batch_end=lambda bt, logs=None: rows.append(
        _r([logs["loss"], logs["reg_loss"], logs["cls_loss"]])))
    h = model.fit({"a": xa, "b": xb}, {"reg": yr, "cls": yc}, batch_size=4, epochs=2,
                  shuffle=False, verbose=0, callbacks=[cb])
    assert rows[:3] == [[1.5386, 0.9892, 1.0986], [0.6274, 0.5437, 1.0785],
                        [0.5811, 0.3678, 1.0958]]
    assert _r(h.history["loss"]) == [1.0272, 0.6752]
    assert _r(h.history["reg_loss"]) == [0.3678, 0.1233]
    assert _r(h.history["cls_loss"]) == [1.0958, 1.0449]
    assert _r(model.evaluate([xa, xb], [yr, yc], batch_size=4, verbose=0)) == [
        0.6061, 0.0878, 1.0001, 0.2416, 0.7778]
    assert _r(model.train_on_batch([xa, xb], [yr, yc])) == [
        0.6061, 0.0951, 0.9947, 0.2416, 0.7778]


# -- generators and Sequences ------------------------------------------------------------
class _Seq(tf.keras.utils.Sequence):
    def __init__(self, n, bs):
        self.x = np.arange(n * 2, dtype=np.float32).reshape(n, 2) / n
        self.y = self.x.sum(1, keepdims=True)
        self.bs = bs

    def __len__(self):
        return int(np.ceil(len(self.x) / float(self.bs)))

    def __getitem__(self, i):
        return self.x[i * self.bs:(i + 1) * self.bs], self.y[i * self.bs:(i + 1) * self.bs]


def test_fit_generator_keeps_order_without_shuffle_and_evaluate_weights_by_examples():
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(0.2), "mse", metrics=["mae"])
    h = model.fit_generator(_Seq(12, 4), epochs=3, verbose=0, shuffle=False)
    assert _r(h.history["loss"]) == [0.9586, 0.2621, 0.2063]
    assert _r(h.history["mean_absolute_error"]) == [0.7453, 0.4184, 0.3982]
    # batches of 5, 5 and 2: the loss averaged per step, the metric per example
    assert _r(model.evaluate_generator(_Seq(12, 5))) == [0.2055, 0.4552]


# -- subclassed models ------------------------------------------------------------------
def test_subclassed_call_branching_on_training():
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.d1 = L.Dense(4, activation="relu",
                              kernel_initializer=tf.keras.initializers.Constant(0.1))
            self.d2 = L.Dense(1, kernel_initializer=tf.keras.initializers.Constant(0.2))

        def call(self, x, training=None):
            h = self.d1(x)
            if training:
                h = h * 0.5
            return self.d2(h)

    model = Net()
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    x, y = np.ones((6, 3), np.float32), np.ones((6, 1), np.float32)
    h = model.fit(x, y, batch_size=3, epochs=2, verbose=0)
    assert _r(h.history["loss"]) == [0.6026, 0.1711]
    assert [w.name for w in model.weights] == [
        "net/dense/kernel:0", "net/dense/bias:0", "net/dense_1/kernel:0",
        "net/dense_1/bias:0"]
    assert _r(model.predict(x[:2])) == [[1.0616], [1.0616]]
    assert round(float(model.evaluate(x, y, verbose=0)), 4) == 0.0038
    assert round(float(model.train_on_batch(x, y)), 4) == 0.0548


def test_load_weights_layer_count_mismatch_message(tmp_path):
    model = tf.keras.Sequential([L.Dense(2, input_shape=(3,)), L.Dense(1)])
    path = str(tmp_path / "w.h5")
    model.save_weights(path)
    other = tf.keras.Sequential([L.Dense(2, input_shape=(3,))])
    with pytest.raises(ValueError, match=r"^Layer count mismatch when loading weights from "
                       r"file\. Model expected 1 layers, found 2 saved layers"):
        other.load_weights(path)
