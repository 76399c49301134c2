"""The tf.keras functional API: Model(inputs, outputs), shared/nested layers, clone_model."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras

L = keras.layers


def _two_in_two_out():
    a = keras.Input(shape=(3,), name="a")
    b = keras.Input(shape=(2,), name="b")
    h = L.Dense(4, activation="tanh", name="hidden")(L.Concatenate()([a, b]))
    cls = L.Dense(2, activation="softmax", name="cls")(h)
    reg = L.Dense(1, name="reg")(L.Add()([h, L.Dense(4, name="skip")(a)]))
    return keras.Model([a, b], [cls, reg], name="two")


def _data(n=6):
    rng = np.random.RandomState(0)
    return rng.rand(n, 3).astype(np.float32), rng.rand(n, 2).astype(np.float32)


def _reference(weights, xa, xb):
    hk, hb, sk, sb, ck, cb, rk, rb = weights  # Keras's layer order: deepest first
    h = np.tanh(np.concatenate([xa, xb], 1) @ hk + hb)
    logits = h @ ck + cb
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True), (h + xa @ sk + sb) @ rk + rb


def test_model_structure_and_numpy_reference():
    model = _two_in_two_out()
    assert model.input_names == ["a", "b"] and model.output_names == ["cls", "reg"]
    # TF 2.15's order: by depth from the outputs, ties in depth-first order
    assert [layer.name for layer in model.layers] == ["a", "b", "concatenate", "hidden",
                                                      "skip", "add", "cls", "reg"]
    assert isinstance(model.layers[0], L.InputLayer)
    assert [w.name for w in model.weights][:2] == ["hidden/kernel:0", "hidden/bias:0"]
    xa, xb = _data()
    want_cls, want_reg = _reference(model.get_weights(), xa, xb)
    cls, reg = model.predict({"a": xa, "b": xb}, batch_size=4)
    np.testing.assert_allclose(cls, want_cls, rtol=1e-5)
    np.testing.assert_allclose(reg, want_reg, rtol=1e-5, atol=1e-6)
    got = keras.backend.get_session().run(model.outputs, dict(zip(model.inputs, [xa, xb],
                                                                  strict=True)))
    np.testing.assert_allclose(got[1], want_reg, rtol=1e-5, atol=1e-6)


def test_calling_a_model_shares_its_weights():
    model = _two_in_two_out()
    n_vars = len(tf.global_variables())
    xa, xb = _data(4)
    _, reg = model([tf.constant(xa), tf.constant(xb)])
    assert len(tf.global_variables()) == n_vars
    _, want_reg = _reference(model.get_weights(), xa, xb)
    np.testing.assert_allclose(keras.backend.get_session().run(reg), want_reg, rtol=1e-5,
                               atol=1e-6)


def test_nested_model_as_a_layer():
    inner_in = keras.Input(shape=(3,))
    inner = keras.Model(inner_in, L.Dense(2, name="inner_dense")(inner_in), name="inner")
    x = keras.Input(shape=(3,), name="x")
    out = L.Dense(1, name="head")(inner(x))
    model = keras.Model(x, out)
    assert [layer.name for layer in model.layers] == ["x", "inner", "head"]
    assert len(model.weights) == 4
    k1, b1, k2, b2 = model.get_weights()
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(model.predict(v), (v @ k1 + b1) @ k2 + b2, rtol=1e-5)


def test_clone_model_copies_structure_not_values():
    model = _two_in_two_out()
    with tf.Graph().as_default():
        copy = keras.models.clone_model(model)
        assert copy.input_names == model.input_names
        assert copy.output_names == model.output_names
        assert [w.name for w in copy.weights] == [w.name for w in model.weights]
        copy.set_weights(model.get_weights())
        xa, xb = _data(3)
        np.testing.assert_allclose(copy.predict([xa, xb])[1],
                                   _reference(model.get_weights(), xa, xb)[1], rtol=1e-5,
                                   atol=1e-6)


def test_fit_with_dict_losses():
    model = _two_in_two_out()
    model.compile(keras.optimizers.Adam(0.05),
                  loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
                  loss_weights={"cls": 1.0, "reg": 0.5}, metrics={"cls": ["acc"]})
    assert model.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc"]
    xa, xb = _data(64)
    y_cls = (xa[:, 0] > 0.5).astype(np.int64)
    y_reg = xa.sum(1)
    first = model.evaluate([xa, xb], [y_cls, y_reg], verbose=0)
    np.testing.assert_allclose(first[0], first[1] + 0.5 * first[2], rtol=1e-5)
    model.fit({"a": xa, "b": xb}, {"cls": y_cls, "reg": y_reg}, epochs=30, batch_size=16,
              verbose=0)
    last = model.evaluate([xa, xb], [y_cls, y_reg], verbose=0)
    assert last[0] < first[0] and last[3] > 0.8


def test_summary_lists_connections():
    lines = []
    _two_in_two_out().summary(print_fn=lines.append)
    text = "\n".join(lines)
    # TF 2.15's table: the inbound layers as a list, wrapped after "',"
    assert "Connected to" in text and "['a[0][0]'," in text and "'b[0][0]']" in text
    assert "Total params: 55" in text


def test_errors():
    a = keras.Input(shape=(3,))
    b = keras.Input(shape=(3,))
    out = L.Add()([a, b])
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, out)
    with pytest.raises(ValueError, match=r"must come from `tf\.keras\.Input`"):
        keras.Model(tf.placeholder(tf.float32, [None, 3]), out)
    with pytest.raises(ValueError, match="holding past layer metadata"):
        keras.Model([a, b], tf.zeros([1, 3]))
    h = L.Dense(2, name="twin")(a)
    with pytest.raises(ValueError, match="should be unique"):
        keras.Model(a, L.Dense(2, name="twin")(h))
    with pytest.raises(ValueError, match="Unknown entries in loss"):
        keras.Model([a, b], out).compile("sgd", loss={"nope": "mse"})
    with pytest.raises(ValueError, match="Please provide to Input"):
        keras.Input()
    with pytest.raises(NotImplementedError, match="you should implement a `call"):
        keras.Model()(tf.zeros([1, 2]))  # TF 2.15: a bare Model is an empty subclass
