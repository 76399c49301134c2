"""tf.keras Sequential models, layers, weights, losses, optimizers and fit/evaluate."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras

L = keras.layers


def _relu(x):
    return np.maximum(x, 0)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _mlp():
    model = keras.Sequential()
    model.add(L.Dense(6, activation="relu", input_shape=(5,)))
    model.add(L.Dropout(0.5))
    model.add(L.Dense(3, activation="softmax"))
    return model


def test_sequential_names_shapes_and_numpy_reference():
    model = _mlp()
    assert [layer.name for layer in model.layers] == ["dense", "dropout", "dense_1"]
    assert model.input_names == ["dense_input"] and model.output_names == ["dense_1"]
    assert [w.name for w in model.weights] == ["dense/kernel:0", "dense/bias:0",
                                               "dense_1/kernel:0", "dense_1/bias:0"]
    assert model.outputs[0].shape.as_list() == [None, 3]
    x = np.random.RandomState(0).rand(7, 5).astype(np.float32)
    w1, b1, w2, b2 = model.get_weights()
    assert w1.shape == (5, 6) and b2.shape == (3,) and w1.dtype == np.float32
    want = _softmax(_relu(x @ w1 + b1) @ w2 + b2)
    got = keras.backend.get_session().run(model.outputs[0], {model.inputs[0]: x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(x, batch_size=3), want, rtol=1e-5, atol=1e-6)
    assert model.count_params() == 5 * 6 + 6 + 6 * 3 + 3


def test_set_weights_round_trip_and_errors():
    model = _mlp()
    rng = np.random.RandomState(1)
    new = [rng.randn(*w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(new)
    for a, b in zip(model.get_weights(), new, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="expecting 4 weights"):
        model.set_weights(new[:3])
    with pytest.raises(ValueError, match=r"not compatible.*\(6, 5\)"):
        model.set_weights([new[0].T, *new[1:]])
    model.layers[0].set_weights([np.ones((5, 6)), np.zeros(6)])
    np.testing.assert_array_equal(model.get_weights()[0], np.ones((5, 6)))


def test_dropout_follows_learning_phase():
    model = keras.Sequential([L.Dropout(0.5, input_shape=(400,))])
    sess = keras.backend.get_session()
    x = np.ones((3, 400), np.float32)
    np.testing.assert_array_equal(sess.run(model.outputs[0], {model.inputs[0]: x}), x)
    phase = keras.backend.learning_phase()
    assert phase.name == "keras_learning_phase:0"
    dropped = sess.run(model.outputs[0], {model.inputs[0]: x, phase: True})
    assert set(np.unique(dropped)) == {0.0, 2.0}
    assert 0.35 < (dropped == 0).mean() < 0.65


def test_set_learning_phase_fixes_branch_at_build_time():
    keras.backend.set_learning_phase(1)
    model = keras.Sequential([L.Dropout(0.5, input_shape=(300,))])
    out = keras.backend.get_session().run(model.outputs[0],
                                          {model.inputs[0]: np.ones((2, 300))})
    assert (out == 0).any()
    with pytest.raises(ValueError, match="0 or 1"):
        keras.backend.set_learning_phase(2)


def test_deferred_build_on_first_call():
    model = keras.Sequential([L.Dense(4), L.Dense(2)])
    with pytest.raises(ValueError, match="not yet been built"):
        model.summary()
    x = tf.placeholder(tf.float32, [None, 3])
    y = model(x)
    assert y.shape.as_list() == [None, 2] and model.input_names == ["dense_input"]
    w1, b1, w2, b2 = model.get_weights()
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(keras.backend.get_session().run(y, {x: v}),
                               (v @ w1 + b1) @ w2 + b2, rtol=1e-5)


def test_conv_pool_flatten_against_numpy():
    model = keras.Sequential([
        L.Conv2D(4, (3, 2), activation="relu", padding="valid", input_shape=(7, 6, 2)),
        L.MaxPooling2D((2, 2)),
        L.Flatten(),
        L.Dense(3),
    ])
    assert model.layers[0].kernel.shape.as_list() == [3, 2, 2, 4]
    assert model.outputs[0].shape.as_list() == [None, 3]
    x = np.random.RandomState(2).rand(2, 7, 6, 2).astype(np.float32)
    k, kb, w, b = model.get_weights()
    conv = np.zeros((2, 5, 5, 4), np.float32)
    for i in range(5):
        for j in range(5):
            conv[:, i, j] = np.einsum("nhwc,hwcf->nf", x[:, i:i + 3, j:j + 2], k)
    conv = _relu(conv + kb)
    pooled = conv[:, :4, :4].reshape(2, 2, 2, 2, 2, 4).max(axis=(2, 4))
    want = pooled.reshape(2, -1) @ w + b
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-4, atol=1e-5)


def test_batch_normalization_inference_and_training_updates():
    model = keras.Sequential([L.BatchNormalization(input_shape=(3,))])
    bn = model.layers[0]
    assert [w.name for w in bn.weights] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert len(bn.trainable_weights) == 2
    gamma, beta = np.array([1.0, 2.0, 0.5]), np.array([0.1, -0.2, 0.3])
    mean, var = np.array([1.0, -1.0, 2.0]), np.array([4.0, 0.25, 1.0])
    bn.set_weights([gamma, beta, mean, var])
    x = np.random.RandomState(3).randn(6, 3).astype(np.float32)
    want = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-5, atol=1e-5)
    model.compile("sgd", loss="mse")
    model.train_on_batch(x, np.zeros((6, 3)))
    moved = bn.get_weights()[2]
    np.testing.assert_allclose(moved, 0.99 * mean + 0.01 * x.mean(0), rtol=1e-5)


def test_fit_evaluate_classification():
    rng = np.random.RandomState(0)
    x = rng.randn(300, 4).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + 2 * (x[:, 2] > 0)
    model = keras.Sequential([L.Dense(16, activation="relu", input_dim=4),
                              L.Dense(4, activation="softmax")])
    model.compile(keras.optimizers.Adam(learning_rate=0.02),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert model.metrics_names == ["loss", "acc"]
    history = model.fit(x, y, epochs=15, batch_size=32, verbose=0, validation_split=0.2)
    assert set(history.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.9
    probs = model.predict(x)
    np.testing.assert_allclose(acc, (probs.argmax(1) == y).mean(), atol=1e-6)
    ce = -np.log(probs[np.arange(len(y)), y]).mean()
    np.testing.assert_allclose(loss, ce, rtol=1e-4)


@pytest.mark.parametrize("name", ["mse", "mae", "categorical_crossentropy",
                                  "binary_crossentropy", "sparse_categorical_crossentropy"])
def test_losses_against_numpy(sess, name):
    rng = np.random.RandomState(4)
    p = _softmax(rng.randn(5, 3)).astype(np.float32)
    t = np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]]
    y_true = np.array([0, 2, 1, 1, 0]) if name.startswith("sparse") else t
    want = {
        "mse": ((p - t) ** 2).mean(-1),
        "mae": np.abs(p - t).mean(-1),
        "categorical_crossentropy": -(t * np.log(p)).sum(-1),
        "sparse_categorical_crossentropy": -(t * np.log(p)).sum(-1),
        "binary_crossentropy": -(t * np.log(p) + (1 - t) * np.log(1 - p)).mean(-1),
    }[name]
    got = sess.run(keras.losses.get(name)(y_true, tf.constant(p)))
    assert got.shape == (5,) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)
    logits = rng.randn(5, 3).astype(np.float32)
    if name.endswith("categorical_crossentropy"):  # softmax output -> stable logits path
        stable = sess.run(keras.losses.get(name)(y_true, tf.nn.softmax(logits)))
        np.testing.assert_allclose(stable, -(t * np.log(_softmax(logits))).sum(-1), rtol=1e-5)


def test_optimizer_identifiers():
    opt = keras.optimizers
    # tf.train optimizers updating Keras-named state (flowgraph.keras.optimizer_state)
    assert isinstance(opt.to_tf_optimizer("sgd"), tf.train.GradientDescentOptimizer)
    assert isinstance(opt.to_tf_optimizer("Adam"), tf.train.AdamOptimizer)
    assert isinstance(opt.to_tf_optimizer("rmsprop"), tf.train.RMSPropOptimizer)
    assert isinstance(opt.to_tf_optimizer("adagrad"), tf.train.AdagradOptimizer)
    assert opt.SGD(lr=0.5).get_config()["learning_rate"] == 0.5
    tf_opt = tf.train.GradientDescentOptimizer(0.1)
    assert opt.to_tf_optimizer(tf_opt) is tf_opt
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        opt.get("nope")


def test_summary_table():
    lines = []
    _mlp().summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert 'Model: "sequential"' in text
    assert " dense (Dense)               (None, 6)                 36" in text  # TF 2.15
    assert "Total params: 57" in text and "Non-trainable params: 0" in text


def test_errors():
    model = keras.Sequential()
    with pytest.raises(TypeError, match="instance of class Layer"):
        model.add("dense")
    model.add(L.Dense(2, input_shape=(3,), name="same"))
    with pytest.raises(ValueError, match="unique names"):
        model.add(L.Dense(2, name="same"))
    with pytest.raises(ValueError, match="positive integer"):
        L.Dense(0)
    with pytest.raises(ValueError, match="Unknown activation"):
        L.Dense(2, activation="nope")
    with pytest.raises(ValueError, match="expected min_ndim=2"):
        L.Dense(2)(tf.zeros([3]))
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.zeros((2, 3)), np.zeros((2, 2)), verbose=0)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="another graph"):
        model.layers[0](tf.zeros([1, 3]))
