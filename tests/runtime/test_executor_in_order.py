"""Seeded random ops inside loops run their iterations in TensorFlow's order
(`FLAG_IN_ORDER`, flowgraph/runtime/_executor.pyx "Scheduling"): each run of such an op
takes the next values of its stream, so the order decides which iteration gets which
values. Orders below were printed by TensorFlow 2.15 (tf.compat.v1) through the tf-oracle,
as indices into the op's stream (its 0th, 1st, ... run). TensorFlow's order comes from its
thread pool (newest task first) while its cost model still classes the op as expensive;
a long loop that runs the op many times can switch to step order, when the cost model
classes it as cheap, at a point that depends on timing: there only the set of values
drawn is compared."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.runtime import frames


def _stream(n):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        r = tf.random_uniform([], seed=5)
        with tf.Session() as sess:
            return [float(sess.run(r)) for _ in range(n)]


def _draw_indices(values, stream):
    return [int(np.argmin(np.abs(np.asarray(stream) - v))) for v in np.ravel(values)]


def _while_writes(n, **loop_args):
    def body(i, ta):
        return i + 1, ta.write(i, tf.random_uniform([], seed=5))

    _, ta = tf.while_loop(lambda i, t: i < n, body, [0, tf.TensorArray(tf.float32, n)],
                          **loop_args)
    return ta.stack()


@pytest.mark.parametrize("threads", [1, 4])
def test_nested_loops_outer_in_order_inner_newest_first(threads):
    stream = _stream(24)
    for window in (10, 1):
        with tf.Graph().as_default():
            tf.set_random_seed(3)

            def outer(j, acc):
                def inner(k, a):
                    return k + 1, a.write(k, tf.random_uniform([], seed=5))

                _, ta = tf.while_loop(lambda k, a: k < 3, inner,
                                      [0, tf.TensorArray(tf.float32, 3)])
                return j + 1, acc.write(j, ta.stack())

            _, res = tf.while_loop(lambda j, a: j < 4, outer,
                                   [0, tf.TensorArray(tf.float32, 4)],
                                   parallel_iterations=window)
            config = tf.ConfigProto(inter_op_parallelism_threads=threads)
            with tf.Session(config=config) as sess:
                first, second = sess.run(res.stack()), sess.run(res.stack())
        assert _draw_indices(first, stream) == [2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9]
        assert _draw_indices(second, stream) == [14, 13, 12, 17, 16, 15, 20, 19, 18, 23,
                                                 22, 21]


def test_map_fn_scan_and_while_loop_orders_match_tf():
    stream = _stream(18)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        m = tf.map_fn(lambda x: x + tf.random_uniform([], seed=5), tf.zeros([5]))
        with tf.Session() as sess:
            assert _draw_indices(sess.run(m), stream) == [4, 3, 2, 1, 0]
            assert _draw_indices(sess.run(m), stream) == [9, 8, 7, 6, 5]
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        sc = tf.scan(lambda a, x: a * 0 + x + tf.random_uniform([], seed=5), tf.zeros([5]),
                     initializer=0.0)
        with tf.Session() as sess:
            assert _draw_indices(sess.run(sc), stream) == [4, 3, 2, 1, 0]
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        w = _while_writes(6)
        with tf.Session() as sess:
            assert _draw_indices(sess.run(w), stream) == [5, 4, 3, 2, 1, 0]
            assert _draw_indices(sess.run(w), stream) == [11, 10, 9, 8, 7, 6]


def test_only_stream_ops_inside_loops_are_flagged():
    with tf.Graph().as_default():
        tf.random_normal([2], seed=1)
        tf.random.stateless_uniform([2], seed=[1, 2])  # no stream: never flagged
        w = _while_writes(3)
        ops = tf.get_default_graph().get_operations()
        drawing = {op.name for op in ops if frames.draws_from_stream(op)}
        assert drawing == {"random_normal/RandomStandardNormal",
                           "while/random_uniform/RandomUniform"}
        with tf.Session() as sess:
            assert sess.run(w).shape == (3,)


def test_error_in_an_in_order_op_fails_the_step_and_the_session_goes_on():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])

        def body(i, acc):
            # The shape goes negative in iteration 2 when fed n=2.
            draw = tf.random_uniform(tf.reshape(n - i, [1]), seed=7)
            return i + 1, acc + tf.reduce_sum(draw)

        _, total = tf.while_loop(lambda i, a: i < 4, body, [0, 0.0])
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(total, {n: 2})
            assert np.isfinite(sess.run(total, {n: 5}))


def test_loop_with_many_iterations_keeps_every_draw_once():
    stream = _stream(200)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        w = _while_writes(200, parallel_iterations=7)
        with tf.Session() as sess:
            got = _draw_indices(sess.run(w), stream)
    assert sorted(got) == list(range(200))
    # TF 2.15 takes the first window newest first too; later windows it ran in step order
    # once its cost model had classed the op as cheap (inline), which depends on timing.
    assert got[:7] == [6, 5, 4, 3, 2, 1, 0]


def test_dropout_on_a_cell_output_of_unknown_batch_draws_in_step_order():
    """The noise shape comes from each step's output, so each step's draw becomes ready
    after its product: TF 2.15 draws in step order (the same masks in every run)."""
    with tf.Graph().as_default():
        tf.set_random_seed(21)
        x = tf.placeholder(tf.float32, [None, 3, 2])
        cell = tf.nn.rnn_cell.DropoutWrapper(
            tf.nn.rnn_cell.BasicRNNCell(2, activation=tf.identity), output_keep_prob=0.5,
            seed=9)
        out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kept = (sess.run(out, {x: np.ones((2, 3, 2))}) != 0).astype(int)
    assert kept.tolist() == [[[0, 0], [1, 1], [0, 1]], [[1, 0], [0, 1], [1, 0]]]
