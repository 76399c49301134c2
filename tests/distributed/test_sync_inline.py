"""Synchronous replicas whose pushes aggregate (`flowgraph.distributed.sync_inline`) and
whose step reads the next variables with its token (`flowgraph.distributed.sync_prefetch`):
one ps call per step, the counter put once, exactly `replicas_to_aggregate` fresh
gradients per global step with a backup worker."""

import doctest
import importlib
import threading

import numpy as np
import pytest
from conftest import free_port
from test_step_rpcs import _as_if_remote, _calls

import flowgraph as tf
from flowgraph.distributed import replica_device_setter


def _counter_size(sess) -> int:
    counter = tf.FIFOQueue(-1, [tf.int32], shapes=[[]], shared_name="sync_replicas_counter_q")
    return int(sess.run(counter.size()))


def test_the_counter_is_put_once_however_often_the_chief_starts():
    """Put with zeroed accumulators (a checkpoint may hold a partial sum); a recreated
    chief session puts no second counter and leaves the sums alone."""
    with tf.Graph().as_default() as g:
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, -1.0], name="w")
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2)
        opt.minimize(tf.reduce_sum(w * w), global_step=step)
        acc = g.get_tensor_by_name("sync_replicas/w/sync_accumulator:0")
        partial = tf.assign(acc, [5.0, 5.0])
        hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
        hook.begin()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(partial)  # as restored from a checkpoint
            hook.after_create_session(sess, None)
            np.testing.assert_allclose(sess.run(acc), [0.0, 0.0])
            sess.run(partial)  # a sum in progress
            for _ in range(2):  # e.g. a chief whose session was recreated
                hook.after_create_session(sess, None)
            sess.run(opt.get_init_tokens_op(2))
            assert _counter_size(sess) == 1
            np.testing.assert_allclose(sess.run(acc), [5.0, 5.0])
            assert hook._thread is None  # no chief loop


def test_a_step_is_one_ps_call_and_one_replica_matches_plain_sgd(servers):
    """With one replica, synchronous SGD is plain SGD: the same losses as one process.
    The first step pulls and pushes; every later one only pushes (two calls, then one)."""
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    rng = np.random.RandomState(0)
    feeds = [(rng.randn(8, 4).astype(np.float32), rng.randn(8, 1).astype(np.float32))
             for _ in range(5)]
    start = rng.randn(4, 1).astype(np.float32)
    losses = {}
    for sync in (False, True):
        # (the plain SGD runs in a session of this process: no ps devices there)
        with tf.Graph().as_default(), tf.device(replica_device_setter(
                cluster=cluster, worker_device="/job:worker/task:0") if sync else None):
            step = tf.train.get_or_create_global_step()
            x, y = tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.float32, [None, 1])
            w = tf.Variable(start, name=f"w{int(sync)}")
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            opt = tf.train.GradientDescentOptimizer(0.1)
            if sync:
                opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=1)
            train = opt.minimize(loss, global_step=step)
            with tf.Session(worker.target if sync else "") as sess:
                sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
                if sync:
                    sess.run(opt.local_step_init_op)
                    sess.run(opt.get_init_tokens_op(0))
                    before = _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor")
                losses[sync] = [sess.run([loss, train], {x: a, y: b})[0] for a, b in feeds]
                if sync:
                    after = _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor")
                    assert after - before == len(feeds) + 1
                    assert sess.run(step) == len(feeds)
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-5)


def _train_in_threads(servers, workers: int, n: int, steps: int, ps_tasks: int = 1):
    """`workers` in-process workers (threads, one `MonitoredTrainingSession` each) on ps
    tasks reached as other processes; worker i's gradient is the i-th unit vector and the
    learning rate 1, so ``-n * w`` counts the gradients of each worker that were
    aggregated. Returns (counts, pushes per worker, final global step)."""
    cluster = {"ps": [f"localhost:{free_port()}" for _ in range(ps_tasks)],
               "worker": [f"localhost:{free_port()}" for _ in range(workers)]}
    for k in range(ps_tasks):
        _as_if_remote(servers(cluster, "ps", k))
    tasks = [servers(cluster, "worker", i) for i in range(workers)]
    pushes, errors = [0] * workers, []
    ready = threading.Event()

    def model(i):
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.zeros([workers]), name="w")  # on ps 1 of 2: beside no step
        return step, w, tf.reduce_sum(w * np.eye(workers, dtype=np.float32)[i])

    def work(i):
        try:
            with tf.Graph().as_default(), tf.device(replica_device_setter(
                    cluster=cluster, worker_device=f"/job:worker/task:{i}")):
                step, _, loss = model(i)
                opt = tf.train.SyncReplicasOptimizer(
                    tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate=n,
                    total_num_replicas=workers)
                train = opt.minimize(loss, global_step=step)
                if i != 0:
                    ready.wait(30)
                hooks = [opt.make_session_run_hook(i == 0, num_tokens=0),
                         tf.train.StopAtStepHook(last_step=steps)]
                config = tf.ConfigProto(operation_timeout_in_ms=20_000)
                with tf.train.MonitoredTrainingSession(
                        master=tasks[i].target, is_chief=i == 0, hooks=hooks, config=config,
                        log_step_count_steps=None, save_summaries_steps=None,
                        save_checkpoint_secs=None) as sess:
                    ready.set()
                    while not sess.should_stop():
                        sess.run(train)
                        pushes[i] += 1
        except Exception as e:  # reported by the main thread
            errors.append(e)
            ready.set()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    with tf.Graph().as_default(), tf.device(replica_device_setter(cluster=cluster)):
        step, w, _ = model(0)
        with tf.Session(tasks[0].target) as sess:
            final_w, final_step = sess.run([w, step])
    counts = -n * final_w
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-5)
    return np.round(counts), pushes, int(final_step)


def test_with_a_backup_worker_every_global_step_applies_exactly_n_gradients(servers):
    """Three workers, two gradients per step: exactly two per global step (the push
    that completes a step aggregates it); the others, stale, are dropped."""
    counts, pushes, final_step = _train_in_threads(servers, workers=3, n=2, steps=12)
    assert final_step >= 12
    assert counts.sum() == 2 * final_step  # never more, never fewer
    assert all(c <= p for c, p in zip(counts, pushes)), (counts, pushes)


def test_on_two_ps_tasks_the_chief_loop_aggregates_every_gradient_once(servers):
    """The variable on another ps task than the global step: the chief's loop
    aggregates; with every worker aggregated, each gradient counts once per step."""
    counts, pushes, final_step = _train_in_threads(servers, workers=2, n=2, steps=10,
                                                   ps_tasks=2)
    assert final_step >= 10
    np.testing.assert_array_equal(counts, [final_step, final_step])
    assert all(p >= final_step for p in pushes), pushes


@pytest.mark.parametrize("ema", [False, True])
def test_one_replica_with_adam_and_averages_matches_the_wrapped_optimizer(ema):
    """Slots, Adam's beta powers and the moving averages are made inside the push's
    aggregation branch, yet behave as if made outside it."""
    results = []
    for sync in (False, True):
        with tf.Graph().as_default():
            step = tf.train.get_or_create_global_step()
            w = tf.Variable([1.0, -1.0])
            x = tf.placeholder(tf.float32, [2])
            loss = tf.reduce_sum(tf.square(w - x))
            averages = tf.train.ExponentialMovingAverage(0.5) if ema else None
            opt = tf.train.AdamOptimizer(0.1)
            if sync:
                opt = tf.train.SyncReplicasOptimizer(
                    opt, replicas_to_aggregate=1, variable_averages=averages,
                    variables_to_average=[w] if ema else None)
                train = opt.minimize(loss, global_step=step)
            else:
                train = opt.minimize(loss, global_step=step)
                if ema:
                    with tf.control_dependencies([train]):
                        train = averages.apply([w])
            with tf.Session() as sess:
                sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
                if sync:
                    sess.run(opt.local_step_init_op)
                    sess.run(opt.get_init_tokens_op(0))
                for target in ([3.0, 1.0], [0.0, 2.0], [1.0, 1.0]):
                    sess.run(train, {x: target})
                results.append(sess.run([w, step] + ([averages.average(w)] if ema else [])))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


class _Elaborate(tf.train.GradientDescentOptimizer):
    """Gradient descent whose update also counts its runs in a variable it creates from
    an op, and passes each gradient through a cond and a while loop."""

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        self.runs = tf.Variable(tf.zeros([], tf.int32), name="runs", trainable=False)
        counted = tf.assign_add(self.runs, 1)
        passed = []
        for g, v in grads_and_vars:
            g = tf.cond(tf.reduce_sum(g) > 1e9, lambda g=g: g * 0.0, lambda g=g: g)
            _, g = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x * 1.0), [0, g])
            passed.append((g, v))
        with tf.control_dependencies([counted]):
            return super().apply_gradients(passed, global_step, name)


def test_the_wrapped_update_runs_only_on_the_push_that_aggregates():
    """The update is gated by the push op's dead outputs (no Switch per tensor): ops it
    builds with side effects, conds, loops and variables made from ops inside behave as
    inside a tf.cond's branch, and initializing the variables runs no push."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, -1.0])
        x = tf.placeholder(tf.float32, [2])
        inner = _Elaborate(0.1)
        opt = tf.train.SyncReplicasOptimizer(inner, replicas_to_aggregate=2)
        train = opt.minimize(tf.reduce_sum(tf.square(w - x)), global_step=step)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.local_step_init_op)
            sess.run(opt.get_init_tokens_op(4))
            sess.run(train, {x: [3.0, 1.0]})
            assert sess.run([inner.runs, step]) == [0, 0]
            sess.run(train, {x: [0.0, 2.0]})
            assert sess.run([inner.runs, step]) == [1, 1]
            # mean gradient: 2 * (w - x) averaged over x = [3, 1] and [0, 2]
            np.testing.assert_allclose(sess.run(w), [1.1, -0.5], rtol=1e-6)


def test_a_worker_device_without_a_task_keeps_the_local_step_and_the_chief_loop():
    """A worker graph that cannot name its task keeps its local step on the worker (a
    shared name on the ps would mix workers) and aggregates through the chief's loop."""
    cluster = {"ps": ["h:1"], "worker": ["h:2", "h:3"]}
    with tf.Graph().as_default(), tf.device(replica_device_setter(
            cluster=cluster, worker_device="/job:worker")):
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        opt.minimize(tf.square(w), global_step=step)
    assert opt._local_step.device.startswith("/job:worker")
    assert opt._chief_sync_op is not None and opt._counter_init_op is None


@pytest.mark.parametrize("module", ["sync_inline", "sync_prefetch", "sync_replicas"])
def test_the_module_examples_run(module):
    found = doctest.testmod(importlib.import_module(f"flowgraph.distributed.{module}"),
                            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert found.failed == 0 and found.attempted > 0, found
