"""TF1 Estimator and tf.keras programs "from the wild" (round 2), run unchanged under
``import flowgraph as tf``.

Each program was first run under real TensorFlow 2.15's ``tf.compat.v1`` with the
tf-oracle; the values asserted here are the ones TensorFlow printed. They pin the classes
of discrepancy the sweep found and fixed: `tf.estimator.add_metrics`, evaluating before
any checkpoint (TF evaluates the initialized model), `WarmStartSettings` defaults, the
`tf.keras.backend` tensor functions and ``K.function``, metric names in `fit` histories
(``'mse'`` reported as ``mean_squared_error``), `fit(sample_weight=, class_weight=)`,
Keras loss and metric classes, Keras's RMSprop slot initialization, the functional
model's layer order, and model configuration / JSON / whole-model files.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras.backend


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


# -- Estimator -------------------------------------------------------------------------------
def _regression_model_fn(features, labels, mode):
    dense = tf.layers.dense(features["x"], 1, kernel_initializer=tf.zeros_initializer())
    pred = tf.squeeze(dense, 1)
    loss = tf.losses.mean_squared_error(labels, pred)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, predictions=pred,
        eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, pred)},
        train_op=tf.train.GradientDescentOptimizer(0.05).minimize(
            loss, tf.train.get_global_step()))


def _xy():
    x = np.linspace(0, 1, 20).reshape(10, 2).astype(np.float32)
    return x, x.sum(1)


def test_add_metrics_extends_evaluation(tmp_path):
    x, y = _xy()
    est = tf.estimator.Estimator(_regression_model_fn, model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=2, num_epochs=None,
                                                 shuffle=False), steps=2)
    ev = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=5, num_epochs=1,
                                            shuffle=False)

    def metric_fn(labels, predictions):
        return {"mse2": tf.metrics.mean_squared_error(labels, predictions),
                "meanp": tf.metrics.mean(predictions)}

    est2 = tf.estimator.add_metrics(est, metric_fn)
    # TF 2.15: an Estimator on the same model_dir; the keys below
    assert type(est2).__name__ == "Estimator" and est2.model_dir == est.model_dir
    assert sorted(est2.evaluate(ev)) == ["global_step", "loss", "mae", "meanp", "mse2"]
    assert sorted(tf.estimator.add_metrics(
        est, lambda features, predictions: {"mx": tf.metrics.mean(features["x"])}
    ).evaluate(ev)) == ["global_step", "loss", "mae", "mx"]

    def bad(labels, predictions, foo):
        return {}

    with pytest.raises(ValueError, match=r"has following not expected args: \['foo'\]"):
        tf.estimator.add_metrics(est, bad)


def test_evaluate_without_checkpoint_uses_initial_values(tmp_path):
    x, y = _xy()
    fc = [tf.feature_column.numeric_column("x", shape=[2])]
    reg = tf.estimator.LinearRegressor(fc, model_dir=str(tmp_path))
    r = reg.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=10,
                                                        num_epochs=1, shuffle=False))
    # TF 2.15 (zero-initialized linear model)
    assert r["global_step"] == 0 and r["global_step"].dtype == np.int64
    np.testing.assert_allclose([r["average_loss"], r["loss"], r["label/mean"],
                                r["prediction/mean"]], [1.3657, 13.6565, 1.0, 0.0],
                               atol=1e-4)


def test_warm_start_settings_and_messages():
    ws = tf.estimator.WarmStartSettings("/tmp/x", vars_to_warm_start=".*bias.*")
    assert (ws.vars_to_warm_start, ws.var_name_to_vocab_info,
            ws.var_name_to_prev_var_name) == (".*bias.*", {}, {})  # TF 2.15
    with pytest.raises(ValueError, match="Only one of `run_every_secs` and `run_every_steps` "
                                         "must be set"):
        tf.estimator.experimental.stop_if_no_decrease_hook(
            tf.estimator.Estimator(_regression_model_fn), "loss", 4, run_every_secs=10,
            run_every_steps=2)
    with pytest.raises(ValueError, match="At least one of `scores` and `classes` must be"):
        tf.estimator.export.ClassificationOutput()

    def serving():
        x = tf.placeholder(tf.float32, [None, 2])
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    latest = tf.estimator.LatestExporter("latest", serving)
    with pytest.raises(ValueError, match=r"All exporter names: \['latest', 'latest'\]"):
        tf.estimator.EvalSpec(lambda: None, exporters=[latest, latest])


def test_hooks_scaffold_and_listeners_in_all_modes(tmp_path):
    x = np.linspace(0, 1, 16).reshape(8, 2).astype(np.float32)
    y = x.sum(1)
    events = []

    class Rec(tf.train.SessionRunHook):
        def __init__(self, tag):
            self.tag, self.n = tag, 0

        def begin(self):
            events.append(self.tag + ":begin")

        def before_run(self, ctx):  # get_global_step() works in every mode's graph
            return tf.train.SessionRunArgs({"gs": tf.train.get_global_step()})

        def after_run(self, ctx, vals):
            self.n += 1

        def end(self, session):
            events.append(f"{self.tag}:end:{self.n}")

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        extra = tf.get_variable("extra", [], initializer=tf.zeros_initializer(),
                                trainable=False)
        pred = tf.squeeze(tf.matmul(features["x"], w), 1)
        set_extra = extra.assign(5.0)
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: sess.run(set_extra))
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"e": extra + 0 * pred},
                                              scaffold=scaffold)
        loss = tf.losses.mean_squared_error(labels, pred)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold,
                                          training_hooks=[Rec("spec")])

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=2, num_epochs=None,
                                                 shuffle=False), steps=5, hooks=[Rec("user")])
    # TF 2.15
    assert events == ["user:begin", "spec:begin", "user:end:5", "spec:end:5"]
    assert est.get_variable_value("extra") == 5.0
    events.clear()
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x[:2]}, shuffle=False),
                             hooks=[Rec("pred")]))
    assert [float(p["e"]) for p in preds] == [5.0, 5.0]
    assert events == ["pred:begin", "pred:end:1"]


# -- tf.keras.backend ------------------------------------------------------------------------
def test_backend_function_and_shapes():
    inp = tf.keras.layers.Input(shape=(3,))
    h = tf.keras.layers.Dense(2, kernel_initializer="ones", name="hid")(inp)
    out = tf.keras.layers.Dense(1, kernel_initializer="ones", name="out")(h)
    model = tf.keras.Model(inp, out)
    assert (K.int_shape(inp), K.int_shape(out), K.ndim(inp), K.dtype(inp)) == \
        ((None, 3), (None, 1), 2, "float32")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = K.function([model.input], [model.get_layer("hid").output, model.output])
    a, b = f([x])
    assert a.tolist() == [[3.0, 3.0], [12.0, 12.0]] and b.tolist() == [[6.0], [24.0]]
    f2 = K.function([model.input, K.learning_phase()], [model.output])
    assert f2([x, 0])[0].tolist() == [[6.0], [24.0]]
    ph = K.placeholder(shape=(None, 4))
    assert (ph.shape.as_list(), K.is_keras_tensor(ph), K.is_keras_tensor(inp)) == \
        ([None, 4], False, True)


def test_backend_tensor_functions():
    c = K.constant([1.0, -2.0, 3.0])
    # TF 2.15 values
    expected = [
        (K.abs(c), [1.0, 2.0, 3.0]), (K.clip(c, -1, 1), [1.0, -1.0, 1.0]),
        (K.max(c), 3.0), (K.argmax(c), 2), (K.concatenate([c, c]), [1, -2, 3, 1, -2, 3]),
        (K.dot(K.ones((2, 3)), K.reshape(c, (3, 1))), [[2.0], [2.0]]),
        (K.relu(c), [1.0, 0.0, 3.0]), (K.softmax(K.reshape(c, (1, 3))),
                                       [[0.1185, 0.0059, 0.8756]]),
        (K.binary_crossentropy(K.constant([1.0, 0.0]), K.constant([0.9, 0.2])),
         [0.1054, 0.2231]),
        (K.categorical_crossentropy(K.constant([[0.0, 1.0]]), K.constant([[0.3, 0.7]])),
         [0.3567]),
        (K.std(c), 2.0548), (K.var(c), 4.2222), (K.round(c / 2.0), [0.0, -1.0, 2.0]),
        (K.switch(K.greater(c, 0.0), c, -c), [1.0, 2.0, 3.0]),
        (K.batch_flatten(K.ones((2, 2, 2))), np.ones((2, 4))),
        (K.l2_normalize(c, axis=0), [0.2673, -0.5345, 0.8018]), (K.prod(c), -6.0),
        (K.any(K.greater(c, 2.0)), True), (K.cumsum(c), [1.0, -1.0, 2.0]),
        (K.one_hot(K.constant([0, 2], dtype="int32"), 3), [[1, 0, 0], [0, 0, 1]]),
        (K.repeat_elements(c, 2, 0), [1, 1, -2, -2, 3, 3]),
        (K.permute_dimensions(K.ones((2, 3)), (1, 0)), np.ones((3, 2))),
        (K.sparse_categorical_crossentropy(K.constant([1.0]), K.constant([[0.3, 0.7]])),
         [0.3567]),
        (K.min(c, axis=0, keepdims=True), [-2.0]),
        (K.batch_dot(K.ones((2, 3)), K.ones((2, 3)), axes=1), [[3.0], [3.0]]),
    ]
    values = K.get_session().run([t for t, _ in expected])
    for got, (_, want) in zip(values, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-4)
    v = K.variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert (K.eval(v).tolist(), K.int_shape(v), K.dtype(v), K.count_params(v)) == \
        ([[1.0, 2.0], [3.0, 4.0]], (2, 2), "float32", 4)
    K.set_value(v, np.zeros((2, 2)))
    # K.ones makes a variable (as TF): create it before get_session initializes
    update = K.update_add(v, K.ones((2, 2)))
    K.get_session().run(update)
    assert K.get_value(v).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert (K.get_uid("foo"), K.get_uid("foo")) == (1, 2)
    with K.name_scope("blk"):
        assert K.constant(1.0).name == "blk/Const:0"


# -- compile / fit ---------------------------------------------------------------------------
def _binary_model():
    m = tf.keras.Sequential([
        tf.keras.layers.Dense(4, activation="relu", input_shape=(2,),
                              kernel_initializer=tf.keras.initializers.Constant(0.1)),
        tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="zeros")])
    m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy",
              metrics=["accuracy", "mse"])
    return m


def test_fit_history_names_and_weights():
    x = np.linspace(-1, 1, 60).reshape(30, 2).astype(np.float32)
    y = (x[:, 0] > x[:, 1]).astype(np.float32)
    m = _binary_model()
    h = m.fit(x, y, batch_size=10, epochs=2, verbose=0, validation_split=0.2, shuffle=False)
    # TF 2.15: a string metric is reported under its function's name
    assert m.metrics_names == ["loss", "acc", "mean_squared_error"]
    assert sorted(h.history) == ["acc", "loss", "mean_squared_error", "val_acc", "val_loss",
                                 "val_mean_squared_error"]
    np.testing.assert_allclose(h.history["loss"], [0.6748, 0.6067], atol=1e-4)
    np.testing.assert_allclose(h.history["val_mean_squared_error"], [0.214, 0.1835],
                               atol=1e-4)
    h2 = m.fit(x, y, epochs=1, verbose=0, class_weight={0: 1.0, 1: 2.0},
               validation_data=(x[:6], y[:6]), shuffle=False)
    assert "val_mean_squared_error" in h2.history
    h3 = m.fit(x, y, epochs=1, verbose=0, sample_weight=np.linspace(0.5, 1.5, 30),
               shuffle=False)
    np.testing.assert_allclose(h3.history["loss"], [0.5424], atol=1e-4)  # TF 2.15


def test_loss_and_metric_objects_in_compile():
    x = np.linspace(-1, 1, 60).reshape(30, 2).astype(np.float32)
    m2 = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,),
                                                    kernel_initializer="ones"),
                              tf.keras.layers.Softmax()])
    m2.compile(tf.keras.optimizers.Adam(0.01),
               loss=tf.keras.losses.SparseCategoricalCrossentropy(),
               metrics=[tf.keras.metrics.SparseCategoricalAccuracy()])
    h4 = m2.fit(x, (x[:, 0] > 0).astype(np.int32), epochs=1, batch_size=15, verbose=0)
    assert sorted(h4.history) == m2.metrics_names == ["loss", "sparse_categorical_accuracy"]
    m3 = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,),
                                                    kernel_initializer="ones")])
    m3.compile("rmsprop", loss=tf.keras.losses.MeanSquaredError(),
               metrics=[tf.keras.metrics.MeanAbsoluteError(), "mae"])
    m3.fit(x, x, epochs=1, batch_size=30, verbose=0)
    assert m3.metrics_names == ["loss", "mean_absolute_error"]  # the same name once
    tob = m3.train_on_batch(x[:4], x[:4])
    teb = m3.test_on_batch(x[:4], x[:4])
    # TF 2.15 (Keras's RMSprop: mean-square slot starting at zeros); float32 values
    assert isinstance(tob[0], np.float32) and isinstance(teb[0], np.float32)
    np.testing.assert_allclose([tob[0], teb[0]], [0.7729, 0.7583], atol=1e-4)


def test_loss_functions_and_classes():
    yt = tf.constant([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    yp = tf.constant([[0.2, 0.7], [0.6, 0.1], [0.9, 0.4]])
    L = tf.keras.losses
    # TF 2.15 values
    per_example = {
        "mean_squared_logarithmic_error": [0.0298, 0.0294, 0.0649],
        "hinge": [0.75, 0.75, 0.35], "squared_hinge": [0.765, 0.685, 0.185],
        "categorical_hinge": [0.5, 0.5, 0.0], "logcosh": [0.0321, 0.0415, 0.0876],
        "kld": [0.3567, 0.5108, 1.0217], "poisson": [0.6283, 0.6054, 1.1608],
        "cosine_similarity": [-0.9615, -0.9864, -0.9333],
    }
    reduced = {
        "MeanSquaredError": ("mean_squared_error", 0.11167, 0.145),
        "BinaryCrossentropy": ("binary_crossentropy", 0.36961, 0.4372),
        "CategoricalCrossentropy": ("categorical_crossentropy", 0.65061, 1.1147),
        "Hinge": ("hinge", 0.61667, 0.4833), "LogCosh": ("log_cosh", 0.05371, 0.0691),
        "KLDivergence": ("kl_divergence", 0.62972, 0.8),
        "CosineSimilarity": ("cosine_similarity", -0.96042, -0.9427),
        "Huber": ("huber_loss", 0.05583, 0.0725),
    }
    sess = tf.Session()
    for name, want in per_example.items():
        np.testing.assert_allclose(sess.run(getattr(L, name)(yt, yp)), want, atol=1e-4)
    for cls, (name, value, weighted) in reduced.items():
        obj = getattr(L, cls)()
        assert (obj.name, obj.reduction) == (name, "auto")
        got = sess.run([obj(yt, yp), obj(yt, yp, sample_weight=[1.0, 0.0, 2.0])])
        np.testing.assert_allclose(got, [value, weighted], atol=1e-4)
    np.testing.assert_allclose(sess.run([
        L.BinaryCrossentropy(label_smoothing=0.2)(yt, yp),
        L.CategoricalCrossentropy(label_smoothing=0.2)(yt, yp),
        L.BinaryCrossentropy(from_logits=True)(yt, yp),
        L.SparseCategoricalCrossentropy(from_logits=True)([1, 0, 0], yp),
        L.Huber(delta=0.1)(yt, yp)]), [0.4801, 0.7006, 0.5396, 0.4741, 0.0233], atol=1e-4)
    assert sess.run(L.MeanSquaredError(reduction="none")(yt, yp)).shape == (3,)
    assert sorted(L.MeanSquaredError().get_config().items()) == \
        [("fn", "mean_squared_error"), ("name", "mean_squared_error"), ("reduction", "auto")]
    with pytest.raises(ValueError, match="Invalid Reduction Key: foo"):
        L.MeanSquaredError(reduction="foo")
    assert not hasattr(L, "Reduction") and not hasattr(L, "huber")  # not in TF 1.x's


def test_metric_functions_and_objects():
    yt = tf.constant([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    yp = tf.constant([[0.2, 0.7], [0.6, 0.1], [0.9, 0.4]])
    M = tf.keras.metrics
    sess = K.get_session()
    np.testing.assert_allclose(sess.run([M.binary_accuracy(yt, yp), M.hinge(yt, yp),
                                         M.sparse_top_k_categorical_accuracy([1, 0, 0], yp,
                                                                             k=1)]),
                               [[1.0, 1.0, 0.5], [0.75, 0.75, 0.35], [1.0, 1.0, 1.0]])
    # TF 2.15 default names
    assert [M.MeanAbsoluteError().name, M.BinaryAccuracy().name, M.Mean().name,
            M.Accuracy().name, M.TopKCategoricalAccuracy().name] == \
        ["mean_absolute_error", "binary_accuracy", "mean", "accuracy",
         "top_k_categorical_accuracy"]
    mae = M.MeanAbsoluteError()
    up = mae.update_state(yt, yp)
    sess.run(tf.variables_initializer(mae.variables))
    sess.run(up)
    sess.run(up)
    assert round(float(sess.run(mae.result())), 4) == 0.2833
    mean = M.Mean()
    up = mean.update_state([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 1.0])
    sess.run(tf.variables_initializer(mean.variables))
    sess.run(up)
    assert float(sess.run(mean.result())) == 2.0 and len(mean.variables) == 2


# -- model structure, configuration and files ----------------------------------------------
def _two_outputs():
    L = tf.keras.layers
    a = tf.keras.Input(shape=(3,), name="a")
    b = tf.keras.Input(shape=(2,), name="b")
    shared = L.Dense(2, kernel_initializer="ones", name="shared")
    pa = L.Dense(3, name="pa", kernel_initializer=tf.keras.initializers.Constant(0.5))(a)
    h = L.concatenate([shared(pa), b], name="cat")
    h = L.Dropout(0.1, name="drop")(h)
    o1 = L.Dense(1, activation="sigmoid", name="o1",
                 kernel_regularizer=tf.keras.regularizers.l2(0.01))(h)
    o2 = L.Dense(3, activation="softmax", name="o2")(h)
    return tf.keras.Model([a, b], [o1, o2], name="two")


def test_functional_layer_order_and_config():
    m = _two_outputs()
    # TF 2.15: deepest layers first, ties in depth-first order from the outputs
    assert [layer.name for layer in m.layers] == ["a", "pa", "shared", "b", "cat", "drop",
                                                  "o1", "o2"]
    cfg = m.get_config()
    assert sorted(cfg) == ["input_layers", "layers", "name", "output_layers", "trainable"]
    assert cfg["layers"][2]["inbound_nodes"] == [[["pa", 0, 0, {}]]]
    assert (cfg["input_layers"], cfg["output_layers"]) == \
        ([["a", 0, 0], ["b", 0, 0]], [["o1", 0, 0], ["o2", 0, 0]])
    js = json.loads(m.to_json())
    assert (sorted(js), js["class_name"]) == \
        (["backend", "class_name", "config", "keras_version"], "Functional")
    m2 = tf.keras.models.model_from_json(m.to_json())
    assert ([layer.name for layer in m2.layers], m2.output_shape) == \
        ([layer.name for layer in m.layers], [(None, 1), (None, 3)])
    seq = tf.keras.Sequential(name="seq")
    seq.add(tf.keras.layers.Dense(2, input_dim=3, kernel_initializer="ones"))
    seq.add(tf.keras.layers.Activation("softmax"))
    assert sorted(seq.get_config()) == ["layers", "name"]
    assert [type(la).__name__ for la in tf.keras.Sequential.from_config(
        seq.get_config()).layers] == ["Dense", "Activation"]


def test_save_and_load_model(tmp_path):
    m = _two_outputs()
    x = [np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)]
    y = [np.array([0, 1, 0, 1], np.float32), tf.keras.utils.to_categorical([0, 1, 2, 0], 3)]
    m.compile(tf.keras.optimizers.Adam(0.01),
              loss=["binary_crossentropy", "categorical_crossentropy"],
              loss_weights=[1.0, 0.5], metrics=["accuracy"])
    h = m.fit(x, y, epochs=2, batch_size=2, verbose=0)
    # TF 2.15
    assert sorted(h.history) == ["loss", "o1_acc", "o1_loss", "o2_acc", "o2_loss"]
    assert m.metrics_names == ["loss", "o1_loss", "o2_loss", "o1_acc", "o2_acc"]
    m.save(str(tmp_path / "saved"))
    m4 = tf.keras.models.load_model(str(tmp_path / "saved"))
    for p1, p2 in zip(m.predict(x), m4.predict(x), strict=True):
        np.testing.assert_allclose(p1, p2, atol=1e-6)
    assert m4.optimizer is not None and len(m4.evaluate(x, y, verbose=0)) == 5
    with pytest.raises(OSError, match="No file or directory found at"):
        tf.keras.models.load_model(str(tmp_path / "missing"))

    seq = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,),
                                                     kernel_initializer="ones",
                                                     activation="relu"),
                               tf.keras.layers.Lambda(lambda t: t * 3)])
    seq.compile("sgd", "mse", metrics=["mae"])
    tf.keras.models.save_model(seq, str(tmp_path / "seq"))
    s2 = tf.keras.models.load_model(str(tmp_path / "seq"), safe_mode=False)
    assert s2.predict(np.ones((1, 3), np.float32)).tolist() == [[9.0, 9.0]]
    assert s2.metrics_names == ["loss", "mean_absolute_error"]


def test_model_from_json_custom_objects():
    class Scale(tf.keras.layers.Layer):
        def __init__(self, f=2.0, **kw):
            super().__init__(**kw)
            self.f = f

        def call(self, x):
            return x * self.f

        def get_config(self):
            return {**super().get_config(), "f": self.f}

    seq = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,)), Scale(5.0)])
    with pytest.raises(ValueError, match="Unknown layer: 'Scale'"):
        tf.keras.models.model_from_json(seq.to_json())
    s4 = tf.keras.models.model_from_json(seq.to_json(), custom_objects={"Scale": Scale})
    assert [type(la).__name__ for la in s4.layers] == ["Dense", "Scale"] and s4.layers[1].f == 5.0


# -- learning-rate variable and callbacks ----------------------------------------------------
def test_learning_rate_variable_and_schedules():
    x = np.linspace(-1, 1, 40).reshape(20, 2).astype(np.float32)
    y = x.sum(1, keepdims=True)
    m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,),
                                                   kernel_initializer="zeros")])
    m.compile(tf.keras.optimizers.SGD(lr=0.1), "mse")
    assert round(float(K.get_value(m.optimizer.lr)), 4) == 0.1
    sched = tf.keras.callbacks.LearningRateScheduler(lambda epoch: 0.1 * (0.5 ** epoch))
    h = m.fit(x, y, epochs=3, batch_size=10, verbose=0, shuffle=False, callbacks=[sched])
    # TF 2.15: the scheduler's lr lands in the history; the losses follow it
    assert sorted(h.history) == ["loss", "lr"]
    np.testing.assert_allclose(h.history["lr"], [0.1, 0.05, 0.025])
    np.testing.assert_allclose(h.history["loss"], [1.4193, 0.7274, 0.5358], atol=1e-4)
    K.set_value(m.optimizer.lr, 0.01)
    h3 = m.fit(x, y, epochs=2, verbose=0, callbacks=[
        tf.keras.callbacks.LearningRateScheduler(lambda e, lr: lr * 0.9)])
    np.testing.assert_allclose(h3.history["lr"], [0.009, 0.0081], rtol=1e-5)
    assert isinstance(m.optimizer.get_config()["learning_rate"], np.float32)
    m2 = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,),
                                                    kernel_initializer="zeros")])
    m2.compile(tf.keras.optimizers.Adam(0.5), "mse")
    rl = tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                              min_lr=0.01)
    h2 = m2.fit(x, y, epochs=6, batch_size=20, verbose=0, shuffle=False, callbacks=[rl])
    np.testing.assert_allclose(h2.history["lr"], [0.5, 0.5, 0.5, 0.5, 0.25, 0.125])
    assert isinstance(h2, tf.keras.callbacks.History)
    with pytest.raises(ValueError, match="does not support a factor >= 1"):
        tf.keras.callbacks.ReduceLROnPlateau(factor=1.5)


def test_model_to_estimator_checkpoints_optimizer_learning_rate(tmp_path):
    x = np.linspace(-1, 1, 40).reshape(20, 2).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32).reshape(-1, 1)
    inp = tf.keras.Input(shape=(2,), name="feat")
    h = tf.keras.layers.Dense(3, activation="relu", kernel_initializer="ones", name="h")(inp)
    out = tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="zeros",
                                name="prob")(h)
    m = tf.keras.Model(inp, out)
    m.compile(tf.keras.optimizers.SGD(0.1), "binary_crossentropy", metrics=["accuracy"])
    est = tf.keras.estimator.model_to_estimator(keras_model=m, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"feat": x}, y)).batch(5).repeat(),
              steps=2)
    # TF 2.15 also has training/SGD/decay and training/SGD/momentum
    assert "training/SGD/learning_rate" in est.get_variable_names()
    assert est.get_variable_value("training/SGD/learning_rate") == np.float32(0.1)


# -- subclassed models -------------------------------------------------------------------------
def test_subclassed_model_weights_fit_and_config():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__(name="sub")
            self.d1 = tf.keras.layers.Dense(3, kernel_initializer="ones", activation="relu")
            self.d2 = tf.keras.layers.Dense(1, kernel_initializer="ones")

        def call(self, inputs, training=None):
            return self.d2(self.d1(inputs))

    s = Sub()
    y = s(tf.constant(x))
    # TF 2.15: the sublayers' weights live under the model's name
    assert [w.name for w in s.weights] == ["sub/dense/kernel:0", "sub/dense/bias:0",
                                           "sub/dense_1/kernel:0", "sub/dense_1/bias:0"]
    assert [la.name for la in s.layers] == ["dense", "dense_1"]
    assert K.get_session().run(y).tolist() == [[9.0], [36.0]]

    class Net(tf.keras.Model):
        def __init__(self, n):
            super().__init__()
            self.blocks = [tf.keras.layers.Dense(4, activation="relu", kernel_initializer="ones")
                           for _ in range(2)]
            self.drop = tf.keras.layers.Dropout(0.0)
            self.out = tf.keras.layers.Dense(n, activation="softmax", kernel_initializer="zeros")

        def call(self, x, training=False):
            for b in self.blocks:
                x = b(x)
            return self.out(self.drop(x, training=training))

    net = Net(3)
    with pytest.raises(ValueError, match="This model has not yet been built"):
        net.summary()
    net.compile(tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                metrics=["accuracy"])  # before it is built
    h = net.fit(x, np.array([0, 2]), epochs=2, verbose=0, batch_size=2)
    # TF 2.15
    assert sorted(h.history) == ["acc", "loss"]
    np.testing.assert_allclose(h.history["loss"], [1.0986, 43.2], atol=1e-3)
    assert (net.name, [la.name for la in net.layers], len(net.weights)) == \
        ("net", ["dense_2", "dense_3", "dropout", "dense_4"], 6)
    assert (net.input_names, net.output_names) == (["input_1"], ["output_1"])
    assert net.predict(x).shape == (2, 3)
    np.testing.assert_allclose(net.evaluate(x, np.array([0, 2]), verbose=0), [2.7873, 0.5],
                               atol=1e-3)
    assert net.get_config() == {"n": 3}  # plain constructor arguments


def test_fit_evaluate_predict_on_datasets_and_steps():
    x = np.linspace(-1, 1, 40).reshape(20, 2).astype(np.float32)
    y = x.sum(1, keepdims=True).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(5).repeat()
    m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,),
                                                   kernel_initializer="zeros")])
    m.compile(tf.keras.optimizers.SGD(0.1), "mse", metrics=["mae"])
    h = m.fit(ds, epochs=2, steps_per_epoch=4, verbose=0)
    # TF 2.15 values (the iterator continues across epochs; losses averaged per step)
    assert sorted(h.history) == ["loss", "mean_absolute_error"] and h.params["steps"] == 4
    np.testing.assert_allclose(h.history["loss"], [1.1714, 0.3002], atol=1e-4)
    ev = tf.data.Dataset.from_tensor_slices((x, y)).batch(10)
    np.testing.assert_allclose(m.evaluate(ev, verbose=0), [0.0907, 0.2593], atol=1e-4)
    np.testing.assert_allclose(m.evaluate(ds, steps=2, verbose=0), [0.1216, 0.3162],
                               atol=1e-4)
    assert m.predict(tf.data.Dataset.from_tensor_slices(x[:6]).batch(4)).shape == (6, 1)
    assert m.predict(tf.data.Dataset.from_tensor_slices(x).batch(4).repeat(),
                     steps=2).shape == (8, 1)
    h2 = m.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8), epochs=2, verbose=0,
               validation_data=ev)
    assert sorted(h2.history) == ["loss", "mean_absolute_error", "val_loss",
                                  "val_mean_absolute_error"]
    np.testing.assert_allclose(h2.history["loss"], [0.0874, 0.0286], atol=1e-4)
    h3 = m.fit(x, y, epochs=1, steps_per_epoch=2, verbose=0)  # each step: all the arrays
    np.testing.assert_allclose(h3.history["loss"], [0.0099], atol=1e-4)
    with pytest.raises(ValueError, match="you should not specify a target"):
        m.fit(ds, y, steps_per_epoch=1, verbose=0)


def test_subclass_with_loss_object_custom_metric_weights_and_schedule():
    L = tf.keras.layers

    class Net(tf.keras.Model):
        def __init__(self, units):
            super().__init__()
            self.hidden = L.Dense(units, activation="relu", kernel_initializer="ones")
            self.out = L.Dense(1, kernel_initializer="ones")

        def call(self, x):  # no `training` argument
            return self.out(self.hidden(x))

    def rmse(y_true, y_pred):
        return K.sqrt(K.mean(K.square(y_pred - y_true), axis=-1))

    x = np.random.RandomState(0).rand(32, 3).astype(np.float32)
    y = x.sum(1, keepdims=True)
    net = Net(8)
    net.compile(tf.keras.optimizers.SGD(0.01), loss=tf.keras.losses.Huber(), metrics=[rmse])
    schedule = tf.keras.callbacks.LearningRateScheduler(lambda epoch: 0.01 / (1 + epoch))
    history = net.fit(x, y, epochs=3, verbose=0, sample_weight=np.linspace(0.5, 1.5, 32),
                      callbacks=[schedule], shuffle=False)
    # TF 2.15
    assert (sorted(history.history), net.get_config()) == (["loss", "lr", "rmse"],
                                                           {"units": 8})
    np.testing.assert_allclose(history.history["loss"], [9.0811, 8.7928, 8.6517], atol=1e-4)
    np.testing.assert_allclose(history.history["rmse"], [10.0273, 9.7297, 9.5841], atol=1e-4)
    assert [w.name for w in net.weights] == ["net/dense/kernel:0", "net/dense/bias:0",
                                             "net/dense_1/kernel:0", "net/dense_1/bias:0"]


def test_keras_activations_module():
    A = tf.keras.activations
    x = tf.constant([-2.0, -0.5, 0.0, 0.5, 3.0])
    got = tf.Session().run([A.hard_sigmoid(x), A.swish(x), A.relu(x, alpha=0.1, max_value=2.0),
                            A.elu(x), A.softsign(x)])
    # TF 2.15 values
    np.testing.assert_allclose(got[0], [0.1, 0.4, 0.5, 0.6, 1.0], atol=1e-4)
    np.testing.assert_allclose(got[1], [-0.2384, -0.1888, 0.0, 0.3112, 2.8577], atol=1e-4)
    np.testing.assert_allclose(got[2], [-0.2, -0.05, 0.0, 0.5, 2.0], atol=1e-4)
    np.testing.assert_allclose(got[3], [-0.8647, -0.3935, 0.0, 0.5, 3.0], atol=1e-4)
    np.testing.assert_allclose(got[4], [-0.6667, -0.3333, 0.0, 0.3333, 0.75], atol=1e-4)
    assert (A.get("relu").__name__, A.get(None).__name__, A.serialize(A.tanh)) == \
        ("relu", "linear", "tanh")
    assert not hasattr(A, "gelu")  # not in TF 1.x's tf.keras.activations
    with pytest.raises(ValueError, match="Unknown activation function: 'nope'"):
        A.get("nope")
