"""tf.Session('grpc://...') against in-process servers: placement on tasks, variables
on a ps shared between workers' graphs, errors from tasks, unreachable peers."""

import time

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import ClusterSpec, Server, replica_device_setter
from flowgraph.distributed.master import plan_run
from flowgraph.distributed.remote_session import RemoteSession
from flowgraph.framework import errors


def _cluster(**jobs):
    return ClusterSpec({job: [f"localhost:{free_port()}" for _ in range(n)]
                        for job, n in jobs.items()})


def test_cluster_spec_api():
    spec = ClusterSpec({"ps": ["a:1"], "worker": {0: "b:1", 2: "c:1"}})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2 and spec.task_indices("worker") == [0, 2]
    assert spec.job_tasks("worker") == ["b:1", None, "c:1"]
    assert spec.task_address("ps", 0) == "a:1"
    assert spec.as_dict() == {"ps": ["a:1"], "worker": {0: "b:1", 2: "c:1"}}
    assert ClusterSpec(spec) == spec and spec == spec.as_dict()
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="'host:port'"):
        ClusterSpec({"ps": ["nohostport"]})


def test_local_server_runs_a_graph_with_feeds():
    server = Server.create_local_server()
    try:
        assert server.target.startswith("grpc://localhost:")
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.reduce_sum(x * 3.0, axis=1)
        with tf.Session(server.target) as sess:
            assert isinstance(sess, RemoteSession) and isinstance(sess, tf.Session)
            np.testing.assert_allclose(sess.run(y, {x: [[1, 2], [3, 4]]}), [9, 21])
            out = sess.run({"y": y, "x": x}, {x: np.ones((1, 2))})
            np.testing.assert_allclose(out["x"], [[1, 1]])
            words = tf.constant(["ab", "c"])
            assert sess.run(words).tolist() == [b"ab", b"c"]
    finally:
        server.stop()


def test_variables_live_on_the_server_across_sessions():
    server = Server.create_local_server()
    try:
        v = tf.Variable(1.0, name="v")
        bump = v.assign_add(2.0)
        with tf.Session(server.target) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(bump)
        with tf.Session(server.target) as sess:  # a new client sees the server's state
            assert sess.run(v) == 3.0
            assert sess.run(tf.report_uninitialized_variables()).tolist() == []
    finally:
        server.stop()


def test_task_errors_come_back_with_their_class_and_task_name():
    server = Server.create_local_server()
    try:
        x = tf.placeholder(tf.float32, [2], name="needs_feed")
        with tf.Session(server.target) as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"\[/job:localhost/replica:0/task:0 .*needs_feed"):
                sess.run(x + 1.0)
            with pytest.raises(ValueError, match="Cannot feed value of shape"):
                sess.run(x, {x: np.zeros(3)})
    finally:
        server.stop()


def test_ops_are_placed_on_tasks_and_cut_into_stages():
    cluster = {"ps": ["h:1"], "worker": ["h:2", "h:3"]}
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(2.0, name="v")
    with tf.device("/job:worker/task:1"):
        doubled = v * 2.0
    total = doubled + 1.0  # no device: the master's task
    plan = plan_run(tf.get_default_graph(), [total], [], {},
                    "/job:worker/replica:0/task:0", cluster)
    where = {op.name: (s.level, s.task) for s in plan.stages for op in s.ops}
    assert where["v"] == (0, "/job:ps/replica:0/task:0")
    assert where[doubled.op.name] == (1, "/job:worker/replica:0/task:1")
    assert where[total.op.name] == (2, "/job:worker/replica:0/task:0")
    assert [len(level) for level in plan.levels] == [1, 1, 1]  # constants join readers
    (middle,) = plan.levels[1]
    assert [r[1:] for r in middle.recvs] == [["v/read:0", "/job:ps/replica:0/task:0"]]
    with tf.device("/job:ps/task:7"):
        bad = tf.constant(1.0, name="bad")
    with pytest.raises(errors.InvalidArgumentError, match=r"'bad'.*/job:ps/task:7"):
        plan_run(tf.get_default_graph(), [bad], [], {}, "/job:worker/replica:0/task:0",
                 cluster)


def test_replica_device_setter_round_robin_and_merge():
    with tf.device(replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:3")):
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(1.0, name="b")
        c = tf.Variable(1.0, name="c")
        with tf.device("/job:ps/task:1"):
            pinned = tf.Variable(1.0, name="pinned")
        y = a + b
    assert [v.op.device for v in (a, b, c)] == [
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert pinned.op.device == "/job:ps/task:1"
    assert y.op.device == "/job:worker/task:3"
    assert replica_device_setter(cluster={"worker": ["h:1"]}) is None
    setter = replica_device_setter(cluster={"ps": ["h:1", "h:2", "h:3"], "worker": ["h:4"]},
                                   ps_strategy=lambda op: 2)
    with tf.Graph().as_default(), tf.device(setter):
        assert tf.Variable(1.0).op.device == "/job:ps/task:2"


def _linear_model(cluster, task):
    graph = tf.Graph()
    with graph.as_default(), tf.device(replica_device_setter(
            worker_device=f"/job:worker/task:{task}", cluster=cluster)):
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.MomentumOptimizer(0.1, 0.5).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    return graph, x, y, loss, train, init, step


def test_two_workers_share_variables_on_the_ps(servers):
    cluster = _cluster(ps=1, worker=2)
    ps = servers(cluster, "ps", 0)
    workers = [servers(cluster, "worker", i) for i in range(2)]
    xs = np.random.RandomState(0).randn(32, 2).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0]], np.float32)
    models = [_linear_model(cluster, i) for i in range(2)]
    sessions = [tf.Session(w.target, graph=m[0]) for w, m in zip(workers, models)]
    sessions[0].run(models[0][5])
    for _ in range(40):  # the workers take turns: one shared w, one global step
        for sess, (_, x, y, _, train, _, _) in zip(sessions, models):
            sess.run(train, {x: xs, y: ys})
    _, x, y, loss, _, _, step = models[1]
    assert sessions[1].run(step) == 80
    assert sessions[1].run(loss, {x: xs, y: ys}) < 1e-4
    assert ps.target != workers[0].target
    for sess in sessions:
        sess.close()


def test_unreachable_task_is_unavailable_quickly(servers):
    cluster = _cluster(worker=2)  # nothing listens on worker 1's port
    worker = servers(cluster, "worker", 0)
    with tf.device("/job:worker/task:1"):
        y = tf.constant(1.0) + 1.0
    # (a task not up yet is waited for until the operation deadline, as TF's session
    # creation waits: tests/distributed/test_start_wait.py)
    config = tf.ConfigProto(operation_timeout_in_ms=500)
    start = time.monotonic()
    with tf.Session(worker.target, config=config) as sess:
        with pytest.raises(errors.UnavailableError, match="/job:worker/replica:0/task:1"):
            sess.run(y)
    assert time.monotonic() - start < 10
    with pytest.raises(errors.UnavailableError, match="unavailable"):
        tf.Session(f"grpc://localhost:{free_port()}", config=config)


def test_server_arguments_are_checked():
    cluster = _cluster(ps=1, worker=2)
    # TF 2.15's types and first words (tf-oracle), then flowgraph's details
    with pytest.raises(ValueError, match=r"^Must specify an explicit `job_name`.*pass job_name"):
        Server(cluster, start=False)
    with pytest.raises(ValueError, match=r"^Must specify an explicit `task_index`"):
        Server(cluster, "worker", start=False)
    with pytest.raises(errors.InternalError, match='Job "chief" was not defined in cluster'):
        Server(cluster, "chief", 0, start=False)
    with pytest.raises(errors.InternalError, match='Task 5 was not defined in job "worker"'):
        Server(cluster, "worker", 5, start=False)
    with pytest.raises(errors.NotFoundError, match=r"No server factory registered.*protocol"):
        Server(cluster, "ps", 0, protocol="grpc+verbs", start=False)
    with pytest.raises(TypeError, match=r"Could not convert `server_or_cluster_def`"):
        Server("worker", start=False)
    with pytest.raises(errors.UnimplementedError, match=r"only tf\.Session"):
        tf.InteractiveSession("grpc://localhost:1")


def test_a_blocked_stage_ends_at_the_run_deadline():
    server = Server.create_local_server()
    try:
        queue = tf.FIFOQueue(4, tf.float32)
        take = queue.dequeue()  # nothing was enqueued: blocks
        with tf.Session(server.target) as sess:
            start = time.monotonic()
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(take, options=tf.RunOptions(timeout_in_ms=300))
            assert time.monotonic() - start < 5
            sess.run(queue.enqueue(7.0))  # the task is still serving
            assert sess.run(take) == 7.0
    finally:
        server.stop()


def test_monitored_training_session_checkpoints_ps_variables(servers, tmp_path):
    cluster = _cluster(ps=1, worker=1)
    ps = servers(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    xs = np.random.RandomState(1).randn(16, 2).astype(np.float32)
    ys = xs @ np.array([[1.0], [3.0]], np.float32)

    def train(last_step):
        graph, x, y, _, train_op, _, step = _linear_model(cluster, 0)
        with graph.as_default(), tf.train.MonitoredTrainingSession(
                master=worker.target, is_chief=True, checkpoint_dir=str(tmp_path),
                save_checkpoint_steps=10, log_step_count_steps=None,
                hooks=[tf.train.StopAtStepHook(last_step=last_step)]) as sess:
            first = None
            while not sess.should_stop():
                _, done = sess.run([train_op, step], {x: xs, y: ys})
                first = done if first is None else first
        return first

    assert train(10) == 0
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-10")
    ps.stop()  # a new ps on the same address starts with no variables
    servers(cluster, "ps", 0)
    assert train(20) == 10  # the chief restored its checkpoint into the new ps


def test_a_second_server_on_a_taken_address_is_unavailable(servers):
    cluster = _cluster(worker=1)
    servers(cluster, "worker", 0)
    with pytest.raises(errors.UnavailableError, match="could not bind"):
        Server(cluster, "worker", 0)


def test_report_uninitialized_variables_over_two_ps_tasks_and_the_worker(servers):
    cluster = _cluster(ps=2, worker=1)
    for job, n in [("ps", 2), ("worker", 1)]:
        for i in range(n):
            servers(cluster, job, i)
    with tf.device(replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
        a = tf.Variable(1.0, name="a")  # ps 0
        b = tf.Variable(2.0, name="b")  # ps 1
    with tf.device("/job:worker/task:0"):
        c = tf.Variable(3.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    report = tf.report_uninitialized_variables()  # the default ready_op of a Scaffold
    with tf.Session("grpc://" + cluster.task_address("worker", 0)) as sess:
        assert sess.run(report).tolist() == [b"a", b"b", b"c"]
        sess.run(b.initializer)
        assert sess.run(report).tolist() == [b"a", b"c"]
        sess.run([a.initializer, c.initializer])
        out = sess.run({"left": report, "sum": a + b + c})
        assert out["left"].shape == (0,) and out["sum"] == 6.0


def test_a_failing_stage_cancels_the_blocked_stages_of_its_step(servers):
    cluster = _cluster(ps=1, worker=1)
    servers(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.device("/job:ps/task:0"):
        bad = tf.debugging.check_numerics(tf.constant(float("nan")), "boom")
    with tf.device("/job:worker/task:0"):
        queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]], shared_name="q")
        waiting = queue.dequeue()  # blocks: nothing is ever enqueued before the failure
    config = tf.ConfigProto(operation_timeout_in_ms=30000)
    with tf.Session(worker.target, config=config) as sess:
        start = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError, match="boom"):
            sess.run([bad, waiting])
        assert time.monotonic() - start < 5  # not the 30 s deadline of the dequeue
        # The cancelled dequeue is gone: it does not take the next element.
        sess.run(queue.enqueue(1.0))
        assert sess.run(queue.size()) == 1


def test_tensors_above_the_grpc_message_limit_travel_in_chunks(servers):
    from flowgraph.distributed import rpc

    cluster = _cluster(ps=1, worker=1)
    servers(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    n = 3 * rpc.MAX_MESSAGE_BYTES // 4 + 12345  # 3x the limit in float32, odd-sized chunks
    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.float32, [n])
        y = x * 2.0                     # the feed goes to the ps as a request stream
    with tf.device("/job:worker/task:0"):
        z = y + 1.0                     # the worker pulls y (a streamed reply)
    data = np.random.RandomState(0).rand(n).astype(np.float32)
    with tf.Session(worker.target) as sess:
        out_y, out_z = sess.run([y, z], {x: data})  # both return as streamed replies
    np.testing.assert_array_equal(out_y, data * 2.0)
    np.testing.assert_array_equal(out_z, data * 2.0 + 1.0)
    assert [len(c) for c in rpc.chunks(b"abcde", 2)] == [2, 2, 1]
    assert list(rpc.chunks(b"", 2)) == [b""]


def test_greedy_load_balancing_puts_each_variable_on_the_least_loaded_ps():
    from flowgraph.distributed import GreedyLoadBalancingStrategy, byte_size_load_fn

    strategy = GreedyLoadBalancingStrategy(3, byte_size_load_fn)
    with tf.device(replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
        sizes = [400, 100, 100, 100, 50, 300]
        variables = [tf.Variable(tf.zeros([n]), name=f"v{i}") for i, n in enumerate(sizes)]
    # float32 bytes 1600, 400, 400 fill tasks 0, 1, 2; then 400 -> 1 (tie: lowest), 200 -> 2
    # (600 < 800), 1200 -> 2 (1200 < 1600)
    assert [v.op.device[-1] for v in variables] == ["0", "1", "2", "1", "2", "2"]
    assert byte_size_load_fn(variables[0].op) == 1600
    with pytest.raises(ValueError, match="num_tasks must be >= 1"):
        GreedyLoadBalancingStrategy(0)


def test_a_long_stage_that_cannot_block_ends_at_the_run_deadline():
    """A stage that cannot block runs without RunOptions: the task's one alarm cancels it
    at its deadline, also when an earlier run set the alarm for a later one."""
    server = Server.create_local_server()
    try:
        with tf.Graph().as_default():
            n = tf.placeholder(tf.int32, [])
            x = y = tf.fill(tf.stack([n, n]), 0.0)
            for _ in range(12):  # n = 1500: ~7 GFLOP each, cancelled between them
                y = tf.matmul(y, x)
            total = tf.reduce_sum(y)
            with tf.Session(server.target) as sess:
                long = tf.RunOptions(timeout_in_ms=60_000)
                assert sess.run(total, {n: 3}, options=long) == 0.0  # the alarm: in 60 s
                start = time.monotonic()
                with pytest.raises(errors.DeadlineExceededError,
                                   match="Timed out after 100 ms"):
                    sess.run(total, {n: 1500}, options=tf.RunOptions(timeout_in_ms=100))
                assert time.monotonic() - start < 5
                assert sess.run(total, {n: 2}, options=long) == 0.0
                service = server._service
                assert service._alarm_at is not None and not service._running
    finally:
        server.stop()
