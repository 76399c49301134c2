"""Traced steps on ``grpc://`` sessions (flowgraph/distributed/trace.py): every task's
step stats and partition graphs come back in the caller's RunMetadata, under the
cluster's device names, as TensorFlow 2.15's master returns them (tf-oracle: the same
devices, the same op names and partition-graph devices for the program below)."""

import json
import subprocess
import sys

import numpy as np
from conftest import free_port

import flowgraph as tf
from flowgraph.python.client import timeline

PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


def _cluster(servers):
    cluster = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"],
                                    "worker": [f"localhost:{free_port()}"]})
    servers(cluster, "ps", 0)
    return cluster, servers(cluster, "worker", 0)


def test_full_trace_gathers_every_tasks_step_stats_and_partition_graphs(servers):
    _, worker = _cluster(servers)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.ones([3, 3]), name="w")
        with tf.device("/job:worker/task:0"):
            y = tf.matmul(w, w, name="prod") + 1.0
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                             output_partition_graphs=True)
        md = tf.RunMetadata()
        with tf.Session(worker.target) as sess:
            sess.run(w.initializer)
            assert sess.run(y, options=opts, run_metadata=md).sum() == 36.0
            plain = tf.RunMetadata()
            sess.run(y, run_metadata=plain)  # nothing asked: nothing filled
    by_device = {}
    for dev in md.step_stats.dev_stats:
        by_device.setdefault(dev.device, set()).update(n.node_name for n in dev.node_stats)
    assert sorted(by_device) == [PS, WORKER]
    assert {"w", "w/read"} <= by_device[PS] and {"prod", "add"} <= by_device[WORKER]
    assert all(n.all_start_micros > 0 for d in md.step_stats.dev_stats for n in d.node_stats)
    devices = {node["device"] for graph in md.partition_graphs for node in graph["node"]}
    assert devices == {PS, WORKER}
    assert not plain.step_stats.dev_stats and not plain.partition_graphs
    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    processes = {e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M"}
    assert any(PS in p for p in processes) and any(WORKER in p for p in processes)


def test_a_traced_step_between_prefetched_steps_keeps_training_exact(servers):
    cluster, worker = _cluster(servers)
    x = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                cluster=cluster, worker_device="/job:worker/task:0")):
            w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
            loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(x), w)))
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        opts = tf.RunOptions(trace_level=tf.RunOptions.SOFTWARE_TRACE)
        with tf.Session(worker.target) as sess:
            sess.run(tf.global_variables_initializer())
            traced = []
            for step in range(6):
                md = tf.RunMetadata()
                if step in (2, 4):
                    sess.run(train, options=opts, run_metadata=md)
                    traced.append(sorted({d.device for d in md.step_stats.dev_stats}))
                else:
                    sess.run(train)
            got = sess.run(w)
    want = np.ones((2, 1), np.float32)
    for _ in range(6):
        want = want - np.float32(0.01) * (2 * x.T @ (x @ want))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert traced == [[PS, WORKER], [PS, WORKER]]


def test_traced_step_across_processes(tmp_path):
    """The ps in another process: its stats travel over the wire (base64 in the reply)."""
    ps_port, worker_port = free_port(), free_port()
    spec = {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    ps = subprocess.Popen([sys.executable, "-c", (
        "import flowgraph as tf, sys\n"
        f"s = tf.train.Server(tf.train.ClusterSpec({spec!r}), 'ps', 0)\n"
        "print('up', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert ps.stdout.readline().strip() == "up"
        with tf.Graph().as_default():
            cluster = tf.train.ClusterSpec(spec)
            worker = tf.train.Server(cluster, "worker", 0)
            with tf.device("/job:ps/task:0"):
                v = tf.Variable([1.0, 2.0], name="v")
            with tf.device("/job:worker/task:0"):
                out = tf.reduce_sum(v * 3.0, name="total")
            md = tf.RunMetadata()
            with tf.Session(worker.target) as sess:
                sess.run(v.initializer)
                assert sess.run(out, options=tf.RunOptions(trace_level=3),
                                run_metadata=md) == 9.0
            worker.stop()
        names = {d.device: {n.node_name for n in d.node_stats} for d in md.step_stats.dev_stats}
        assert "v" in names[PS] and "total" in names[WORKER]
    finally:
        ps.stdin.close()
        ps.wait(timeout=30)
