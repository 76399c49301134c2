"""`tf.contrib.learn`'s estimators as TF 1.0-1.4 tutorials use them (iris, boston-style
regression, wide & deep, the old ``model_fn(features, targets, mode)`` forms).

TF 2.15 has no contrib.learn, so there is no oracle run: names, defaults, return values and
messages follow TF 1.x's contrib/learn sources (estimator.py, dnn.py, linear.py,
model_fn.py).
"""

import inspect
import re
import types

import numpy as np
import pytest
from sklearn.datasets import load_iris

import flowgraph as tf
from flowgraph.contrib.learn import learn_canned

learn = tf.contrib.learn


@pytest.fixture(scope="module")
def iris():
    data = load_iris()
    order = np.random.RandomState(0).permutation(len(data.target))
    return data.data[order].astype(np.float32), data.target[order].astype(np.int64)


def _regression_data(n=200, d=13, seed=1):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, d).astype(np.float32)
    w = rng.randn(d).astype(np.float32)
    return x, (x @ w + 0.5).astype(np.float32)


def test_iris_tutorial_dnn_classifier(iris, tmp_path):
    x, y = iris
    cols = learn.infer_real_valued_columns_from_input(x)
    assert [(c.key, c.shape) for c in cols] == [("", (4,))]
    clf = learn.DNNClassifier(hidden_units=[10, 20, 10], feature_columns=cols, n_classes=3,
                              model_dir=str(tmp_path), config=learn.RunConfig(tf_random_seed=7))
    assert clf.fit(x=x[:120], y=y[:120], steps=2000) is clf
    scores = clf.evaluate(x=x[120:], y=y[120:])
    assert {"loss", "accuracy", "global_step"} <= set(scores)
    assert scores["global_step"] == 2000
    assert scores["accuracy"] > 0.9

    # predict yields class ids one example at a time (contrib.learn's default, as_iterable)
    gen = clf.predict(x=x[120:])
    assert isinstance(gen, types.GeneratorType)
    classes = list(gen)
    assert all(isinstance(c, int) for c in classes) and len(classes) == 30
    assert np.mean(np.array(classes) == y[120:]) == pytest.approx(float(scores["accuracy"]))
    arr = clf.predict(x=x[120:], as_iterable=False)
    assert arr.dtype == np.int64 and arr.shape == (30,)
    np.testing.assert_array_equal(arr, classes)
    np.testing.assert_array_equal(clf.predict_classes(x=x[120:], as_iterable=False), arr)
    proba = clf.predict_proba(x=x[120:], as_iterable=False)
    assert proba.shape == (30, 3)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(proba.argmax(1), arr)
    first = next(clf.predict_proba(x=x[120:]))
    np.testing.assert_allclose(first, proba[0], rtol=1e-6)
    # the raw head outputs, through `outputs=`
    raw = clf.predict(x=x[:3], outputs=["logits"], as_iterable=False)
    assert set(raw) == {"logits"} and raw["logits"].shape == (3, 3)

    names = clf.get_variable_names()
    assert "dnn/hiddenlayer_0/kernel" in names and "global_step" in names
    assert clf.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (4, 10)
    assert clf.get_variable_value("dnn/logits/kernel").shape == (10, 3)


def test_dnn_default_optimizer_is_adagrad_at_0_05(tmp_path):
    """Two steps of the default optimizer: |dw| = lr * |g| / sqrt(acc) with
    acc2 - acc1 = g**2, so lr = |dw| * sqrt(acc2) / sqrt(acc2 - acc1)."""
    x, y = _regression_data(64, 3)
    reg = learn.DNNRegressor(hidden_units=[4], feature_columns=learn.
                             infer_real_valued_columns_from_input(x), model_dir=str(tmp_path))
    values = []
    for _ in range(2):
        reg.fit(x=x, y=y, steps=1, batch_size=64)
        values.append((reg.get_variable_value("dnn/logits/bias"),
                       reg.get_variable_value("dnn/logits/bias/t_0/Adagrad")))
    (w1, a1), (w2, a2) = values
    lr = np.abs(w2 - w1) * np.sqrt(a2) / np.sqrt(a2 - a1)
    np.testing.assert_allclose(lr, 0.05, rtol=1e-3)


def test_linear_default_optimizer_rate():
    cols = [tf.feature_column.numeric_column(f"f{i}") for i in range(100)]
    opt = learn_canned._optimizer(None, learn_canned._linear_rate(cols), None, "linear")
    assert type(opt).__name__ == "FtrlOptimizer" and opt._learning_rate == pytest.approx(0.1)
    opt = learn_canned._optimizer(None, learn_canned._linear_rate(cols[:2]), None, "linear")
    assert opt._learning_rate == pytest.approx(0.2)
    named = learn_canned._optimizer("SGD", 0.05, None, "dnn")
    assert type(named).__name__ == "GradientDescentOptimizer"
    with pytest.raises(ValueError, match="unknown name 'Sgd'"):
        learn_canned._optimizer("Sgd", 0.05, None, "dnn")


def test_signatures_follow_contrib_learn():
    sig = inspect.signature(learn.DNNClassifier)
    assert list(sig.parameters)[:6] == ["hidden_units", "feature_columns", "model_dir",
                                        "n_classes", "weight_column_name", "optimizer"]
    assert sig.parameters["n_classes"].default == 2
    assert sig.parameters["optimizer"].default is None
    fit = inspect.signature(learn.Estimator.fit)
    assert list(fit.parameters)[1:] == ["x", "y", "input_fn", "steps", "batch_size",
                                        "monitors", "max_steps"]
    assert (learn.ModeKeys.TRAIN, learn.ModeKeys.EVAL, learn.ModeKeys.INFER) == (
        "train", "eval", "infer")


def test_boston_style_regression_mean_loss(tmp_path):
    x, y = _regression_data()
    cols = learn.infer_real_valued_columns_from_input(x)
    reg = learn.LinearRegressor(feature_columns=cols, model_dir=str(tmp_path / "lin"),
                                optimizer=tf.train.GradientDescentOptimizer(0.1))
    reg.fit(x=x, y=y, steps=300)
    preds = reg.predict(x=x, as_iterable=False)
    assert preds.shape == (200,) and preds.dtype == np.float32
    scores = reg.evaluate(x=x, y=y, batch_size=200)
    # contrib.learn's loss is the mean over the batch
    np.testing.assert_allclose(scores["loss"], np.mean((preds - y) ** 2), rtol=1e-4)
    assert scores["loss"] < 1e-3
    scalar = next(reg.predict(x=x[:1]))
    assert isinstance(scalar, float) and scalar == pytest.approx(preds[0], rel=1e-5)
    np.testing.assert_allclose(reg.get_variable_value("linear/linear_model/bias_weights"),
                               [0.5], atol=0.02)

    dnn = learn.DNNRegressor(hidden_units=[32, 16], feature_columns=cols,
                             model_dir=str(tmp_path / "dnn"))
    first = dnn.fit(x=x, y=y, steps=1).evaluate(x=x, y=y)["loss"]
    last = dnn.fit(x=x, y=y, steps=400).evaluate(x=x, y=y)["loss"]
    assert last < 0.5 * first


def test_wide_and_deep_with_input_fn(tmp_path):
    rng = np.random.RandomState(3)
    age = rng.uniform(18, 80, 300).astype(np.float32)
    hours = rng.uniform(10, 60, 300).astype(np.float32)
    label = ((age / 80 + hours / 60) > 1.0).astype(np.int64)
    feats = {"age": age, "hours": hours}
    age_col = tf.feature_column.numeric_column("age")
    hours_col = tf.feature_column.numeric_column("hours", normalizer_fn=lambda t: t / 60)
    scaled_age = tf.feature_column.numeric_column("age", normalizer_fn=lambda t: t / 80)
    wide = [tf.feature_column.bucketized_column(age_col, [25, 35, 45, 55, 65])]
    est = learn.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=[scaled_age, hours_col],
        dnn_hidden_units=[8, 4], dnn_optimizer="Adam", model_dir=str(tmp_path),
        config=learn.RunConfig(tf_random_seed=3))
    train_fn = learn.io.numpy_input_fn(feats, label, batch_size=50, num_epochs=None,
                                       shuffle=True)
    est.fit(input_fn=train_fn, steps=300)
    eval_fn = learn.io.numpy_input_fn(feats, label, shuffle=False)
    scores = est.evaluate(input_fn=eval_fn)
    assert scores["accuracy"] > 0.9
    names = est.get_variable_names()
    assert any(n.startswith("linear/") for n in names)
    assert any(n.startswith("dnn/") for n in names)
    classes = est.predict(input_fn=learn.io.numpy_input_fn(feats, shuffle=False),
                          as_iterable=False)
    assert classes.shape == (300,) and set(classes.tolist()) <= {0, 1}

    with pytest.raises(ValueError, match="Either linear_feature_columns or "
                                         "dnn_feature_columns must be defined"):
        learn.DNNLinearCombinedRegressor(model_dir=str(tmp_path / "x")).fit(
            input_fn=train_fn, steps=1)


def _tuple_model_fn(features, targets, mode):
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    pred = w * features[""] + b
    loss = tf.reduce_mean(tf.square(pred - targets)) if targets is not None else None
    train_op = None
    if mode == learn.ModeKeys.TRAIN:
        train_op = tf.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=tf.train.get_global_step())
    return pred, loss, train_op


def _ops_model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    pred = w * features[""]
    if mode == learn.ModeKeys.INFER:
        return learn.ModelFnOps(mode, predictions={"y": pred, "double": 2 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return learn.ModelFnOps(mode, predictions={"y": pred}, loss=loss, train_op=train_op,
                            eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels,
                                                                                 pred)})


def test_old_model_fn_tuple_form(tmp_path):
    x = np.linspace(-1, 1, 64).astype(np.float32)
    est = learn.Estimator(model_fn=_tuple_model_fn, model_dir=str(tmp_path))
    est.fit(x=x, y=3 * x - 1, steps=300)
    assert est.get_variable_value("w") == pytest.approx(3.0, abs=0.05)
    assert est.get_variable_value("b") == pytest.approx(-1.0, abs=0.05)
    scores = est.evaluate(x=x, y=3 * x - 1)
    assert scores["global_step"] == 300 and scores["loss"] < 1e-2
    out = est.predict(x=np.array([0.0, 1.0], np.float32), as_iterable=False)
    np.testing.assert_allclose(out, [-1.0, 2.0], atol=0.05)
    assert len(list(est.predict(x=x))) == 64
    # the metrics argument of evaluate: name -> metric_fn(predictions, labels)
    extra = est.evaluate(x=x, y=3 * x - 1, metrics={"mse": tf.metrics.mean_squared_error})
    assert extra["mse"] == pytest.approx(float(scores["loss"]), rel=1e-3)


def test_old_model_fn_ops_form_params_and_dict_predictions(tmp_path):
    x = np.linspace(0, 1, 32).astype(np.float32)
    est = learn.Estimator(model_fn=_ops_model_fn, model_dir=str(tmp_path),
                          params={"lr": 0.5})
    est.fit(x=x, y=2 * x, steps=100, batch_size=8)
    scores = est.evaluate(x=x, y=2 * x)
    assert scores["mae"] < 0.05
    rows = list(est.predict(x=x[:3]))
    assert set(rows[0]) == {"y", "double"}
    assert rows[2]["double"] == pytest.approx(2 * rows[2]["y"])
    stacked = est.predict(x=x[:3], as_iterable=False, outputs=["y"])
    assert set(stacked) == {"y"} and stacked["y"].shape == (3,)
    metric = learn.MetricSpec(tf.metrics.mean_absolute_error, prediction_key="y")
    assert est.evaluate(x=x, y=2 * x, metrics={"m": metric})["m"] == pytest.approx(
        float(scores["mae"]))


def test_skcompat(tmp_path):
    x = np.linspace(-1, 1, 64).astype(np.float32)
    sk = learn.SKCompat(learn.Estimator(model_fn=_tuple_model_fn, model_dir=str(tmp_path)))
    assert sk.fit(x, 3 * x - 1, steps=300) is sk
    assert sk.score(x, 3 * x - 1)["loss"] < 1e-2
    pred = sk.predict(x[:4])
    assert isinstance(pred, np.ndarray) and pred.shape == (4,)


def test_export_savedmodel_with_input_fn_ops(tmp_path):
    x = np.linspace(-1, 1, 64).astype(np.float32)
    est = learn.Estimator(model_fn=_tuple_model_fn, model_dir=str(tmp_path / "m"))
    est.fit(x=x, y=3 * x - 1, steps=200)

    def serving_input_fn():
        inp = tf.placeholder(tf.float32, [None], name="x")
        return learn.InputFnOps(inp, None, {"x": inp})

    path = est.export_savedmodel(str(tmp_path / "export"), serving_input_fn)
    predict = tf.contrib.predictor.from_saved_model(
        path.decode() if isinstance(path, bytes) else path)
    out = predict({"x": np.array([0.0, 1.0], np.float32)})
    np.testing.assert_allclose(next(iter(out.values())), [-1.0, 2.0], atol=0.05)


def _exact(message):
    return "^" + re.escape(message) + "$"


def test_input_argument_errors(tmp_path, iris):
    x, y = iris
    est = learn.Estimator(model_fn=_tuple_model_fn, model_dir=str(tmp_path))
    fn = learn.io.numpy_input_fn(x[:, 0], y.astype(np.float32), shuffle=False)
    with pytest.raises(ValueError, match=_exact("Either x or input_fn must be provided.")):
        est.fit(x=None, input_fn=None, steps=1)
    with pytest.raises(ValueError, match=_exact("Can not provide both input_fn and x or y.")):
        est.fit(x=x, input_fn=fn, steps=1)
    with pytest.raises(ValueError, match=_exact("Can not provide both input_fn and x or y.")):
        est.fit(y=y, input_fn=fn, steps=1)
    with pytest.raises(ValueError, match=_exact("Can not provide both input_fn and batch_size.")):
        est.fit(input_fn=fn, batch_size=100, steps=1)
    with pytest.raises(ValueError, match=_exact("Inputs cannot be tensors. Please provide "
                                                 "input_fn.")):
        est.fit(x=tf.constant(1.0), steps=1)
    # nothing trained yet
    with pytest.raises(learn.NotFittedError, match="Couldn't find trained model at"):
        est.evaluate(x=x[:, 0], y=y.astype(np.float32))
    with pytest.raises(learn.NotFittedError):
        est.predict(x=x[:, 0])
    assert issubclass(learn.NotFittedError, ValueError)


def test_model_fn_errors(tmp_path):
    with pytest.raises(ValueError, match="Missing train_op"):
        learn.ModelFnOps(learn.ModeKeys.TRAIN, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing loss"):
        learn.ModelFnOps(learn.ModeKeys.EVAL, predictions=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing predictions"):
        learn.ModelFnOps(learn.ModeKeys.INFER)

    est = learn.Estimator(model_fn=_tuple_model_fn, model_dir=str(tmp_path), params={"a": 1})
    with pytest.raises(ValueError, match="does not have a params argument"):
        est.fit(x=np.zeros(4, np.float32), y=np.zeros(4, np.float32), steps=1)

    def bad_model_fn(features, targets, mode):
        return tf.constant(1.0)
    est = learn.Estimator(model_fn=bad_model_fn, model_dir=str(tmp_path / "bad"))
    with pytest.raises(ValueError, match=r"model_fn bad_model_fn must return ModelFnOps or "
                                         r"\(predictions, loss, train_op\); got Tensor"):
        est.fit(x=np.zeros(4, np.float32), y=np.zeros(4, np.float32), steps=1)

    cols = learn.infer_real_valued_columns_from_input(np.zeros((2, 3)))
    clf = learn.DNNClassifier([4], cols, enable_centered_bias=True,
                              model_dir=str(tmp_path / "c"))
    with pytest.raises(ValueError, match="enable_centered_bias=True is not supported"):
        clf.fit(x=np.zeros((2, 3), np.float32), y=np.zeros(2, np.int64), steps=1)
    with pytest.raises(ValueError, match="feature 'a' has dtype <U1"):
        learn.infer_real_valued_columns_from_input({"a": np.array(["x", "y"])})


def test_experiment_and_learn_runner(tmp_path):
    x = np.linspace(-1, 1, 64).astype(np.float32)
    train_fn = learn.io.numpy_input_fn(x, 3 * x - 1, batch_size=16, num_epochs=None,
                                       shuffle=True)
    eval_fn = learn.io.numpy_input_fn(x, 3 * x - 1, shuffle=False)

    def experiment_fn(output_dir):
        est = learn.Estimator(model_fn=_tuple_model_fn, model_dir=output_dir)
        return learn.Experiment(est, train_fn, eval_fn, train_steps=300, eval_steps=None,
                                eval_metrics={"mae": tf.metrics.mean_absolute_error})

    metrics, exports = learn.learn_runner.run(experiment_fn, str(tmp_path / "a"))
    assert metrics["global_step"] == 300 and metrics["mae"] < 0.05 and exports == []
    smoke = learn.learn_runner.run(experiment_fn, str(tmp_path / "b"), schedule="test")
    assert smoke["global_step"] == 1

    # a tf.estimator estimator works too, built from (run_config, hparams)
    def core_experiment_fn(run_config, hparams):
        est = tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")], config=run_config)
        fn = tf.estimator.inputs.numpy_input_fn({"x": x}, 3 * x - 1, shuffle=False)
        return learn.Experiment(est, fn, fn, train_steps=hparams["steps"], eval_steps=1)

    config = learn.RunConfig(model_dir=str(tmp_path / "c"))
    result = learn.learn_runner.run(core_experiment_fn, run_config=config,
                                    hparams={"steps": 3}, schedule="evaluate")
    assert "loss" in result  # evaluated the untrained (initial) model

    with pytest.raises(ValueError, match="Must specify either output_dir or run_config"):
        learn.learn_runner.run(experiment_fn)
    with pytest.raises(TypeError, match="did not return an Experiment"):
        learn.learn_runner.run(lambda output_dir: None, str(tmp_path / "d"))
    with pytest.raises(ValueError, match="schedule 'run_std_server' is not one of"):
        learn.learn_runner.run(experiment_fn, str(tmp_path / "e"), schedule="run_std_server")


def test_dataframe_float64_data_and_contrib_variable_names(tmp_path):
    pd = pytest.importorskip("pandas")
    x, y = _regression_data(120, 3)
    frame = pd.DataFrame(x.astype(np.float64), columns=["a", "b", "c"])
    target = pd.Series(y.astype(np.float64))
    cols = learn.infer_real_valued_columns_from_input(frame)
    assert [(c.key, c.shape, c.dtype.name) for c in cols] == [("", (3,), "float64")]
    lin = learn.LinearRegressor(cols, model_dir=str(tmp_path / "lin"), optimizer="SGD")
    lin.fit(x=frame, y=target, steps=200)
    np.testing.assert_allclose(lin.predict(x=frame, as_iterable=False), y, atol=0.05)
    # contrib.learn's names read the same variables as tf.estimator's
    np.testing.assert_array_equal(lin.get_variable_value("linear/bias_weight"),
                                  lin.get_variable_value("linear/linear_model/bias_weights"))
    assert lin.get_variable_value("linear//weight").shape == (3, 1)
    dnn = learn.DNNClassifier([5], cols, model_dir=str(tmp_path / "dnn"))
    dnn.fit(x=frame, y=(target > 0).astype(np.int64), steps=2)
    np.testing.assert_array_equal(dnn.get_variable_value("dnn/hiddenlayer_0/weights"),
                                  dnn.get_variable_value("dnn/hiddenlayer_0/kernel"))
    assert dnn.get_variable_value("dnn/logits/biases").shape == (1,)
    with pytest.raises(tf.errors.NotFoundError, match="dnn/hiddenlayer_9/weights"):
        dnn.get_variable_value("dnn/hiddenlayer_9/weights")


def test_feature_engineering_fn(tmp_path):
    x = np.linspace(-1, 1, 64).astype(np.float32)

    def double_features(features, labels):
        return {"": 2 * features[""]}, labels

    est = learn.Estimator(model_fn=_tuple_model_fn, model_dir=str(tmp_path / "e"),
                          feature_engineering_fn=double_features)
    est.fit(x=x, y=3 * x - 1, steps=300)
    # the model sees 2x, so it learns w = 1.5 for y = 3x - 1
    assert est.get_variable_value("w") == pytest.approx(1.5, abs=0.05)
    np.testing.assert_allclose(est.predict(x=np.array([1.0], np.float32), as_iterable=False),
                               [2.0], atol=0.05)
    cols = learn.infer_real_valued_columns_from_input(x.reshape(-1, 1))
    reg = learn.LinearRegressor(cols, model_dir=str(tmp_path / "r"), optimizer="SGD",
                                feature_engineering_fn=double_features)
    reg.fit(x=x.reshape(-1, 1), y=3 * x - 1, steps=300)
    assert float(reg.get_variable_value("linear//weight")[0, 0]) == pytest.approx(1.5,
                                                                                   abs=0.05)


def test_contrib_layers_feature_columns_census_style(tmp_path, iris):
    layers = tf.contrib.layers
    # the iris tutorial's column
    x, y = iris
    col = layers.real_valued_column("", dimension=4)
    assert (col.key, col.shape, col.dtype.name) == ("", (4,), "float32")
    clf = learn.DNNClassifier([10], [col], n_classes=3, model_dir=str(tmp_path / "iris"),
                              config=learn.RunConfig(tf_random_seed=1))
    assert clf.fit(x=x, y=y, steps=300).evaluate(x=x, y=y)["accuracy"] > 0.8

    # wide & deep v1: sparse, bucketized, crossed, embedding and one-hot columns
    rng = np.random.RandomState(5)
    n = 200
    gender = rng.choice(["female", "male"], n)
    job = rng.choice(["a", "b", "c", "d"], n)
    age = rng.uniform(18, 80, n).astype(np.float32)
    label = ((gender == "male") ^ (age > 45)).astype(np.int64)
    gender_col = layers.sparse_column_with_keys("gender", keys=["female", "male"])
    job_col = layers.sparse_column_with_hash_bucket("job", hash_bucket_size=10)
    age_col = layers.real_valued_column("age")
    age_buckets = layers.bucketized_column(age_col, boundaries=[30, 45, 60])
    wide = [gender_col, job_col, age_buckets,
            layers.crossed_column([gender_col, age_buckets], hash_bucket_size=100)]
    deep = [layers.embedding_column(job_col, dimension=2), layers.one_hot_column(gender_col),
            layers.real_valued_column("age", normalizer=lambda t: t / 80)]
    est = learn.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[8],
        model_dir=str(tmp_path / "wd"), config=learn.RunConfig(tf_random_seed=2))
    feats = {"gender": gender, "job": job, "age": age}
    est.fit(x=feats, y=label, steps=300)
    assert est.evaluate(x=feats, y=label)["accuracy"] > 0.9
    with pytest.raises(ValueError, match="combiner='mean' is not supported"):
        layers.sparse_column_with_keys("g", ["a"], combiner="mean")
    with pytest.raises(ValueError, match="dimension=None"):
        layers.real_valued_column("v", dimension=None)


def test_load_csv_with_header_iris_files(tmp_path, iris):
    x, y = iris
    path = tmp_path / "iris_training.csv"
    lines = ["120,4,setosa,versicolor,virginica"]
    lines += [",".join([*(f"{v:.1f}" for v in row), str(t)]) for row, t in zip(x[:120], y[:120])]
    path.write_text("\n".join(lines) + "\n")
    training_set = learn.datasets.base.load_csv_with_header(
        filename=str(path), target_dtype=np.int64, features_dtype=np.float32)
    assert isinstance(training_set, learn.datasets.Dataset)
    assert training_set.data.shape == (120, 4) and training_set.data.dtype == np.float32
    np.testing.assert_allclose(training_set.data, x[:120], atol=1e-6)
    np.testing.assert_array_equal(training_set.target, y[:120])
    plain = tmp_path / "plain.csv"
    plain.write_text("7,1.5,2.5\n8,3.5,4.5\n")
    ds = learn.datasets.load_csv_without_header(str(plain), np.int64, np.float64,
                                                target_column=0)
    assert ds.target.tolist() == [7, 8] and ds.data.tolist() == [[1.5, 2.5], [3.5, 4.5]]

    path.write_text("3,4,a,b,c\n" + "\n".join(lines[1:3]) + "\n")
    with pytest.raises(ValueError, match="the header says 3 samples, the file has 2"):
        learn.datasets.base.load_csv_with_header(str(path), np.int64, np.float32)
    path.write_text("2,4\n1,2,3,4,0\n1,2,x,4,0\n")
    with pytest.raises(ValueError, match="line 3: cannot read"):
        learn.datasets.base.load_csv_with_header(str(path), np.int64, np.float32)


def test_validation_monitor_evaluates_and_stops_early(tmp_path, iris):
    x, y = iris
    config = learn.RunConfig(save_checkpoints_steps=20, tf_random_seed=3)
    clf = learn.DNNClassifier([10], [tf.contrib.layers.real_valued_column("", dimension=4)],
                              n_classes=3, model_dir=str(tmp_path), config=config)
    monitor = learn.monitors.ValidationMonitor(
        x[120:], y[120:], every_n_steps=20, early_stopping_metric="loss",
        early_stopping_rounds=40)
    clf.fit(x=x[:120], y=y[:120], steps=3000, monitors=[monitor])
    assert monitor.best_step is not None and monitor.best_value > 0
    assert monitor.early_stopped  # 3000 steps never all improve the validation loss
    step = clf.get_variable_value("global_step")
    assert step < 3000 and step - monitor.best_step <= 40 + 20
    assert set(monitor.best_metrics) >= {"loss", "accuracy", "global_step"}

    with pytest.raises(ValueError, match="either x or input_fn must be provided"):
        learn.monitors.ValidationMonitor()


def test_binary_linear_classifier_with_label_keys(tmp_path):
    rng = np.random.RandomState(7)
    x = rng.randn(200, 2).astype(np.float32)
    y = np.where(x[:, 0] + x[:, 1] > 0, "yes", "no")
    clf = learn.LinearClassifier(learn.infer_real_valued_columns_from_input(x),
                                 label_keys=["no", "yes"], model_dir=str(tmp_path))
    clf.fit(x=x, y=y, steps=200)
    scores = clf.evaluate(x=x, y=y)
    assert scores["accuracy"] > 0.95 and "auc" in scores
    classes = clf.predict(x=x, as_iterable=False)  # the labels, with label_keys
    assert set(classes.tolist()) == {"no", "yes"} and np.mean(classes == y) > 0.95
    assert next(clf.predict_classes(x=x[:1])) == classes[0]
    proba = clf.predict_proba(x=x[:4], as_iterable=False)
    assert proba.shape == (4, 2)
    np.testing.assert_array_equal(np.array(["no", "yes"])[proba.argmax(1)], classes[:4])


def test_export_canned_with_parsing_serving_input_fn(tmp_path):
    rng = np.random.RandomState(2)
    age = rng.uniform(0, 1, 100).astype(np.float32)
    columns = [tf.contrib.layers.real_valued_column("age")]
    reg = learn.LinearRegressor(columns, model_dir=str(tmp_path / "m"), optimizer="SGD")
    reg.fit(x={"age": age}, y=2 * age + 1, steps=300)
    spec = tf.contrib.layers.create_feature_spec_for_parsing(columns)
    assert list(spec) == ["age"]
    serving_fn = learn.utils.input_fn_utils.build_parsing_serving_input_fn(spec)
    path = reg.export_savedmodel(str(tmp_path / "export"), serving_fn)
    predict = tf.contrib.predictor.from_saved_model(
        path.decode() if isinstance(path, bytes) else path)
    example = tf.train.Example(features=tf.train.Features(feature={
        "age": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))}))
    out = predict({"inputs": [example.SerializeToString()]})  # the regression signature
    np.testing.assert_allclose(next(iter(out.values())).reshape(-1), [2.0], atol=0.05)
