"""What one distributed step costs in calls: the planner's moves (NoOps and constants
beside their task), relays and delegated stages (master.py, step 5), in-process calls
to the session's own server, and step stores dropped without calls of their own."""

import gc
import time

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import replica_device_setter
from flowgraph.distributed.master import delegate, plan_run, relay_through_master
from flowgraph.distributed.rpc import TaskClient, register_in_process, to_grpc_address
from flowgraph.framework import errors
from flowgraph.ops import state_ops

WORKER = "/job:worker/replica:0/task:0"
PS = "/job:ps/replica:0/task:0"


def _cluster():
    return {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}


def _mlp(cluster, seed=0):
    """A small MLP trained by plain SGD with a global step, variables on the ps (with no
    `cluster`: unplaced, for a session of this process, which has no ps)."""
    rng = np.random.RandomState(seed)
    with tf.device(replica_device_setter(worker_device="/job:worker/task:0",
                                         cluster=cluster) if cluster else None):
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.int64, [None])
        w1 = tf.Variable(rng.randn(5, 7).astype(np.float32) * 0.3, name="w1")
        w2 = tf.Variable(rng.randn(7, 3).astype(np.float32) * 0.3, name="w2")
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, y, loss, train, step


def _batches(n=6):
    rng = np.random.RandomState(1)
    return [(rng.randn(8, 5).astype(np.float32), rng.randint(0, 3, 8)) for _ in range(n)]


def _as_if_remote(server):
    """Sessions of this process reach `server` through gRPC, as a ps of another process."""
    register_in_process(to_grpc_address(server.target), server._service, None, forget=True)
    return server


def _calls(server_target, method):
    status, _ = TaskClient(server_target, "t").call("GetStatus", {})
    return status["traffic"].get(method, (0, 0, 0))[0]


def test_a_training_step_has_three_stages_with_the_update_group_on_the_ps():
    cluster = {"ps": ["h:1"], "worker": ["h:2"]}
    with tf.Graph().as_default() as g:
        x, y, loss, train, step = _mlp(cluster)
        plan = plan_run(g, [loss, step], [train], {x: 1, y: 1}, WORKER, cluster)
    # ps (read) -> worker (forward, backward) -> ps (apply, update group, step += 1):
    # the NoOp grouping the updates and the learning rate run on the ps.
    assert [[s.task for s in level] for level in plan.levels] == [[PS], [WORKER], [PS]]
    last = {op.type for op in plan.levels[2][0].ops}
    assert {"NoOp", "AssignAdd", "Const", "ApplyGradientDescent"} <= last
    assert not plan.levels[2][0].recvs[0][1].startswith("GradientDescent/learning_rate")
    # From the worker's process: the worker's pull runs the read stage, the gradients go
    # with the apply stage's call; nothing is pulled from the worker.
    assert relay_through_master(plan, [WORKER]) == len(plan.levels[2][0].relays) > 0
    assert delegate(plan, [WORKER]) == 1
    assert [[s.task for s in level] for level in plan.levels] == [[WORKER], [PS]]
    (reads,) = plan.levels[0][0].delegated
    assert reads.task == PS and not plan.levels[1][0].recvs
    assert set(reads.returns) <= set(plan.levels[0][0].returns)  # the fetched step


def test_a_stage_another_stage_waits_for_keeps_its_own_call():
    """A remote stage is only handed to a local pull when nothing else orders after it."""
    cluster = {"ps": ["h:1"], "worker": ["h:2", "h:3"]}
    with tf.Graph().as_default() as g:
        with tf.device("/job:ps/task:0"):  # (not constants alone: those would move)
            a = tf.square(tf.random_uniform([]), name="a")
        with tf.device("/job:worker/task:1"), tf.control_dependencies([a]):
            other = tf.constant(1.0) + 1.0  # waits for `a` by a control edge only
        b = a + 1.0  # on the master's task, worker 0
        plan = plan_run(g, [b, other], [], {}, WORKER, cluster)
        assert delegate(plan, [WORKER]) == 0
        assert PS in [s.task for s in plan.levels[0]]
        plan = plan_run(g, [b], [], {}, WORKER, cluster)
        assert delegate(plan, [WORKER]) == 1


def test_steps_through_the_in_process_server_cost_one_ps_call_and_match_one_process(
        servers):
    """The first step pulls the variables and applies (two calls to the ps); every later
    one only applies, from the values the previous apply call read (prefetch.py)."""
    cluster = _cluster()
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    feeds = _batches()
    losses = {}
    for where in ["local", "cluster"]:
        with tf.Graph().as_default():
            x, y, loss, train, step = _mlp(cluster if where == "cluster" else None)
            target = worker.target if where == "cluster" else ""
            with tf.Session(target) as sess:
                sess.run(tf.global_variables_initializer())
                before = _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor")
                losses[where] = [sess.run([loss, train, step], {x: bx, y: by})
                                 for bx, by in feeds]
                if where == "cluster":
                    after = _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor")
                    assert after - before == len(feeds) + 1  # GetStatus is not counted
                    assert _calls(ps.target, "CleanupStep") == 0
                    status, _ = TaskClient(worker.target, "w").call("GetStatus", {})
                    assert set(status["traffic"]) <= {"GetStatus"}  # all in process
    np.testing.assert_allclose([v[0] for v in losses["cluster"]],
                               [v[0] for v in losses["local"]], rtol=1e-5)
    assert [int(v[2]) for v in losses["cluster"]] in ([0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6])


def test_step_stores_are_dropped_by_later_steps_and_by_close(servers):
    cluster = _cluster()
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        x, y, _, train, _ = _mlp(cluster)
        with tf.Session(worker.target) as sess:
            sess.run(tf.global_variables_initializer())
            for bx, by in _batches(20):
                sess.run(train, {x: bx, y: by})
            assert len(ps._service._steps) <= 2 and len(worker._service._steps) <= 2
        assert not ps._service._steps and not worker._service._steps


def test_errors_of_in_process_calls_name_the_task_and_keep_their_class(servers):
    cluster = _cluster()
    servers(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            bad = tf.debugging.check_numerics(tf.constant(float("nan")), "boom")
        with tf.Session(worker.target) as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"\[/job:worker/replica:0/task:0 \(localhost:\d+\)\]"
                                     ".*boom"):
                sess.run(bad)


def test_a_blocked_stage_handed_to_a_pull_ends_at_the_deadline_and_is_cancelled(servers):
    cluster = _cluster()
    _as_if_remote(servers(cluster, "ps", 0))
    worker = servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="q")
            take = queue.dequeue()
            put, size = queue.enqueue(4.0), queue.size()
        with tf.device("/job:worker/task:0"):
            doubled = take * 2.0  # the ps's dequeue stage is run by the worker's pull
        with tf.Session(worker.target) as sess:
            start = time.monotonic()
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(doubled, options=tf.RunOptions(timeout_in_ms=300))
            assert time.monotonic() - start < 5
            sess.run(put)  # the cancelled dequeue did not take it
            assert sess.run(doubled) == 8.0
            assert sess.run(size) == 0


def test_only_the_named_task_of_a_live_server_is_called_in_process():
    from flowgraph.distributed import Server

    address = f"localhost:{free_port()}"
    server = Server({"ps": [address]}, "ps", 0)
    ps = TaskClient(address, PS, in_process=True)
    assert ps.is_in_process()
    assert not TaskClient(address, WORKER, in_process=True).is_in_process()
    assert not TaskClient(address, PS).is_in_process()  # task-to-task pulls: gRPC
    del server  # dropped without stop(): the port may serve another task later
    gc.collect()
    assert not ps.is_in_process()


def test_a_constant_expression_read_on_the_ps_is_computed_there(servers):
    """An Estimator's global-step read falls back to the step's initial value
    (``tf.zeros([])``, a Fill of two constants): that expression runs beside the read on
    the ps, so the read joins the ps's first stage and the step keeps two ps calls; the
    read writes nothing, so later steps take their values from the apply call (one)."""
    cluster = _cluster()
    ps, worker = _as_if_remote(servers(cluster, "ps", 0)), servers(cluster, "worker", 0)
    with tf.Graph().as_default() as g:
        x, y, loss, train, step = _mlp(cluster)
        with tf.device("/job:worker/task:0"):
            fallback = tf.zeros([], tf.int64) + 5  # Fill, Const, Add: constants only
        with tf.device("/job:ps/task:0"):
            read = state_ops.read_variable_or_default(step, fallback)
        seen = read + 0  # on the worker
        plan = plan_run(g, [loss, seen], [train], {x: 1, y: 1}, WORKER, cluster)
        assert [[s.task for s in level] for level in plan.levels] == [[PS], [WORKER], [PS]]
        first = {op.name for op in plan.levels[0][0].ops}
        assert {fallback.op.name, read.op.name} <= first
        rng = np.random.RandomState(0)
        fed = {x: rng.randn(8, 5).astype(np.float32), y: rng.randint(0, 3, 8)}
        with tf.Session(worker.target) as sess:
            assert sess.run(seen) == 5  # not initialized yet: the fallback
            sess.run(tf.global_variables_initializer())
            before = _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor")
            for _ in range(3):
                _, got = sess.run([train, seen], fed)
            assert got == 2
            assert _calls(ps.target, "RunStage") + _calls(ps.target, "RecvTensor") \
                - before == 2 + 1 + 1
