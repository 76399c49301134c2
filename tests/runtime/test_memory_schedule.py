"""The memory schedule (`flowgraph/runtime/memory_schedule.py`): peak live bytes per
device stay within `memory_budget_bytes`, results equal the unbounded run's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.runtime.memory_schedule import device_budgets

MiB = 1 << 20
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def _run(fetch, feed, budget=0, config=None):
    """(value, peak bytes, compiled plan) of one traced run."""
    with tf.Session(config=config) as sess:
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, memory_budget_bytes=budget)
        value = sess.run(fetch, feed, options=opts, run_metadata=md)
        (cp,) = set(sess._plans.values())
        return value, md.step_stats.peak_bytes(), cp


def _late_consumer(n=65536, branches=32, chain=300):
    """The issue's graph, scaled: `branches` temporaries of 16 * n float32 (4 MiB) whose
    consumers also need the end of a `chain` of small ops."""
    x = tf.placeholder(tf.float32, [n])
    y = tf.reduce_sum(x[:16])
    for _ in range(chain):
        y = tf.sin(y) + 1.0
    outs = [tf.reduce_sum(tf.tile(x + float(i), [16]) * y) for i in range(branches)]
    feed = {x: np.random.RandomState(0).rand(n).astype(np.float32)}
    return tf.add_n(outs), feed


def test_late_consumer_stays_within_budget():
    with tf.Graph().as_default():
        total, feed = _late_consumer()
        free, free_peak, cp = _run(total, feed)
        assert cp.memory_schedule is None  # no budget: the pass does not run
        assert free_peak > 64 * MiB  # the naive order holds most temporaries
        budget = 13 * MiB  # about three temporaries
        bounded, peak, cp = _run(total, feed, budget)
        assert cp.memory_schedule.edges
        assert peak <= budget
        assert bounded == free


def test_config_budget_applies_to_every_run():
    with tf.Graph().as_default():
        total, feed = _late_consumer(branches=8, chain=50)
        free, _, _ = _run(total, feed)
        config = tf.ConfigProto(memory_budget_bytes={"CPU": 10 * MiB})
        value, peak, cp = _run(total, feed, config=config)
        assert cp.memory_schedule.budgets == {CPU0: 10 * MiB}
        assert peak <= 10 * MiB and value == free


def test_run_options_budget_gets_its_own_plan():
    with tf.Graph().as_default():
        total, feed = _late_consumer(branches=8, chain=50)
        with tf.Session() as sess:
            free = sess.run(total, feed)
            opts = tf.RunOptions(memory_budget_bytes=10 * MiB)
            assert sess.run(total, feed, options=opts) == free
            schedules = {id(cp): cp.memory_schedule for cp in sess._plans.values()}
            assert len(schedules) == 2 and None in schedules.values()


def test_sixty_four_branches_with_two_temporaries():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4096])
        y = tf.reduce_sum(x)
        for _ in range(10):  # the consumers wait a little: naively, all 64 temporaries
            y = tf.sin(y) + 1.0  # are made first
        outs = [tf.reduce_sum(tf.tile(x * float(i), [64]) * y) for i in range(64)]  # 1 MiB
        total = tf.add_n(outs)
        feed = {x: np.linspace(0, 1, 4096, dtype=np.float32)}
        free, free_peak, _ = _run(total, feed)
        budget = 3 * MiB + 64 * 1024  # a product reads one temporary and makes one
        bounded, peak, _ = _run(total, feed, budget)
        assert peak <= budget < free_peak
        assert bounded == free
        wide, wide_peak, _ = _run(total, feed, 8 * MiB + 64 * 1024)
        assert wide == free and wide_peak <= 8 * MiB + 64 * 1024


def test_infeasible_budget_names_the_node_before_running():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [65536])
        big = tf.tile(x, [16], name="big_tile")  # 256 KiB and [16] in, 4 MiB out
        with tf.Session() as sess:
            opts = tf.RunOptions(memory_budget_bytes=2 * MiB)
            with pytest.raises(errors.ResourceExhaustedError,
                               match=r"big_tile.*Tile.*4456452 bytes.*2097152"):
                sess.run(big, {x: np.zeros(65536, np.float32)}, options=opts)


def test_two_devices_with_transfers():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [16384])
        y = tf.reduce_sum(x)
        for _ in range(10):
            y = tf.sin(y) + 1.0
        with tf.device("/device:CPU:1"):
            parts = [tf.tile(x + float(i), [8]) * y for i in range(8)]  # 512 KiB each
        outs = [tf.reduce_sum(p) for p in parts]  # on CPU:0, across a _Send/_Recv
        total = tf.add_n(outs)
        feed = {x: np.ones(16384, np.float32)}
        config = tf.ConfigProto(device_count={"CPU": 2})
        free, free_peak, _ = _run(total, feed, config=config)
        value, peak, cp = _run(total, feed, 2 * MiB, config=config)
        assert value == free
        assert set(cp.memory_schedule.budgets) == {d.name for d in cp.devices}
        assert peak <= 2 * MiB < free_peak


def test_loops_are_left_alone():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1024])
        big = tf.tile(x, [64])
        _, acc = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a + big * 0.5),
                               [tf.constant(0), tf.zeros([65536])])
        out = tf.reduce_sum(acc) + tf.reduce_sum(tf.tile(x, [32]))
        feed = {x: np.ones(1024, np.float32)}
        free, _, _ = _run(out, feed)
        value, _, cp = _run(out, feed, 2 * MiB)
        assert value == free
        edges = cp.memory_schedule.edges
        assert edges  # the tiles outside the loop are still ordered
        assert not [e for e in edges for i in e if cp.nodes[i].name.startswith("while")]


def test_unknown_shapes_count_zero_and_are_listed():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        t = tf.tile(x, [4], name="unsized")
        out = tf.reduce_sum(t * 2.0)
        value, _, cp = _run(out, {x: np.ones(8, np.float32)}, 1 * MiB)
        assert value == 64.0
        assert "unsized" in cp.memory_schedule.unknown_sizes


def test_training_step_under_a_budget_matches():
    def losses(budget):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            x = tf.placeholder(tf.float32, [64, 96])
            h = tf.layers.dense(x, 128, activation=tf.nn.relu)
            loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 4)))
            train = tf.train.AdamOptimizer(1e-2).minimize(loss)
            feed = {x: np.random.RandomState(0).rand(64, 96).astype(np.float32)}
            with tf.Session(config=tf.ConfigProto(memory_budget_bytes=budget)) as sess:
                sess.run(tf.global_variables_initializer())
                out = [sess.run([train, loss], feed)[1] for _ in range(2)]
                md = tf.RunMetadata()
                opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                out.append(sess.run([train, loss], feed, options=opts, run_metadata=md)[1])
                edges = sum(len(cp.memory_schedule.edges) for cp in sess._plans.values()
                            if cp.memory_schedule is not None)
                return out, edges, md.step_stats.peak_bytes()

    bounded, edges, peak = losses(200 * 1024)
    assert edges and peak <= 200 * 1024
    assert bounded == losses(0)[0]


def test_device_budgets_forms():
    assert device_budgets(0, [CPU0]) == {}
    assert device_budgets(5, [CPU0]) == {CPU0: 5}
    assert device_budgets({"/device:CPU:0": 7}, [CPU0]) == {CPU0: 7}
    assert device_budgets({CPU0: 9, "CPU": 1}, [CPU0]) == {CPU0: 9}
    with pytest.raises(ValueError, match="non-negative int"):
        device_budgets(-1, [CPU0])


@st.composite
def _dags(draw):
    """A random DAG: per node its inputs (earlier nodes) and its size in float32s."""
    n = draw(st.integers(2, 14))
    nodes = []
    for i in range(n):
        k = draw(st.integers(1, min(3, i + 1)))
        ins = draw(st.lists(st.integers(-1, i - 1), min_size=k, max_size=k, unique=True))
        nodes.append((ins, draw(st.sampled_from([16, 1024, 8192, 32768]))))
    return nodes, draw(st.floats(-0.2, 1.0))


def _build(nodes):
    x = tf.placeholder(tf.float32, [256])
    vals = []
    for i, (ins, size) in enumerate(nodes):
        total = tf.add_n([tf.reduce_sum(x if j < 0 else vals[j]) for j in ins])
        vals.append(tf.tile(tf.reshape(total * float(i % 3 + 1) * 0.25, [1]), [size]))
    used = {j for ins, _ in nodes for j in ins}
    sinks = [tf.reduce_sum(v) for i, v in enumerate(vals) if i not in used]
    return tf.add_n(sinks) if len(sinks) > 1 else sinks[0], x


@settings(max_examples=40, deadline=None)
@given(_dags())
def test_random_dags_never_deadlock_and_match(dag):
    nodes, fraction = dag
    with tf.Graph().as_default():
        out, x = _build(nodes)
        feed = {x: np.arange(256, dtype=np.float32) / 256}
        free, free_peak, _ = _run(out, feed)
        _, _, roomy = _run(out, feed, 1 << 50)  # no edges; tells the sequential peak
        sequential = roomy.memory_schedule.sequential_peak[CPU0]
        assert not roomy.memory_schedule.edges
        budget = max(1, int(sequential + fraction * (max(free_peak, sequential) - sequential)))
        try:
            value, peak, _ = _run(out, feed, budget)
        except errors.ResourceExhaustedError:
            return  # one node needs more than the budget
        assert value == free
        assert peak <= max(budget, sequential)
