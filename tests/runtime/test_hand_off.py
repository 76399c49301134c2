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
from flowgraph.backends.cpu import blas_threads as blas_threads_module
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


def test_intra_op_parallelism_threads_limits_blas_during_runs(monkeypatch):
    # without the contention policy, which would limit BLAS on a busy host
    monkeypatch.setattr(blas_threads_module, "contention_limited", lambda: None)
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
    assert flags["MatMul"] is False  # 64 x 64 x 64: 0.5 MFLOP, cheaper than a hand-off


@pytest.mark.parametrize("batch, handed_off", [(8, False), (64, False), (512, True)])
def test_matrix_products_hand_off_by_size_of_the_fed_batch(batch, handed_off):
    """[batch, 256] x [256, 256]: 1, 8.4 and 67 MFLOP; the cut is `HAND_OFF_MIN_FLOPS`,
    the unknown batch dimension read from the fed value."""
    with threadpool_limits(1, user_api="blas"):
        assert blas_threads() == 1
        with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
            x = tf.placeholder(tf.float32, [None, 256], name="x")
            w = np.random.default_rng(1).random((256, 256), dtype=np.float32)
            a = tf.matmul(x, tf.Variable(w), name="a")
            b = tf.matmul(x, tf.Variable(w.T.copy()), transpose_b=True, name="b")
            sess.run(tf.global_variables_initializer())
            value = np.random.default_rng(2).random((batch, 256), dtype=np.float32)
            got_a, got_b = sess.run([a, b], {x: value})
            flags = _handed_off(sess)
    np.testing.assert_allclose(got_a, value @ w, rtol=1e-5)
    np.testing.assert_allclose(got_b, value @ w, rtol=1e-5)
    assert flags["a"] is handed_off and flags["b"] is handed_off


def test_product_flops_read_shapes_and_transposes():
    from flowgraph.framework.tensor_shape import TensorShape
    from flowgraph.runtime.schedule import _product_flops

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 32])
        y = tf.placeholder(tf.float32, [5, None, 3])
        known = tf.matmul(tf.zeros([4, 32]), tf.zeros([6, 32]), transpose_b=True)
        of_x = tf.matmul(x, tf.zeros([32, 2]))
        batched = tf.matmul(y, tf.zeros([5, 3, 7]), adjoint_a=True)
        unknown_rank = tf.matmul(tf.placeholder(tf.float32), tf.zeros([3, 3]))
        fed = {x: TensorShape([10, 32]), y: TensorShape([5, 9, 3])}
        assert _product_flops(known.op) == 2.0 * 4 * 6 * 32
        assert _product_flops(of_x.op) is None
        assert _product_flops(of_x.op, lambda t: fed.get(t, t.shape)) == 2.0 * 10 * 2 * 32
        assert _product_flops(batched.op, lambda t: fed.get(t, t.shape)) == 2.0 * 5 * 3 * 7 * 9
        assert _product_flops(unknown_rank.op) is None


def test_a_loss_over_a_small_batch_is_not_handed_off():
    """The small MLP's cross-entropy over [64, 10] logits (fed batch) runs inline; over
    [4096, 10] it may go to another thread. Both give NumPy's values."""
    rng = np.random.default_rng(3)
    for batch, handed_off in [(64, False), (4096, True)]:
        with tf.Graph().as_default(), tf.Session(config=_config()) as sess:
            logits = tf.placeholder(tf.float32, [None, 10], name="logits")
            labels = tf.placeholder(tf.int64, [None], name="labels")
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits, name="xent")
            z = rng.normal(size=(batch, 10)).astype(np.float32)
            y = rng.integers(0, 10, size=batch)
            got = sess.run(loss, {logits: z, labels: y})
            flags = _handed_off(sess)
        shifted = z - z.max(axis=1, keepdims=True)
        want = np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(batch), y]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert flags["xent/xent"] is handed_off, batch


def test_a_fast_run_outside_session_run_keeps_the_runs_thread_limits():
    """`FastRun.run_limited` (a task's stage calls, `distributed.stage_graph`) applies the
    limits `Session.run` applies (here ``intra_op_parallelism_threads=1``), instead of
    leaving the fast path whenever a limit is set."""
    from flowgraph.runtime.step import FastRun

    before = blas_threads()
    x = tf.placeholder(tf.float32, [None])
    seen = tf.py_func(lambda v: np.float32(blas_threads()) + 0 * v.sum(), [x], tf.float32)
    config = tf.ConfigProto(intra_op_parallelism_threads=1)
    with tf.Session(config=config) as sess:
        feeds = {x: np.ones(3, np.float32)}
        sess.run(seen, feeds, options=tf.RunOptions(timeout_in_ms=1000))
        fast = FastRun.after_run(sess, seen, feeds)
        assert fast is not None and FastRun.may_run(sess)
        assert fast.run_limited(sess, feeds, timeout_ms=1000) == 1.0
        assert blas_threads() == before
