"""The distributed-MNIST tutorial's three ways, on digits, end to end.

A premade DNNClassifier, a custom model_fn with tf.layers and tf.metrics, and a Keras
Sequential converted with model_to_estimator each train through train_and_evaluate to
≥ 0.95 test accuracy, then export a SavedModel, reload it without the model code, and
answer REST predict requests from the serving binary's server.
"""

from __future__ import annotations

import json
import urllib.request

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import flowgraph as tf
from flowgraph import saved_model
from flowgraph.serving import ModelServer

STEPS = 1500


@pytest.fixture(scope="module")
def digits():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return train_test_split(x, y.astype(np.int64), test_size=0.25, random_state=0)


def _input_fns(digits, key):
    x_train, x_test, y_train, y_test = digits
    train = tf.estimator.inputs.numpy_input_fn(
        {key: x_train}, y_train, batch_size=64, num_epochs=None, shuffle=True)
    evaluate = tf.estimator.inputs.numpy_input_fn(
        {key: x_test}, y_test, batch_size=len(x_test), num_epochs=1, shuffle=False)
    return train, evaluate


def _custom_model_fn(features, labels, mode):
    net = features["pixels"]
    for units in (128, 64):
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
    logits = tf.layers.dense(net, 10)
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"class_ids": classes})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    metrics = {"accuracy": tf.metrics.accuracy(labels=labels, predictions=classes)}
    train_op = tf.train.AdamOptimizer(0.003).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def _premade(model_dir):
    columns = [tf.feature_column.numeric_column("pixels", shape=[64])]
    return tf.estimator.DNNClassifier(
        hidden_units=[128, 64], feature_columns=columns, n_classes=10,
        optimizer=tf.train.AdamOptimizer(0.003), model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=1))


def _custom(model_dir):
    return tf.estimator.Estimator(_custom_model_fn, model_dir=model_dir,
                                  config=tf.estimator.RunConfig(tf_random_seed=1))


def _keras(model_dir):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation="relu", input_shape=(64,), name="hidden"),
        tf.keras.layers.Dropout(0.1),
        tf.keras.layers.Dense(10, activation="softmax", name="probs"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    input_key = model.input_names[0]
    return tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=1)), input_key


def _class_ids(outputs: dict) -> np.ndarray:
    for key in ("class_ids", "classes"):
        if key in outputs:
            return np.asarray(outputs[key]).reshape(-1).astype(np.int64)
    (probs,) = [v for v in outputs.values() if np.ndim(v) == 2 and np.shape(v)[1] == 10]
    return np.argmax(probs, axis=1)


@pytest.mark.parametrize("way", ["premade", "custom", "keras"])
def test_three_ways_train_export_reload_and_serve(way, digits, tmp_path):
    model_dir = str(tmp_path / way)
    if way == "keras":
        estimator, key = _keras(model_dir)
    else:
        estimator, key = (_premade if way == "premade" else _custom)(model_dir), "pixels"
    train_input, eval_input = _input_fns(digits, key)
    metrics, _ = tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(train_input, max_steps=STEPS),
        tf.estimator.EvalSpec(eval_input, steps=None, throttle_secs=0))
    accuracy = next(v for k, v in metrics.items() if "acc" in k)
    assert accuracy >= 0.95, metrics

    # Export, then reload without the code that built the model.
    x_test, y_test = digits[1], digits[3]
    serving_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {key: tf.placeholder(tf.float32, [None, 64], name=key)})
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), serving_fn)
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    model = saved_model.load(export_dir)
    # A premade classifier's default signature is a classification one, which (as in
    # TensorFlow) needs serialized Examples; raw tensors go through 'predict'.
    signature = "serving_default" if "serving_default" in model.signatures else "predict"
    try:
        reloaded = _class_ids(model.signatures[signature]({key: x_test}))
    finally:
        model.close()
    assert np.mean(reloaded == y_test) >= 0.95

    # Serve it over TensorFlow Serving's REST protocol.
    server = ModelServer(str(tmp_path / "export"), model_name="digits", port=0).start()
    try:
        body = json.dumps({"signature_name": signature,
                           "instances": [{key: row.tolist()} for row in x_test[:20]]})
        request = urllib.request.Request(f"{server.url}/v1/models/digits:predict",
                                         data=body.encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            predictions = json.loads(response.read())["predictions"]
    finally:
        server.stop()
    if isinstance(predictions[0], dict):
        served = _class_ids({k: np.array([p[k] for p in predictions]) for k in predictions[0]})
    else:  # one output: TF Serving returns its values directly
        served = _class_ids({"class_ids": np.array(predictions)}
                            if np.ndim(predictions) == 1 else {"p": np.array(predictions)})
    np.testing.assert_array_equal(served, reloaded[:20])
