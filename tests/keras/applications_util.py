"""Shared checks for the tests/keras/test_applications_*.py files: an architecture summary
against TF 2.15's (recorded with the tf-oracle), and a forward pass with deterministic
weights against TF's logits."""

from __future__ import annotations

import numpy as np

import flowgraph as tf

A = tf.keras.applications


def build(ctor, **kwargs):
    """``(model, graph)``: ``tf.keras.applications.<ctor>(weights=None, **kwargs)`` in a
    fresh graph."""
    graph = tf.Graph()
    with graph.as_default():
        model = getattr(A, ctor)(weights=None, **kwargs)
    return model, graph


def check_summary(case) -> None:
    """``case`` is ``(ctor, kwargs, name, params, trainable, layers, weights, layers 1-2,
    last 2 layers, output shape)`` as TF 2.15 builds it."""
    ctor, kwargs, name, params, trainable, n_layers, n_weights, second, last, out = case
    model, _ = build(ctor, **kwargs)
    names = [layer.name for layer in model.layers]
    got_trainable = sum(int(np.prod(w.shape.as_list())) for w in model.trainable_weights)
    assert (model.name, model.count_params(), got_trainable, len(names),
            len(model.weights)) == (name, params, trainable, n_layers, n_weights)
    assert names[1:3] == second and names[-2:] == last
    assert model.output.shape.as_list() == out


def fill_weights(model, seed: int = 0) -> None:
    """Deterministic weights (the same recipe as the oracle script that recorded TF's
    logits): variances and gammas in [0.5, 1.5), kernels uniform with variance ~1/fan-in,
    vectors in [-0.1, 0.1), scalars 0."""
    rng = np.random.RandomState(seed)
    values = []
    for w in model.weights:
        shape = w.shape.as_list()
        if not shape:
            value = np.zeros(shape)
        elif "variance" in w.name or "gamma" in w.name:
            value = rng.uniform(0.5, 1.5, shape)
        elif len(shape) > 1:
            value = rng.uniform(-1, 1, shape) * np.sqrt(3.0 / np.prod(shape[:-1]))
        else:
            value = rng.uniform(-0.1, 0.1, shape)
        values.append(value.astype(w.dtype.as_numpy_dtype))
    model.set_weights(values)


def forward(ctor, size: int, **kwargs) -> np.ndarray:
    """The logits (``classifier_activation=None``, 10 classes) of two seeded
    ``size``x``size`` images in [0, 255) through the seeded model."""
    model, graph = build(ctor, input_shape=(size, size, 3), classes=10,
                         classifier_activation=None, **kwargs)
    with graph.as_default():
        fill_weights(model)
        x = np.random.RandomState(1).uniform(0, 255, (2, size, size, 3)).astype(np.float32)
        return model.predict(x)


def check_forward(ctor, size, tf_logits, **kwargs) -> None:
    got = forward(ctor, size, **kwargs)
    assert got.shape == (2, 10)
    np.testing.assert_allclose(got[0], tf_logits, rtol=2e-3, atol=2e-4)
