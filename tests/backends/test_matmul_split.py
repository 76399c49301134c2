"""Matrix products split across the kernel threads while other processes keep the cores
busy (`blas_threads.products_split`, `kernels_math._split_matmul`): the contention
policy's answer to OpenBLAS's spinning threads. Each row block is one BLAS call on one
thread. OpenBLAS's own results already change with its thread count and with the rows
of a call (its kernels block the sums differently), so a split product is held to the
float32 error bound of a product, as the unsplit one is."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import flowgraph as tf
from flowgraph.backends.cpu import blas_threads, kernel_pool, kernels_math
from flowgraph.backends.cpu.blas_threads import ContentionPolicy


@pytest.fixture
def split(monkeypatch):
    """Steps run as under contention: products split, BLAS on one thread."""
    monkeypatch.setattr(blas_threads, "_split_depth", 1)
    with threadpool_limits(1, user_api="blas"), kernel_pool.threads_limited(2):
        yield


def _calls(monkeypatch) -> list:
    seen = []
    original = kernel_pool.claim_items

    def counting(items, part):
        seen.append(items)
        return original(items, part)

    monkeypatch.setattr(kernel_pool, "claim_items", counting)
    return seen


@pytest.mark.parametrize("m, k, n, ta, tb", [
    (256, 784, 512, False, False),   # the MLP's first layer
    (784, 256, 512, True, False),    # its weight gradient: x^T dy
    (256, 512, 784, False, True),    # its input gradient: dy W^T
    (203, 300, 301, False, False),   # rows that do not divide evenly
])
def test_split_products_are_products_within_float32_rounding(split, monkeypatch, m, k, n,
                                                             ta, tb):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    x, y = (a.T if ta else a), (b.T if tb else b)
    calls = _calls(monkeypatch)
    got = kernels_math.matmul(a, b, transpose_a=ta, transpose_b=tb)
    assert calls and calls[0] >= 2
    exact = x.astype(np.float64) @ y.astype(np.float64)
    bound = k * np.finfo(np.float32).eps * (np.abs(x).astype(np.float64) @ np.abs(y))
    assert np.all(np.abs(got - exact) <= bound)
    assert np.all(np.abs(np.matmul(x, y) - exact) <= bound)  # the unsplit product alike


def test_small_products_and_quiet_steps_are_not_split(monkeypatch):
    calls = _calls(monkeypatch)
    a = np.ones((64, 64), np.float32)
    monkeypatch.setattr(blas_threads, "_split_depth", 1)
    kernels_math.matmul(a, a)  # 0.5 MFLOP: below _SPLIT_MIN_FLOPS
    monkeypatch.setattr(blas_threads, "_split_depth", 0)
    big = np.ones((256, 784), np.float32)
    kernels_math.matmul(big, np.ones((784, 512), np.float32))  # no contention
    assert calls == []


def test_a_session_step_under_contention_splits_and_trains_alike(monkeypatch):
    """The policy recommends splitting (others ~2 on 2 cores): a step's large products
    go to the kernel threads, BLAS on one thread, and the values equal a quiet run's."""

    class Controller:
        num_threads = 2

    policy = ContentionPolicy([Controller()], {0, 1})
    monkeypatch.setattr(blas_threads.os, "cpu_count", lambda: 2)
    policy.update(2.0)
    assert policy.recommended == 2 and policy.split_products
    policy.update(0.1)
    assert not policy.split_products
    policy.update(2.0)

    seen = []
    monkeypatch.setattr(blas_threads, "_blas_controllers", lambda: [Controller()])
    monkeypatch.setattr(blas_threads, "blas_threads_limited",
                        lambda n: seen.append(n) or threadpool_limits(n, user_api="blas"))
    monkeypatch.setattr(ContentionPolicy, "current", policy)
    calls = _calls(monkeypatch)

    def train(steps):
        rng = np.random.default_rng(1)
        with tf.Graph().as_default():
            x = tf.constant(rng.standard_normal((256, 784)).astype(np.float32))
            w = tf.Variable(rng.standard_normal((784, 512)).astype(np.float32) * 0.01)
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
            step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(steps):
                    sess.run(step)
                return sess.run(w)

    contended = train(3)
    assert seen and set(seen) == {1} and calls
    monkeypatch.setattr(ContentionPolicy, "current", None)
    with threadpool_limits(1, user_api="blas"):
        quiet = train(3)
    np.testing.assert_allclose(contended, quiet, rtol=1e-5, atol=1e-7)
