"""AutoGraph in graph mode: `tf.function` and `tf.autograph.to_graph` turn Python
``if`` / ``while`` / ``for`` on tensors into `tf.cond` / `tf.while_loop`.

Every expected value is TensorFlow 2.15's for the same program under
``tf.compat.v1`` with v2 behaviour disabled (tf-oracle).
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

SCALE = 3.0


@tf.function
def collatz(n):
    steps = 0
    while n > 1:
        if tf.equal(n % 2, 0):
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@tf.function
def clipped_sum(x, limit):
    total = tf.constant(0.0)
    for v in x:
        if total + v > limit and v > 0:
            flag = 1  # noqa: F841 (a temporary of one branch, never read)
            total = limit
        else:
            total += v
    return total


@tf.function
def branchy(x, flag):
    if flag:
        y = x * 2.0
        tmp = y + 1
        z = tmp * 3
    else:
        y = x - 1.0
        z = -y
    return y + z


@tf.function
def python_loop(x):
    acc = x
    for i in range(3):
        acc = acc * 2.0 + i
    return acc


@tf.function
def tensor_range(n):
    acc = tf.constant(0)
    for i in tf.range(n):
        acc += i * i
    return acc


@tf.function
def not_or(a, b):
    if not (a > 0 or b > 0):
        r = tf.constant(-1.0)
    else:
        r = a + b
    return r


@tf.function
def absval(x):
    if x > 0:
        return x
    return -x


@tf.function
def sign(x):
    if x > 0:
        return tf.constant(1.0)
    elif x < 0:
        return tf.constant(-1.0)
    else:
        return tf.constant(0.0)


class Model:
    def __init__(self):
        self.w = tf.constant(2.0)

    @tf.function
    def __call__(self, x, steps=3):
        out = x
        i = 0
        while i < steps:  # Python values: a Python loop
            out = out * self.w
            i += 1
        if tf.reduce_sum(out) > 100.0:
            out = out / 10.0
        return out * SCALE


def _adder(k):
    @tf.function
    def add_k(x):
        y = x
        for _ in tf.range(2):
            y = y + k
        return y
    return add_k


@tf.function
def odd_sum(n):
    i = tf.constant(0)
    s = tf.constant(0.0)
    while i < n:
        if i % 2 > 0:
            s += tf.cast(i, tf.float32)
        i += 1
    return s, i


def test_loops_and_conditions_on_tensors_give_tensorflows_values():
    with tf.Graph().as_default():
        flag = tf.placeholder(tf.bool, [])
        outs = [collatz(tf.constant(6)), collatz(tf.constant(27)),
                clipped_sum(tf.constant([1.0, 2.0, -4.0, 5.0, 3.0]), tf.constant(6.0)),
                branchy(tf.constant(2.0), flag), python_loop(tf.constant(1.0)),
                tensor_range(tf.constant(5)), not_or(tf.constant(-1.0), tf.constant(-2.0)),
                not_or(tf.constant(1.0), tf.constant(-2.0))]
        ops = {op.type for op in tf.get_default_graph().get_operations()}
        with tf.Session() as sess:
            got = sess.run(outs, {flag: True})
            assert sess.run(outs[3], {flag: False}) == 0.0
    assert [float(v) for v in got] == [8, 111, 6.0, 19.0, 12.0, 30, -1.0, -1.0]
    assert {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"} <= ops


@pytest.mark.parametrize("x, want", [(-2.5, [2.5, -1.0, 7.5]), (0.0, [0.0, 0.0, 10.0]),
                                     (4.0, [4.0, 1.0, 14.0])])
def test_returns_in_branches_methods_and_closures(x, want):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [])
        model = Model()
        outs = [absval(p), sign(p), _adder(5.0)(p)]
        fixed = [model(tf.constant([1.0, 30.0])), model(tf.constant([1.0]), steps=2),
                 odd_sum(tf.constant(7))]
        with tf.Session() as sess:
            got = sess.run(outs, {p: x})
            scaled, short, (total, count) = sess.run(fixed)
    assert [abs(float(v)) if w == 0 else float(v) for v, w in zip(got, want)] == want
    np.testing.assert_allclose(scaled, [2.4, 72.0], rtol=1e-6)
    assert short.tolist() == [12.0] and (float(total), int(count)) == (9.0, 7)


def test_to_graph_do_not_convert_and_clear_errors():
    def relu(x):
        if x > 0:
            y = x
        else:
            y = tf.zeros_like(x)
        return y

    converted = tf.autograph.to_graph(relu)
    assert converted.autograph_info__ == {"converted": True}
    kept = tf.autograph.to_graph(tf.autograph.experimental.do_not_convert(relu))
    with tf.Graph().as_default():
        assert tf.Session().run(converted(tf.constant(-3.0))) == 0.0
        with pytest.raises(TypeError, match="as a Python bool is not allowed"):
            kept(tf.constant(-3.0))

    @tf.function
    def one_sided(x):
        if x > 0:
            y = x
        return y

    @tf.function
    def grows(x):
        items = []
        i = tf.constant(0)
        while i < 3:
            items = [*items, x]
            i += 1
        return items

    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'y' must also be assigned in the else branch"):
            one_sided(tf.constant(1.0))
        with pytest.raises(ValueError, match="'items' holds a list and is reassigned"):
            grows(tf.constant(1.0))


@tf.function
def pick(x):
    return x * 2.0 if x > 1.0 else -x  # a conditional expression on a tensor


def test_conditional_expression_on_a_tensor():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [])
        y = pick(p)
        with tf.Session() as sess:
            # TensorFlow 2.15: 6.0 and -0.5
            assert [float(sess.run(y, {p: v})) for v in (3.0, 0.5)] == [6.0, -0.5]
