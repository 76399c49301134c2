"""RunOptions(trace_level=FULL_TRACE): step stats, memory release, Chrome traces."""

from __future__ import annotations

import json

import numpy as np

import flowgraph as tf
from flowgraph.runtime.timeline import Timeline

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _chain(x, n, names):
    y = x
    for name in names[:n]:
        y = tf.sin(y, name=name)
    return y


def test_step_stats_per_node(sess):
    x = tf.placeholder(tf.float64, [3, 4], name="x")
    s = tf.sin(x, name="s")
    y = [s * 2.0, s]  # s fetched: its own node (fusion would absorb it otherwise)
    md = tf.RunMetadata()
    sess.run(y, {x: np.ones((3, 4))}, options=FULL, run_metadata=md)
    (dev,) = md.step_stats.dev_stats
    assert dev.device == CPU0
    by_name = {n.node_name: n for n in dev.node_stats}
    assert by_name["s"].op_type == "Sin" and by_name["s"].output_bytes == 96
    for n in dev.node_stats:
        assert n.all_end_rel_nanos >= 0 and n.all_start_micros > 0
    assert dev.peak_bytes >= 96 * 2
    # Without tracing nothing is filled in.
    md2 = tf.RunMetadata()
    sess.run(y, {x: np.ones((3, 4))}, run_metadata=md2)
    assert md2.step_stats.dev_stats == []


def test_big_intermediates_are_released_early(sess):
    """A chain of 8 sins over 1 MB arrays peaks at 2 buffers, not 8.

        x ─> s0 ─> s1 ─> ... ─> s7 ─> fetch     (each s_i frees s_{i-1} when done)
    """
    n = 1 << 17  # 1 MiB of float64
    for names in ([f"s{i}" for i in range(8)], [f"s{i}" for i in reversed(range(8))]):
        with tf.Graph().as_default() as g:
            x = tf.placeholder(tf.float64, [n], name="x")
            y = _chain(x, 8, names)
            md = tf.RunMetadata()
            with tf.Session(graph=g) as s:
                s.run(y, {x: np.zeros(n)}, options=FULL, run_metadata=md)
        peak = md.step_stats.peak_bytes(CPU0)
        assert 2 * n * 8 <= peak <= 3 * n * 8, peak


def test_released_value_is_garbage_before_step_ends(sess, testops):
    """The probe runs after `big` has been consumed: big's array is already freed.

        big ─> sin ─> probe ─> fetch
    """
    big = testops.big(1 << 16)
    y = testops.probe(tf.sin(big))
    sess.run(y)
    assert testops.probes == [[False]]


def test_peak_bytes_per_device(testops):
    """Big work on CPU:1 only; CPU:0 holds just small tensors.

        big (1 MB) ─> sin ─> sum   on CPU:1
                              └──> y = sum * x   on CPU:0   (8 bytes cross over)
    """
    n = 1 << 17
    x = tf.placeholder(tf.float64, [1], name="x")
    with tf.device("/device:CPU:1"):
        big = testops.big(n, name="big")
        total = testops.sum(tf.sin(big, name="z"), name="total")
    y = tf.multiply(total, x, name="y")
    md = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        out = s.run(y, {x: [2.0]}, options=FULL, run_metadata=md)
    np.testing.assert_allclose(out, [np.sin(1.0) * n * 2.0])
    peaks = {d.device: d.peak_bytes for d in md.step_stats.dev_stats}
    assert 2 * n * 8 <= peaks[CPU1] <= 3 * n * 8
    assert 0 < peaks[CPU0] < 1024, peaks


def test_timeline_is_valid_chrome_trace(sess):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.sin(x) + 1.0
    md = tf.RunMetadata()
    sess.run(y, {x: np.ones((2, 3))}, options=FULL, run_metadata=md)
    text = Timeline(md.step_stats).generate_chrome_trace_format(show_memory=True)
    trace = json.loads(text)
    events = trace["traceEvents"]
    ops = [e for e in events if e["ph"] == "X"]
    assert {e["args"]["op"] for e in ops} >= {"Sin", "AddV2"}
    for e in ops:  # TensorFlow's integer microseconds: a fast node lasts 0
        assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e["pid"], int)
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)
    assert any(e["ph"] == "C" for e in events)


def test_timeline_imports_from_tensorflows_path(sess):
    """TF1 profiling snippets import ``tensorflow.python.client.timeline``."""
    from flowgraph.python.client import timeline

    x = tf.placeholder(tf.float32, [4, 4], name="x")
    y = tf.matmul(x, x, name="mm")
    md = tf.RunMetadata()
    sess.run(y, {x: np.ones((4, 4))}, options=FULL, run_metadata=md)
    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    assert "mm" in {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "X"}


def test_async_nodes_are_in_step_stats():
    """A `_Recv` and a queue dequeue are traced from their start to their completion.

        x ─> sin (CPU:0) ─> _Send ══> _Recv ─> cos (CPU:1) ─> fetch
        queue ─> dequeue ─────────────────────────────────────> fetch
    """
    x = tf.placeholder(tf.float64, [5, 3], name="x")
    a = tf.sin(x, name="a")
    with tf.device("/device:CPU:1"):
        b = tf.cos(a, name="b")
    q = tf.FIFOQueue(4, [tf.float32], shapes=[[7]])
    fill = q.enqueue([tf.ones([7])])
    taken = q.dequeue(name="taken")
    md = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        s.run(fill)
        s.run([b, taken], {x: np.ones((5, 3))}, options=FULL, run_metadata=md)
    stats = {n.node_name: (d.device, n) for d in md.step_stats.dev_stats
             for n in d.node_stats}
    recvs = [(dev, n) for dev, n in stats.values() if n.op_type == "_Recv"]
    assert len(recvs) == 1
    dev, recv = recvs[0]
    assert dev == CPU1 and recv.output_bytes == 5 * 3 * 8
    assert recv.all_end_rel_nanos >= 0
    # The value arrives after its producer started.
    assert recv.all_start_nanos + recv.all_end_rel_nanos >= stats["a"][1].all_start_nanos
    dev, deq = stats["taken"]
    assert deq.op_type.startswith("QueueDequeue") and deq.output_bytes == 7 * 4
    # The received bytes count on CPU:1, where `b` reads them.
    assert md.step_stats.peak_bytes(CPU1) >= 2 * 5 * 3 * 8
