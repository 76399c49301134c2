"""Placement on several CPU devices, Send/Recv partitioning and soft placement."""

from __future__ import annotations

import time

import numpy as np
import pytest

import flowgraph as tf

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _two_cpus(**kw):
    return tf.ConfigProto(device_count={"CPU": 2, "GPU": 0}, **kw)


def _placements(sess, fetch, feed=None):
    md = tf.RunMetadata()
    sess.run(fetch, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                output_partition_graphs=True),
             run_metadata=md)
    where = {}
    for dev in md.step_stats.dev_stats:
        for n in dev.node_stats:
            where[n.node_name] = dev.device
    return where, md


def test_device_count_gives_two_cpus():
    with tf.Session(config=_two_cpus()) as s:
        names = [d.name for d in s.list_devices()]
    assert names == [CPU0, CPU1]


def test_device_scopes_and_one_send_recv_per_tensor_per_device():
    """
        x (CPU:0) ──> a = sin(x) ──┬──> b = a * 2 (CPU:1) ──┐
                                   └──> c = a + 1 (CPU:1) ──┴──> d = b - c (CPU:0)
        a crosses to CPU:1 once (one pair), b and c come back (one pair each).
    """
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    a = tf.sin(x, name="a")
    with tf.device("/device:CPU:1"):
        b = tf.multiply(a, 2.0, name="b")
        c = tf.add(a, 1.0, name="c")
    d = tf.subtract(b, c, name="d")
    v = np.linspace(0, 1, 6).reshape(2, 3)
    with tf.Session(config=_two_cpus()) as s:
        where, md = _placements(s, d, {x: v})
        np.testing.assert_allclose(s.run(d, {x: v}), np.sin(v) - 1.0)
    assert where["a"] == CPU0 and where["d"] == CPU0
    assert where["b"] == CPU1 and where["c"] == CPU1
    sends = [(p["device"], n) for p in md.partition_graphs for n in p["node"]
             if n["op"] == "_Send"]
    recvs = [(p["device"], n) for p in md.partition_graphs for n in p["node"]
             if n["op"] == "_Recv"]
    assert sorted(n["attr"]["tensor_name"] for _, n in sends) == ["a:0", "b:0", "c:0"]
    assert len(recvs) == 3
    assert {dev for dev, n in recvs if n["attr"]["tensor_name"] == "a:0"} == {CPU1}
    assert {p["device"] for p in md.partition_graphs} == {CPU0, CPU1}


def test_colocate_with_follows_the_target():
    a = tf.placeholder(tf.float32, [2], name="a")
    with tf.device("/device:CPU:1"):
        anchor = tf.sin(a, name="anchor")
    with tf.device("/device:CPU:0"), tf.colocate_with(anchor.op):
        follower = tf.multiply(anchor, 3.0, name="follower")
    out = tf.identity(follower, name="out")
    with tf.Session(config=_two_cpus()) as s:
        where, _ = _placements(s, out, {a: [0.0, 1.0]})
    assert where["follower"] == CPU1 and where["anchor"] == CPU1


def test_colocated_group_moves_together_under_soft_placement():
    a = tf.placeholder(tf.float32, [2], name="a")
    with tf.device("/device:CPU:7"):
        anchor = tf.sin(a, name="anchor")
    with tf.colocate_with(anchor.op):
        follower = tf.multiply(anchor, 3.0, name="follower")
    with tf.Session(config=_two_cpus(allow_soft_placement=True)) as s:
        where, _ = _placements(s, follower, {a: [0.0, 0.0]})
    assert where["anchor"] == where["follower"]


def test_variables_and_their_assign_are_colocated():
    with tf.device("/device:CPU:1"):
        v = tf.Variable([1.0, 2.0], name="v")
    inc = tf.assign_add(v, [1.0, 1.0], name="inc")
    with tf.Session(config=_two_cpus()) as s:
        s.run(v.initializer)
        where, _ = _placements(s, inc)
        np.testing.assert_array_equal(s.run(v), [2.0, 3.0])
    assert where["inc"] == CPU1


@pytest.mark.parametrize("request_", ["/device:CPU:5", "/device:GPU:0"])
def test_soft_placement(request_):
    x = tf.placeholder(tf.float32, [2])
    with tf.device(request_):
        y = tf.sin(x, name="y")
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as s:
        where, _ = _placements(s, y, {x: [0.0, 1.0]})
    assert where["y"] == CPU0


@pytest.mark.parametrize("request_", ["/device:CPU:5", "/device:GPU:0"])
def test_impossible_placement_lists_devices(request_):
    x = tf.placeholder(tf.float32, [2])
    with tf.device(request_):
        y = tf.sin(x, name="y")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(y, {x: [0.0, 1.0]})
    msg = str(info.value)
    assert "'y'" in msg and request_ in msg and "/device:CPU:0" in msg
    assert "allow_soft_placement" in msg


def test_log_device_placement(capsys):
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/device:CPU:1"):
        y = tf.sin(x, name="logged_sin")
    with tf.Session(config=_two_cpus(log_device_placement=True)) as s:
        s.run(y, {x: [0.0, 1.0]})
    out = capsys.readouterr().out
    assert f"logged_sin: (Sin): {CPU1}" in out


def test_independent_partitions_overlap(testops):
    """Two 0.3 s sleeps (GIL released) on different devices overlap.

        x ──> sleep (CPU:0) ──> fetch
        x ──> sleep (CPU:1) ──> fetch
    """
    x = tf.placeholder(tf.float32, [2])
    s0 = testops.sleep(x, seconds=0.3, name="s0")
    with tf.device("/device:CPU:1"):
        s1 = testops.sleep(x, seconds=0.3, name="s1")
    with tf.Session(config=_two_cpus(inter_op_parallelism_threads=4)) as s:
        s.run([s0, s1], {x: [1.0, 2.0]})  # warm up the plan
        t0 = time.perf_counter()
        s.run([s0, s1], {x: [1.0, 2.0]})
        elapsed = time.perf_counter() - t0
    assert elapsed < 0.5, f"sleeps did not overlap: {elapsed:.3f} s"


def test_partitions_behind_chains_overlap(testops):
    """
        x ─> sin ─> sleep (CPU:0)
        x ─> sin ─> * 2 ─> sleep (CPU:1)      both sleeps should overlap
    """
    x = tf.placeholder(tf.float32, [2])
    s0 = testops.sleep(tf.sin(x), seconds=0.3)
    with tf.device("/device:CPU:1"):
        s1 = testops.sleep(tf.sin(x) * 2.0, seconds=0.3)
    with tf.Session(config=_two_cpus(inter_op_parallelism_threads=4)) as s:
        s.run([s0, s1], {x: [1.0, 2.0]})
        t0 = time.perf_counter()
        s.run([s0, s1], {x: [1.0, 2.0]})
        elapsed = time.perf_counter() - t0
    assert elapsed < 0.5, f"sleeps did not overlap: {elapsed:.3f} s"


@pytest.mark.parametrize("taken", [True, False])
def test_cond_whose_values_cross_cpus_runs_either_branch(taken):
    """The untaken branch's `_Send` forwards its dead value, so the `_Recv` on the other
    CPU does not wait for ever (it did: every cond across devices hung)."""
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [3])

        def across(fn):  # a branch computed half on CPU:1, half on CPU:0
            def branch():
                with tf.device("/cpu:1"):
                    half = fn(x)
                with tf.device("/cpu:0"):
                    return half + 1.0
            return branch

        z = tf.cond(pred, across(lambda v: v * 2.0), across(lambda v: v - 1.0))
        deadline = tf.RunOptions(timeout_in_ms=5000)
        with tf.Session(config=_two_cpus()) as sess:
            for _ in range(2):
                got = sess.run(z, {pred: taken, x: [1.0, 2.0, 3.0]}, options=deadline)
    want = [3.0, 5.0, 7.0] if taken else [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("taken", [True, False])
def test_branch_constant_sent_to_another_cpu_without_folding(taken):
    """Without constant folding, a constant inside a branch is a node tied to the cond by
    a control edge from the pivot (on CPU:0, so through a `_Recv` on CPU:1): on the
    untaken side it is dead, and the `_Send` of its value back to CPU:0 must still run
    (with DEAD) so that the `_Recv` there does not wait for ever."""
    from flowgraph.runtime.config import RewriterConfig

    off = RewriterConfig(constant_folding=RewriterConfig.OFF,
                         arithmetic_optimization=RewriterConfig.OFF)
    config = _two_cpus(graph_options=tf.GraphOptions(rewrite_options=off))
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])

        def branch():
            with tf.device("/cpu:1"):
                c = tf.constant([5.0, 6.0])
            with tf.device("/cpu:0"):
                return c + 1.0

        z = tf.cond(pred, branch, lambda: tf.zeros([2]))
        deadline = tf.RunOptions(timeout_in_ms=5000)
        with tf.Session(config=config) as sess:
            got = [sess.run(z, {pred: taken}, options=deadline) for _ in range(2)]
    for g in got:
        np.testing.assert_array_equal(g, [6.0, 7.0] if taken else [0.0, 0.0])
