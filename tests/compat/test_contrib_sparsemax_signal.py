"""`tf.contrib.sparsemax` against a NumPy reference and finite differences; `tf.contrib.signal`."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _sparsemax_reference(z):
    # Projection of each row onto the simplex (sort-based, Held et al.).
    out = np.empty_like(z)
    for i, row in enumerate(z):
        ordered = np.sort(row)[::-1]
        cums = np.cumsum(ordered)
        k = np.arange(1, len(row) + 1)
        size = k[1 + k * ordered > cums][-1]
        tau = (cums[size - 1] - 1) / size
        out[i] = np.maximum(row - tau, 0)
    return out


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default() as g:
        yield g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparsemax_matches_the_simplex_projection(dtype):
    rng = np.random.default_rng(3)
    z = (rng.standard_normal((7, 9)) * 2).astype(dtype)
    probs = tf.contrib.sparsemax.sparsemax(tf.constant(z))
    with tf.Session() as sess:
        got = sess.run(probs)
    assert got.dtype == dtype and got.shape == (7, 9)
    np.testing.assert_allclose(got, _sparsemax_reference(z.astype(np.float64)), atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1, rtol=1e-6)
    assert (got == 0).any()  # sparse, unlike softmax


def test_sparsemax_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    z0 = rng.standard_normal((3, 5))
    z = tf.constant(z0)
    probs = tf.contrib.sparsemax.sparsemax(z)
    weights = tf.constant(rng.standard_normal((3, 5)))
    objective = tf.reduce_sum(probs * weights)
    (grad,) = tf.gradients(objective, [z])
    with tf.Session() as sess:
        got = sess.run(grad)
        eps = 1e-6
        numeric = np.zeros_like(z0)
        for idx in np.ndindex(*z0.shape):
            up, down = z0.copy(), z0.copy()
            up[idx] += eps
            down[idx] -= eps
            high, low = sess.run(objective, {z: up}), sess.run(objective, {z: down})
            numeric[idx] = (high - low) / (2 * eps)
    np.testing.assert_allclose(got, numeric, atol=1e-6)


def test_sparsemax_loss_is_zero_at_the_labels_and_its_gradient_is_probs_minus_labels():
    rng = np.random.default_rng(5)
    z0 = rng.standard_normal((4, 6))
    labels = np.eye(6)[[0, 3, 5, 1]]
    z = tf.constant(z0)
    probs = tf.contrib.sparsemax.sparsemax(z)
    loss = tf.contrib.sparsemax.sparsemax_loss(z, tf.stop_gradient(probs), labels)
    (grad,) = tf.gradients(tf.reduce_sum(loss), [z])
    perfect = tf.contrib.sparsemax.sparsemax_loss(
        tf.constant([[5.0, 0.0, -2.0]]), tf.constant([[1.0, 0.0, 0.0]]),
        tf.constant([[1.0, 0.0, 0.0]]))
    with tf.Session() as sess:
        p, losses, g, zero = sess.run([probs, loss, grad, perfect])
    assert losses.shape == (4,) and (losses >= -1e-12).all()
    np.testing.assert_allclose(g, p - labels, atol=1e-12)
    assert zero.tolist() == [0.0]


def test_sparsemax_rows_with_nan_or_inf_give_nan_and_bad_dtypes_are_refused():
    probs = tf.contrib.sparsemax.sparsemax(
        tf.constant([[np.nan, 1.0, 2.0], [np.inf, 0.0, 1.0], [1.0, 1.0, 1.0]]))
    with tf.Session() as sess:
        got = sess.run(probs)
    assert np.isnan(got[:2]).all()
    np.testing.assert_allclose(got[2], [1 / 3] * 3)
    with pytest.raises(TypeError, match="sparsemax: logits must be float"):
        tf.contrib.sparsemax.sparsemax(tf.constant([[1, 2]]))
    with pytest.raises(ValueError):
        tf.contrib.sparsemax.sparsemax(tf.constant([1.0, 2.0]))


def test_contrib_signal_is_tf_signal():
    assert tf.contrib.signal.stft is tf.signal.stft
    frames = tf.contrib.signal.frame(tf.range(10), frame_length=4, frame_step=3)
    with tf.Session() as sess:
        assert sess.run(frames).tolist() == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
