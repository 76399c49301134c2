"""The kernel thread pool (`flowgraph/backends/cpu/kernel_pool.py`) and the kernels that
split their work on it: through the public API, the split result must equal the
one-thread result bit for bit, and NumPy's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import blas_threads, kernel_pool


# -- the pool ----------------------------------------------------------------------------
def test_chunks_cover_the_range_once_with_aligned_bounds():
    bounds = kernel_pool.chunk_bounds(1000, 10, 4, align=16)
    assert bounds[0] == 0 and bounds[-1] == 1000 and len(bounds) == 5
    assert all(b % 16 == 0 for b in bounds[1:-1])
    assert bounds == sorted(set(bounds))
    assert kernel_pool.chunk_bounds(30, 10, 4, align=16) == [0, 16, 30]
    assert kernel_pool.chunk_bounds(19, 10, 4) == [0, 19]


def test_parallel_for_runs_every_item_once_on_several_threads(monkeypatch):
    monkeypatch.setattr(kernel_pool, "threads", lambda: 3)
    seen = np.zeros(10_000, np.int64)
    threads = set()
    lock = threading.Lock()

    def chunk(a, b):
        with lock:
            threads.add(threading.get_ident())
        seen[a:b] += 1

    for _ in range(20):
        kernel_pool.parallel_for(seen.size, chunk, grain=100)
    assert (seen == 20).all()
    # the caller takes chunks too; workers usually get some (not asserted: timing)
    assert threading.get_ident() in threads or len(threads) >= 1


def test_small_or_nested_work_runs_inline(monkeypatch):
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    calls = []
    kernel_pool.parallel_for(150, lambda a, b: calls.append((a, b)), grain=100)
    assert calls == [(0, 150)]

    inner = []

    def outer(a, b):
        kernel_pool.parallel_for(1000, lambda c, d: inner.append((c, d)), grain=1)

    kernel_pool.parallel_for(64, outer, grain=16, align=1)
    assert sorted(inner) == [(0, 1000)] * len(inner) and len(inner) == 2


def test_the_first_error_of_a_chunk_reaches_the_caller(monkeypatch):
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)
    done = []

    def chunk(a, b):
        if a > 0:
            raise ValueError(f"chunk {a}")
        done.append(a)

    with pytest.raises(ValueError, match="chunk"):
        kernel_pool.parallel_for(1000, chunk, grain=10, align=1)
    assert done == [0]  # the other chunk still ran


def test_threads_limited_and_available():
    with kernel_pool.threads_limited(1):
        assert kernel_pool.threads() == 1
        calls = []
        kernel_pool.parallel_for(10_000, lambda a, b: calls.append((a, b)), grain=1)
        assert calls == [(0, 10_000)]
    with pytest.raises(ValueError, match=">= 1"):
        with kernel_pool.threads_limited(0):
            pass
    before = kernel_pool._available
    try:
        kernel_pool.set_available(1)
        assert kernel_pool.threads() == 1
    finally:
        kernel_pool.set_available(before)


# -- kernels through the public API ----------------------------------------------------
class _Jobs(list):
    """Chunk counts of the jobs handed to the pool; `names`: their chunk functions."""

    def __init__(self):
        super().__init__()
        self.names = []

    def clear(self):
        super().clear()
        self.names.clear()


@pytest.fixture
def split(monkeypatch):
    """Every kernel family splits from a few hundred items on (so tests stay small), and
    the jobs handed to the pool are counted."""
    for family in kernel_pool.GRAIN:
        monkeypatch.setitem(kernel_pool.GRAIN, family, 16)
    # the contention policy would cap the threads on a busy machine
    monkeypatch.setattr(blas_threads.ContentionPolicy, "update", lambda self, others: 1)
    monkeypatch.setattr(kernel_pool, "_available", 64)
    jobs = _Jobs()

    class CountedJob(kernel_pool._Job):
        __slots__ = ()

        def __init__(self, fn, bounds):
            jobs.append(len(bounds) - 1)
            jobs.names.append(fn.__qualname__)
            super().__init__(fn, bounds)

    monkeypatch.setattr(kernel_pool, "_Job", CountedJob)
    return jobs


_FEEDS: dict = {}


def _fed(value):
    """A placeholder fed with `value` (a constant would be folded when the plan is built,
    and the folded plan may be shared between sessions)."""
    value = np.asarray(value)
    ph = tf.placeholder(tf.as_dtype(value.dtype), value.shape)
    _FEEDS[ph] = value
    return ph


def _run(fetches, threads, feed=None, init=False):
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _one_vs_three(build, split, init=False):
    _FEEDS.clear()
    with tf.Graph().as_default():
        fetches = build()
        feed = dict(_FEEDS)
        one = _run(fetches, 1, feed, init=init)
        assert split == [], "one thread must not split"
        three = _run(fetches, 3, feed, init=init)
    assert split and max(split) >= 2, "the kernel did not split"
    for a, b in zip(one, three):
        _same_bits(a, b)
    return three


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_split_along_kept_axes_bitwise(split, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((37, 48, 5)) * 10).astype(dtype)

    def build():
        c = _fed(x)
        out = []
        for axes in ([1], [0], [0, 2], [2]):
            out += [tf.reduce_sum(c, axes), tf.reduce_mean(c, axes, keepdims=True),
                    tf.reduce_max(c, axes), tf.reduce_min(c, axes),
                    tf.reduce_any(c > 15, axes), tf.reduce_all(c > -15, axes)]
        return out

    got = _one_vs_three(build, split)
    assert set(split.names) == {"_reduced.<locals>.chunk"}
    ref = []
    for axes in ((1,), (0,), (0, 2), (2,)):
        ref += [x.sum(axes, dtype=dtype), x.mean(axes, keepdims=True), x.max(axes),
                x.min(axes), (x > 15).any(axes), (x > -15).all(axes)]
    for g, r in zip(got, ref):
        if dtype is np.int32 and g.shape == r.shape and r.dtype.kind == "f":
            r = np.trunc(r)  # integer mean truncates toward zero, as in TensorFlow
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-4)


def test_a_reduction_over_every_axis_stays_on_one_thread(split):
    x = np.arange(4096, dtype=np.float32)
    _FEEDS.clear()
    with tf.Graph().as_default():
        total = _run(tf.reduce_sum(_fed(x)), 3, dict(_FEEDS))
    assert split == [] and total == x.sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_cross_entropies_split_by_rows_bitwise(split, dtype):
    rng = np.random.default_rng(2)
    logits = (rng.standard_normal((97, 13)) * 5).astype(dtype)
    labels = rng.integers(0, 13, 97)
    probs = rng.dirichlet(np.ones(13), 97).astype(dtype)

    def build():
        c = _fed(logits)
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=_fed(labels), logits=c)
        dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=_fed(probs),
                                                            logits=c)
        return [tf.nn.softmax(c), tf.nn.log_softmax(c), sparse, dense,
                tf.gradients(tf.reduce_sum(sparse), c)[0]]

    soft, log_soft, sparse, dense, grad = _one_vs_three(build, split)
    assert {"_softmax_rows.<locals>.chunk", "_row_chunks.<locals>.chunk"} <= set(split.names)
    z = logits.astype(np.float64) - logits.max(1, keepdims=True)
    ref_log = z - np.log(np.exp(z).sum(1, keepdims=True))
    tol = 1e-5 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(log_soft, ref_log, rtol=tol, atol=tol)
    np.testing.assert_allclose(soft, np.exp(ref_log), rtol=tol, atol=tol)
    np.testing.assert_allclose(sparse, -ref_log[np.arange(97), labels], rtol=tol, atol=tol)
    np.testing.assert_allclose(dense, -(probs * ref_log).sum(1), rtol=tol, atol=tol)
    onehot = np.eye(13)[labels]
    np.testing.assert_allclose(grad, np.exp(ref_log) - onehot, rtol=tol, atol=tol)


def test_a_bad_label_in_any_chunk_raises_the_one_thread_error(split):
    labels = np.zeros(200, np.int64)
    labels[150] = 7
    _FEEDS.clear()
    with tf.Graph().as_default():
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=_fed(labels), logits=_fed(np.zeros((200, 5), np.float32)))
        with pytest.raises(tf.errors.InvalidArgumentError, match="label value of 7"):
            _run(loss, 3, dict(_FEEDS))
    assert split


def test_gathers_and_segment_sums_split_bitwise(split):
    rng = np.random.default_rng(3)
    params = rng.standard_normal((50, 40)).astype(np.float32)
    idx = rng.integers(0, 50, 300)
    col_idx = rng.integers(0, 40, 7)
    ids = rng.integers(0, 20, 50)
    seg = np.sort(rng.integers(0, 30, 300))

    def build():
        p = _fed(params)
        return [tf.gather(p, idx), tf.gather(p, col_idx, axis=1),
                tf.gather(p, idx.reshape(20, 15)),
                tf.unsorted_segment_sum(p, _fed(ids), 20),
                tf.unsorted_segment_max(p, _fed(ids), 20),
                tf.math.segment_sum(p, _fed(np.sort(ids))),
                tf.sparse.segment_sum(p, _fed(idx), _fed(seg)),
                tf.sparse.segment_mean(p, _fed(idx), _fed(seg)),
                tf.sparse.segment_sqrt_n(p, _fed(idx), _fed(seg))]

    g0, g1, g2, usum, umax, ssum, sps, spm, spq = _one_vs_three(build, split)
    assert {"take.<locals>.rows", "take.<locals>.blocks", "_scatter.<locals>.band",
            "_segment_reduce.<locals>.segments"} <= set(split.names)
    np.testing.assert_array_equal(g0, params[idx])
    np.testing.assert_array_equal(g1, params[:, col_idx])
    np.testing.assert_array_equal(g2, params[idx].reshape(20, 15, 40))
    ref_sum = np.zeros((20, 40), np.float32)
    np.add.at(ref_sum, ids, params)
    np.testing.assert_allclose(usum, ref_sum, rtol=1e-6)
    ref_max = np.full((20, 40), np.finfo(np.float32).min, np.float32)
    np.maximum.at(ref_max, ids, params)
    np.testing.assert_array_equal(umax, ref_max)
    ref_sorted = np.zeros((ssum.shape[0], 40), np.float32)
    np.add.at(ref_sorted, np.sort(ids), params)
    np.testing.assert_allclose(ssum, ref_sorted, rtol=1e-6)
    rows = np.zeros((30, 40))
    np.add.at(rows, seg, params[idx])
    counts = np.bincount(seg, minlength=30)[:, None]
    np.testing.assert_allclose(sps, rows, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(spm, rows / np.maximum(counts, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(spq, rows / np.sqrt(np.maximum(counts, 1)), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("optimizer", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    lambda: tf.train.AdamOptimizer(0.01),
    lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
])
def test_dense_optimizer_updates_split_by_elements_bitwise(split, optimizer):
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((61, 33)).astype(np.float32)
    x = rng.standard_normal((8, 61)).astype(np.float32)
    results = []
    for threads in (1, 3):
        with tf.Graph().as_default():
            w = tf.Variable(w0)
            loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(x), w)))
            train = optimizer().minimize(loss)
            config = tf.ConfigProto(intra_op_parallelism_threads=threads)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                results.append(sess.run(w))
        if threads == 1:
            assert split == [] or max(split) == 1
            split.clear()
    assert "_dense_update.<locals>.chunk" in split.names
    _same_bits(results[0], results[1])
    assert not np.array_equal(results[0], w0)


def test_sgd_update_matches_numpy_when_split(split):
    w0 = np.linspace(-1, 1, 4000, dtype=np.float64).reshape(80, 50)
    g = np.cos(w0)
    with tf.Graph().as_default():
        w = tf.Variable(w0)
        step = tf.train.GradientDescentOptimizer(0.25).apply_gradients(
            [(tf.constant(g), w)])
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            got = sess.run(w)
    assert split
    np.testing.assert_array_equal(got, w0 - 0.25 * g)


@pytest.mark.parametrize("optimizer", [
    lambda: tf.train.AdamOptimizer(0.01),
    lambda: tf.train.AdagradOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.1, 0.9),
])
def test_sparse_optimizer_updates_split_by_rows_bitwise(split, optimizer):
    rng = np.random.default_rng(5)
    table0 = rng.standard_normal((90, 24)).astype(np.float32)
    ids = np.concatenate([rng.integers(0, 90, 120), [3, 3, 89, 0, 3]])  # duplicates
    results = []
    for threads in (1, 3):
        with tf.Graph().as_default():
            table = tf.Variable(table0)
            rows = tf.gather(table, tf.constant(ids))
            loss = tf.reduce_sum(tf.square(rows) * tf.constant(np.arange(
                ids.size, dtype=np.float32)[:, None]))
            train = optimizer().minimize(loss)
            config = tf.ConfigProto(intra_op_parallelism_threads=threads)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                results.append(sess.run(table))
        if threads == 1:
            split.clear()
    assert "_sparse_apply.<locals>.band" in split.names
    _same_bits(results[0], results[1])
    untouched = np.setdiff1d(np.arange(90), ids)
    assert not np.array_equal(results[1][ids], table0[ids])
    if untouched.size and not isinstance(optimizer(), tf.train.AdamOptimizer):
        np.testing.assert_array_equal(results[1][untouched], table0[untouched])


def test_the_default_thread_count_follows_the_environment(monkeypatch):
    monkeypatch.setenv("FLOWGRAPH_KERNEL_THREADS", "1")
    assert kernel_pool._default_threads() == 1
    for junk in ("0", "x", ""):
        monkeypatch.setenv("FLOWGRAPH_KERNEL_THREADS", junk)
        assert kernel_pool._default_threads() >= 1
