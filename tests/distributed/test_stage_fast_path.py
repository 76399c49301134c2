"""A task's stage fed a batch of a size the graph leaves unknown runs through a
`FastRun` of the plan specialized to the fed shapes (stage_graph.run_stage), and a call with
other shapes still takes the general path, which picks or compiles their variant."""

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import Server, replica_device_setter, stage_graph
from flowgraph.distributed.rpc import register_in_process, to_grpc_address
from flowgraph.runtime.step import FastRun


def _train(target, cluster, batches, service=None):
    """Train a linear model on `batches` (sizes vary); the weights after each step, and
    the FastRuns of `service`'s stages by fed shapes before the session closes."""
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster,
                                             worker_device="/job:worker/task:0")
                       if target else "/cpu:0"):
            w = tf.Variable(np.ones((3, 1), np.float32), name="w")
            x = tf.placeholder(tf.float32, [None, 3])
            y = tf.placeholder(tf.float32, [None, 1])
            # (tf.shape: the stage's plan has shape variants, as a mean's divisor does)
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - y)) / tf.cast(
                tf.shape(x)[0], tf.float32)
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(target) as sess:
            sess.run(w.initializer)
            out = []
            for bx, by in batches:
                sess.run(train, {x: bx, y: by})
                out.append(sess.run(w))
            made: dict = {}
            for stage in (service._graphs.values() if service else ()):
                for layout in stage._layouts.values():
                    for key, fast in layout.fast.items():
                        if fast is not None:
                            made[key[2]] = fast
            return out, made


def test_a_stage_runs_fast_for_repeated_shapes_and_right_when_they_change(monkeypatch):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps, wk = Server(cluster, "ps", 0), Server(cluster, "worker", 0)
    register_in_process(to_grpc_address(ps.target), ps._service, None, forget=True)
    rng = np.random.RandomState(0)
    sizes = [4, 4, 4, 4, 3, 3, 4, 4, 5]  # a smaller batch mid-training, then back
    batches = [(rng.randn(n, 3).astype(np.float32), rng.randn(n, 1).astype(np.float32))
               for n in sizes]
    fast_calls = []
    run = FastRun.run

    def counting(self, session, feed_dict, timeout_ms=0):
        fast_calls.append(tuple(v.shape for v in (feed_dict or {}).values()))
        return run(self, session, feed_dict, timeout_ms)

    monkeypatch.setattr(FastRun, "run", counting)
    try:
        local, _ = _train("", cluster, batches)
        del fast_calls[:]  # (the local session's own fast runs)
        remote, made = _train(wk.target, cluster, batches, wk._service)
        for step, (a, b) in enumerate(zip(local, remote)):
            np.testing.assert_allclose(b, a, rtol=1e-5, err_msg=f"step {step}")
        # a FastRun per fed-shape signature of the worker's stage (the batch is fed
        # there), used from the second call with those shapes on
        batch_shapes = {shapes for shapes, f in made.items() if isinstance(f, FastRun)}
        assert any((4, 3) in shapes for shapes in batch_shapes)
        assert any((3, 3) in shapes for shapes in batch_shapes)
        assert any((4, 3) in shapes for shapes in fast_calls)
        assert any((3, 3) in shapes for shapes in fast_calls)
    finally:
        wk.stop()
        ps.stop()


def test_a_stage_with_options_or_odd_values_takes_the_general_path():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None])
        y = tf.reduce_sum(x) / tf.cast(tf.size(x), tf.float32)
        with tf.Session(graph=graph) as sess:
            layout = type("L", (), {"fetches": [y], "fast": {}})()
            assert stage_graph.run_stage(sess, layout, {x: [1.0, 3.0]}, None) == [2.0]
            assert layout.fast == {}  # a list has no shape: nothing cached
            value = np.array([1.0, 2.0, 6.0], np.float32)
            for _ in range(2):
                assert stage_graph.run_stage(sess, layout, {x: value}, None) == [3.0]
            (fast,) = layout.fast.values()
            assert isinstance(fast, FastRun)
            assert stage_graph.run_stage(sess, layout, {x: value[:2]}, None) == [1.5]
            assert stage_graph.run_stage(sess, layout, {x: value},
                                    tf.RunOptions(timeout_in_ms=5000)) == [3.0]
            # options asking for more than a deadline: the general path, which fills
            # the run's metadata
            meta = tf.RunMetadata()
            traced = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            sess.run(y, {x: value}, options=traced, run_metadata=meta)
            assert stage_graph._deadline_only(traced) is None
            assert meta.step_stats.dev_stats


def test_a_stage_with_a_deadline_runs_fast_and_still_times_out(monkeypatch):
    """A stage that may block runs with a deadline: from its second call through a
    FastRun that keeps the deadline (a dequeue from an empty queue ends with
    DeadlineExceededError naming the deadline) and the session's live steps (so a
    cancellation reaches it)."""
    with tf.Graph().as_default() as graph:
        queue = tf.FIFOQueue(10, [tf.float32], shapes=[[2]])
        x = tf.placeholder(tf.float32, [2])
        put = queue.enqueue([x])
        take = queue.dequeue()
        total = tf.reduce_sum(take)
    fast_runs = []
    run = FastRun.run

    def counting(self, session, feed_dict, timeout_ms=0):
        if timeout_ms:  # (the enqueue's plain runs take the session's own FastRun)
            fast_runs.append(timeout_ms)
        return run(self, session, feed_dict, timeout_ms)

    monkeypatch.setattr(FastRun, "run", counting)
    with tf.Session(graph=graph) as sess:
        layout = type("L", (), {"fetches": [total], "fast": {}})()
        options = tf.RunOptions(timeout_in_ms=200)
        value = np.array([1.0, 2.0], np.float32)
        for _ in range(3):
            sess.run(put, {x: value})
            assert stage_graph.run_stage(sess, layout, {}, options) == [3.0]
        assert fast_runs == [200, 200]  # the first call took the general path
        with pytest.raises(tf.errors.DeadlineExceededError, match="200 ms"):
            stage_graph.run_stage(sess, layout, {}, options)
        assert fast_runs == [200, 200, 200]
        assert not sess._live_steps
        sess.run(put, {x: value})  # the session still works after the timeout
        assert stage_graph.run_stage(sess, layout, {}, options) == [3.0]
