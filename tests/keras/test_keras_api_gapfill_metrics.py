"""tf.keras gap-fill (session 16): the new metric classes updated over several batches
(running results after each), Adamax / Nadam / Ftrl against TF's weights after four
`train_on_batch` steps and a NumPy update, and the learning-rate schedules. Expected
values: the tf-oracle under TF 2.15's tf.compat.v1 (F1Score, FBetaScore, R2Score and the
sample-weighted / class_id cases from TF's eager run, as its graph mode drops or refuses
their updates)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

M = tf.keras.metrics
OPT = tf.keras.optimizers
_rng = np.random.RandomState(1)
BINARY = [(_rng.randint(0, 2, (4, 3)).astype("f"), _rng.rand(4, 3).astype("f"))
          for _ in range(3)]
REG = [(_rng.randn(5).astype("f"), _rng.randn(5).astype("f")) for _ in range(3)]
REG2 = [(_rng.randn(5, 2).astype("f"), _rng.randn(5, 2).astype("f")) for _ in range(3)]
CLASSES = [(_rng.randint(0, 3, (6,)).astype("f"), _rng.randint(0, 3, (6,)).astype("f"))
           for _ in range(3)]
ONE_HOT = [(np.eye(3, dtype="f")[_rng.randint(0, 3, 5)], _rng.rand(5, 3).astype("f"))
           for _ in range(3)]


def _running(metric, batches, sample_weight=None):
    """The metric's result after each batch (one update op, fed batch by batch)."""
    yt = tf.placeholder(tf.float32, batches[0][0].shape)
    yp = tf.placeholder(tf.float32, batches[0][1].shape)
    sw = None if sample_weight is None else tf.placeholder(tf.float32, sample_weight.shape)
    update = metric.update_state(yt, yp, sample_weight=sw)
    result = metric.result()
    sess = tf.keras.backend.get_session()
    out = []
    for a, b in batches:
        feed = {yt: a, yp: b}
        if sw is not None:
            feed[sw] = sample_weight
        sess.run(update, feed)
        out.append(sess.run(result))
    return np.array(out)


CASES = {
    "BinaryIoU": (lambda: M.BinaryIoU(), BINARY, None, [0.2611, 0.2926, 0.3089]),
    "BinaryIoU_t": (lambda: M.BinaryIoU(target_class_ids=[1], threshold=0.3), BINARY, None,
                    [0.4167, 0.5, 0.4]),
    "IoU": (lambda: M.IoU(num_classes=3, target_class_ids=[0, 2]), CLASSES, None,
            [0.1, 0.1333, 0.1678]),
    "IoU_ignore": (lambda: M.IoU(num_classes=3, target_class_ids=[0, 1], ignore_class=2),
                   CLASSES, None, [0.5, 0.4167, 0.2679]),
    "MeanIoU": (lambda: M.MeanIoU(num_classes=3), CLASSES, None, [0.0667, 0.1556, 0.1595]),
    "MeanIoU_w": (lambda: M.MeanIoU(num_classes=3), CLASSES, np.float32([1, 2, 1, 0, 1, 1]),
                  [0.0833, 0.1643, 0.2037]),
    "OneHotIoU": (lambda: M.OneHotIoU(num_classes=3, target_class_ids=[1]), ONE_HOT, None,
                  [0.5, 0.6667, 0.3333]),
    "OneHotMeanIoU": (lambda: M.OneHotMeanIoU(num_classes=3), ONE_HOT, None,
                      [0.6667, 0.3889, 0.2528]),
    "F1Score": (lambda: M.F1Score(), ONE_HOT, None,
                [[0.6667, 0.6667, 1.0], [0.2857, 0.8, 0.5], [0.2222, 0.5, 0.4615]]),
    "F1Score_micro": (lambda: M.F1Score(average="micro", threshold=0.5), ONE_HOT, None,
                      [0.625, 0.5333, 0.4878]),
    "F1Score_macro": (lambda: M.F1Score(average="macro"), ONE_HOT, None,
                      [0.7778, 0.5286, 0.3946]),
    "F1Score_weighted_sw": (lambda: M.F1Score(average="macro", threshold=0.3), ONE_HOT,
                            np.float32([1, 2, 0, 1, 3]), [0.5278, 0.4909, 0.4012]),
    "FBetaScore": (lambda: M.FBetaScore(average="weighted", beta=2.0, threshold=0.4), ONE_HOT,
                   None, [0.7917, 0.6632, 0.5743]),
    "MeanRelativeError": (lambda: M.MeanRelativeError(normalizer=[1., 2., 3., 4., 5.]), REG,
                          None, [0.3663, 0.3952, 0.4051]),
    "R2Score": (lambda: M.R2Score(), REG2, None, [-0.3988, -0.4744, -0.9633]),
    "R2Score_raw": (lambda: M.R2Score(class_aggregation=None), REG2, None,
                    [[-0.0391, -0.7585], [-0.1924, -0.7563], [-0.2303, -1.6962]]),
    "R2Score_variance": (lambda: M.R2Score(class_aggregation="variance_weighted_average"),
                         REG2, None, [-0.3441, -0.4285, -0.7849]),
    "R2Score_adjusted": (lambda: M.R2Score(num_regressors=1), REG2, None,
                         [-0.5736, -0.5563, -1.0334]),
    "PrecisionAtRecall": (lambda: M.PrecisionAtRecall(0.5), BINARY, None,
                          [0.6667, 0.7143, 0.6207]),
    "PrecisionAtRecall_class": (lambda: M.PrecisionAtRecall(0.4, class_id=1), BINARY, None,
                                [0.75, 0.625, 0.5556]),
    "RecallAtPrecision": (lambda: M.RecallAtPrecision(0.6, num_thresholds=50), BINARY, None,
                          [1.0, 1.0, 0.8571]),
    "SensitivityAtSpecificity": (lambda: M.SensitivityAtSpecificity(0.5), BINARY, None,
                                 [0.375, 0.4375, 0.381]),
    "SensitivityAtSpecificity_sw": (lambda: M.SensitivityAtSpecificity(0.3, num_thresholds=10),
                                    BINARY, np.float32([1, 0, 2, 1]),
                                    [0.3333, 0.3889, 0.6087]),
    "SpecificityAtSensitivity": (lambda: M.SpecificityAtSensitivity(0.5, num_thresholds=20),
                                 BINARY, None, [0.0, 0.5, 0.4]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_metric_running_results_match_tf(name):
    make, batches, sample_weight, expected = CASES[name]
    np.testing.assert_allclose(_running(make(), batches, sample_weight), expected, atol=1e-4)


def test_metric_variables_and_configs_match_tf():
    m = M.BinaryIoU()
    _running(m, BINARY[:1])
    assert [v.name for v in m.variables] == ["total_confusion_matrix:0"]
    assert m.variables[0].dtype.base_dtype == tf.float64
    assert m.get_config() == {"target_class_ids": [0, 1], "threshold": 0.5,
                              "name": "binary_io_u", "dtype": "float32"}
    assert M.MeanIoU(3).get_config() == {"num_classes": 3, "name": "mean_io_u",
                                         "dtype": "float32", "ignore_class": None,
                                         "sparse_y_true": True, "sparse_y_pred": True,
                                         "axis": -1}
    assert "sparse_y_true" not in M.OneHotMeanIoU(3).get_config()
    f1 = M.F1Score()
    _running(f1, ONE_HOT[:1])
    assert [v.name.split(":")[0].rstrip("_0123456789") for v in f1.variables] == [
        "true_positives", "false_positives", "false_negatives", "intermediate_weights"]
    assert f1.get_config() == {"name": "f1_score", "dtype": "float32", "average": None,
                               "threshold": None}
    r2 = M.R2Score()
    _running(r2, REG2[:1])
    assert [v.name.split("_")[0] for v in r2.variables][:2] == ["num", "squared"]
    p = M.PrecisionAtRecall(0.5)
    assert p.get_config() == {"recall": 0.5, "num_thresholds": 200, "class_id": None,
                              "name": "precision_at_recall", "dtype": "float32"}
    assert M.MeanRelativeError([1., 2.]).get_config()["normalizer"].tolist() == [1.0, 2.0]


def test_sum_and_mean_tensor_match_tf():
    rng = np.random.RandomState(7)
    values = [rng.randn(2, 3).astype("f") for _ in range(3)]
    for metric, check in [(M.Sum(), lambda seen: np.sum(seen)),
                          (M.MeanTensor(), lambda seen: np.mean(seen, axis=0))]:
        x = tf.placeholder(tf.float32, [2, 3])
        update, result = metric.update_state(x), metric.result()
        sess = tf.keras.backend.get_session()
        for i, v in enumerate(values):
            sess.run(update, {x: v})
            np.testing.assert_allclose(sess.run(result), check(values[:i + 1]), rtol=1e-5)
        metric.reset_states()
        assert np.all(sess.run(result) == 0)
    with pytest.raises(ValueError, match="same shape"):
        m = M.MeanTensor()
        m.update_state(tf.zeros([2, 3]))
        m.update_state(tf.zeros([3]))


@pytest.mark.parametrize("call, message", [
    (lambda: M.F1Score(average="bad"), "Invalid `average` argument value"),
    (lambda: M.FBetaScore(beta=0.0), "It should be > 0"),
    (lambda: M.F1Score(threshold=1.5), "Invalid `threshold` argument value"),
    (lambda: M.R2Score(class_aggregation="x"), "Invalid value for argument `class_aggregation`"),
    (lambda: M.PrecisionAtRecall(1.5), r"Argument `recall` must be in the range \[0, 1\]"),
    (lambda: M.SpecificityAtSensitivity(0.5, num_thresholds=0), "`num_thresholds` must be"),
    (lambda: M.IoU(3, [5]), r"Target class id 5 is out of range, which is \[0, 3\)"),
    (lambda: M.R2Score().update_state(tf.zeros([5]), tf.zeros([5])),
     "R2Score expects 2D inputs"),
])
def test_metric_errors_match_tf(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_metrics_in_compile_report_running_values():
    x = np.float32([[0.1], [0.9], [0.4], [0.8]])
    y = np.float32([[0], [1], [1], [1]])
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,),
                                                       kernel_initializer="ones",
                                                       bias_initializer="zeros")])
    model.compile("sgd", "mse", metrics=[M.BinaryIoU(), M.R2Score()])
    values = model.evaluate(x, y, verbose=0, batch_size=2)
    assert model.metrics_names == ["loss", "binary_io_u", "r2_score"]
    # NumPy: thresholded predictions [0, 1, 0, 1] against [0, 1, 1, 1]
    iou = np.mean([1 / 2, 2 / 3])
    r2 = 1 - np.sum((y - x) ** 2) / np.sum((y - y.mean()) ** 2)
    np.testing.assert_allclose(values[1:], [iou, r2], rtol=1e-5)


# -- optimizers --------------------------------------------------------------------------------
def _train(opt, steps=4):
    inp = tf.keras.Input((3,))
    init = tf.keras.initializers.Constant(np.arange(6).reshape(3, 2) / 10.0)
    out = tf.keras.layers.Dense(2, kernel_initializer=init, bias_initializer="ones",
                                name="d")(inp)
    model = tf.keras.Model(inp, out)
    model.compile(opt, "mse")
    x = np.arange(12, dtype="f").reshape(4, 3) / 10.0
    y = np.float32([[1, 0], [0, 1], [1, 1], [0, 0]])
    for _ in range(steps):
        model.train_on_batch(x, y)
    return model.get_weights(), [v.name for v in opt.weights], opt.get_weights()


OPTIMIZERS = {
    "Adamax": (lambda: OPT.Adamax(), [-0.003997, 0.096003, 0.196003, 0.296003, 0.396003, 0.496003],
               [0.996004, 0.996002]),
    "Adamax_args": (lambda: OPT.Adamax(0.05, beta_1=0.8, epsilon=1e-3),
                    [-0.176016, -0.077332, 0.024148, 0.122442, 0.224273, 0.322276],
                    [0.825362, 0.821373]),
    "Nadam": (lambda: OPT.Nadam(), [-0.003299, 0.096701, 0.196701, 0.296701, 0.396701, 0.496701],
              [0.996702, 0.996701]),
    "Nadam_args": (lambda: OPT.Nadam(0.02, beta_2=0.99),
                   [-0.064112, 0.035768, 0.135906, 0.235753, 0.335921, 0.435741],
                   [0.936022, 0.935667]),
    "Ftrl": (lambda: OPT.Ftrl(), [-0.002006, 0.049264, 0.107201, 0.169945, 0.234804, 0.308771],
             [0.656401, 0.705638]),
    "Ftrl_reg": (lambda: OPT.Ftrl(0.1, learning_rate_power=-0.7, initial_accumulator_value=0.2,
                                l1_regularization_strength=0.01,
                                l2_regularization_strength=0.02),
                 [-0.141429, -0.096673, -0.035376, 0.017396, 0.091767, 0.159186],
                 [0.545611, 0.57859]),
    "Ftrl_shrinkage": (lambda: OPT.Ftrl(0.1, l2_shrinkage_regularization_strength=0.05,
                                      beta=0.3),
                       [-0.074903, -0.040658, -0.004298, 0.037239, 0.084842, 0.135308],
                       [0.419065, 0.446643]),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_weights_after_four_steps_match_tf(name):
    make, kernel, bias = OPTIMIZERS[name]
    weights, names, _ = _train(make())
    np.testing.assert_allclose(weights[0].ravel(), kernel, atol=2e-6)
    np.testing.assert_allclose(weights[1], bias, atol=2e-6)
    kind = name.split("_")[0]
    if kind == "Ftrl":
        assert names == ["training/Ftrl/iter:0", "training/Ftrl/d/kernel/accumulator:0",
                         "training/Ftrl/d/kernel/linear:0", "training/Ftrl/d/bias/accumulator:0",
                         "training/Ftrl/d/bias/linear:0"]
    else:
        cache = ["training/Nadam/momentum_cache:0"] if kind == "Nadam" else []
        assert names == [f"training/{kind}/iter:0", *cache, f"training/{kind}/d/kernel/m:0",
                         f"training/{kind}/d/bias/m:0", f"training/{kind}/d/kernel/v:0",
                         f"training/{kind}/d/bias/v:0"]


def test_adamax_and_nadam_steps_match_numpy():
    g = np.float32([0.5, -1.0])
    for make, step in [(lambda: OPT.Adamax(0.1), _adamax_numpy), (lambda: OPT.Nadam(0.1),
                                                                  _nadam_numpy)]:
        with tf.Graph().as_default():
            var = tf.Variable(np.float32([1.0, 2.0]), name="w")
            loss = tf.reduce_sum(var * g)
            update = make().get_updates(loss, [var])
            sess = tf.keras.backend.get_session()
            for _ in range(3):
                sess.run(update)
            np.testing.assert_allclose(sess.run(var), step(np.float32([1.0, 2.0]), g, 3),
                                       rtol=1e-5)


def _adamax_numpy(w, g, steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-7):
    m = v = np.zeros_like(w)
    for t in range(1, steps + 1):
        m = b1 * m + (1 - b1) * g
        v = np.maximum(b2 * v, np.abs(g))
        w = w - lr / (1 - b1 ** t) * m / (v + eps)
    return w


def _nadam_numpy(w, g, steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-7, decay=0.004):
    m = v = np.zeros_like(w)
    cache = 1.0
    for t in range(1, steps + 1):
        mu_t = b1 * (1 - 0.5 * 0.96 ** (decay * t))
        mu_next = b1 * (1 - 0.5 * 0.96 ** (decay * (t + 1)))
        cache_new = cache * mu_t
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_bar = (1 - mu_t) * g / (1 - cache_new) + mu_next * m / (1 - cache_new * mu_next)
        w = w - lr * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
        cache = cache_new
    return w


def test_optimizer_serialize_deserialize_and_legacy_as_tf():
    assert OPT.serialize(OPT.Adamax(0.01)) == {"class_name": "Adamax", "config": {
        "name": "Adamax", "learning_rate": 0.01, "decay": 0.0, "beta_1": 0.9, "beta_2": 0.999,
        "epsilon": 1e-07}}
    assert list(OPT.serialize(OPT.SGD(0.1, momentum=0.9))["config"]) == [
        "name", "learning_rate", "decay", "momentum", "nesterov"]
    nadam = OPT.deserialize({"class_name": "Nadam", "config": {"learning_rate": 0.1}})
    assert isinstance(nadam, OPT.Nadam) and nadam.get_config()["learning_rate"] == 0.1
    assert nadam.get_config()["decay"] == 0.004  # Keras's schedule_decay default
    assert isinstance(OPT.deserialize({"class_name": "Adam", "config": {}}), OPT.Adam)
    assert isinstance(OPT.get("ftrl"), OPT.Ftrl)
    with pytest.raises(TypeError):
        OPT.deserialize("nope")
    with pytest.raises(ValueError, match="Unknown optimizer: 'Nope'"):
        OPT.deserialize({"class_name": "Nope", "config": {}})
    assert OPT.legacy.Adam is OPT.Adam and OPT.legacy.Ftrl is OPT.Ftrl
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative"):
        OPT.Ftrl(learning_rate_power=0.5)


def test_schedules_match_tf():
    S = OPT.schedules
    exp = S.ExponentialDecay(0.1, 10, 0.5, staircase=True)
    pw = S.PiecewiseConstantDecay([5, 10], [1.0, 0.5, 0.1])
    poly = S.PolynomialDecay(0.1, 20, 0.01, power=2.0)
    inv = S.InverseTimeDecay(0.1, 5, 0.5)
    cos, sgdr = S.CosineDecay(0.1, 20, alpha=0.1), S.CosineDecayRestarts(0.1, 5)
    got = tf.Session().run([[exp(tf.constant(i)) for i in (0, 9, 10, 25)],
                            [pw(3), pw(7), pw(12)], [poly(5), poly(30)], inv(7), cos(7),
                            sgdr(7)])
    np.testing.assert_allclose(got[0], [0.1, 0.1, 0.05, 0.025], rtol=1e-6)
    np.testing.assert_allclose(got[1], [1.0, 0.5, 0.1])
    np.testing.assert_allclose(got[2], [0.060625, 0.01], rtol=1e-5)
    np.testing.assert_allclose(got[3:], [0.058824, 0.07543, 0.090451], rtol=1e-4)
    assert exp.get_config() == {"initial_learning_rate": 0.1, "decay_steps": 10,
                                "decay_rate": 0.5, "staircase": True, "name": None}
    assert S.serialize(pw) == {"class_name": "PiecewiseConstantDecay", "config": {
        "boundaries": [5, 10], "values": [1.0, 0.5, 0.1], "name": None}}
    again = S.deserialize({"class_name": "ExponentialDecay", "config": {
        "initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}})
    assert isinstance(again, S.ExponentialDecay)
    assert tf.keras.experimental.CosineDecay is S.CosineDecay
    assert isinstance(cos, S.LearningRateSchedule)


def test_optimizer_with_schedule_steps_at_its_iterations():
    inp = tf.keras.Input((3,))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(1)(inp))
    opt = OPT.SGD(learning_rate=OPT.schedules.ExponentialDecay(0.1, 1, 0.5))
    model.compile(opt, "mse")
    model.set_weights([np.zeros((3, 1), "f"), np.zeros(1, "f")])
    for _ in range(3):
        model.train_on_batch(np.ones((4, 3), "f"), np.ones((4, 1), "f"))
    np.testing.assert_allclose(model.get_weights()[0].ravel(), [0.226] * 3, atol=1e-6)
    assert opt.get_config()["learning_rate"]["class_name"] == "ExponentialDecay"
    again = OPT.deserialize(OPT.serialize(opt))
    assert isinstance(again._schedule, OPT.schedules.ExponentialDecay)
