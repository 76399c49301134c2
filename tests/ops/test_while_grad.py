"""Gradients through `tf.while_loop` (control_flow_grad.py): checked against float64 finite
differences and against closed forms."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.ops import control_flow_grad, gradients  # noqa: F401

R = np.random.RandomState(11)


def power_loop(x, w, n, **kw):
    """x <- x * w, n times."""
    return tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * w), [0, x], **kw)[1]


# -- x <- x * w ----------------------------------------------------------------------------
def test_power_loop_closed_form(sess):
    x = tf.placeholder(tf.float64, [2, 3])
    w = tf.placeholder(tf.float64, [])
    n = tf.placeholder(tf.int32, [])
    y = power_loop(x, w, n)
    gx, gw = tf.gradients(tf.reduce_sum(y), [x, w])
    X = R.uniform(-1, 1, (2, 3))
    for steps in (0, 1, 4):
        got_x, got_w = sess.run([gx, gw], {x: X, w: 1.3, n: steps})
        np.testing.assert_allclose(got_x, np.full((2, 3), 1.3 ** steps))
        np.testing.assert_allclose(got_w, steps * 1.3 ** max(steps - 1, 0) * X.sum())


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_power_loop_finite_differences(parallel_iterations):
    check_gradient(lambda x, w: power_loop(x, w, 4, parallel_iterations=parallel_iterations),
                   [R.uniform(-1, 1, (2, 3)), np.array(1.2)])


def test_external_tensors_accumulate():
    # w and b are captured by the body: their gradients sum over the iterations.
    def build(x, w, b):
        return tf.while_loop(lambda i, a: i < 3,
                             lambda i, a: (i + 1, tf.sin(a * w) + b * a), [0, x])[1]

    check_gradient(build, [R.uniform(-1, 1, (3, 2)), R.uniform(0.5, 1, (3, 2)),
                           np.array(0.7)])


def test_maximum_iterations():
    def build(x, w):
        return tf.while_loop(lambda a: tf.reduce_sum(a) < 1e6, lambda a: a * w, [x],
                             maximum_iterations=3)

    check_gradient(build, [R.uniform(0.5, 1, (2, 3)), np.array(1.5)])


def test_maximum_iterations_counts_iterations(sess):
    x = tf.constant(1.0, tf.float64)
    y = tf.while_loop(lambda a: a < 100.0, lambda a: a * 3.0, [x], maximum_iterations=2)
    assert sess.run(tf.gradients(y, x)[0]) == 9.0


def test_several_loop_variables_and_unused_outputs():
    # b depends on a; only b reaches the loss; the int counter gets no gradient.
    def build(x, y):
        _, _a, b = tf.while_loop(lambda i, a, b: i < 3,
                                lambda i, a, b: (i + 1, tf.tanh(a), b * a + 1.0),
                                [0, x, y])
        return b

    check_gradient(build, [R.uniform(-1, 1, (2, 2)), R.uniform(-1, 1, (2, 2))])


def test_swapped_variables_and_returned_invariant():
    def build(x, y, z):
        _, a, b, c = tf.while_loop(lambda i, a, b, c: i < 3,
                                   lambda i, a, b, c: (i + 1, b * 2.0, a, z),
                                   [0, x, y, x])
        return [a, b * c]

    check_gradient(build, [R.uniform(-1, 1, (3,)), R.uniform(-1, 1, (3,)),
                           R.uniform(-1, 1, (3,))])


def test_zero_iterations_passes_the_gradient_through(sess):
    x = tf.constant([1.0, 2.0], tf.float64)
    w = tf.constant(3.0, tf.float64)
    gx, gw = tf.gradients(power_loop(x, w, 0), [x, w])
    got_x, got_w = sess.run([gx, gw])
    np.testing.assert_array_equal(got_x, [1.0, 1.0])
    assert got_w == 0.0


def test_shape_changing_loop_variable():
    def build(x, w):
        return tf.while_loop(lambda i, a: i < 2,
                             lambda i, a: (i + 1, tf.concat([a, tf.tanh(a) * w], 0)),
                             [0, x], shape_invariants=[tf.TensorShape([]),
                                                       tf.TensorShape([None])])[1]

    check_gradient(build, [R.uniform(-1, 1, (3,)), np.array(0.8)])


# -- nesting ---------------------------------------------------------------------------------
def test_nested_loops():
    def build(x, w):
        def inner(a):
            return tf.while_loop(lambda j, b: j < 2,
                                 lambda j, b: (j + 1, tf.sin(b) * w), [0, a])[1]

        return tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, inner(a) + a), [0, x])[1]

    check_gradient(build, [R.uniform(-1, 1, (2, 3)), np.array(1.1)])


def test_nested_loop_with_inner_count_from_outer_iteration():
    # The inner loop runs i+1 times in outer iteration i: its stacks and counts are per
    # outer iteration.
    def build(x, w):
        def outer_body(i, a):
            inner = tf.while_loop(lambda j, b: j <= i, lambda j, b: (j + 1, b * w),
                                  [0, a])[1]
            return i + 1, tf.tanh(inner)

        return tf.while_loop(lambda i, a: i < 3, outer_body, [0, x])[1]

    check_gradient(build, [R.uniform(-1, 1, (4,)), np.array(0.9)])


def test_loop_inside_cond():
    def build(x, w, p):
        return tf.cond(p > 0.0, lambda: power_loop(tf.sin(x), w, 3), lambda: x * w)

    for p in (1.0, -1.0):
        check_gradient(build, [R.uniform(-1, 1, (3,)), np.array(1.3), np.array(p)])


# -- cond inside the body --------------------------------------------------------------------
def test_cond_inside_while_body():
    def build(x, w):
        def body(i, a):
            a = tf.cond(tf.equal(i % 2, 0), lambda: a * w, lambda: tf.sin(a) + w)
            return i + 1, a

        return tf.while_loop(lambda i, a: i < 5, body, [0, x])[1]

    check_gradient(build, [R.uniform(-1, 1, (2, 3)), np.array(1.2)])


def test_cond_on_data_inside_while_body():
    # The branch taken differs per element of the batch of iterations.
    def build(x, w):
        def body(i, a):
            a = tf.cond(tf.reduce_sum(a) > 0.0, lambda: a * w - 1.0, lambda: tf.exp(a) * w)
            return i + 1, a

        return tf.while_loop(lambda i, a: i < 4, body, [0, x])[1]

    check_gradient(build, [np.array([0.3, 0.2]), np.array(0.9)])


# -- RNN-like body ---------------------------------------------------------------------------
def rnn(seq, h0, wx, wh, parallel_iterations=10):
    steps = tf.shape(seq)[0]

    def body(t, h, outs):
        h = tf.tanh(tf.matmul(tf.gather(seq, t), wx) + tf.matmul(h, wh))
        return t + 1, h, outs + tf.reduce_sum(h * h)

    _, h, total = tf.while_loop(lambda t, h, outs: t < steps, body,
                                [0, h0, tf.constant(0.0, seq.dtype)],
                                parallel_iterations=parallel_iterations)
    return [h, total]


def test_rnn_cell_over_fed_sequence():
    inputs = [R.uniform(-1, 1, (4, 2, 3)), R.uniform(-1, 1, (2, 5)),
              R.uniform(-0.5, 0.5, (3, 5)), R.uniform(-0.5, 0.5, (5, 5))]
    check_gradient(rnn, inputs, directions=3)


def test_rnn_parallel_iterations_agree(sess):
    seq = tf.placeholder(tf.float64, [6, 2, 3])
    h0 = tf.placeholder(tf.float64, [2, 4])
    wx = tf.constant(R.uniform(-0.5, 0.5, (3, 4)))
    wh = tf.constant(R.uniform(-0.5, 0.5, (4, 4)))
    feed = {seq: R.uniform(-1, 1, (6, 2, 3)), h0: R.uniform(-1, 1, (2, 4))}
    results = []
    for p in (1, 4, 32):
        h, total = rnn(seq, h0, wx, wh, parallel_iterations=p)
        # (seq's gradient is an IndexedSlices, as in TensorFlow: made dense to compare)
        grads = tf.gradients(total + tf.reduce_sum(h), [seq, h0, wx, wh])
        results.append(sess.run([tf.convert_to_tensor(g) for g in grads], feed))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_variables_read_in_the_body(sess):
    w = tf.Variable(np.array([[0.5, -0.2], [0.1, 0.3]]), name="w")
    x = tf.constant(np.array([[1.0, 2.0]]))
    y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, w)), [0, x])[1]
    gw = tf.gradients(tf.reduce_sum(y), w)[0]
    sess.run(tf.global_variables_initializer())
    W = sess.run(w)
    X = np.array([[1.0, 2.0]])

    def loss(W):
        return (X @ W @ W @ W).sum()

    num = np.zeros_like(W)
    for k in range(W.size):
        d = np.zeros(W.size)
        d[k] = 1e-6
        num.flat[k] = (loss(W + d.reshape(W.shape)) - loss(W - d.reshape(W.shape))) / 2e-6
    np.testing.assert_allclose(sess.run(gw), num, rtol=1e-6)


# -- runs, steps, several gradient calls -----------------------------------------------------
def test_two_gradient_calls_on_one_loop(sess):
    x = tf.constant([1.0, -2.0], tf.float64)
    w = tf.constant(1.5, tf.float64)
    y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a) * w), [0, x])[1]
    g1 = tf.gradients(tf.reduce_sum(y), x)[0]
    g2 = tf.gradients(tf.reduce_sum(y * y), w)[0]
    a, b = sess.run([g1, g2])
    np.testing.assert_allclose(a, sess.run(g1))
    np.testing.assert_allclose(b, sess.run(g2))


def test_stacks_are_per_run(sess):
    # Concurrent runs of one plan with different feeds never mix their saved values.
    x = tf.placeholder(tf.float64, [3])
    w = tf.placeholder(tf.float64, [])
    y = tf.while_loop(lambda i, a: i < 20, lambda i, a: (i + 1, tf.sin(a) * w), [0, x])[1]
    gx, gw = tf.gradients(tf.reduce_sum(y), [x, w])
    feeds = [{x: R.uniform(-1, 1, 3), w: R.uniform(0.5, 1.5)} for _ in range(6)]
    expected = [sess.run([gx, gw], f) for f in feeds]
    got = [None] * len(feeds)

    def work(k):
        for _ in range(5):
            got[k] = sess.run([gx, gw], feeds[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(feeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e, g in zip(expected, got):
        np.testing.assert_allclose(e[0], g[0])
        np.testing.assert_allclose(e[1], g[1])


def test_forward_only_run_skips_the_saving(sess):
    x = tf.constant([1.0, 2.0])
    y = power_loop(x, 2.0, 3)
    g = tf.gradients(y, x)[0]
    np.testing.assert_allclose(sess.run(y), [8.0, 16.0])
    np.testing.assert_allclose(sess.run(g), [8.0, 8.0])
    trace = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=trace)
    names = {n.node_name for d in trace.step_stats.dev_stats for n in d.node_stats}
    assert not any("f_acc" in n for n in names)


# -- back_prop=False -------------------------------------------------------------------------
def test_back_prop_false_gives_no_gradient():
    x = tf.constant(2.0)
    w = tf.constant(3.0)
    y = power_loop(x, w, 3, back_prop=False)
    assert tf.gradients(y, [x, w]) == [None, None]


def test_back_prop_false_stops_only_that_loop(sess):
    x = tf.constant(2.0)
    w = tf.constant(3.0)
    y = power_loop(x, w, 3, back_prop=False)
    z = power_loop(x, w, 3)
    gx, gw = tf.gradients(z + y, [x, w])
    assert sess.run([gx, gw]) == [27.0, 54.0]


# -- graph structure -------------------------------------------------------------------------
def test_backward_loop_structure():
    x = tf.constant(2.0)
    y = power_loop(x, 3.0, 3)
    tf.gradients(y, x)
    g = tf.get_default_graph()
    ops = g.get_operations()
    types = {op.type for op in ops}
    assert {"StackV2", "StackPushAt", "StackReadAt"} <= types
    grad_frames = {op.get_attr("frame_name") for op in ops
                   if op.type == "Enter" and op.name.startswith("gradients/")}
    assert grad_frames == {b"gradients/while_grad"}  # TF: string attrs are bytes
    push = next(op for op in ops if op.type == "StackPushAt")
    assert push.name.startswith("while/")


# -- stacks and docstrings -------------------------------------------------------------------
def test_lifo_stack_ops(sess):
    from flowgraph.ops import stack_ops

    h = stack_ops.stack_v2(-1, tf.float32)
    a = stack_ops.stack_push_v2(h, tf.constant(1.0))
    with tf.control_dependencies([a]):
        b = stack_ops.stack_push_v2(h, tf.constant(2.0))
    with tf.control_dependencies([b]):
        top = stack_ops.stack_pop_v2(h, tf.float32)
    with tf.control_dependencies([top]):
        second = stack_ops.stack_pop_v2(h, tf.float32)
    with tf.control_dependencies([second]):
        empty = stack_ops.stack_pop_v2(h, tf.float32)
    assert sess.run([top, second]) == [2.0, 1.0]
    assert sess.run([top, second]) == [2.0, 1.0]  # a new stack in every run
    with pytest.raises(tf.errors.InvalidArgumentError, match="is empty"):
        sess.run(empty)


def test_stack_ops_check_their_inputs():
    from flowgraph.ops import stack_ops

    with pytest.raises(ValueError, match="stack handle"):
        stack_ops.stack_pop_v2(tf.constant(1.0), tf.float32)


@pytest.mark.parametrize("module", ["control_flow_grad", "stack_ops"])
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"flowgraph.ops.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
