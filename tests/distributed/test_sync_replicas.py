"""`tf.train.SyncReplicasOptimizer`: in one process, and as ps + chief + worker processes
where the global step advances once per aggregation of both workers' gradients."""

import threading

import numpy as np
import pytest
from conftest import free_port
from test_cluster_processes import _run_ps_chief_and_worker

import flowgraph as tf


def _reference(steps: int, seeds, lr: float = 0.1):
    """Plain gradient descent on the mean of the workers' batch losses (NumPy)."""
    from sync_task import batch

    w, b = np.zeros((3, 1)), np.zeros(1)
    for _ in range(steps):
        gw, gb = np.zeros_like(w), np.zeros_like(b)
        for seed in seeds:
            x, y = (a.astype(np.float64) for a in batch(seed))
            r = x @ w + b - y
            gw += 2 * x.T @ r / len(x) / len(seeds)
            gb += 2 * r.mean(0) / len(seeds)
        w, b = w - lr * gw, b - lr * gb
    return w.ravel(), b


def _model(opt_replicas, total=None):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable([1.0, -1.0], name="w")
    x = tf.placeholder(tf.float32, [2])
    loss = tf.reduce_sum(tf.square(w - x))
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.25),
                                         replicas_to_aggregate=opt_replicas,
                                         total_num_replicas=total)
    return step, w, x, opt, opt.minimize(loss, global_step=step)


def test_apply_gradients_needs_a_global_step_and_the_hook_needs_apply_gradients():
    with tf.Graph().as_default():
        w = tf.Variable(1.0)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        assert isinstance(opt, tf.train.Optimizer)
        with pytest.raises(ValueError, match="Global step is required"):
            opt.apply_gradients([(tf.constant(1.0), w)])
        hook = opt.make_session_run_hook(is_chief=True)
        assert isinstance(hook, tf.train.SessionRunHook)
        with pytest.raises(ValueError, match="apply_gradients should be called"):
            hook.begin()


def test_two_replicas_in_threads_average_their_gradients_once_per_global_step():
    # Two "workers" share one local session: each step's update is the mean of the
    # gradients at x = a and x = b, so w moves towards (a + b) / 2.
    with tf.Graph().as_default():
        step, w, x, opt, train = _model(2)
        hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
        hook.begin()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            hook.after_create_session(sess, None)
            feeds = [np.array([3.0, 1.0], np.float32), np.array([1.0, 3.0], np.float32)]
            threads = [threading.Thread(
                target=lambda f=f: [sess.run(train, {x: f}) for _ in range(5)])
                for f in feeds]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=30)
            assert not any(t.is_alive() for t in threads)
            hook.end(sess)
            value, global_step = sess.run([w, step])
    expected = np.array([1.0, -1.0])
    for _ in range(5):  # grad of the mean loss: 2 (w - 2); lr 0.25
        expected = expected - 0.25 * 2 * (expected - 2.0)
    assert global_step == 5
    np.testing.assert_allclose(value, expected, rtol=1e-6)


def test_a_stale_gradient_is_dropped():
    with tf.Graph().as_default():
        step, w, x, opt, train = _model(1)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.local_step_init_op)
            sess.run(opt.get_init_tokens_op(1))  # one step without waiting
            # Fresh at step 0: the only gradient needed, aggregated in this run (step 1);
            # the worker then takes the initial token, so its local step stays 0.
            sess.run(train, {x: [0.0, 0.0]})
            np.testing.assert_allclose(sess.run(w), [0.5, -0.5])
            assert sess.run(step) == 1
            # Local step 0 < global step 1: stale, dropped; the token the aggregation
            # issued lets it go on at step 1.
            sess.run(train, {x: [9.0, 9.0]})
            np.testing.assert_allclose(sess.run(w), [0.5, -0.5])
            assert sess.run(step) == 1
            sess.run(train, {x: [0.0, 0.0]})  # fresh again
            np.testing.assert_allclose(sess.run(w), [0.25, -0.25])
            assert sess.run(step) == 2


def test_chief_and_worker_processes_train_synchronously_like_one_process():
    steps = 15
    results = _run_ps_chief_and_worker("sync_task.py", steps)
    w, b = _reference(steps, [0, 100])
    for result in results:
        assert result["global_step"] == steps, result  # one step per aggregation
        assert result["my_steps"] == steps, result     # each worker: one gradient a step
        np.testing.assert_allclose(result["w"], w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(result["b"], b, rtol=1e-4, atol=1e-5)


def _replicated(cluster, ps_tasks=None, replicas=2):
    from flowgraph.distributed import replica_device_setter

    with tf.device(replica_device_setter(ps_tasks=ps_tasks, cluster=cluster,
                                         worker_device="/job:worker/task:0")):
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.zeros([4, 3]), name="w")
        b = tf.Variable(tf.zeros([3]), name="b")
        x = tf.placeholder(tf.float32, [None, 4])
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=replicas)
        train = opt.minimize(tf.reduce_sum(tf.matmul(x, w) + b), global_step=step)
    return step, x, opt, train


def test_with_one_ps_a_worker_step_is_one_ps_call_that_also_aggregates():
    """Read (ps) -> gradients (worker) -> push (ps): the push holds the staleness check,
    the aggregation and the token; its call brings the next step's variables back."""
    from flowgraph.distributed.master import delegate, plan_run, relay_through_master
    from flowgraph.distributed.prefetch import plan_prefetch
    from flowgraph.distributed.sync_prefetch import SyncPrefetch, sync_aware

    cluster = {"ps": ["h:1"], "worker": ["h:2", "h:3"]}
    worker = "/job:worker/replica:0/task:0"
    with tf.Graph().as_default() as g:
        step, x, opt, train = _replicated(cluster)
        assert opt._chief_sync_op is None  # no chief loop
        assert opt._local_step.device == step.device  # beside the global step
        assert opt._local_step.op.name.endswith("local_step_worker_0")
        plan = plan_run(g, [], [train.op], {x: 1}, worker, cluster)
        assert [[s.task for s in level] for level in plan.levels] == [
            ["/job:ps/replica:0/task:0"], [worker], ["/job:ps/replica:0/task:0"]]
        push = [op.type for op in plan.levels[2][0].ops]
        assert {"ApplyGradientDescent", "QueueDequeueV2", "SyncReplicasPush",
                "SyncReplicasFinish", "Merge"} <= set(push)
        # One push op and the update gated by its dead outputs: no Switch per tensor
        # (the two conds it replaced made 74 ops for these two variables).
        assert not {"Switch", "RefSwitch"} & set(push)
        assert len(push) <= 25, sorted(push)
        assert all(op.type != "VariableV2" for op in plan.levels[1][0].ops)
        relay_through_master(plan, [worker])
        delegate(plan, [worker])
        assert isinstance(sync_aware(plan_prefetch(plan, [worker])), SyncPrefetch)


def test_with_several_ps_tasks_the_chief_update_reads_each_accumulator_on_its_task():
    """State on two ps tasks: the chief's loop op aggregates; each accumulator is read,
    applied and zeroed beside its variable (no zeros nor sums cross tasks)."""
    from flowgraph.distributed.master import plan_run

    cluster = {"ps": ["h:1", "h:4"], "worker": ["h:2", "h:3"]}
    with tf.Graph().as_default() as g:
        _, _, opt, _ = _replicated(cluster, ps_tasks=2)
        assert opt._counter_init_op is None and opt._chief_sync_op is not None
        plan = plan_run(g, [], [opt._chief_sync_op], {}, "/job:worker/replica:0/task:0",
                        cluster)
        for stage in plan.stages:  # the worker only groups (NoOp) and holds the rate
            if stage.task.startswith("/job:worker"):
                assert {op.type for op in stage.ops} <= {"NoOp", "Const"}, stage.ops


def test_the_chief_loop_waits_and_updates_in_one_run_whose_wait_alone_times_out(servers):
    """The dequeue's own `timeout_ms` bounds only the wait: without gradients the run
    fails after it and changes nothing; with them, one run applies the mean."""

    cluster = {"ps": [f"localhost:{free_port()}", f"localhost:{free_port()}"],
               "worker": [f"localhost:{free_port()}"]}
    servers(cluster, "ps", 0), servers(cluster, "ps", 1)
    worker = servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        step, x, opt, train = _replicated(cluster, ps_tasks=2, replicas=1)
        with tf.Session(worker.target) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.local_step_init_op)
            sess.run(opt.get_init_tokens_op(1))
            with pytest.raises(tf.errors.DeadlineExceededError, match="timeout_ms attr"):
                sess.run(opt._chief_sync_op)
            assert sess.run(step) == 0
            sess.run(train, {x: np.ones([2, 4], np.float32)})
            sess.run(opt._chief_sync_op)
            assert sess.run(step) == 1
            np.testing.assert_allclose(sess.run("b:0"), [-0.2, -0.2, -0.2])


def test_a_dequeue_timeout_attr_bounds_the_wait_of_that_op_only():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
        take = q._dequeue_op("QueueDequeueManyV2", 2, "take", "DequeueMany", timeout_ms=100)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DeadlineExceededError, match="100 ms"):
                sess.run(take)
            sess.run(q.enqueue_many([[1.0, 2.0, 3.0]]))
            assert sess.run(q.size()) == 3  # the timed-out wait took nothing
            sess.run(take)
            assert sess.run(q.size()) == 1
