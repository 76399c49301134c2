"""tf.keras.estimator.model_to_estimator: the tutorial's digits job and the conversion
contract (input/output keys, starting weights, errors)."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import flowgraph as tf
from flowgraph import keras

L = keras.layers


def _digits_model():
    model = keras.Sequential()
    model.add(L.Dense(64, activation="relu", input_shape=(64,)))
    model.add(L.Dropout(0.2))
    model.add(L.Dense(10, activation="softmax"))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def test_tutorial_digits_train_and_evaluate(tmp_path):
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25,
                                                        random_state=0)
    model = _digits_model()
    config = tf.estimator.RunConfig(tf_random_seed=0, save_checkpoints_steps=500,
                                    keep_checkpoint_max=2, log_step_count_steps=500)
    est = keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path),
                                             config=config)
    key = model.input_names[0]
    assert key == "dense_input"
    train_input = tf.estimator.inputs.numpy_input_fn(
        {key: x_train}, y_train, batch_size=32, num_epochs=None, shuffle=True)
    eval_input = tf.estimator.inputs.numpy_input_fn(
        {key: x_test}, y_test, batch_size=len(x_test), num_epochs=1, shuffle=False)
    metrics, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input, max_steps=1500),
        tf.estimator.EvalSpec(eval_input, steps=None, throttle_secs=0))
    assert metrics["global_step"] == 1500
    assert metrics["acc"] >= 0.95
    predictions = list(est.predict(tf.estimator.inputs.numpy_input_fn(
        {key: x_test[:20]}, shuffle=False)))
    assert set(predictions[0]) == {"dense_1"}
    probs = np.stack([p["dense_1"] for p in predictions])
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert (probs.argmax(1) == y_test[:20]).mean() >= 0.85
    assert est.get_variable_value("dense/kernel").shape == (64, 64)


def test_estimator_starts_from_the_keras_weights(tmp_path):
    model = _digits_model()
    x = np.random.RandomState(0).rand(5, 64).astype(np.float32)
    want = model.predict(x)
    est = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path / "saver"))
    got = np.stack([p["dense_1"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn(x, shuffle=False))])  # single tensor features
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(est.get_variable_value("dense_1/bias"),
                                  model.get_weights()[3])
    evaluation = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        x, np.arange(5), shuffle=False))
    ce = -np.log(want[np.arange(5), np.arange(5)]).mean()
    np.testing.assert_allclose(evaluation["loss"], ce, rtol=1e-4)
    assert evaluation["global_step"] == 0


def test_checkpoint_format_warm_starts_training(tmp_path):
    model = _digits_model()
    model.compile(keras.optimizers.SGD(learning_rate=0.0),
                  loss="sparse_categorical_crossentropy")
    # read (so initialized by Keras) before the conversion: as TF, only then does the
    # Estimator start from them rather than from its own initial values
    kernel = model.get_weights()[0]
    est = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path),
                                             checkpoint_format="checkpoint")
    assert est.latest_checkpoint() is None
    x = np.random.RandomState(1).rand(8, 64).astype(np.float32)
    est.train(tf.estimator.inputs.numpy_input_fn({"dense_input": x}, np.zeros(8, np.int64),
                                                 batch_size=4, shuffle=False), steps=1)
    np.testing.assert_allclose(est.get_variable_value("dense/kernel"), kernel)


def test_functional_model_inputs_outputs_and_metrics(tmp_path):
    a = keras.Input(shape=(3,), name="a")
    b = keras.Input(shape=(2,), name="b")
    h = L.BatchNormalization()(L.Dense(8, activation="relu")(L.Concatenate()([a, b])))
    cls = L.Dense(2, activation="softmax", name="cls")(h)
    reg = L.Dense(1, name="reg")(h)
    model = keras.Model([a, b], [cls, reg])
    model.compile(keras.optimizers.Adam(0.01),
                  loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
                  metrics={"cls": "accuracy"})
    est = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path))
    rng = np.random.RandomState(2)
    xa, xb = rng.rand(64, 3), rng.rand(64, 2)
    labels = {"cls": (xa[:, 0] > 0.5).astype(np.int64), "reg": xa.sum(1, keepdims=True)}
    train = tf.estimator.inputs.numpy_input_fn({"a": xa, "b": xb}, labels, batch_size=16,
                                               num_epochs=None, shuffle=True)
    est.train(train, steps=60)
    evaluation = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"a": xa, "b": xb}, labels, batch_size=64, shuffle=False))
    assert set(evaluation) == {"loss", "cls_acc", "global_step"}
    assert evaluation["global_step"] == 60
    moving = est.get_variable_value("batch_normalization/moving_mean")
    assert np.abs(moving).sum() > 0  # the batch-norm updates ran with the train op
    pred = next(est.predict(tf.estimator.inputs.numpy_input_fn({"a": xa, "b": xb},
                                                               shuffle=False)))
    assert set(pred) == {"cls", "reg"} and pred["reg"].shape == (1,)
    bad = tf.estimator.inputs.numpy_input_fn({"a": xa, "c": xb}, shuffle=False)
    with pytest.raises(KeyError, match=r"Expected keys: \['a', 'b'\].*Difference: \['b', 'c'\]"):
        next(est.predict(bad))


def test_conversion_errors(tmp_path):
    model = keras.Sequential([L.Dense(2, input_shape=(3,))])
    with pytest.raises(ValueError, match="has not been compiled"):
        keras.estimator.model_to_estimator(model)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="Either `keras_model` or `keras_model_path`"):
        keras.estimator.model_to_estimator()
    with pytest.raises(ValueError, match="not both"):
        keras.estimator.model_to_estimator(model, keras_model_path="m.h5")
    with pytest.raises(NotImplementedError, match="keras_model_path"):
        keras.estimator.model_to_estimator(keras_model_path="m.h5")
    with pytest.raises(ValueError, match="Unknown checkpoint format"):
        keras.estimator.model_to_estimator(model, checkpoint_format="h5")
    est = keras.estimator.model_to_estimator(model, model_dir=str(tmp_path))
    wrong = tf.estimator.inputs.numpy_input_fn({"x": np.zeros((2, 3))}, shuffle=False)
    with pytest.raises(KeyError, match="dense_input"):
        next(est.predict(wrong))
    bad_shape = tf.estimator.inputs.numpy_input_fn(np.zeros((2, 4)), shuffle=False)
    with pytest.raises(ValueError, match="expects"):
        next(est.predict(bad_shape))
