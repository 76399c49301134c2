"""Gradients through `tf.cond` and `tf.case` (control_flow_grad.py): only the taken
branch contributes. Checked against float64 finite differences and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.ops import control_flow_cond, control_flow_grad, gradients  # noqa: F401

R = np.random.RandomState(5)
BRANCH = [pytest.param(1.0, id="true"), pytest.param(-1.0, id="false")]


@pytest.mark.parametrize("p", BRANCH)
def test_input_used_in_both_branches(p):
    def build(x, y, s):
        return tf.cond(s > 0.0, lambda: x * y, lambda: tf.sin(x) - 2.0 * y)

    check_gradient(build, [R.uniform(-1, 1, (2, 3)), R.uniform(-1, 1, (2, 3)),
                           np.array(p)])


@pytest.mark.parametrize("p", BRANCH)
def test_input_used_in_one_branch(p, sess):
    x = tf.placeholder(tf.float64, [3])
    y = tf.placeholder(tf.float64, [3])
    s = tf.placeholder(tf.bool, [])
    out = tf.cond(s, lambda: tf.exp(x), lambda: y * 3.0)
    gx, gy = tf.gradients(tf.reduce_sum(out), [x, y])
    X, Y = R.uniform(-1, 1, 3), R.uniform(-1, 1, 3)
    got_x, got_y = sess.run([gx, gy], {x: X, y: Y, s: p > 0})
    if p > 0:
        np.testing.assert_allclose(got_x, np.exp(X))
        np.testing.assert_array_equal(got_y, np.zeros(3))
    else:
        np.testing.assert_array_equal(got_x, np.zeros(3))
        np.testing.assert_array_equal(got_y, np.full(3, 3.0))


@pytest.mark.parametrize("p", BRANCH)
def test_branch_returning_outside_tensors(p):
    def build(x, y, s):
        return tf.cond(s > 0.0, lambda: x, lambda: y) * x

    check_gradient(build, [R.uniform(-1, 1, (3,)), R.uniform(-1, 1, (3,)), np.array(p)])


@pytest.mark.parametrize("p", BRANCH)
def test_constant_branch(p):
    def build(x, s):
        return tf.cond(s > 0.0, lambda: tf.constant([1.0, 2.0], tf.float64),
                       lambda: x * x + 1.0)

    check_gradient(build, [R.uniform(-1, 1, (2,)), np.array(p)])


@pytest.mark.parametrize("p", BRANCH)
def test_several_outputs_one_used(p):
    def build(x, y, s):
        a, b = tf.cond(s > 0.0, lambda: (x * y, tf.tanh(x)), lambda: (x - y, x * 3.0))
        return a + 0.0 * tf.reduce_sum(b)

    check_gradient(build, [R.uniform(-1, 1, (2, 2)), R.uniform(-1, 1, (2, 2)),
                           np.array(p)])


@pytest.mark.parametrize("p", [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)])
def test_nested_conds(p):
    def build(x, w, s, t):
        def outer_true():
            return tf.cond(t > 0.0, lambda: tf.sin(x) * w, lambda: x * x * w)

        def outer_false():
            return tf.cond(t > 0.0, lambda: w - x, lambda: tf.exp(x + w))

        return tf.cond(s > 0.0, outer_true, outer_false)

    check_gradient(build, [R.uniform(-1, 1, (3,)), np.array(0.7), np.array(p[0]),
                           np.array(p[1])])


def test_predicate_from_data():
    def build(x):
        return tf.cond(tf.reduce_sum(x) > 0.0, lambda: tf.square(x), lambda: tf.abs(x))

    check_gradient(build, [np.array([0.5, -0.2, 0.4])])
    check_gradient(build, [np.array([-0.5, 0.2, -0.4])])


@pytest.mark.parametrize("p", BRANCH)
def test_gather_in_branch_gives_sparse_gradient(p, sess):
    params = tf.placeholder(tf.float64, [4, 2])
    s = tf.placeholder(tf.bool, [])
    out = tf.cond(s, lambda: tf.gather(params, [3, 1, 3]), lambda: params[:3] * 2.0)
    g = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(out), params)[0])
    P = R.uniform(-1, 1, (4, 2))
    want = np.zeros((4, 2))
    if p > 0:
        want[3] = 2.0
        want[1] = 1.0
    else:
        want[:3] = 2.0
    np.testing.assert_array_equal(sess.run(g, {params: P, s: p > 0}), want)


def test_variable_in_branch(sess):
    v = tf.Variable([1.0, 2.0], dtype=tf.float64)
    s = tf.placeholder(tf.bool, [])
    out = tf.cond(s, lambda: v * v, lambda: tf.ones_like(v))
    g = tf.gradients(tf.reduce_sum(out), v)[0]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(g, {s: True}), [2.0, 4.0])
    np.testing.assert_array_equal(sess.run(g, {s: False}), [0.0, 0.0])


def test_stop_gradient_in_branch(sess):
    x = tf.constant(3.0)
    s = tf.placeholder(tf.bool, [])
    out = tf.cond(s, lambda: tf.stop_gradient(x) * x, lambda: x)
    g = tf.gradients(out, x)[0]
    assert sess.run(g, {s: True}) == 3.0
    assert sess.run(g, {s: False}) == 1.0


def test_hand_built_switch_and_merge():
    # A Merge not built by tf.cond: its gradient switches on its value_index output.
    def build(x, s):
        f, t = control_flow_cond.switch(x, s > 0.0)
        return control_flow_cond.merge([tf.sin(f), t * 3.0])[0]

    for p in (1.0, -1.0):
        check_gradient(build, [R.uniform(-1, 1, (3,)), np.array(p)])


def test_gradient_graph_is_built_per_branch():
    x = tf.constant(1.0)
    y = tf.cond(x > 0.0, lambda: x * 2.0, lambda: x * 3.0)
    tf.gradients(y, x)
    types = [op.type for op in tf.get_default_graph().get_operations()
             if op.name.startswith("gradients/")]
    assert types.count("Switch") == 1  # the Merge's gradient
    assert types.count("Merge") == 2  # one per Switch of x (one per branch)


# -- tf.case -----------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 1, 2])
def test_case(k):
    def build(x, w, sel):
        return tf.case([(sel < 0.5, lambda: x * w), (sel < 1.5, lambda: tf.sin(x) + w)],
                       default=lambda: x * x - w)

    check_gradient(build, [R.uniform(-1, 1, (2, 2)), np.array(1.3), np.array(float(k))])


@pytest.mark.parametrize("k", [0, 1])
def test_case_exclusive_without_default(k, sess):
    x = tf.constant([1.0, 2.0], tf.float64)
    sel = tf.placeholder(tf.int32, [])
    out = tf.case([(tf.equal(sel, 0), lambda: x * 5.0), (tf.equal(sel, 1), lambda: x * x)],
                  exclusive=True)
    g = tf.gradients(tf.reduce_sum(out), x)[0]
    want = [5.0, 5.0] if k == 0 else [2.0, 4.0]
    np.testing.assert_array_equal(sess.run(g, {sel: k}), want)


def test_unknown_shapes():
    def build(x, y):
        return tf.cond(tf.reduce_sum(y) > 0.0, lambda: x * y, lambda: tf.tanh(x))

    for shapes in ("dims", "rank"):
        check_gradient(build, [R.uniform(-1, 1, (2, 3)), R.uniform(0.1, 1, (2, 3))],
                       shapes=shapes)
        check_gradient(build, [R.uniform(-1, 1, (2, 3)), -R.uniform(0.1, 1, (2, 3))],
                       shapes=shapes)
