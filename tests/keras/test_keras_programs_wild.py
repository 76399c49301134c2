"""TF1-era tf.keras programs in graph mode (sweep B of session 14): each test is one class
of difference found by running such a program under TF 2.15 (``tensorflow.compat.v1``
with v2 behaviour disabled) and flowgraph. The expected values are TF's, from the oracle.
"""

import csv
import json
import os

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras.backend
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _dense_model(optimizer, units=1, inputs=3, name="dense"):
    model = tf.keras.Sequential([L.Dense(units, input_shape=(inputs,), name=name)])
    model.compile(optimizer=optimizer, loss="mse")
    return model


def _data(seed, n=16, d=3, k=1):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d).astype("float32"), rng.randn(n, k).astype("float32")


# -- Keras optimizers: their variables, weights and checkpoint keys ---------------------------
@pytest.mark.parametrize("make, weights, extra", [
    (lambda: tf.keras.optimizers.Adam(0.01),
     ["training/Adam/iter:0", "training/Adam/dense/kernel/m:0",
      "training/Adam/dense/bias/m:0", "training/Adam/dense/kernel/v:0",
      "training/Adam/dense/bias/v:0"],
     ["training/Adam/beta_1:0", "training/Adam/beta_2:0", "training/Adam/decay:0",
      "training/Adam/learning_rate:0"]),
    (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
     ["training/SGD/iter:0", "training/SGD/dense/kernel/momentum:0",
      "training/SGD/dense/bias/momentum:0"],
     ["training/SGD/decay:0", "training/SGD/learning_rate:0", "training/SGD/momentum:0"]),
    (lambda: tf.keras.optimizers.RMSprop(0.01),
     ["training/RMSprop/iter:0", "training/RMSprop/dense/kernel/rms:0",
      "training/RMSprop/dense/bias/rms:0"],
     ["training/RMSprop/decay:0", "training/RMSprop/learning_rate:0",
      "training/RMSprop/momentum:0", "training/RMSprop/rho:0"]),
    (lambda: tf.keras.optimizers.Adagrad(0.1),
     ["training/Adagrad/iter:0", "training/Adagrad/dense/kernel/accumulator:0",
      "training/Adagrad/dense/bias/accumulator:0"],
     ["training/Adagrad/decay:0", "training/Adagrad/learning_rate:0"]),
])
def test_keras_optimizer_variables_as_tf_names_them(make, weights, extra):
    # tf.keras.optimizers.* in graph mode: Optimizer.weights / get_weights / iterations
    # and the global variables (TF 2.15: iter, the hyperparameters, then the slots)
    x, y = _data(12)
    opt = make()
    model = _dense_model(opt)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    assert [w.name for w in opt.weights] == weights
    assert [np.asarray(w).shape for w in opt.get_weights()] == \
        [(), (3, 1), (1,), (3, 1), (1,)][:len(weights)]
    assert K.get_value(opt.iterations) == 2
    assert [v.name for v in tf.global_variables()] == \
        ["dense/kernel:0", "dense/bias:0", weights[0], *extra, *weights[1:]]


def test_save_weights_checkpoint_has_optimizer_slots_and_hyperparameters(tmp_path):
    # Model.save_weights (TF format): TF 2.15's keys, with the object graph TF's
    # load_weights walks (without it TF refuses the file in graph mode)
    x, y = _data(12)
    model = _dense_model(tf.keras.optimizers.Adam(0.01))
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    prefix = str(tmp_path / "c")
    model.save_weights(prefix)
    slot = "layer_with_weights-0/{}/.OPTIMIZER_SLOT/optimizer/{}/.ATTRIBUTES/VARIABLE_VALUE"
    assert [n for n, _ in tf.train.list_variables(prefix)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
        slot.format("bias", "m"), slot.format("bias", "v"),
        "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        slot.format("kernel", "m"), slot.format("kernel", "v"),
        *(f"optimizer/{n}/.ATTRIBUTES/VARIABLE_VALUE"
          for n in ("beta_1", "beta_2", "decay", "iter", "learning_rate"))]
    assert os.path.basename(tf.train.latest_checkpoint(str(tmp_path))) == "c"
    # a fresh, untrained copy reads it; the optimizer's entries wait for its variables
    # (TF 2.15: iterations 2 saved, 3 after one more step)
    other = _dense_model(tf.keras.optimizers.Adam(0.01), name="other")
    other.load_weights(prefix)
    np.testing.assert_allclose(other.get_weights()[0], model.get_weights()[0])
    status = other.load_weights(prefix)
    # TF's CheckpointLoadStatus: the optimizer's values have no variable yet
    assert type(status).__name__ == "CheckpointLoadStatus"
    assert status.expect_partial() is status
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        status.assert_consumed()
    other.train_on_batch(x[:8], y[:8])
    assert K.get_value(other.optimizer.iterations) == 3
    assert status.assert_consumed() is status


def test_sgd_momentum_follows_keras_rule_when_the_learning_rate_changes():
    # keras SGD(momentum): m = momentum * m - lr * g; w += m. A LearningRateScheduler
    # halving lr each epoch gives these losses and weights in TF 2.15 (tf.train's
    # MomentumOptimizer would rescale the velocity and end elsewhere).
    rng = np.random.RandomState(6)
    x = rng.randn(32, 4).astype("float32")
    y = rng.randn(32, 2).astype("float32")
    model = tf.keras.Sequential([L.Dense(2, input_shape=(4,), kernel_initializer="ones")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9), loss="mse")
    sched = tf.keras.callbacks.LearningRateScheduler(
        lambda epoch, lr: lr * 0.5 if epoch >= 1 else lr)
    h = model.fit(x, y, epochs=4, batch_size=8, shuffle=False, verbose=0, callbacks=[sched])
    np.testing.assert_allclose(h.history["loss"], [2.8624, 1.0519, 2.0371, 2.4307],
                               atol=2e-4)
    np.testing.assert_allclose(h.history["lr"], [0.1, 0.05, 0.025, 0.0125], rtol=1e-6)
    sched = tf.keras.callbacks.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))
    h = model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0, callbacks=[sched])
    np.testing.assert_allclose(h.history["lr"], [0.01, 0.02], rtol=1e-6)
    np.testing.assert_allclose(
        model.get_weights()[0],
        [[-0.069, -0.264], [-0.905, -1.064], [-0.59, -0.54], [0.225, -0.778]], atol=2e-3)


def test_optimizer_config_and_set_value():
    # Optimizer.get_config: TF's keys (name, decay) and the variables' current values
    opt = tf.keras.optimizers.SGD(learning_rate=0.5)
    model = _dense_model(opt, inputs=2)
    model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
    K.set_value(model.optimizer.lr, 0.123)
    config = opt.get_config()
    assert sorted(config) == ["decay", "learning_rate", "momentum", "name", "nesterov"]
    assert config["name"] == "SGD" and config["nesterov"] is False
    assert np.isclose(config["learning_rate"], 0.123) and config["decay"] == 0.0
    # the optimizer's own variables are resource variables, as TF's
    assert type(model.optimizer.lr).__name__ == "ResourceVariable"
    assert type(opt.iterations).__name__ == "ResourceVariable"


def test_optimizer_state_round_trips_through_hdf5(tmp_path):
    # model.save (HDF5) writes optimizer_weights ['training/Adam/iter:0', ...];
    # load_model restores iterations (TF 2.15: 6 after 2 epochs of 3 batches)
    rng = np.random.RandomState(9)
    x = rng.randn(30, 4).astype("float32")
    y = rng.randint(0, 2, 30).astype("float32")
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(4,))])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(x, y, epochs=2, batch_size=10, verbose=0, shuffle=False)
    path = str(tmp_path / "m.h5")
    model.save(path)
    moments = model.optimizer.get_weights()[1]
    import h5py

    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n
                 for n in f["optimizer_weights"].attrs["weight_names"]]
    assert names[:2] == ["training/Adam/iter:0", "training/Adam/dense/kernel/m:0"]
    with tf.Graph().as_default():
        restored = tf.keras.models.load_model(path)
        assert K.get_value(restored.optimizer.iterations) == 6
        np.testing.assert_allclose(restored.optimizer.get_weights()[1], moments)


# -- callbacks ------------------------------------------------------------------------------
def test_model_checkpoint_messages_and_full_model_files(tmp_path, capsys):
    # ModelCheckpoint(save_best_only, verbose=1): TF 2.15's message; the file is a whole
    # model (load_model reads it) unless save_weights_only
    x, y = _data(2, n=40)
    model = _dense_model(tf.keras.optimizers.SGD(0.05))
    best = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "w.{epoch:02d}.h5"),
                                              save_best_only=True, verbose=1)
    weights = tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "weights_{epoch:03d}.h5"),
                                                 save_weights_only=True, period=2)
    model.fit(x, y, epochs=4, batch_size=10, validation_split=0.25, shuffle=False,
              verbose=0, callbacks=[best, weights])
    out = capsys.readouterr().out
    assert "\nEpoch 1: val_loss improved from inf to " in out
    assert f", saving model to {tmp_path / 'w.01.h5'}" in out
    assert sorted(os.listdir(tmp_path))[-2:] == ["weights_002.h5", "weights_004.h5"]
    with tf.Graph().as_default():
        loaded = tf.keras.models.load_model(str(tmp_path / "w.01.h5"))
        assert [type(la).__name__ for la in loaded.layers] == ["Dense"]


def test_early_stopping_restores_best_weights_with_tf_messages(capsys):
    # EarlyStopping(restore_best_weights, verbose=1) in TF 2.15: stops at epoch 7, puts
    # back epoch 5's weights, and says so
    rng = np.random.RandomState(3)
    x, y = rng.randn(40, 2).astype("float32"), rng.randn(40, 1).astype("float32")
    xv, yv = rng.randn(20, 2).astype("float32"), rng.randn(20, 1).astype("float32")
    model = tf.keras.Sequential([L.Dense(16, activation="relu", input_shape=(2,)),
                                 L.Dense(1)])
    model.set_weights([rng.randn(*v.shape).astype("float32") for v in model.get_weights()])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    es = tf.keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True,
                                          min_delta=1e-4, verbose=1)
    h = model.fit(x, y, epochs=30, batch_size=40, validation_data=(xv, yv), shuffle=False,
                  callbacks=[es], verbose=0)
    np.testing.assert_allclose(h.history["val_loss"],
                               [13.7321, 7.5579, 3.9602, 2.4413, 2.3753, 3.0464, 3.8],
                               atol=2e-4)
    assert (es.stopped_epoch, es.wait, es.best_epoch) == (6, 2, 4)
    assert capsys.readouterr().out == ("Restoring model weights from the end of the best "
                                       "epoch: 5.\nEpoch 7: early stopping\n")
    assert round(float(model.evaluate(xv, yv, verbose=0)), 4) == 2.3753


def test_learning_rate_callbacks_print_tf_messages(capsys):
    # ReduceLROnPlateau / LearningRateScheduler verbose lines: "\nEpoch 7: ..." (TF 2.15)
    rng = np.random.RandomState(4)
    x, y = rng.randn(30, 2).astype("float32"), rng.randn(30, 1).astype("float32")
    model = _dense_model(tf.keras.optimizers.SGD(learning_rate=0.5), inputs=2)
    model.set_weights([np.ones((2, 1), "float32"), np.zeros(1, "float32")])
    rl = tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                              min_lr=0.01, verbose=1)
    h = model.fit(x, y, epochs=8, batch_size=30, callbacks=[rl], verbose=0, shuffle=False)
    assert capsys.readouterr().out == ("\nEpoch 7: ReduceLROnPlateau reducing learning rate "
                                       "to 0.25.\n\nEpoch 8: ReduceLROnPlateau reducing "
                                       "learning rate to 0.125.\n")
    assert [round(float(v), 4) for v in h.history["lr"]] == [0.5] * 7 + [0.25]
    sched = tf.keras.callbacks.LearningRateScheduler(lambda e: 0.01, verbose=1)
    model.fit(x, y, epochs=1, batch_size=30, callbacks=[sched], verbose=0)
    assert capsys.readouterr().out.startswith(
        "\nEpoch 1: LearningRateScheduler setting learning rate to 0.01.")


def test_fit_params_list_validation_metrics():
    # callback.params['metrics'] with validation: ['loss', 'acc', 'val_loss', 'val_acc']
    x, y = _data(0, n=20)
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile("sgd", "binary_crossentropy", metrics=["accuracy"])
    h = model.fit(x, (y > 0).astype("float32"), epochs=1, validation_split=0.2, verbose=0)
    assert h.params["metrics"] == ["loss", "acc", "val_loss", "val_acc"]
    h = model.fit(x, (y > 0).astype("float32"), epochs=1, verbose=0)
    assert h.params["metrics"] == ["loss", "acc"]


def test_evaluate_and_predict_call_test_and_predict_hooks():
    # Callback.on_test_* / on_predict_* from evaluate(callbacks=) / predict(callbacks=)
    events = []

    class Recorder(tf.keras.callbacks.Callback):
        def on_test_begin(self, logs=None):
            events.append(("test_begin", sorted(logs or {})))

        def on_test_batch_end(self, batch, logs=None):
            events.append(("test_batch_end", batch, sorted(logs or {})))

        def on_test_end(self, logs=None):
            events.append(("test_end",))

        def on_predict_end(self, logs=None):
            events.append(("predict_end", sorted(logs or {})))

    x, y = _data(8, n=24)
    model = tf.keras.Sequential([L.Dense(2, activation="softmax", input_shape=(3,))])
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    labels = (y[:, 0] > 0).astype("int64")
    model.evaluate(x, labels, batch_size=12, verbose=0, callbacks=[Recorder()])
    model.predict(x, batch_size=12, callbacks=[Recorder()])
    assert events == [("test_begin", []),
                      ("test_batch_end", 0, ["acc", "batch", "loss", "size"]),
                      ("test_batch_end", 1, ["acc", "batch", "loss", "size"]),
                      ("test_end",), ("predict_end", [])]


def test_tensorboard_callback_tags(tmp_path):
    # TensorBoard(histogram_freq=1) in graph mode: epoch_* scalars, weight histograms
    x, y = _data(7, n=40)
    model = _dense_model("adam")
    model.fit(x, y, epochs=2, batch_size=10, validation_split=0.25, verbose=0,
              callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path),
                                                        histogram_freq=1)])
    tags = set()
    for name in os.listdir(tmp_path):
        for event in tf.train.summary_iterator(str(tmp_path / name)):
            tags.update(v.tag for v in event.summary.value)
    # TF also writes a histogram of each layer's output ('dense_out')
    assert tags >= {"dense/bias_0", "dense/kernel_0", "epoch_loss", "epoch_val_loss"}


def test_csv_logger_columns(tmp_path):
    # CSVLogger: epoch, then the logs in sorted order
    x, y = _data(5, n=50)
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile(optimizer="rmsprop", loss="binary_crossentropy", metrics=["accuracy", "mse"])
    path = str(tmp_path / "log.csv")
    model.fit(x, (y > 0).astype("float32"), epochs=2, batch_size=10, validation_split=0.2,
              verbose=0, callbacks=[tf.keras.callbacks.CSVLogger(path)])
    with open(path) as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["epoch", "acc", "loss", "mean_squared_error", "val_acc", "val_loss",
                       "val_mean_squared_error"]
    assert [r[0] for r in rows[1:]] == ["0", "1"]


# -- the backend, generators, datasets ------------------------------------------------------
def test_in_train_phase_and_in_test_phase():
    # K.in_train_phase(x, alt): a cond on the learning phase when it is a tensor
    x = K.placeholder(shape=(None, 3))
    f = K.function([x, K.learning_phase()], [K.in_train_phase(x * 2.0, x * 3.0),
                                              K.in_test_phase(x * 2.0, lambda: x * 3.0)])
    ones = np.ones((1, 3), "float32")
    assert [v.tolist() for v in f([ones, 1])] == [[[2.0, 2.0, 2.0]], [[3.0, 3.0, 3.0]]]
    assert [v.tolist() for v in f([ones, 0])] == [[[3.0, 3.0, 3.0]], [[2.0, 2.0, 2.0]]]
    assert K.in_train_phase(1, 2, training=1) == 1 and K.in_train_phase(1, 2, training=0) == 2


def test_fit_generator_and_endless_dataset_error():
    # Model.fit_generator; fit on a repeat()-ed dataset without steps_per_epoch fails
    # (TF 2.15's ValueError)
    rng = np.random.RandomState(14)
    x = rng.randn(64, 4).astype("float32")
    y = (x[:, :1] * 2.0 - 1.0).astype("float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(4,), kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse", metrics=["mae"])
    gen = ((x[i:i + 8], y[i:i + 8]) for i in range(0, 64, 8))
    h = model.fit_generator(gen, steps_per_epoch=8, epochs=1, verbose=0)
    assert sorted(h.history) == ["loss", "mean_absolute_error"]
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat()
    with pytest.raises(ValueError, match=r"When passing an infinitely repeating dataset, "
                                         r"you must specify the `steps_per_epoch` argument\."):
        model.fit(ds, epochs=1, verbose=0)
    assert model.evaluate_generator(iter([(x, y)]), steps=1)[0] > 0
    assert model.predict_generator(iter([x[:5]]), steps=1).shape == (5, 1)


def test_get_layer_error_message():
    # Model.get_layer with an unknown name: TF 2.15's message
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,))])
    with pytest.raises(ValueError, match=r"No such layer: nope\. Existing layers are: "
                                         r"\['dense'\]\."):
        model.get_layer("nope")


def test_model_metrics_objects():
    # Model.metrics: the compiled metrics by their metrics_names names (no loss)
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(3,))])
    model.compile("sgd", "binary_crossentropy", metrics=["accuracy", "mae"])
    assert [m.name for m in model.metrics] == ["acc", "mean_absolute_error"]


# -- saving: custom objects, configs --------------------------------------------------------
def _swish_ish(t):
    return t * tf.sigmoid(t)


def test_load_model_finds_custom_activation_functions(tmp_path):
    # load_model(custom_objects={'fn': fn}) / custom_object_scope for activation=fn
    inp = tf.keras.Input((4,))
    out = L.Dense(1, activation=_swish_ish)(L.Dense(5, activation=_swish_ish)(inp))
    model = tf.keras.Model(inp, out)
    path = str(tmp_path / "m.h5")
    model.save(path)
    x = np.random.RandomState(0).randn(3, 4).astype("float32")
    expected = model.predict(x)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unknown activation function: '_swish_ish'"):
            tf.keras.models.load_model(path)
        loaded = tf.keras.models.load_model(path, custom_objects={"_swish_ish": _swish_ish})
        np.testing.assert_allclose(loaded.predict(x), expected, rtol=1e-6)
    with tf.Graph().as_default(), \
            tf.keras.utils.custom_object_scope({"_swish_ish": _swish_ish}):
        assert tf.keras.models.load_model(path).layers[1].activation is _swish_ish
    assert "_swish_ish" not in tf.keras.utils.get_custom_objects()


def test_regularizer_classes_and_configs():
    # tf.keras.regularizers: l1/l2 make L1/L2 (not L1L2), values kept as float32
    R = tf.keras.regularizers
    assert R.serialize(R.l2(0.01)) == {"class_name": "L2",
                                       "config": {"l2": 0.009999999776482582}}
    assert R.serialize(R.l1(0.01)) == {"class_name": "L1",
                                       "config": {"l1": 0.009999999776482582}}
    assert R.l1_l2(0.01, 0.02).get_config() == {"l1": 0.009999999776482582,
                                                "l2": 0.019999999552965164}
    assert not isinstance(R.l2(0.1), R.L1L2)
    assert type(R.deserialize({"class_name": "L2", "config": {"l2": 0.5}})).__name__ == "L2"
    v = tf.constant([1.0, -2.0])
    assert np.isclose(K.eval(R.l2(0.5)(v)), 2.5) and np.isclose(K.eval(R.l1(0.5)(v)), 1.5)


def test_to_json_writes_initializers_and_regularizers_as_tf():
    # model.to_json: initializers held by name become TF 2.15's class dicts
    model = tf.keras.Sequential([
        L.Conv2D(4, 3, padding="same", input_shape=(8, 8, 1)), L.Flatten(),
        L.Dense(3, kernel_initializer="he_normal",
                kernel_regularizer=tf.keras.regularizers.l2(0.01))])
    layers = json.loads(model.to_json())["config"]["layers"]
    assert layers[1]["config"]["kernel_initializer"] == {
        "class_name": "GlorotUniform", "config": {"seed": None, "dtype": "float32"}}
    assert layers[1]["config"]["bias_initializer"] == {
        "class_name": "Zeros", "config": {"dtype": "float32"}}
    dense = layers[-1]["config"]
    assert dense["kernel_initializer"] == {"class_name": "HeNormal", "config": {"seed": None}}
    assert dense["kernel_regularizer"] == {"class_name": "L2",
                                           "config": {"l2": 0.009999999776482582}}
    rebuilt = tf.keras.models.model_from_json(model.to_json())
    assert len(rebuilt.losses) == 1 and rebuilt.output_shape == (None, 3)


def test_summary_text_is_tf_2_15s():
    # Model.summary(): TF 2.15's table (wrapped names, blank rows, memory sizes)
    model = tf.keras.Sequential([L.Dense(16, activation="relu", input_shape=(10,)),
                                 L.BatchNormalization(), L.Dense(4)])
    lines = []
    model.summary(print_fn=lines.append)
    assert lines == [
        'Model: "sequential"',
        "_" * 65,
        " Layer (type)                Output Shape              Param #   ",
        "=" * 65,
        " dense (Dense)               (None, 16)                176       ",
        " " * 65,
        " batch_normalization (Batch  (None, 16)                64        ",
        " Normalization)                                                  ",
        " " * 65,
        " dense_1 (Dense)             (None, 4)                 68        ",
        " " * 65,
        "=" * 65,
        "Total params: 308 (1.20 KB)",
        "Trainable params: 276 (1.08 KB)",
        "Non-trainable params: 32 (128.00 Byte)",
        "_" * 65]
    inp = tf.keras.Input((5,), name="x")
    out = L.add([L.Dense(3, name="branch_a")(inp), L.Dense(3, name="branch_b")(inp)],
                name="sum")
    lines = []
    tf.keras.Model(inp, out, name="fun").summary(print_fn=lines.append, line_length=80)
    assert lines[2:4] == [
        " Layer (type)           Output Shape            Param   Connected to            ",
        "                                                 #                              "]
    assert lines[5] == (" x (InputLayer)         [(None, 5)]             0       []" + " " * 22)
    assert lines[11:13] == [
        " sum (Add)              (None, 3)               0       ['branch_a[0][0]',      ",
        "                                                         'branch_b[0][0]']      "]


@pytest.mark.parametrize("make, losses, emb_sum", [
    (lambda: tf.keras.optimizers.Adam(0.01), [0.7775, 0.7612, 0.7474], 9.8859),
    (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9), [0.7708, 0.7235, 0.6863], 6.5361),
    (lambda: tf.keras.optimizers.RMSprop(0.01), [0.7721, 0.7464, 0.7302], 11.783),
    (lambda: tf.keras.optimizers.Adagrad(0.1), [0.7687, 0.7417, 0.7266], 6.5191),
])
def test_keras_optimizers_on_sparse_embedding_gradients(make, losses, emb_sum):
    # Embedding gradients (IndexedSlices) through the Keras updates: TF 2.15's numbers;
    # rows no batch looks up (row 0) keep their values
    rng = np.random.RandomState(21)
    x = rng.randint(1, 50, size=(40, 6))
    y = (x[:, 0] > 25).astype("float32")
    model = tf.keras.Sequential([L.Embedding(50, 4, input_length=6, name="emb"),
                                 L.GlobalAveragePooling1D(),
                                 L.Dense(1, activation="sigmoid", name="out")])
    start = [np.random.RandomState(1).randn(*w.shape).astype("float32") * 0.3
             for w in model.get_weights()]
    model.set_weights(start)
    model.compile(make(), "binary_crossentropy", metrics=["acc"])
    h = model.fit(x, y, epochs=3, batch_size=10, shuffle=False, verbose=0)
    np.testing.assert_allclose(h.history["loss"], losses, atol=2e-4)
    emb = model.get_weights()[0]
    np.testing.assert_allclose(emb[0], start[0][0])
    assert abs(float(emb.sum()) - emb_sum) < 2e-3


@pytest.mark.parametrize("make, losses, kernel", [
    (lambda: tf.keras.optimizers.SGD(0.1, decay=0.5), [1.72145, 1.10932, 0.97181],
     [0.5981, 0.4021]),
    (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.5, nesterov=True),
     [1.35272, 0.9203, 0.87652], [0.381, 0.0606]),
    (lambda: tf.keras.optimizers.Adam(0.1, decay=0.1), [1.7947, 1.08976, 0.85105],
     [0.3618, 0.3486]),
    (lambda: tf.keras.optimizers.RMSprop(0.01, momentum=0.9), [2.05565, 1.26466, 0.81399],
     [0.2758, 0.2472]),
    (lambda: tf.keras.optimizers.Adadelta(1.0), [2.28787, 2.26763, 2.24816],
     [0.9848, 0.9863]),
])
def test_keras_optimizer_decay_nesterov_momentum(make, losses, kernel):
    # decay (lr / (1 + decay * iterations)), Nesterov momentum, RMSprop momentum,
    # Adadelta: TF 2.15's losses and final kernel
    rng = np.random.RandomState(25)
    x, y = rng.randn(20, 2).astype("float32"), rng.randn(20, 1).astype("float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="ones")])
    model.compile(make(), "mse")
    h = model.fit(x, y, epochs=3, batch_size=5, shuffle=False, verbose=0)
    np.testing.assert_allclose(h.history["loss"], losses, atol=2e-5)
    np.testing.assert_allclose(model.get_weights()[0].ravel(), kernel, atol=2e-4)


def test_training_resumes_from_hdf5_with_optimizer_state(tmp_path):
    # model.save then load_model: Adam's moments and iterations come back, so resumed
    # epochs give the losses the uninterrupted run gives (TF 2.15: 0.25689, 0.17261)
    rng = np.random.RandomState(24)
    x = rng.randn(40, 3).astype("float32")
    y = x @ np.array([[1.0], [-1.0], [0.5]], "float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(3,), kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.Adam(0.05), "mse")
    model.fit(x, y, epochs=3, batch_size=10, shuffle=False, verbose=0)
    path = str(tmp_path / "m.h5")
    model.save(path)
    with tf.Graph().as_default():
        restored = tf.keras.models.load_model(path)
        assert K.get_value(restored.optimizer.iterations) == 12
        h = restored.fit(x, y, epochs=5, initial_epoch=3, batch_size=10, shuffle=False,
                         verbose=0)
        assert h.epoch == [3, 4]
        np.testing.assert_allclose(h.history["loss"], [0.25689, 0.17261], atol=1e-5)
        assert K.get_value(restored.optimizer.iterations) == 20
        with pytest.raises(ValueError, match="weight list of length 1"):
            restored.optimizer.set_weights([1])


def test_get_updates_in_a_backend_function_loop():
    # Optimizer.get_updates + K.function(updates=...): the TF1 custom-loop idiom; made
    # outside fit, the variables are 'Adam/iter', 'Adam/d/kernel/m', ... (TF 2.15)
    rng = np.random.RandomState(41)
    xs, ys = rng.randn(32, 3).astype("float32"), rng.randn(32, 1).astype("float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(3,), kernel_initializer="ones",
                                         name="d")])
    target = K.placeholder(shape=(None, 1))
    loss = K.mean(K.square(model.output - target))
    opt = tf.keras.optimizers.Adam(0.1)
    updates = opt.get_updates(loss=loss, params=model.trainable_weights)
    train = K.function([model.input, target], [loss], updates=updates)
    for _ in range(5):
        (value,) = train([xs, ys])
    assert round(float(value), 4) == 2.4074
    assert K.get_value(opt.iterations) == 5
    assert [w.name for w in opt.weights] == [
        "Adam/iter:0", "Adam/d/kernel/m:0", "Adam/d/bias/m:0", "Adam/d/kernel/v:0",
        "Adam/d/bias/v:0"]
    np.testing.assert_allclose(K.get_value(model.weights[0]).ravel(),
                               [0.5074, 0.5083, 0.5085], atol=1e-4)
    assert [g.shape.as_list() for g in opt.get_gradients(loss, model.trainable_weights)] \
        == [[3, 1], [1]]


def test_trainable_weights_are_collected_at_compile_time():
    # The Keras GAN idiom: compile the discriminator, freeze it, compile the combined
    # model. The discriminator still trains through its own train_on_batch; the
    # combined model trains only the generator (TF 2.15)
    gen = tf.keras.Sequential([L.Dense(4, input_shape=(2,), kernel_initializer="ones"),
                               L.Dense(3, kernel_initializer="ones")], name="gen")
    disc = tf.keras.Sequential([L.Dense(4, activation="relu", input_shape=(3,),
                                        kernel_initializer="ones"),
                                L.Dense(1, activation="sigmoid", kernel_initializer="zeros")],
                               name="disc")
    disc.compile(tf.keras.optimizers.SGD(0.1), "binary_crossentropy")
    disc.trainable = False
    z = tf.keras.Input((2,))
    combined = tf.keras.Model(z, disc(gen(z)))
    combined.compile(tf.keras.optimizers.SGD(0.1), "binary_crossentropy")
    assert len(combined.trainable_weights) == 4 and disc.trainable_weights == []
    rng = np.random.RandomState(51)
    before = [w.copy() for w in disc.get_weights()]
    assert round(float(combined.train_on_batch(rng.randn(8, 2), np.ones((8, 1)))), 4) == 0.6931
    assert all(np.allclose(a, b) for a, b in zip(before, disc.get_weights()))
    assert round(float(disc.train_on_batch(rng.randn(8, 3), np.ones((8, 1)))), 4) == 0.6931
    assert not all(np.allclose(a, b) for a, b in zip(before, disc.get_weights()))


def test_fit_verbose_lines(capsys):
    # fit(verbose=2 / 1) prints TF 2.15's graph-mode lines (timings aside); no
    # "Epoch 1/1" for a single epoch; a dataset counts steps
    import re

    def lines():
        out = capsys.readouterr().out
        return re.sub(r"\d+(ms|us|s)/", "T/", re.sub(r" - \d+s", " - Ns", out)).splitlines()

    x, y = np.ones((20, 2), "float32"), np.full((20, 1), 2.0, "float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
    model.compile("sgd", "mse", metrics=["mae"])
    model.fit(x, y, epochs=1, batch_size=10, verbose=2, validation_data=(x[:5], y[:5]))
    model.fit(x, y, epochs=1, batch_size=10, verbose=1)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(5).repeat()
    model.fit(ds, epochs=1, steps_per_epoch=4, verbose=2, validation_data=ds,
              validation_steps=2)
    model.fit(ds, epochs=1, steps_per_epoch=4, verbose=2)
    assert lines() == [
        "Train on 20 samples, validate on 5 samples",
        "20/20 - Ns - loss: 3.7672 - mean_absolute_error: 1.9400 - val_loss: 3.1230 - "
        "val_mean_absolute_error: 1.7672 - T/epoch - T/sample",
        "Train on 20 samples",
        "20/20 [==============================] - Ns T/sample - loss: 2.9412 - "
        "mean_absolute_error: 1.7142",
        "Train on 4 steps, validate on 2 steps",
        "4/4 - Ns - loss: 2.0446 - mean_absolute_error: 1.4265 - val_loss: 1.4863 - "
        "val_mean_absolute_error: 1.2191 - T/epoch - T/step",
        "Train on 4 steps",
        "4/4 - Ns - loss: 1.2463 - mean_absolute_error: 1.1137 - T/epoch - T/step"]
    zero = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
    zero.compile("sgd", "mse", metrics=["mae"])
    zero.fit(x, np.zeros((20, 1)), epochs=2, batch_size=10, verbose=2, validation_split=0.5)
    # values under 1e-3 in %.4e, as Keras's progress bar writes them
    assert lines()[:3] == [
        "Train on 10 samples, validate on 10 samples", "Epoch 1/2",
        "10/10 - Ns - loss: 0.0000e+00 - mean_absolute_error: 0.0000e+00 - val_loss: "
        "0.0000e+00 - val_mean_absolute_error: 0.0000e+00 - T/epoch - T/sample"]


def test_optimizer_name_scopes_its_variables():
    # SGD(name="my_sgd"): 'training/my_sgd/iter', ... (TF 2.15)
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.5, name="my_sgd")
    model = _dense_model(opt, inputs=2)
    model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
    assert [w.name for w in opt.weights] == [
        "training/my_sgd/iter:0", "training/my_sgd/dense/kernel/momentum:0",
        "training/my_sgd/dense/bias/momentum:0"]
    assert opt.get_config()["name"] == "my_sgd"


def test_model_to_estimator_optimizer_counts_with_the_global_step(tmp_path):
    # model_to_estimator: the Keras optimizer's iterations is the global step, so the
    # checkpoint has no training/Adam/iter (TF 2.15's variables below)
    model = tf.keras.Sequential([L.Dense(2, input_shape=(4,), name="h")])
    model.compile(optimizer="adam", loss="mse")
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    key = model.input_names[0]
    x, y = np.ones((8, 4), "float32"), np.ones((8, 2), "float32")
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({key: x}, y)).repeat().batch(4),
              steps=2)
    assert sorted(n for n, _ in tf.train.list_variables(est.model_dir)) == [
        "global_step", "h/bias", "h/kernel", "training/Adam/beta_1", "training/Adam/beta_2",
        "training/Adam/decay", "training/Adam/h/bias/m", "training/Adam/h/bias/v",
        "training/Adam/h/kernel/m", "training/Adam/h/kernel/v", "training/Adam/learning_rate"]
    assert est.get_variable_value("global_step") == 2


def test_evaluate_and_history_value_types():
    # evaluate: [np.float64 loss, np.float32 metrics]; History holds Python floats
    x, y = np.ones((20, 2), "float32"), np.zeros((20, 1), "float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse", metrics=["mae"])
    h = model.fit(x, y, epochs=1, verbose=0, validation_split=0.5)
    assert {type(v[0]) for v in h.history.values()} == {float}
    assert [type(v) for v in model.evaluate(x, y, verbose=0)] == [np.float64, np.float32]
    assert [type(v) for v in model.train_on_batch(x, y)] == [np.float32, np.float32]


def test_evaluate_prints_nothing(capsys):
    # Model.evaluate(verbose=1, the default) in TF 2.15's graph mode writes nothing
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,), kernel_initializer="zeros")])
    model.compile("sgd", "mse", metrics=["mae"])
    x, y = np.ones((20, 2), "float32"), np.full((20, 1), 2.0, "float32")
    assert model.evaluate(x, y) == [4.0, 2.0]
    model.predict(x, verbose=1)
    assert capsys.readouterr().out == ""
