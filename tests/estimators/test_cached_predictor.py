"""CachedPredictor: same answers as Estimator.predict, reloads, errors, threads."""

import doctest
import logging
import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.estimators import Estimator, EstimatorSpec, ModeKeys, RunConfig, canned
from flowgraph.estimators import cached_predictor as cp_module
from flowgraph.estimators.export import build_parsing_serving_input_receiver_fn
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.serving import encode_example
from tests.estimators.toy_models import sgd

logging.getLogger("tensorflow").setLevel(logging.WARNING)

X = np.random.default_rng(0).uniform(-1, 1, (8, 3)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.25).astype(np.float32)
SPEC = {"x": tf.io.FixedLenFeature([3], tf.float32)}


def linear_fn(features, labels, mode):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.reshape(tf.matmul(features["x"], w) + b, [-1])
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions={"pred": pred, "twice": pred * 2.0})
    loss = tf.reduce_mean(tf.square(pred - labels))
    return EstimatorSpec(mode, loss=loss, train_op=sgd(loss))


def tensor_fn(features, labels, mode):
    """features is one Tensor; predictions one Tensor."""
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    pred = tf.reshape(tf.matmul(features, w), [-1])
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=pred)
    loss = tf.reduce_mean(tf.square(pred - labels))
    return EstimatorSpec(mode, loss=loss, train_op=sgd(loss))


def make(tmp_path, model_fn=linear_fn):
    config = RunConfig(model_dir=str(tmp_path), tf_random_seed=7, save_checkpoints_steps=None,
                       save_checkpoints_secs=600, log_step_count_steps=None)
    return Estimator(model_fn, config=config)


def train_input(x=None):
    return numpy_input_fn({"x": X} if x is None else x, Y, batch_size=4, num_epochs=None,
                          shuffle=False)


def batch_predictions(est, x):
    fn = numpy_input_fn(x, batch_size=len(next(iter(x.values())) if isinstance(x, dict)
                                              else x), shuffle=False)
    return next(est.predict(fn, yield_single_examples=False))


@pytest.fixture
def trained(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=20)
    return est


def test_module_docstring_example_runs():
    result = doctest.testmod(cp_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_same_predictions_as_estimator_predict(trained):
    want = batch_predictions(trained, {"x": X})
    with trained.cached_predictor(SPEC) as p:
        got = p.predict({"x": X})
        assert sorted(got) == ["pred", "twice"]
        for key in got:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-6)
        one = p.predict_one({"x": X[3]})
        np.testing.assert_allclose(one["pred"], want["pred"][3], rtol=1e-6)
        assert p.global_step == 20 and p.checkpoint_path.endswith("model.ckpt-20")
        # lists and float64 arrays are converted
        np.testing.assert_allclose(p.predict({"x": X.astype(np.float64).tolist()})["pred"],
                                   want["pred"], rtol=1e-6)
        assert p.input_keys == ["x"] and "step 20" in repr(p)


def test_predict_keys_and_spec_forms(trained):
    want = batch_predictions(trained, {"x": X})["pred"]
    for spec in (SPEC, {"x": X[:1]}, {"x": tf.placeholder(tf.float32, [None, 3])}):
        with trained.cached_predictor(spec, predict_keys="pred") as p:
            got = p.predict({"x": X})
            assert list(got) == ["pred"]
            np.testing.assert_allclose(got["pred"], want, rtol=1e-6)


def test_single_tensor_features_and_predictions(tmp_path):
    est = make(tmp_path, tensor_fn)
    est.train(numpy_input_fn(X, Y, batch_size=4, num_epochs=None, shuffle=False), steps=10)
    want = batch_predictions(est, X)
    with est.cached_predictor(tf.io.FixedLenFeature([3], tf.float32)) as p:
        assert p.input_keys == ["input"]
        np.testing.assert_allclose(p.predict(X), want, rtol=1e-6)
        np.testing.assert_allclose(p.predict_one(X[2]), want[2], rtol=1e-6)


def test_reloads_a_newer_checkpoint(trained):
    p = trained.cached_predictor(SPEC)
    before = p.predict({"x": X})["pred"]
    trained.train(train_input(), steps=30)
    after = p.predict({"x": X})["pred"]  # the call notices the new checkpoint
    assert p.global_step == 50
    np.testing.assert_allclose(after, batch_predictions(trained, {"x": X})["pred"],
                               rtol=1e-6)
    assert not np.allclose(before, after)
    assert p.reload() is False  # nothing newer
    p.close()


def test_fixed_checkpoint_or_reload_false_does_not_reload(trained):
    first = trained.latest_checkpoint()
    fixed = trained.cached_predictor(SPEC, checkpoint_path=first)
    frozen = trained.cached_predictor(SPEC, reload=False)
    before = fixed.predict({"x": X})["pred"]
    trained.train(train_input(), steps=10)
    for p in (fixed, frozen):
        np.testing.assert_allclose(p.predict({"x": X})["pred"], before)
        assert p.global_step == 20 and p.reload() is False
        p.close()


def test_canned_dnn_classifier(tmp_path):
    rng = np.random.RandomState(0)
    y = rng.randint(3, size=120)
    x = (np.eye(3, 2, dtype=np.float32)[y] * 2 + 0.3 * rng.randn(120, 2)).astype(np.float32)
    color = np.array([["a"], ["b"], ["c"]], dtype=object)[y]
    columns = [fc.numeric_column("x", [2]),
               fc.indicator_column(fc.categorical_column_with_vocabulary_list(
                   "c", ["a", "b", "c"]))]
    est = canned.DNNClassifier([8], columns, n_classes=3, model_dir=str(tmp_path),
                               config=RunConfig(tf_random_seed=1, log_step_count_steps=None))
    features = {"x": x, "c": color}
    est.train(numpy_input_fn(features, y, batch_size=32, num_epochs=None, shuffle=True),
              steps=30)
    want = batch_predictions(est, features)
    with est.cached_predictor({"x": x[:1], "c": color[:1]}) as p:
        got = p.predict({"x": x, "c": color.astype(str)})  # str converts to bytes
        np.testing.assert_allclose(got["probabilities"], want["probabilities"], rtol=1e-5)
        np.testing.assert_array_equal(got["classes"], want["classes"])
        assert p.predict_one({"x": x[5], "c": ["b"]})["probabilities"].shape == (3,)


def test_canned_regressor_with_parsing_receiver(tmp_path):
    columns = [fc.numeric_column("x", [3])]
    est = canned.LinearRegressor(columns, model_dir=str(tmp_path),
                                 config=RunConfig(tf_random_seed=1, log_step_count_steps=None))
    est.train(train_input(), steps=10)
    receiver = build_parsing_serving_input_receiver_fn(fc.make_parse_example_spec(columns))
    want = batch_predictions(est, {"x": X})["predictions"]
    examples = [encode_example({"x": row.tolist()}) for row in X]
    with est.cached_predictor(serving_input_receiver_fn=receiver) as p:
        assert p.input_keys == ["examples"]
        np.testing.assert_allclose(p.predict(examples)["predictions"], want, rtol=1e-5)


def test_errors(tmp_path, trained):
    untrained = make(tmp_path / "fresh")
    with pytest.raises(ValueError, match=r"model_dir: .*fresh.*train the estimator first"):
        untrained.cached_predictor(SPEC)
    with pytest.raises(ValueError, match="give either a feature_spec"):
        trained.cached_predictor()
    with pytest.raises(ValueError, match="not both"):
        trained.cached_predictor(SPEC, serving_input_receiver_fn=lambda: None)
    with pytest.raises(ValueError, match="VarLenFeature"):
        trained.cached_predictor({"x": tf.io.VarLenFeature(tf.float32)})
    with pytest.raises(ValueError, match=r"Expected to run at least one output"):
        trained.cached_predictor(SPEC, predict_keys=["nope"])
    p = trained.cached_predictor(SPEC)
    with pytest.raises(ValueError, match=r"Missing feature\(s\) \['x'\].*inputs are \['x'\]"):
        p.predict({"X": X})
    with pytest.raises(ValueError, match=r"Unknown feature\(s\) \['y'\]"):
        p.predict({"x": X, "y": X})
    with pytest.raises(ValueError, match=r"Feature 'x' has shape \[8, 2\].*\[None, 3\]"):
        p.predict({"x": X[:, :2]})
    with pytest.raises(ValueError, match=r"Feature 'x' has shape \[3\]"):
        p.predict({"x": X[0]})
    with pytest.raises(ValueError, match="Feature 'x' expects float32"):
        p.predict({"x": [["a", "b", "c"]]})
    p.close()
    p.close()
    with pytest.raises(RuntimeError, match="closed"):
        p.predict({"x": X})


def test_concurrent_calls_and_reload_from_threads(trained):
    p = trained.cached_predictor(SPEC)
    want = {20: p.predict({"x": X})["pred"]}
    answers, errors = {}, []  # distinct answers, checked once the threads are done
    stop = threading.Event()

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            while not stop.is_set():
                i = int(rng.integers(0, len(X)))
                got = p.predict({"x": X})["pred"]
                one = p.predict_one({"x": X[i]})["pred"]
                answers[got.tobytes()] = got
                answers[(i, one.tobytes())] = (i, one)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    make(trained.model_dir).train(train_input(), steps=5)
    waiter = threading.Event()
    for _ in range(300):
        if p.global_step == 25:
            break
        waiter.wait(0.01)
    waiter.wait(0.05)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert p.global_step == 25
    want[25] = batch_predictions(trained, {"x": X})["pred"]
    np.testing.assert_allclose(p.predict({"x": X})["pred"], want[25], rtol=1e-6)
    # every answer came from one whole checkpoint, never a mix of two
    seen = set()
    for answer in answers.values():
        i, got = answer if isinstance(answer, tuple) else (None, answer)
        match = [s for s, w in want.items()
                 if np.allclose(got, w if i is None else w[i], rtol=1e-6)]
        assert match, answer
        seen.update(match)
    assert seen == {20, 25}
    p.close()
