"""Which ready nodes the executor hands to a second thread (step stats' thread ids).

An expensive node goes to another thread only when the current one has other work. Two
exceptions, both measured on the MLP benchmark: while BLAS is multi-threaded, no node of
a plan with matrix products is handed off (BLAS's threads already use the cores; two
concurrent products would each start all of them), and optimizer updates of small
variables are not worth the hand-off.
"""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import flowgraph as tf
from flowgraph.backends.cpu.blas_threads import blas_threads

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
RUNS = 8


def _threads_of(sess, fetches, feed, op_type: str) -> list[set[int]]:
    """Per run, the set of thread ids that ran nodes of `op_type`."""
    out = []
    for _ in range(RUNS):
        md = tf.RunMetadata()
        sess.run(fetches, feed, options=FULL, run_metadata=md)
        out.append({n.thread_id for d in md.step_stats.dev_stats for n in d.node_stats
                    if n.op_type == op_type})
    return out


def _two_matmuls():
    x = tf.placeholder(tf.float32, [None, 384], name="x")
    w = np.random.default_rng(0).random((384, 384), dtype=np.float32)
    a = tf.matmul(x, tf.constant(w))
    b = tf.matmul(x, tf.constant(w.T.copy()))
    feed = {x: np.ones((384, 384), np.float32)}
    return [a, b], feed


def _config():
    return tf.ConfigProto(inter_op_parallelism_threads=2)


def test_matmuls_stay_on_one_thread_while_blas_is_multithreaded():
    with threadpool_limits(2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("BLAS runs one thread on this machine")
        with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
            fetches, feed = _two_matmuls()
            runs = _threads_of(sess, fetches, feed, "MatMul")
    assert all(len(r) == 1 for r in runs), runs


def test_matmuls_overlap_when_blas_runs_one_thread():
    with threadpool_limits(1, user_api="blas"):
        assert blas_threads() == 1
        with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
            fetches, feed = _two_matmuls()
            runs = _threads_of(sess, fetches, feed, "MatMul")
            a, b = sess.run(fetches, feed)
    x = np.ones((384, 384), np.float32)
    w = np.random.default_rng(0).random((384, 384), dtype=np.float32)
    np.testing.assert_allclose(a, x @ w, rtol=1e-5)
    np.testing.assert_allclose(b, x @ w.T, rtol=1e-5)
    assert any(len(r) == 2 for r in runs), runs


def _two_updates(n: int):
    """Two gradient-descent updates of [n] variables, ready at the same time."""
    v1 = tf.Variable(np.zeros(n, np.float32), name="v1")
    v2 = tf.Variable(np.zeros(n, np.float32), name="v2")
    g = tf.placeholder(tf.float32, [n], name="g") * 2.0  # both updates wait on this Mul
    train = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(g, v1), (g, v2)])
    return train, [v1, v2], {"g:0": np.ones(n, np.float32)}


def _handed_off(sess) -> dict[str, bool]:
    """Per op of the session's compiled plans: may the executor hand it off?"""
    return {n.name: n.hand_off for cp in sess._plans.values() for n in cp.nodes}


def test_updates_of_small_variables_are_not_handed_off():
    with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
        train, variables, feed = _two_updates(64)
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        flags = _handed_off(sess)
        v1, v2 = sess.run(variables)
    np.testing.assert_allclose(v1, -1.0)
    np.testing.assert_allclose(v2, -1.0)
    assert flags["GradientDescent/update_v1/ApplyGradientDescent"] is False
    assert flags["GradientDescent/update_v2/ApplyGradientDescent"] is False


def test_updates_of_large_variables_are_handed_off():
    with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
        train, _, feed = _two_updates(1 << 21)
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        assert _handed_off(sess)["GradientDescent/update_v1/ApplyGradientDescent"] is True
        runs = _threads_of(sess, train, feed, "ApplyGradientDescent")
    assert any(len(r) == 2 for r in runs), runs


def test_intra_op_parallelism_threads_limits_blas_during_runs():
    before = blas_threads()
    seen = tf.py_func(lambda: np.int64(blas_threads()), [], tf.int64)
    fetches, feed = _two_matmuls()
    config = tf.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=1)
    with tf.Session(config=config) as sess:
        inside, *_ = sess.run([seen, *fetches], feed)
        assert blas_threads() == before  # restored after the run
        flags = _handed_off(sess)
    assert inside == 1
    # with one BLAS thread, the two products may overlap on two executor threads
    assert flags["MatMul"] is True and flags["MatMul_1"] is True
    with tf.Session(config=_config()) as sess:  # 0: BLAS left as it is
        assert sess.run(seen) == before


def _update_after_matmul():
    """A large update and a matrix product in one plan."""
    train, _, feed = _two_updates(1 << 16)
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    prod = tf.matmul(x, tf.constant(np.ones((64, 64), np.float32)))
    feed["x:0"] = np.ones((64, 64), np.float32)
    return [train, prod], feed


def test_plans_with_matrix_products_stay_on_one_thread_while_blas_is_multithreaded():
    with threadpool_limits(2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("BLAS runs one thread on this machine")
        with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
            fetches, feed = _update_after_matmul()
            sess.run(tf.global_variables_initializer())
            sess.run(fetches, feed)
            flags = _handed_off(sess)
    assert not any(flags.values()), {k: v for k, v in flags.items() if v}


def test_plans_with_matrix_products_hand_off_when_blas_runs_one_thread():
    with threadpool_limits(1, user_api="blas"):
        with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
            fetches, feed = _update_after_matmul()
            sess.run(tf.global_variables_initializer())
            sess.run(fetches, feed)
            flags = _handed_off(sess)
    assert flags["GradientDescent/update_v1/ApplyGradientDescent"] is True
    assert flags["MatMul"] is True
