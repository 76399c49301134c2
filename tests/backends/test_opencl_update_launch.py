"""Repeated optimizer updates (`kernels_training`): after the first step an update repeats
its kept launch by identity tests on the variable and its slots, and must still compute
what the CPU backend computes when gradients, beta powers and variable values change."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from tests.backends.opencl_support import opencl_devices

opencl_devices()

_rng = np.random.default_rng(3)
_W0 = _rng.uniform(-1, 1, (48, 16)).astype(np.float32)  # a multiple of 16: the vector form
_B0 = _rng.uniform(-1, 1, (5,)).astype(np.float32)  # not one: the one-element form


def _train(device: str | None, steps: int, reassign_at: int | None = None):
    """Variables after `steps` Adam steps of a small least-squares model on `device`,
    with the variables overwritten by new values before step `reassign_at`."""
    with tf.Graph().as_default():
        xs = tf.placeholder(tf.float32, [8, 48])
        with tf.device(device):
            w = tf.Variable(_W0)
            b = tf.Variable(_B0)
            loss = tf.reduce_sum(tf.square(tf.matmul(xs, w))) + tf.reduce_sum(b * b * b)
            train = tf.train.AdamOptimizer(0.05).minimize(loss)
            reset = tf.group(tf.assign(w, _W0 * 0.5), tf.assign(b, _B0 - 1.0))
        config = tf.ConfigProto(allow_soft_placement=True) if device else \
            tf.ConfigProto(device_count={"GPU": 0})
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            feed_rng = np.random.default_rng(11)
            for step in range(steps):
                if step == reassign_at:
                    sess.run(reset)
                sess.run(train, {xs: feed_rng.uniform(-1, 1, (8, 48)).astype(np.float32)})
            return sess.run([w, b])


def test_repeated_adam_updates_match_the_cpu_backend():
    got = _train("/gpu:0", 5)
    want = _train(None, 5)
    for g, v in zip(got, want, strict=True):
        np.testing.assert_allclose(g, v, rtol=2e-5, atol=2e-6)


def test_repeated_adam_updates_after_the_variables_are_reassigned():
    got = _train("/gpu:0", 6, reassign_at=3)
    want = _train(None, 6, reassign_at=3)
    for g, v in zip(got, want, strict=True):
        np.testing.assert_allclose(g, v, rtol=2e-5, atol=2e-6)


def test_repeated_update_skips_the_signature(monkeypatch):
    """From the second step on no update looks its launch up by signature (the lookup
    goes through `runtime_of`), and the result still matches the CPU backend."""
    from flowgraph.backends.opencl import kernels_training

    lookups = []
    real = kernels_training.runtime_of
    monkeypatch.setattr(kernels_training, "runtime_of",
                        lambda a: lookups.append(1) or real(a))
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable(_W0)
            loss = tf.reduce_sum(v * v)
            train = tf.train.AdamOptimizer(0.1).minimize(loss)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            first = len(lookups)
            for _ in range(3):
                sess.run(train)
            got = sess.run(v)
    assert first >= 1 and len(lookups) == first, (first, len(lookups))
    m = s = np.zeros_like(_W0)
    want = _W0.copy()
    for t in range(1, 5):
        g = 2 * want
        m = 0.9 * m + 0.1 * g
        s = 0.999 * s + 0.001 * g * g
        lr = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        want = want - lr * m / (np.sqrt(s) + 1e-8)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_repeated_assign_add_and_sub_keep_their_launch():
    from flowgraph.backends.opencl._runtime import discover

    start = _rng.uniform(-1, 1, (3, 7)).astype(np.float32)
    with tf.Graph().as_default():
        step = tf.placeholder(tf.float32, [3, 7])
        with tf.device("/gpu:0"):
            v = tf.Variable(start)
            s = tf.Variable(np.float32(2.0))
            up = tf.group(tf.assign_add(v, step), tf.assign_sub(s, tf.reduce_sum(step)))
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            want_v, want_s = start.astype(np.float64), 2.0
            for _ in range(4):
                inc = _rng.uniform(-1, 1, (3, 7)).astype(np.float32)
                sess.run(up, {step: inc})
                want_v, want_s = want_v + inc, want_s - float(inc.sum())
            got_v, got_s = sess.run([v, s])
    np.testing.assert_allclose(got_v, want_v, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_s, want_s, rtol=1e-5, atol=1e-4)
    kept = {k[:2] for rt in discover() for k in rt.launches
            if isinstance(k, tuple) and k[0] in ("AssignAdd", "AssignSub")}
    assert {("AssignAdd", (3, 7)), ("AssignSub", ())} <= kept, kept


def test_remembered_updates_do_not_keep_closed_sessions_variables():
    """The per-variable memory of kept updates holds its arrays weakly: once a session
    with a 4 MB variable (and its two Adam slots) is closed, their device memory is free."""
    import gc

    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]

    def train_and_close():
        with tf.Graph().as_default():
            with tf.device("/gpu:0"):
                v = tf.Variable(tf.ones([1024, 1024]))
                train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(v * v))
            with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)

    train_and_close()  # programs, constants and caches of a first run
    gc.collect()
    before = rt.pool.active_bytes
    train_and_close()
    gc.collect()
    assert rt.pool.active_bytes - before < 4 << 20, (before, rt.pool.active_bytes)
