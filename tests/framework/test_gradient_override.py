"""tf.RegisterGradient and Graph.gradient_override_map (issue 15), checked under TF 2.15."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@tf.RegisterGradient("FgTestSquareGrad")
def _square_grad(op, grad):
    return grad * 2 * op.inputs[0]


@tf.RegisterGradient("FgTestNegate")
def _negate(op, grad):
    return -grad


def _grad(y, x):
    with tf.Session() as sess:
        return sess.run(tf.gradients(y, x)[0]).tolist()


def test_py_func_gets_the_registered_gradient():
    x = tf.constant([1.0, 2.0])
    with tf.get_default_graph().gradient_override_map({"PyFunc": "FgTestSquareGrad"}):
        y = tf.py_func(np.square, [x], tf.float32)
    assert _grad(y, x) == [2.0, 4.0]


def test_innermost_map_wins_and_only_ops_inside_change():
    g = tf.get_default_graph()
    x = tf.constant([1.0, 2.0])
    with g.gradient_override_map({"Identity": "FgTestNegate"}):
        with g.gradient_override_map({"Identity": "FgTestSquareGrad"}):
            inner = tf.identity(x)
        outer = tf.identity(x)
        other = x * 3.0  # not an Identity: its own gradient
    plain = tf.identity(x)
    assert _grad(inner, x) == [2.0, 4.0]
    assert _grad(outer, x) == [-1.0, -1.0]
    assert _grad(other, x) == [3.0, 3.0]
    assert _grad(plain, x) == [1.0, 1.0]


def test_late_registration_and_errors():
    g = tf.get_default_graph()
    x = tf.constant(2.0)
    with g.gradient_override_map({"Identity": "FgTestLate"}):
        y = tf.identity(x)
    with pytest.raises(LookupError, match="FgTestLate"):
        tf.gradients(y, x)
    tf.RegisterGradient("FgTestLate")(lambda op, grad: grad * 10.0)
    assert _grad(y, x) == 10.0
    with pytest.raises(KeyError, match="FgTestNegate"):
        tf.RegisterGradient("FgTestNegate")(_negate)
    with pytest.raises(TypeError, match="dictionary"):
        with g.gradient_override_map(["Identity"]):
            pass
