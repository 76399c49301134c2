"""TF1-era tf.keras programs in graph mode, round 2 (sweep ``kr`` of session 15): each
test is one class of difference found by running such a program under TF 2.15
(``tensorflow.compat.v1`` with v2 behaviour disabled) and flowgraph. The expected values
are TF's, from the oracle.
"""

import json

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras.backend
L = tf.keras.layers

_SKIP = {"Const", "VarHandleOp", "VariableV2", "Identity", "ReadVariableOp", "Assign",
         "AssignVariableOp", "VarIsInitializedOp", "Fill", "RandomUniform", "Mul", "Sub",
         "AddV2", "Add", "Shape"}


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _ops(prefix):
    return [(op.name, op.type) for op in tf.get_default_graph().get_operations()
            if op.name.startswith(prefix) and op.type not in _SKIP]


# -- dilated convolutions: TF's SpaceToBatchND route, in a Conv2D / Conv1D scope -------------
def test_dilated_conv2d_runs_through_space_to_batch():
    # keras Conv2D(dilation_rate=2): TF 2.15 emits SpaceToBatchND -> Conv2D (dilations 1,
    # padding VALID) -> BatchToSpaceND, all in the layer's `Conv2D` scope
    inp = tf.keras.Input(shape=(16, 16, 3))
    h = L.Conv2D(4, 3, dilation_rate=2, padding="same", kernel_initializer="ones",
                 name="c1")(inp)
    h2 = L.Conv2D(4, 3, dilation_rate=(2, 2), kernel_initializer="ones", name="c2")(h)
    mixed = L.Conv2D(3, (2, 3), dilation_rate=(1, 2), padding="same", name="mixed")(inp)
    assert h.shape.as_list() == [None, 16, 16, 4] and h2.shape.as_list() == [None, 12, 12, 4]
    assert mixed.shape.as_list() == [None, 16, 16, 3]
    for name in ("c1", "c2", "mixed"):
        assert _ops(f"{name}/") == [(f"{name}/Conv2D/SpaceToBatchND", "SpaceToBatchND"),
                                    (f"{name}/Conv2D", "Conv2D"),
                                    (f"{name}/Conv2D/BatchToSpaceND", "BatchToSpaceND"),
                                    (f"{name}/BiasAdd", "BiasAdd")]
    conv = tf.get_default_graph().get_operation_by_name("c1/Conv2D")
    assert conv.get_attr("dilations") == [1, 1, 1, 1]
    assert conv.get_attr("padding") in (b"VALID", "VALID")
    xv = np.arange(16 * 16 * 3, dtype="float32").reshape(1, 16, 16, 3) / 100.0
    out = K.get_session().run(h2, {inp: xv})
    np.testing.assert_allclose(out.sum(), 1991009.5, rtol=1e-6)   # TF's value


def test_conv1d_ops_live_in_a_conv1d_scope():
    # keras Conv1D: TF names its ops <layer>/Conv1D/ExpandDims, <layer>/Conv1D (Conv2D),
    # <layer>/Conv1D/Squeeze; dilated: SpaceToBatchND first and BatchToSpaceND last
    i1 = tf.keras.Input(shape=(20, 3))
    L.Conv1D(2, 3, name="plain")(i1)
    d = L.Conv1D(2, 3, dilation_rate=3, kernel_initializer="ones", name="dil")(i1)
    causal = L.Conv1D(2, 3, dilation_rate=4, padding="causal", kernel_initializer="ones",
                      name="causal")(i1)
    core = [("ExpandDims", "ExpandDims"), ("ExpandDims_1", "ExpandDims"), ("", "Conv2D"),
            ("Squeeze", "Squeeze")]

    def names(layer, inner):
        return [(f"{layer}/Conv1D" + (f"/{n}" if n else ""), t) for n, t in inner]

    assert _ops("plain/") == [*names("plain", core), ("plain/BiasAdd", "BiasAdd")]
    dilated = [("SpaceToBatchND", "SpaceToBatchND"), *core, ("BatchToSpaceND", "BatchToSpaceND")]
    assert _ops("dil/") == [*names("dil", dilated), ("dil/BiasAdd", "BiasAdd")]
    assert _ops("causal/") == [("causal/Pad", "Pad"), *names("causal", dilated),
                               ("causal/BiasAdd", "BiasAdd")]
    assert d.shape.as_list() == [None, 14, 2] and causal.shape.as_list() == [None, 20, 2]
    xv = np.arange(60, dtype="float32").reshape(1, 20, 3) / 10.0
    dv, cv = K.get_session().run([d, causal], {i1: xv})
    np.testing.assert_allclose(dv[0, :, 0], [9.0, 11.7, 14.4, 17.1, 19.8, 22.5, 25.2, 27.9,
                                             30.6, 33.3, 36.0, 38.7, 41.4, 44.1], rtol=1e-5)
    np.testing.assert_allclose(cv.sum(), 705.6, rtol=1e-5)


# -- GRU(reset_after=True) ---------------------------------------------------------------------
_X_GRU = np.random.RandomState(0).rand(2, 5, 3).astype("float32")


@pytest.mark.parametrize("reset_after, act, last", [
    (True, "hard_sigmoid", [[-0.5254, 0.9147, 0.0644, -0.5305],
                            [-0.4042, 0.9036, 0.184, -0.5422]]),
    (True, "sigmoid", [[-0.4344, 0.5434, -0.8211, -0.2221],
                       [-0.3368, 0.2844, -0.8493, -0.105]]),
    (False, "sigmoid", [[0.0712, -0.5254, -0.0107, -0.8005],
                        [0.292, -0.6697, 0.2518, -0.7913]]),
])
def test_gru_reset_after_values_and_bias_shape(reset_after, act, last):
    # GRU(reset_after=True): bias (2, 3u) (input row, recurrent row); the reset gate
    # scales the recurrent projection after the matmul. TF 2.15's outputs for the same
    # weights (drawn in TF's order from one stream, three layers in a row)
    rng = np.random.RandomState(0)
    rng.rand(2, 5, 3)
    for case in [(True, "hard_sigmoid"), (True, "sigmoid"), (False, "sigmoid")]:
        with tf.Graph().as_default():
            layer = L.GRU(4, reset_after=case[0], recurrent_activation=case[1],
                          return_sequences=True, name="g")
            model = tf.keras.Sequential([layer])
            model.build((None, 5, 3))
            weights = [np.round(rng.randn(*w.shape.as_list()) * 0.5, 2).astype("float32")
                       for w in model.weights]
            if case != (reset_after, act):
                continue
            assert [w.shape.as_list() for w in model.weights] == \
                [[3, 12], [4, 12], [2, 12] if reset_after else [12]]
            model.set_weights(weights)
            np.testing.assert_allclose(model.predict(_X_GRU)[:, -1], last, atol=1e-4)
            nobias = L.GRU(2, reset_after=reset_after, use_bias=False, name="nb")
            nobias.build((None, 5, 3))
            assert [w.shape.as_list() for w in nobias.weights] == [[3, 6], [2, 6]]


def test_gru_reset_after_hdf5_round_trip_and_mismatch(tmp_path):
    # model.save('m.h5') with GRU(reset_after=True): the bias dataset is (2, 12); loading
    # it into GRU(reset_after=False) is a ValueError naming both forms (TF's message)
    import h5py

    model = tf.keras.Sequential([L.GRU(4, reset_after=True, input_shape=(5, 3), name="gru"),
                                 L.Dense(1, name="out")])
    model.compile("sgd", "mse")
    before = model.predict(_X_GRU)
    path = str(tmp_path / "m.h5")
    model.save(path)
    with h5py.File(path, "r") as f:
        shapes = {}
        f["model_weights"].visititems(
            lambda n, o: shapes.__setitem__(n, o.shape) if isinstance(o, h5py.Dataset) else None)
        assert shapes == {"gru/gru/gru_cell/bias:0": (2, 12),
                          "gru/gru/gru_cell/kernel:0": (3, 12),
                          "gru/gru/gru_cell/recurrent_kernel:0": (4, 12),
                          "out/out/bias:0": (1,), "out/out/kernel:0": (4, 1)}
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(_X_GRU), before, rtol=1e-6)
    assert loaded.layers[0].reset_after is True
    model.save_weights(str(tmp_path / "w.h5"))
    other = tf.keras.Sequential([L.GRU(4, reset_after=False, input_shape=(5, 3), name="gru"),
                                 L.Dense(1, name="out")])
    with pytest.raises(ValueError, match=r"GRU\(reset_after=True\) is not compatible with "
                                         r"GRU\(reset_after=False\)"):
        other.load_weights(str(tmp_path / "w.h5"))


# -- recurrent layers' get_config --------------------------------------------------------------
def test_recurrent_layer_configs_have_tf_keys():
    # LSTM / GRU / SimpleRNN get_config: TF 1.x Keras's keys (implementation 1, time_major
    # False; SimpleRNN has neither recurrent_activation nor implementation)
    model = tf.keras.Sequential([
        L.LSTM(3, return_sequences=True, input_shape=(4, 2), name="l"),
        L.GRU(2, reset_after=True, recurrent_activation="sigmoid", return_sequences=True,
              name="g"),
        L.SimpleRNN(2, activation="relu", name="s")])
    common = {"activation", "activity_regularizer", "bias_constraint", "bias_initializer",
              "bias_regularizer", "dropout", "dtype", "go_backwards", "kernel_constraint",
              "kernel_initializer", "kernel_regularizer", "name", "recurrent_constraint",
              "recurrent_dropout", "recurrent_initializer", "recurrent_regularizer",
              "return_sequences", "return_state", "stateful", "time_major", "trainable",
              "units", "unroll", "use_bias"}
    gated = common | {"implementation", "recurrent_activation"}
    layers = model.get_config()["layers"][1:]
    assert set(layers[0]["config"]) == gated | {"unit_forget_bias", "batch_input_shape"}
    assert set(layers[1]["config"]) == gated | {"reset_after"}
    assert set(layers[2]["config"]) == common
    gru = layers[1]["config"]
    assert (gru["implementation"], gru["time_major"], gru["reset_after"],
            gru["recurrent_activation"]) == (1, False, True, "sigmoid")
    assert json.dumps(gru["recurrent_initializer"], sort_keys=True) == \
        '{"class_name": "Orthogonal", "config": {"dtype": "float32", "gain": 1.0, "seed": null}}'
    config = model.layers[1].get_config()
    assert set(config) == gated | {"reset_after"}
    assert (config["activation"], config["recurrent_activation"], config["units"]) == \
        ("tanh", "sigmoid", 2)
    copy = L.GRU.from_config(config)
    assert (copy.reset_after, copy.units, copy.name) == (True, 2, "g")
    rebuilt = tf.keras.Sequential.from_config(model.get_config())
    assert [(w.name, w.shape.as_list()) for w in rebuilt.weights][3:6] == [
        ("g_1/gru_cell/kernel:0", [3, 6]), ("g_1/gru_cell/recurrent_kernel:0", [2, 6]),
        ("g_1/gru_cell/bias:0", [2, 6])]


# -- where a layer's weights are created -------------------------------------------------------
def test_layer_weights_follow_the_callers_name_scope():
    # TF 1.x Keras creates a layer's weights in the name scope its call opens: nested in
    # the caller's variable_scope / name_scope, `<name>_1` for a second layer of the same
    # name in the graph, none when `build` is called directly
    conv = L.Conv2D(2, 3, name="cv")
    conv.build((None, 8, 8, 1))
    assert [w.name for w in conv.weights] == ["kernel:0", "bias:0"]
    rnn = L.SimpleRNN(2, name="srnn")
    rnn.build((None, 5, 3))
    assert [w.name for w in rnn.weights] == ["simple_rnn_cell/kernel:0",
                                            "simple_rnn_cell/recurrent_kernel:0",
                                            "simple_rnn_cell/bias:0"]
    with tf.variable_scope("outer"):
        inner = L.Dense(3, name="inner")
        inner(tf.zeros([1, 2]))
    assert [w.name for w in inner.weights] == ["outer/inner/kernel:0", "outer/inner/bias:0"]
    with tf.name_scope("ns"):
        dense = L.Dense(3, name="ns_dense")
        y = dense(tf.zeros([1, 2]))
    assert [w.name for w in dense.weights] == ["ns/ns_dense/kernel:0", "ns/ns_dense/bias:0"]
    assert y.name == "ns/ns_dense/BiasAdd:0"
    inp = tf.keras.Input(shape=(6,), name="x")
    out = L.Dense(2, name="o")(L.Dense(4, name="h")(inp))
    copy = tf.keras.Model.from_config(tf.keras.Model(inp, out).get_config())
    assert [w.name for w in copy.weights] == ["h_1/kernel:0", "h_1/bias:0", "o_1/kernel:0",
                                              "o_1/bias:0"]
    bi = tf.keras.Sequential([L.Bidirectional(L.LSTM(3), input_shape=(4, 2), name="bi")])
    assert [w.name for w in bi.weights][:1] == ["bi/forward_lstm/lstm_cell/kernel:0"]


# -- metric and loss-scale variables: resource variables, as TF 2.15 makes them --------------
def test_metric_variables_are_resource_variables_outside_the_collections():
    # tf.keras.metrics.Mean in graph mode: `total` and `count`, ResourceVariable
    # (VarHandleOp), in no collection: global_variables() and a Saver leave them out;
    # K.get_session() initializes them
    metric = tf.keras.metrics.Mean(name="mymean")
    update = metric(tf.constant([1.0, 2.0, 3.0]))
    assert [(v.name, type(v).__name__, v.op.type, v.dtype.name) for v in metric.variables] \
        == [("total:0", "ResourceVariable", "VarHandleOp", "float32"),
            ("count:0", "ResourceVariable", "VarHandleOp", "float32")]
    assert tf.global_variables() == [] and tf.local_variables() == []
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == []
    sess = K.get_session()
    assert sess.run(update) == 2.0 and sess.run(metric.result()) == 2.0
    acc = tf.keras.metrics.SparseCategoricalAccuracy()
    acc.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
    assert [v.name for v in acc.variables] == ["total_1:0", "count_1:0"]


def test_loss_scale_optimizer_variables():
    # LossScaleOptimizer: `current_loss_scale` (float32) and `good_steps` (int64) resource
    # variables made at construction at the root scope (before the model's); `weights` and
    # `iterations` are the inner optimizer's; `dynamic_counter` is good_steps
    rng = np.random.RandomState(0)
    x, y = rng.randn(32, 4).astype("float32"), rng.randn(32, 1).astype("float32")
    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.01))
    model = tf.keras.Sequential([L.Dense(1, input_shape=(4,), kernel_initializer="ones")])
    model.compile(optimizer=opt, loss="mse")
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["loss"], [6.5715, 5.8842], atol=1e-4)
    found = [(v.name, type(v).__name__, v.dtype.name, v.op.type) for v in tf.global_variables()]
    assert found[:2] == [("current_loss_scale:0", "ResourceVariable", "float32", "VarHandleOp"),
                         ("good_steps:0", "ResourceVariable", "int64", "VarHandleOp")]
    assert [w.name.rsplit("/", 1)[-1] for w in opt.weights] == ["iter:0"]
    assert K.get_value(opt.loss_scale) == 32768.0 and K.get_value(opt.dynamic_counter) == 4
    assert K.get_value(opt.iterations) == 4


# -- stateful metric objects in compile: Precision, Recall, AUC, RMSE, confusion counts -------
def test_stateful_metrics_in_compile_report_running_results():
    # compile(metrics=[Precision(), Recall(), AUC(), RootMeanSquaredError(), TruePositives(),
    # FalseNegatives(0.3)]): the epoch's value is the running result over its batches
    # (reset each epoch and at each evaluate); test_on_batch adds to evaluate's state and
    # resets after, so the next train_on_batch starts afresh. TF 2.15's values.
    rng = np.random.RandomState(0)
    x = rng.randn(40, 4).astype("float32")
    y = (x[:, :1] + 0.5 * rng.randn(40, 1) > 0).astype("float32")
    model = tf.keras.Sequential([L.Dense(1, activation="sigmoid", input_shape=(4,),
                                         kernel_initializer="ones")])
    metrics = [tf.keras.metrics.Precision(), tf.keras.metrics.Recall(name="rec"),
               tf.keras.metrics.AUC(), tf.keras.metrics.RootMeanSquaredError(),
               tf.keras.metrics.TruePositives(), tf.keras.metrics.FalseNegatives(thresholds=0.3),
               "accuracy"]
    model.compile(tf.keras.optimizers.SGD(0.1), "binary_crossentropy", metrics=metrics)
    assert model.metrics_names == ["loss", "precision", "rec", "auc", "root_mean_squared_error",
                                   "true_positives", "false_negatives", "acc"]
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False,
                        validation_data=(x[:20], y[:20]))
    expected = {"loss": [0.5166, 0.4848], "precision": [0.75, 0.75], "rec": [0.7895, 0.7895],
                "auc": [0.8308, 0.8534], "root_mean_squared_error": [0.4151, 0.3996],
                "true_positives": [15.0, 15.0], "false_negatives": [2.0, 2.0],
                "acc": [0.775, 0.775], "val_loss": [0.2214, 0.2073],
                "val_precision": [1.0, 1.0], "val_rec": [0.8889, 0.8889],
                "val_auc": [0.9899, 1.0], "val_root_mean_squared_error": [0.2323, 0.22],
                "val_true_positives": [8.0, 8.0], "val_false_negatives": [0.0, 0.0],
                "val_acc": [0.95, 0.95]}
    assert set(history.history) == set(expected)
    for key, values in expected.items():
        np.testing.assert_allclose(history.history[key], values, atol=1e-4, err_msg=key)
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=16, verbose=0),
                               [0.4615, 0.75, 0.7895, 0.8684, 0.3881, 15.0, 2.0, 0.775],
                               atol=1e-4)
    # (TF's 'acc' is a running mean here too, 0.8125; flowgraph's means are per call)
    np.testing.assert_allclose(model.test_on_batch(x[:8], y[:8])[:7],
                               [0.1483, 0.8148, 0.8462, 0.8942, 0.3601, 22.0, 2.0], atol=1e-4)
    np.testing.assert_allclose(model.train_on_batch(x[:8], y[:8]),
                               [0.1483, 1.0, 1.0, 1.0, 0.1583, 7.0, 0.0, 1.0], atol=1e-4)
    assert [(m.name, [v.name for v in m.variables]) for m in model.metrics[:6]] == [
        ("precision", ["true_positives:0", "false_positives:0"]),
        ("rec", ["true_positives_1:0", "false_negatives:0"]),
        ("auc", ["true_positives_2:0", "true_negatives:0", "false_positives_1:0",
                 "false_negatives_1:0"]),
        ("root_mean_squared_error", ["total:0", "count:0"]),
        ("true_positives", ["accumulator:0"]), ("false_negatives", ["accumulator_1:0"])]
    assert all(type(v).__name__ == "ResourceVariable" for v in model.metrics[0].variables)


def test_stateful_metric_objects_standalone():
    # Precision(thresholds=[0.3, 0.7]), AUC(curve='PR', 50 thresholds) and a weighted
    # RootMeanSquaredError, updated once: TF 2.15's results and configs
    precision = tf.keras.metrics.Precision(thresholds=[0.3, 0.7])
    update = precision.update_state([0, 1, 1, 0], [0.4, 0.8, 0.5, 0.1])
    sess = K.get_session()  # initializes the metric's variables
    sess.run(update)
    np.testing.assert_allclose(sess.run(precision.result()), [0.6667, 1.0], atol=1e-4)
    assert [v.shape.as_list() for v in precision.variables] == [[2], [2]]
    config = precision.get_config()
    assert (list(config["thresholds"]), config["top_k"], config["class_id"]) == \
        ([0.3, 0.7], None, None)
    auc = tf.keras.metrics.AUC(num_thresholds=50, curve="PR")
    update = auc.update_state([0, 1, 1, 0, 1], [0.4, 0.8, 0.5, 0.1, 0.3])
    sess = K.get_session()
    sess.run(update)
    assert round(float(sess.run(auc.result())), 4) == 0.9041
    assert sorted(auc.get_config()) == ["curve", "dtype", "from_logits", "label_weights",
                                        "multi_label", "name", "num_labels",
                                        "num_thresholds", "summation_method"]
    rmse = tf.keras.metrics.RootMeanSquaredError()
    update = rmse.update_state([[1.0], [2.0]], [[1.5], [2.5]], sample_weight=[1.0, 3.0])
    sess = K.get_session()
    sess.run(update)
    assert round(float(sess.run(rmse.result())), 4) == 0.5
    with pytest.raises(ValueError, match="threshold values must be in"):
        tf.keras.metrics.Recall(thresholds=1.5)


# -- tf.train optimizers in compile -----------------------------------------------------------
def test_tf_train_optimizer_in_compile_counts_steps_and_scopes_its_variables():
    # compile(tf.train.AdamOptimizer): TF wraps it in TFOptimizer, whose int64 resource
    # variable TFOptimizer/iterations is made at compile and counts the steps; the
    # optimizer's own variables are made under `training/`
    x, y = np.ones((8, 2), "float32"), np.ones((8, 1), "float32")
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,))])
    model.compile(tf.train.AdamOptimizer(0.1), "mse")
    assert [(v.name, type(v).__name__, v.dtype.name) for v in tf.global_variables()] == [
        ("dense/kernel:0", "ResourceVariable", "float32"),
        ("dense/bias:0", "ResourceVariable", "float32"),
        ("TFOptimizer/iterations:0", "ResourceVariable", "int64")]
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert [v.name for v in tf.global_variables()] == [
        "dense/kernel:0", "dense/bias:0", "TFOptimizer/iterations:0", "training/beta1_power:0",
        "training/beta2_power:0", "dense/kernel/Adam:0", "dense/kernel/Adam_1:0",
        "dense/bias/Adam:0", "dense/bias/Adam_1:0"]
    assert K.get_value(tf.global_variables()[2]) == 4   # 2 epochs of 2 steps


# -- regularization in the reported loss ------------------------------------------------------
def test_reported_loss_includes_regularization_once():
    # Dense(kernel_regularizer='l2', activity_regularizer='l1'): names resolve as TF's
    # L2(0.01) / L1(0.01); the activity penalty is divided by the batch size
    # (<layer>/ActivityRegularizer/truediv); a one-output model's 'loss' is the total
    # (0.06 + 0.06 on top of the mse of 9), each penalty counted once. TF 2.15's values.
    model = tf.keras.Sequential([L.Dense(2, input_shape=(3,), kernel_initializer="ones",
                                         kernel_regularizer="l2", activity_regularizer="l1",
                                         name="d")])
    model.compile("sgd", "mse")
    assert sorted(t.name for t in model.losses) == ["d/ActivityRegularizer/truediv:0",
                                                    "d/kernel/Regularizer/mul:0"]
    values = K.get_session().run(model.losses, {model.inputs[0]: np.ones((4, 3), "float32")})
    np.testing.assert_allclose(values, [0.06, 0.06], rtol=1e-5)
    history = model.fit(np.ones((4, 3), "float32"), np.zeros((4, 2), "float32"), epochs=1,
                        batch_size=4, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [9.12], rtol=1e-5)
    config = model.get_config()["layers"][1]["config"]
    assert config["kernel_regularizer"] == {"class_name": "L2",
                                            "config": {"l2": np.float32(0.01).item()}}
    assert config["activity_regularizer"] == {"class_name": "L1",
                                              "config": {"l1": np.float32(0.01).item()}}
    assert model.get_config()["layers"][0]["config"] == {
        "batch_input_shape": [None, 3], "dtype": "float32", "name": "d_input",
        "ragged": False, "sparse": False}


def test_updates_and_losses_for_inputs():
    # Layer.get_updates_for / get_losses_for (TF 1.x): what the calls on those inputs made
    inp, other = tf.keras.Input(shape=(3,)), tf.keras.Input(shape=(3,))
    bn = L.BatchNormalization()
    bn(inp)
    bn(inp, training=True)
    bn(other)
    assert (len(bn.updates), len(bn.get_updates_for(inp)), len(bn.get_updates_for(other)),
            len(bn.get_updates_for(None))) == (6, 4, 2, 0)
    dense = L.Dense(2, activity_regularizer="l2")
    dense(inp)
    assert (len(dense.losses), len(dense.get_losses_for(inp)),
            len(dense.get_losses_for(None))) == (1, 1, 0)
    config = L.InputLayer(input_shape=(4,), name="i").get_config()
    assert sorted(config.items()) == [("batch_input_shape", (None, 4)), ("dtype", "float32"),
                                      ("name", "i"), ("ragged", False), ("sparse", False)]


def test_target_shape_checked_against_the_output_before_a_step():
    # fit with mse and targets (32, 1) for a (None, 2) output: TF's ValueError before any
    # step (mean_squared_error, binary and categorical crossentropy compare elementwise)
    model = tf.keras.Sequential([L.Dense(2, input_shape=(3,), name="d1")])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"A target array with shape \(32, 1\) was passed for "
                                         r"an output of shape \(None, 2\) while using as loss "
                                         r"`mean_squared_error`. This loss expects targets to "
                                         r"have the same shape as the output."):
        model.fit(np.ones((32, 3), "float32"), np.ones((32, 1), "float32"), verbose=0)
