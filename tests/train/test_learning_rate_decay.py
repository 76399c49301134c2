"""Learning-rate schedules as graph ops on the global step, against NumPy formulas."""

import doctest
import math

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.train import learning_rate_decay
from flowgraph.train.learning_rate_decay import (
    cosine_decay,
    exponential_decay,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
)

STEPS = [0, 1, 7, 10, 15, 20, 33, 100]


def _values(make, steps=STEPS):
    step = tf.placeholder(tf.int64, [])
    lr = make(step)
    with tf.Session() as sess:
        return lr, [float(sess.run(lr, {step: s})) for s in steps]


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay(staircase):
    lr, got = _values(lambda s: exponential_decay(0.1, s, 10, 0.5, staircase=staircase))
    p = np.array(STEPS) / 10
    p = np.floor(p) if staircase else p
    np.testing.assert_allclose(got, 0.1 * 0.5 ** p, rtol=1e-6)
    assert lr.dtype == tf.float32 and lr.op.name == "ExponentialDecay"


@pytest.mark.parametrize("staircase", [False, True])
def test_natural_exp_and_inverse_time_decay(staircase):
    p = np.array(STEPS) / 10
    p = np.floor(p) if staircase else p
    _, got = _values(lambda s: natural_exp_decay(0.1, s, 10, 0.3, staircase=staircase))
    np.testing.assert_allclose(got, 0.1 * np.exp(-0.3 * p), rtol=1e-6)
    _, got = _values(lambda s: inverse_time_decay(0.1, s, 10, 0.3, staircase=staircase))
    np.testing.assert_allclose(got, 0.1 / (1 + 0.3 * p), rtol=1e-6)


def test_polynomial_decay_no_cycle():
    _, got = _values(lambda s: polynomial_decay(0.1, s, 20, end_learning_rate=0.01, power=2.0))
    st = np.minimum(STEPS, 20)
    np.testing.assert_allclose(got, (0.1 - 0.01) * (1 - st / 20) ** 2 + 0.01, rtol=1e-6)


def test_polynomial_decay_cycle():
    _, got = _values(lambda s: polynomial_decay(0.1, s, 20, end_learning_rate=0.01,
                                                power=0.5, cycle=True))
    want = []
    for s in STEPS:
        steps = 20 * (1.0 if s == 0 else math.ceil(s / 20))
        want.append((0.1 - 0.01) * (1 - s / steps) ** 0.5 + 0.01)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("alpha", [0.0, 0.2])
def test_cosine_decay(alpha):
    _, got = _values(lambda s: cosine_decay(0.1, s, 30, alpha=alpha))
    frac = np.minimum(STEPS, 30) / 30
    want = 0.1 * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * frac)) + alpha)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_piecewise_constant():
    _, got = _values(lambda s: piecewise_constant(s, [10, 20], [1.0, 0.5, 0.1]))
    want = [1.0 if s <= 10 else 0.5 if s <= 20 else 0.1 for s in STEPS]
    np.testing.assert_allclose(got, want)


def test_float64_learning_rate_keeps_dtype(sess):
    lr = exponential_decay(tf.constant(0.1, tf.float64), tf.constant(5), 10, 0.5)
    assert lr.dtype == tf.float64
    assert sess.run(lr) == pytest.approx(0.1 * 0.5 ** 0.5, rel=1e-12)


def test_schedule_drives_optimizer_with_global_step(sess):
    from flowgraph.train.gradient_descent import GradientDescentOptimizer

    step = tf.train.get_or_create_global_step()
    v = tf.Variable(0.0, name="v")
    lr = exponential_decay(1.0, step, 1, 0.5)
    train = GradientDescentOptimizer(lr).minimize(-v, global_step=step)
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    assert sess.run(v) == pytest.approx(1.0 + 0.5 + 0.25)
    assert sess.run(step) == 3


def test_errors():
    for fn in (exponential_decay, natural_exp_decay, inverse_time_decay):
        with pytest.raises(ValueError, match=f"global_step is required for {fn.__name__}"):
            fn(0.1, None, 10, 0.5)
    with pytest.raises(ValueError, match="global_step is required for polynomial_decay"):
        polynomial_decay(0.1, None, 10)
    with pytest.raises(ValueError, match="global_step is required for cosine_decay"):
        cosine_decay(0.1, None, 10)
    with pytest.raises(ValueError, match="should be 1 less than the length of values"):
        piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="same dtype"):
        piecewise_constant(tf.constant(1), [1], [tf.constant(0.1), tf.constant(1)])
    with pytest.raises(ValueError, match="must have the same dtype as x"):
        piecewise_constant(tf.constant(1), [1.5], [0.1, 0.2])


def test_docstring_examples():
    result = doctest.testmod(learning_rate_decay, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
