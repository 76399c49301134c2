"""Placement by cost (runtime/placement.py with runtime/cost_model.py).

The decisions are tested with stated device profiles (`cost_model.set_profile`): a host
with a slow GEMM and cheap launches beside an OpenCL device with a fast GEMM and costly
launches and copies, the shape of a real GPU. The OpenCL device here is PoCL, a CPU-type
device, which takes part in automatic placement only when
`OpenCLBackend.auto_place_cpu_devices` says so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends import list_devices
from flowgraph.runtime import cost_model
from tests.backends.opencl_support import opencl_devices

GPU = opencl_devices()[0]
CPU = next(d for d in list_devices() if d.device_type == "CPU")
HOST = cost_model.DeviceProfile(launch=2e-6, gemm=2e10, bandwidth=1e10)
FAST = cost_model.DeviceProfile(launch=25e-6, gemm=5e12, bandwidth=1e12,
                                copy_latency=15e-6, copy_bandwidth=1e10)


@pytest.fixture
def gpu_like(monkeypatch):
    from flowgraph.backends.opencl import OpenCLBackend

    monkeypatch.setattr(OpenCLBackend, "auto_place_cpu_devices", True)
    cost_model.set_profile(CPU, HOST)
    cost_model.set_profile(GPU, FAST)
    yield
    cost_model.set_profile(CPU, None)
    cost_model.set_profile(GPU, None)


def _placed(sess_run, capsys) -> dict[str, tuple[str, str]]:
    sess_run()
    out = capsys.readouterr().out
    placed = {}
    for line in out.splitlines():
        if ": (" in line and "device:" in line:
            name, rest = line.split(": (", 1)
            device = rest.split("): ", 1)[1]
            dev, _, why = device.partition("  (")
            placed[name] = (dev.rsplit("device:", 1)[-1], why.rstrip(")"))
    return placed


def test_big_matmul_goes_to_the_device_small_ops_stay(gpu_like, capsys):
    x = tf.placeholder(tf.float32, [None, 1024], name="x")
    w = tf.constant(np.random.default_rng(0).standard_normal((1024, 1024), np.float32))
    y = tf.matmul(x, w, name="big_matmul")
    s = tf.reduce_sum(y, name="total")
    for i in range(5):
        s = tf.add(s * 0.5, 1.0, name=f"scalar_{i}")
    xs = np.ones((512, 1024), np.float32)
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        placed = _placed(lambda: sess.run(s, {x: xs}), capsys)
        got = sess.run(s, {x: xs})
    assert placed["big_matmul"][0] == "GPU:0", placed["big_matmul"]
    assert placed["big_matmul"][1].startswith("cost: /device:GPU:0")
    for i in range(5):
        assert placed[f"scalar_{i}"][0] == "CPU:0", placed[f"scalar_{i}"]
    want = (xs @ w.eval(session=tf.Session())).sum()
    for _ in range(5):
        want = want * 0.5 + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_the_fed_batch_size_decides(gpu_like, capsys):
    x = tf.placeholder(tf.float32, [None, 256], name="x")
    w = tf.constant(np.ones((256, 256), np.float32))
    y = tf.matmul(x, w, name="mm")
    for batch, where in ((1, "CPU:0"), (4096, "GPU:0")):
        with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
            placed = _placed(lambda b=batch: sess.run(y, {x: np.ones((b, 256), np.float32)}),
                             capsys)
        assert placed["mm"][0] == where, (batch, placed["mm"])


def test_requests_and_colocation_are_kept_and_explained(gpu_like, capsys):
    x = tf.placeholder(tf.float32, [1024, 1024], name="x")
    with tf.device("/cpu:0"):
        big = tf.matmul(x, x, name="requested_cpu")
    head = x[:2, 0]
    with tf.device("/gpu:0"):
        b = tf.nn.relu(head, name="requested_gpu")
    with tf.device("/cpu:0"):
        v = tf.Variable([0.0], name="v")
    bump = tf.assign_add(v, [1.0], name="bump")  # joins v's group through its ref input
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        sess.run(v.initializer)
        placed = _placed(lambda: sess.run([big, b, bump],
                                          {x: np.ones((1024, 1024), np.float32)}), capsys)
    assert placed["requested_cpu"] == ("CPU:0", "requested '/device:CPU:0'")
    assert placed["requested_gpu"] == ("GPU:0", "requested '/device:GPU:0'")
    assert placed["bump"] == ("CPU:0", "colocated with 'v', which requested '/device:CPU:0'")


@pytest.mark.skipif(GPU.auto_place, reason="the OpenCL device is a real GPU")
def test_cpu_type_opencl_devices_take_no_unrequested_ops(capsys):
    x = tf.placeholder(tf.float32, [None, 1024], name="x")
    y = tf.matmul(x, tf.ones([1024, 1024]), name="mm")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        placed = _placed(lambda: sess.run(y, {x: np.ones((512, 1024), np.float32)}), capsys)
    assert placed["mm"] == ("CPU:0", "host by default")


def test_profiles_are_measured_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWGRAPH_CACHE_DIR", str(tmp_path))
    for device in (CPU, GPU):
        cost_model.set_profile(device, None)
        p = cost_model.profile_of(device)
        for value in (p.launch, p.gemm, p.bandwidth):
            assert 0 < value < math.inf
        assert (p.copy_bandwidth == math.inf) == device.backend.host_memory
        cost_model.set_profile(device, None)  # the next read comes from the file
        monkeypatch.setattr(cost_model, "measure", lambda d: pytest.fail("measured again"))
        assert cost_model.profile_of(device) == p
        monkeypatch.undo()
        monkeypatch.setenv("FLOWGRAPH_CACHE_DIR", str(tmp_path))
        cost_model.set_profile(device, None)


def test_a_traced_run_refines_host_estimates():
    x = tf.placeholder(tf.float32, [256, 256], name="x")
    y = tf.matmul(x, x, name="traced_mm")
    with tf.Session() as sess:
        costs = sess._compile_env.costs
        assert not costs.observed
        md = tf.RunMetadata()
        sess.run(y, {x: np.ones((256, 256), np.float32)}, run_metadata=md,
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        cpu = next(d for d in sess._compile_env.devices if d.device_type == "CPU")
        seen = costs.observed[("traced_mm", "/device:CPU:0")]
        assert seen > 0 and costs.op_time(y.op, cpu) == seen


def test_estimates_follow_shapes():
    costs = cost_model.CostModel()
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 300])
        mm = tf.matmul(a, tf.ones([300, 200]), transpose_b=False)
        costs.set_feed_shapes({a: (50, 300)})
        assert costs.flops(mm.op) == 2.0 * 50 * 300 * 200
        assert costs.nbytes(mm) == 50 * 200 * 4
        bt = tf.matmul(tf.ones([7, 3]), tf.ones([5, 3]), transpose_b=True)
        assert costs.flops(bt.op) == 2.0 * 7 * 5 * 3


def _devices_by_op(sess, fetches, feed=None) -> dict[str, str]:
    md = tf.RunMetadata()
    sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=md)
    return {n.node_name: d.device.rsplit("device:", 1)[-1]
            for d in md.step_stats.dev_stats for n in d.node_stats}


@pytest.mark.parametrize("profiles", ["stated", "measured"])
def test_state_stays_where_the_first_run_put_it(profiles, request, monkeypatch):
    """Each plan is placed on its own: the initializer's plan and the training step's
    must still agree on where every variable lives (before, the cost model put a bias on
    the device for its initializer and on the host for the step, whose CPU kernels then
    got device arrays)."""
    if profiles == "stated":
        request.getfixturevalue("gpu_like")
    else:
        from flowgraph.backends.opencl import OpenCLBackend

        monkeypatch.setattr(OpenCLBackend, "auto_place_cpu_devices", True)
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.dense(x, 512, activation=tf.nn.relu, name="hidden1")
    logits = tf.layers.dense(h, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    variables = [v.op.name for v in tf.global_variables()]
    feed = {x: rng.random((256, 784), np.float32), y: rng.integers(0, 10, 256)}
    with tf.Session() as sess:
        at_init = _devices_by_op(sess, tf.global_variables_initializer())
        at_step = _devices_by_op(sess, [train, loss], feed)
        # unseeded: over 3 steps Adam's loss rose in ~1 run in 8; over 10 it falls ~0.8
        losses = [sess.run([train, loss], feed)[1] for _ in range(10)]
    assert {v: at_step[v] for v in variables} == {v: at_init[v] for v in variables}
    assert losses[-1] < losses[0] - 0.2


def test_a_later_request_against_kept_state_is_refused_or_softened(gpu_like):
    v = tf.Variable(np.zeros(4, np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        home = _devices_by_op(sess, v.read_value())["v"]
        other = "/gpu:0" if home == "CPU:0" else "/cpu:0"
        with tf.device(other):
            bump = tf.assign_add(v, np.ones(4, np.float32), name="bump")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"'bump' \(AssignAdd\): it asks for .* uses the state of "
                                 r"'v', which an earlier run of this session put on"):
            sess.run(bump)
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(v.initializer)
        assert _devices_by_op(sess, bump)["bump"] == _devices_by_op(sess, v.read_value())["v"]
        np.testing.assert_array_equal(sess.run(v), np.ones(4, np.float32))  # one bump


def test_a_users_request_places_the_state_from_the_first_run(gpu_like):
    """As if the whole graph were placed: an op asking for a device for a variable's
    state puts the variable there already in the initializer's run."""
    v = tf.Variable(np.zeros(4, np.float32), name="v")
    with tf.device("/gpu:0"):
        bump = tf.assign_add(v, np.ones(4, np.float32), name="bump")
    with tf.Session() as sess:
        assert _devices_by_op(sess, v.initializer)["v"] == "GPU:0"
        assert _devices_by_op(sess, bump)["bump"] == "GPU:0"


def test_an_op_added_later_without_a_kernel_where_the_state_lives_is_refused(gpu_like):
    with tf.device("/gpu:0"):
        v = tf.Variable(np.zeros(4, np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert _devices_by_op(sess, v.read_value())["v"] == "GPU:0"
        worst = tf.scatter_max(v, [1], [5.0], name="worst")  # no OpenCL kernel
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"'worst' \(ScatterMax\): it uses the state of 'v', which an "
                                 r"earlier run of this session put on /device:GPU:0, which "
                                 r"has no kernel for ScatterMax"):
            sess.run(worst)
