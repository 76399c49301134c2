"""TF1 between-graph replication programs run in one process: in-process servers on free
loopback ports, ``replica_device_setter`` placement, chief and non-chief threads,
``SyncReplicasOptimizer``, the cluster API and ``TF_CONFIG``. Every expected value below
is what TensorFlow 2.15's ``tf.compat.v1`` printed for the same program (tf-oracle)."""

import json
import os
import threading

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.framework import errors

_CONFIG = tf.ConfigProto(operation_timeout_in_ms=30000)


def _cluster(ps=1, worker=1):
    return tf.train.ClusterSpec({
        "ps": [f"localhost:{free_port()}" for _ in range(ps)],
        "worker": [f"localhost:{free_port()}" for _ in range(worker)]})


# -- placement (no servers) ------------------------------------------------------------------
def test_replica_device_setter_places_variables_slots_and_updates_on_the_ps_tasks():
    """Round robin over two ps tasks: a layer's kernel and bias alternate, Adam's slots
    follow their variable, beta powers and the global step stay on task 0, the updates
    run beside their variable and the compute on the worker."""
    cluster = tf.train.ClusterSpec({"ps": ["h:1", "h:2"], "worker": ["h:3"]})
    with tf.Graph().as_default() as g:
        with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                                      worker_device="/job:worker/task:0")):
            step = tf.train.get_or_create_global_step()
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="h")
            out = tf.layers.dense(h, 1, name="out")
            opt = tf.train.AdamOptimizer(0.01)
            train = opt.minimize(tf.reduce_mean(tf.square(out)), global_step=step)
        placed = {v.op.name: v.device for v in tf.global_variables()}
        ops = {op.name: op.device for op in g.get_operations()}
    ps0, ps1, worker = "/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:0"
    assert placed == {
        "global_step": ps0, "h/kernel": ps1, "h/bias": ps0, "out/kernel": ps1,
        "out/bias": ps0, "beta1_power": ps0, "beta2_power": ps0,
        "h/kernel/Adam": ps1, "h/kernel/Adam_1": ps1, "h/bias/Adam": ps0,
        "h/bias/Adam_1": ps0, "out/kernel/Adam": ps1, "out/kernel/Adam_1": ps1,
        "out/bias/Adam": ps0, "out/bias/Adam_1": ps0}
    assert ops["Adam/update_h/kernel/ApplyAdam"] == ps1
    assert ops["Adam/update_out/bias/ApplyAdam"] == ps0
    assert ops["x"] == ops["h/MatMul"] == ops["h/Relu"] == worker
    assert ops["gradients/h/MatMul_grad/MatMul_1"] == worker
    assert (train.type, train.device) == ("AssignAdd", ps0)


def test_replica_device_setter_options():
    """ps_tasks alone, custom job names, merge_devices, a tf.device inside, ps_ops."""
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            vs = [tf.Variable(tf.zeros([2]), name=f"v{i}") for i in range(5)]
            c = tf.constant(1.0, name="c")
        assert [v.device for v in vs] == [f"/job:ps/task:{i % 3}" for i in range(5)]
        assert c.device == "/job:worker"
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                ps_tasks=2, ps_device="/job:param", worker_device="/job:train/task:3")):
            a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
            s = a + b
        assert (a.device, b.device, s.device) == (
            "/job:param/task:0", "/job:param/task:1", "/job:train/task:3")
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                ps_tasks=2, merge_devices=False, worker_device="/job:worker/task:1")):
            with tf.device("/cpu:0"):
                a = tf.Variable(1.0, name="a")
                s = a * 2.0
            b = tf.Variable(1.0, name="b")
            t = b * 2.0
        assert (a.device, s.device, b.device, t.device) == (
            "/device:CPU:0", "/device:CPU:0", "/job:ps/task:0", "/job:worker/task:1")
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                ps_tasks=2, worker_device="/job:worker/task:1")):
            with tf.device("/cpu:0"):
                a = tf.Variable(1.0, name="a")
                s = a * 2.0
            with tf.device("/job:ps/task:1"):
                z = tf.constant(3.0) * 2.0
            b = tf.Variable(1.0, name="b")
        assert (a.device, s.device, z.device, b.device) == (
            "/job:ps/task:0/device:CPU:0", "/job:worker/task:1/device:CPU:0",
            "/job:ps/task:1", "/job:ps/task:1")
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                      ps_ops=["VariableV2", "Placeholder"])):
            p = tf.placeholder(tf.float32, name="p")
            v = tf.Variable(1.0)
        assert (p.device, v.device) == ("/job:ps/task:0", "/job:ps/task:1")
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter(cluster={"worker": ["a:1"]}) is None
    with pytest.raises(TypeError, match=r"^`cluster` must be a dictionary mapping"):
        tf.train.replica_device_setter(cluster=["ps"])


def test_a_fifo_queue_is_pinned_to_a_cpu_of_its_device_outside_control_dependencies():
    # FIFOQueue (only it among the queues) is made under tf.device("CPU") and init_scope
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, tf.float32)
        assert (q.queue_ref.device, q.enqueue(1.0).device) == ("/device:CPU:*", "")
        with tf.device("/job:ps/task:1"):
            queues = [tf.FIFOQueue(3, tf.float32, name="q1"),
                      tf.RandomShuffleQueue(3, 0, tf.float32, name="q2"),
                      tf.PaddingFIFOQueue(3, [tf.float32], shapes=[[None]], name="q3"),
                      tf.PriorityQueue(3, [tf.float32], shapes=[[]], name="q4")]
        assert [x.queue_ref.device for x in queues] == [
            "/job:ps/task:1/device:CPU:*", "/job:ps/task:1", "/job:ps/task:1",
            "/job:ps/task:1"]
        with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                      worker_device="/job:worker/task:0")):
            q5 = tf.FIFOQueue(3, tf.float32, name="q5")
            e5 = q5.enqueue(2.0)
        assert (q5.queue_ref.device, e5.device) == ("/job:worker/task:0/device:CPU:*",
                                                    "/job:worker/task:0")
        with tf.device("/job:worker/task:0/device:GPU:0"):
            assert tf.FIFOQueue(3, tf.float32).queue_ref.device == \
                "/job:worker/task:0/device:CPU:0"
        c = tf.constant(1.0)
        with tf.control_dependencies([c]):
            q7 = tf.FIFOQueue(3, tf.float32, name="q7")
            q8 = tf.RandomShuffleQueue(3, 0, tf.float32, name="q8")
        assert q7.queue_ref.op.control_inputs == []
        assert [i.name for i in q8.queue_ref.op.control_inputs] == ["Const"]
        with tf.Session() as sess:  # and it still works
            sess.run(q7.enqueue(4.0))
            assert sess.run(q7.dequeue()) == 4.0


# -- cluster API and TF_CONFIG ----------------------------------------------------------------
def test_cluster_spec_methods():
    cs = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"],
                               "worker": ["w0:2222", "w1:2222", "w2:2222"]})
    assert cs.jobs == ["ps", "worker"]
    assert (cs.num_tasks("worker"), cs.task_indices("ps")) == (3, [0, 1])
    assert cs.task_address("worker", 2) == "w2:2222"
    assert cs.job_tasks("ps") == ["ps0:2222", "ps1:2222"]
    assert tf.train.ClusterSpec(cs.as_cluster_def()).as_dict() == cs.as_dict()
    sparse = tf.train.ClusterSpec({"worker": {1: "w1:1", 3: "w3:1"}})
    assert sparse.as_dict() == {"worker": {1: "w1:1", 3: "w3:1"}}
    assert (sparse.task_indices("worker"), sparse.num_tasks("worker")) == ([1, 3], 2)
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'chief'"):
        cs.num_tasks("chief")
    with pytest.raises(ValueError, match=r"^No task with index 7 in job 'worker'"):
        cs.task_address("worker", 7)
    with pytest.raises(TypeError, match=r"^The tasks for job 'ps' must be a list or a dict"):
        tf.train.ClusterSpec({"ps": 3})
    assert not tf.train.ClusterSpec({})


def test_cluster_spec_keeps_the_job_order_it_was_given():
    cs = tf.train.ClusterSpec({"worker": ["w:1"], "ps": ["p:1"], "chief": ["c:1"]})
    assert cs.jobs == list(cs.as_dict()) == ["worker", "ps", "chief"]
    assert [j.name for j in cs.as_cluster_def().job] == ["chief", "ps", "worker"]
    assert repr(cs) == "ClusterSpec({'chief': ['c:1'], 'ps': ['p:1'], 'worker': ['w:1']})"
    assert tf.train.ClusterSpec(cs.as_cluster_def()).jobs == ["chief", "ps", "worker"]
    assert tf.train.ClusterSpec(cs) == cs
    # a ClusterDef's own order is kept, in its ClusterDef too
    cd = tf.train.ClusterDef(job=[tf.train.JobDef(name="worker", tasks={0: "w:1"}),
                                  tf.train.JobDef(name="ps", tasks={0: "p:1"})])
    from_def = tf.train.ClusterSpec(cd)
    assert from_def.jobs == list(from_def.as_dict()) == ["worker", "ps"]
    assert [j.name for j in from_def.as_cluster_def().job] == ["worker", "ps"]
    assert tf.train.ClusterSpec(from_def).jobs == ["worker", "ps"]


def test_tf_config_through_run_config_and_the_cluster_resolver(monkeypatch):
    cluster = {"chief": ["host0:2222"], "ps": ["host1:2222", "host2:2222"],
               "worker": ["host3:2222", "host4:2222"]}
    expected = {  # task_type, task_id, num_ps, num_workers, master, is_chief, global id
        ("chief", 0): ("chief", 0, 2, 3, "grpc://host0:2222", True, 0),
        ("worker", 1): ("worker", 1, 2, 3, "grpc://host4:2222", False, 2),
        ("ps", 1): ("ps", 1, 2, 3, "grpc://host2:2222", False, 4),
        ("evaluator", 0): ("evaluator", 0, 0, 0, "", False, None)}
    for (kind, index), want in expected.items():
        monkeypatch.setenv("TF_CONFIG", json.dumps(
            {"cluster": cluster, "task": {"type": kind, "index": index},
             "environment": "cloud"}))
        rc = tf.estimator.RunConfig()
        assert (rc.task_type, rc.task_id, rc.num_ps_replicas, rc.num_worker_replicas,
                rc.master, rc.is_chief, rc.global_id_in_cluster) == want
        r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        assert (r.task_type, r.task_id) == (kind, index)
        assert r.cluster_spec().as_dict()["worker"] == ["host3:2222", "host4:2222"]
        assert (r.rpc_layer, r.master("ps", 0)) == (None, "host1:2222")
        # TF's resolver ignores TF_CONFIG's "environment": only its argument counts
        assert r.environment is None
        if kind != "evaluator":
            assert r.master() == want[4][len("grpc://"):]
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'evaluator'"):
        r.master()
    assert tf.distribute.cluster_resolver.TFConfigClusterResolver(
        environment="google").environment == "google"


# -- in-process servers -----------------------------------------------------------------------
def test_server_without_task_index_for_a_job_not_in_the_cluster_is_a_value_error():
    cluster = tf.train.ClusterSpec({"worker": ["localhost:1", "localhost:2"]})
    # TF looks the job's tasks up first when task_index is left out ...
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'ps'"):
        tf.train.Server(cluster, job_name="ps", start=False)
    # ... and reports the server def's error when it is given
    with pytest.raises(errors.InternalError, match=r'^Job "ps" was not defined in cluster'):
        tf.train.Server(cluster, job_name="ps", task_index=0, start=False)


def test_grpc_session_devices_and_device_filters(servers):
    cluster = _cluster(ps=1, worker=2)
    ps = servers(cluster, "ps", 0)
    w0, w1 = servers(cluster, "worker", 0), servers(cluster, "worker", 1)
    del ps, w1
    names = ["/job:ps/replica:0/task:0/device:CPU:0",
             "/job:worker/replica:0/task:0/device:CPU:0",
             "/job:worker/replica:0/task:1/device:CPU:0"]
    with tf.Graph().as_default():
        with tf.Session(w0.target, config=_CONFIG) as sess:
            devices = sess.list_devices()
            assert sorted(d.name for d in devices) == names
            assert {d.device_type for d in devices} == {"CPU"}
            assert all(isinstance(d.incarnation, int) for d in devices)
        only = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"],
                              operation_timeout_in_ms=30000)
        with tf.Session(w0.target, config=only) as sess:
            assert sorted(d.name for d in sess.list_devices()) == [names[0], names[2]]
        with tf.device("/job:ps/task:0"):
            x = tf.constant(2.0) * 3.0
        with tf.device("/job:worker/task:0"):
            y = tf.constant(5.0) + 1.0
        mine = tf.ConfigProto(device_filters=["/job:worker/task:0"],
                              operation_timeout_in_ms=30000)
        with tf.Session(w0.target, config=mine) as sess:
            assert [d.name for d in sess.list_devices()] == [names[1]]
            assert sess.run(y) == 6.0
            # TF: "Cannot assign a device for operation mul: ... was explicitly assigned
            # to /job:ps/task:0 but available devices are [ /job:worker/... ]"
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"Cannot assign a device for operation"):
                sess.run(x)


def test_ps_ops_and_a_shared_queue_across_sessions(servers):
    cluster = _cluster(ps=1, worker=1)
    ps, worker = servers(cluster, "ps", 0), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.constant([1.0, 2.0, 3.0], name="a")
            s = tf.reduce_sum(a * a, name="s")
            q = tf.FIFOQueue(10, tf.float32, shapes=[[]], name="q", shared_name="shared_q")
            enq = q.enqueue_many([a])
            size = q.size()
        with tf.device("/job:worker/task:0"):
            t = s + q.dequeue()
        with tf.Session(worker.target, config=_CONFIG) as sess:
            sess.run(enq)
            assert sess.run(size) == 3
            assert sess.run(t) == 15.0
            assert [float(v) for v in sess.run([t, size])] == [16.0, 2.0]
        with tf.Session(ps.target, config=_CONFIG) as sess:
            assert sess.run(size) == 1
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            other = tf.FIFOQueue(10, tf.float32, shapes=[[]], name="other",
                                 shared_name="shared_q")
            deq = other.dequeue()
        with tf.Session(worker.target, config=_CONFIG) as sess:
            assert (sess.run(deq), sess.run(other.size())) == (3.0, 0)


def test_sync_replicas_train_op_is_the_local_step_assignment():
    """TF's `SyncReplicasOptimizer.apply_gradients` returns the tensor assigning the
    token to the local step: `sess.run(train)` gives the global step it was issued at."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5),
                                             replicas_to_aggregate=1, total_num_replicas=1)
        train = opt.minimize(tf.reduce_sum(w * w), global_step=step)
        assert isinstance(train, tf.Tensor)
        assert (train.dtype, train.get_shape().as_list()) == (tf.int64._as_ref, [])
        hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
        with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            outs = [sess.run(train) for _ in range(3)]
            assert [(o.dtype, int(o)) for o in outs] == [(np.int64, 1), (np.int64, 2),
                                                         (np.int64, 3)]
            assert sess.run(w).tolist() == [0.0, 0.0]
            assert sess.run(step) == 3
            assert int(sess.run({"t": train, "s": step})["t"]) == 4


def test_sync_replicas_two_worker_threads_match_numpy(servers):
    """ps + 2 workers, each a thread with its own graph and MonitoredTrainingSession;
    5 aggregated steps of the mean gradient (TF printed the same values)."""
    cluster = _cluster(ps=1, worker=2)
    servers(cluster, "ps", 0)
    workers = [servers(cluster, "worker", i) for i in range(2)]
    rs = np.random.RandomState(1)
    data = [rs.randn(8, 2).astype(np.float32) for _ in range(2)]
    out: dict = {}

    def work(i):
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(
                    cluster=cluster, worker_device=f"/job:worker/task:{i}")):
                step = tf.train.get_or_create_global_step()
                w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer(0.5))
                b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
                pred = tf.matmul(data[i], w) + b
                target = tf.reduce_sum(data[i], 1, keepdims=True)
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                                     replicas_to_aggregate=2,
                                                     total_num_replicas=2)
                train = opt.minimize(tf.reduce_mean(tf.square(pred - target)),
                                     global_step=step)
            hooks = [opt.make_session_run_hook(i == 0, num_tokens=0),
                     tf.train.StopAtStepHook(last_step=5)]
            n, last = 0, None
            with tf.train.MonitoredTrainingSession(
                    master=workers[i].target, is_chief=(i == 0), hooks=hooks,
                    config=_CONFIG, stop_grace_period_secs=5) as sess:
                while not sess.should_stop():
                    last = sess.run(train)
                    n += 1
            out[i] = (n, type(last).__name__)
            if i == 0:
                with tf.Session(workers[0].target, config=_CONFIG) as sess:
                    out["values"] = sess.run([w, b, step])

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert (out[0], out[1]) == ((5, "int64"), (5, "int64"))
    w, b, step = out["values"]
    np.testing.assert_allclose(w.ravel(), [0.6553, 0.6915], atol=1e-4)
    np.testing.assert_allclose(b, [-0.0402], atol=1e-4)
    assert step == 5


def test_monitored_training_session_chief_and_non_chief_threads(servers, tmp_path):
    cluster = _cluster(ps=1, worker=2)
    servers(cluster, "ps", 0)
    workers = [servers(cluster, "worker", i) for i in range(2)]
    rs = np.random.RandomState(0)
    xs = rs.randn(32, 3).astype(np.float32)
    ys = xs @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    counts: dict = {}

    def work(i):
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(
                    cluster=cluster, worker_device=f"/job:worker/task:{i}")):
                step = tf.train.get_or_create_global_step()
                w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
                loss = tf.reduce_mean(tf.square(tf.matmul(xs, w) - ys))
                train = tf.train.GradientDescentOptimizer(0.1).minimize(loss,
                                                                       global_step=step)
            n = 0
            with tf.train.MonitoredTrainingSession(
                    master=workers[i].target, is_chief=(i == 0),
                    checkpoint_dir=str(tmp_path) if i == 0 else None,
                    hooks=[tf.train.StopAtStepHook(last_step=40)], config=_CONFIG,
                    save_checkpoint_secs=None, save_checkpoint_steps=20,
                    save_summaries_steps=None, log_step_count_steps=None) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    n += 1
            counts[i] = n

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert sorted(counts) == [0, 1] and sum(counts.values()) >= 40
    # TF wrote model.ckpt-{0,20,40}: the steps between depend on how the two workers'
    # steps interleave, the files of each checkpoint do not
    files = sorted(f for f in os.listdir(tmp_path) if not f.startswith("events"))
    steps = sorted({int(f.split("-")[1].split(".")[0]) for f in files if "ckpt-" in f})
    assert steps[0] == 0 and steps[-1] >= 40
    assert files == sorted(["checkpoint", "graph.pbtxt"] + [
        f"model.ckpt-{s}.{ext}" for s in steps
        for ext in ("data-00000-of-00001", "index", "meta")])
    path = tf.train.latest_checkpoint(str(tmp_path))
    assert os.path.basename(path) == f"model.ckpt-{steps[-1]}"
    reader = tf.train.NewCheckpointReader(path)
    assert sorted(reader.get_variable_to_shape_map().items()) == [("global_step", []),
                                                                  ("w", [3, 1])]
    # TF: [1.0, -1.0, 2.0]; asynchronous steps interleave as the machine's load has them
    # (a stale gradient overshoots), so only on the way there
    target = np.array([1.0, -1.0, 2.0])
    assert np.linalg.norm(reader.get_tensor("w").ravel() - target) < 0.5 * np.linalg.norm(
        target)


def test_a_sharded_saver_writes_one_data_file_per_ps_task(servers, tmp_path):
    """``Saver(sharded=True)`` (MonitoredTrainingSession's default saver): one data
    shard per device of the variables, as TF's SaveV2 per device + MergeV2Checkpoints."""
    cluster = _cluster(ps=2, worker=1)
    servers(cluster, "ps", 0)
    servers(cluster, "ps", 1)
    worker = servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                                      worker_device="/job:worker/task:0")):
            step = tf.train.get_or_create_global_step()
            a = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="a")
            b = tf.Variable([7.0, 8.0], name="b")
            tf.Variable(5, name="c")
        saver = tf.train.Saver(sharded=True, max_to_keep=2)
        assert saver.saver_def.sharded
        with tf.Session(worker.target, config=_CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign_add(step, 7))
            path = saver.save(sess, str(tmp_path / "model"), global_step=step)
            assert os.path.basename(path) == "model-7"
            assert sorted(os.listdir(tmp_path)) == [
                "checkpoint", "model-7.data-00000-of-00002", "model-7.data-00001-of-00002",
                "model-7.index", "model-7.meta"]
            sess.run(b.assign([0.0, 0.0]))
            saver.restore(sess, path)
            assert sess.run(b).tolist() == [7.0, 8.0]
    reader = tf.train.NewCheckpointReader(path)
    assert sorted(reader.get_variable_to_shape_map().items()) == [
        ("a", [2, 3]), ("b", [2]), ("c", []), ("global_step", [])]
    np.testing.assert_array_equal(reader.get_tensor("a"), np.arange(6).reshape(2, 3))
    assert a.device == "/job:ps/task:1"


def test_a_non_chief_session_manager_waits_for_the_chief(servers):
    cluster = _cluster(ps=1, worker=2)
    servers(cluster, "ps", 0)
    workers = [servers(cluster, "worker", i) for i in range(2)]
    out: dict = {}

    def build(i):
        g = tf.Graph()
        with g.as_default(), tf.device(tf.train.replica_device_setter(
                cluster=cluster, worker_device=f"/job:worker/task:{i}")):
            v = tf.Variable([1.0, 2.0], name="v")
            local = tf.Variable(0.0, name="lv", collections=[tf.GraphKeys.LOCAL_VARIABLES])
            manager = tf.train.SessionManager(
                ready_op=tf.report_uninitialized_variables(),
                ready_for_local_init_op=tf.report_uninitialized_variables(
                    tf.global_variables()),
                local_init_op=tf.local_variables_initializer(), recovery_wait_secs=0.2)
            init = tf.global_variables_initializer()
        return g, v, local, manager, init

    def non_chief():
        g, v, local, manager, _ = build(1)
        with g.as_default():
            sess = manager.wait_for_session(workers[1].target, config=_CONFIG,
                                            max_wait_secs=30)
            out["non_chief"] = (sess.run(v).tolist(), float(sess.run(local)))

    def chief():
        g, v, _, manager, init = build(0)
        with g.as_default():
            sess = manager.prepare_session(workers[0].target, init_op=init, config=_CONFIG)
            out["chief"] = sess.run(v).tolist()

    waiting = threading.Thread(target=non_chief, daemon=True)
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive()  # nothing initialized yet
    starting = threading.Thread(target=chief, daemon=True)
    starting.start()
    for t in (starting, waiting):
        t.join(60)
    assert out == {"chief": [1.0, 2.0], "non_chief": ([1.0, 2.0], 0.0)}
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            tf.Variable(1.0, name="never_initialized")
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                          recovery_wait_secs=0.1)
        # TF formats the wait as a whole number of seconds
        with pytest.raises(errors.DeadlineExceededError,
                           match=r"^Session was not ready after waiting 0 secs\."):
            manager.wait_for_session(workers[1].target, config=_CONFIG, max_wait_secs=0.5)


def test_estimator_train_under_tf_config_places_variables_on_the_ps(servers, tmp_path,
                                                                     monkeypatch):
    """TF's Estimator makes a replica_device_setter from a RunConfig with ps tasks and
    trains on the chief's server (`RunConfig.master`)."""
    spec = {"chief": [f"localhost:{free_port()}"], "ps": [f"localhost:{free_port()}"]}
    servers(spec, "ps", 0)
    chief = servers(spec, "chief", 0)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": spec,
                                                "task": {"type": "chief", "index": 0}}))
    seen = {}

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        pred = tf.matmul(features["x"], w) + b
        loss = tf.losses.mean_squared_error(labels, pred)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        seen["devices"] = sorted((v.op.name, v.device) for v in tf.global_variables())
        seen["pred"] = pred.device
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    xs = np.random.RandomState(0).rand(16, 2).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0]], np.float32) + 0.5
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), session_config=_CONFIG,
                                    save_summary_steps=None, log_step_count_steps=None)
    assert (config.master, config.is_chief, config.num_ps_replicas) == (chief.target,
                                                                        True, 1)
    est = tf.estimator.Estimator(model_fn, config=config)
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": xs}, ys)).repeat().batch(16),
              steps=20)
    assert seen == {"devices": [("b", "/job:ps/task:0"), ("global_step", "/job:ps/task:0"),
                                ("w", "/job:ps/task:0")],
                    "pred": "/job:chief/task:0"}
    np.testing.assert_allclose(est.get_variable_value("w").ravel(), [0.734, 0.043],
                               atol=1e-3)
    assert est.get_variable_value("global_step") == 20
