"""A synchronous push that fails while holding the pushes' counter (an error in the
wrapped optimizer's update, inside the aggregation) gives it back: the ps's task puts it
back (sync_inline.CounterLock), so the next push aggregates at once instead of waiting
on ``take_counter`` until its deadline."""

import threading
import time

import numpy as np
import pytest
from conftest import free_port
from test_step_rpcs import _as_if_remote

import flowgraph as tf
from flowgraph.distributed import replica_device_setter


class _FailsOnce(tf.train.GradientDescentOptimizer):
    """Gradient descent whose first update fails (an InvalidArgumentError inside the
    sync aggregation, after the counter was taken)."""

    def __init__(self, calls, learning_rate):
        super().__init__(learning_rate)
        self._calls = calls

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        seen = tf.assign_add(self._calls, 1)
        check = tf.Assert(tf.not_equal(seen, 1), ["injected failure of the update"])
        with tf.control_dependencies([check]):
            return super().apply_gradients(grads_and_vars, global_step, name)


def _model(cluster, replicas, start):
    """A linear model whose sync push fails once: (x, y, w, step, train, opt)."""
    step = tf.train.get_or_create_global_step()
    calls = tf.Variable(0, name="update_calls", trainable=False)
    x, y = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(start, name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    opt = tf.train.SyncReplicasOptimizer(_FailsOnce(calls, 0.1),
                                         replicas_to_aggregate=replicas,
                                         total_num_replicas=replicas)
    return x, y, w, step, loss, opt.minimize(loss, global_step=step), opt


def _grad(w, x, y):
    return 2.0 * x.T @ (x @ w - y) / len(x)


def _cluster(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    _as_if_remote(servers(cluster, "ps", 0))
    return cluster, servers(cluster, "worker", 0)


def test_after_a_failed_aggregation_the_next_push_aggregates_at_once(servers):
    cluster, worker = _cluster(servers)
    rng = np.random.RandomState(0)
    (xa, ya), (xb, yb) = [(rng.randn(4, 2).astype(np.float32),
                           rng.randn(4, 1).astype(np.float32)) for _ in range(2)]
    start = rng.randn(2, 1).astype(np.float32)
    with tf.Graph().as_default(), tf.device(replica_device_setter(
            cluster=cluster, worker_device="/job:worker/task:0")):
        x, y, w, step, _, train, opt = _model(cluster, 1, start)
        with tf.Session(worker.target) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.local_step_init_op)
            sess.run(opt.get_init_tokens_op(0))  # with the counter
            with pytest.raises(tf.errors.InvalidArgumentError, match="injected failure"):
                sess.run(train, {x: xa, y: ya})
            began = time.monotonic()
            sess.run(train, {x: xb, y: yb}, options=tf.RunOptions(timeout_in_ms=10_000))
            assert time.monotonic() - began < 5.0  # not held up until a deadline
            final_w, final_step = sess.run([w, step])
    # The failed push left nothing behind: one update, with the second batch's gradient.
    assert final_step == 1
    np.testing.assert_allclose(final_w, start - 0.1 * _grad(start, xb, yb), rtol=1e-5)


def test_a_waiting_replica_gets_its_token_from_the_retried_last_push(servers):
    """Two replicas: A's gradient is added and A waits; B's push, the last, fails in the
    update; B's retry aggregates A's gradient with its new one and both go on."""
    cluster, worker = _cluster(servers)
    rng = np.random.RandomState(1)
    (xa, ya), (xb, yb), (xc, yc) = [(rng.randn(4, 2).astype(np.float32),
                                     rng.randn(4, 1).astype(np.float32)) for _ in range(3)]
    start = rng.randn(2, 1).astype(np.float32)
    options = tf.RunOptions(timeout_in_ms=20_000)
    with tf.Graph().as_default(), tf.device(replica_device_setter(
            cluster=cluster, worker_device="/job:worker/task:0")):
        x, y, w, step, _, train, opt = _model(cluster, 2, start)
        with tf.Session(worker.target) as a, tf.Session(worker.target) as b:
            a.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            a.run(opt.local_step_init_op)
            a.run(opt.get_init_tokens_op(0))
            errors = []

            def push_a():
                try:
                    a.run(train, {x: xa, y: ya}, options=options)
                except Exception as e:  # reported below
                    errors.append(e)

            waiting = threading.Thread(target=push_a)
            waiting.start()
            with tf.device("/job:ps/task:0"):
                counter = tf.FIFOQueue(-1, [tf.int32], shapes=[[]],
                                       shared_name="sync_replicas_counter_q")
            size, deadline = counter.size(), time.monotonic() + 10
            acc = tf.get_default_graph().get_tensor_by_name(
                "sync_replicas/w/sync_accumulator:0")
            while not b.run(acc).any() or b.run(size) != 1:  # A's gradient is in
                assert time.monotonic() < deadline
                time.sleep(0.01)
            with pytest.raises(tf.errors.InvalidArgumentError, match="injected failure"):
                b.run(train, {x: xb, y: yb}, options=options)
            began = time.monotonic()
            b.run(train, {x: xc, y: yc}, options=options)
            waiting.join(timeout=10)
            assert not waiting.is_alive() and not errors, errors
            assert time.monotonic() - began < 5.0
            final_w, final_step = b.run([w, step])
    assert final_step == 1
    mean = (_grad(start, xa, ya) + _grad(start, xc, yc)) / 2
    np.testing.assert_allclose(final_w, start - 0.1 * mean, rtol=1e-5)


def test_a_tasks_stage_graph_finds_the_pushes_counter_and_skips_lookalikes():
    from flowgraph.distributed.sync_inline import CounterLock

    with tf.Graph().as_default() as g:
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2)
        opt.minimize(tf.reduce_sum(w * w), global_step=step)
        tf.placeholder_with_default(tf.constant(3), [], name="sync_push_id")  # a user's
        (lock,) = CounterLock.find(g)
    assert lock.queue_name == "sync_replicas_counter_q" and lock.container == ""
    assert lock.push_id.op.name == "sync_replicas/sync_push_id"
    assert lock.state.op.name == "sync_replicas/sync_lock_state"
