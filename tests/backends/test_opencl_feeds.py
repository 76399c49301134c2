"""How host values reach an OpenCL device in a training step (partition.py).

A fed value and the plan's constants reach the device through `_ToDevice` nodes; a
``Const`` node that must wait for control inputs (the loss gradient's ``ExpandDims``,
folded from the fed batch size and anchored to its source) did so through a
`_Send`/`_Recv` pair that copied it to the device every step. Now it is uploaded on the
first step only, after the node, and a step's only host-to-device transfer is the feed.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.opencl import backend
from tests.backends.opencl_support import opencl_devices

opencl_devices()
TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)


def _mlp_step(device: str | None, config):
    """An Adam step of a small ReLU MLP (tf.layers, sparse softmax cross-entropy), with
    the same initial weights on every device."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 24], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        with tf.device(device):
            h = tf.layers.dense(x, 20, tf.nn.relu)
            h = tf.layers.dense(h, 16, tf.nn.relu)
            logits = tf.layers.dense(h, 10)
            loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
            train = tf.train.AdamOptimizer(1e-2).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    return sess, x, y, train, loss


def _batches(n: int = 6, batch: int = 32):
    rng = np.random.default_rng(0)
    return [(rng.uniform(0, 1, (batch, 24)).astype(np.float32), rng.integers(0, 10, batch))
            for _ in range(n)]


@pytest.fixture
def counted_uploads(monkeypatch):
    """Every `from_host` call of the OpenCL backend as (shape, wrap)."""
    calls = []
    original = backend.from_host

    def from_host(value, device, wrap=False):
        calls.append((getattr(value, "shape", None), wrap))
        return original(value, device, wrap)

    monkeypatch.setattr(backend, "from_host", from_host)
    return calls


def test_a_training_step_uploads_only_its_feed(counted_uploads):
    sess, x, y, train, _ = _mlp_step("/gpu:0", tf.ConfigProto(allow_soft_placement=True))
    with sess:
        batches = _batches(3)
        sess.run(train, {x: batches[0][0], y: batches[0][1]})  # plan constants upload
        counted_uploads.clear()
        md = tf.RunMetadata()
        for xs, ys in batches[1:]:
            sess.run(train, {x: xs, y: ys}, options=TRACE, run_metadata=md)
    # one wrap of the fed x per step (the int64 labels are small: they stay on the host)
    # and no copy: the anchored ExpandDims (32, 1) was copied by a _Recv every step
    assert counted_uploads == [((32, 24), True)] * 2, counted_uploads
    ops = {n["op"] for p in md.partition_graphs for n in p["node"]}
    assert "_Send" not in ops and "_Recv" not in ops, ops
    traced = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    assert any(n.startswith("_to_device_gradients/") for n in traced), sorted(traced)


def test_the_training_step_matches_the_cpu_backend():
    runs = {}
    for name, device, config in (
            ("gpu", "/gpu:0", tf.ConfigProto(allow_soft_placement=True)),
            ("cpu", None, tf.ConfigProto(device_count={"GPU": 0}))):
        sess, x, y, train, loss = _mlp_step(device, config)
        with sess:
            losses = [sess.run([train, loss], {x: xs, y: ys})[1] for xs, ys in _batches()]
            weights = sess.run(sess.graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES))
        runs[name] = losses, weights
    np.testing.assert_allclose(runs["gpu"][0], runs["cpu"][0], rtol=2e-4, atol=1e-5)
    assert runs["gpu"][0][-1] < runs["gpu"][0][0]  # it trains
    for got, want in zip(runs["gpu"][1], runs["cpu"][1], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


def test_a_constant_with_control_inputs_is_uploaded_once_after_them(counted_uploads):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        counter = tf.Variable(0.0, name="counter")
        bump = tf.assign_add(counter, 1.0)
        with tf.device("/cpu:0"), tf.control_dependencies([bump]):
            c = tf.constant([1.0, 2.0, 3.0, 4.0], name="c")
            shape = tf.constant([2, 2], name="shape")
        with tf.device("/gpu:0"):
            y = tf.reshape(x * c, shape)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        xs = np.arange(4, dtype=np.float32)
        first = sess.run(y, {x: xs})
        counted_uploads.clear()
        md = tf.RunMetadata()
        second = sess.run(y, {x: xs + 1}, options=TRACE, run_metadata=md)
        assert sess.run(counter) == 2.0  # the constants still wait for their control input
    np.testing.assert_array_equal(first, (xs * [1, 2, 3, 4]).reshape(2, 2))
    np.testing.assert_array_equal(second, ((xs + 1) * [1, 2, 3, 4]).reshape(2, 2))
    assert counted_uploads == [((4,), True)], counted_uploads  # the feed only
    ops = [n["op"] for p in md.partition_graphs for n in p["node"]]
    assert "_Send" not in ops and "_Recv" not in ops, ops


@pytest.mark.parametrize("device", ["/gpu:0", "/cpu:1"])
def test_a_tf_cond_across_devices_runs_either_branch(device):
    """The untaken branch's values cross devices as DEAD (`_Send` runs on a dead input),
    and a constant in a branch stays dead with it. (Any two devices hung the same way:
    CPU:0 and CPU:1 too.)"""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        pred = tf.placeholder(tf.bool, [], name="pred")

        def taken():
            with tf.device("/cpu:0"):
                c = tf.constant([10.0, 20.0, 30.0])
            with tf.device(device):
                return x + c

        def other():
            with tf.device(device):
                return x * 2.0

        y = tf.cond(pred, taken, other)
    config = tf.ConfigProto(allow_soft_placement=True, device_count={"CPU": 2})
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    # a dead _Send left its _Recv waiting for ever: the deadline turns a hang into an error
    deadline = tf.RunOptions(timeout_in_ms=20000)
    with tf.Session(graph=graph, config=config) as sess:
        for _ in range(2):
            for taken, want in ((True, xs + np.float32([10, 20, 30])), (False, xs * 2)):
                got = sess.run(y, {x: xs, pred: taken}, options=deadline)
                np.testing.assert_array_equal(got, want)
