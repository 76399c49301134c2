"""The CPU buffer pool under a memory budget (`memory_schedule.py`, `_buffers.pyx`): a
budget with room to spare costs the training step no allocations the unbudgeted step
does not make."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

MiB = 1 << 20
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
_buffers = pytest.importorskip("flowgraph.backends.cpu._buffers")


def _mlp_misses(budget: int, steps: int = 2):
    """Pool misses per step of benchmarks/bench_mlp.py's SGD step (784-512-512-10, batch
    256, fed) after warm-up, the pool's bytes, and the plan's memory schedule."""
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        h = tf.layers.dense(x, 512, activation=tf.nn.relu)
        h = tf.layers.dense(h, 512, activation=tf.nn.relu)
        loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(h, 10))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        rng = np.random.RandomState(0)
        feed = {x: rng.rand(256, 784).astype(np.float32), y: rng.randint(0, 10, 256)}
        config = tf.ConfigProto(memory_budget_bytes=budget) if budget else None
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):  # the pool fills (a shape-specialized plan comes second)
                sess.run([train, loss], feed)
            before = _buffers.counts()[1]
            for _ in range(steps):
                sess.run([train, loss], feed)
            misses = (_buffers.counts()[1] - before) / steps
            plans = {id(cp): cp for cp in sess._plans.values()}.values()
            mem = max(plans, key=lambda cp: len(cp.nodes)).memory_schedule
            return misses, _buffers.held_bytes(), mem


def test_a_roomy_budget_leaves_the_pool_what_the_step_needs():
    _buffers.clear()
    free_misses, free_held, _ = _mlp_misses(0)
    assert free_misses == 0  # every large output is a kept array
    _buffers.clear()
    misses, held, mem = _mlp_misses(16 * MiB)
    # 1/8 of the budget (2 MiB) would drop the two weight gradients (2.6 MiB) every step;
    # the pool also gets what the gated step can never hold
    assert not mem.edges
    assert mem.pool_cap > 16 * MiB // 8 and mem.pool_cap >= free_held
    # (what the pool holds varies a little from run to run with the threads' timing)
    assert misses == 0 and held <= mem.pool_cap


def test_pool_cap_never_raises_the_pool_above_its_own_limit():
    _buffers.clear()
    _buffers.push_cap(_buffers.BUDGET * 4)
    try:
        a = _buffers.empty((512, 512), np.float32)
        assert _buffers.held_bytes() == a.nbytes <= _buffers.BUDGET
    finally:
        _buffers.pop_cap(_buffers.BUDGET * 4)
    hits, misses = _buffers.counts()
    del a
    _buffers.empty((512, 512), np.float32)
    assert _buffers.counts() == (hits + 1, misses)  # the kept array again
